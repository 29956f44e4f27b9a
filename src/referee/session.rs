//! One agent's side of the agent protocol: handshake, decisions, game over.
//!
//! A session never sees the game: what it can send is built from a [`View`], the
//! [`SeatEvent`]s of its own seat, the seat's own clock and the public result. That is
//! what makes information hiding structural rather than a matter of care.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;
use std::time::{Duration, Instant};

use crate::agent::{AgentError, AgentProcess, AgentSpec, CappedLog, Received, Stopped, MAX_HELD_LINES};
use crate::game::{ActionKind, ForfeitKind, GameId, Options, Outcome, Seat, SeatEvent, View};
use crate::protocol::agent::{FromAgent, GoClock, ToAgent};

/// Unrecognised lines tolerated while waiting for one answer; UCI says to ignore them,
/// but a bot that prints nothing else must not stall the game until its clock runs out.
pub const MAX_UNKNOWN_LINES: usize = 32;

/// Lines still read after a deadline: about what an agent can have queued up while
/// the referee served the others (the process layer holds up to 256 lines).
const LATE_LINES: usize = 300;

/// Why an agent lost its seat.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Forfeit {
    /// The forfeit reason.
    pub kind: ForfeitKind,
    /// What exactly happened, for the record and the user.
    pub detail: String,
}

impl Forfeit {
    fn new(kind: ForfeitKind, detail: impl Into<String>) -> Forfeit {
        Forfeit {
            kind,
            detail: detail.into(),
        }
    }
}

/// What a failed write to an agent means for its seat.
fn write_forfeit(e: AgentError) -> Forfeit {
    match e {
        AgentError::Stalled => Forfeit::new(ForfeitKind::Protocol, "stopped reading its input"),
        other => Forfeit::new(ForfeitKind::Crash, format!("cannot write to the agent: {other}")),
    }
}

/// The protocol conversation with one agent process.
#[derive(Debug)]
pub struct AgentSession {
    seat: Seat,
    process: AgentProcess,
    name: Option<String>,
    pending: Vec<SeatEvent>,
    transcript: Option<CappedLog<BufWriter<File>>>,
}

impl AgentSession {
    /// Starts the agent for `seat`; with `transcript`, every line exchanged is logged
    /// there (`> ` sent, `< ` received).
    pub fn start(
        seat: Seat,
        spec: &AgentSpec,
        transcript: Option<&Path>,
    ) -> Result<AgentSession, AgentError> {
        let process = AgentProcess::spawn(spec)?;
        let transcript = match transcript {
            Some(path) => {
                let file = File::create(path).map_err(|source| AgentError::Setup {
                    command: spec.command.clone(),
                    source,
                })?;
                Some(CappedLog::new(BufWriter::new(file)))
            }
            None => None,
        };
        Ok(AgentSession {
            seat,
            process,
            name: None,
            pending: Vec::new(),
            transcript,
        })
    }

    /// The name the agent gave in `id name`, once known.
    pub fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }

    /// The seat this agent plays.
    pub fn seat(&self) -> Seat {
        self.seat
    }

    fn log(&mut self, dir: char, line: &str) {
        if let Some(t) = &mut self.transcript {
            let _ = writeln!(t, "{dir} {line}");
        }
    }

    fn send(&mut self, message: &ToAgent<'_>) -> Result<(), Forfeit> {
        self.send_lines([message.clone()], None)
    }

    /// Sends `lines` with one write (until `deadline`, or the process layer's send
    /// timeout), and logs what was sent.
    fn send_lines<'m>(
        &mut self,
        lines: impl IntoIterator<Item = ToAgent<'m>>,
        deadline: Option<Instant>,
    ) -> Result<(), Forfeit> {
        let sent = match deadline {
            Some(deadline) => self.process.send_lines_until(lines, deadline),
            None => self.process.send_lines(lines),
        };
        if let Some(t) = &mut self.transcript {
            for line in self.process.last_message().lines() {
                let _ = writeln!(t, "> {line}");
            }
        }
        sent.map_err(write_forfeit)
    }

    /// Reads lines until `want` accepts one, or the deadline, a crash or a protocol
    /// error ends the wait. `info` lines are logged and skipped.
    fn wait_for<T>(
        &mut self,
        deadline: Instant,
        what: &str,
        mut want: impl FnMut(&mut AgentSession, FromAgent) -> Option<Result<T, Forfeit>>,
    ) -> Result<T, Forfeit> {
        let mut unknown = 0;
        let mut late = 0;
        loop {
            // Lines that arrived while other agents were served count even if the
            // deadline has passed meanwhile (all handshakes share one deadline).
            let received = match self.process.recv(deadline) {
                Received::Timeout => self.process.try_recv().unwrap_or(Received::Timeout),
                r => r,
            };
            let line = match received {
                Received::Line(line) => line,
                Received::Timeout => {
                    return Err(Forfeit::new(ForfeitKind::Timeout, format!("no {what} in time")))
                }
                Received::Closed => {
                    let status = self.process.exit_status();
                    let how = match status {
                        Some(s) => format!("exited ({s})"),
                        None => "closed its output".to_string(),
                    };
                    return Err(Forfeit::new(
                        ForfeitKind::Crash,
                        format!("{how} while {what} was due"),
                    ));
                }
                Received::TooLong => {
                    return Err(Forfeit::new(
                        ForfeitKind::Protocol,
                        format!("sent a line over {} bytes", crate::agent::MAX_LINE),
                    ))
                }
                Received::NotUtf8(_) => {
                    return Err(Forfeit::new(
                        ForfeitKind::Protocol,
                        "sent a line that is not UTF-8",
                    ))
                }
            };
            self.log('<', &line);
            // Past the deadline only what had queued up is read, so a flood of lines,
            // `info` lines included, cannot postpone the timeout (lines are taken from
            // the queue without a deadline check while any are there).
            if Instant::now() >= deadline {
                late += 1;
                if late > LATE_LINES {
                    return Err(Forfeit::new(ForfeitKind::Timeout, format!("no {what} in time")));
                }
            }
            let message = FromAgent::from_line(line);
            match message {
                FromAgent::Info(_) => continue,
                FromAgent::IdName(ref n) => self.name = Some(n.clone()),
                _ => {}
            }
            let is_unknown = matches!(message, FromAgent::Unknown(_));
            if let Some(done) = want(self, message) {
                return done;
            }
            if is_unknown {
                unknown += 1;
                if unknown > MAX_UNKNOWN_LINES {
                    return Err(Forfeit::new(
                        ForfeitKind::Protocol,
                        format!("more than {MAX_UNKNOWN_LINES} unrecognised lines while {what} was due"),
                    ));
                }
            }
        }
    }

    /// Opens the handshake without waiting, so that all agents start up in parallel.
    pub fn hello(&mut self) -> Result<(), Forfeit> {
        self.send(&ToAgent::Hello)
    }

    /// Waits for `protocolok`.
    pub fn await_protocolok(&mut self, deadline: Instant) -> Result<(), Forfeit> {
        self.wait_for(deadline, "protocolok", |_, m| match m {
            FromAgent::ProtocolOk => Some(Ok(())),
            FromAgent::BestMove(_) => Some(Err(Forfeit::new(
                ForfeitKind::Protocol,
                "bestmove during the handshake",
            ))),
            _ => None,
        })
    }

    /// Starts the agent's game: a `setoption` for each of `options` (those to tell:
    /// none for a kept agent whose options did not change), then `newgame` with its
    /// seat and `isready`, in one write. A fresh agent gets it after `protocolok`, a
    /// kept one instead of the handshake.
    pub fn send_new_game(
        &mut self,
        options: &[(String, String)],
        game: GameId,
        seats: usize,
        game_options: &Options,
    ) -> Result<(), Forfeit> {
        let set = options
            .iter()
            .map(|(name, value)| ToAgent::SetOption { name, value });
        let new_game = ToAgent::NewGame {
            game,
            seat: self.seat,
            seats,
            options: game_options,
        };
        self.send_lines(set.chain([new_game, ToAgent::IsReady]), None)
    }

    /// Waits for `readyok`.
    pub fn await_readyok(&mut self, deadline: Instant) -> Result<(), Forfeit> {
        self.wait_for(deadline, "readyok", |_, m| match m {
            FromAgent::ReadyOk => Some(Ok(())),
            FromAgent::BestMove(_) => Some(Err(Forfeit::new(
                ForfeitKind::Protocol,
                "bestmove when readyok was due",
            ))),
            _ => None,
        })
    }

    /// Queues events this seat saw; they are sent before its next decision.
    pub fn observe(&mut self, events: impl IntoIterator<Item = SeatEvent>) {
        self.pending.extend(events);
    }

    /// Reads what the agent printed since its last answer, then sends the pending
    /// events, the view and `go`, and waits for `bestmove` until `limit` after `go`
    /// was written. Returns the action and the time it took.
    pub fn decide(
        &mut self,
        view: &View,
        kind: ActionKind,
        clock: GoClock,
        limit: Duration,
    ) -> Result<(String, Duration), Forfeit> {
        debug_assert_eq!(view.seat(), self.seat, "a seat is only ever sent its own view");
        self.stale_answers()?;
        let pending = std::mem::take(&mut self.pending);
        let last = [ToAgent::View(view), ToAgent::Go { kind, clock }];
        let sent = self.send_lines(pending.iter().map(ToAgent::Event).chain(last), None);
        // The queue's allocation is kept for the next decision.
        self.pending = pending;
        self.pending.clear();
        sent?;
        let sent = Instant::now();
        let action = self.wait_for(sent + limit, "bestmove", |_, m| match m {
            FromAgent::BestMove(a) if a.is_empty() => Some(Err(Forfeit::new(
                ForfeitKind::Protocol,
                "bestmove without an action",
            ))),
            FromAgent::BestMove(a) => Some(Ok(a)),
            _ => None,
        })?;
        Ok((action, sent.elapsed()))
    }

    /// Lines the agent printed while no answer was due, read without waiting just
    /// before its `go`: a `bestmove` among them answers no question, and taking it
    /// for the next answer would be wrong (protocol.md §1.5).
    fn stale_answers(&mut self) -> Result<(), Forfeit> {
        // At most what the process layer holds: an agent printing without end would
        // otherwise keep this loop going forever. The rest is read with the answer.
        for _ in 0..MAX_HELD_LINES {
            let Some(received) = self.process.try_recv() else {
                break;
            };
            match received {
                Received::Line(line) => {
                    self.log('<', &line);
                    if let FromAgent::BestMove(_) = FromAgent::from_line(line) {
                        return Err(Forfeit::new(
                            ForfeitKind::Protocol,
                            "bestmove sent when none was asked for",
                        ));
                    }
                }
                Received::TooLong | Received::NotUtf8(_) => {
                    return Err(Forfeit::new(ForfeitKind::Protocol, "garbage between decisions"));
                }
                // A crash shows when the answer is due, with the exit status.
                Received::Closed | Received::Timeout => break,
            }
        }
        Ok(())
    }

    /// Sends the remaining events, `gameover` and `quit` (until `deadline`), without
    /// waiting for the agent to exit: every seat is told before any is waited for, so
    /// that they all exit at once (then [`stop_by`](Self::stop_by)).
    pub fn say_goodbye(&mut self, outcome: &Outcome, deadline: Instant) {
        let pending = std::mem::take(&mut self.pending);
        let last = [ToAgent::GameOver(outcome), ToAgent::Quit];
        let _ = self.send_lines(pending.iter().map(ToAgent::Event).chain(last), Some(deadline));
    }

    /// Gives an agent told `quit` until `deadline` to exit (woken by its exit, not by
    /// polling), then stops it; says what stopping it found.
    pub fn stop_by(&mut self, deadline: Instant) -> Stopped {
        self.process.await_exit(deadline);
        self.stop(Duration::ZERO)
    }

    /// Sends the remaining events and `gameover` but not `quit`: the agent is kept for
    /// another game (protocol.md §1.3). A failed write shows when it is next asked.
    pub fn game_over(&mut self, outcome: &Outcome, grace: Duration) {
        let deadline = Instant::now() + grace;
        let pending = std::mem::take(&mut self.pending);
        let last = [ToAgent::GameOver(outcome)];
        let _ = self.send_lines(pending.iter().map(ToAgent::Event).chain(last), Some(deadline));
    }

    /// Sends `quit` to an agent kept after its last game, gives it `grace` to exit,
    /// then stops it; says what stopping it found.
    pub fn quit(&mut self, grace: Duration) -> Stopped {
        let deadline = Instant::now() + grace;
        let _ = self.send_lines([ToAgent::Quit], Some(deadline));
        self.stop_by(deadline)
    }

    /// Seats a kept agent for its next game. Kept agents have no transcript: a match
    /// with a log directory starts its agents fresh, so every log is one game's.
    pub fn reseat(&mut self, seat: Seat) {
        self.seat = seat;
        self.pending.clear();
    }

    /// Stops the process (at once after a forfeit), keeping the transcript; says what
    /// stopping it found (the same again when it was stopped already).
    pub fn stop(&mut self, grace: Duration) -> Stopped {
        let stopped = self.process.shutdown(grace);
        if let Some(t) = &mut self.transcript {
            let _ = t.finish();
        }
        stopped
    }

    /// The agent's process group id (tests check that it is gone afterwards).
    pub fn process_group(&self) -> i32 {
        self.process.pid() as i32
    }
}
