//! `referee bench`: what the referee costs, measured against the physical floor.
//!
//! (a) the floor: a bare line ping-pong with a child process over pipes, and the same
//! round trip through the referee's own I/O path; (b) the referee's cost per action
//! with instant agents, per game and seat count, and its ratio to both; (c) `verify`
//! throughput; (d) legal-action generation per position; (e) memory per concurrent
//! game; and allocations per action. Round trips are timed with the referee and its
//! agents pinned to one CPU, then to two, then unpinned, because the scheduler's
//! choice changes a round trip several times over. A game's ratio to the floor pairs each
//! replay with a batch of the floor taken just before it (see [`Cat`]). Absolute
//! figures vary from run to run and machine to machine; the ratios are what to
//! compare.
//!
//! The rooms: `alloc` counts allocations, `cpus` pins the referee
//! and its agents for each placement, `floor` is the pipe floor and the referee's
//! own I/O path, `figures` holds what is measured and prints the table,
//! `sandbox` measures what the sandbox costs, `fixed` (g) the fixed cost of a
//! game and of a seat, and `throughput` (h) whole tournaments at several
//! concurrencies (`--throughput`, a run of its own). This file plays and replays the games
//! and runs the measurements in order.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::agent::{AgentSpec, Isolation};
use crate::clock::TimeControl;
use crate::game::{GameId, Options, Turn};
use crate::record::{self, Durability};
use crate::referee::{play_match, AgentCwd, MatchConfig, Progress, SeatAgent};
use crate::rng::Rng;

mod alloc;
mod cpus;
mod figures;
mod fixed;
mod floor;
mod sandbox;
mod throughput;

pub use self::alloc::{thread_allocations, CountingAlloc};
pub use cpus::Placement;
use cpus::{thread_cpu_time, Cpus, Pin};
pub use figures::{Figures, GameFigures, GameTiming, PlacementTiming};
pub use fixed::{FixedCost, FixedCosts, SeatCost};
use floor::{io_path_round_trip, Cat, BATCHES};
pub use throughput::{Bots, Throughput, ThroughputRow, TIME_CONTROL};

/// The configurations measured: every game, with its seat counts.
fn configurations() -> Vec<(GameId, Vec<&'static str>)> {
    vec![
        (GameId::Telka, vec!["players=2"]),
        (GameId::Telka, vec!["players=4"]),
        (GameId::PegChow, vec!["players=2"]),
        (GameId::PegChow, vec!["players=3"]),
        (GameId::IDoubtIt, vec!["variant=0"]),
        (GameId::IDoubtIt, vec!["variant=9"]),
        (GameId::MultiChess, vec!["players=2"]),
        (GameId::MultiChess, vec!["players=8"]),
    ]
}

/// The median of `values` by `key` (the upper one of an even count); `None` when empty.
fn median_by<T: Copy>(values: &[T], key: impl Fn(&T) -> f64) -> Option<T> {
    let mut sorted = values.to_vec();
    sorted.sort_by(|a, b| key(a).total_cmp(&key(b)));
    sorted.get(sorted.len() / 2).copied()
}

/// (d) µs per `legal_actions` call on positions reached by random play.
fn legal_generation(game: GameId, options: &Options, positions: usize) -> f64 {
    let mut rng = Rng::new(7);
    let mut total = Duration::ZERO;
    let mut counted = 0;
    while counted < positions {
        let mut g = game.create(options, None).expect("valid options");
        for _ in 0..200 {
            let Turn::Act { seat, .. } = g.turn() else { break };
            let start = Instant::now();
            let legal = g.correct_actions();
            total += start.elapsed();
            counted += 1;
            if legal.is_empty() {
                break;
            }
            let pick = legal[rng.below(legal.len())].clone();
            if g.play(seat, &pick).is_err() {
                break;
            }
        }
    }
    total.as_secs_f64() * 1e6 / counted as f64
}

/// One replay of a recorded game by instant agents, timed from its first action to
/// its last (start-up and shut-down of the agents are not per-action costs).
struct Replayed {
    actions: u64,
    wall: Duration,
    cpu: Duration,
    allocations: Option<u64>,
}

/// Replays `record` with replay agents (instant bots that only read their actions
/// from it), placed by `pin`, isolated as `isolation` says.
#[allow(clippy::too_many_arguments)]
fn replay_once(
    exe: &str,
    dir: &Path,
    record: &Path,
    game: GameId,
    options: &Options,
    pin: Pin<'_>,
    isolation: &Isolation,
) -> std::io::Result<Replayed> {
    let seats = game.create(options, None).map(|g| g.seat_count()).unwrap_or(2);
    let mut config = bench_config(exe, dir, game, options, 0, seats, Some(record));
    config.isolation = isolation.clone();
    // Samples (action count, clocks, allocations) at the first action and every
    // SAMPLE_EVERY actions: reading the CPU clock is a system call, which taken at
    // every action would be timed as the referee's own cost.
    let (mut first, mut last, mut seen) = (None, None, 0u64);
    let mut pinned = Ok(());
    pin.for_agents()?;
    play_match(&config, &mut |p| {
        if let Progress::Action { .. } = p {
            if first.is_none() {
                pinned = pin.for_referee();
            }
            if seen % SAMPLE_EVERY == 0 {
                let at = (seen, Instant::now(), thread_cpu_time(), thread_allocations());
                first.get_or_insert(at);
                last = Some(at);
            }
            seen += 1;
        }
    })
    .map_err(std::io::Error::other)?;
    pinned?;
    let _ = std::fs::remove_file(&config.record);
    let (Some(a), Some(b)) = (first, last) else {
        return Ok(Replayed {
            actions: 0,
            wall: Duration::ZERO,
            cpu: Duration::ZERO,
            allocations: None,
        });
    };
    let samples = (b.0 - a.0) / SAMPLE_EVERY;
    Ok(Replayed {
        actions: b.0 - a.0,
        wall: b.1 - a.1,
        cpu: b.2.saturating_sub(a.2),
        // Less the probe's own allocation at each sample.
        allocations: a.3.zip(b.3).map(|(x, y)| (y - x).saturating_sub(samples)),
    })
}

/// Actions between two samples of the clocks in [`replay_once`].
const SAMPLE_EVERY: u64 = 16;

/// Replays paired with a batch of the floor taken just before each (see [`Cat`]).
struct Paired {
    /// All replays together.
    sum: Replayed,
    /// Per replay: µs per action, and µs per round trip of its floor batch.
    pairs: Vec<[f64; 2]>,
}

/// Round trips in the floor batch before each replay: a few milliseconds.
const PAIR_TRIPS: usize = 500;

/// Replays `records` under one placement, each preceded by a batch of the floor,
/// going over them again until there are at least `min_pairs` pairs.
#[allow(clippy::too_many_arguments)]
fn replay_paired(
    exe: &str,
    dir: &Path,
    records: &[PathBuf],
    game: GameId,
    options: &Options,
    pin: Pin<'_>,
    cat: &mut Cat,
    min_pairs: usize,
) -> std::io::Result<Paired> {
    let mut sum = Replayed {
        actions: 0,
        wall: Duration::ZERO,
        cpu: Duration::ZERO,
        allocations: Some(0),
    };
    let mut pairs = Vec::new();
    while pairs.len() < min_pairs.max(1) {
        let before = pairs.len();
        for r in records {
            let floor = cat.batch(PAIR_TRIPS)?;
            let one = replay_once(exe, dir, r, game, options, pin, &plain())?;
            if one.actions == 0 {
                continue;
            }
            pairs.push([one.wall.as_secs_f64() * 1e6 / one.actions as f64, floor.wall]);
            sum.actions += one.actions;
            sum.wall += one.wall;
            sum.cpu += one.cpu;
            sum.allocations = sum.allocations.zip(one.allocations).map(|(x, y)| x + y);
        }
        // A pass that times nothing would time nothing forever.
        if pairs.len() == before {
            return Err(std::io::Error::other(format!(
                "no recorded {game} game is longer than {SAMPLE_EVERY} actions, so none can be timed"
            )));
        }
    }
    Ok(Paired { sum, pairs })
}

/// (c) `verify` throughput over `records`, actions per second, on the CPU this
/// thread is pinned to: the best of [`BATCHES`] passes of at least `pass` each.
fn verify_throughput(records: &[PathBuf], pass: Duration) -> std::io::Result<f64> {
    let mut best = 0.0f64;
    for _ in 0..BATCHES {
        let mut actions = 0u64;
        let start = Instant::now();
        // Each pass long enough that timer and scheduler noise do not matter.
        while start.elapsed() < pass {
            for r in records {
                // As `referee verify` does it.
                let replay = record::check_file(r).map_err(std::io::Error::other)?;
                actions += replay.action_count as u64;
            }
        }
        best = best.max(actions as f64 / start.elapsed().as_secs_f64());
    }
    Ok(best)
}

/// The value of the first `key: value` line of a /proc file (Linux; `None` elsewhere).
fn proc_field(path: &str, key: &str) -> Option<String> {
    let text = std::fs::read_to_string(path).ok()?;
    let line = text.lines().find(|l| l.starts_with(key))?;
    Some(line.split_once(':')?.1.trim().to_string())
}

/// The CPU model, as /proc/cpuinfo names it (empty where unknown).
fn cpu_model() -> String {
    proc_field("/proc/cpuinfo", "model name").unwrap_or_default()
}

/// How much a bench run measures: the full run, or `--quick`, a smoke run that takes
/// every measurement once on a tiny workload (its figures are not worth quoting).
#[derive(Debug, Clone, Copy)]
struct Workload {
    /// Round trips of each floor.
    trips: usize,
    /// Recorded games per configuration: until this many actions, at most `max_games`.
    min_actions: u32,
    max_games: u64,
    /// The ply limit of the recorded games, when shorter than the game's own.
    max_plies: Option<u32>,
    /// Replays paired with a floor batch, per game and placement.
    min_pairs: usize,
    /// Positions, and passes over them, of the legal-action figure.
    legal_positions: usize,
    legal_passes: usize,
    /// The shortest pass of the verify figure.
    verify_pass: Duration,
    /// Concurrent matches of the memory figure.
    memory_games: usize,
    /// Agent starts, and replays, timed each way for the sandbox's figures.
    sandbox_runs: usize,
    /// The ply limits of the games whose whole matches are fitted (see [`fixed`]).
    fixed_lengths: &'static [u32],
    /// Whole matches per game length and agent mode (their median is fitted).
    fixed_runs: usize,
}

impl Workload {
    fn new(quick: bool) -> Workload {
        if quick {
            Workload {
                trips: 500,
                min_actions: 1,
                max_games: 16,
                max_plies: Some(40),
                min_pairs: 1,
                legal_positions: 100,
                legal_passes: 1,
                verify_pass: Duration::from_millis(5),
                memory_games: 2,
                sandbox_runs: 1,
                fixed_lengths: &[10, 30],
                fixed_runs: 1,
            }
        } else {
            Workload {
                trips: 20_000,
                min_actions: 2_000,
                max_games: 32,
                max_plies: None,
                min_pairs: 9,
                legal_positions: 2000,
                legal_passes: 3,
                verify_pass: Duration::from_millis(100),
                memory_games: 16,
                sandbox_runs: 9,
                fixed_lengths: &[10, 100, 300, 1000, 3000],
                fixed_runs: 9,
            }
        }
    }
}

/// Runs every measurement, for the games in `only` (every game when it is empty);
/// `quick` takes each once on a tiny workload.
pub fn run(exe: &str, quick: bool, only: &[GameId]) -> std::io::Result<Figures> {
    let dir = std::env::temp_dir().join(format!("referee-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let figures = measure(exe, &dir, Workload::new(quick), only);
    let _ = std::fs::remove_dir_all(&dir);
    figures
}

/// (h) Tournament throughput at each concurrency (those of `at`, if any) between
/// `bots`, isolated as `isolation` says; `quick` plays a few short games at each.
pub fn run_throughput(
    exe: &str,
    quick: bool,
    at: &[usize],
    games: Option<usize>,
    bots: Bots,
    isolation: &Isolation,
) -> std::io::Result<Throughput> {
    let dir = std::env::temp_dir().join(format!("referee-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let measured = throughput::measure(exe, &dir, quick, at, games, bots, isolation);
    let _ = std::fs::remove_dir_all(&dir);
    measured
}

/// [`run`] in `dir`.
fn measure(exe: &str, dir: &Path, work: Workload, only: &[GameId]) -> std::io::Result<Figures> {
    // The games first, by random agents; the timed runs replay them.
    let recorded = record_games(exe, dir, work, only)?;
    // Pairs of a floor batch and a replay per game and placement: enough for a
    // median that one slow moment of the machine does not move.
    let cpus = Cpus::detect();
    let mut timings = Vec::new();
    let mut allocations = vec![None; recorded.len()];
    let measured = (|| -> std::io::Result<()> {
        for placement in Cpus::placements(cpus.as_ref()) {
            let pin = Pin::new(cpus.as_ref(), placement);
            timings.push(time_placement(
                exe,
                dir,
                work,
                pin,
                placement,
                &recorded,
                &mut allocations,
            )?);
        }
        Ok(())
    })();
    let mut games = Vec::new();
    let verified = measured.and_then(|()| {
        // "On one core": verify runs pinned where it can be.
        Pin::new(cpus.as_ref(), Placement::OneCpu).for_referee()?;
        games = game_figures(&recorded, &allocations, work)?;
        Ok(())
    });
    if let Some(c) = &cpus {
        c.restore();
    }
    verified?;
    let fixed_costs = fixed::measure(exe, dir, work, only)?;
    Ok(Figures {
        fixed_costs,
        cpus: crate::agent::available_cpus(),
        cpu_model: cpu_model(),
        timings,
        games,
        kib_per_concurrent_game: memory_per_game(exe, dir, work)?,
        sandbox: match recorded.iter().find(|r| r.0 == GameId::Telka) {
            Some((_, _, options, records)) => match records.first() {
                Some(record) => {
                    sandbox::measure(exe, dir, record, options, work.sandbox_runs, work.sandbox_runs)?
                }
                None => None,
            },
            None => None,
        },
    })
}

/// A configuration's recorded games: the game, its options as given and in force,
/// and the records.
type Recorded = (GameId, String, Options, Vec<PathBuf>);

/// Plays the configurations of the games in `only` (every game when it is empty) with
/// random agents, each until enough actions are recorded.
fn record_games(exe: &str, dir: &Path, work: Workload, only: &[GameId]) -> std::io::Result<Vec<Recorded>> {
    let mut recorded = Vec::new();
    let chosen = configurations()
        .into_iter()
        .filter(|(game, _)| only.is_empty() || only.contains(game));
    for (game, opts) in chosen {
        let label = opts.join(" ");
        let limit = work.max_plies.map(|n| format!("max-plies={n}"));
        let options = Options::parse(opts.into_iter().chain(limit.as_deref())).expect("valid options");
        let seats = game.create(&options, None).map(|g| g.seat_count()).unwrap_or(2);
        // Games until enough actions are recorded for a steady average; short games
        // (I-Doubt-It, two-seat multichess) take more of them. Only a game longer
        // than SAMPLE_EVERY actions can be timed by its samples, so only those count.
        let mut records = Vec::new();
        let mut actions = 0;
        for k in 0..work.max_games {
            let config = bench_config(exe, dir, game, &options, k, seats, None);
            let plies = play_match(&config, &mut |_| {})
                .map_err(std::io::Error::other)?
                .plies;
            records.push(config.record);
            if u64::from(plies) > SAMPLE_EVERY {
                actions += plies;
            }
            if actions >= work.min_actions.max(1) {
                break;
            }
        }
        recorded.push((game, label, options, records));
    }
    Ok(recorded)
}

/// The round trips and every game's per-action costs under one placement; the
/// allocations per action of each game go to `allocations` (the first placement
/// that counts them).
fn time_placement(
    exe: &str,
    dir: &Path,
    work: Workload,
    pin: Pin<'_>,
    placement: Placement,
    recorded: &[Recorded],
    allocations: &mut [Option<f64>],
) -> std::io::Result<PlacementTiming> {
    let trips = work.trips;
    let mut cat = Cat::start(pin)?;
    let floors = (0..BATCHES)
        .map(|_| cat.batch(trips / BATCHES))
        .collect::<std::io::Result<Vec<_>>>()?;
    let pipe = median_by(&floors, |b| b.wall).expect("BATCHES > 0");
    let io_path = io_path_round_trip(trips, dir, pin, true)?;
    let agent_io = io_path_round_trip(trips, dir, pin, false)?;
    let mut games = Vec::new();
    for (k, (game, label, options, records)) in recorded.iter().enumerate() {
        let p = replay_paired(exe, dir, records, *game, options, pin, &mut cat, work.min_pairs)?;
        let r = &p.sum;
        let per = |d: Duration| d.as_secs_f64() * 1e6 / r.actions.max(1) as f64;
        allocations[k] = allocations[k].or(r.allocations.map(|n| n as f64 / r.actions.max(1) as f64));
        let us = median_by(&p.pairs, |p| p[0]).map_or(0.0, |p| p[0]);
        games.push(GameTiming {
            game: format!("{game} {label}"),
            actions: r.actions,
            us_per_action: us,
            referee_cpu_us_per_action: per(r.cpu),
            floor_us: median_by(&p.pairs, |p| p[1]).map_or(0.0, |p| p[1]),
            ratio_to_pipe: median_by(&p.pairs, |p| p[0] / p[1]).map_or(0.0, |p| p[0] / p[1]),
            ratio_to_io_path: us / io_path.wall,
            pairs: p.pairs,
        });
    }
    Ok(PlacementTiming {
        placement,
        pipe_round_trip_us: pipe.wall,
        pipe_cpu_us: pipe.cpu,
        io_path_round_trip_us: io_path.wall,
        io_path_cpu_us: io_path.cpu,
        agent_io_round_trip_us: agent_io.wall,
        games,
    })
}

/// What does not depend on placement, per configuration: the `allocations` counted
/// while timing, legal-action generation and `verify` throughput (on the CPU this
/// thread is pinned to).
fn game_figures(
    recorded: &[Recorded],
    allocations: &[Option<f64>],
    work: Workload,
) -> std::io::Result<Vec<GameFigures>> {
    let mut games = Vec::new();
    for ((game, label, options, records), allocations) in recorded.iter().zip(allocations) {
        games.push(GameFigures {
            game: format!("{game} {label}"),
            allocations_per_action: *allocations,
            // The same positions each time (a fixed seed): the best pass.
            legal_us_per_position: (0..work.legal_passes)
                .map(|_| legal_generation(*game, options, work.legal_positions))
                .fold(f64::INFINITY, f64::min),
            verify_actions_per_s: verify_throughput(records, work.verify_pass)?,
        });
    }
    Ok(games)
}

/// Resident set size of this process, KiB (0 where unknown).
fn rss_kib() -> f64 {
    proc_field("/proc/self/status", "VmRSS:")
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap_or(0.0)
}

/// (e) resident memory the referee adds per concurrent match: `n` Telka matches with
/// built-in agents run at once in threads, the peak resident size is sampled, and
/// the growth over the idle size is divided by `n` (the agents' own processes are
/// not the referee's memory).
fn memory_per_game(exe: &str, dir: &Path, work: Workload) -> std::io::Result<f64> {
    let n = work.memory_games;
    let limit = work.max_plies.map(|n| format!("max-plies={n}"));
    let options = Options::parse(limit.as_deref()).expect("valid options");
    let before = rss_kib();
    let done = std::sync::atomic::AtomicUsize::new(0);
    let mut peak = before;
    std::thread::scope(|scope| -> std::io::Result<()> {
        let mut handles = Vec::new();
        for k in 0..n {
            let done = &done;
            let options = &options;
            handles.push(scope.spawn(move || {
                let config = bench_config(exe, dir, GameId::Telka, options, 1000 + k as u64, 2, None);
                let result = play_match(&config, &mut |_| {});
                done.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                result.map(|_| ()).map_err(std::io::Error::other)
            }));
        }
        while done.load(std::sync::atomic::Ordering::SeqCst) < n {
            peak = peak.max(rss_kib());
            std::thread::sleep(Duration::from_millis(2));
        }
        for h in handles {
            h.join().expect("bench thread")?;
        }
        Ok(())
    })?;
    Ok((peak - before).max(0.0) / n as f64)
}

/// Agents as plain processes: what the per-action figures measure.
fn plain() -> Isolation {
    Isolation::NotIsolated("the bench measures the referee".into())
}

/// A match of built-in random agents for the bench, or with `replay`, of replay
/// agents playing that record again.
fn bench_config(
    exe: &str,
    dir: &Path,
    game: GameId,
    options: &Options,
    seed: u64,
    seats: usize,
    replay: Option<&Path>,
) -> MatchConfig {
    let agents = (0..seats)
        .map(|s| SeatAgent {
            spec: AgentSpec::new(match replay {
                None => crate::builtin::Strategy::Random.command_line(exe, Rng::derive(seed, s as u64)),
                Some(record) => format!(
                    "{exe} agent replay {}",
                    shell_words::quote(&record.to_string_lossy())
                ),
            }),
            options: Vec::new(),
            builtin_seed: None,
            entrant: None,
            control: None,
        })
        .collect();
    MatchConfig {
        game,
        options: options.clone(),
        state: None,
        agents,
        control: TimeControl::PerMove(Duration::from_secs(30)),
        margin: Duration::from_millis(50),
        startup: Duration::from_secs(10),
        quit_grace: Duration::from_secs(1),
        seed,
        record: dir.join(format!(
            "{game}-{}-{seed}{}.jsonl",
            options.to_string().replace([' ', '='], "_"),
            if replay.is_some() { "-replayed" } else { "" }
        )),
        log_dir: None,
        resume: false,
        durability: Durability::Game,
        agent_cwd: AgentCwd::Inherit,
        opening: Vec::new(),
        isolation: plain(),
        network: false,
        hidden: Vec::new(),
        sign: None,
    }
}
