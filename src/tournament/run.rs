//! Running a tournament: the games of a shard are played by a pool of workers, each
//! game writing its own record, and resumed from the records already there; an SPRT
//! may stop the run early. Its own room because it is the only part that starts
//! processes and threads: everything else reads records.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Mutex};
use std::time::Duration;

use super::definition::seat_command;
use super::results::{read_result, record_path, scan_records, GameResult};
use super::schedule::{Scheduled, Shard};
use super::stats::{Sprt, SprtState};
use super::summary::pentanomial;
use super::{io_err, Definition, TournamentError};
use crate::agent::{AgentSpec, Isolation, Limits};
use crate::clock::TimeControl;
use crate::record::Durability;
use crate::referee::{play_match, AgentCwd, MatchConfig, MatchError, SeatAgent};

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
    /// Where each game's transcripts and stderr go (`<dir>/game-NNNNN/`).
    pub log_dir: Option<PathBuf>,
    /// Score an entrant that never gets ready as forfeits instead of stopping.
    pub play_unready: bool,
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
    store_definition(def, opts)?;
    let mine: Vec<&Scheduled> = schedule
        .iter()
        .filter(|g| opts.shard.is_none_or(|s| s.contains(g.index)))
        .collect();
    let (results, queue) = resume(def, opts, &schedule, &mine)?;
    let stop = AtomicBool::new(false);
    let mut first = vec![FirstGames::default(); def.entrants.len()];
    for game in &queue {
        for &who in &game.seats {
            if let Some(f) = first.get_mut(who) {
                f.scheduled += 1;
            }
        }
    }
    let mut progress = Progress {
        results,
        total: mine.len(),
        sprt: def.sprt.map(Sprt::from),
        stop: &stop,
        report,
        first,
        unready_games: Vec::new(),
        failed: None,
        play_unready: opts.play_unready,
    };
    progress.check_sprt();
    play_games(def, opts, &schedule, queue, &mut progress)?;
    if let Some(e) = progress.failed.take() {
        set_aside_unready(opts, &progress, &e, def)?;
        return Err(e);
    }
    let mut results = progress.results;
    results.sort_by_key(|r| r.index);
    Ok(results)
}

/// Writes the definition to `<out>/tournament.json`, or, when one is there, checks
/// that it is the same tournament and that the run resumes it.
fn store_definition(def: &Definition, opts: &RunOptions) -> Result<(), TournamentError> {
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
    Ok(())
}

/// The results of the games of `mine` already finished in `<out>/games/`, and the
/// queue of those still to play; unfinished records are moved aside.
fn resume<'s>(
    def: &Definition,
    opts: &RunOptions,
    schedule: &[Scheduled],
    mine: &[&'s Scheduled],
) -> Result<(Vec<GameResult>, VecDeque<&'s Scheduled>), TournamentError> {
    let present = scan_records(&opts.out, schedule)?;
    let mut results: Vec<GameResult> = Vec::new();
    let mut queue = VecDeque::new();
    let mut unfinished = Vec::new();
    // Every record of the shard is read and checked before anything is moved or
    // played: one that does not belong stops the resume with the directory as it was.
    for game in mine {
        if present.contains(&game.index) {
            let path = record_path(&opts.out, game.index);
            match read_result(def, schedule, &path, game)? {
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
        set_aside(&path, "interrupted")?;
    }
    Ok((results, queue))
}

/// Moves a record to `<name>.jsonl.<why>` (or `.<why>.K`, so that a game set
/// aside again keeps every earlier copy); it is then no record of the directory, and
/// its game is played again.
fn set_aside(path: &Path, why: &str) -> Result<(), TournamentError> {
    let aside = (0..)
        .map(|k| match k {
            0 => path.with_extension(format!("jsonl.{why}")),
            k => path.with_extension(format!("jsonl.{why}.{k}")),
        })
        .find(|p| !p.exists())
        .expect("some name is free");
    std::fs::rename(path, &aside).map_err(io_err(path))
}

/// Sets aside the records of this run's games in which the entrant that stopped
/// the run never got ready (`.jsonl.unready`): they say nothing about its play,
/// and a resume once it is fixed plays them again.
fn set_aside_unready(
    opts: &RunOptions,
    progress: &Progress<'_>,
    failure: &TournamentError,
    def: &Definition,
) -> Result<(), TournamentError> {
    let TournamentError::Entrant { name, .. } = failure else {
        return Ok(());
    };
    let Some(who) = def.entrants.iter().position(|e| &e.name == name) else {
        return Ok(());
    };
    for index in progress.unready_of(who) {
        set_aside(&record_path(&opts.out, index), "unready")?;
    }
    Ok(())
}

/// The games of its own an entrant must get ready in before the run goes on: one
/// that fails the handshake (or `newgame`) in every one of its first games of a
/// run, however many it plays, stops the tournament.
pub const FIRST_GAMES: usize = 2;

/// A run while its games are played: what has finished, and whether to stop
/// starting games.
struct Progress<'r> {
    /// The results so far, resumed ones included, in the order they came.
    results: Vec<GameResult>,
    /// Games in this run.
    total: usize,
    /// The SPRT stopping rule, if any.
    sprt: Option<Sprt>,
    /// Set once no more games are to be started; the workers read it.
    stop: &'r AtomicBool,
    /// Where events go.
    report: &'r mut dyn FnMut(Event<'_>, &[GameResult]),
    /// Per entrant: its games still to play in this run when it started, and of
    /// those finished so far, how many and how many it never got ready for.
    first: Vec<FirstGames>,
    /// The games of this run in which an entrant never got ready, and which.
    unready_games: Vec<(usize, Vec<usize>)>,
    /// The entrant that stopped the run, if one did.
    failed: Option<TournamentError>,
    /// Whether an entrant that never gets ready is scored instead of stopping the run.
    play_unready: bool,
}

/// How an entrant's first games of a run went.
#[derive(Clone, Copy, Debug, Default)]
struct FirstGames {
    /// Its games in this run.
    scheduled: usize,
    /// Those finished.
    played: usize,
    /// Those it never got ready for.
    unready: usize,
}

impl Progress<'_> {
    /// Stops the run and reports the decision once the SPRT has reached one.
    fn check_sprt(&mut self) {
        if let Some(s) = &self.sprt {
            if !self.stop.load(Ordering::SeqCst) {
                if let Some(decision) = sprt_decision(s, &self.results) {
                    self.stop.store(true, Ordering::SeqCst);
                    (self.report)(Event::SprtDecided(&decision), &self.results);
                }
            }
        }
    }

    /// Counts a finished game and reports it.
    fn finished(&mut self, def: &Definition, played: Played) {
        self.check_entrants(def, &played);
        self.results.push(played.result);
        let done = self.results.len();
        (self.report)(
            Event::Finished {
                result: self.results.last().expect("just pushed"),
                done,
                total: self.total,
            },
            &self.results,
        );
        self.check_sprt();
    }

    /// Counts the game for each of its entrants' first games, and stops the run on
    /// the first entrant that got ready for none of its [`FIRST_GAMES`].
    fn check_entrants(&mut self, def: &Definition, played: &Played) {
        let unready: Vec<usize> = played.unready.iter().map(|u| u.entrant).collect();
        if !unready.is_empty() {
            self.unready_games.push((played.result.index, unready));
        }
        for &who in &played.result.seats {
            let Some(first) = self.first.get_mut(who) else {
                continue;
            };
            first.played += 1;
            let Some(u) = played.unready.iter().find(|u| u.entrant == who) else {
                continue;
            };
            first.unready += 1;
            let needed = FIRST_GAMES.min(first.scheduled);
            let stops = !self.play_unready && self.failed.is_none();
            if stops && first.unready == first.played && first.played == needed {
                self.stop.store(true, Ordering::SeqCst);
                self.failed = Some(TournamentError::Entrant {
                    name: def.entrants.get(who).map_or_else(String::new, |e| e.name.clone()),
                    why: format!("never got ready in its first {needed} game(s): {}", u.why),
                    stderr: u.stderr.clone(),
                });
            }
        }
    }

    /// The games this run played in which `entrant` never got ready.
    fn unready_of(&self, entrant: usize) -> Vec<usize> {
        self.unready_games
            .iter()
            .filter(|(_, who)| who.contains(&entrant))
            .map(|&(index, _)| index)
            .collect()
    }
}

/// Plays the games of `queue` on `opts.concurrency` workers until it is empty or the
/// run stops; the first game that could not be played at all is the error.
fn play_games(
    def: &Definition,
    opts: &RunOptions,
    schedule: &[Scheduled],
    queue: VecDeque<&Scheduled>,
    progress: &mut Progress<'_>,
) -> Result<(), TournamentError> {
    let queue = Mutex::new(queue);
    let (tx, rx) = mpsc::channel::<(Scheduled, Result<Played, TournamentError>)>();
    let workers = opts.concurrency.max(1).min(progress.total.max(1));
    let stop = progress.stop;
    std::thread::scope(|scope| -> Result<(), TournamentError> {
        for _ in 0..workers {
            let tx = tx.clone();
            let queue = &queue;
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
                Ok(played) => progress.finished(def, played),
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
    })
}

/// A game played in this run: its result, and the entrants (by index) whose agent
/// never got ready for it, with why and the end of its stderr.
pub(super) struct Played {
    /// The result, read back from the record.
    result: GameResult,
    /// Entrants that failed the handshake or `newgame`.
    unready: Vec<Unready>,
}

/// An entrant that did not get ready for a game.
#[derive(Clone, Debug)]
struct Unready {
    /// The entrant's index.
    entrant: usize,
    /// What the referee saw.
    why: String,
    /// The last lines of its stderr, one line.
    stderr: String,
}

/// The seat agents of `game`: each entrant's command, directory, options, name and
/// time control; their stderr goes to `logs` (the game's log directory).
fn seat_agents(
    def: &Definition,
    opts: &RunOptions,
    game: &Scheduled,
    logs: &Path,
) -> Result<Vec<SeatAgent>, TournamentError> {
    game.seats
        .iter()
        .enumerate()
        .map(|(seat, &who)| {
            let entrant = def
                .entrants
                .get(who)
                .ok_or_else(|| TournamentError::Setup(format!("game {}: no entrant {who}", game.index)))?;
            let command = seat_command(def, game, seat, &opts.exe).map_err(TournamentError::Setup)?;
            let mut spec = AgentSpec::new(command);
            spec.env = opts.env.clone();
            spec.limits = opts.limits;
            spec.working_dir = entrant.dir.clone();
            spec.stderr_log = Some(stderr_log(logs, seat));
            Ok(SeatAgent {
                spec,
                options: entrant.options.clone(),
                entrant: Some(entrant.name.clone()),
                control: entrant.control().map_err(TournamentError::Setup)?,
            })
        })
        .collect()
}

/// Where seat index `seat`'s stderr goes in a game's log directory (the name
/// `match --log-dir` gives it).
fn stderr_log(logs: &Path, seat: usize) -> PathBuf {
    logs.join(format!("seat{}.stderr", seat + 1))
}

/// Plays one scheduled game and reads its result back from the record. Its logs
/// go to `<--log-dir>/game-NNNNN/`, or, without `--log-dir`, only the stderr to a
/// temporary directory read if an entrant did not get ready, then removed.
fn play_one(
    def: &Definition,
    opts: &RunOptions,
    schedule: &[Scheduled],
    game: &Scheduled,
) -> Result<Played, TournamentError> {
    let logs = match &opts.log_dir {
        Some(dir) => dir.join(format!("game-{:05}", game.index)),
        None => std::env::temp_dir().join(format!("referee-{}-game-{:05}", std::process::id(), game.index)),
    };
    std::fs::create_dir_all(&logs).map_err(io_err(&logs))?;
    let outcome = play_logged(def, opts, schedule, game, &logs);
    if opts.log_dir.is_none() {
        let _ = std::fs::remove_dir_all(&logs);
    }
    outcome
}

/// [`play_one`] with its log directory made.
fn play_logged(
    def: &Definition,
    opts: &RunOptions,
    schedule: &[Scheduled],
    game: &Scheduled,
    logs: &Path,
) -> Result<Played, TournamentError> {
    let id = def.game_id()?;
    let control =
        TimeControl::parse_recorded(&def.time_control).map_err(|e| TournamentError::Setup(e.to_string()))?;
    let config = MatchConfig {
        game: id,
        options: def.options.clone(),
        state: None,
        agents: seat_agents(def, opts, game, logs)?,
        control,
        margin: opts.margin,
        startup: opts.startup,
        quit_grace: opts.quit_grace,
        seed: game.seed,
        record: record_path(&opts.out, game.index),
        log_dir: opts.log_dir.as_ref().map(|_| logs.to_path_buf()),
        resume: false,
        durability: opts.durability,
        agent_cwd: AgentCwd::Private,
        opening: def.opening(game.opening_seed)?,
        isolation: opts.isolation.clone(),
        network: opts.network,
        hidden: vec![opts.out.clone()],
    };
    let report = play_match(&config, &mut |_| {}).map_err(|source| match source {
        MatchError::Agent { seat, source } => TournamentError::Entrant {
            name: entrant_name(def, game, seat.index()),
            why: source.to_string(),
            stderr: String::new(),
        },
        source => TournamentError::Game {
            index: game.index,
            source,
        },
    })?;
    let result = read_result(def, schedule, &config.record, game)?
        .ok_or_else(|| TournamentError::Setup(format!("game {}: the record has no result", game.index)))?;
    let unready = report
        .unready
        .into_iter()
        .map(|(seat, why)| Unready {
            entrant: game.seats[seat.index()],
            why,
            stderr: stderr_tail(&stderr_log(logs, seat.index())),
        })
        .collect();
    Ok(Played { result, unready })
}

/// The name of the entrant in seat index `seat` of `game`.
fn entrant_name(def: &Definition, game: &Scheduled, seat: usize) -> String {
    game.seats
        .get(seat)
        .and_then(|&who| def.entrants.get(who))
        .map_or_else(|| format!("seat {}", seat + 1), |e| e.name.clone())
}

/// The last few lines of a stderr log as one printable line, or `(nothing)`.
fn stderr_tail(path: &Path) -> String {
    const LINES: usize = 3;
    const CHARS: usize = 400;
    let text = std::fs::read(path).unwrap_or_default();
    let text = String::from_utf8_lossy(&text);
    let lines: Vec<&str> = text.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
    let tail = lines[lines.len().saturating_sub(LINES)..].join(" | ");
    if tail.is_empty() {
        return "(nothing)".into();
    }
    let tail = crate::text::printable(&tail).to_string();
    match tail.char_indices().rev().nth(CHARS - 1) {
        Some((cut, _)) => format!("…{}", &tail[cut..]),
        None => tail,
    }
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
