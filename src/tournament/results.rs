//! A tournament's results, read back from its records: which records a directory
//! holds, the check that a record is the game of the schedule its name says (game,
//! options, seed, time control, entrants, opening), each finished game's result, and
//! the loading and merging of (shard) directories. Its own room because statistics
//! are computed from records alone, so this is what stands between a falsified or
//! stray record and the table.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::definition::seat_command;
use super::schedule::Scheduled;
use super::{io_err, Definition, TournamentError};
use crate::game::{ForfeitKind, Options, Seat};
use crate::record::{self, Line, RecordError, Replay, SeatEntry};
use crate::referee::{MatchReport, Move};

/// The outcome of one finished game, as read back from its record.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct GameResult {
    /// Schedule index.
    pub index: usize,
    /// Entrant per seat.
    pub seats: Vec<usize>,
    /// Place per seat.
    pub places: Vec<u8>,
    /// Why the game ended.
    pub reason: String,
    /// Forfeits: (seat index, reason).
    pub forfeits: Vec<(usize, ForfeitKind)>,
    /// Plies played.
    pub plies: u32,
    /// A digest of the game move for move (entrants in their seats, start state,
    /// every action and forfeit, the places): two games with the same digest are the
    /// same game played twice.
    #[serde(default)]
    pub fingerprint: String,
}

/// Why a record in a tournament's `games/` cannot be counted as the game its name
/// says: statistics are computed from records alone, so a record that does not
/// verify, or that was played by another tournament, would silently falsify them.
#[derive(Debug, thiserror::Error)]
pub enum RecordProblem {
    /// The file cannot be read at all.
    #[error("{0}")]
    Unreadable(RecordError),
    /// The record fails verification (altered, or not a record).
    #[error("does not verify: {0}")]
    Unverified(RecordError),
    /// A record of another game.
    #[error("a record of {recorded}, not of this tournament's {expected}")]
    Game {
        /// Game in the header.
        recorded: String,
        /// The tournament's game.
        expected: String,
    },
    /// A record of the game with other options.
    #[error("a record with options {recorded}, not this tournament's {expected}")]
    Options {
        /// Options in the header.
        recorded: Options,
        /// The tournament's options.
        expected: Options,
    },
    /// A game from another start state than its opening (or the start position).
    #[error("a game from {}, not from {} as the schedule says", start_name(.recorded), start_name(.expected))]
    State {
        /// The state in the header (`None`: the start position).
        recorded: Option<String>,
        /// The game's line of the opening suite, if any.
        expected: Option<String>,
    },
    /// The record of another game of the same schedule, under the wrong name.
    #[error("the record of game {other} of the schedule, not of game {index}")]
    OtherGame {
        /// The game its name says.
        index: usize,
        /// The game its seed says.
        other: usize,
    },
    /// A seed no game of the schedule has.
    #[error("seed {recorded}, not game {index}'s seed {expected}")]
    Seed {
        /// The game its name says.
        index: usize,
        /// Seed in the header.
        recorded: u64,
        /// That game's seed.
        expected: u64,
    },
    /// Another time control.
    #[error("time control {recorded}, not this tournament's {expected}")]
    TimeControl {
        /// Time control in the header.
        recorded: String,
        /// The tournament's.
        expected: String,
    },
    /// A seat played by another command than the schedule's entrant.
    #[error("seat {seat} was played by `{recorded}`, not by {entrant} (`{expected}`) as the schedule says")]
    Seat {
        /// The seat.
        seat: Seat,
        /// Command in the header (or what stood there instead).
        recorded: String,
        /// The scheduled entrant's name.
        entrant: String,
        /// Its command.
        expected: String,
    },
    /// A seat whose header names another entrant than the schedule's.
    #[error("seat {seat} was played by entrant `{recorded}`, not by `{expected}` as the schedule says")]
    Entrant {
        /// The seat.
        seat: Seat,
        /// The entrant the header names.
        recorded: String,
        /// The scheduled entrant's name.
        expected: String,
    },
    /// A seat whose clock ran under another time control than its entrant's.
    #[error("seat {seat}'s clock ran under {recorded}, not under its entrant's {expected}")]
    SeatTimeControl {
        /// The seat.
        seat: Seat,
        /// The seat's time control in the header (the header's when it has none).
        recorded: String,
        /// The entrant's (the tournament's when it has none).
        expected: String,
    },
    /// An opening action that is not the tournament's.
    #[error("ply {ply} is marked as a random opening action, but it is not the one this tournament's opening makes there")]
    Opening {
        /// The ply.
        ply: u32,
    },
    /// A finished game whose opening was cut short.
    #[error(
        "the random opening stops before ply {ply}, where this tournament's opening makes another action"
    )]
    OpeningCut {
        /// The first ply not played by the opening.
        ply: usize,
    },
    /// A record file name that no game of the schedule has.
    #[error("not the record of a game of this tournament's schedule, which has {games} games")]
    NotScheduled {
        /// Games in the schedule.
        games: usize,
    },
    /// A record's name on something that is not a file (a pipe would hang a reader).
    #[error("not a regular file")]
    NotAFile,
}

/// How a start state is named in a problem: the state, or the start position.
fn start_name(state: &Option<String>) -> String {
    state.as_ref().map_or_else(
        || "the start position".to_string(),
        |s| format!("the state `{}`", crate::text::printable(s)),
    )
}

/// The record path of game `index`.
pub fn record_path(out: &Path, index: usize) -> PathBuf {
    out.join("games").join(format!("game-{index:05}.jsonl"))
}

/// The game index a record file name `game-NNNNN.jsonl` stands for, if it is one
/// [`record_path`] gives.
fn record_index(name: &str) -> Option<usize> {
    let digits = name.strip_prefix("game-")?.strip_suffix(".jsonl")?;
    let index: usize = digits.parse().ok()?;
    // `+7`, `007` and `7` parse alike; only the name `record_path` writes is the game's.
    (format!("{index:05}") == digits).then_some(index)
}

/// The games of `schedule` that have a record in `<dir>/games/`. Every `*.jsonl` file
/// there is taken for a record, and one whose name is not that of a game of the
/// schedule is refused rather than ignored: it was put there by hand or by another
/// tournament, and leaving it out silently would hide that. Copies moved aside
/// (`.interrupted`) and hidden files being created (`.game-….new<pid>`) are not
/// records.
pub(super) fn scan_records(dir: &Path, schedule: &[Scheduled]) -> Result<BTreeSet<usize>, TournamentError> {
    let games = dir.join("games");
    let mut found = BTreeSet::new();
    let entries = match std::fs::read_dir(&games) {
        Ok(entries) => entries,
        // A directory whose run played nothing yet has no records.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(found),
        Err(e) => return Err(io_err(&games)(e)),
    };
    for entry in entries {
        let path = entry.map_err(io_err(&games))?.path();
        if path.extension().is_none_or(|e| e != "jsonl") {
            continue;
        }
        let index = path
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(record_index)
            .filter(|&i| i < schedule.len());
        // Followed like any reader would: a link to a record is one, a FIFO is not.
        if index.is_some() && !std::fs::metadata(&path).is_ok_and(|m| m.is_file()) {
            return Err(TournamentError::Record {
                path,
                problem: RecordProblem::NotAFile,
            });
        }
        match index {
            Some(i) => {
                found.insert(i);
            }
            None => {
                return Err(TournamentError::Record {
                    path,
                    problem: RecordProblem::NotScheduled {
                        games: schedule.len(),
                    },
                })
            }
        }
    }
    Ok(found)
}

/// Whether a header's `recorded` command is the one seat `seat` of `game` runs. A
/// built-in agent's command starts with the path of the referee that played the
/// game, which differs between machines (shards, a resume after an upgrade): only
/// the words after it are compared.
fn runs_scheduled(def: &Definition, game: &Scheduled, seat: usize, recorded: &str) -> bool {
    let builtin = game
        .seats
        .get(seat)
        .and_then(|&who| def.entrants.get(who))
        .is_some_and(|e| crate::builtin::Strategy::from_agent_command(&e.cmd).is_some());
    let Ok((expected, _)) = seat_command(def, game, seat, "referee") else {
        return false;
    };
    if !builtin {
        return recorded == expected;
    }
    match (shell_words::split(recorded), shell_words::split(&expected)) {
        (Ok(got), Ok(want)) => got.len() == want.len() && got.get(1..) == want.get(1..),
        _ => false,
    }
}

/// Checks that a verified record is game `game` of the tournament `def`: its game and
/// (normalised) `options`, the start position, the game's seed, the time control,
/// the scheduled entrant in every seat, and the random `opening`.
fn check_record(
    def: &Definition,
    options: &Options,
    opening: &[String],
    schedule: &[Scheduled],
    game: &Scheduled,
    replay: &Replay,
) -> Result<(), RecordProblem> {
    let h = &replay.header;
    if h.game != def.game {
        return Err(RecordProblem::Game {
            recorded: h.game.clone(),
            expected: def.game.clone(),
        });
    }
    if h.options != *options {
        return Err(RecordProblem::Options {
            recorded: h.options.clone(),
            expected: options.clone(),
        });
    }
    let expected = def.start_state(game);
    if h.state.as_deref() != expected {
        return Err(RecordProblem::State {
            recorded: h.state.clone(),
            expected: expected.map(str::to_string),
        });
    }
    if h.seed != game.seed {
        return Err(match schedule.iter().find(|g| g.seed == h.seed) {
            Some(other) => RecordProblem::OtherGame {
                index: game.index,
                other: other.index,
            },
            None => RecordProblem::Seed {
                index: game.index,
                recorded: h.seed,
                expected: game.seed,
            },
        });
    }
    if let Some(tc) = h.time_control.as_ref().filter(|tc| **tc != def.time_control) {
        return Err(RecordProblem::TimeControl {
            recorded: tc.clone(),
            expected: def.time_control.clone(),
        });
    }
    for (i, entry) in h.seats.iter().enumerate() {
        check_seat(def, game, Seat::from_index(i), entry, h.time_control.is_some())?;
    }
    check_opening(opening, replay)
}

/// Checks that `seat`'s header entry is the scheduled entrant's: its
/// command, its name (records before entrants were named have none) and, in a timed
/// record, its own time control.
fn check_seat(
    def: &Definition,
    game: &Scheduled,
    seat: Seat,
    entry: &SeatEntry,
    timed: bool,
) -> Result<(), RecordProblem> {
    let entrant = game
        .seats
        .get(seat.index())
        .and_then(|&who| def.entrants.get(who));
    let recorded = entry.command.as_deref();
    if recorded.is_some_and(|c| runs_scheduled(def, game, seat.index(), c)) {
        let expected = entrant.map_or("", |e| e.name.as_str());
        if let Some(name) = entry.entrant.as_deref().filter(|n| *n != expected) {
            return Err(RecordProblem::Entrant {
                seat,
                recorded: name.to_string(),
                expected: expected.to_string(),
            });
        }
        // The entrant's own control is written only where it differs from the
        // tournament's, exactly as the match writes it.
        let own = entrant
            .and_then(|e| e.control().ok().flatten())
            .map(|c| c.to_string())
            .filter(|c| *c != def.time_control);
        if timed && entry.time_control != own {
            return Err(RecordProblem::SeatTimeControl {
                seat,
                recorded: entry
                    .time_control
                    .clone()
                    .unwrap_or_else(|| def.time_control.clone()),
                expected: own.unwrap_or_else(|| def.time_control.clone()),
            });
        }
        return Ok(());
    }
    Err(RecordProblem::Seat {
        seat,
        recorded: recorded.map_or_else(|| format!("no agent process ({})", entry.name), str::to_string),
        entrant: entrant.map_or_else(|| "nobody".to_string(), |e| e.name.clone()),
        expected: entrant.map_or_else(String::new, |e| e.cmd.clone()),
    })
}

/// The actions a record marks as the referee's random opening must be the
/// tournament's opening for the game (`expected`, at least one action longer than
/// the record's opening if the opening is longer), before any agent acted; a
/// finished game must have all of it, unless a forfeit during the handshake changed
/// whose turn it was (the referee then stops its opening where the game no longer
/// takes it).
fn check_opening(expected: &[String], replay: &Replay) -> Result<(), RecordProblem> {
    let (mut made, mut agents_acted, mut forfeit_first) = (0, false, false);
    for line in &replay.lines {
        match line {
            Line::Action(a) if a.opening => {
                if agents_acted || expected.get(made) != Some(&a.action) {
                    return Err(RecordProblem::Opening { ply: a.ply });
                }
                made += 1;
            }
            Line::Action(_) => agents_acted = true,
            Line::Forfeit(_) if !agents_acted => forfeit_first = true,
            _ => {}
        }
    }
    // An unfinished record may have been cut off in the middle of its opening.
    if made < expected.len() && replay.result.is_some() && !forfeit_first {
        return Err(RecordProblem::OpeningCut { ply: made + 1 });
    }
    Ok(())
}

/// Reads the record of `game` back into a result; `None` if it is unfinished. The
/// record must verify and be that game of the tournament (see [`check_record`]):
/// anything else is an error naming it, never a game counted or played again.
pub fn read_result(
    def: &Definition,
    schedule: &[Scheduled],
    path: &Path,
    game: &Scheduled,
) -> Result<Option<GameResult>, TournamentError> {
    let bad = |problem| TournamentError::Record {
        path: path.to_path_buf(),
        problem,
    };
    let replay = record::replay_file(path).map_err(|e| {
        bad(if e.is_unreadable() {
            RecordProblem::Unreadable(e)
        } else {
            RecordProblem::Unverified(e)
        })
    })?;
    let options = def
        .game_id()?
        .create(&def.options, None)
        .map_err(|e| TournamentError::Setup(e.to_string()))?
        .options();
    // Only as much of the opening as the record can be compared with (one action
    // more tells whether it was cut short): a game's opening is computed move by
    // move, and `random_plies` in a tournament.json may be anything.
    let flagged = replay
        .lines
        .iter()
        .filter(|l| matches!(l, Line::Action(a) if a.opening))
        .count();
    let opening = def.opening_upto(game, flagged.saturating_add(1))?;
    check_record(def, &options, &opening, schedule, game, &replay).map_err(bad)?;
    let Some(result) = replay.result.as_ref() else {
        return Ok(None);
    };
    // Verified and of this game: every forfeit's seat is one of its seats (from 1),
    // and there is a place for every seat.
    let forfeits = replay
        .lines
        .iter()
        .filter_map(|l| match l {
            Line::Forfeit(f) => Some((f.seat.index(), f.reason)),
            _ => None,
        })
        .collect();
    let fingerprint = fingerprint(
        game,
        replay.header.state.as_deref(),
        &Move::of_lines(&replay.lines),
        &result.places,
    );
    Ok(Some(GameResult {
        index: game.index,
        seats: game.seats.clone(),
        places: result.places.clone(),
        reason: result.reason.clone(),
        forfeits,
        plies: result.plies,
        fingerprint,
    }))
}

/// The result of `game` from the match that just played it: what [`read_result`]
/// would read back from its record, without reading it (the match wrote it and
/// reports what it wrote).
pub fn result_of_match(game: &Scheduled, report: &MatchReport) -> GameResult {
    let places = report.outcome.places.clone();
    GameResult {
        index: game.index,
        seats: game.seats.clone(),
        fingerprint: fingerprint(game, report.start_state.as_deref(), &report.moves, &places),
        places,
        reason: report.outcome.reason.to_string(),
        forfeits: report
            .moves
            .iter()
            .filter_map(|m| match m {
                Move::Forfeit { seat, reason } => Some((seat.index(), *reason)),
                Move::Action { .. } => None,
            })
            .collect(),
        plies: report.plies,
    }
}

/// The digest of a finished game move for move (see [`GameResult::fingerprint`]),
/// from the start state its header names. Clocks and thinking times are left out: a
/// bot that replays a game at another speed still replays it.
fn fingerprint(game: &Scheduled, state: Option<&str>, moves: &[Move], places: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    let mut put = |text: &str| {
        h.update(text.as_bytes());
        h.update([0]);
    };
    put(&format!("{:?}", game.seats));
    put(state.unwrap_or("startpos"));
    for m in moves {
        match m {
            Move::Action { seat, action } => put(&format!("a {seat} {action}")),
            Move::Forfeit { seat, reason } => put(&format!("f {seat} {reason:?}")),
        }
    }
    put(&format!("{places:?}"));
    h.finalize().iter().take(16).map(|b| format!("{b:02x}")).collect()
}

/// Reads the definition and finished results of one tournament directory.
pub fn load_dir(dir: &Path) -> Result<(Definition, Vec<GameResult>), TournamentError> {
    let meta = dir.join("tournament.json");
    let text = std::fs::read_to_string(&meta).map_err(io_err(&meta))?;
    let def: Definition = serde_json::from_str(&text)
        .map_err(|e| TournamentError::Setup(format!("{}: {e}", meta.display())))?;
    // Named: a schedule the file's definition cannot make is the file's fault, and
    // says `--games` where merge was given no such flag.
    let schedule = def
        .schedule()
        .map_err(|e| TournamentError::Setup(format!("{}: {e}", meta.display())))?;
    let mut results = Vec::new();
    let present = scan_records(dir, &schedule)?;
    for game in schedule.iter().filter(|g| present.contains(&g.index)) {
        if let Some(r) = read_result(&def, &schedule, &record_path(dir, game.index), game)? {
            results.push(r);
        }
    }
    Ok((def, results))
}

/// Combines shard directories of one tournament: the definitions must agree, and no
/// game may appear twice.
pub fn merge(dirs: &[PathBuf]) -> Result<(Definition, Vec<GameResult>), TournamentError> {
    let mut def: Option<Definition> = None;
    let mut all: Vec<GameResult> = Vec::new();
    for dir in dirs {
        let (d, results) = load_dir(dir)?;
        match &def {
            Some(first) if *first != d => {
                return Err(TournamentError::Setup(format!(
                    "{} belongs to a different tournament than {}",
                    dir.display(),
                    dirs[0].display()
                )))
            }
            Some(_) => {}
            None => def = Some(d),
        }
        for r in results {
            if all.iter().any(|x| x.index == r.index) {
                return Err(TournamentError::Setup(format!(
                    "game {} appears in more than one directory (overlapping shards?)",
                    r.index
                )));
            }
            all.push(r);
        }
    }
    let def = def.ok_or_else(|| TournamentError::Setup("no directories to merge".into()))?;
    all.sort_by_key(|r| r.index);
    Ok((def, all))
}
