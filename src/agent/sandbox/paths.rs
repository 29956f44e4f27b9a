//! Paths as the kernel resolves them, so that the sandbox compares what a path *is*
//! (its resolved form) and never how it is written: through symbolic links, `..`,
//! relative spellings, or a second mount of the same directory.

use std::collections::VecDeque;
use std::ffi::OsString;
use std::path::{Component, Path, PathBuf};

/// Most symbolic links followed in one path, as the kernel's `ELOOP` bound.
const MAX_LINKS: usize = 40;

/// A path resolved: its canonical form, and the symbolic links met on the way, so
/// that the sandbox can show the path as written (the links, then the target).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Resolved {
    /// The path with every link followed and every `.` and `..` taken: the part
    /// that does not exist yet is appended as written, taken lexically.
    pub path: PathBuf,
    /// Each link met: (what it points to, as stored; where it lies, resolved).
    pub links: Vec<(PathBuf, PathBuf)>,
}

/// Resolves `path` (made absolute against the working directory first) the way the
/// kernel would, component by component.
pub(super) fn resolve(path: &Path) -> Resolved {
    let mut queue: VecDeque<OsString> = VecDeque::new();
    push_front(&mut queue, &absolute(path));
    let mut done = PathBuf::from("/");
    let mut links = Vec::new();
    while let Some(part) = queue.pop_front() {
        if part == "/" {
            done = PathBuf::from("/");
            continue;
        }
        if part == "." {
            continue;
        }
        if part == ".." {
            done.pop();
            continue;
        }
        let next = done.join(&part);
        match std::fs::read_link(&next) {
            Ok(target) if links.len() < MAX_LINKS => {
                links.push((target.clone(), next));
                push_front(&mut queue, &target);
            }
            _ => done = next,
        }
    }
    Resolved { path: done, links }
}

/// Puts `path`'s components before what `queue` holds (an absolute path's root as
/// `/`, which sends resolution back to the root).
fn push_front(queue: &mut VecDeque<OsString>, path: &Path) {
    for part in path.components().rev() {
        let word = match part {
            Component::RootDir => OsString::from("/"),
            Component::CurDir => OsString::from("."),
            Component::ParentDir => OsString::from(".."),
            Component::Normal(p) => p.to_os_string(),
            Component::Prefix(p) => p.as_os_str().to_os_string(),
        };
        queue.push_front(word);
    }
}

/// `path`'s canonical form (see [`resolve`]).
pub(super) fn canonical(path: &Path) -> PathBuf {
    resolve(path).path
}

/// `path` made absolute against the referee's working directory.
pub(super) fn absolute(path: &Path) -> PathBuf {
    if path.is_absolute() {
        return path.to_path_buf();
    }
    std::env::current_dir().map_or_else(|_| path.to_path_buf(), |here| here.join(path))
}

/// The mounts of this process's mount namespace (`/proc/self/mountinfo`).
#[derive(Clone, Debug, Default)]
pub(super) struct Mounts(Vec<Mount>);

/// One mount: which filesystem, which of its directories, mounted where.
#[derive(Clone, Debug)]
struct Mount {
    /// `major:minor` of the filesystem.
    device: String,
    /// The directory of the filesystem that is mounted.
    root: PathBuf,
    /// Where it is mounted.
    at: PathBuf,
}

impl Mounts {
    /// This process's mounts; none when they cannot be read (then no alias is found).
    pub fn read() -> Mounts {
        let text = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
        Mounts(text.lines().filter_map(parse_mount).collect())
    }

    /// The other places where the file at canonical `path` can be reached: the same
    /// filesystem directory mounted a second time (a bind mount), as the kernel's own
    /// table lists it.
    pub fn aliases(&self, path: &Path) -> Vec<PathBuf> {
        let Some(home) = self
            .0
            .iter()
            .filter(|m| path.starts_with(&m.at))
            .max_by_key(|m| m.at.components().count())
        else {
            return Vec::new();
        };
        let inside = home.root.join(path.strip_prefix(&home.at).unwrap_or(path));
        let mut found: Vec<PathBuf> = self
            .0
            .iter()
            .filter(|m| m.device == home.device && inside.starts_with(&m.root))
            .map(|m| m.at.join(inside.strip_prefix(&m.root).unwrap_or(&inside)))
            .filter(|alias| alias != path)
            .collect();
        found.sort();
        found.dedup();
        found
    }
}

/// One line of `mountinfo`: `id parent major:minor root mount-point …`.
fn parse_mount(line: &str) -> Option<Mount> {
    let mut fields = line.split(' ');
    let device = fields.nth(2)?.to_string();
    let root = unescape(fields.next()?);
    let at = unescape(fields.next()?);
    Some(Mount { device, root, at })
}

/// A `mountinfo` path: space, tab, newline and backslash come as `\ooo`.
fn unescape(field: &str) -> PathBuf {
    use std::os::unix::ffi::OsStringExt;
    let bytes = field.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let octal = bytes
            .get(i + 1..i + 4)
            .filter(|d| bytes[i] == b'\\' && d.iter().all(|b| (b'0'..=b'7').contains(b)));
        match octal {
            Some(d) => {
                out.push(
                    d.iter()
                        .fold(0u8, |n, b| n.wrapping_mul(8).wrapping_add(b - b'0')),
                );
                i += 4;
            }
            None => {
                out.push(bytes[i]);
                i += 1;
            }
        }
    }
    PathBuf::from(OsString::from_vec(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_dots_and_missing_tails_resolve_as_the_kernel_would() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().canonicalize().unwrap();
        std::fs::create_dir(real.join("data")).unwrap();
        std::os::unix::fs::symlink(real.join("data"), real.join("abs")).unwrap();
        std::os::unix::fs::symlink("data", real.join("rel")).unwrap();
        std::os::unix::fs::symlink("../data/..", real.join("data/up")).unwrap();
        for (written, canonical) in [
            ("abs/r.jsonl", "data/r.jsonl"),
            ("rel/./x/../r.jsonl", "data/r.jsonl"),
            ("data/up/data", "data"),
            ("abs/missing/deeper", "data/missing/deeper"),
        ] {
            let got = resolve(&real.join(written));
            assert_eq!(got.path, real.join(canonical), "{written}");
        }
        let via = resolve(&real.join("abs/r.jsonl"));
        assert_eq!(via.links, [(real.join("data"), real.join("abs"))]);
        assert_eq!(
            canonical(&real.join("data")),
            real.join("data").canonicalize().unwrap()
        );
    }

    #[test]
    fn a_link_loop_ends() {
        let dir = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink("b", dir.path().join("a")).unwrap();
        std::os::unix::fs::symlink("a", dir.path().join("b")).unwrap();
        assert_eq!(resolve(&dir.path().join("a")).links.len(), MAX_LINKS);
    }

    #[test]
    fn a_second_mount_of_a_directory_is_its_alias() {
        let mounts = Mounts(
            [
                "22 1 8:1 / / rw - ext4 /dev/sda1 rw",
                "30 22 8:1 /srv/data /mnt/my\\040alias rw - ext4 /dev/sda1 rw",
                "31 22 0:5 / /proc rw - proc proc rw",
            ]
            .iter()
            .filter_map(|l| parse_mount(l))
            .collect(),
        );
        assert_eq!(
            mounts.aliases(Path::new("/srv/data/records")),
            [PathBuf::from("/mnt/my alias/records")]
        );
        assert_eq!(
            mounts.aliases(Path::new("/mnt/my alias/r")),
            [PathBuf::from("/srv/data/r")]
        );
        assert!(mounts.aliases(Path::new("/home/x")).is_empty());
        assert!(mounts.aliases(Path::new("/proc/1")).is_empty());
    }
}
