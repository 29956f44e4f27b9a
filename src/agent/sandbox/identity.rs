//! The uid an agent runs as: never the host's root.
//!
//! As an ordinary user, bubblewrap's own user namespace maps the agent's uid 65534
//! to the referee's. As root that map would make the agent the host's root, owner of
//! every root file the sandbox shows (`/proc/sys` among them). So a root referee
//! makes one user namespace of its own ids, mapped one to one, in which no further
//! user namespace can be made; bubblewrap enters it, and the agent's first process,
//! this executable run as [`SHIM`], drops to uid and gid 65534 of the host with every
//! capability gone before it runs the agent's command.

use std::ffi::{CString, OsString};
use std::io;
use std::os::fd::{AsRawFd, OwnedFd};

/// The first word after the executable that makes it the shim: not a subcommand a
/// user types, so it stays out of `--help`.
pub const SHIM: &str = "__sandbox-exec";

/// The uid and gid an agent runs as (`nobody`).
pub const NOBODY: u32 = 65534;

/// How a sandbox makes its agent unprivileged.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Privilege {
    /// The referee is an ordinary user: bubblewrap's user namespace does it.
    User,
    /// The referee is root: the shim does it, inside this user namespace (an open
    /// descriptor for the life of the process) where the kernel allows one.
    Root {
        /// The user namespace's descriptor; `None` where none can be made (then
        /// the agent cannot make one either).
        userns: Option<i32>,
    },
}

impl Privilege {
    /// This process's: [`Privilege::Root`] when its effective uid is 0.
    pub fn of_this_process() -> Privilege {
        if !nix::unistd::geteuid().is_root() {
            return Privilege::User;
        }
        static USERNS: std::sync::OnceLock<Option<OwnedFd>> = std::sync::OnceLock::new();
        let userns = USERNS.get_or_init(|| user_namespace().ok());
        Privilege::Root {
            userns: userns.as_ref().map(AsRawFd::as_raw_fd),
        }
    }
}

/// A user namespace mapping this process's uids and gids to themselves, whose
/// limit of nested user namespaces is 0. A child made for the purpose enters it,
/// waits for its maps, sets the limit (its capabilities there allow it) and exits;
/// the returned descriptor keeps the namespace.
fn user_namespace() -> io::Result<OwnedFd> {
    let uid_map = identity_map("/proc/self/uid_map")?;
    let gid_map = identity_map("/proc/self/gid_map")?;
    let (ready_r, ready_w) = nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC)?;
    let (go_r, go_w) = nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC)?;
    // SAFETY: the child makes only system calls (no allocation, no lock) and ends in
    // `_exit`.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(io::Error::last_os_error());
    }
    if pid == 0 {
        // SAFETY: as above.
        unsafe {
            // The parent's ends: with one held here, the pipe would never close.
            libc::close(ready_r.as_raw_fd());
            libc::close(go_w.as_raw_fd());
            namespace_child(ready_w.as_raw_fd(), go_r.as_raw_fd())
        }
    }
    drop((ready_w, go_r));
    let made = read_byte(&ready_r) == Some(1);
    let result = if made {
        let set = std::fs::File::open(format!("/proc/{pid}/ns/user")).and_then(|ns| {
            std::fs::write(format!("/proc/{pid}/uid_map"), &uid_map)?;
            std::fs::write(format!("/proc/{pid}/gid_map"), &gid_map)?;
            Ok(OwnedFd::from(ns))
        });
        let _ = nix::unistd::write(&go_w, &[u8::from(set.is_ok())]);
        set
    } else {
        Err(io::Error::other("cannot make a user namespace"))
    };
    drop(go_w);
    let mut status = 0;
    // SAFETY: waits for the child made above.
    unsafe { libc::waitpid(pid, &mut status, 0) };
    let fd = result?;
    if !(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0) {
        return Err(io::Error::other("cannot forbid nested user namespaces"));
    }
    Ok(fd)
}

/// The child of [`user_namespace`].
///
/// # Safety
/// Runs in a child forked from a process with threads: system calls only.
unsafe fn namespace_child(ready: i32, go: i32) -> ! {
    let made = libc::unshare(libc::CLONE_NEWUSER) == 0;
    libc::write(ready, [u8::from(made)].as_ptr().cast(), 1);
    let mut byte = 0u8;
    let mapped = made && libc::read(go, (&mut byte as *mut u8).cast(), 1) == 1 && byte == 1;
    let mut code = 1;
    if mapped {
        let fd = libc::open(c"/proc/sys/user/max_user_namespaces".as_ptr(), libc::O_WRONLY);
        if fd >= 0 && libc::write(fd, b"0\n".as_ptr().cast(), 2) == 2 {
            code = 0;
        }
    }
    libc::_exit(code)
}

/// One byte from `fd`, if one comes before its other end closes.
fn read_byte(fd: &OwnedFd) -> Option<u8> {
    let mut byte = [0u8];
    (nix::unistd::read(fd.as_raw_fd(), &mut byte).ok()? == 1).then_some(byte[0])
}

/// `inside inside count` for each range of this process's `map`: a child namespace's
/// ids mapped to the same ids here.
fn identity_map(map: &str) -> io::Result<String> {
    let text = std::fs::read_to_string(map)?;
    let mut out = String::new();
    for line in text.lines() {
        let words: Vec<&str> = line.split_whitespace().collect();
        if let [inside, _, count] = words[..] {
            out.push_str(&format!("{inside} {inside} {count}\n"));
        }
    }
    Ok(out)
}

/// The shim: in the sandbox, as its root with only the capabilities to change ids,
/// drops to [`NOBODY`] with no capability, no supplementary group, no descriptor
/// but the three standard ones and no way to gain privileges, checks that it holds
/// none, then runs `command`. Returns only on failure.
pub fn exec_as_nobody(command: &[OsString]) -> io::Error {
    if let Err(e) = drop_everything() {
        return e;
    }
    let words: Result<Vec<CString>, _> = command
        .iter()
        .map(|w| CString::new(std::os::unix::ffi::OsStrExt::as_bytes(w.as_os_str())))
        .collect();
    let Some(words) = words.ok().filter(|w| !w.is_empty()) else {
        return io::Error::other("no command, or a word of it holds a NUL byte");
    };
    match nix::unistd::execvp(&words[0], &words) {
        Err(e) => io::Error::from(e),
        Ok(never) => match never {},
    }
}

/// Every step of [`exec_as_nobody`] before the `exec`.
fn drop_everything() -> io::Result<()> {
    let check = |r: libc::c_int| {
        if r < 0 {
            Err(io::Error::last_os_error())
        } else {
            Ok(())
        }
    };
    // SAFETY: plain system calls on this process, with valid arguments.
    unsafe {
        check(libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))?;
        for cap in 0..64 {
            // Past the kernel's last capability the call fails with EINVAL.
            libc::prctl(libc::PR_CAPBSET_DROP, cap, 0, 0, 0);
        }
        check(libc::setgroups(0, std::ptr::null()))?;
        check(libc::setresgid(NOBODY, NOBODY, NOBODY))?;
        check(libc::setresuid(NOBODY, NOBODY, NOBODY))?;
        let header = CapHeader {
            version: 0x2008_0522,
            pid: 0,
        };
        let none = [CapData::default(); 2];
        check(libc::syscall(libc::SYS_capset, &header, none.as_ptr()) as libc::c_int)?;
        check(libc::syscall(libc::SYS_close_range, 3u32, u32::MAX, 0u32) as libc::c_int)
            .or_else(|_| close_from_3())?;
    }
    // A changed uid made the process undumpable, its /proc files root's: the
    // agent may read its own again (no other process of its uid is in its sight).
    // SAFETY: as above.
    unsafe { check(libc::prctl(libc::PR_SET_DUMPABLE, 1, 0, 0, 0))? };
    if holds_anything() {
        return Err(io::Error::other("capabilities or ids left after dropping them"));
    }
    Ok(())
}

/// Whether this process holds any capability, in any set, or any id but
/// [`NOBODY`].
fn holds_anything() -> bool {
    let header = CapHeader {
        version: 0x2008_0522,
        pid: 0,
    };
    let mut sets = [CapData::default(); 2];
    let (mut r, mut e, mut s) = (0, 0, 0);
    let (mut rg, mut eg, mut sg) = (0, 0, 0);
    // SAFETY: system calls that read this process's state into the locals given.
    unsafe {
        if libc::syscall(libc::SYS_capget, &header, sets.as_mut_ptr()) != 0
            || libc::getresuid(&mut r, &mut e, &mut s) != 0
            || libc::getresgid(&mut rg, &mut eg, &mut sg) != 0
        {
            return true;
        }
        let bounding = (0..64).any(|cap| libc::prctl(libc::PR_CAPBSET_READ, cap, 0, 0, 0) == 1);
        let ambient =
            (0..64).any(|cap| libc::prctl(libc::PR_CAP_AMBIENT, libc::PR_CAP_AMBIENT_IS_SET, cap, 0, 0) == 1);
        let sets = sets
            .iter()
            .any(|d| d.effective | d.permitted | d.inheritable != 0);
        bounding || ambient || sets || [r, e, s, rg, eg, sg].iter().any(|&id| id != NOBODY)
    }
}

/// Closes every descriptor above stderr where `close_range` is missing.
fn close_from_3() -> io::Result<()> {
    let fds: Vec<i32> = std::fs::read_dir("/proc/self/fd")?
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse().ok())
        .filter(|&fd| fd > 2)
        .collect();
    for fd in fds {
        // SAFETY: no Rust value owns these (the listing's own is closed already).
        unsafe { libc::close(fd) };
    }
    Ok(())
}

/// `struct __user_cap_header_struct`.
#[repr(C)]
struct CapHeader {
    version: u32,
    pid: i32,
}

/// `struct __user_cap_data_struct`.
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct CapData {
    effective: u32,
    permitted: u32,
    inheritable: u32,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_identity_map_keeps_each_range_on_itself() {
        let map = identity_map("/proc/self/uid_map").unwrap();
        let own = std::fs::read_to_string("/proc/self/uid_map").unwrap();
        assert_eq!(map.lines().count(), own.lines().count());
        for line in map.lines() {
            let w: Vec<&str> = line.split(' ').collect();
            assert_eq!(w[0], w[1], "{line}");
        }
    }
}
