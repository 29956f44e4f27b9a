//! One match: start the agents, ask the seat to act for an action, check it against
//! the rules, record it, tell every seat what it saw, until the game ends.
//!
//! This file starts a match, its agents and its record, and says how it ended; the
//! loop itself runs in `match_loop`. What a match is given, and where each agent is
//! placed, is in `config`; one agent's side of the protocol is its [`session`].
mod config;
mod match_loop;
mod reuse;
mod scratch;
pub mod session;

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use crate::agent::AgentError;
use crate::clock::TimeControl;
use crate::game::{ForfeitKind, Game, Outcome, Seat, SetupError};
use crate::record::{self, Line, RecordWriter, SeatEntry};
pub use config::{default_record_path, AgentCwd, MatchConfig, SeatAgent};
use match_loop::Match;
pub use reuse::KeptAgent;
use reuse::Place;
pub use scratch::release_private_dirs;
use session::{AgentSession, Forfeit};

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
        forfeit: &'a Forfeit,
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
    /// Process groups of the agents (all gone by now, but those kept).
    pub process_groups: Vec<i32>,
    /// The seats whose agent failed the handshake or `newgame` (it never got ready
    /// to play), with why, seat order.
    pub unready: Vec<(Seat, String)>,
    /// The start state the header names (`None`: the game's own).
    pub start_state: Option<String>,
    /// Every action and forfeit of the record, in order (a resumed game's earlier ones
    /// included).
    pub moves: Vec<Move>,
}

/// One action or forfeit of a match, as its record has it: a tournament counts a game
/// from these without reading the record back.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Move {
    /// An accepted action (`action` as the agent or the opening gave it).
    Action {
        /// The seat that acted.
        seat: Seat,
        /// The action.
        action: String,
    },
    /// A recorded forfeit.
    Forfeit {
        /// The seat.
        seat: Seat,
        /// Why.
        reason: ForfeitKind,
    },
}

impl Move {
    /// The moves of a record's lines, in order.
    pub fn of_lines(lines: &[Line]) -> Vec<Move> {
        lines
            .iter()
            .filter_map(|line| match line {
                Line::Action(a) => Some(Move::Action {
                    seat: a.seat,
                    action: a.action.clone(),
                }),
                Line::Forfeit(f) => Some(Move::Forfeit {
                    seat: f.seat,
                    reason: f.reason,
                }),
                _ => None,
            })
            .collect()
    }
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
    play_match_keeping(config, Vec::new(), &[], progress).0
}

/// Plays one match like [`play_match`], on the agents of `kept` (by seat) where they
/// may serve (the same command and spec, or a built-in agent's but for its seed, which
/// it is then told; a sandbox hiding all this match hides, no log directory, not a
/// resume; protocol.md §1.3), fresh ones elsewhere. Hands back,
/// by seat, the agent of every seat `keep` marks whose game ended without its
/// forfeit, told `gameover` but not `quit`; the others are stopped as usual.
pub fn play_match_keeping(
    config: &MatchConfig,
    kept: Vec<Option<KeptAgent>>,
    keep: &[bool],
    progress: &mut dyn FnMut(Progress<'_>),
) -> (Result<MatchReport, MatchError>, Vec<Option<KeptAgent>>) {
    let mut handed_back = Vec::new();
    let result = prepare_and_play(config, kept, keep, &mut handed_back, progress);
    (result, handed_back)
}

/// The match of [`play_match_keeping`]: its game set up (or resumed), then played.
fn prepare_and_play(
    config: &MatchConfig,
    kept: Vec<Option<KeptAgent>>,
    keep: &[bool],
    handed_back: &mut Vec<Option<KeptAgent>>,
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
    let gone: Vec<Seat> = resumed
        .iter()
        .flat_map(|r| &r.lines)
        .filter_map(|l| match l {
            Line::Forfeit(f) => Some(f.seat),
            _ => None,
        })
        .collect();
    let seating = SeatPlan {
        gone,
        keep: (0..seats)
            .map(|i| keep.get(i).copied().unwrap_or(false))
            .collect(),
    };
    start_and_play(config, game, resumed, &seating, kept, handed_back, progress)
}

/// Which seats of a match have no agent (they forfeited before a resume) and which
/// seats' agents are kept afterwards.
struct SeatPlan {
    gone: Vec<Seat>,
    keep: Vec<bool>,
}

/// By seat: the agent's session, where it runs, and whether it is a kept one.
type SeatedAgents = (Vec<Option<AgentSession>>, Vec<Option<Place>>, Vec<bool>);

/// Every seat's agent, fresh or kept, and where it runs; the kept ones renewed for
/// this game, and those that fail that started fresh once. Marks the seats whose
/// agent is a kept one.
fn seat_agents(
    config: &MatchConfig,
    game: &dyn Game,
    seating: &SeatPlan,
    kept: Vec<Option<KeptAgent>>,
) -> Result<SeatedAgents, MatchError> {
    let mut kept = kept.into_iter();
    // Places before sessions: on an error the sessions (processes) go first.
    let (mut places, mut sessions, mut reused) = (Vec::new(), Vec::new(), Vec::new());
    for (i, agent) in config.agents.iter().enumerate() {
        let seat = Seat::from_index(i);
        // An agent that cannot serve here is dropped, which stops it.
        let offered = kept.next().flatten();
        if seating.gone.contains(&seat) {
            sessions.push(None);
            places.push(None);
            reused.push(false);
            continue;
        }
        let (session, place, again) = match offered.and_then(|k| reuse::fitting(k, agent, config, seat)) {
            Some((session, place)) => (session, place, true),
            None => {
                let (session, place) = reuse::start_fresh(config, agent, seat)?;
                (session, place, false)
            }
        };
        sessions.push(Some(session));
        places.push(Some(place));
        reused.push(again);
    }
    let options = game.options();
    let renewal = (config.game, game.seat_count(), &options);
    for (seat, _) in reuse::renew(config, &mut sessions, &mut places, &reused, renewal) {
        // Restarted once: a fresh agent that fails too forfeits, as any would.
        let i = seat.index();
        sessions[i] = None;
        places[i] = None;
        let (session, place) = reuse::start_fresh(config, &config.agents[i], seat)?;
        (sessions[i], places[i], reused[i]) = (Some(session), Some(place), false);
    }
    Ok((sessions, places, reused))
}

/// Starts (or renews) the agents and plays; the agents of the seats to keep that
/// ended the game in good standing go to `handed_back`.
fn start_and_play(
    config: &MatchConfig,
    game: Box<dyn Game>,
    resumed: Option<record::Replay>,
    seating: &SeatPlan,
    kept: Vec<Option<KeptAgent>>,
    handed_back: &mut Vec<Option<KeptAgent>>,
    progress: &mut dyn FnMut(Progress<'_>),
) -> Result<MatchReport, MatchError> {
    let (sessions, mut places, reused) = seat_agents(config, game.as_ref(), seating, kept)?;
    let record_err = |source| MatchError::Record {
        path: config.record.clone(),
        source,
    };
    let record = match &resumed {
        Some(replay) => Some(RecordWriter::append(&config.record, replay).map_err(record_err)?),
        None => None,
    };
    let labels = Seat::all(game.seat_count()).map(|s| game.seat_label(s)).collect();
    let start_state = match &resumed {
        Some(replay) => replay.header.state.clone(),
        None => config.state.clone(),
    };
    let moves = resumed
        .as_ref()
        .map_or_else(Vec::new, |r| Move::of_lines(&r.lines));
    let mut running = Match {
        config,
        moves,
        labels,
        escaped: vec![0; game.seat_count()],
        game,
        sessions,
        record,
        resumed,
        reused,
        keep: seating.keep.clone(),
        unready: Vec::new(),
    };
    let process_groups = running
        .sessions
        .iter()
        .flatten()
        .map(AgentSession::process_group)
        .collect();
    let result = running.run(progress).map_err(|e| match e.kind() {
        std::io::ErrorKind::Interrupted if interrupted() => MatchError::Interrupted(config.record.clone()),
        _ => record_err(e),
    });
    // Whatever happened, no agent outlives the match but those kept after a game
    // that went well. What stopping finds is recorded only when the match went well,
    // and then every agent not kept has been stopped already.
    for (i, slot) in running.sessions.iter_mut().enumerate() {
        let Some(mut s) = slot.take() else {
            handed_back.push(None);
            continue;
        };
        match places[i].take() {
            Some(place) if result.is_ok() && seating.keep[i] => handed_back.push(Some(reuse::keep(s, place))),
            place => {
                let _ = s.stop(Duration::ZERO);
                drop(place);
                handed_back.push(None);
            }
        }
    }
    let seats = result?;
    Ok(MatchReport {
        outcome: running.game.outcome().expect("the loop ends with the game"),
        plies: running.game.plies(),
        seats,
        record: config.record.clone(),
        process_groups,
        unready: {
            let mut unready = std::mem::take(&mut running.unready);
            unready.sort_by_key(|(seat, _)| seat.index());
            unready.dedup_by_key(|(seat, _)| seat.index());
            unready
        },
        start_state,
        moves: std::mem::take(&mut running.moves),
    })
}
