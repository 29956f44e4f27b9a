//! Running a tournament: the games of a shard are played by a pool of workers, each
//! game writing its own record, and resumed from the records already there; an SPRT
//! may stop the run early. Its own room because it is the only part that starts
//! processes and threads: everything else reads records.

use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Mutex};
use std::time::Duration;

use super::definition::seat_command;
use super::engines::{Engines, Restart};
use super::results::{read_result, record_path, scan_records, GameResult};
use super::schedule::{Scheduled, Shard};
use super::stats::{Sprt, SprtState};
use super::summary::pentanomial;
use super::{io_err, Definition, TournamentError};
use crate::agent::{AgentSpec, Isolation, Limits};
use crate::clock::TimeControl;
use crate::record::Durability;
use crate::referee::{play_match_keeping, AgentCwd, MatchConfig, SeatAgent};

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
    /// When entrants' processes are started again, unless an entrant says.
    pub restart: Restart,
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
    let mut progress = Progress {
        results,
        total: mine.len(),
        sprt: def.sprt.map(Sprt::from),
        stop: &stop,
        report,
    };
    progress.check_sprt();
    play_games(def, opts, &schedule, queue, &mut progress)?;
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
        // How processes are restarted changes no game: it may differ between runs.
        if same_games(stored) != same_games(given) {
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

/// The definition without what does not change any game (entrants' `restart=`).
fn same_games(mut def: Definition) -> Definition {
    for e in &mut def.entrants {
        e.restart = None;
    }
    def
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
    Ok((results, queue))
}

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
    fn finished(&mut self, result: GameResult) {
        self.results.push(result);
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
    let (tx, rx) = mpsc::channel::<(Scheduled, Result<GameResult, TournamentError>)>();
    let workers = opts.concurrency.max(1).min(progress.total.max(1));
    let stop = progress.stop;
    std::thread::scope(|scope| -> Result<(), TournamentError> {
        for _ in 0..workers {
            let tx = tx.clone();
            let queue = &queue;
            scope.spawn(move || {
                // This worker's agents, kept from game to game (`--restart`).
                let mut engines = Engines::default();
                loop {
                    if stop.load(Ordering::SeqCst) || crate::referee::interrupted() {
                        break;
                    }
                    let Some(game) = queue.lock().expect("queue lock").pop_front() else {
                        break;
                    };
                    let outcome = play_one(def, opts, schedule, game, &mut engines);
                    if tx.send((game.clone(), outcome)).is_err() {
                        break;
                    }
                }
                engines.retire(opts.quit_grace);
            });
        }
        drop(tx);
        let mut first_error = None;
        for (game, outcome) in rx {
            match outcome {
                Ok(result) => progress.finished(result),
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

/// Plays one scheduled game, on the worker's kept agents where they serve, and reads
/// its result back from the record.
fn play_one(
    def: &Definition,
    opts: &RunOptions,
    schedule: &[Scheduled],
    game: &Scheduled,
    engines: &mut Engines,
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
    let (kept, keep) = engines.seat(def, game, opts.restart);
    let (played, kept) = play_match_keeping(&config, kept, &keep, &mut |_| {});
    engines.put_back(game, kept);
    played.map_err(|source| TournamentError::Game {
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
