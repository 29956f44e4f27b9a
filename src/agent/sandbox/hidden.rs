//! What no agent may see, as one list filled where the referee learns of each path
//! (the command line, a tournament's definition), resolved once per match.
//!
//! Every path is compared by what it is: resolved through links and `..`
//! ([`paths::resolve`]), with each second mount of it added, so that no spelling of
//! a path reaches what the list hides.

use std::path::{Path, PathBuf};

use super::paths::{self, Mounts};

/// How a path is hidden.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HiddenKind {
    /// A directory and everything in it, now or later: logs, a tournament's output.
    Dir,
    /// One file: a key, a state file, an agents file.
    File,
    /// A record: the file and every file beside it whose name begins with the
    /// record's (its lock, its salt, its temporary files; a leading `.` allowed).
    Record,
}

/// One path no agent may see, as it was given.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HiddenPath {
    /// How it is hidden.
    pub kind: HiddenKind,
    /// The path as given.
    pub path: PathBuf,
}

impl HiddenPath {
    /// A directory and everything in it.
    pub fn dir(path: impl Into<PathBuf>) -> HiddenPath {
        HiddenPath {
            kind: HiddenKind::Dir,
            path: path.into(),
        }
    }

    /// One file.
    pub fn file(path: impl Into<PathBuf>) -> HiddenPath {
        HiddenPath {
            kind: HiddenKind::File,
            path: path.into(),
        }
    }

    /// A record and the files beside it that belong to it.
    pub fn record(path: impl Into<PathBuf>) -> HiddenPath {
        HiddenPath {
            kind: HiddenKind::Record,
            path: path.into(),
        }
    }

    /// A directory or a file, by what `path` is now (`--hide`).
    pub fn existing(path: impl Into<PathBuf>) -> HiddenPath {
        let path = path.into();
        if path.is_dir() {
            HiddenPath::dir(path)
        } else {
            HiddenPath::file(path)
        }
    }
}

/// What no agent may see, resolved: each path canonical, and again at each of its
/// aliases.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Hidden(Vec<(HiddenKind, PathBuf)>);

impl Hidden {
    /// Resolves `list` as the paths are now: a directory must exist already (made
    /// by the caller) for a later one in it to be covered.
    pub fn resolve(list: &[HiddenPath]) -> Hidden {
        let mounts = Mounts::read();
        let mut hidden = Hidden::default();
        for given in list {
            let mut places = vec![paths::canonical(&given.path)];
            if given.kind == HiddenKind::Record {
                // A record reached through a link: where the link lies too, since a
                // record rewritten by rename lands there.
                let dir = given.path.parent().unwrap_or(Path::new("/"));
                if let Some(name) = given.path.file_name() {
                    places.push(paths::canonical(dir).join(name));
                }
            }
            for place in places {
                for alias in mounts.aliases(&place) {
                    hidden.add(given.kind, alias);
                }
                hidden.add(given.kind, place);
            }
        }
        hidden
    }

    /// This list and the credentials under the referee's home directory.
    pub(super) fn with_home_secrets(mut self) -> Hidden {
        for secret in home_secrets() {
            let kind = if secret.is_dir() {
                HiddenKind::Dir
            } else {
                HiddenKind::File
            };
            self.add(kind, secret);
        }
        self
    }

    fn add(&mut self, kind: HiddenKind, path: PathBuf) {
        if !self.0.iter().any(|(k, p)| *k == kind && *p == path) {
            self.0.push((kind, path));
        }
    }

    /// Whether canonical `path` is, or lies in, something no agent may see.
    pub fn hides(&self, path: &Path) -> bool {
        self.0.iter().any(|(kind, hidden)| match kind {
            HiddenKind::Dir => path.starts_with(hidden),
            HiddenKind::File => path == hidden,
            HiddenKind::Record => beside_record(hidden, path),
        })
    }

    /// Whether everything `other` hides is hidden here too: a kept agent then sees
    /// nothing a fresh one would not.
    pub fn includes(&self, other: &Hidden) -> bool {
        other.0.iter().all(|(kind, p)| {
            self.0.iter().any(|(k, q)| k == kind && q == p)
                || self
                    .0
                    .iter()
                    .any(|(k, q)| *k == HiddenKind::Dir && p.starts_with(q))
        })
    }

    /// Each hidden path with how it is hidden.
    pub(super) fn entries(&self) -> impl Iterator<Item = (HiddenKind, &Path)> {
        self.0.iter().map(|(k, p)| (*k, p.as_path()))
    }
}

/// Whether `path` is the record `record` or a file beside it that belongs to it.
fn beside_record(record: &Path, path: &Path) -> bool {
    let name = |p: &Path| p.file_name().map(|n| n.to_string_lossy().into_owned());
    let (Some(record_name), Some(file)) = (name(record), name(path)) else {
        return false;
    };
    path.parent() == record.parent()
        && (file.starts_with(&record_name)
            || file
                .strip_prefix('.')
                .is_some_and(|f| f.starts_with(&record_name)))
}

/// Where tools under a home directory keep credentials: covered wherever a bound
/// tree (a tool directory on `PATH`, an agent's directory) would show them.
const HOME_SECRETS: [&str; 27] = [
    ".ssh",
    ".gnupg",
    ".netrc",
    ".git-credentials",
    ".config/git/credentials",
    ".cargo/credentials",
    ".cargo/credentials.toml",
    ".pypirc",
    ".pip/pip.conf",
    ".config/pip",
    ".npmrc",
    ".yarnrc",
    ".yarnrc.yml",
    ".config/gh",
    ".docker/config.json",
    ".aws",
    ".azure",
    ".config/gcloud",
    ".kube",
    ".local/share/keyrings",
    ".password-store",
    ".pgpass",
    ".my.cnf",
    ".gem/credentials",
    ".m2/settings.xml",
    ".gradle/gradle.properties",
    ".terraform.d/credentials.tfrc.json",
];

/// The secrets of [`HOME_SECRETS`] that exist under the referee's home directory
/// (`HOME`), resolved, read once per process.
fn home_secrets() -> Vec<PathBuf> {
    static FOUND: std::sync::OnceLock<Vec<PathBuf>> = std::sync::OnceLock::new();
    FOUND
        .get_or_init(|| {
            let Some(home) = std::env::var_os("HOME").filter(|h| !h.is_empty()) else {
                return Vec::new();
            };
            let home = paths::canonical(Path::new(&home));
            HOME_SECRETS
                .iter()
                .map(|s| home.join(s))
                .filter(|p| p.symlink_metadata().is_ok())
                .map(|p| paths::canonical(&p))
                .collect()
        })
        .clone()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_is_hidden_by_its_resolved_path_with_its_side_files() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().canonicalize().unwrap().join("real");
        std::fs::create_dir(&real).unwrap();
        std::os::unix::fs::symlink(&real, dir.path().join("link")).unwrap();
        let hidden = Hidden::resolve(&[HiddenPath::record(dir.path().join("link/../link/r.jsonl"))]);
        for name in ["r.jsonl", "r.jsonl.lock", ".r.jsonl.new12"] {
            assert!(hidden.hides(&real.join(name)), "{name}");
        }
        assert!(!hidden.hides(&real.join("bot.py")));
        assert!(
            !hidden.hides(&dir.path().join("link/r.jsonl")),
            "only resolved paths are asked"
        );
    }

    #[test]
    fn a_directory_hides_all_below_and_a_file_only_itself() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        let hidden = Hidden::resolve(&[
            HiddenPath::dir(base.join("out")),
            HiddenPath::file(base.join("key")),
        ]);
        assert!(hidden.hides(&base.join("out/games/g.jsonl")));
        assert!(hidden.hides(&base.join("key")));
        assert!(!hidden.hides(&base.join("key2")));
        let fewer = Hidden::resolve(&[HiddenPath::file(base.join("out/x"))]);
        assert!(hidden.includes(&fewer));
        assert!(!fewer.includes(&hidden));
    }
}
