//! One running agent: its process group, its pipes, and the thread that drains its
//! stderr. Its stdout is read on the caller's thread (see [`Output`]).

use std::fs::{File, OpenOptions};
use std::io::{self, ErrorKind, Read, Write};
use std::os::fd::{AsFd, AsRawFd};
use std::process::{ChildStderr, ChildStdin, ExitStatus};
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::fcntl::{fcntl, FcntlArg, OFlag};
use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
use nix::sys::signal::{killpg, Signal};
use nix::unistd::Pid;

use super::capped_log::CappedLog;
use super::launch::Child;
use super::lines::Output;
use super::registry::{pgid_of, spawn_registered, unregister};
use super::spawn::{become_subreaper, check_dir, command_for, seal_inherited_fds};
use super::spin::{Waiting, SPIN};
use super::stop::{await_exit, reap_escaped, reap_group, Ending, Stopped};
use super::{AgentError, AgentSpec, Received, SEND_TIMEOUT};

/// How often [`AgentProcess::recv`] looks whether the agent has exited.
///
/// Once it has, a wait this long with no line means whatever still holds its stdout
/// (a leaked grandchild) is not going to answer for it.
const EXIT_POLL: Duration = Duration::from_millis(50);

/// Grace given to an agent that is dropped without an explicit shutdown.
const DROP_GRACE: Duration = Duration::from_millis(200);

/// How long shutdown waits for killed descendants to be reaped, and for the stderr
/// log to be complete, before leaving them be.
const REAP_LIMIT: Duration = Duration::from_secs(2);

/// The state of the pipe to the agent's stdin.
#[derive(Debug)]
enum Input {
    /// Writable.
    Open(ChildStdin),
    /// The agent closed it, or shutdown did.
    Closed,
    /// A write timed out part-way through a line, so the pipe was closed: anything
    /// sent later would be glued to the torn line.
    Stalled,
}

/// A running agent process and its process group.
#[derive(Debug)]
pub struct AgentProcess {
    child: Child,
    pgid: i32,
    input: Input,
    output: Output,
    /// The last message composed for the agent; kept to reuse its allocation.
    message: String,
    /// When the last message was written.
    sent: Option<Instant>,
    /// The agent's last line came within [`SPIN`] of the message before it: the next
    /// wait checks for its answer before sleeping.
    quick: bool,
    /// The job draining stderr on a kept thread ([`crate::beside`]).
    stderr_drain: Option<crate::beside::Job<()>>,
    /// Whether the agent runs in a sandbox (then nothing of it can escape).
    sandboxed: bool,
    /// What the first shutdown found; a later one reports the same.
    stopped: Option<Stopped>,
}

/// A line of a message to an agent, which prints itself (without its newline) into
/// the message buffer.
pub trait MessageLine {
    /// Appends the line to `out`.
    fn push_to(&self, out: &mut String);
}

impl MessageLine for &str {
    fn push_to(&self, out: &mut String) {
        out.push_str(self);
    }
}

impl MessageLine for crate::protocol::agent::ToAgent<'_> {
    fn push_to(&self, out: &mut String) {
        crate::protocol::agent::ToAgent::push_to(self, out);
    }
}

impl AgentProcess {
    /// Starts the agent in a new process group with all three standard streams piped.
    ///
    /// On Linux the first spawn also makes this process a child subreaper, so that the
    /// orphaned descendants of an agent are reparented here and reaped by
    /// [`shutdown`](Self::shutdown), instead of lingering under an init that may not
    /// reap them.
    pub fn spawn(spec: &AgentSpec) -> Result<AgentProcess, AgentError> {
        let argv = shell_words::split(&spec.command)
            .map_err(|err| AgentError::BadCommand(format!("`{}`: {err}", spec.command)))?;
        if argv.is_empty() {
            return Err(AgentError::BadCommand("the command is empty".to_string()));
        }
        if let Some(dir) = spec.working_dir.as_ref().filter(|_| spec.sandbox.is_none()) {
            check_dir(dir).map_err(|source| AgentError::WorkingDir {
                path: dir.clone(),
                source,
            })?;
        }
        let log = match &spec.stderr_log {
            None => None,
            Some(path) => Some(OpenOptions::new().create(true).append(true).open(path).map_err(
                |source| AgentError::StderrLog {
                    path: path.clone(),
                    source,
                },
            )?),
        };

        let mut command = command_for(spec, &argv)?;
        if log.is_none() {
            // Nobody reads it: no pipe, and no thread to drain one.
            command.discard_stderr();
        }
        become_subreaper();
        seal_inherited_fds();
        let child = spawn_registered(&mut command).map_err(|source| AgentError::Spawn {
            command: spec.command.clone(),
            source,
        })?;
        AgentProcess::connect(child, spec, log)
    }

    /// Takes over a just-spawned `child`: its pipes made ready (stdin non-blocking,
    /// stdout read in bounded lines) and, if its stderr is piped, a thread draining
    /// it into `log`.
    fn connect(
        mut child: Child,
        spec: &AgentSpec,
        log: Option<std::fs::File>,
    ) -> Result<AgentProcess, AgentError> {
        let pgid = pgid_of(&child);
        let stdin = child.stdin.take();
        let stdout = child.stdout.take();
        let stderr = child.stderr.take();
        // From here on, dropping `agent` on an error kills and reaps the child.
        let mut agent = AgentProcess {
            child,
            pgid,
            input: stdin.map_or(Input::Closed, Input::Open),
            output: Output::closed(),
            message: String::new(),
            sent: None,
            quick: false,
            stderr_drain: None,
            sandboxed: spec.sandbox.is_some(),
            stopped: None,
        };
        let setup = |source| AgentError::Setup {
            command: spec.command.clone(),
            source,
        };
        if let Input::Open(stdin) = &agent.input {
            set_nonblocking(stdin).map_err(setup)?;
        }
        if let Some(stdout) = stdout {
            agent.output = Output::new(stdout).map_err(setup)?;
        }
        if let Some(stderr) = stderr {
            let drain = crate::beside::run(move || drain_stderr(stderr, log)).map_err(setup)?;
            agent.stderr_drain = Some(drain);
        }
        Ok(agent)
    }

    /// The agent's process id, which is also its process group id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Sends one line (a `\n` is added), waiting at most [`SEND_TIMEOUT`] for room.
    pub fn send(&mut self, line: &str) -> Result<(), AgentError> {
        self.send_until(line, Instant::now() + SEND_TIMEOUT)
    }

    /// Sends one line, giving up with [`AgentError::Stalled`] once `deadline` passes.
    ///
    /// The pipe is non-blocking, so an agent that never reads its input costs the
    /// referee at most the time until `deadline`, not forever.
    pub fn send_until(&mut self, line: &str, deadline: Instant) -> Result<(), AgentError> {
        self.send_lines_until([line], deadline)
    }

    /// Sends several lines with one write (a `\n` after each), waiting at most
    /// [`SEND_TIMEOUT`]: what a decision needs costs one system call, not one a line.
    pub fn send_lines<L: MessageLine>(
        &mut self,
        lines: impl IntoIterator<Item = L>,
    ) -> Result<(), AgentError> {
        self.send_lines_until(lines, Instant::now() + SEND_TIMEOUT)
    }

    /// [`AgentProcess::send_lines`] with an explicit deadline. The lines are printed
    /// straight into one reused buffer: no allocation per line or per message.
    pub fn send_lines_until<L: MessageLine>(
        &mut self,
        lines: impl IntoIterator<Item = L>,
        deadline: Instant,
    ) -> Result<(), AgentError> {
        // Cleared first: after a failure, no earlier message may pass for this one.
        self.message.clear();
        let stdin = match &mut self.input {
            Input::Open(stdin) => stdin,
            Input::Closed => return Err(AgentError::Closed),
            Input::Stalled => return Err(AgentError::Stalled),
        };
        for line in lines {
            let start = self.message.len();
            line.push_to(&mut self.message);
            if memchr::memchr2(b'\n', b'\r', &self.message.as_bytes()[start..]).is_some() {
                self.message.clear();
                return Err(AgentError::NotOneLine);
            }
            self.message.push('\n');
        }
        let result = write_all_until(stdin, self.message.as_bytes(), deadline);
        self.sent = Some(Instant::now());
        match result {
            Ok(()) => {}
            Err(AgentError::Stalled) => self.input = Input::Stalled,
            Err(_) => self.input = Input::Closed,
        }
        result
    }

    /// The lines of the last message sent (or tried), each ending in `\n`: what a
    /// transcript logs, without formatting the lines twice.
    pub fn last_message(&self) -> &str {
        &self.message
    }

    /// The next line from the agent's stdout, or [`Received::Timeout`] at `deadline`.
    ///
    /// The deadline is checked before the queue, so an agent that prints without end
    /// still times out. An agent that has exited reports [`Received::Closed`] once its
    /// output has stopped coming, even if a leaked descendant holds its stdout open.
    pub fn recv(&mut self, deadline: Instant) -> Received {
        let received = self.await_line(deadline);
        self.quick = matches!(received, Received::Line(_)) && self.sent.is_some_and(|t| t.elapsed() <= SPIN);
        received
    }

    /// [`AgentProcess::recv`] without the bookkeeping of how fast it was.
    fn await_line(&mut self, deadline: Instant) -> Received {
        let waiting = Waiting::begin();
        if self.quick {
            if let Some(received) = waiting.spin(&mut self.output, deadline) {
                return received;
            }
        }
        loop {
            let now = Instant::now();
            if now >= deadline {
                if self.exit_status().is_none() {
                    return Received::Timeout;
                }
                // An agent that has died will never answer; say so rather than "slow",
                // once what it said before dying has been taken.
                return self.ended();
            }
            if let Some(received) = self.output.take() {
                return received;
            }
            // Only a quiet agent is asked whether it still lives: no system call per
            // line on the hot path.
            if !self.output.wait((deadline - now).min(EXIT_POLL)) && self.exit_status().is_some() {
                return self.ended();
            }
            self.output.fill();
        }
    }

    /// What is left to take from an agent that has exited: a line it printed before,
    /// or the end, even if a leaked descendant still holds its stdout open.
    fn ended(&mut self) -> Received {
        if let Some(received) = self.output.take() {
            return received;
        }
        self.output.fill();
        self.output.take().unwrap_or(Received::Closed)
    }

    /// A line that has already arrived, without waiting; `None` when there is none.
    ///
    /// Everything the pipe holds is read first, so lines the agent wrote at once are
    /// seen together: a second `bestmove` written with the first is noticed before the
    /// next `go` is sent, not taken for its answer. This is also how the referee
    /// reads, before a `go`, what the agent printed while no answer was due: nothing
    /// reads its pipe in between.
    pub fn try_recv(&mut self) -> Option<Received> {
        if let Some(received) = self.output.take() {
            return Some(received);
        }
        self.output.fill();
        self.output.take()
    }

    /// Stops the agent: TERM to its group, up to `grace` to exit, then KILL; idempotent
    /// (a second call reports what the first found).
    ///
    /// Always reaps the agent, and reaps those of its descendants that were
    /// reparented to this process, so none is left running or as a zombie. Says how
    /// the agent ended and which escaped descendants were killed.
    pub fn shutdown(&mut self, grace: Duration) -> Stopped {
        if let Some(stopped) = &self.stopped {
            return stopped.clone();
        }
        // End of input lets a well-behaved agent finish on its own during the grace.
        self.input = Input::Closed;
        let group = Pid::from_raw(self.pgid);
        let _ = killpg(group, Signal::SIGTERM);
        self.await_exit(Instant::now() + grace);
        let ending = self.exit_status().map_or(Ending::Killed, Ending::Exited);
        // Also when the agent exited in time: descendants may have ignored the TERM.
        let _ = killpg(group, Signal::SIGKILL);
        // By pid too, in case the agent moved itself out of its group.
        let _ = self.child.kill();
        let _ = self.child.wait();
        reap_group(self.pgid, Instant::now() + REAP_LIMIT);
        unregister(self.pgid);
        // Descendants that left the group are this process's children by now (it is a
        // subreaper): without this they would outlive the referee, and hold the
        // agent's pipes open.
        let escaped = self.reap_descendants();
        // The log is complete once the drain thread has seen the end of stderr; a
        // descendant that escaped the group may hold it open, so do not wait forever.
        if let Some(drain) = self.stderr_drain.take() {
            let _ = drain.join_within(REAP_LIMIT);
        }
        let stopped = Stopped { ending, escaped };
        self.stopped = Some(stopped.clone());
        stopped
    }

    /// Reaps what the agent left behind that became this process's children, and says
    /// which of them escaped (see [`Stopped::escaped`]).
    ///
    /// A sandbox's own first process leaves the group (bubblewrap starts it in a
    /// session of its own), and when bubblewrap is killed before it, it is orphaned
    /// here; every process of the bot's is inside its PID namespace, which dies with
    /// that first process, so none of them escaped. The scan finds and reaps it.
    /// (Its pid could come from bubblewrap's `--info-fd`, sparing the scan, but
    /// bubblewraps started with it outlived a referee killed during their start-up:
    /// see `command_for`.)
    fn reap_descendants(&mut self) -> Vec<i32> {
        let until = Instant::now() + REAP_LIMIT;
        let escaped = reap_escaped(until);
        if self.sandboxed {
            Vec::new()
        } else {
            escaped
        }
    }

    /// Waits until the agent has exited or `until` has passed, without reaping it
    /// (see [`exit_status`](Self::exit_status)).
    pub fn await_exit(&mut self, until: Instant) {
        let pid = self.child.id();
        await_exit(pid, until, || self.exit_status().is_some());
    }

    /// The agent's exit status if it has exited, without waiting.
    pub fn exit_status(&mut self) -> Option<ExitStatus> {
        self.child.try_wait().ok().flatten()
    }
}

impl Drop for AgentProcess {
    fn drop(&mut self) {
        // Nobody asks what it found: the agent is dropped on an error path.
        let _ = self.shutdown(DROP_GRACE);
    }
}

/// Puts a pipe end (the agent's stdin, a sandbox's info) in non-blocking mode.
pub(super) fn set_nonblocking(pipe: &impl AsRawFd) -> io::Result<()> {
    let fd = pipe.as_raw_fd();
    let flags = OFlag::from_bits_truncate(fcntl(fd, FcntlArg::F_GETFL)?);
    fcntl(fd, FcntlArg::F_SETFL(flags | OFlag::O_NONBLOCK))?;
    Ok(())
}

/// Writes all of `bytes` to the non-blocking pipe, waiting for room until `deadline`.
fn write_all_until(pipe: &mut ChildStdin, mut bytes: &[u8], deadline: Instant) -> Result<(), AgentError> {
    while !bytes.is_empty() {
        match pipe.write(bytes) {
            Ok(0) => return Err(AgentError::Closed),
            Ok(n) => bytes = &bytes[n..],
            Err(err) => match err.kind() {
                ErrorKind::Interrupted => {}
                ErrorKind::WouldBlock => wait_writable(pipe, deadline)?,
                ErrorKind::BrokenPipe => return Err(AgentError::Closed),
                _ => return Err(AgentError::Write(err)),
            },
        }
    }
    Ok(())
}

/// Waits until the pipe has room (or its reader is gone), or fails at `deadline`.
fn wait_writable(pipe: &ChildStdin, deadline: Instant) -> Result<(), AgentError> {
    let left = deadline.saturating_duration_since(Instant::now());
    if left.is_zero() {
        return Err(AgentError::Stalled);
    }
    // Longer waits are split; the caller's loop comes back here.
    let millis = u16::try_from(left.as_millis().max(1)).unwrap_or(u16::MAX);
    let mut fds = [PollFd::new(pipe.as_fd(), PollFlags::POLLOUT)];
    match poll(&mut fds, PollTimeout::from(millis)) {
        Ok(_) | Err(Errno::EINTR) => Ok(()),
        Err(errno) => Err(AgentError::Write(errno.into())),
    }
}

/// Copies the agent's stderr to `log` (up to [`STDERR_LOG_LIMIT`] bytes) or discards
/// it, until the agent closes it; never buffers more than one read.
fn drain_stderr(mut stderr: ChildStderr, log: Option<File>) {
    let mut log = log.map(CappedLog::new);
    let mut chunk = [0u8; 8 * 1024];
    loop {
        let n = match stderr.read(&mut chunk) {
            Ok(0) => return,
            Ok(n) => n,
            Err(err) if err.kind() == ErrorKind::Interrupted => continue,
            Err(_) => return,
        };
        if let Some(file) = log.as_mut() {
            if file.write_all(&chunk[..n]).is_err() {
                // Keep draining so the agent never blocks, but stop logging.
                log = None;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::thread;

    use super::*;
    use crate::agent::AgentSpec;

    fn spawn(script: &str) -> AgentProcess {
        AgentProcess::spawn(&AgentSpec::new(shell_words::join(["sh", "-c", script]))).expect("sh starts")
    }

    /// Generous: only a hang gets near it.
    const LONG: Duration = Duration::from_secs(20);

    /// Everything the agent has printed so far, read without waiting, as text.
    fn drain(agent: &mut AgentProcess) -> Vec<String> {
        let mut lines = Vec::new();
        while let Some(Received::Line(line)) = agent.try_recv() {
            lines.push(line);
        }
        lines
    }

    #[test]
    fn what_an_agent_prints_between_answers_waits_until_it_is_read() {
        // Nothing reads an agent's pipe while no answer is due: its lines wait there,
        // in order, for the read before its next go.
        let mut agent = spawn(
            "echo 'bestmove a1-c3'; sleep 0.3; i=0; while [ $i -lt 200 ]; do echo \"info $i\"; \
             i=$((i+1)); done; echo 'bestmove stray'; exec sleep 30",
        );
        assert_eq!(
            agent.recv(Instant::now() + LONG),
            Received::Line("bestmove a1-c3".into())
        );
        thread::sleep(Duration::from_millis(600));
        let seen = drain(&mut agent);
        assert_eq!(seen.len(), 201, "{seen:?}");
        assert_eq!(seen.first().map(String::as_str), Some("info 0"));
        assert_eq!(seen.last().map(String::as_str), Some("bestmove stray"));
        assert_eq!(agent.try_recv(), None, "nothing more was printed");
        agent.shutdown(Duration::ZERO);
    }

    #[test]
    fn an_agent_that_answers_at_once_is_checked_before_the_wait_sleeps() {
        // Every answer goes through the check before `poll` (the agent is marked quick
        // each time, whatever the timing) and comes back whole and in order.
        let mut agent = spawn("exec cat");
        for k in 0..200 {
            let line = format!("bestmove {k}");
            agent.quick = true;
            agent.send(&line).expect("cat reads");
            assert_eq!(agent.recv(Instant::now() + LONG), Received::Line(line));
        }
        agent.shutdown(Duration::ZERO);
    }

    #[test]
    fn a_quick_agent_that_then_thinks_is_still_awaited_in_full() {
        // Quick at first; then an answer 0.3 s late: the check gives up after SPIN and
        // the wait sleeps until the line comes; the agent no longer counts as quick.
        let mut agent = spawn("read a; echo \"$a\"; read b; sleep 0.3; echo \"$b\"; exec sleep 30");
        agent.quick = true;
        agent.send("first").expect("sh reads");
        assert_eq!(agent.recv(Instant::now() + LONG), Received::Line("first".into()));
        agent.quick = true;
        agent.send("second").expect("sh reads");
        assert_eq!(agent.recv(Instant::now() + LONG), Received::Line("second".into()));
        assert!(!agent.quick, "0.3 s is not quick");
        agent.shutdown(Duration::ZERO);
    }

    #[test]
    fn an_agent_that_exits_is_noticed_though_a_descendant_holds_its_output() {
        // The agent exits; a child keeps its stdout open and says nothing: the wait
        // ends with the end of the agent, long before the deadline.
        let mut agent = spawn("sleep 30 & exit 0");
        let start = Instant::now();
        assert_eq!(agent.recv(start + LONG), Received::Closed);
        assert!(start.elapsed() < LONG / 2, "took {:?}", start.elapsed());
        agent.shutdown(Duration::ZERO);
    }

    #[test]
    fn what_an_agent_printed_before_exiting_is_read_to_its_end() {
        let mut gone = spawn("echo bye");
        thread::sleep(Duration::from_millis(200));
        assert_eq!(gone.try_recv(), Some(Received::Line("bye".into())));
        assert_eq!(gone.try_recv(), Some(Received::Closed));
        gone.shutdown(Duration::ZERO);
    }
}
