//! Tournaments: many games between many bots, run concurrently, with statistics.
//!
//! The schedule is deterministic (from the seed), every game writes its own record
//! in `<out>/games/`, and all statistics are computed from those records, so an
//! interrupted tournament resumes without replaying finished games, and the shards of
//! a tournament run on several machines merge into exactly what one run gives.

pub mod entrants;
pub mod schedule;
pub mod stats;

use std::collections::{BTreeSet, VecDeque};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Mutex};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::agent::{AgentSpec, Isolation, Limits};
use crate::clock::TimeControl;
use crate::game::{ForfeitKind, GameId, Options, Turn};
use crate::record::{self, Durability, Line, RecordError, Replay};
use crate::referee::{play_match, AgentCwd, MatchConfig, MatchError, SeatAgent};
use crate::rng::Rng;
pub use entrants::Entrant;
use schedule::{Format, Scheduled, Shard};
use stats::{Pentanomial, Sprt, SprtState, Wdl};

/// What defines a tournament; stored as `<out>/tournament.json`. Runs and shards
/// with the same definition share one schedule.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Definition {
    /// Game id.
    pub game: String,
    /// Game options.
    pub options: Options,
    /// The bots.
    pub entrants: Vec<Entrant>,
    /// Round robin or gauntlet.
    pub format: Format,
    /// Games per table (a multiple of the seat count).
    pub games: usize,
    /// Times the whole schedule is repeated.
    pub rounds: usize,
    /// Seed of the schedule, the openings and the built-in agents.
    pub seed: u64,
    /// Random opening actions per game.
    pub random_plies: usize,
    /// Time control, as `--tc`/`--st` give it.
    pub time_control: String,
    /// The SPRT stopping rule, if any (two-seat games, first two entrants).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sprt: Option<SprtDef>,
}

/// The SPRT parameters as stored.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct SprtDef {
    /// Elo under H0.
    pub elo0: f64,
    /// Elo under H1.
    pub elo1: f64,
    /// False-positive rate.
    pub alpha: f64,
    /// False-negative rate.
    pub beta: f64,
}

impl From<SprtDef> for Sprt {
    fn from(d: SprtDef) -> Sprt {
        Sprt {
            elo0: d.elo0,
            elo1: d.elo1,
            alpha: d.alpha,
            beta: d.beta,
        }
    }
}

/// How one run of a tournament is carried out (not part of its definition).
#[derive(Clone, Debug)]
pub struct RunOptions {
    /// Output directory.
    pub out: PathBuf,
    /// Games played at once.
    pub concurrency: usize,
    /// Only this slice of the schedule.
    pub shard: Option<Shard>,
    /// Continue a tournament in `out`.
    pub resume: bool,
    /// Grace past the clock.
    pub margin: Duration,
    /// Handshake time.
    pub startup: Duration,
    /// Time to exit after `quit`.
    pub quit_grace: Duration,
    /// Environment for agents.
    pub env: Vec<(String, String)>,
    /// Resource limits for agents.
    pub limits: Limits,
    /// The referee executable, for `builtin:` entrants.
    pub exe: String,
    /// Record durability.
    pub durability: Durability,
    /// How agents are isolated.
    pub isolation: Isolation,
    /// Whether sandboxed agents keep the network.
    pub network: bool,
}

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
}

/// One entrant's line in the final table.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Standing {
    /// Name.
    pub name: String,
    /// Games played.
    pub games: u32,
    /// Wins, draws, losses (two-seat games) against the field.
    pub wins: u32,
    /// Draws.
    pub draws: u32,
    /// Losses.
    pub losses: u32,
    /// Score per game (two seats), or average place (more seats).
    pub score: f64,
    /// Elo against the field, with the 95% half-width (two seats).
    pub elo: Option<(f64, f64)>,
    /// Likelihood of superiority against the field (two seats).
    pub los: Option<f64>,
    /// Average place (multi-seat).
    pub average_place: f64,
    /// Weng-Lin rating and uncertainty (multi-seat).
    pub rating: Option<(f64, f64)>,
    /// Games lost on time (or a handshake timeout).
    pub timeouts: u32,
    /// Games lost by crashing.
    pub crashes: u32,
    /// Games lost by an illegal action.
    pub illegal: u32,
    /// Games lost by a protocol error.
    pub protocol: u32,
}

/// Head-to-head figures for one pair of entrants (two-seat games).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Pairing {
    /// First entrant's name.
    pub first: String,
    /// Second entrant's name.
    pub second: String,
    /// First's wins, draws, losses against the second.
    pub wdl: (u32, u32, u32),
    /// Elo of the first over the second, with the 95% half-width.
    pub elo: (f64, f64),
    /// Likelihood that the first is stronger.
    pub los: f64,
    /// Draws per game.
    pub draw_ratio: f64,
    /// Pentanomial counts of the first's game-pair totals (0, ½, 1, 1½, 2).
    pub pentanomial: [u32; 5],
}

/// The statistics of a tournament, from its finished games.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Summary {
    /// Game id and options.
    pub game: String,
    /// Seats per game.
    pub seats: usize,
    /// Games finished / scheduled (in the shards read).
    pub finished: usize,
    /// Games scheduled in total.
    pub scheduled: usize,
    /// Table, best first.
    pub standings: Vec<Standing>,
    /// Head-to-head figures (two-seat games).
    pub pairings: Vec<Pairing>,
    /// SPRT log-likelihood ratio, bounds and decision, if configured.
    pub sprt: Option<(f64, (f64, f64), String)>,
}

/// Why a tournament could not run.
#[derive(Debug, thiserror::Error)]
pub enum TournamentError {
    /// Bad definition or options.
    #[error("{0}")]
    Setup(String),
    /// The output directory.
    #[error("{}: {source}", path.display())]
    Io {
        /// Path.
        path: PathBuf,
        /// Error.
        source: std::io::Error,
    },
    /// A game could not be played at all.
    #[error("game {index}: {source}")]
    Game {
        /// Schedule index.
        index: usize,
        /// Error.
        source: MatchError,
    },
    /// A record in an output directory that cannot be counted (bad input).
    #[error("{}: {problem}", path.display())]
    Record {
        /// The record.
        path: PathBuf,
        /// What is wrong with it.
        problem: RecordProblem,
    },
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
    /// A game from a set-up position.
    #[error("a game from the set-up state `{0}`; a tournament's games start from the start position")]
    State(String),
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
        /// Seat number.
        seat: usize,
        /// Command in the header (or what stood there instead).
        recorded: String,
        /// The scheduled entrant's name.
        entrant: String,
        /// Its command.
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
}

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> TournamentError + '_ {
    move |source| TournamentError::Io {
        path: path.to_path_buf(),
        source,
    }
}

impl Definition {
    /// The game, checked.
    fn game_id(&self) -> Result<GameId, TournamentError> {
        GameId::parse(&self.game).map_err(|e| TournamentError::Setup(e.to_string()))
    }

    /// Seats per game.
    pub fn seats(&self) -> Result<usize, TournamentError> {
        let game = self
            .game_id()?
            .create(&self.options, None)
            .map_err(|e| TournamentError::Setup(e.to_string()))?;
        Ok(game.seat_count())
    }

    /// The whole schedule.
    pub fn schedule(&self) -> Result<Vec<Scheduled>, TournamentError> {
        schedule::build(
            self.format,
            self.entrants.len(),
            self.seats()?,
            self.games,
            self.rounds,
            self.seed,
        )
        .map_err(TournamentError::Setup)
    }

    /// The random opening of a game: `random_plies` correct actions from the seed.
    fn opening(&self, seed: u64) -> Result<Vec<String>, TournamentError> {
        self.opening_upto(seed, self.random_plies)
    }

    /// The first `limit` actions (at most) of the random opening from `seed`.
    fn opening_upto(&self, seed: u64, limit: usize) -> Result<Vec<String>, TournamentError> {
        let mut game = self
            .game_id()?
            .create(&self.options, None)
            .map_err(|e| TournamentError::Setup(e.to_string()))?;
        let mut rng = Rng::new(seed);
        let mut out = Vec::new();
        for _ in 0..limit.min(self.random_plies) {
            let Turn::Act { seat, .. } = game.turn() else {
                break;
            };
            let choices = game.correct_actions();
            if choices.is_empty() {
                break;
            }
            let action = choices[rng.below(choices.len())].clone();
            game.play(seat, &action)
                .map_err(|e| TournamentError::Setup(format!("opening: {e}")))?;
            out.push(action);
        }
        Ok(out)
    }
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
fn scan_records(dir: &Path, schedule: &[Scheduled]) -> Result<BTreeSet<usize>, TournamentError> {
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

/// The command seat `seat` (0-based) of `game` runs: the entrant's own, or for a
/// built-in agent the referee's `agent` subcommand through `exe` with a seed of the
/// game and seat.
fn seat_command(def: &Definition, game: &Scheduled, seat: usize, exe: &str) -> Result<String, String> {
    let entrant = game
        .seats
        .get(seat)
        .and_then(|&who| def.entrants.get(who))
        .ok_or_else(|| format!("game {}: no entrant for seat {}", game.index, seat + 1))?;
    Ok(match crate::builtin::Strategy::from_agent_command(&entrant.cmd) {
        Some(strategy) => strategy?.command_line(exe, Rng::derive(game.seed, seat as u64 + 1)),
        None => entrant.cmd.clone(),
    })
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
    let Ok(expected) = seat_command(def, game, seat, "referee") else {
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
    if let Some(state) = &h.state {
        return Err(RecordProblem::State(state.clone()));
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
    for (seat, entry) in h.seats.iter().enumerate() {
        let recorded = entry.command.as_deref();
        if recorded.is_some_and(|c| runs_scheduled(def, game, seat, c)) {
            continue;
        }
        let entrant = game.seats.get(seat).and_then(|&who| def.entrants.get(who));
        return Err(RecordProblem::Seat {
            seat: seat + 1,
            recorded: recorded.map_or_else(|| format!("no agent process ({})", entry.name), str::to_string),
            entrant: entrant.map_or_else(|| "nobody".to_string(), |e| e.name.clone()),
            expected: entrant.map_or_else(String::new, |e| e.cmd.clone()),
        });
    }
    check_opening(opening, replay)
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
    let opening = def.opening_upto(game.opening_seed, flagged.saturating_add(1))?;
    check_record(def, &options, &opening, schedule, game, &replay).map_err(bad)?;
    let Some(result) = replay.result else {
        return Ok(None);
    };
    // Verified and of this game: every forfeit's seat is one of its seats (from 1),
    // and there is a place for every seat.
    let forfeits = replay
        .lines
        .iter()
        .filter_map(|l| match l {
            Line::Forfeit(f) => Some((f.seat.saturating_sub(1), f.reason)),
            _ => None,
        })
        .collect();
    Ok(Some(GameResult {
        index: game.index,
        seats: game.seats.clone(),
        places: result.places,
        reason: result.reason,
        forfeits,
        plies: result.plies,
    }))
}

/// What a run reports as games finish.
pub enum Event<'a> {
    /// A game finished.
    Finished {
        /// Its result.
        result: &'a GameResult,
        /// Games finished so far in this run (resumed ones included).
        done: usize,
        /// Games in this run.
        total: usize,
    },
    /// The SPRT decided; no more games are started.
    SprtDecided(&'a str),
}

/// Runs (or resumes) a tournament; returns the results of every game of the shard.
pub fn run(
    def: &Definition,
    opts: &RunOptions,
    report: &mut dyn FnMut(Event<'_>, &[GameResult]),
) -> Result<Vec<GameResult>, TournamentError> {
    let schedule = def.schedule()?;
    let games_dir = opts.out.join("games");
    std::fs::create_dir_all(&games_dir).map_err(io_err(&games_dir))?;
    let meta = opts.out.join("tournament.json");
    if meta.exists() {
        let text = std::fs::read_to_string(&meta).map_err(io_err(&meta))?;
        let stored: Definition = serde_json::from_str(&text)
            .map_err(|e| TournamentError::Setup(format!("{}: {e}", meta.display())))?;
        if !opts.resume {
            return Err(TournamentError::Setup(format!(
                "{} already holds a tournament; use --resume to continue it or another --out",
                opts.out.display()
            )));
        }
        // Compared as stored: the file keeps entrant options sorted by name, so the
        // definition as given must make the same round trip.
        // A definition that does not survive the trip (a value JSON cannot hold) is
        // refused, not a panic.
        let given: Definition = serde_json::to_string(def)
            .and_then(|text| serde_json::from_str(&text))
            .map_err(|e| TournamentError::Setup(format!("the tournament cannot be stored as JSON: {e}")))?;
        if stored != given {
            return Err(TournamentError::Setup(format!(
                "{} holds a different tournament (game, entrants, schedule or seed differ)",
                opts.out.display()
            )));
        }
    } else {
        let text = serde_json::to_string_pretty(def)
            .map_err(|e| TournamentError::Setup(format!("the tournament cannot be stored as JSON: {e}")))?;
        std::fs::write(&meta, text + "\n").map_err(io_err(&meta))?;
    }
    let mine: Vec<&Scheduled> = schedule
        .iter()
        .filter(|g| opts.shard.is_none_or(|s| s.contains(g.index)))
        .collect();
    let present = scan_records(&opts.out, &schedule)?;
    let mut results: Vec<GameResult> = Vec::new();
    let mut queue = VecDeque::new();
    let mut unfinished = Vec::new();
    // Every record of the shard is read and checked before anything is moved or
    // played: one that does not belong stops the resume with the directory as it was.
    for game in &mine {
        if present.contains(&game.index) {
            let path = record_path(&opts.out, game.index);
            match read_result(def, &schedule, &path, game)? {
                Some(r) => {
                    results.push(r);
                    continue;
                }
                None => unfinished.push(path),
            }
        }
        queue.push_back(*game);
    }
    // Unfinished: kept aside, never deleted, and played again.
    for path in unfinished {
        // A game interrupted again keeps every earlier copy too.
        let aside = (0..)
            .map(|k| match k {
                0 => path.with_extension("jsonl.interrupted"),
                k => path.with_extension(format!("jsonl.interrupted.{k}")),
            })
            .find(|p| !p.exists())
            .expect("some name is free");
        std::fs::rename(&path, &aside).map_err(io_err(&path))?;
    }
    let total = mine.len();
    let sprt: Option<Sprt> = def.sprt.map(Sprt::from);
    let stop = AtomicBool::new(false);
    if let Some(s) = &sprt {
        if let Some(decision) = sprt_decision(s, &results) {
            stop.store(true, Ordering::SeqCst);
            report(Event::SprtDecided(&decision), &results);
        }
    }
    let queue = Mutex::new(queue);
    let (tx, rx) = mpsc::channel::<(Scheduled, Result<GameResult, TournamentError>)>();
    let workers = opts.concurrency.max(1).min(total.max(1));
    std::thread::scope(|scope| -> Result<(), TournamentError> {
        for _ in 0..workers {
            let tx = tx.clone();
            let (queue, stop, schedule) = (&queue, &stop, &schedule);
            scope.spawn(move || loop {
                if stop.load(Ordering::SeqCst) || crate::referee::interrupted() {
                    break;
                }
                let Some(game) = queue.lock().expect("queue lock").pop_front() else {
                    break;
                };
                let outcome = play_one(def, opts, schedule, game);
                if tx.send((game.clone(), outcome)).is_err() {
                    break;
                }
            });
        }
        drop(tx);
        let mut first_error = None;
        for (game, outcome) in rx {
            match outcome {
                Ok(result) => {
                    results.push(result);
                    let done = results.len();
                    report(
                        Event::Finished {
                            result: results.last().expect("just pushed"),
                            done,
                            total,
                        },
                        &results,
                    );
                    if let Some(s) = &sprt {
                        if !stop.load(Ordering::SeqCst) {
                            if let Some(decision) = sprt_decision(s, &results) {
                                stop.store(true, Ordering::SeqCst);
                                report(Event::SprtDecided(&decision), &results);
                            }
                        }
                    }
                }
                Err(e) => {
                    // A game that cannot even start (an entrant's command is wrong)
                    // would fail every time: stop scheduling and say so.
                    stop.store(true, Ordering::SeqCst);
                    first_error.get_or_insert((game.index, e));
                }
            }
        }
        match first_error {
            Some((_, e)) => Err(e),
            None => Ok(()),
        }
    })?;
    results.sort_by_key(|r| r.index);
    Ok(results)
}

/// Plays one scheduled game and reads its result back from the record.
fn play_one(
    def: &Definition,
    opts: &RunOptions,
    schedule: &[Scheduled],
    game: &Scheduled,
) -> Result<GameResult, TournamentError> {
    let id = def.game_id()?;
    let agents =
        game.seats
            .iter()
            .enumerate()
            .map(|(seat, &who)| {
                let entrant = def.entrants.get(who).ok_or_else(|| {
                    TournamentError::Setup(format!("game {}: no entrant {who}", game.index))
                })?;
                let command = seat_command(def, game, seat, &opts.exe).map_err(TournamentError::Setup)?;
                let mut spec = AgentSpec::new(command);
                spec.env = opts.env.clone();
                spec.limits = opts.limits;
                spec.working_dir = entrant.dir.clone();
                Ok(SeatAgent {
                    spec,
                    options: entrant.options.clone(),
                })
            })
            .collect::<Result<_, TournamentError>>()?;
    let control =
        TimeControl::parse_recorded(&def.time_control).map_err(|e| TournamentError::Setup(e.to_string()))?;
    let config = MatchConfig {
        game: id,
        options: def.options.clone(),
        state: None,
        agents,
        control,
        margin: opts.margin,
        startup: opts.startup,
        quit_grace: opts.quit_grace,
        seed: game.seed,
        record: record_path(&opts.out, game.index),
        log_dir: None,
        resume: false,
        durability: opts.durability,
        agent_cwd: AgentCwd::Private,
        opening: def.opening(game.opening_seed)?,
        isolation: opts.isolation.clone(),
        network: opts.network,
        hidden: vec![opts.out.clone()],
    };
    play_match(&config, &mut |_| {}).map_err(|source| TournamentError::Game {
        index: game.index,
        source,
    })?;
    read_result(def, schedule, &config.record, game)?
        .ok_or_else(|| TournamentError::Setup(format!("game {}: the record has no result", game.index)))
}

/// The SPRT decision between the first two entrants, if it has been reached.
fn sprt_decision(sprt: &Sprt, results: &[GameResult]) -> Option<String> {
    let p = pentanomial(results, 0, 1);
    match sprt.state(&p) {
        SprtState::Continue => None,
        SprtState::AcceptH0 => Some(format!("H0 accepted (LLR {:.2})", sprt.llr(&p))),
        SprtState::AcceptH1 => Some(format!("H1 accepted (LLR {:.2})", sprt.llr(&p))),
    }
}

/// `a`'s score in a two-seat game against `b`, if they were its two seats.
fn score(r: &GameResult, a: usize, b: usize) -> Option<f64> {
    let (sa, sb) = (
        r.seats.iter().position(|&w| w == a)?,
        r.seats.iter().position(|&w| w == b)?,
    );
    Some(match r.places[sa].cmp(&r.places[sb]) {
        std::cmp::Ordering::Less => 1.0,
        std::cmp::Ordering::Equal => 0.5,
        std::cmp::Ordering::Greater => 0.0,
    })
}

/// Pentanomial counts of `a` against `b` over complete colour-swapped pairs (the two
/// games of a pair are consecutive schedule indices 2k, 2k+1 of one table).
fn pentanomial(results: &[GameResult], a: usize, b: usize) -> Pentanomial {
    let mut by_index: Vec<&GameResult> = results.iter().filter(|r| score(r, a, b).is_some()).collect();
    by_index.sort_by_key(|r| r.index);
    let mut p = Pentanomial::default();
    for w in by_index.windows(2) {
        if w[0].index % 2 == 0 && w[1].index == w[0].index + 1 {
            p.add(score(w[0], a, b).unwrap_or(0.0) + score(w[1], a, b).unwrap_or(0.0));
        }
    }
    p
}

/// Computes the table from finished games (in index order, so a merged set of shards
/// gives exactly the figures of one run).
pub fn summarize(def: &Definition, results: &[GameResult]) -> Result<Summary, TournamentError> {
    let seats = def.seats()?;
    let scheduled = def.schedule()?.len();
    let mut results: Vec<GameResult> = results.to_vec();
    results.sort_by_key(|r| r.index);
    let n = def.entrants.len();
    let mut standings: Vec<Standing> = def
        .entrants
        .iter()
        .map(|e| Standing {
            name: e.name.clone(),
            games: 0,
            wins: 0,
            draws: 0,
            losses: 0,
            score: 0.0,
            elo: None,
            los: None,
            average_place: 0.0,
            rating: None,
            timeouts: 0,
            crashes: 0,
            illegal: 0,
            protocol: 0,
        })
        .collect();
    let mut place_sum = vec![0u64; n];
    for r in &results {
        for (seat, &who) in r.seats.iter().enumerate() {
            let s = &mut standings[who];
            s.games += 1;
            place_sum[who] += r.places[seat] as u64;
            if seats == 2 {
                let other = r.places[1 - seat];
                match r.places[seat].cmp(&other) {
                    std::cmp::Ordering::Less => s.wins += 1,
                    std::cmp::Ordering::Equal => s.draws += 1,
                    std::cmp::Ordering::Greater => s.losses += 1,
                }
            }
        }
        for &(seat, kind) in &r.forfeits {
            let s = &mut standings[r.seats[seat]];
            match kind {
                ForfeitKind::Timeout => s.timeouts += 1,
                ForfeitKind::Crash => s.crashes += 1,
                ForfeitKind::Illegal => s.illegal += 1,
                ForfeitKind::Protocol => s.protocol += 1,
                ForfeitKind::Resign => {}
            }
        }
    }
    let ratings = (seats > 2).then(|| {
        let games: Vec<Vec<(usize, u8)>> = results
            .iter()
            .map(|r| r.seats.iter().zip(&r.places).map(|(&w, &p)| (w, p)).collect())
            .collect();
        stats::weng_lin(n, &games)
    });
    for (i, s) in standings.iter_mut().enumerate() {
        if s.games == 0 {
            continue;
        }
        s.average_place = place_sum[i] as f64 / s.games as f64;
        if seats == 2 {
            let wdl = Wdl {
                wins: s.wins,
                draws: s.draws,
                losses: s.losses,
            };
            s.score = wdl.score();
            s.elo = Some(wdl.elo());
            s.los = Some(wdl.los());
        } else {
            s.score = s.average_place;
            s.rating = ratings.as_ref().map(|r| r[i]);
        }
    }
    let mut pairings = Vec::new();
    if seats == 2 {
        for a in 0..n {
            for b in a + 1..n {
                let mut wdl = Wdl::default();
                for r in &results {
                    match score(r, a, b) {
                        Some(1.0) => wdl.wins += 1,
                        Some(0.5) => wdl.draws += 1,
                        Some(_) => wdl.losses += 1,
                        None => {}
                    }
                }
                if wdl.games() == 0 {
                    continue;
                }
                pairings.push(Pairing {
                    first: def.entrants[a].name.clone(),
                    second: def.entrants[b].name.clone(),
                    wdl: (wdl.wins, wdl.draws, wdl.losses),
                    elo: wdl.elo(),
                    los: wdl.los(),
                    draw_ratio: wdl.draw_ratio(),
                    pentanomial: pentanomial(&results, a, b).0,
                });
            }
        }
    }
    let sprt = def.sprt.map(|d| {
        let s = Sprt::from(d);
        let p = pentanomial(&results, 0, 1);
        let state = match s.state(&p) {
            SprtState::Continue => "continue",
            SprtState::AcceptH0 => "H0 accepted",
            SprtState::AcceptH1 => "H1 accepted",
        };
        (s.llr(&p), s.bounds(), state.to_string())
    });
    // Best first: score for two seats, average place (lower is better) otherwise.
    standings.sort_by(|x, y| {
        let key = |s: &Standing| if seats == 2 { -s.score } else { s.average_place };
        key(x).partial_cmp(&key(y)).unwrap_or(std::cmp::Ordering::Equal)
    });
    Ok(Summary {
        game: format!("{} {}", def.game, def.options),
        seats,
        finished: results.len(),
        scheduled,
        standings,
        pairings,
        sprt,
    })
}

impl Summary {
    /// The final table as text.
    pub fn table(&self) -> String {
        let mut t = String::new();
        let _ = writeln!(t, "{}: {} of {} games", self.game, self.finished, self.scheduled);
        let two = self.seats == 2;
        if two {
            let _ = writeln!(
                t,
                "{:<3} {:<20} {:>6} {:>6} {:>6} {:>6} {:>7} {:>16} {:>6} {:>5} {:>5}",
                "#", "name", "games", "wins", "draws", "losses", "score", "elo (95%)", "los", "time", "crash"
            );
        } else {
            let _ = writeln!(
                t,
                "{:<3} {:<20} {:>6} {:>10} {:>16} {:>5} {:>5}",
                "#", "name", "games", "avg place", "rating (±)", "time", "crash"
            );
        }
        for (i, s) in self.standings.iter().enumerate() {
            if two {
                let elo = s.elo.map_or("-".to_string(), |(e, h)| fmt_elo(e, h));
                let los = s.los.map_or("-".to_string(), |l| format!("{:.1}%", l * 100.0));
                let _ = writeln!(
                    t,
                    "{:<3} {:<20} {:>6} {:>6} {:>6} {:>6} {:>6.1}% {:>16} {:>6} {:>5} {:>5}",
                    i + 1,
                    s.name,
                    s.games,
                    s.wins,
                    s.draws,
                    s.losses,
                    s.score * 100.0,
                    elo,
                    los,
                    s.timeouts,
                    s.crashes
                );
            } else {
                let rating = s
                    .rating
                    .map_or("-".to_string(), |(r, u)| format!("{r:.1} ± {u:.1}"));
                let _ = writeln!(
                    t,
                    "{:<3} {:<20} {:>6} {:>10.2} {:>16} {:>5} {:>5}",
                    i + 1,
                    s.name,
                    s.games,
                    s.average_place,
                    rating,
                    s.timeouts,
                    s.crashes
                );
            }
        }
        for p in &self.pairings {
            let _ = writeln!(
                t,
                "{} vs {}: +{} ={} -{}  elo {}  los {:.1}%  draws {:.1}%  pentanomial [{}]",
                p.first,
                p.second,
                p.wdl.0,
                p.wdl.1,
                p.wdl.2,
                fmt_elo(p.elo.0, p.elo.1),
                p.los * 100.0,
                p.draw_ratio * 100.0,
                p.pentanomial
                    .iter()
                    .map(u32::to_string)
                    .collect::<Vec<_>>()
                    .join(" ")
            );
        }
        if let Some((llr, (lo, hi), state)) = &self.sprt {
            let _ = writeln!(t, "SPRT: LLR {llr:.2} ({lo:.2}, {hi:.2}) {state}");
        }
        t
    }
}

/// `+123.4 ± 56.7`, or `±inf` when the score is 0 or 1.
fn fmt_elo(elo: f64, half: f64) -> String {
    if elo.is_finite() && half.is_finite() {
        format!("{elo:+.1} ± {half:.1}")
    } else if elo.is_finite() {
        format!("{elo:+.1} ± inf")
    } else {
        format!("{}inf", if elo > 0.0 { "+" } else { "-" })
    }
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
