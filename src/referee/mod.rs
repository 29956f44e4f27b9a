//! The match loop: start the agents, ask the seat to act for an action, check it
//! against the rules, record it, tell every seat what it saw, until the game ends.
//!
//! This file starts a match, its agents and its record, and says how it ended; the
//! loop itself runs in `table`. What a match is given, and where each agent is
//! placed, is in `config`; one agent's side of the protocol is its [`session`].
mod config;
pub mod session;
mod table;

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use crate::agent::AgentError;
use crate::clock::TimeControl;
use crate::game::{Game, Outcome, Seat, SetupError};
use crate::record::{self, Line, RecordWriter, SeatEntry};
use config::place_agent;
pub use config::{default_record_path, AgentCwd, MatchConfig, SeatAgent};
use session::{Failure, Session};
use table::Table;

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
    /// The seats whose agent failed the handshake or `newgame` (it never got ready
    /// to play), with why, seat order.
    pub unready: Vec<(Seat, String)>,
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
            for (i, entry) in replay.header.seats.iter().enumerate() {
                let recorded = entry.time_control.as_deref().unwrap_or(tc);
                let wanted = config.seat_control(i);
                if TimeControl::parse_recorded(recorded) != Ok(wanted) {
                    return Err(resume_err(format!(
                        "seat {} is played under {recorded}, not {wanted}",
                        entry.seat
                    )));
                }
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
        unready: Vec::new(),
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
        unready: {
            let mut unready = std::mem::take(&mut table.unready);
            unready.sort_by_key(|(seat, _)| seat.index());
            unready.dedup_by_key(|(seat, _)| seat.index());
            unready
        },
    })
}
