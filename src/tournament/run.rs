//! Running a tournament: the games of a shard are played by a pool of workers, each
//! game writing its own record, and resumed from the records already there; an SPRT
//! may stop the run early. Its own room because it is the only part that starts
//! threads; `game` plays one game on them and `tally` counts what they finish.
//!
//! The main thread hands out the games one at a time, in schedule order, and decides
//! before each new seating cycle whether to start it: so at concurrency 1 a run
//! stops after the same game every time, and once the SPRT has decided, only the
//! games of cycles already begun are played (no half pair is left behind).

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::{mpsc, Mutex};
use std::time::Duration;

use super::engines::{Engines, Restart};
use super::game::{play_one, GamePlayed};
use super::results::{read_result, record_path, scan_records, GameResult, RecordProblem};
use super::schedule::{Scheduled, Shard};
use super::shared::{check_definition, SharedDir};
use super::stats::Sprt;
use super::tally::{FirstGames, LiveSummary, Tally};
use super::{io_err, Definition, TournamentError};
use crate::agent::{affinity, Isolation, Limits};
use crate::record::{Durability, RecordError, SecretKey};

/// How one run of a tournament is carried out (not part of its definition).
#[derive(Clone, Debug)]
pub struct RunOptions {
    /// Output directory.
    pub out: PathBuf,
    /// Games played at once.
    pub concurrency: usize,
    /// Each worker, and the agents it starts, pinned to a CPU of its own
    /// (`--affinity`; round robin when games outnumber CPUs).
    pub affinity: bool,
    /// Only this slice of the schedule.
    pub shard: Option<Shard>,
    /// A directory shared by the shards for a global SPRT (`--shared`).
    pub shared: Option<PathBuf>,
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
    /// Where each game's transcripts and stderr go (`<dir>/game-NNNNN/`).
    pub log_dir: Option<PathBuf>,
    /// Score an entrant that never gets ready as forfeits instead of stopping.
    pub play_unready: bool,
    /// The judge's key, signing every game's record.
    pub sign: Option<SecretKey>,
    /// What agents may not see besides the output (see `MatchConfig::hidden`).
    pub hidden: Vec<crate::agent::HiddenPath>,
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
    /// The SPRT decided; no new seating cycle is started.
    SprtDecided(&'a str),
}

/// Runs (or resumes) a tournament; returns the results of every game of the shard.
pub fn run(
    def: &Definition,
    opts: &RunOptions,
    report: &mut dyn FnMut(Event<'_>, &[GameResult]),
) -> Result<Vec<GameResult>, TournamentError> {
    let schedule = def.schedule()?;
    if let Some(dir) = &opts.shared {
        if def.sprt.is_none() {
            return Err(TournamentError::Setup(format!(
                "--shared {}: a shared directory is for a global --sprt, and this tournament has none",
                dir.display()
            )));
        }
        check_definition(dir, def)?;
    }
    let games_dir = opts.out.join("games");
    std::fs::create_dir_all(&games_dir).map_err(io_err(&games_dir))?;
    store_definition(def, opts)?;
    let mine: Vec<&Scheduled> = schedule
        .iter()
        .filter(|g| opts.shard.is_none_or(|s| s.contains(g)))
        .collect();
    let shared = match &opts.shared {
        Some(dir) => {
            let shard = opts.shard.unwrap_or(Shard { index: 0, count: 1 });
            Some(SharedDir::open(dir, def, shard, &schedule)?)
        }
        None => None,
    };
    let (results, queue) = resume(def, opts, &schedule, &mine)?;
    let mut first = vec![FirstGames::default(); def.entrants.len()];
    for game in &queue {
        for &who in &game.seats {
            if let Some(f) = first.get_mut(who) {
                f.scheduled += 1;
            }
        }
    }
    let mut tally = Tally {
        results: Vec::new(),
        partial: BTreeMap::new(),
        schedule: &schedule,
        total: mine.len(),
        sprt: def.sprt.map(Sprt::from),
        shared,
        stopped: false,
        played: 0,
        report,
        live: LiveSummary {
            def,
            out: &opts.out,
            seats: def.seats()?,
            scheduled: schedule.len(),
            written: None,
        },
        first,
        unready_games: Vec::new(),
        failed: None,
        play_unready: opts.play_unready,
    };
    // Resumed cycles a shard finished but died before sharing are shared now.
    for r in results {
        tally.count(r)?;
    }
    play_games(def, opts, queue, &mut tally)?;
    if let Some(e) = tally.failed.take() {
        set_aside_unready(opts, &tally, &e, def)?;
        return Err(e);
    }
    // Always the final figures, whatever the throttle skipped.
    tally.live.write(&tally.results)?;
    let mut results = tally.results;
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
        if !stored.plays_same_games(&def.stored_form()?) {
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
            if !holds_a_line(&path)? {
                unfinished.push(path);
                queue.push_back(*game);
                continue;
            }
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

/// Whether the record at `path` holds a whole line. With `--fsync game` a record is
/// forced to the disk once its game is decided, so after an operating-system crash
/// the record of a game then in progress may be empty, or hold only part of its
/// header: nothing of it was played for good, and its game is played again.
fn holds_a_line(path: &Path) -> Result<bool, TournamentError> {
    use std::io::BufRead;
    let mut first = Vec::new();
    let read = std::fs::File::open(path)
        .and_then(|file| std::io::BufReader::new(file).read_until(b'\n', &mut first));
    // Unreadable as `read_result` would say it.
    read.map_err(|e| TournamentError::Record {
        path: path.to_path_buf(),
        problem: RecordProblem::Unreadable(RecordError {
            line: 0,
            message: e.to_string(),
        }),
    })?;
    Ok(first.ends_with(b"\n"))
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
    tally: &Tally<'_>,
    failure: &TournamentError,
    def: &Definition,
) -> Result<(), TournamentError> {
    let TournamentError::Entrant { name, .. } = failure else {
        return Ok(());
    };
    let Some(who) = def.entrants.iter().position(|e| &e.name == name) else {
        return Ok(());
    };
    for index in tally.unready_of(who) {
        set_aside(&record_path(&opts.out, index), "unready")?;
    }
    Ok(())
}

/// The games still to play, handed out in schedule order.
struct Dispatch<'s> {
    /// Games not yet handed out.
    queue: VecDeque<&'s Scheduled>,
    /// Seating cycles of which this run has handed out a game.
    begun: BTreeSet<usize>,
}

impl<'s> Dispatch<'s> {
    /// The next game to play, if any: a game of a cycle already begun always; the
    /// first game of a new cycle only if the SPRT has not decided.
    fn next(&mut self, tally: &mut Tally<'_>) -> Result<Option<&'s Scheduled>, TournamentError> {
        let Some(&game) = self.queue.front() else {
            return Ok(None);
        };
        if !self.begun.contains(&game.cycle) {
            if tally.sprt_decided()? {
                return Ok(None);
            }
            self.begun.insert(game.cycle);
        }
        Ok(self.queue.pop_front())
    }
}

/// Plays the games of `queue` on `opts.concurrency` workers until it is empty or the
/// run stops; the first game that could not be played at all is the error.
fn play_games(
    def: &Definition,
    opts: &RunOptions,
    queue: VecDeque<&Scheduled>,
    tally: &mut Tally<'_>,
) -> Result<(), TournamentError> {
    let workers = opts.concurrency.max(1).min(queue.len().max(1));
    let mut dispatch = Dispatch {
        queue,
        begun: BTreeSet::new(),
    };
    let (job_tx, job_rx) = mpsc::channel::<&Scheduled>();
    let job_rx = Mutex::new(job_rx);
    // Counted before any worker pins itself: the spin's bound is the process's
    // CPUs, not the one CPU of the first pinned thread that happens to ask.
    crate::agent::available_cpus();
    let cpus = if opts.affinity {
        affinity::allowed_cpus()
    } else {
        Vec::new()
    };
    if opts.affinity && cpus.is_empty() {
        eprintln!("referee: --affinity: this system does not say which CPUs the referee may use; the games run unpinned");
    }
    std::thread::scope(|scope| -> Result<(), TournamentError> {
        // Owned here: dropped when this returns, which lets the workers end.
        let job_tx = job_tx;
        let (tx, rx) = mpsc::channel::<(usize, Result<GamePlayed, TournamentError>)>();
        for worker in 0..workers {
            let (tx, job_rx) = (tx.clone(), &job_rx);
            let cpu = (!cpus.is_empty()).then(|| cpus[worker % cpus.len()]);
            scope.spawn(move || {
                // Before any agent is started: they inherit this thread's CPU.
                if let Some(cpu) = cpu {
                    match affinity::pin_thread(cpu) {
                        Ok(()) => crate::agent::shares_cpu_with_agents(),
                        Err(e) => {
                            eprintln!("referee: --affinity: worker {worker} not pinned to CPU {cpu}: {e}")
                        }
                    }
                }
                // This worker's agents, kept from game to game (`--restart`).
                let mut engines = Engines::default();
                loop {
                    let Ok(game) = job_rx.lock().expect("job lock").recv() else {
                        break;
                    };
                    let outcome = play_one(def, opts, game, &mut engines);
                    if tx.send((game.index, outcome)).is_err() {
                        break;
                    }
                }
                engines.retire(opts.quit_grace);
                // Before the thread ends: a scope may return before its threads'
                // own clean-up has run.
                crate::referee::release_private_dirs();
            });
        }
        let (mut running, mut first_error) = (0, None);
        loop {
            // A game that cannot even start (an entrant's command is wrong) would
            // fail every time: after the first error nothing more is handed out,
            // nor after an entrant was found never to get ready.
            while running < workers
                && first_error.is_none()
                && tally.failed.is_none()
                && !crate::referee::interrupted()
            {
                match dispatch.next(tally) {
                    Ok(Some(game)) => {
                        job_tx.send(game).expect("workers wait for games");
                        running += 1;
                    }
                    Ok(None) => break,
                    Err(e) => first_error = Some(e),
                }
            }
            if running == 0 {
                break;
            }
            let (_, outcome) = rx.recv().expect("a worker answers every game");
            running -= 1;
            if let Err(e) = outcome.and_then(|played| tally.finished(def, played)) {
                first_error.get_or_insert(e);
            }
        }
        first_error.map_or(Ok(()), Err)
    })
}
