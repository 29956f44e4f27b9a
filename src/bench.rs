//! `referee bench`: what the referee costs, measured against the physical floor.
//!
//! (a) the floor: a bare line ping-pong with a child process over pipes; (b) the
//! referee's cost per action with built-in agents, per game and seat count, and its
//! ratio to the floor; (c) `verify` throughput; (d) legal-action generation per
//! position; (e) memory per concurrent game. Absolute figures vary from run to run
//! and machine to machine; the ratios are what to compare.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::agent::{AgentProcess, AgentSpec};
use crate::clock::TimeControl;
use crate::game::{GameId, Options, Turn};
use crate::record::{self, Durability};
use crate::referee::{play_match, AgentCwd, MatchConfig, SeatAgent};
use crate::rng::Rng;

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

/// One measured configuration of a game.
#[derive(Clone, Debug, Serialize)]
pub struct GameFigures {
    /// Game and options.
    pub game: String,
    /// Actions played.
    pub actions: u64,
    /// Wall time per action, µs (agents' thinking included).
    pub us_per_action: f64,
    /// Of which from `go` written to `bestmove` read (the pipe round trip and the
    /// agent's own work), µs per action.
    pub think_us_per_action: f64,
    /// The referee's own part per action (the rest), µs.
    pub referee_us_per_action: f64,
    /// Wall time per action over the pipe round trip.
    pub ratio_to_pipe: f64,
    /// Wall time per action over the round trip through the referee's I/O path.
    pub ratio_to_io_path: f64,
    /// Heap allocations (and reallocations) of the match loop per action; `None` when
    /// the counting allocator is not installed.
    pub allocations_per_action: Option<f64>,
    /// Legal-action generation, µs per position (positions from random play).
    pub legal_us_per_position: f64,
    /// `verify` throughput on this game's records, actions per second.
    pub verify_actions_per_s: f64,
}

/// Everything `referee bench` measures.
#[derive(Clone, Debug, Serialize)]
pub struct Figures {
    /// Pipe ping-pong round trip with a child process, µs.
    pub pipe_round_trip_us: f64,
    /// The same through the referee's I/O path with the record append, µs
    /// ([`io_path_round_trip`]).
    pub io_path_round_trip_us: f64,
    /// Per game configuration.
    pub games: Vec<GameFigures>,
    /// Resident memory added per concurrent game, KiB (agents' processes excluded).
    pub kib_per_concurrent_game: f64,
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

/// (a) µs per line round trip with `cat`, over `n` round trips: the best of five
/// batches, the floor rather than the noise.
pub fn pipe_round_trip(n: usize) -> std::io::Result<f64> {
    let mut child = Command::new("cat")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()?;
    let mut input = child.stdin.take().expect("piped");
    let mut output = BufReader::new(child.stdout.take().expect("piped"));
    let line = format!("{PING}\n");
    let mut back = String::new();
    let mut best = f64::INFINITY;
    for _ in 0..5 {
        let start = Instant::now();
        for _ in 0..n / 5 {
            input.write_all(line.as_bytes())?;
            input.flush()?;
            back.clear();
            output.read_line(&mut back)?;
        }
        best = best.min(start.elapsed().as_secs_f64() * 1e6 / (n / 5) as f64);
    }
    drop(input);
    let _ = child.wait();
    Ok(best)
}

/// (a') The same round trip through the referee's own I/O path, with the system calls
/// an action needs whatever the game: the record line appended to a file, the check
/// for stale lines, one write to the agent, and the wait for its line (poll, read).
/// What the referee costs above this is its work on the game itself.
pub fn io_path_round_trip(n: usize, dir: &Path) -> std::io::Result<f64> {
    let mut agent = AgentProcess::spawn(&AgentSpec::new("cat")).map_err(std::io::Error::other)?;
    let path = dir.join("io-path.jsonl");
    let mut record = std::fs::File::create(&path)?;
    let line = format!(
        "{{\"type\":\"action\",\"ply\":1,\"seat\":1,\"action\":\"{PING}\",\"events\":[],\"hash\":\"{:064}\"}}\n",
        0
    );
    let mut best = f64::INFINITY;
    for _ in 0..5 {
        let start = Instant::now();
        for _ in 0..n / 5 {
            record.write_all(line.as_bytes())?;
            if agent.try_recv().is_some() {
                return Err(std::io::Error::other("cat answered nothing it was asked"));
            }
            agent.send_lines([PING]).map_err(std::io::Error::other)?;
            match agent.recv(Instant::now() + Duration::from_secs(10)) {
                crate::agent::Received::Line(_) => {}
                other => return Err(std::io::Error::other(format!("cat: {other:?}"))),
            }
        }
        best = best.min(start.elapsed().as_secs_f64() * 1e6 / (n / 5) as f64);
    }
    agent.shutdown(Duration::from_secs(1));
    let _ = std::fs::remove_file(path);
    Ok(best)
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

/// Plays `games` matches of one configuration and measures: each game is first played
/// by random agents, then replayed by replay agents (instant bots that only read
/// their actions from that record), and the replay is what is timed.
fn match_figures(
    exe: &str,
    dir: &Path,
    game: GameId,
    options: &Options,
    games: usize,
    (pipe, io_path): (f64, f64),
) -> std::io::Result<GameFigures> {
    let seats = game.create(options, None).map(|g| g.seat_count()).unwrap_or(2);
    let mut actions = 0u64;
    let mut wall = Duration::ZERO;
    let mut thought = Duration::ZERO;
    let mut allocations: Option<u64> = None;
    let mut records = Vec::new();
    for k in 0..games {
        let config = bench_config(exe, dir, game, options, k as u64, seats, None);
        play_match(&config, &mut |_| {}).map_err(std::io::Error::other)?;
        let config = bench_config(exe, dir, game, options, k as u64, seats, Some(&config.record));
        let path = config.record.clone();
        // From the first action to the last: start-up and shut-down of the agents
        // are not per-action costs.
        let (mut first, mut last, mut counted) = (None, None, 0u64);
        let (mut allocs_first, mut allocs_last) = (None, None);
        play_match(&config, &mut |p| {
            if let crate::referee::Progress::Action { think, .. } = p {
                let now = Instant::now();
                allocs_last = thread_allocations();
                if first.is_none() {
                    first = Some(now);
                    allocs_first = allocs_last;
                } else {
                    thought += think.unwrap_or_default();
                    counted += 1;
                }
                last = Some(now);
            }
        })
        .map_err(std::io::Error::other)?;
        if let (Some(a), Some(b)) = (first, last) {
            wall += b - a;
        }
        if let (Some(a), Some(b)) = (allocs_first, allocs_last) {
            // Less the probe's own allocation at each action.
            allocations = Some(allocations.unwrap_or(0) + (b - a).saturating_sub(counted));
        }
        actions += counted;
        records.push(path);
    }
    // (c) verify: replay every record several times.
    let start = Instant::now();
    let rounds = 5;
    for _ in 0..rounds {
        for r in &records {
            record::replay_file(r).map_err(std::io::Error::other)?;
        }
    }
    let verify_s = start.elapsed().as_secs_f64();
    let per_action = wall.as_secs_f64() * 1e6 / actions.max(1) as f64;
    let think = thought.as_secs_f64() * 1e6 / actions.max(1) as f64;
    Ok(GameFigures {
        game: format!("{game} {options}"),
        actions,
        us_per_action: per_action,
        think_us_per_action: think,
        referee_us_per_action: (per_action - think).max(0.0),
        ratio_to_pipe: per_action / pipe,
        ratio_to_io_path: per_action / io_path,
        allocations_per_action: allocations.map(|n| n as f64 / actions.max(1) as f64),
        legal_us_per_position: legal_generation(game, options, 2000),
        verify_actions_per_s: (actions * rounds) as f64 / verify_s,
    })
}

/// Resident set size of this process, KiB (Linux; 0 elsewhere).
fn rss_kib() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1).and_then(|v| v.parse().ok()))
        })
        .unwrap_or(0.0)
}

/// (e) resident memory the referee adds per concurrent match: `n` Telka matches with
/// built-in agents run at once in threads, the peak resident size is sampled, and
/// the growth over the idle size is divided by `n` (the agents' own processes are
/// not the referee's memory).
fn memory_per_game(exe: &str, dir: &Path, n: usize) -> std::io::Result<f64> {
    let before = rss_kib();
    let done = std::sync::atomic::AtomicUsize::new(0);
    let mut peak = before;
    std::thread::scope(|scope| -> std::io::Result<()> {
        let mut handles = Vec::new();
        for k in 0..n {
            let done = &done;
            handles.push(scope.spawn(move || {
                let config = bench_config(exe, dir, GameId::Telka, &Options::new(), 1000 + k as u64, 2, None);
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
    }
}

/// Runs every measurement; `quick` plays fewer games.
pub fn run(exe: &str, quick: bool) -> std::io::Result<Figures> {
    let trips = if quick { 2_000 } else { 20_000 };
    let pipe = pipe_round_trip(trips)?;
    let dir = std::env::temp_dir().join(format!("referee-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let io_path = io_path_round_trip(trips, &dir)?;
    let mut games = Vec::new();
    for (game, opts) in configurations() {
        let options = Options::parse(opts).expect("valid options");
        games.push(match_figures(
            exe,
            &dir,
            game,
            &options,
            if quick { 1 } else { 4 },
            (pipe, io_path),
        )?);
    }
    let figures = Figures {
        pipe_round_trip_us: pipe,
        io_path_round_trip_us: io_path,
        games,
        kib_per_concurrent_game: memory_per_game(exe, &dir, if quick { 4 } else { 16 })?,
    };
    let _ = std::fs::remove_dir_all(&dir);
    Ok(figures)
}

impl Figures {
    /// The table `referee bench` prints.
    pub fn table(&self) -> String {
        let mut t = format!("pipe round trip (floor): {:.1} µs\n", self.pipe_round_trip_us);
        t.push_str(&format!(
            "round trip through the referee's I/O path, record append included: {:.1} µs\n",
            self.io_path_round_trip_us
        ));
        t.push_str(&format!(
            "{:<22} {:>7} {:>9} {:>9} {:>9} {:>6} {:>6} {:>7} {:>8} {:>11}\n",
            "game",
            "actions",
            "µs/act",
            "go→move",
            "referee",
            "×pipe",
            "×I/O",
            "allocs",
            "legal µs",
            "verify/s"
        ));
        for g in &self.games {
            let allocs = g
                .allocations_per_action
                .map_or_else(|| "n/a".to_string(), |n| format!("{n:.1}"));
            t.push_str(&format!(
                "{:<22} {:>7} {:>9.1} {:>9.1} {:>9.1} {:>6.2} {:>6.2} {:>7} {:>8.1} {:>11.0}\n",
                g.game,
                g.actions,
                g.us_per_action,
                g.think_us_per_action,
                g.referee_us_per_action,
                g.ratio_to_pipe,
                g.ratio_to_io_path,
                allocs,
                g.legal_us_per_position,
                g.verify_actions_per_s
            ));
        }
        t.push_str(&format!(
            "memory per concurrent match (2-player Telka, referee only): {:.1} KiB\n",
            self.kib_per_concurrent_game
        ));
        t
    }
}
