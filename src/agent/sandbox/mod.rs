//! Isolation of agents from the referee, from its files and from each other, with
//! bubblewrap (`bwrap`, the sandbox Flatpak uses) rather than a hand-made imitation.
//!
//! What each layer stops (the security guide has the whole threat model):
//! * a **user namespace** and the uid 65534 with every capability dropped and no
//!   nested user namespaces ([`identity`], which also keeps a root referee's agents
//!   from being the host's root): nothing the agent runs can mount, trace, gain
//!   privileges or write what the host's root owns;
//! * a new **PID namespace** with a fresh `/proc`, its kernel knobs read-only: the
//!   agent sees only its own processes, so it cannot read the referee's open files
//!   or command line, write into another agent's pipes, or signal anyone outside;
//!   when the sandbox's first process dies (`--die-with-parent`: with the referee
//!   too), the kernel kills everything left in the namespace;
//! * a new **mount namespace** ([`argv`]): the system directories, the agent's
//!   `PATH` and the files its command names, read-only, at their resolved paths; a
//!   private `/tmp`, `/dev/shm` and working directory of bounded size; a read-only
//!   root; never what [`hidden`] lists (records, logs, keys, state files, a
//!   tournament's output, credentials under the home directory), whatever spelling
//!   of a path would reach it ([`paths`]);
//! * new **network, IPC and UTS** namespaces: no network (only its own loopback,
//!   unless `--allow-network`), no shared memory or message queues with other agents;
//! * a **new session**: no controlling terminal to inject keystrokes into.

mod argv;
mod bubblewrap;
mod hidden;
pub mod identity;
mod paths;

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, OnceLock};

pub use argv::{Refusal, Sandbox, PRIVATE_CWD, SHM_BYTES, TMPFS_BYTES};
pub use bubblewrap::Bubblewrap;
pub use hidden::{Hidden, HiddenKind, HiddenPath};
use identity::Privilege;

/// Whether agents run sandboxed (`--sandbox`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum SandboxMode {
    /// The sandbox when this machine supports it; otherwise say so and run without.
    #[default]
    Auto,
    /// The sandbox, or refuse to start.
    Require,
    /// No sandbox: agents are plain processes of the referee's user.
    None,
}

/// How the agents of this referee are isolated.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Isolation {
    /// Each agent in a sandbox of its own.
    Sandboxed(Arc<Bubblewrap>),
    /// Plain processes; the text says why (`--sandbox none`, or what is missing).
    NotIsolated(String),
}

impl Isolation {
    /// The header's `sandbox` member: `bubblewrap 0.8.0`, or `none (<why>)`.
    pub fn describe(&self) -> String {
        match self {
            Isolation::Sandboxed(b) => b.version.clone(),
            Isolation::NotIsolated(why) => format!("none ({why})"),
        }
    }
}

/// Why `--sandbox require` cannot be met.
#[derive(Debug, thiserror::Error)]
#[error("--sandbox require: {0}")]
pub struct SandboxUnavailable(String);

/// Decides how agents are isolated under `mode`. The machine is probed once per
/// process (a sandbox that runs `true`), so a tournament pays for it once.
pub fn detect(mode: SandboxMode) -> Result<Isolation, SandboxUnavailable> {
    static PROBED: OnceLock<Result<Arc<Bubblewrap>, String>> = OnceLock::new();
    if mode == SandboxMode::None {
        return Ok(Isolation::NotIsolated("--sandbox none".into()));
    }
    match (PROBED.get_or_init(probe), mode) {
        (Ok(b), _) => Ok(Isolation::Sandboxed(b.clone())),
        (Err(why), SandboxMode::Require) => Err(SandboxUnavailable(why.clone())),
        (Err(why), _) => Ok(Isolation::NotIsolated(why.clone())),
    }
}

/// Finds `bwrap` and checks that it can build the sandbox agents get, first with a
/// user namespace, then (where the kernel forbids those, and the referee runs as
/// root) without one.
fn probe() -> Result<Arc<Bubblewrap>, String> {
    let path = find_program("bwrap").ok_or("bubblewrap (bwrap) is not installed")?;
    let version = Command::new(&path)
        .arg("--version")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map(|v| v.trim().to_string())
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| "bubblewrap".into());
    let candidates = match Privilege::of_this_process() {
        Privilege::Root { userns: Some(fd) } => vec![
            Privilege::Root { userns: Some(fd) },
            Privilege::Root { userns: None },
        ],
        privilege => vec![privilege],
    };
    let mut last = String::new();
    for privilege in candidates {
        let bwrap = Arc::new(Bubblewrap {
            path: path.clone(),
            version: version.clone(),
            privilege,
        });
        let sandbox = Sandbox::new(bwrap.clone(), Hidden::default(), false, None);
        let path_env = std::env::var("PATH").unwrap_or_default();
        let argv = sandbox.argv(&["true".to_string()], &path_env);
        match run_probe(&sandbox, &argv, &path_env) {
            Ok(o) if o.status.success() => return Ok(bwrap),
            Ok(o) => {
                last = String::from_utf8_lossy(&o.stderr)
                    .lines()
                    .next()
                    .unwrap_or("")
                    .to_string();
            }
            Err(e) => last = e.to_string(),
        }
    }
    Err(format!("bubblewrap cannot create a sandbox here: {last}"))
}

/// Runs bubblewrap with `argv` to completion, as an agent's sandbox would start.
///
/// bubblewrap may exit before the sandbox's first process, which is then orphaned:
/// to this process, made a subreaper first, because an init that does not reap (as
/// in some containers) would keep it a zombie for ever. Its pid, from `--info-fd`,
/// is reaped here, as an agent's is at its shutdown.
fn run_probe(sandbox: &Sandbox, argv: &[OsString], path_env: &str) -> std::io::Result<std::process::Output> {
    use std::os::fd::AsRawFd;
    use std::os::unix::process::CommandExt;
    super::spawn::become_subreaper();
    let (read, write) = super::spawn::info_pipe()?;
    let fd = write.as_raw_fd();
    let userns = sandbox.inherited_fd();
    let mut command = Command::new(sandbox.program());
    command
        .arg("--info-fd")
        .arg(fd.to_string())
        .args(argv)
        .env_clear()
        .env("PATH", path_env)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    // SAFETY: the closure only makes `fcntl` calls, async-signal-safe, and
    // allocates nothing.
    unsafe {
        command.pre_exec(move || {
            userns.map_or(Ok(()), super::spawn::inherit_fd)?;
            super::spawn::inherit_fd(fd)
        });
    }
    let out = command.output();
    drop(write);
    let until = std::time::Instant::now() + std::time::Duration::from_secs(2);
    super::stop::reap_sandbox_init(&mut std::fs::File::from(read), until);
    out
}

/// The first executable `name` on the referee's `PATH`.
fn find_program(name: &str) -> Option<PathBuf> {
    find_in(name, &std::env::var_os("PATH")?)
}

/// The first executable `name` on `path` (a `PATH` value).
pub(super) fn find_in(name: &str, path: &std::ffi::OsStr) -> Option<PathBuf> {
    std::env::split_paths(path)
        .map(|dir| dir.join(name))
        .find(|p| executable(p))
}

/// Whether `path` is an executable file.
fn executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// Checks, before a sandbox is built around it, that `program` can be run: inside,
/// a missing program would look like an agent that crashed at once, not like the
/// bad command line it is.
pub fn check_program(program: &str, path_env: &str) -> std::io::Result<()> {
    let found = if program.contains('/') {
        executable(Path::new(program))
    } else {
        find_in(program, std::ffi::OsStr::new(path_env)).is_some()
    };
    if found {
        Ok(())
    } else {
        Err(std::io::Error::from(nix::errno::Errno::ENOENT))
    }
}
