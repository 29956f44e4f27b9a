//! (g) The fixed cost of a game and of a seat: whole matches of replay agents, timed
//! from the call that starts the match to its return, at several lengths, and fitted
//! to a line against plies. The intercept is what a game costs whatever its length
//! (agents started, handshakes, the record opened and closed, the agents stopped);
//! the slope is what each ply adds. Measured with agents started fresh for every
//! game, with agents kept between games (engine reuse), and, where there is one,
//! with the sandbox; with two seats, also with fresh agents and the record not synced
//! after the result, which shows what the default `--fsync game` costs a game.
//!
//! The replay agent reads its record without verifying it, so its start-up is a parse
//! of the file: proportional to the record, it falls into the slope, not the
//! intercept.
//!
//! Beside each line with fresh agents, the same agents alone: started side by side
//! by the standard library, as any program would start them, told `quit` and
//! reaped, with no game, each time just after a match. That is what fresh processes
//! of that agent cost whoever starts them; each match less the agents alone after
//! it, fitted the same way, is what the referee adds (its own fixed cost).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde::Serialize;

use super::cpus::process_cpu_time;
use super::{bench_config, median_by, plain, Workload};
use crate::agent::{AgentSpec, Isolation, Sandbox};
use crate::game::{GameId, Options};
use crate::record::Durability;
use crate::referee::{play_match, play_match_keeping, AgentCwd, KeptAgent, MatchConfig};

/// The configurations whose fixed cost is measured: two seat counts of each game,
/// so that the cost of a seat shows as the difference of their intercepts.
fn configurations() -> Vec<(GameId, &'static str)> {
    vec![
        (GameId::Telka, "players=2"),
        (GameId::Telka, "players=4"),
        (GameId::MultiChess, "players=2"),
        (GameId::MultiChess, "players=8"),
    ]
}

/// One line fitted to whole matches of one configuration.
#[derive(Clone, Debug, Serialize)]
pub struct FixedCost {
    /// Game and options.
    pub game: String,
    /// Seats (one agent each).
    pub seats: usize,
    /// How the agents ran: `fresh` (started for each game), `kept` (reused from the
    /// game before), `fresh, sandboxed`, or `fresh, no sync` (fresh, the record not
    /// synced after the result: `--fsync never`).
    pub agents: String,
    /// Per recorded game: plies, the medians of wall and of referee CPU per match,
    /// then those of each match less the agents alone timed just after it, µs (the
    /// last two are zero for kept agents: nothing is taken off).
    pub points: Vec<[f64; 5]>,
    /// The intercept of wall time against plies: ms per game.
    pub wall_ms_per_game: f64,
    /// The slope of wall time: µs per ply.
    pub wall_us_per_ply: f64,
    /// The intercept of the referee's CPU time (every thread of the process): ms per
    /// game.
    pub cpu_ms_per_game: f64,
    /// The slope of the referee's CPU time: µs per ply.
    pub cpu_us_per_ply: f64,
    /// The agents alone: as many fresh agents of the same command started side by
    /// side by the standard library, told `quit` and reaped, with no game: median ms
    /// of wall (zero for kept agents, which are not started).
    pub alone_wall_ms: f64,
    /// The referee's CPU for the agents alone (starting and reaping them), ms.
    pub alone_cpu_ms: f64,
    /// What the referee adds to a game beyond its agents' processes: the intercept
    /// of each match's wall less the agents alone timed just after it, ms (for kept
    /// agents the wall intercept itself).
    pub own_wall_ms: f64,
    /// The same of the referee's CPU, ms.
    pub own_cpu_ms: f64,
}

/// The cost of a seat: the difference of two intercepts of one game and agent mode,
/// over the difference of their seat counts.
#[derive(Clone, Debug, Serialize)]
pub struct SeatCost {
    /// The game.
    pub game: String,
    /// How the agents ran (as in [`FixedCost::agents`]).
    pub agents: String,
    /// The seat counts compared.
    pub seats: [usize; 2],
    /// Wall ms per extra seat.
    pub wall_ms_per_seat: f64,
    /// Referee CPU ms per extra seat.
    pub cpu_ms_per_seat: f64,
    /// Wall ms per extra seat of what the referee adds (see [`FixedCost::own_wall_ms`]).
    pub own_wall_ms_per_seat: f64,
    /// Referee CPU ms per extra seat of what the referee adds.
    pub own_cpu_ms_per_seat: f64,
}

/// The fixed costs, and the seat costs derived from them.
#[derive(Clone, Debug, Serialize)]
pub struct FixedCosts {
    /// One fitted line per configuration and agent mode.
    pub lines: Vec<FixedCost>,
    /// Per game and agent mode with two seat counts.
    pub seats: Vec<SeatCost>,
}

/// Plays the games of `only` (every game when empty) at each length of `work`, then
/// replays each record `work.fixed_runs` times per agent mode.
pub fn measure(exe: &str, dir: &Path, work: Workload, only: &[GameId]) -> std::io::Result<FixedCosts> {
    // The private directories kept for the agents to come go however this returns.
    struct Release;
    impl Drop for Release {
        fn drop(&mut self) {
            crate::referee::release_private_dirs();
        }
    }
    let _release = Release;
    let sandboxed = match crate::agent::detect_sandbox(crate::agent::SandboxMode::Auto) {
        Ok(i @ Isolation::Sandboxed(_)) => Some(i),
        _ => None,
    };
    let mut lines = Vec::new();
    for (game, given) in configurations() {
        if !only.is_empty() && !only.contains(&game) {
            continue;
        }
        let options = Options::parse([given]).expect("valid options");
        let seats = game.create(&options, None).map_or(2, |g| g.seat_count());
        let records = record_lengths(exe, dir, game, &options, seats, work)?;
        let label = format!("{game} {given}");
        let fresh = |isolation: &Isolation, durabilities: &[Durability]| {
            let configs: Vec<(u32, MatchConfig)> = records
                .iter()
                .map(|(plies, options, record)| {
                    let config = replay_config(exe, dir, game, options, seats, record, isolation);
                    (*plies, config)
                })
                .collect();
            fresh_points(&configs, durabilities, isolation, work.fixed_runs)
        };
        // With two seats the same games are also played with no sync of the record
        // after the result, run by run beside the synced ones so that the machine's
        // drift falls on both alike: the difference is what the default `--fsync
        // game` costs a game on the disk the bench writes to. The sync does not
        // depend on the seats, so one seat count shows it.
        let durabilities: &[Durability] = if seats == 2 {
            &[Durability::Game, Durability::Never]
        } else {
            &[Durability::Game]
        };
        let measured = fresh(&plain(), durabilities)?;
        for (agents, (points, alone)) in ["fresh", "fresh, no sync"].into_iter().zip(measured) {
            lines.push(fit(&label, seats, agents, points, Some(alone)));
        }
        let kept = records
            .iter()
            .map(|(plies, options, record)| {
                let config = replay_config(exe, dir, game, options, seats, record, &plain());
                Ok(point(*plies, &kept_runs(&config, seats, work.fixed_runs)?))
            })
            .collect::<std::io::Result<Vec<_>>>()?;
        lines.push(fit(&label, seats, "kept", kept, None));
        if let Some(sandbox) = sandboxed.as_ref().filter(|_| seats == 2) {
            let (points, alone) = fresh(sandbox, &[Durability::Game])?.remove(0);
            lines.push(fit(&label, seats, "fresh, sandboxed", points, Some(alone)));
        }
    }
    Ok(FixedCosts {
        seats: seat_costs(&lines),
        lines,
    })
}

/// Random games of `game` cut at each length of `work`: (plies played, the options
/// in force with the cut, the record).
fn record_lengths(
    exe: &str,
    dir: &Path,
    game: GameId,
    options: &Options,
    seats: usize,
    work: Workload,
) -> std::io::Result<Vec<(u32, Options, PathBuf)>> {
    let mut out = Vec::new();
    for (k, &length) in work.fixed_lengths.iter().enumerate() {
        let pairs: Vec<String> = options
            .iter()
            .map(|(key, value)| format!("{key}={value}"))
            .chain([format!("max-plies={length}")])
            .collect();
        let cut = Options::parse(pairs.iter().map(String::as_str)).map_err(std::io::Error::other)?;
        let mut config = bench_config(exe, dir, game, &cut, 5000 + k as u64, seats, None);
        config.record = dir.join(format!("fixed-{game}-{seats}-{length}.jsonl"));
        let report = play_match(&config, &mut |_| {}).map_err(std::io::Error::other)?;
        out.push((report.plies, cut, config.record));
    }
    Ok(out)
}

/// The points of one durability's matches of fresh agents (see
/// [`FixedCost::points`]) and the medians of the agents alone after them (wall and
/// CPU, ms).
type FreshPoints = (Vec<[f64; 5]>, [f64; 2]);

/// The points of matches of fresh agents, one per `(plies, config)`, each of the
/// medians of `runs` matches (see [`FixedCost::points`]); and the medians of the
/// agents alone (wall and CPU, ms): one such pair per durability of `durabilities`,
/// whose matches take turns run by run. The agents alone are the first (shortest)
/// config's (their start is the same, their record's parse the least), timed just
/// after each match, so that the machine's drift falls on the match and on what is
/// taken off it alike.
fn fresh_points(
    configs: &[(u32, MatchConfig)],
    durabilities: &[Durability],
    isolation: &Isolation,
    runs: usize,
) -> std::io::Result<Vec<FreshPoints>> {
    let mut alone = vec![Vec::new(); durabilities.len()];
    let mut points = vec![Vec::new(); durabilities.len()];
    for (plies, config) in configs {
        let mut pairs = vec![Vec::new(); durabilities.len()];
        for _ in 0..runs.max(1) {
            for (k, &durability) in durabilities.iter().enumerate() {
                let config = MatchConfig {
                    durability,
                    ..config.clone()
                };
                let run = timed(|| {
                    play_match(&config, &mut |_| {})
                        .map(|_| ())
                        .map_err(std::io::Error::other)
                });
                // Each match creates its record anew.
                let _ = std::fs::remove_file(&config.record);
                let run = run?;
                let bare = agents_alone(&configs[0].1, isolation)?;
                alone[k].push(bare);
                pairs[k].push([run[0], run[1], run[0] - bare[0], run[1] - bare[1]]);
            }
        }
        for (k, pairs) in pairs.iter().enumerate() {
            let median = |j: usize| median_by(pairs, |p| p[j]).map_or(0.0, |p| p[j]);
            points[k].push([f64::from(*plies), median(0), median(1), median(2), median(3)]);
        }
    }
    Ok(points.into_iter().zip(alone.iter().map(|a| medians(a))).collect())
}

/// A match of replay agents playing `record` again, isolated as `isolation` says, each
/// in a private directory as a tournament's are.
fn replay_config(
    exe: &str,
    dir: &Path,
    game: GameId,
    options: &Options,
    seats: usize,
    record: &Path,
    isolation: &Isolation,
) -> MatchConfig {
    let mut config = bench_config(exe, dir, game, options, 0, seats, Some(record));
    config.isolation = isolation.clone();
    config.agent_cwd = AgentCwd::Private;
    config
}

/// Runs `f` and returns its wall and the process's CPU time (every thread: the match
/// thread and the agents' stderr drains alike), µs.
fn timed(f: impl FnOnce() -> std::io::Result<()>) -> std::io::Result<[f64; 2]> {
    let cpu = process_cpu_time();
    let start = Instant::now();
    f()?;
    let wall = start.elapsed();
    let cpu = process_cpu_time().saturating_sub(cpu);
    Ok([wall.as_secs_f64() * 1e6, cpu.as_secs_f64() * 1e6])
}

/// The agents of `config` alone, timed as [`timed`] times a match: started side by
/// side by the standard library (in the sandbox `isolation` names, if any), each told
/// `quit` at once, then reaped, a sandbox's first process too (bubblewrap leaves it
/// to its parent, as a match's stop finds). What fresh processes of these agents
/// cost any program that starts them, with no game.
fn agents_alone(config: &MatchConfig, isolation: &Isolation) -> std::io::Result<[f64; 2]> {
    let commands = config
        .agents
        .iter()
        .map(|agent| Ok((agent_argv(&agent.spec, config, isolation)?, &agent.spec.env)))
        .collect::<std::io::Result<Vec<_>>>()?;
    timed(|| {
        let mut children = Vec::new();
        let started = commands.iter().try_for_each(|((program, args), env)| {
            let child = std::process::Command::new(program)
                .args(args)
                .env_clear()
                .envs(env.iter().cloned())
                .stdin(Stdio::piped())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()?;
            children.push(child);
            Ok::<(), std::io::Error>(())
        });
        for child in &mut children {
            // Dropped at once: the end of input follows `quit`.
            if let Some(mut stdin) = child.stdin.take() {
                let _ = stdin.write_all(b"quit\n");
            }
            if started.is_err() {
                let _ = child.kill();
            }
        }
        let reaped = children.iter_mut().try_for_each(|child| child.wait().map(drop));
        if let Isolation::Sandboxed(_) = isolation {
            crate::agent::reap_escaped(Instant::now() + Duration::from_secs(5));
        }
        started.and(reaped)
    })
}

/// The program and arguments that run `spec`'s command, in the sandbox when
/// `isolation` has one, hiding what `config`'s agents may not see.
fn agent_argv(
    spec: &AgentSpec,
    config: &MatchConfig,
    isolation: &Isolation,
) -> std::io::Result<(PathBuf, Vec<String>)> {
    let words = shell_words::split(&spec.command).map_err(std::io::Error::other)?;
    let Some((program, args)) = words.split_first() else {
        return Err(std::io::Error::other("an empty agent command"));
    };
    Ok(match isolation {
        Isolation::Sandboxed(bubblewrap) => {
            let sandbox = Sandbox::new(bubblewrap.clone(), config.prepare_hidden()?, config.network, None);
            let path = std::env::var("PATH").unwrap_or_default();
            let argv = sandbox.argv(&words, &path);
            let argv = argv.iter().map(|a| a.to_string_lossy().into_owned()).collect();
            (sandbox.program().to_path_buf(), argv)
        }
        Isolation::NotIsolated(_) => (PathBuf::from(program), args.to_vec()),
    })
}

/// The medians of wall and of CPU of `runs`, ms.
fn medians(runs: &[[f64; 2]]) -> [f64; 2] {
    let median = |k: usize| median_by(runs, |r| r[k]).map_or(0.0, |r| r[k]) / 1e3;
    [median(0), median(1)]
}

/// `runs` timed matches of `config` on agents kept from the game before (the first,
/// which starts them, is not timed); the agents are then told `quit`.
fn kept_runs(config: &MatchConfig, seats: usize, runs: usize) -> std::io::Result<Vec<[f64; 2]>> {
    let keep = vec![true; seats];
    let (first, mut kept) = play_match_keeping(config, Vec::new(), &keep, &mut |_| {});
    first.map_err(std::io::Error::other)?;
    let _ = std::fs::remove_file(&config.record);
    let mut times = Vec::new();
    for _ in 0..runs.max(1) {
        let mut next = Vec::new();
        times.push(timed(|| {
            let (played, back) = play_match_keeping(config, std::mem::take(&mut kept), &keep, &mut |_| {});
            next = back;
            played.map(|_| ()).map_err(std::io::Error::other)
        })?);
        let _ = std::fs::remove_file(&config.record);
        kept = next;
    }
    for agent in kept.into_iter().flatten() {
        let _: crate::agent::Stopped = KeptAgent::retire(agent, Duration::from_secs(1));
    }
    Ok(times)
}

/// The point of one record of kept agents: its plies and the medians of its runs'
/// wall and CPU (nothing to take off).
fn point(plies: u32, runs: &[[f64; 2]]) -> [f64; 5] {
    let wall = median_by(runs, |r| r[0]).map_or(0.0, |r| r[0]);
    let cpu = median_by(runs, |r| r[1]).map_or(0.0, |r| r[1]);
    [f64::from(plies), wall, cpu, 0.0, 0.0]
}

/// The weights of the points for the times in column `y`: each point weighs the
/// inverse square of its time.
///
/// The machine's speed drifts by tens of percent over seconds, so a point's error
/// grows with its length: fitted unweighted, the 3,000-ply games' drift moved the
/// intercept by milliseconds between runs, while what a game costs whatever its
/// length is best seen in the short ones. The time is the one the weighted line
/// gives the point, found again twice from the times measured (which alone would
/// favour the points that happened to come out low).
fn weights(points: &[[f64; 5]], y: usize) -> Vec<f64> {
    let inverse_square = |t: f64| 1.0 / t.max(1.0).powi(2);
    let mut w: Vec<f64> = points.iter().map(|p| inverse_square(p[y])).collect();
    for _ in 0..2 {
        let (a, b) = weighted_line(points, y, &w);
        w = points.iter().map(|p| inverse_square(a + b * p[0])).collect();
    }
    w
}

/// The line through `points` of column `y` against plies, each point weighing its
/// weight in `w`: (intercept, slope); a single length gives the mean and no slope.
fn weighted_line(points: &[[f64; 5]], y: usize, w: &[f64]) -> (f64, f64) {
    let total: f64 = w.iter().sum();
    if points.is_empty() || total == 0.0 {
        return (0.0, 0.0);
    }
    let weighed = || points.iter().zip(w);
    let mean = |k: usize| weighed().map(|(p, w)| w * p[k]).sum::<f64>() / total;
    let (mx, my) = (mean(0), mean(y));
    let sxx: f64 = weighed().map(|(p, w)| w * (p[0] - mx).powi(2)).sum();
    if sxx == 0.0 {
        return (my, 0.0);
    }
    let sxy: f64 = weighed().map(|(p, w)| w * (p[0] - mx) * (p[y] - my)).sum();
    let slope = sxy / sxx;
    (my - slope * mx, slope)
}

/// The fitted line of one configuration and agent mode, beside its agents alone
/// (wall and CPU, ms) where they were `fresh`.
///
/// What the referee adds is fitted from each match less the agents alone after it,
/// with the weights of the whole (its noise is the match's); for kept agents, which
/// are not started, nothing is taken off and it is the whole.
fn fit(game: &str, seats: usize, agents: &str, points: Vec<[f64; 5]>, fresh: Option<[f64; 2]>) -> FixedCost {
    let (wall_w, cpu_w) = (weights(&points, 1), weights(&points, 2));
    let (wall0, wall1) = weighted_line(&points, 1, &wall_w);
    let (cpu0, cpu1) = weighted_line(&points, 2, &cpu_w);
    let (own_wall, own_cpu) = match fresh {
        Some(_) => (
            weighted_line(&points, 3, &wall_w).0,
            weighted_line(&points, 4, &cpu_w).0,
        ),
        None => (wall0, cpu0),
    };
    let alone = fresh.unwrap_or_default();
    FixedCost {
        game: game.to_string(),
        seats,
        agents: agents.to_string(),
        points,
        wall_ms_per_game: wall0 / 1e3,
        wall_us_per_ply: wall1,
        cpu_ms_per_game: cpu0 / 1e3,
        cpu_us_per_ply: cpu1,
        alone_wall_ms: alone[0],
        alone_cpu_ms: alone[1],
        own_wall_ms: own_wall / 1e3,
        own_cpu_ms: own_cpu / 1e3,
    }
}

/// The cost per extra seat of each game and agent mode measured at two seat counts.
fn seat_costs(lines: &[FixedCost]) -> Vec<SeatCost> {
    let mut out = Vec::new();
    for (k, a) in lines.iter().enumerate() {
        let game = a.game.split(' ').next().unwrap_or_default();
        let more = lines[k + 1..]
            .iter()
            .find(|b| b.agents == a.agents && b.seats > a.seats && b.game.starts_with(&format!("{game} ")));
        if let Some(b) = more {
            let extra = (b.seats - a.seats) as f64;
            out.push(SeatCost {
                game: game.to_string(),
                agents: a.agents.clone(),
                seats: [a.seats, b.seats],
                wall_ms_per_seat: (b.wall_ms_per_game - a.wall_ms_per_game) / extra,
                cpu_ms_per_seat: (b.cpu_ms_per_game - a.cpu_ms_per_game) / extra,
                own_wall_ms_per_seat: (b.own_wall_ms - a.own_wall_ms) / extra,
                own_cpu_ms_per_seat: (b.own_cpu_ms - a.own_cpu_ms) / extra,
            });
        }
    }
    out
}

impl FixedCosts {
    /// The section of the table `referee bench` prints.
    pub fn table(&self, t: &mut String) {
        t.push_str(&format!(
            "\n{:<22} {:<17} {:>24} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}\n",
            "per game (fitted)",
            "agents",
            "plies",
            "wall ms",
            "cpu ms",
            "alone",
            "alone cpu",
            "own ms",
            "own cpu",
            "µs/ply"
        ));
        for l in &self.lines {
            let plies: Vec<String> = l.points.iter().map(|p| format!("{}", p[0])).collect();
            t.push_str(&format!(
                "{:<22} {:<17} {:>24} {:>9.2} {:>9.2} {:>9.2} {:>9.2} {:>9.2} {:>9.2} {:>9.1}\n",
                l.game,
                l.agents,
                plies.join(","),
                l.wall_ms_per_game,
                l.cpu_ms_per_game,
                l.alone_wall_ms,
                l.alone_cpu_ms,
                l.own_wall_ms,
                l.own_cpu_ms,
                l.wall_us_per_ply
            ));
        }
        for s in &self.seats {
            t.push_str(&format!(
                "per extra seat, {} {}→{} seats, {}: {:.2} ms wall, {:.2} ms cpu; own {:.2} ms wall, {:.2} ms cpu\n",
                s.game,
                s.seats[0],
                s.seats[1],
                s.agents,
                s.wall_ms_per_seat,
                s.cpu_ms_per_seat,
                s.own_wall_ms_per_seat,
                s.own_cpu_ms_per_seat
            ));
        }
        t.push_str(concat!(
            "wall/cpu ms: the intercept of whole matches against plies (weighted fit); cpu: every\n",
            "thread of the referee; alone: the same fresh agents started and told quit, no game;\n",
            "own: the intercept of each match less the agents alone timed after it, what the\n",
            "referee adds; fresh, no sync: as fresh, the record not synced after the result\n",
            "(--fsync never), so fresh less it is what the default --fsync game costs a game\n",
        ));
    }
}
