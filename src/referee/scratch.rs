//! The private working directories of agents outside a sandbox (`AgentCwd::Private`;
//! in a sandbox the agent's directory is a tmpfs of its own).
//!
//! Each is made for an agent's start, readable by its owner alone, and goes with
//! its agent. One its agent left empty, still a directory of this user's with its
//! mode unchanged, is kept instead for the next agent the same thread starts for the
//! same seat: making and removing two directories was a sixth of the referee's CPU
//! time for a fresh two-seat game on a file system whose inodes are slow to take and
//! free. A thread's kept directories are removed when the thread ends. The next
//! agent starts in an empty directory of its own, as it would in a new one; what
//! the one before could leave on the directory itself (its times) tells it nothing
//! it could not have been told through any other file of this user's, which every
//! agent outside a sandbox can reach.

use std::cell::RefCell;
use std::os::unix::fs::{DirBuilderExt, MetadataExt};
use std::path::PathBuf;

use crate::game::Seat;

thread_local! {
    /// This thread's directories left empty, by seat.
    static SPARE: RefCell<Spare> = const { RefCell::new(Spare(Vec::new())) };
}

/// Directories kept for the next agents, removed when dropped (the thread ends).
struct Spare(Vec<(Seat, PathBuf)>);

impl Drop for Spare {
    fn drop(&mut self) {
        for (_, dir) in self.0.drain(..) {
            let _ = std::fs::remove_dir(dir);
        }
    }
}

/// A private directory for seat `seat`'s agent: one this thread kept, or a new one.
pub(super) fn take(seat: Seat) -> std::io::Result<PathBuf> {
    let kept = SPARE.with_borrow_mut(|spare| {
        let k = spare.0.iter().position(|(s, _)| *s == seat)?;
        Some(spare.0.swap_remove(k).1)
    });
    match kept {
        Some(dir) => Ok(dir),
        None => make(seat),
    }
}

/// Takes back an agent's directory once the agent is stopped: kept for the next if
/// it is as it was made and empty, removed otherwise.
pub(super) fn give_back(dir: PathBuf) {
    let seat = seat_of(&dir);
    match seat.filter(|_| as_made_and_empty(&dir)) {
        Some(seat) => SPARE.with_borrow_mut(|spare| spare.0.push((seat, dir))),
        None => {
            if std::fs::remove_dir(&dir).is_err() {
                let _ = std::fs::remove_dir_all(dir);
            }
        }
    }
}

/// Whether `dir` is still what [`make`] made: a directory (not a link put in its
/// place), this user's, its mode unchanged, and empty.
fn as_made_and_empty(dir: &std::path::Path) -> bool {
    let Ok(meta) = std::fs::symlink_metadata(dir) else {
        return false;
    };
    meta.is_dir()
        // SAFETY: geteuid takes nothing, always succeeds and touches no memory.
        && meta.uid() == unsafe { libc::geteuid() }
        && meta.mode() & 0o7777 == MODE & !current_umask()
        && std::fs::read_dir(dir).is_ok_and(|mut entries| entries.next().is_none())
}

/// The rights of a private directory: its owner's alone.
const MODE: u32 = 0o700;

/// The seat a directory was made for, from its name.
fn seat_of(dir: &std::path::Path) -> Option<Seat> {
    let name = dir.file_name()?.to_str()?;
    name.rsplit_once("-seat")?.1.parse().ok()
}

/// The process's file mode creation mask, read once (reading it means setting it,
/// which would race with other threads making files).
fn current_umask() -> u32 {
    static UMASK: std::sync::OnceLock<u32> = std::sync::OnceLock::new();
    *UMASK.get_or_init(|| {
        std::fs::read_to_string("/proc/self/status")
            .ok()
            .and_then(|status| {
                let line = status.lines().find(|l| l.starts_with("Umask:"))?;
                u32::from_str_radix(line.trim_start_matches("Umask:").trim(), 8).ok()
            })
            .unwrap_or(0o022)
    })
}

/// Makes a new directory for seat `seat`'s agent in the temporary directory (never
/// under the log directory: the transcripts there are every seat's).
///
/// Made, never found: a path that exists already (another process's, or one planted
/// there, a link perhaps) is passed over for another name, so an agent never starts
/// in a directory the referee did not just make. Its mode is set as it is made
/// (`umask` can only take rights away), not by a second system call.
fn make(seat: Seat) -> std::io::Result<PathBuf> {
    let mut last = None;
    for _ in 0..16 {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0);
        let name = format!("referee-{}-{nanos}-seat{seat}", std::process::id());
        let dir = std::env::temp_dir().join(name);
        match std::fs::DirBuilder::new().mode(MODE).create(&dir) {
            Ok(()) => return Ok(dir),
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

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    fn seat(n: usize) -> Seat {
        Seat::from_index(n - 1)
    }

    #[test]
    fn an_empty_directory_serves_the_next_agent_of_its_seat_and_goes_with_the_thread() {
        let dirs = std::thread::spawn(|| {
            let first = take(seat(1)).unwrap();
            let mode = std::fs::metadata(&first).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode & !0o700, 0, "{mode:o}");
            give_back(first.clone());
            // Another seat gets a directory of its own; the same seat the kept one.
            let other = take(seat(2)).unwrap();
            assert_ne!(other, first);
            assert_eq!(take(seat(1)).unwrap(), first);
            give_back(first.clone());
            give_back(other.clone());
            assert!(first.is_dir() && other.is_dir());
            [first, other]
        })
        .join()
        .unwrap();
        for dir in dirs {
            assert!(!dir.exists(), "{} outlived its thread", dir.display());
        }
    }

    #[test]
    fn a_directory_left_with_files_or_other_rights_is_removed_not_kept() {
        std::thread::spawn(|| {
            let littered = take(seat(3)).unwrap();
            std::fs::write(littered.join("note"), "for the next bot").unwrap();
            give_back(littered.clone());
            assert!(!littered.exists());
            let opened = take(seat(3)).unwrap();
            assert_ne!(opened, littered);
            std::fs::set_permissions(&opened, std::fs::Permissions::from_mode(0o777)).unwrap();
            give_back(opened.clone());
            assert!(!opened.exists());
            let fresh = take(seat(3)).unwrap();
            assert!(fresh != littered && fresh != opened);
            give_back(fresh);
        })
        .join()
        .unwrap();
    }
}
