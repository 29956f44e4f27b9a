//! (h) Tournament throughput: whole tournaments of instant bots at several
//! concurrencies, as a user runs them, measured by wall time, by the referee's own
//! CPU and by its agents', with every game's record read back for time losses.
//!
//! Its own room because it measures what the other figures leave out: many games at
//! once competing for the cores, agent processes started, kept and stopped by the
//! tournament's workers, and records written as a tournament writes them.

use std::path::Path;
use std::time::{Duration, Instant};

use serde::Serialize;

use super::cpus::{children_cpu_time, process_cpu_time};
use crate::agent::{AgentSpec, Isolation, Limits};
use crate::game::{ForfeitKind, GameId, Options};
use crate::record::Durability;
use crate::tournament::schedule::Format;
use crate::tournament::{self, Definition, Entrant, Restart, RunOptions};

/// The clock every game is played under: short enough that a referee which kept a
/// bot waiting would make it lose on time.
pub const TIME_CONTROL: &str = "1+0.01";

/// The concurrencies measured by a full run.
const CONCURRENCIES: [usize; 5] = [1, 2, 8, 32, 64];

/// Games a full run plays at every concurrency alike, so that what a run pays once
/// (every worker starting its agents, the tail when fewer games than workers are
/// left) and what grows with the records written (the kernel writing them back)
/// weigh the same at every concurrency. With 64 games, or four per worker, as
/// before, 8 games at once played 128 games in under a second while 64 games at once
/// paid 128 agent starts over 256 games: the loss between them was a third larger.
const GAMES: usize = 1024;

/// The two bots every measured tournament is played between.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Bots {
    /// `referee agent replay` of one game recorded first: each answer is the next
    /// recorded action, with no look at the position, so it costs about what an
    /// instant engine costs (the bot other tools measure themselves with).
    #[default]
    Replay,
    /// The built-in random agent: it reads every view and picks one of its legal
    /// actions, as a real bot reads and decides.
    Random,
}

impl Bots {
    /// How the table's heading names them.
    fn describe(self) -> &'static str {
        match self {
            Bots::Replay => "two replay agents of one recorded game",
            Bots::Random => "two built-in random agents",
        }
    }
}

/// One tournament at one concurrency.
#[derive(Clone, Debug, Serialize)]
pub struct ThroughputRow {
    /// Games played at once.
    pub concurrency: usize,
    /// Whether each worker and its agents were pinned to one CPU (`--affinity`).
    pub pinned: bool,
    /// Games played (all of them have records).
    pub games: usize,
    /// Actions in those records.
    pub actions: u64,
    /// Wall time of the whole tournament, seconds.
    pub wall_s: f64,
    /// Games finished per second of wall time.
    pub games_per_s: f64,
    /// Actions per second of wall time.
    pub actions_per_s: f64,
    /// CPU time of the referee (every thread of this process) per action, µs.
    pub referee_cpu_us_per_action: f64,
    /// CPU time of the agents (and, sandboxed, of bubblewrap) per action, µs.
    pub agents_cpu_us_per_action: f64,
    /// CPU time of the referee and its agents over wall time and the cores: 1.0 is
    /// every core busy all the time.
    pub cores_busy: f64,
    /// Forfeits on time (a seat that lost its game on time), read from the records.
    pub time_losses: usize,
    /// Forfeits of any kind, read from the records.
    pub forfeits: usize,
}

/// Tournament throughput at each concurrency.
#[derive(Clone, Debug, Serialize)]
pub struct Throughput {
    /// The game and its options.
    pub game: String,
    /// The two bots of every game.
    pub bots: Bots,
    /// The clock of every game.
    pub time_control: String,
    /// How the agents were isolated.
    pub isolation: String,
    /// Cores available to this process.
    pub cpus: usize,
    /// One row per concurrency.
    pub rows: Vec<ThroughputRow>,
}

/// Plays Telka tournaments between two `bots` in `dir`, agents isolated as
/// `isolation` says: at each concurrency of `at` (by default five; two on a `quick`
/// run, which plays short games), unpinned and then pinned as `tournament
/// --affinity` pins (where this thread can be pinned), so that the two of one
/// concurrency meet the same phase of the machine.
pub fn measure(
    exe: &str,
    dir: &Path,
    quick: bool,
    at: &[usize],
    games: Option<usize>,
    bots: Bots,
    isolation: &Isolation,
) -> std::io::Result<Throughput> {
    let given = if quick { "max-plies=40" } else { "players=2" };
    let options = Options::parse([given]).expect("valid options");
    let options = GameId::Telka
        .create(&options, None)
        .map_err(std::io::Error::other)?
        .options();
    let mut concurrencies: Vec<usize> = match (at.is_empty(), quick) {
        (false, _) => at.to_vec(),
        (true, true) => CONCURRENCIES[..2].to_vec(),
        (true, false) => CONCURRENCIES.to_vec(),
    };
    let mut seen = std::collections::HashSet::new();
    concurrencies.retain(|c| seen.insert(*c));
    let entrants = entrants(exe, dir, &options, bots)?;
    let pinnings: &[bool] = if crate::agent::affinity::can_pin() {
        &[false, true]
    } else {
        &[false]
    };
    let mut rows = Vec::new();
    for concurrency in concurrencies {
        // A quick run plays only a game per worker. Even, so each bot sits in each
        // seat as often as the other (the tournament requires it).
        let games = match games {
            Some(games) => games,
            None if quick => concurrency.max(4).next_multiple_of(2),
            None => GAMES,
        };
        for &pinned in pinnings {
            let at = At {
                concurrency,
                pinned,
                games,
            };
            rows.push(tournament_at(exe, dir, &options, &entrants, at, isolation)?);
        }
    }
    Ok(Throughput {
        game: format!("{} {given}", GameId::Telka),
        bots,
        time_control: TIME_CONTROL.to_string(),
        isolation: isolation.describe(),
        cpus: crate::agent::available_cpus(),
        rows,
    })
}

/// How one tournament of the measurement is run.
#[derive(Clone, Copy)]
struct At {
    concurrency: usize,
    pinned: bool,
    games: usize,
}

/// One tournament run `at`, timed; its records are then read back for what they say
/// was played.
fn tournament_at(
    exe: &str,
    dir: &Path,
    options: &Options,
    entrants: &[Entrant],
    at: At,
    isolation: &Isolation,
) -> std::io::Result<ThroughputRow> {
    let At {
        concurrency,
        pinned,
        games,
    } = at;
    let out = dir.join(format!("throughput-{concurrency}"));
    let _ = std::fs::remove_dir_all(&out);
    let def = definition(options, entrants, games);
    let opts = run_options(exe, &out, at, isolation);
    let (cpu, agents, start) = (process_cpu_time(), children_cpu_time(), Instant::now());
    tournament::run(&def, &opts, &mut |_, _| {}).map_err(std::io::Error::other)?;
    let wall = start.elapsed();
    let cpu = process_cpu_time().saturating_sub(cpu);
    let agents = children_cpu_time().saturating_sub(agents);
    let (_, results) = tournament::load_dir(&out).map_err(std::io::Error::other)?;
    let _ = std::fs::remove_dir_all(&out);
    if results.len() != games {
        return Err(std::io::Error::other(format!(
            "throughput at concurrency {concurrency}: {} of {games} games have a record",
            results.len()
        )));
    }
    let actions: u64 = results.iter().map(|r| u64::from(r.plies)).sum();
    let forfeits = || results.iter().flat_map(|r| &r.forfeits);
    let per_action = |d: Duration| d.as_secs_f64() * 1e6 / actions.max(1) as f64;
    let cores = crate::agent::available_cpus() as f64;
    Ok(ThroughputRow {
        concurrency,
        pinned,
        games,
        actions,
        wall_s: wall.as_secs_f64(),
        games_per_s: games as f64 / wall.as_secs_f64(),
        actions_per_s: actions as f64 / wall.as_secs_f64(),
        referee_cpu_us_per_action: per_action(cpu),
        agents_cpu_us_per_action: per_action(agents),
        cores_busy: (cpu + agents).as_secs_f64() / (wall.as_secs_f64() * cores),
        time_losses: forfeits()
            .filter(|(_, kind)| *kind == ForfeitKind::Timeout)
            .count(),
        forfeits: forfeits().count(),
    })
}

/// The two entrants playing as `bots` says: replay agents replay a game the random
/// agents play first, in `dir`, with `options`.
fn entrants(exe: &str, dir: &Path, options: &Options, bots: Bots) -> std::io::Result<Vec<Entrant>> {
    let command = match bots {
        Bots::Random => "builtin:random".to_string(),
        Bots::Replay => {
            let config = super::bench_config(exe, dir, GameId::Telka, options, 1, 2, None);
            super::play_match(&config, &mut |_| {}).map_err(std::io::Error::other)?;
            let record = shell_words::quote(&config.record.to_string_lossy()).into_owned();
            format!("{exe} agent replay {record}")
        }
    };
    Ok(["first", "second"]
        .into_iter()
        .map(|name| Entrant::new(name.to_string(), command.clone()))
        .collect())
}

/// `entrants`, `games` games of Telka under [`TIME_CONTROL`].
fn definition(options: &Options, entrants: &[Entrant], games: usize) -> Definition {
    Definition {
        game: GameId::Telka.to_string(),
        options: options.clone(),
        entrants: entrants.to_vec(),
        format: Format::RoundRobin,
        games,
        rounds: 1,
        seed: 1,
        random_plies: 0,
        openings: Vec::new(),
        openings_order: Default::default(),
        time_control: TIME_CONTROL.to_string(),
        sprt: None,
    }
}

/// The run as `referee tournament` carries it out on its defaults, `--affinity` as
/// `at` says.
fn run_options(exe: &str, out: &Path, at: At, isolation: &Isolation) -> RunOptions {
    RunOptions {
        out: out.to_path_buf(),
        concurrency: at.concurrency,
        affinity: at.pinned,
        shard: None,
        shared: None,
        resume: false,
        margin: Duration::from_millis(50),
        startup: Duration::from_secs(10),
        quit_grace: Duration::from_secs(1),
        env: AgentSpec::new("").env,
        limits: Limits::default(),
        exe: exe.to_string(),
        durability: Durability::Game,
        isolation: isolation.clone(),
        network: false,
        restart: Restart::OnFailure,
        log_dir: None,
        play_unready: false,
        sign: None,
        hidden: Vec::new(),
    }
}

impl Throughput {
    /// The table `referee bench --throughput` prints.
    pub fn table(&self) -> String {
        let mut t = format!(
            "tournament throughput: {}, {}, --tc {}, {} CPUs\nagents: {}\n",
            self.game,
            self.bots.describe(),
            self.time_control,
            self.cpus,
            self.isolation
        );
        t.push_str(&format!(
            "{:>11} {:>6} {:>6} {:>8} {:>8} {:>8} {:>10} {:>12} {:>11} {:>6} {:>5} {:>8}\n",
            "concurrency",
            "pinned",
            "games",
            "actions",
            "wall s",
            "games/s",
            "actions/s",
            "referee µs/a",
            "agents µs/a",
            "busy",
            "time",
            "forfeits"
        ));
        for r in &self.rows {
            t.push_str(&format!(
                "{:>11} {:>6} {:>6} {:>8} {:>8.2} {:>8.1} {:>10.0} {:>12.1} {:>11.1} {:>6.2} {:>5} {:>8}\n",
                r.concurrency,
                if r.pinned { "yes" } else { "no" },
                r.games,
                r.actions,
                r.wall_s,
                r.games_per_s,
                r.actions_per_s,
                r.referee_cpu_us_per_action,
                r.agents_cpu_us_per_action,
                r.cores_busy,
                r.time_losses,
                r.forfeits
            ));
        }
        t.push_str(
            "pinned: each worker and its agents on one CPU (tournament --affinity); µs/a: CPU per action;\nbusy: CPU of referee and agents over wall time × CPUs; time: games lost on time\n",
        );
        t
    }
}
