//! Setting up an agent's process before it runs: the command (inside the sandbox or
//! plainly), the descriptors it may
//! inherit, and this process's adoption of orphans. Its own room because everything
//! here runs once per start, apart from talking to the running agent.

use std::io;

use nix::fcntl::{fcntl, FcntlArg, OFlag};

use super::launch::Command;
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
            sandbox.check(argv).map_err(|reason| AgentError::Refused {
                command: spec.command.clone(),
                reason,
            })?;
            let mut command = Command::new(sandbox.program());
            // The sandbox sets the agent's directory; bubblewrap itself holds none.
            // No `--info-fd` here: with it, a referee killed while bubblewrap was
            // still starting left bubblewraps alive (tests/crash_safety.rs caught 1 to
            // 5 of 30 kills), so an agent's sandbox is reaped by the scan instead.
            command.args(sandbox.argv(argv, path)).current_dir("/");
            if let Some(fd) = sandbox.inherited_fd() {
                command.inherit(fd);
            }
            command
        }
        None => {
            let mut command = Command::new(program.as_str());
            command.args(args.iter().map(String::as_str));
            if let Some(dir) = &spec.working_dir {
                command.current_dir(dir);
            }
            // Dies with the referee (Linux). A sandbox ties itself to the referee
            // (`--die-with-parent`); the signal set here as well could kill
            // bubblewrap between creating the sandbox and releasing it, leaving the
            // sandbox's first process blocked for ever. The signal fires when the
            // thread that spawned the agent ends, so agents are spawned by threads
            // that outlive them (the match loop's).
            #[cfg(target_os = "linux")]
            command.die_with(nix::unistd::getpid().as_raw());
            command
        }
    };
    // Least privilege: nothing of the referee's environment leaks to a bot.
    command.env(&spec.env).limits(spec.limits);
    Ok(command)
}
