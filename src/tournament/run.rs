//! Running a tournament: the games of a shard are played by a pool of workers, each
//! game writing its own record, and resumed from the records already there; an SPRT
//! may stop the run early. Its own room because it is the only part that starts
//! processes and threads: everything else reads records.
//!
//! The main thread hands out the games one at a time, in schedule order, and decides
//! before each new seating cycle whether to start it: so at concurrency 1 a run
//! stops after the same game every time, and once the SPRT has decided, only the
//! games of cycles already begun are played (no half pair is left behind).

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::{mpsc, Mutex};
use std::time::{Duration, Instant};

use super::definition::seat_command;
use super::engines::{Engines, Restart};
use super::results::{read_result, record_path, result_of_match, scan_records, GameResult};
use super::schedule::{Scheduled, Shard};
use super::shared::{check_definition, SharedDir};
use super::stats::{Pentanomial, Sprt, SprtState};
use super::summary::{pentanomial, summarize_counted, write_summary};
use super::{io_err, Definition, TournamentError};
use crate::agent::{AgentSpec, Isolation, Limits};
use crate::clock::TimeControl;
use crate::record::Durability;
use crate::referee::{play_match_keeping, AgentCwd, MatchConfig, MatchError, SeatAgent};

/// How one run of a tournament is carried out (not part of its definition).
#[derive(Clone, Debug)]
pub struct RunOptions {
    /// Output directory.
    pub out: PathBuf,
    /// Games played at once.
    pub concurrency: usize,
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
    let mut progress = Progress {
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
        progress.count(r)?;
    }
    play_games(def, opts, queue, &mut progress)?;
    if let Some(e) = progress.failed.take() {
        set_aside_unready(opts, &progress, &e, def)?;
        return Err(e);
    }
    // Always the final figures, whatever the throttle skipped.
    progress.live.write(&progress.results)?;
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
/// starting seating cycles.
struct Progress<'r> {
    /// The results so far, resumed ones included, in the order they came.
    results: Vec<GameResult>,
    /// The finished games of each seating cycle not yet complete.
    partial: BTreeMap<usize, Vec<GameResult>>,
    /// The whole schedule.
    schedule: &'r [Scheduled],
    /// Games in this run.
    total: usize,
    /// The SPRT stopping rule, if any.
    sprt: Option<Sprt>,
    /// The directory shared with the other shards, for a global SPRT.
    shared: Option<SharedDir>,
    /// Set once no new seating cycle is to be started.
    stopped: bool,
    /// Games finished in this run (resumed ones not included).
    played: usize,
    /// Where events go.
    report: &'r mut dyn FnMut(Event<'_>, &[GameResult]),
    /// `summary.json` as games finish.
    live: LiveSummary<'r>,
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

/// `<out>/summary.json`, rewritten as games finish so that a reader (a dashboard, a
/// script deciding to stop a test) sees the current figures, not only the final ones.
struct LiveSummary<'r> {
    /// The tournament.
    def: &'r Definition,
    /// Its output directory.
    out: &'r std::path::Path,
    /// Seats per game.
    seats: usize,
    /// Games in the whole schedule.
    scheduled: usize,
    /// When it was last written.
    written: Option<Instant>,
}

impl LiveSummary<'_> {
    /// The most often the file is rewritten while games finish: the figures are
    /// computed over every finished game, which at hundreds of games a second would
    /// cost more than the games.
    const INTERVAL: Duration = Duration::from_secs(1);

    /// Rewrites the file now.
    fn write(&mut self, results: &[GameResult]) -> Result<(), TournamentError> {
        let summary = summarize_counted(self.def, self.seats, self.scheduled, results)?;
        write_summary(self.out, &summary)?;
        self.written = Some(Instant::now());
        Ok(())
    }

    /// Rewrites the file unless it was rewritten less than [`Self::INTERVAL`] ago. A
    /// failure is not the run's: the run goes on and the final write reports it.
    fn game_finished(&mut self, results: &[GameResult]) {
        if self.written.is_none_or(|t| t.elapsed() >= Self::INTERVAL) {
            let _ = self.write(results);
        }
    }
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
    /// Whether the SPRT (of all shards, when shared) has decided; reports the
    /// decision the first time.
    fn sprt_decided(&mut self) -> Result<bool, TournamentError> {
        let Some(sprt) = self.sprt.filter(|_| !self.stopped) else {
            return Ok(self.stopped);
        };
        let own = pentanomial(&self.results, 0, 1);
        let decision = match &mut self.shared {
            Some(shared) => {
                shared.read(self.schedule)?;
                sprt_decision(&sprt, &pentanomial(&shared.results(), 0, 1), Some(own.pairs()))
            }
            None => sprt_decision(&sprt, &own, None),
        };
        if let Some(decision) = decision {
            self.stopped = true;
            (self.report)(Event::SprtDecided(&decision), &self.results);
        }
        Ok(self.stopped)
    }

    /// Counts a finished game; once its seating cycle is complete, shares the cycle
    /// (kept apart until then, so that sharing costs nothing per game already done).
    fn count(&mut self, result: GameResult) -> Result<(), TournamentError> {
        let cycle = self.schedule[result.index].cycle;
        let seats = self.schedule[result.index].seats.len();
        if self.shared.is_some() {
            let games = self.partial.entry(cycle).or_default();
            games.push(result.clone());
            if games.len() == seats {
                let mut games = self.partial.remove(&cycle).expect("just filled");
                games.sort_by_key(|r| r.index);
                if let Some(shared) = &mut self.shared {
                    shared.append(cycle, &games)?;
                }
            }
        }
        self.results.push(result);
        Ok(())
    }

    /// Counts a game finished in this run and reports it. The game in which an
    /// entrant is found never to get ready is not counted: the run stops on it.
    fn finished(&mut self, def: &Definition, played: Played) -> Result<(), TournamentError> {
        self.check_entrants(def, &played);
        if self.failed.is_some() {
            return Ok(());
        }
        self.count(played.result)?;
        self.played += 1;
        die_if_told(self.played);
        let done = self.results.len();
        (self.report)(
            Event::Finished {
                result: self.results.last().expect("just pushed"),
                done,
                total: self.total,
            },
            &self.results,
        );
        self.live.game_finished(&self.results);
        Ok(())
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

/// Fault injection for tests: with `REFEREE_TOURNAMENT_FAULT=abort-after-games=K` the
/// process aborts (as a crash or a SIGKILL would end it) once the K-th game of this
/// run is finished and counted, which puts a shard's death at an exact point, e.g.
/// between the two games of a pair.
fn die_if_told(played: usize) {
    let told = std::env::var("REFEREE_TOURNAMENT_FAULT").ok();
    let after = told.as_deref().and_then(|f| f.strip_prefix("abort-after-games="));
    if after.and_then(|k| k.parse::<usize>().ok()) == Some(played) {
        std::process::abort();
    }
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
    fn next(&mut self, progress: &mut Progress<'_>) -> Result<Option<&'s Scheduled>, TournamentError> {
        let Some(&game) = self.queue.front() else {
            return Ok(None);
        };
        if !self.begun.contains(&game.cycle) {
            if progress.sprt_decided()? {
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
    progress: &mut Progress<'_>,
) -> Result<(), TournamentError> {
    let workers = opts.concurrency.max(1).min(queue.len().max(1));
    let mut dispatch = Dispatch {
        queue,
        begun: BTreeSet::new(),
    };
    let (job_tx, job_rx) = mpsc::channel::<&Scheduled>();
    let job_rx = Mutex::new(job_rx);
    std::thread::scope(|scope| -> Result<(), TournamentError> {
        // Owned here: dropped when this returns, which lets the workers end.
        let job_tx = job_tx;
        let (tx, rx) = mpsc::channel::<(usize, Result<Played, TournamentError>)>();
        for _ in 0..workers {
            let (tx, job_rx) = (tx.clone(), &job_rx);
            scope.spawn(move || {
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
            });
        }
        let (mut running, mut first_error) = (0, None);
        loop {
            // A game that cannot even start (an entrant's command is wrong) would
            // fail every time: after the first error nothing more is handed out,
            // nor after an entrant was found never to get ready.
            while running < workers
                && first_error.is_none()
                && progress.failed.is_none()
                && !crate::referee::interrupted()
            {
                match dispatch.next(progress) {
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
            if let Err(e) = outcome.and_then(|played| progress.finished(def, played)) {
                first_error.get_or_insert(e);
            }
        }
        first_error.map_or(Ok(()), Err)
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
/// time control; each seat's stderr goes to the file `stderr[seat]`.
fn seat_agents(
    def: &Definition,
    opts: &RunOptions,
    game: &Scheduled,
    stderr: &[PathBuf],
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
            spec.stderr_log = stderr.get(seat).cloned();
            Ok(SeatAgent {
                spec,
                options: entrant.options.clone(),
                entrant: Some(entrant.name.clone()),
                control: entrant.control().map_err(TournamentError::Setup)?,
            })
        })
        .collect()
}

/// Where each seat's stderr goes: with `--log-dir`, the game's own directory
/// (`seatN.stderr`, the name `match --log-dir` gives it), so a process serves only
/// one game there; without, the worker's file for the entrant, which a kept process
/// goes on writing from game to game and which is read when an entrant does not get
/// ready.
fn stderr_logs(
    opts: &RunOptions,
    game: &Scheduled,
    engines: &mut Engines,
) -> Result<Vec<PathBuf>, TournamentError> {
    match &opts.log_dir {
        Some(dir) => {
            let logs = game_log_dir(dir, game);
            std::fs::create_dir_all(&logs).map_err(io_err(&logs))?;
            Ok((1..=game.seats.len())
                .map(|n| logs.join(format!("seat{n}.stderr")))
                .collect())
        }
        None => (0..game.seats.len())
            .map(|seat| {
                let who = game.seats[seat];
                let nth = game.seats[..seat].iter().filter(|&&w| w == who).count();
                engines.stderr_log(who, nth)
            })
            .collect(),
    }
}

/// A game's directory of logs under `--log-dir`.
fn game_log_dir(dir: &Path, game: &Scheduled) -> PathBuf {
    dir.join(format!("game-{:05}", game.index))
}

/// Plays one scheduled game, on the worker's kept agents where they serve, and takes
/// its result from the match.
fn play_one(
    def: &Definition,
    opts: &RunOptions,
    game: &Scheduled,
    engines: &mut Engines,
) -> Result<Played, TournamentError> {
    let stderr = stderr_logs(opts, game, engines)?;
    let id = def.game_id()?;
    let control =
        TimeControl::parse_recorded(&def.time_control).map_err(|e| TournamentError::Setup(e.to_string()))?;
    let config = MatchConfig {
        game: id,
        options: def.options.clone(),
        state: def.start_state(game).map(str::to_string),
        agents: seat_agents(def, opts, game, &stderr)?,
        control,
        margin: opts.margin,
        startup: opts.startup,
        quit_grace: opts.quit_grace,
        seed: game.seed,
        record: record_path(&opts.out, game.index),
        log_dir: opts.log_dir.as_deref().map(|d| game_log_dir(d, game)),
        resume: false,
        durability: opts.durability,
        agent_cwd: AgentCwd::Private,
        opening: def.opening(game)?,
        isolation: opts.isolation.clone(),
        network: opts.network,
        // The worker's stderr files of other entrants are theirs alone.
        hidden: [Some(opts.out.clone()), engines.scratch().map(Path::to_path_buf)]
            .into_iter()
            .flatten()
            .collect(),
    };
    let (kept, keep) = engines.seat(def, game, opts.restart);
    let (played, kept) = play_match_keeping(&config, kept, &keep, &mut |_| {});
    engines.put_back(game, kept);
    let report = played.map_err(|source| match source {
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
    // From the match itself: the record it wrote is not read back (a resumed
    // tournament reads the records already there, see `resume`).
    let result = result_of_match(game, &report);
    let unready = report
        .unready
        .into_iter()
        .map(|(seat, why)| Unready {
            entrant: game.seats[seat.index()],
            why,
            stderr: stderr_tail(&stderr[seat.index()]),
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

/// The SPRT decision on the pentanomial counts `p` of the first two entrants, if it
/// has been reached; `own` is how many of the pairs this shard played, when `p`
/// counts all shards sharing a directory.
fn sprt_decision(sprt: &Sprt, p: &Pentanomial, own: Option<u32>) -> Option<String> {
    let verdict = match sprt.state(p) {
        SprtState::Continue => return None,
        SprtState::AcceptH0 => "H0",
        SprtState::AcceptH1 => "H1",
    };
    let (lo, hi) = sprt.bounds();
    let (by, mine) = match own {
        Some(n) => (" by all shards together", format!(", {n} of them this shard's")),
        None => ("", String::new()),
    };
    Some(format!(
        "{verdict} accepted{by} (LLR {:.2}, bounds {lo:.2} and {hi:.2}, {} pairs{mine})",
        sprt.llr(p),
        p.pairs()
    ))
}
