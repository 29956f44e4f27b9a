//! The private working directories of agents outside a sandbox (`AgentCwd::Private`;
//! in a sandbox the agent's directory is a tmpfs of its own).
//!
//! Each is made for an agent's start, readable by its owner alone, and goes with
//! its agent; but one given back at the end of a game is kept for the next agent
//! the same thread starts for the same seat, if just before that start it is still
//! the directory that was made (the same inode, not a link put in its place, this
//! user's, its mode unchanged) and empty. A process of the same user could still
//! swap it between that look and the agent's start, as it could any file of that
//! user's; only the sandbox keeps agents from such processes.
//!
//! Making and removing two directories was a sixth of the referee's CPU time for a
//! fresh two-seat game on a file system whose inodes are slow to take and free. The
//! next agent starts in an empty directory of its own either way; what the one
//! before could leave on the directory itself (its times) it could as well have left
//! in any other file of this user's, which every agent outside a sandbox can reach.
//!
//! A thread's kept directories go when it calls [`release_private_dirs`] (a
//! tournament's worker
//! at its end, `referee match` and the bench when they are done) or, failing that,
//! when the thread ends.

use std::cell::RefCell;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use crate::game::Seat;

/// The rights of a private directory: its owner's alone.
const MODE: u32 = 0o700;

/// A private directory as it was made: its path, device and inode.
#[derive(Debug)]
pub(super) struct PrivateDir {
    path: PathBuf,
    dev: u64,
    ino: u64,
}

impl Drop for PrivateDir {
    /// Removes it with whatever is in it (a link put in its place: the link only):
    /// a directory no list keeps goes.
    fn drop(&mut self) {
        if std::fs::remove_dir(&self.path).is_err() {
            let _ = std::fs::remove_dir_all(&self.path);
        }
    }
}

impl PrivateDir {
    /// Its path.
    pub(super) fn path(&self) -> &Path {
        &self.path
    }

    /// Removes it with whatever is in it.
    pub(super) fn remove(self) {
        drop(self);
    }

    /// Whether it is still the directory that was made, this user's with its mode
    /// unchanged, and empty.
    fn as_made_and_empty(&self) -> bool {
        let Ok(meta) = std::fs::symlink_metadata(&self.path) else {
            return false;
        };
        meta.is_dir()
            && (meta.dev(), meta.ino()) == (self.dev, self.ino)
            // SAFETY: geteuid takes nothing, always succeeds and touches no memory.
            && meta.uid() == unsafe { libc::geteuid() }
            && meta.mode() & 0o7777 == MODE
            && std::fs::read_dir(&self.path).is_ok_and(|mut entries| entries.next().is_none())
    }
}

thread_local! {
    /// This thread's directories given back, by seat; each removes itself when the
    /// list goes with the thread.
    static SPARE: RefCell<Vec<(Seat, PrivateDir)>> = const { RefCell::new(Vec::new()) };
}

/// A private directory for seat `seat`'s agent: one this thread kept, if it is still
/// as it was made and empty, or a new one.
pub(super) fn take(seat: Seat) -> std::io::Result<PrivateDir> {
    let kept = SPARE
        .try_with(|spare| {
            let mut spare = spare.borrow_mut();
            let k = spare.iter().position(|(s, _)| *s == seat)?;
            Some(spare.swap_remove(k).1)
        })
        .ok()
        .flatten();
    match kept {
        Some(dir) if dir.as_made_and_empty() => Ok(dir),
        Some(dir) => {
            dir.remove();
            make(seat)
        }
        None => make(seat),
    }
}

/// Takes back seat `seat`'s directory once its agent is stopped, for the thread's
/// next agent of that seat ([`take`] looks at it again then).
pub(super) fn give_back(seat: Seat, dir: PrivateDir) {
    // A thread that is ending keeps nothing: where its list is gone, the closure is
    // dropped unrun, and the directory with it.
    let _ = SPARE.try_with(move |spare| spare.borrow_mut().push((seat, dir)));
}

/// Removes the private directories this thread kept for agents to come.
pub fn release_private_dirs() {
    // Each removes itself as it is dropped.
    let _ = SPARE.try_with(|spare| spare.borrow_mut().clear());
}

/// Makes a new directory for seat `seat`'s agent in the temporary directory (never
/// under the log directory: the transcripts there are every seat's).
///
/// Made, never found: a path that exists already (another process's, or one planted
/// there, a link perhaps) is passed over for another name, so an agent never starts
/// in a directory the referee did not just make. Its mode is given to `mkdir`, and
/// set again only where the `umask` took some of it away.
fn make(seat: Seat) -> std::io::Result<PrivateDir> {
    let mut last = None;
    for _ in 0..16 {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0);
        let name = format!("referee-{}-{nanos}-seat{seat}", std::process::id());
        let path = std::env::temp_dir().join(name);
        match std::fs::DirBuilder::new().mode(MODE).create(&path) {
            Ok(()) => return made(path),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => last = Some(e),
            // A temporary directory that is not there yet is made, as before.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && last.is_none() => {
                std::fs::create_dir_all(std::env::temp_dir())?;
                last = Some(e);
            }
            Err(e) => return Err(e),
        }
    }
    Err(last.unwrap_or_else(|| std::io::Error::other("no free name")))
}

/// The directory just made at `path`, its mode made whole where the `umask` took
/// some away.
fn made(path: PathBuf) -> std::io::Result<PrivateDir> {
    let meta = match std::fs::symlink_metadata(&path) {
        Ok(meta) => meta,
        Err(e) => {
            let _ = std::fs::remove_dir(&path);
            return Err(e);
        }
    };
    // Owned from here: it goes if it cannot be made private.
    let dir = PrivateDir {
        path,
        dev: meta.dev(),
        ino: meta.ino(),
    };
    if meta.mode() & 0o7777 != MODE {
        std::fs::set_permissions(&dir.path, std::fs::Permissions::from_mode(MODE))?;
    }
    Ok(dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seat(n: usize) -> Seat {
        Seat::from_index(n - 1)
    }

    /// Runs `f` on a thread of its own, whose kept directories go when it ends.
    fn on_a_thread<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
        std::thread::spawn(f).join().unwrap()
    }

    #[test]
    fn an_empty_directory_serves_the_next_agent_of_its_seat_and_goes_with_the_thread() {
        let paths = on_a_thread(|| {
            let first = take(seat(1)).unwrap();
            let path = first.path().to_path_buf();
            let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o7777;
            assert_eq!(mode, MODE, "{mode:o}");
            give_back(seat(1), first);
            // Another seat gets a directory of its own; the same seat the kept one.
            let other = take(seat(2)).unwrap();
            assert_ne!(other.path(), path);
            let again = take(seat(1)).unwrap();
            assert_eq!(again.path(), path);
            let other_path = other.path().to_path_buf();
            give_back(seat(1), again);
            give_back(seat(2), other);
            assert!(path.is_dir() && other_path.is_dir());
            [path, other_path]
        });
        for path in paths {
            assert!(!path.exists(), "{} outlived its thread", path.display());
        }
    }

    #[test]
    fn a_directory_changed_since_it_was_given_back_is_removed_not_handed_out() {
        on_a_thread(|| {
            // Files left in it, after it was given back.
            let littered = take(seat(3)).unwrap();
            let path = littered.path().to_path_buf();
            give_back(seat(3), littered);
            std::fs::write(path.join("note"), "for the next bot").unwrap();
            let next = take(seat(3)).unwrap();
            assert_ne!(next.path(), path);
            assert!(!path.exists());
            // Its rights widened.
            let path = next.path().to_path_buf();
            give_back(seat(3), next);
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o777)).unwrap();
            let next = take(seat(3)).unwrap();
            assert_ne!(next.path(), path);
            assert!(!path.exists());
            // Replaced by a link to a directory the agent should not start in.
            let path = next.path().to_path_buf();
            give_back(seat(3), next);
            let elsewhere = tempfile::tempdir().unwrap();
            std::fs::remove_dir(&path).unwrap();
            std::os::unix::fs::symlink(elsewhere.path(), &path).unwrap();
            let next = take(seat(3)).unwrap();
            assert_ne!(next.path(), path);
            assert!(std::fs::symlink_metadata(&path).is_err(), "the link is gone");
            assert!(elsewhere.path().is_dir(), "what it pointed at is left alone");
            next.remove();
        });
    }

    #[test]
    fn release_removes_what_the_thread_kept() {
        on_a_thread(|| {
            let dir = take(seat(4)).unwrap();
            let path = dir.path().to_path_buf();
            give_back(seat(4), dir);
            assert!(path.is_dir());
            release_private_dirs();
            assert!(!path.exists());
            let next = take(seat(4)).unwrap();
            let next_path = next.path().to_path_buf();
            assert_ne!(next_path, path);
            next.remove();
            assert!(!next_path.exists());
        });
    }
}
