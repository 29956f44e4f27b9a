//! Setting up an agent's process before it runs: the command (inside the sandbox or
//! plainly), what the child does between `fork` and `exec`, the descriptors it may
//! inherit, and this process's adoption of orphans. Its own room because everything
//! here runs once per start, apart from talking to the running agent.

use std::io;
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};

use nix::fcntl::{fcntl, FcntlArg, OFlag};
use nix::sys::signal::Signal;

use super::{AgentError, AgentSpec};

/// Fails unless `dir` exists and is a directory, so the error names the directory
/// rather than leaving a bare "not found" that looks like a missing program.
pub(super) fn check_dir(dir: &std::path::Path) -> io::Result<()> {
    if std::fs::metadata(dir)?.is_dir() {
        Ok(())
    } else {
        Err(io::Error::other("not a directory"))
    }
}

/// In the child before `exec`: die with the `referee` (Linux; `None` for a sandbox,
/// which does it itself), and apply the limits.
///
/// The parent-death signal fires when the thread that spawned the agent ends, so
/// agents are spawned by threads that outlive them (the match loop's). A referee
/// that died between the fork and the `prctl` would never send it: then the parent
/// is no longer `referee`, and the agent must not start at all (ESRCH: no allocation
/// between fork and exec).
fn restrict(limits: super::Limits, referee: Option<nix::unistd::Pid>) -> io::Result<()> {
    use nix::sys::resource::{setrlimit, Resource};
    #[cfg(target_os = "linux")]
    if let Some(referee) = referee {
        nix::sys::prctl::set_pdeathsig(Signal::SIGKILL).map_err(io::Error::from)?;
        if nix::unistd::getppid() != referee {
            return Err(io::Error::from(nix::errno::Errno::ESRCH));
        }
    }
    if let Some(bytes) = limits.memory_bytes {
        setrlimit(Resource::RLIMIT_AS, bytes, bytes).map_err(io::Error::from)?;
    }
    if let Some(secs) = limits.cpu_seconds {
        setrlimit(Resource::RLIMIT_CPU, secs, secs + 1).map_err(io::Error::from)?;
    }
    Ok(())
}

/// Marks every descriptor this process inherited (above stderr) close-on-exec, once,
/// so an agent gets its three pipes and nothing else. Rust opens its own descriptors
/// close-on-exec already; inherited ones are whatever the referee's parent left open.
pub(super) fn seal_inherited_fds() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let fds: Vec<i32> = match std::fs::read_dir("/proc/self/fd") {
            Ok(dir) => dir
                .flatten()
                .filter_map(|e| e.file_name().to_str()?.parse().ok())
                .collect(),
            Err(_) => (3..1024).collect(),
        };
        for fd in fds.into_iter().filter(|&fd| fd > 2) {
            if let Ok(flags) = fcntl(fd, FcntlArg::F_GETFD) {
                let flags = nix::fcntl::FdFlag::from_bits_truncate(flags) | nix::fcntl::FdFlag::FD_CLOEXEC;
                let _ = fcntl(fd, FcntlArg::F_SETFD(flags));
            }
        }
    });
}

/// Makes this process adopt orphaned descendants, once (Linux only; elsewhere a no-op).
pub(super) fn become_subreaper() {
    #[cfg(target_os = "linux")]
    {
        static ONCE: std::sync::Once = std::sync::Once::new();
        ONCE.call_once(|| {
            // Without it, cleanup still kills every process; only zombie reaping
            // falls back to init.
            let _ = nix::sys::prctl::set_child_subreaper(true);
        });
    }
}

/// The pipe of a sandbox's `--info-fd`: read end, write end.
pub(super) type InfoPipe = (std::os::fd::OwnedFd, std::os::fd::OwnedFd);

/// A pipe for bubblewrap's `--info-fd`: close-on-exec both ends (the child that gets
/// the write end clears it with [`inherit_fd`]), the read end non-blocking, so that
/// reading it after bubblewrap is gone takes what it wrote and never waits.
pub(super) fn info_pipe() -> io::Result<InfoPipe> {
    let pipe = nix::unistd::pipe2(OFlag::O_CLOEXEC)?;
    super::process::set_nonblocking(&pipe.0)?;
    Ok(pipe)
}

/// In the child before `exec`: keeps `fd` open across it (a plain `fcntl`, which is
/// async-signal-safe); other children never see it, it is close-on-exec in the parent.
pub(super) fn inherit_fd(fd: i32) -> io::Result<()> {
    fcntl(fd, FcntlArg::F_SETFD(nix::fcntl::FdFlag::empty())).map_err(io::Error::from)?;
    Ok(())
}

/// The command that starts `spec`'s agent (`argv` is its command split into words):
/// inside the sandbox or plainly in its directory, with piped stdio, its own process
/// group, only the environment it was given, and its limits applied in the child.
pub(super) fn command_for(spec: &AgentSpec, argv: &[String]) -> Result<Command, AgentError> {
    let Some((program, args)) = argv.split_first() else {
        return Err(AgentError::BadCommand("the command is empty".to_string()));
    };
    let mut command = match &spec.sandbox {
        Some(sandbox) => {
            let path = spec
                .env
                .iter()
                .find(|(k, _)| k == "PATH")
                .map_or("", |(_, v)| v.as_str());
            super::sandbox::check_program(program, path).map_err(|source| AgentError::Spawn {
                command: spec.command.clone(),
                source,
            })?;
            if let Some(path) = sandbox.hidden_path(argv) {
                return Err(AgentError::Hidden {
                    command: spec.command.clone(),
                    path,
                });
            }
            let mut command = Command::new(sandbox.program());
            // The sandbox sets the agent's directory; bubblewrap itself holds none.
            // No `--info-fd` here: with it, a referee killed while bubblewrap was
            // still starting left bubblewraps alive (tests/crash_safety.rs caught 1 to
            // 5 of 30 kills), so an agent's sandbox is reaped by the scan instead.
            command.args(sandbox.argv(argv, path)).current_dir("/");
            command
        }
        None => {
            let mut command = Command::new(program);
            command.args(args);
            if let Some(dir) = &spec.working_dir {
                command.current_dir(dir);
            }
            command
        }
    };
    command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    // Least privilege: nothing of the referee's environment leaks to a bot.
    command.env_clear().envs(spec.env.iter().map(|(k, v)| (k, v)));
    let limits = spec.limits;
    // A sandbox ties itself to the referee (`--die-with-parent`); a signal set
    // here as well could kill bubblewrap between creating the sandbox and
    // releasing it, leaving the sandbox's first process blocked for ever.
    let referee = spec.sandbox.is_none().then(nix::unistd::getpid);
    // Only when there is something to do: without a hook, the standard library
    // starts the child with `posix_spawn`, which shares the referee's memory until
    // the `exec` instead of copying its page tables (the largest single part of the
    // referee's CPU for a fresh sandboxed agent, in a profile of short games).
    if referee.is_some() || limits != super::Limits::default() {
        // SAFETY: the closure runs in the child between fork and exec, where only
        // async-signal-safe calls are allowed; prctl and setrlimit are plain system
        // calls, and the closure allocates nothing.
        unsafe {
            command.pre_exec(move || restrict(limits, referee));
        }
    }
    Ok(command)
}
