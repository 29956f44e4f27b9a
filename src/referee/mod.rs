//! The match loop: start the agents, ask the seat to act for an action, check it
//! against the rules, record it, tell every seat what it saw, until the game ends.

pub mod session;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::agent::{AgentError, AgentSpec, Hidden, Isolation, Sandbox};
use crate::clock::{SeatClock, TimeControl};
use crate::game::{ForfeitKind, Game, GameId, Options, Outcome, Played, Seat, SeatEvent, SetupError, Turn};
use crate::record::{
    self, ActionLine, Durability, ForfeitLine, Header, Line, RecordWriter, ResultLine, SeatEntry,
};
use session::{Failure, Session};

/// Set once the referee has been told to stop (SIGINT, SIGTERM, SIGHUP).
static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// Stops every match: kills all agents and makes the match loops return
/// [`MatchError::Interrupted`] without recording what the killing caused.
pub fn interrupt() {
    INTERRUPTED.store(true, Ordering::SeqCst);
    crate::agent::kill_all_agents();
}

/// Whether [`interrupt`] has been called.
pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}

/// The I/O error the loop stops with once interrupted.
fn stop_if_interrupted() -> std::io::Result<()> {
    if interrupted() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::Interrupted,
            "interrupted",
        ));
    }
    Ok(())
}

/// Who made an accepted action.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Origin {
    /// The seat's agent.
    Agent,
    /// The referee, because it was the only action (a forced pass).
    Forced,
    /// The referee, as part of a random opening.
    Opening,
}

/// One seat's agent and the options it is given with `setoption`.
#[derive(Clone, Debug)]
pub struct SeatAgent {
    /// How to start it.
    pub spec: AgentSpec,
    /// `setoption` pairs sent after the handshake.
    pub options: Vec<(String, String)>,
}

/// Everything one match needs.
#[derive(Clone, Debug)]
pub struct MatchConfig {
    /// The game.
    pub game: GameId,
    /// Its options.
    pub options: Options,
    /// A state to start from instead of the start position.
    pub state: Option<String>,
    /// One agent per seat, in seat order.
    pub agents: Vec<SeatAgent>,
    /// The time control.
    pub control: TimeControl,
    /// Extra time granted past the clock before the flag falls.
    pub margin: Duration,
    /// Time for the handshake and for `readyok` after `newgame`.
    pub startup: Duration,
    /// Time an agent has to exit after `quit`.
    pub quit_grace: Duration,
    /// The seed recorded in the header.
    pub seed: u64,
    /// Where the record goes (a new file).
    pub record: PathBuf,
    /// A directory for per-seat transcripts and stderr logs.
    pub log_dir: Option<PathBuf>,
    /// Continue the unfinished game in `record` instead of starting one.
    pub resume: bool,
    /// When record lines are forced to disk.
    pub durability: Durability,
    /// Where agents start.
    pub agent_cwd: AgentCwd,
    /// Actions the referee plays before the agents take over (a random opening).
    pub opening: Vec<String>,
    /// How agents are isolated.
    pub isolation: Isolation,
    /// Whether sandboxed agents keep the network.
    pub network: bool,
    /// Directories agents must not see besides the record's and the log directory
    /// (a tournament's output).
    pub hidden: Vec<PathBuf>,
}

/// The working directory agents start in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AgentCwd {
    /// A fresh directory per agent (in a sandbox a private tmpfs, otherwise a
    /// temporary directory removed afterwards); arguments naming existing relative
    /// paths are made absolute first, so `python3 bot.py` still finds `bot.py`.
    Private,
    /// The referee's own working directory.
    Inherit,
    /// This directory, for every agent.
    Dir(PathBuf),
}

/// Makes every argument of `command` that names an existing path relative to the
/// referee's working directory absolute (the program itself only if it contains a
/// `/`, so that `python3` is still looked up in `PATH`).
fn absolutize(command: &str) -> String {
    let (Ok(words), Ok(here)) = (shell_words::split(command), std::env::current_dir()) else {
        return command.to_string();
    };
    let words: Vec<String> = words
        .into_iter()
        .enumerate()
        .map(|(i, w)| {
            let p = Path::new(&w);
            let candidate = !p.is_absolute() && (i > 0 || w.contains('/')) && p.exists();
            if candidate {
                here.join(p).to_string_lossy().into_owned()
            } else {
                w
            }
        })
        .collect();
    shell_words::join(words)
}

/// Prepares where seat `seat`'s agent runs: its sandbox, if agents are isolated, and
/// its working directory. Returns a temporary directory to remove after the match,
/// if one was made.
fn place_agent(spec: &mut AgentSpec, config: &MatchConfig, seat: Seat) -> std::io::Result<Option<PathBuf>> {
    // An agent that names its own directory (a tournament entrant's `dir=`) keeps it.
    let agent_cwd = match spec.working_dir.take() {
        Some(dir) => AgentCwd::Dir(dir),
        None => config.agent_cwd.clone(),
    };
    if let Isolation::Sandboxed(bubblewrap) = &config.isolation {
        // Relative paths are made absolute so that the sandbox can show them.
        spec.command = absolutize(&spec.command);
        let cwd = match &agent_cwd {
            AgentCwd::Private => None,
            AgentCwd::Inherit => Some(std::env::current_dir()?),
            AgentCwd::Dir(dir) => Some(dir.clone()),
        };
        spec.sandbox = Some(Sandbox::new(
            bubblewrap.clone(),
            hidden_for(config)?,
            config.network,
            cwd,
        ));
        return Ok(None);
    }
    match &agent_cwd {
        AgentCwd::Inherit => Ok(None),
        AgentCwd::Dir(dir) => {
            spec.working_dir = Some(dir.clone());
            Ok(None)
        }
        AgentCwd::Private => {
            // Never under the log directory: the transcripts there are every seat's.
            let nanos = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.subsec_nanos())
                .unwrap_or(0);
            let name = format!("referee-{}-{nanos}-seat{seat}", std::process::id());
            let dir = std::env::temp_dir().join(name);
            std::fs::create_dir_all(&dir)?;
            #[cfg(unix)]
            {
                use std::os::unix::fs::PermissionsExt;
                std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700))?;
            }
            spec.command = absolutize(&spec.command);
            spec.working_dir = Some(dir.clone());
            Ok(Some(dir))
        }
    }
}

/// What no agent of this match may see: the record (with the files beside it that
/// belong to it), the log directory, and the configuration's others. Directories
/// are made now if missing, so that the sandbox can cover them before anything is
/// written there.
fn hidden_for(config: &MatchConfig) -> std::io::Result<Hidden> {
    let mut dirs: Vec<PathBuf> = config.log_dir.iter().cloned().collect();
    dirs.extend(config.hidden.iter().cloned());
    let record_dir = config.record.parent().filter(|d| !d.as_os_str().is_empty());
    for dir in dirs.iter().map(PathBuf::as_path).chain(record_dir) {
        std::fs::create_dir_all(dir)?;
    }
    Ok(Hidden {
        dirs,
        records: vec![config.record.clone()],
    })
}

/// What a match reports as it goes.
#[derive(Clone, Debug)]
pub enum Progress<'a> {
    /// An action was accepted.
    Action {
        /// Its ply.
        ply: u32,
        /// Who made it.
        seat: Seat,
        /// The side's label.
        label: &'a str,
        /// The action text.
        action: &'a str,
        /// Whether the referee made it (forced pass, opening).
        forced: bool,
        /// How long the agent thought, from `go` written to `bestmove` read.
        think: Option<Duration>,
    },
    /// A seat forfeited.
    Forfeit {
        /// The seat.
        seat: Seat,
        /// Why.
        failure: &'a Failure,
    },
}

/// How a match ended.
#[derive(Clone, Debug)]
pub struct MatchReport {
    /// The result.
    pub outcome: Outcome,
    /// Plies played.
    pub plies: u32,
    /// The seats' labels and agent names.
    pub seats: Vec<SeatEntry>,
    /// Where the record is.
    pub record: PathBuf,
    /// Process groups of the agents (all gone by now).
    pub process_groups: Vec<i32>,
}

/// Why a match could not be played.
#[derive(Debug, thiserror::Error)]
pub enum MatchError {
    /// The game could not be set up.
    #[error(transparent)]
    Setup(#[from] SetupError),
    /// Wrong number of agents.
    #[error("{given} agents for a game of {seats} seats")]
    SeatCount {
        /// Agents given.
        given: usize,
        /// Seats in the game.
        seats: usize,
    },
    /// An agent could not be started at all.
    #[error("seat {seat}: {source}")]
    Agent {
        /// The seat.
        seat: Seat,
        /// What went wrong.
        source: AgentError,
    },
    /// The referee was told to stop; the record is kept as it was, unfinished.
    #[error("interrupted; record kept unfinished at {}", .0.display())]
    Interrupted(PathBuf),
    /// The record to resume cannot be continued.
    #[error("cannot resume {}: {reason}", path.display())]
    Resume {
        /// The record.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// The record could not be written.
    #[error("record {}: {source}", path.display())]
    Record {
        /// The record file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
}

/// The match in progress: the only place where the game and the agents meet.
struct Table<'c> {
    config: &'c MatchConfig,
    game: Box<dyn Game>,
    sessions: Vec<Option<Session>>,
    /// How many escaped descendants stopping each seat's agent found and killed, for
    /// the result line.
    escaped: Vec<usize>,
    /// `None` until the header is written: the file is created with its first line,
    /// so a referee killed during the handshakes leaves no empty record behind.
    record: Option<RecordWriter<std::fs::File>>,
    /// The record read back when resuming an interrupted game.
    resumed: Option<record::Replay>,
    /// Each seat's label, which never changes during a game.
    labels: Vec<String>,
}

/// Plays one match to its end and returns the result; the record is written as play
/// happens.
pub fn play_match(
    config: &MatchConfig,
    progress: &mut dyn FnMut(Progress<'_>),
) -> Result<MatchReport, MatchError> {
    let resumed = if config.resume {
        let resume_err = |reason: String| MatchError::Resume {
            path: config.record.clone(),
            reason,
        };
        let replay = record::replay_file(&config.record).map_err(|e| resume_err(e.to_string()))?;
        if replay.result.is_some() {
            return Err(resume_err("the game is already finished".into()));
        }
        // The record's clocks run under its own control, and verify checks them
        // against it: the game cannot go on under another.
        if let Some(tc) = replay.header.time_control.as_deref() {
            if TimeControl::parse_recorded(tc) != Ok(config.control) {
                return Err(resume_err(format!(
                    "the game is played under {tc}, not {}",
                    config.control
                )));
            }
        }
        Some(replay)
    } else {
        None
    };
    let game = match &resumed {
        Some(replay) => replay.game.boxed_clone(),
        None => config.game.create(&config.options, config.state.as_deref())?,
    };
    let seats = game.seat_count();
    if config.agents.len() != seats {
        return Err(MatchError::SeatCount {
            given: config.agents.len(),
            seats,
        });
    }
    // A seat that forfeited before the game was interrupted stays out.
    let gone: Vec<usize> = resumed
        .iter()
        .flat_map(|r| &r.lines)
        .filter_map(|l| match l {
            Line::Forfeit(f) => Some(f.seat),
            _ => None,
        })
        .collect();
    let mut sessions = Vec::with_capacity(seats);
    let mut scratch = Vec::new();
    let result = start_and_play(
        config,
        game,
        resumed,
        &gone,
        &mut sessions,
        &mut scratch,
        progress,
    );
    for dir in scratch {
        let _ = std::fs::remove_dir_all(dir);
    }
    result
}

/// Starts the agents and plays; `scratch` collects temporary directories to remove.
fn start_and_play(
    config: &MatchConfig,
    game: Box<dyn Game>,
    resumed: Option<record::Replay>,
    gone: &[usize],
    sessions: &mut Vec<Option<Session>>,
    scratch: &mut Vec<PathBuf>,
    progress: &mut dyn FnMut(Progress<'_>),
) -> Result<MatchReport, MatchError> {
    for (i, agent) in config.agents.iter().enumerate() {
        let seat = Seat::from_index(i);
        if gone.contains(&seat.number()) {
            sessions.push(None);
            continue;
        }
        let mut spec = agent.spec.clone();
        let place_err = |source| MatchError::Agent {
            seat,
            source: AgentError::WorkingDir {
                path: std::env::temp_dir(),
                source,
            },
        };
        if let Some(dir) = place_agent(&mut spec, config, seat).map_err(place_err)? {
            scratch.push(dir);
        }
        let transcript = config
            .log_dir
            .as_ref()
            .map(|d| d.join(format!("seat{seat}.transcript")));
        if let Some(dir) = &config.log_dir {
            spec.stderr_log
                .get_or_insert_with(|| dir.join(format!("seat{seat}.stderr")));
        }
        let session = Session::start(seat, &spec, transcript.as_deref())
            .map_err(|source| MatchError::Agent { seat, source })?;
        sessions.push(Some(session));
    }
    let record_err = |source| MatchError::Record {
        path: config.record.clone(),
        source,
    };
    let record = match &resumed {
        Some(replay) => Some(RecordWriter::append(&config.record, replay).map_err(record_err)?),
        None => None,
    };
    let labels = Seat::all(game.seat_count()).map(|s| game.seat_label(s)).collect();
    let mut table = Table {
        config,
        labels,
        escaped: vec![0; game.seat_count()],
        game,
        sessions: std::mem::take(sessions),
        record,
        resumed,
    };
    let process_groups = table
        .sessions
        .iter()
        .flatten()
        .map(Session::process_group)
        .collect();
    let result = table.run(progress).map_err(|e| match e.kind() {
        std::io::ErrorKind::Interrupted if interrupted() => MatchError::Interrupted(config.record.clone()),
        _ => record_err(e),
    });
    // Whatever happened, no agent outlives the match. What this finds is recorded
    // only when the match went well, and then every agent has been stopped already.
    for s in table.sessions.iter_mut().flatten() {
        let _ = s.stop(Duration::ZERO);
    }
    let seats = result?;
    Ok(MatchReport {
        outcome: table.game.outcome().expect("the loop ends with the game"),
        plies: table.game.plies(),
        seats,
        record: config.record.clone(),
        process_groups,
    })
}

impl Table<'_> {
    fn run(&mut self, progress: &mut dyn FnMut(Progress<'_>)) -> std::io::Result<Vec<SeatEntry>> {
        let config = self.config;
        // Every step of the handshake goes to all agents before any is waited for,
        // so they start up in parallel and each has the whole startup time.
        let mut failures: Vec<(Seat, Failure)> = Vec::new();
        self.each_agent(&mut failures, |s, _| s.hello());
        let deadline = Instant::now() + config.startup;
        self.each_agent(&mut failures, |s, _| s.await_protocolok(deadline));
        self.each_agent(&mut failures, |s, i| s.send_options(&config.agents[i].options));
        let deadline = Instant::now() + config.startup;
        self.each_agent(&mut failures, |s, _| s.await_readyok(deadline));
        let seats: Vec<SeatEntry> = match &self.resumed {
            Some(replay) => replay.header.seats.clone(),
            None => {
                let mut header = Header::new(self.game.as_ref(), config.state.clone(), config.seed, |seat| {
                    let command = config.agents[seat.index()].spec.command.clone();
                    let name = self.sessions[seat.index()].as_ref().and_then(|s| s.name());
                    (
                        name.map_or_else(|| command.clone(), str::to_string),
                        Some(command),
                    )
                });
                header.time_control = Some(config.control.to_string());
                header.sandbox = Some(config.isolation.describe());
                let seats = header.seats.clone();
                stop_if_interrupted()?;
                self.write(&Line::Header(header))?;
                seats
            }
        };
        stop_if_interrupted()?;
        if self.resumed.is_none() && config.durability != Durability::Never {
            self.record.as_mut().expect("the header is written").sync()?;
        }
        for (seat, failure) in failures {
            self.forfeit(seat, failure, None, progress)?;
        }
        let options = self.game.options();
        let seat_count = self.game.seat_count();
        let mut failures = Vec::new();
        self.each_agent(&mut failures, |s, _| {
            s.send_new_game(config.game, seat_count, &options)
        });
        let deadline = Instant::now() + config.startup;
        self.each_agent(&mut failures, |s, _| s.await_readyok(deadline));
        for (seat, failure) in failures {
            self.forfeit(seat, failure, None, progress)?;
        }
        if self.resumed.is_none() {
            for action in &config.opening {
                let Turn::Act { seat, .. } = self.game.turn() else {
                    break;
                };
                let played = self.game.play(seat, action).map_err(|r| {
                    std::io::Error::new(std::io::ErrorKind::InvalidInput, format!("opening: {r}"))
                })?;
                self.accept(seat, action.clone(), played, Origin::Opening, None, progress)?;
            }
        }
        let mut clocks: Vec<SeatClock> = (0..seat_count).map(|_| SeatClock::new(config.control)).collect();
        if let Some(replay) = &self.resumed {
            // A resumed agent is told everything its seat saw so far, and each clock
            // continues from what the record shows.
            let told = record::seat_histories(replay);
            for (slot, events) in self.sessions.iter_mut().zip(told) {
                if let Some(s) = slot {
                    s.observe(events);
                }
            }
            // The replay charged every clock with the think times recorded, as this
            // loop charges them, so each continues exactly where it stood. A record
            // without a time control (a controller's) has no clocks to continue.
            if let Some(recorded) = &replay.clocks {
                clocks.clone_from(recorded);
            }
        }
        while let Turn::Act { seat, kind } = self.game.turn() {
            if let Some(action) = self.game.forced_action() {
                let played = self.game.play(seat, &action).expect("a forced action is legal");
                self.accept(seat, action, played, Origin::Forced, None, progress)?;
                continue;
            }
            let view = self.game.view(seat);
            let clock = &mut clocks[seat.index()];
            let session = self.sessions[seat.index()]
                .as_mut()
                .expect("a seat to act has a live agent");
            let limit = clock.budget() + config.margin;
            let answer = session.decide(&view, kind, clock.go(), limit);
            let (action, used) = match answer {
                Ok(answer) => answer,
                Err(failure) => {
                    self.forfeit(seat, failure, None, progress)?;
                    continue;
                }
            };
            if !clock.charge(used, config.margin) {
                let failure = Failure {
                    kind: ForfeitKind::Timeout,
                    detail: format!(
                        "took {} ms with {} ms on the clock",
                        used.as_millis(),
                        clock.budget().as_millis()
                    ),
                };
                self.forfeit(seat, failure, None, progress)?;
                continue;
            }
            let timing = (used, clock.left().as_millis() as u64);
            match self.game.play(seat, &action) {
                Ok(played) => self.accept(seat, action, played, Origin::Agent, Some(timing), progress)?,
                Err(rejection) => {
                    let failure = Failure {
                        kind: ForfeitKind::Illegal,
                        detail: rejection.to_string(),
                    };
                    self.forfeit(seat, failure, Some(action), progress)?;
                }
            }
        }
        let outcome = self.game.outcome().expect("the game is over");
        // The agents are stopped before the result is written, so that it can say
        // what stopping them found. A referee killed in between leaves a game over
        // without a result, which `--resume` finishes.
        for (slot, escaped) in self.sessions.iter_mut().zip(&mut self.escaped) {
            if let Some(s) = slot {
                *escaped += s.finish(&outcome, config.quit_grace).escaped.len();
            }
        }
        stop_if_interrupted()?;
        let escaped = self.escaped.iter().any(|&n| n > 0).then(|| self.escaped.clone());
        self.write(&Line::Result(ResultLine {
            places: outcome.places.clone(),
            reason: outcome.reason.to_string(),
            plies: self.game.plies(),
            state: self.game.state(),
            escaped,
        }))?;
        Ok(seats)
    }

    /// Appends a record line, forcing it to disk when the durability policy says so.
    fn write(&mut self, line: &Line) -> std::io::Result<()> {
        match self.record.as_mut() {
            None => self.record = Some(RecordWriter::start(&self.config.record, line)?),
            Some(record) => record.write(line)?,
        }
        let record = self.record.as_mut().expect("written above");
        let end = matches!(line, Line::Result(_));
        match self.config.durability {
            Durability::Line => record.sync(),
            Durability::Game if end => record.sync(),
            _ => Ok(()),
        }
    }

    /// Runs one handshake step on every live agent that has not failed yet (with its
    /// seat index), collecting the failures.
    fn each_agent(
        &mut self,
        failures: &mut Vec<(Seat, Failure)>,
        mut step: impl FnMut(&mut Session, usize) -> Result<(), Failure>,
    ) {
        for (i, slot) in self.sessions.iter_mut().enumerate() {
            let Some(s) = slot else { continue };
            if failures.iter().any(|(seat, _)| *seat == s.seat()) {
                continue;
            }
            if let Err(f) = step(s, i) {
                failures.push((s.seat(), f));
            }
        }
    }

    /// Records an accepted action and tells every seat what it saw.
    fn accept(
        &mut self,
        seat: Seat,
        action: String,
        played: Played,
        origin: Origin,
        timing: Option<(Duration, u64)>,
        progress: &mut dyn FnMut(Progress<'_>),
    ) -> std::io::Result<()> {
        stop_if_interrupted()?;
        let ply = self.game.plies();
        // A resumed record whose header has no time control (a controller's) keeps
        // none: the clocks still run, but verify could check no time against it.
        let recorded = timing.filter(|_| {
            self.resumed
                .as_ref()
                .is_none_or(|r| r.header.time_control.is_some())
        });
        let line = Line::Action(ActionLine {
            ply,
            seat: seat.number(),
            action,
            taken: played.taken,
            forced: origin == Origin::Forced,
            opening: origin == Origin::Opening,
            events: played.events,
            think_ms: recorded.map(|t| t.0.as_millis() as u64),
            clock_ms: recorded.map(|t| t.1),
        });
        self.write(&line)?;
        self.distribute(played.seat_events);
        let Line::Action(line) = line else {
            unreachable!("built above")
        };
        progress(Progress::Action {
            ply,
            seat,
            label: &self.labels[seat.index()],
            action: line.taken.as_deref().unwrap_or(&line.action),
            forced: origin != Origin::Agent,
            think: timing.map(|t| t.0),
        });
        Ok(())
    }

    /// Records a forfeit, stops the agent, and tells the others.
    fn forfeit(
        &mut self,
        seat: Seat,
        failure: Failure,
        action: Option<String>,
        progress: &mut dyn FnMut(Progress<'_>),
    ) -> std::io::Result<()> {
        // An agent killed because the referee is stopping did not fail.
        stop_if_interrupted()?;
        if let Some(mut s) = self.sessions[seat.index()].take() {
            self.escaped[seat.index()] += s.stop(Duration::ZERO).escaped.len();
        }
        if self.game.outcome().is_some() || self.game.is_out(seat) {
            // The game ended already (another seat's forfeit in a two-sided game), or
            // the seat is out of it: this failure changes nothing and is not recorded.
            return Ok(());
        }
        let played = self.game.forfeit(seat, failure.kind);
        self.write(&Line::Forfeit(ForfeitLine {
            seat: seat.number(),
            reason: failure.kind,
            detail: failure.detail.clone(),
            action,
            events: played.events,
        }))?;
        self.distribute(played.seat_events);
        progress(Progress::Forfeit {
            seat,
            failure: &failure,
        });
        Ok(())
    }

    /// Queues each seat's own events with its session (and nothing else).
    fn distribute(&mut self, seat_events: Vec<Vec<SeatEvent>>) {
        for (slot, events) in self.sessions.iter_mut().zip(seat_events) {
            if let Some(s) = slot {
                s.observe(events);
            }
        }
    }
}

/// The default record path: `records/<game>-<unix seconds>-<seed>.jsonl`.
pub fn default_record_path(game: GameId, seed: u64) -> PathBuf {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    Path::new("records").join(format!("{game}-{secs}-{seed}.jsonl"))
}
