//! Supervision of agent processes: third-party bots that the referee cannot trust.
//!
//! Everything here assumes the agent is hostile or broken. Each agent runs in its own
//! process group so that it and everything it starts can be signalled at once; every
//! read from it is bounded in size and in time; its stderr is always drained so it can
//! never block on a full pipe; and writes to it give up instead of blocking forever
//! when it stops reading its input.
//!
//! The caller (the match loop) owns protocol and verdicts: this layer only reports what
//! happened ([`Received`], [`AgentError`]) and guarantees that the referee itself never
//! hangs on an agent and that no agent process outlives [`AgentProcess::shutdown`].

pub mod affinity;
mod capped_log;
mod launch;
mod lines;
mod process;
mod registry;
mod sandbox;
mod spawn;
mod spin;
mod stop;

use std::io;
use std::path::PathBuf;
use std::time::Duration;

pub use capped_log::{CappedLog, LOG_HEAD, LOG_TAIL};
pub use process::{AgentProcess, MessageLine};
pub use registry::{kill_all_agents, process_group_alive};
pub use sandbox::{
    detect as detect_sandbox, identity, Bubblewrap, Hidden, HiddenKind, HiddenPath, Isolation, Refusal,
    Sandbox, SandboxMode, SandboxUnavailable, PRIVATE_CWD, SHM_BYTES, TMPFS_BYTES,
};
pub use spin::{available_cpus, shares_cpu_with_agents};
/// The bench reaps with it the sandboxes it starts without the referee.
pub(crate) use stop::reap_escaped;
pub use stop::{Ending, Stopped};

/// Longest line, in bytes before the `\n`, that an agent may print.
///
/// Views and actions are far shorter; the bound exists so that a broken agent cannot
/// make the referee buffer without limit.
pub const MAX_LINE: usize = 64 * 1024;

/// Most lines held for one agent, read but not yet taken; also the most read before
/// a `go` of what it printed while no answer was due (protocol.md §1.5). Together
/// with [`MAX_LINE`] this caps what one agent can make the referee hold.
pub const MAX_HELD_LINES: usize = 256;

/// How long [`AgentProcess::send`] waits for an agent that has stopped reading its input.
pub const SEND_TIMEOUT: Duration = Duration::from_secs(5);

/// Most bytes of one agent's stderr, or of its transcript, kept in its log: the
/// first [`LOG_HEAD`] and the last [`LOG_TAIL`], with a marker saying how much was
/// left out between them. A bot that logs forever must not fill the disk.
pub const STDERR_LOG_LIMIT: u64 = LOG_HEAD + LOG_TAIL as u64;

/// How to start one agent.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AgentSpec {
    /// The command line, split with shell-like quoting rules (no shell runs it).
    pub command: String,
    /// Directory the agent starts in; the referee's own when `None`.
    pub working_dir: Option<PathBuf>,
    /// File the agent's stderr is appended to; drained and discarded when `None`.
    pub stderr_log: Option<PathBuf>,
    /// The agent's entire environment: the referee's own is not passed on.
    pub env: Vec<(String, String)>,
    /// Resource limits, inherited by everything the agent starts.
    pub limits: Limits,
    /// The sandbox the agent runs in (its working directory is then the sandbox's,
    /// and `working_dir` is not used); a plain process when `None`.
    pub sandbox: Option<Sandbox>,
}

/// Resource limits for an agent (`setrlimit`, applied in the child before `exec`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Limits {
    /// Address-space limit in bytes (`RLIMIT_AS`).
    pub memory_bytes: Option<u64>,
    /// CPU time limit in seconds (`RLIMIT_CPU`: SIGXCPU, then SIGKILL a second later).
    pub cpu_seconds: Option<u64>,
}

impl AgentSpec {
    /// A spec for `command` in the current directory with stderr discarded and an
    /// environment holding only the referee's `PATH` (so interpreters are found).
    pub fn new(command: impl Into<String>) -> AgentSpec {
        AgentSpec {
            command: command.into(),
            working_dir: None,
            stderr_log: None,
            env: std::env::var("PATH")
                .map(|p| vec![("PATH".to_string(), p)])
                .unwrap_or_default(),
            limits: Limits::default(),
            sandbox: None,
        }
    }
}

/// Why starting or talking to an agent failed.
#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    /// The program could not be started (not found, not executable, ...).
    #[error("cannot start agent `{command}`: {source}")]
    Spawn {
        /// The command line as the user gave it.
        command: String,
        /// What the operating system said.
        source: io::Error,
    },
    /// The sandbox cannot keep the agent apart (see [`Refusal`]).
    #[error("agent `{command}` is not started: {reason}")]
    Refused {
        /// The command line as the user gave it.
        command: String,
        /// Why.
        reason: Refusal,
    },
    /// The command line is empty or its quoting is broken.
    #[error("bad agent command: {0}")]
    BadCommand(String),
    /// The working directory given for the agent is not usable.
    #[error("cannot use working directory {} for an agent: {source}", path.display())]
    WorkingDir {
        /// The directory as given.
        path: PathBuf,
        /// What the operating system said.
        source: io::Error,
    },
    /// The stderr log file could not be opened for appending.
    #[error("cannot open agent stderr log {}: {source}", path.display())]
    StderrLog {
        /// The log file as given.
        path: PathBuf,
        /// What the operating system said.
        source: io::Error,
    },
    /// The pipes or threads that watch the agent could not be set up.
    #[error("cannot set up supervision of agent `{command}`: {source}")]
    Setup {
        /// The command line as the user gave it.
        command: String,
        /// What the operating system said.
        source: io::Error,
    },
    /// The agent's input is closed: it exited or closed its stdin.
    #[error("the agent closed its input")]
    Closed,
    /// The agent stopped reading its input and the pipe to it stayed full.
    #[error("the agent stopped reading its input")]
    Stalled,
    /// A message to an agent must be exactly one line.
    #[error("a message to an agent must not contain a line break")]
    NotOneLine,
    /// Writing to the agent failed for a reason other than a closed pipe.
    #[error("writing to the agent failed: {0}")]
    Write(#[source] io::Error),
}

/// What reading one line from an agent produced.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Received {
    /// One line, without its `\n` and without a `\r` before it.
    Line(String),
    /// The deadline passed before a line came.
    Timeout,
    /// The agent's stdout reached its end or the agent exited: no more lines will come.
    Closed,
    /// A line longer than [`MAX_LINE`] bytes; it was skipped, not buffered.
    TooLong,
    /// A line that is not UTF-8, as raw bytes (at most [`MAX_LINE`] of them).
    NotUtf8(Vec<u8>),
}
