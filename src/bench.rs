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

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::agent::{AgentProcess, AgentSpec, Isolation, Received};
use crate::clock::TimeControl;
use crate::game::{GameId, Options, Turn};
use crate::record::{self, Durability};
use crate::referee::{play_match, AgentCwd, MatchConfig, Progress, SeatAgent};
use crate::rng::Rng;

mod sandbox;

/// A global allocator that counts the allocations of each thread, for the
/// allocations-per-action figure. The `referee` binary installs it; the cost is one
/// thread-local increment per allocation.
#[derive(Debug)]
pub struct CountingAlloc;

thread_local! {
    /// Allocations made by this thread (a `const` initialiser: no lazy set-up, no
    /// destructor, so the allocator itself never allocates or re-enters).
    static ALLOCATIONS: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

// SAFETY: every call is passed on unchanged to the system allocator; the counter is
// a plain thread-local cell that neither allocates nor panics (`try_with`).
unsafe impl std::alloc::GlobalAlloc for CountingAlloc {
    unsafe fn alloc(&self, layout: std::alloc::Layout) -> *mut u8 {
        let _ = ALLOCATIONS.try_with(|n| n.set(n.get() + 1));
        // SAFETY: the caller's contract is the system allocator's.
        unsafe { std::alloc::System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: std::alloc::Layout) {
        // SAFETY: as above.
        unsafe { std::alloc::System.dealloc(ptr, layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: std::alloc::Layout) -> *mut u8 {
        let _ = ALLOCATIONS.try_with(|n| n.set(n.get() + 1));
        // SAFETY: as above.
        unsafe { std::alloc::System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: std::alloc::Layout, new_size: usize) -> *mut u8 {
        let _ = ALLOCATIONS.try_with(|n| n.set(n.get() + 1));
        // SAFETY: as above.
        unsafe { std::alloc::System.realloc(ptr, layout, new_size) }
    }
}

/// Allocations (and reallocations) this thread has made, when [`CountingAlloc`] is
/// the global allocator; `None` when it is not.
pub fn thread_allocations() -> Option<u64> {
    let count = || ALLOCATIONS.with(std::cell::Cell::get);
    let before = count();
    drop(std::hint::black_box(Box::new(0u64)));
    let after = count();
    (after > before).then_some(after)
}

/// Where the referee and its agents run while round trips are timed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Placement {
    /// Referee and agents share one CPU: a round trip is two context switches, and
    /// every microsecond either side works adds to it.
    OneCpu,
    /// The referee on one CPU, the agents on another: a round trip is two cross-CPU
    /// wake-ups.
    TwoCpus,
    /// Wherever the scheduler puts them, as in a `referee match` (also where CPU
    /// pinning is not available).
    Unpinned,
}

impl Placement {
    /// The name in the table.
    fn label(self) -> &'static str {
        match self {
            Placement::OneCpu => "one CPU",
            Placement::TwoCpus => "two CPUs",
            Placement::Unpinned => "unpinned",
        }
    }
}

/// The CPUs this thread may run on, and pinning to one of them. Processes started
/// by the thread inherit its pinning, which is how agents are placed.
struct Cpus {
    #[cfg(target_os = "linux")]
    original: nix::sched::CpuSet,
    /// The first two CPUs allowed (the second may be missing).
    ids: Vec<usize>,
}

impl Cpus {
    /// The allowed CPUs, or `None` where pinning is not available.
    fn detect() -> Option<Cpus> {
        #[cfg(target_os = "linux")]
        {
            use nix::sched::{sched_getaffinity, CpuSet};
            use nix::unistd::Pid;
            let original = sched_getaffinity(Pid::from_raw(0)).ok()?;
            let ids: Vec<usize> = (0..CpuSet::count())
                .filter(|&c| original.is_set(c).unwrap_or(false))
                .take(2)
                .collect();
            (!ids.is_empty()).then_some(Cpus { original, ids })
        }
        #[cfg(not(target_os = "linux"))]
        None
    }

    /// The placements these CPUs allow.
    fn placements(cpus: Option<&Cpus>) -> Vec<Placement> {
        match cpus.map(|c| c.ids.len()) {
            None => vec![Placement::Unpinned],
            Some(1) => vec![Placement::OneCpu],
            Some(_) => vec![Placement::OneCpu, Placement::TwoCpus, Placement::Unpinned],
        }
    }

    /// Pins the calling thread to CPU `cpu`.
    #[cfg_attr(not(target_os = "linux"), allow(unused_variables))]
    fn pin(&self, cpu: usize) -> std::io::Result<()> {
        #[cfg(target_os = "linux")]
        {
            let mut set = nix::sched::CpuSet::new();
            set.set(cpu).map_err(std::io::Error::from)?;
            nix::sched::sched_setaffinity(nix::unistd::Pid::from_raw(0), &set)
                .map_err(std::io::Error::from)?;
        }
        Ok(())
    }

    /// Gives the calling thread back every CPU it had.
    fn restore(&self) {
        #[cfg(target_os = "linux")]
        let _ = nix::sched::sched_setaffinity(nix::unistd::Pid::from_raw(0), &self.original);
    }
}

/// Pinning for one placement: the agents' CPU while they are started, then the
/// referee's.
#[derive(Clone, Copy)]
struct Pin<'c> {
    cpus: Option<&'c Cpus>,
    referee: usize,
    agents: usize,
    /// Every allowed CPU for both (the unpinned placement).
    free: bool,
}

impl<'c> Pin<'c> {
    fn new(cpus: Option<&'c Cpus>, placement: Placement) -> Pin<'c> {
        let id = |k: usize| cpus.and_then(|c| c.ids.get(k).copied()).unwrap_or(0);
        let agents = if placement == Placement::TwoCpus {
            id(1)
        } else {
            id(0)
        };
        Pin {
            cpus,
            referee: id(0),
            agents,
            free: placement == Placement::Unpinned,
        }
    }

    /// Before starting agents: they will run where this thread runs now.
    fn for_agents(self) -> std::io::Result<()> {
        self.go_to(self.agents)
    }

    /// Once the agents are started: the referee's own CPU.
    fn for_referee(self) -> std::io::Result<()> {
        self.go_to(self.referee)
    }

    /// Moves this thread to `cpu`, or back to every allowed CPU when unpinned.
    fn go_to(self, cpu: usize) -> std::io::Result<()> {
        match self.cpus {
            Some(c) if self.free => {
                c.restore();
                Ok(())
            }
            Some(c) => c.pin(cpu),
            None => Ok(()),
        }
    }
}

/// CPU time this thread has used (user and system), where the OS tells.
fn thread_cpu_time() -> Duration {
    #[cfg(target_os = "linux")]
    {
        use nix::sys::resource::{getrusage, UsageWho};
        if let Ok(usage) = getrusage(UsageWho::RUSAGE_THREAD) {
            let us = |t: nix::sys::time::TimeVal| t.tv_sec() as u64 * 1_000_000 + t.tv_usec() as u64;
            return Duration::from_micros(us(usage.user_time()) + us(usage.system_time()));
        }
    }
    Duration::ZERO
}

/// Round trips and per-action costs under one placement.
#[derive(Clone, Debug, Serialize)]
pub struct Timing {
    /// Where the referee and agents ran.
    pub placement: Placement,
    /// Pipe ping-pong round trip with `cat`, µs (the floor): the median of
    /// [`BATCHES`] batches.
    pub pipe_round_trip_us: f64,
    /// CPU time of the timing thread per pipe round trip, µs.
    pub pipe_cpu_us: f64,
    /// The same through the referee's I/O path with the record append, µs
    /// ([`io_path_round_trip`]).
    pub io_path_round_trip_us: f64,
    /// CPU time of the timing thread per round trip through the I/O path, µs.
    pub io_path_cpu_us: f64,
    /// The round trip through the referee's agent I/O alone (write, wait, read: one
    /// agent, no record append), µs: what waiting with a deadline costs over a
    /// blocking read.
    pub agent_io_round_trip_us: f64,
    /// Per game configuration.
    pub games: Vec<GameTiming>,
}

/// One game configuration played by instant agents under one placement.
#[derive(Clone, Debug, Serialize)]
pub struct GameTiming {
    /// Game and options.
    pub game: String,
    /// Actions timed.
    pub actions: u64,
    /// Wall time per action, µs, from the first action to the last: the median over
    /// the replays.
    pub us_per_action: f64,
    /// CPU time of the referee's match thread per action, µs (user and system).
    pub referee_cpu_us_per_action: f64,
    /// The median of the floor batches taken just before each replay, µs.
    pub floor_us: f64,
    /// The ratio to the floor: the median over the replays of µs per action divided
    /// by the floor batch taken just before that replay.
    pub ratio_to_pipe: f64,
    /// `us_per_action` over the round trip through the referee's I/O path.
    pub ratio_to_io_path: f64,
    /// Per replay: µs per action, and the µs per round trip of its floor batch.
    pub pairs: Vec<[f64; 2]>,
}

/// What does not depend on placement, per game configuration.
#[derive(Clone, Debug, Serialize)]
pub struct GameFigures {
    /// Game and options.
    pub game: String,
    /// Heap allocations (and reallocations) of the match loop per action; `None` when
    /// the counting allocator is not installed.
    pub allocations_per_action: Option<f64>,
    /// Legal-action generation, µs per position (positions from random play).
    pub legal_us_per_position: f64,
    /// `verify` throughput on this game's records, actions per second, on one CPU.
    pub verify_actions_per_s: f64,
}

/// Everything `referee bench` measures.
#[derive(Clone, Debug, Serialize)]
pub struct Figures {
    /// CPUs this process may use.
    pub cpus: usize,
    /// The CPU model, as the OS names it.
    pub cpu_model: String,
    /// Round trips and per-action costs, per placement.
    pub timings: Vec<Timing>,
    /// Per game configuration.
    pub games: Vec<GameFigures>,
    /// Resident memory added per concurrent game, KiB (agents' processes excluded).
    pub kib_per_concurrent_game: f64,
    /// What the sandbox costs, where agents can be sandboxed here.
    pub sandbox: Option<sandbox::SandboxFigures>,
}

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

/// A view line of about the usual length, for the round trips.
const PING: &str = "view 7rrrr/7rrrr/9rr/9rr/11/11/11/bb9/bb9/bbbb7/bbbb7 b 0";

/// Batches each round-trip figure is the median of.
const BATCHES: usize = 5;

/// `cat` at the other end of two pipes: the peer of the floor's ping-pong. It lives
/// for a whole placement, so that a batch of the floor can be taken just before each
/// replay of a game: the machine's speed drifts over seconds, and a ratio of two
/// figures taken far apart measures the drift as much as the referee.
struct Cat {
    child: std::process::Child,
    input: Option<std::process::ChildStdin>,
    output: BufReader<std::process::ChildStdout>,
    back: String,
}

impl Cat {
    /// Starts `cat` where `pin` puts agents, and moves this thread where it puts the
    /// referee.
    fn start(pin: Pin<'_>) -> std::io::Result<Cat> {
        pin.for_agents()?;
        let mut child = Command::new("cat")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()?;
        pin.for_referee()?;
        let input = child.stdin.take();
        let output = BufReader::new(child.stdout.take().expect("piped"));
        Ok(Cat {
            child,
            input,
            output,
            back: String::new(),
        })
    }

    /// (a) One batch of `n` line round trips: µs per round trip, and the CPU time this
    /// side spent per round trip.
    fn batch(&mut self, n: usize) -> std::io::Result<RoundTrip> {
        let line = format!("{PING}\n");
        let input = self.input.as_mut().expect("open until dropped");
        let batch = Batch::start();
        for _ in 0..n {
            input.write_all(line.as_bytes())?;
            input.flush()?;
            self.back.clear();
            self.output.read_line(&mut self.back)?;
        }
        Ok(batch.per_trip(n))
    }
}

impl Drop for Cat {
    fn drop(&mut self) {
        // End of input ends `cat`.
        self.input = None;
        let _ = self.child.wait();
    }
}

/// The median of `values` by `key` (the upper one of an even count); `None` when empty.
fn median_by<T: Copy>(values: &[T], key: impl Fn(&T) -> f64) -> Option<T> {
    let mut sorted = values.to_vec();
    sorted.sort_by(|a, b| key(a).total_cmp(&key(b)));
    sorted.get(sorted.len() / 2).copied()
}

/// A round trip's wall time and this side's CPU time, µs.
#[derive(Clone, Copy, Debug)]
struct RoundTrip {
    wall: f64,
    cpu: f64,
}

/// The clocks at the start of a batch of round trips.
struct Batch {
    wall: Instant,
    cpu: Duration,
}

impl Batch {
    fn start() -> Batch {
        Batch {
            wall: Instant::now(),
            cpu: thread_cpu_time(),
        }
    }

    /// Per round trip since the start, over `n` round trips.
    fn per_trip(&self, n: usize) -> RoundTrip {
        let n = n.max(1) as f64;
        RoundTrip {
            wall: self.wall.elapsed().as_secs_f64() * 1e6 / n,
            cpu: thread_cpu_time().saturating_sub(self.cpu).as_secs_f64() * 1e6 / n,
        }
    }
}

/// (a') The same round trip through the referee's own I/O path, with the system calls
/// an action needs whatever the game. With `whole`, as in a two-seat game: two `cat`
/// agents take turns, the record line is appended to a file before each message, the
/// seat about to be asked is read for lines it printed unasked, and then its line is
/// awaited (poll, read). What the referee costs
/// above this is its work on the game itself. Without `whole`, one agent and only
/// the write and the wait: the agent I/O alone.
fn io_path_round_trip(n: usize, dir: &Path, pin: Pin<'_>, whole: bool) -> std::io::Result<RoundTrip> {
    pin.for_agents()?;
    let spawn = || AgentProcess::spawn(&AgentSpec::new("cat")).map_err(std::io::Error::other);
    let mut agents = if whole {
        vec![spawn()?, spawn()?]
    } else {
        vec![spawn()?]
    };
    let seats = agents.len();
    pin.for_referee()?;
    let path = dir.join("io-path.jsonl");
    let mut record = std::fs::File::create(&path)?;
    let line = format!(
        "{{\"type\":\"action\",\"ply\":1,\"seat\":1,\"action\":\"{PING}\",\"events\":[],\"hash\":\"{:064}\"}}\n",
        0
    );
    let mut batches = Vec::with_capacity(BATCHES);
    for _ in 0..BATCHES {
        let batch = Batch::start();
        for k in 0..n / BATCHES {
            // The two agents take turns, as seats do; one agent answers every time.
            let asked = &mut agents[k % seats];
            if whole {
                record.write_all(line.as_bytes())?;
                if asked.try_recv().is_some() {
                    return Err(std::io::Error::other("cat answered nothing it was asked"));
                }
            }
            asked.send_lines([PING]).map_err(std::io::Error::other)?;
            match asked.recv(Instant::now() + Duration::from_secs(10)) {
                Received::Line(_) => {}
                other => return Err(std::io::Error::other(format!("cat: {other:?}"))),
            }
        }
        batches.push(batch.per_trip(n / BATCHES));
    }
    for agent in &mut agents {
        agent.shutdown(Duration::from_secs(1));
    }
    let _ = std::fs::remove_file(path);
    Ok(median_by(&batches, |b| b.wall).expect("BATCHES > 0"))
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
        if records.is_empty() {
            break;
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
}

impl Workload {
    fn new(quick: bool) -> Workload {
        if quick {
            Workload {
                trips: 500,
                min_actions: 1,
                max_games: 1,
                max_plies: Some(40),
                min_pairs: 1,
                legal_positions: 100,
                legal_passes: 1,
                verify_pass: Duration::from_millis(5),
                memory_games: 2,
                sandbox_runs: 1,
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

/// [`run`] in `dir`.
fn measure(exe: &str, dir: &Path, work: Workload, only: &[GameId]) -> std::io::Result<Figures> {
    let trips = work.trips;
    // The games first, by random agents; the timed runs replay them.
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
        // (I-Doubt-It, two-seat multichess) take more of them.
        let mut records = Vec::new();
        let mut actions = 0;
        for k in 0..work.max_games {
            let config = bench_config(exe, dir, game, &options, k, seats, None);
            actions += play_match(&config, &mut |_| {})
                .map_err(std::io::Error::other)?
                .plies;
            records.push(config.record);
            if actions >= work.min_actions {
                break;
            }
        }
        recorded.push((game, label, options, records));
    }
    // Pairs of a floor batch and a replay per game and placement: enough for a
    // median that one slow moment of the machine does not move.
    let cpus = Cpus::detect();
    let mut timings = Vec::new();
    let mut allocations = vec![None; recorded.len()];
    let measured = (|| -> std::io::Result<()> {
        for placement in Cpus::placements(cpus.as_ref()) {
            let pin = Pin::new(cpus.as_ref(), placement);
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
            timings.push(Timing {
                placement,
                pipe_round_trip_us: pipe.wall,
                pipe_cpu_us: pipe.cpu,
                io_path_round_trip_us: io_path.wall,
                io_path_cpu_us: io_path.cpu,
                agent_io_round_trip_us: agent_io.wall,
                games,
            });
        }
        Ok(())
    })();
    let mut games = Vec::new();
    let verified = measured.and_then(|()| {
        // "On one core": verify runs pinned where it can be.
        Pin::new(cpus.as_ref(), Placement::OneCpu).for_referee()?;
        for ((game, label, options, records), allocations) in recorded.iter().zip(&allocations) {
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
        Ok(())
    });
    if let Some(c) = &cpus {
        c.restore();
    }
    verified?;
    Ok(Figures {
        cpus: std::thread::available_parallelism().map_or(1, |n| n.get()),
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

impl Figures {
    /// The table `referee bench` prints.
    pub fn table(&self) -> String {
        let mut t = format!(
            "referee bench: {} CPU{} ({}); figures vary from run to run, compare the ratios\n\n",
            self.cpus,
            if self.cpus == 1 { "" } else { "s" },
            if self.cpu_model.is_empty() {
                "model unknown"
            } else {
                &self.cpu_model
            }
        );
        let head: String = self
            .timings
            .iter()
            .map(|p| format!(" {:>10}", p.placement.label()))
            .collect();
        t.push_str(&format!("{:<46}{head}\n", "round trip, µs"));
        let row = |name: &str, f: &dyn Fn(&Timing) -> f64| {
            let cells: String = self.timings.iter().map(|p| format!(" {:>10.1}", f(p))).collect();
            format!("{name:<46}{cells}\n")
        };
        t.push_str(&row("pipe ping-pong with cat (the floor)", &|p| {
            p.pipe_round_trip_us
        }));
        t.push_str(&row("the referee's agent I/O (write, wait, read)", &|p| {
            p.agent_io_round_trip_us
        }));
        t.push_str(&row("  + record, 2 agents in turn: the I/O path", &|p| {
            p.io_path_round_trip_us
        }));
        t.push_str(&row("  its CPU µs on the referee's side, pipe", &|p| {
            p.pipe_cpu_us
        }));
        t.push_str(&row("  its CPU µs on the referee's side, I/O path", &|p| {
            p.io_path_cpu_us
        }));
        t.push('\n');
        t.push_str(&format!("{:<22} {:>7}", "per action", "actions"));
        for p in &self.timings {
            t.push_str(&format!(" | {:^30}", p.placement.label()));
        }
        t.push('\n');
        t.push_str(&format!("{:<22} {:>7}", "instant agents", ""));
        for _ in &self.timings {
            t.push_str(&format!(
                " | {:>7} {:>6} {:>6} {:>8}",
                "µs", "×pipe", "×I/O", "cpu µs"
            ));
        }
        t.push('\n');
        for (k, g) in self.games.iter().enumerate() {
            let actions = self.timings.first().map_or(0, |p| p.games[k].actions);
            t.push_str(&format!("{:<22} {:>7}", g.game, actions));
            for p in &self.timings {
                let x = &p.games[k];
                t.push_str(&format!(
                    " | {:>7.1} {:>6.2} {:>6.2} {:>8.1}",
                    x.us_per_action, x.ratio_to_pipe, x.ratio_to_io_path, x.referee_cpu_us_per_action
                ));
            }
            t.push('\n');
        }
        t.push_str(
            "×pipe: the median over replays of µs per action over the floor batch just before each\n\n",
        );
        t.push_str(&format!(
            "{:<22} {:>13} {:>16} {:>18}\n",
            "game", "allocs/action", "legal µs/position", "verify actions/s"
        ));
        for g in &self.games {
            let allocs = g
                .allocations_per_action
                .map_or_else(|| "n/a".to_string(), |n| format!("{n:.1}"));
            t.push_str(&format!(
                "{:<22} {:>13} {:>16.1} {:>18.0}\n",
                g.game, allocs, g.legal_us_per_position, g.verify_actions_per_s
            ));
        }
        t.push_str(&format!(
            "\nmemory per concurrent match (2-player Telka, referee only): {:.1} KiB\n",
            self.kib_per_concurrent_game
        ));
        match &self.sandbox {
            Some(s) => {
                t.push_str(&format!(
                    "\n{:<48}{:>9}{:>11}\n",
                    format!("{}, unpinned", s.sandbox),
                    "plain",
                    "sandboxed"
                ));
                t.push_str(&format!(
                    "{:<48}{:>9.1}{:>11.1}\n",
                    "start of an agent, to protocolok, ms", s.start_ms[0], s.start_ms[1]
                ));
                let action = format!("per action, {}, µs", s.game);
                t.push_str(&format!(
                    "{action:<48}{:>9.1}{:>11.1}\n",
                    s.us_per_action[0], s.us_per_action[1]
                ));
            }
            None => t.push_str("\nthe sandbox: not available here, not measured\n"),
        }
        // Centred headings leave trailing blanks; the table is pasted into documents.
        t.lines().map(str::trim_end).collect::<Vec<_>>().join("\n") + "\n"
    }
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
                None => format!("{exe} agent random --seed {}", Rng::derive(seed, s as u64)),
                Some(record) => format!(
                    "{exe} agent replay {}",
                    shell_words::quote(&record.to_string_lossy())
                ),
            }),
            options: Vec::new(),
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
    }
}
