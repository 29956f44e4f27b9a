//! `referee tournament` and `referee merge`.

use std::io::IsTerminal;
use std::path::PathBuf;

use anyhow::{anyhow, Context};
use clap::Args;

use super::args::{AgentArgs, ClockArgs};
use super::live::Live;
use super::{print, Failure, EXIT_INTERRUPTED, EXIT_OK};
use crate::game::{GameId, Options};
use crate::record::Durability;
use crate::referee::MatchError;
use crate::tournament::schedule::{Format, Shard};
use crate::tournament::stats::Sprt;
use crate::tournament::{
    self, entrants, openings, Definition, Entrant, OpeningOrder, RunOptions, SprtDef, TournamentError,
};

/// Arguments of `referee tournament`.
#[derive(Debug, Args)]
pub struct TournamentArgs {
    /// Game: pegchow, telka, idoubtit or multichess.
    #[arg(long, value_parser = super::args::game_id)]
    game: GameId,
    /// Game option KEY=VALUE, repeatable.
    #[arg(short = 'o', long = "option", value_name = "KEY=VALUE")]
    options: Vec<String>,
    /// An entrant: `name=N cmd='…' [dir=D] [restart=WHEN] [option.K=V]…`, or just a
    /// command;
    /// `builtin:random` / `builtin:greedy` are the built-in agents. Repeatable.
    #[arg(long = "agent", value_name = "SPEC")]
    agents: Vec<String>,
    /// Entrants from a JSON array or a TOML file of [[agent]] tables (name, cmd, dir,
    /// restart, options).
    #[arg(long, value_name = "FILE")]
    agents_file: Option<PathBuf>,
    /// round-robin: every table of entrants; gauntlet: the first against the rest.
    #[arg(long, value_enum, default_value = "round-robin")]
    format: Format,
    /// Games per table, a multiple of the seat count (default: one per seating).
    #[arg(long, value_parser = super::args::positive::<usize>)]
    games: Option<usize>,
    /// Times the schedule is repeated.
    #[arg(long, default_value_t = 1, value_parser = super::args::positive::<usize>)]
    rounds: usize,
    /// Games played at once.
    #[arg(long, default_value_t = 1, value_parser = super::args::positive::<usize>)]
    concurrency: usize,
    /// When an entrant's process is started again: before every game, or only after
    /// a game it forfeited (it is kept between games otherwise); `restart=` of an
    /// entrant overrides it.
    #[arg(long, value_enum, value_name = "WHEN", default_value = "on-failure")]
    restart: tournament::Restart,
    #[command(flatten)]
    clock: ClockArgs,
    #[command(flatten)]
    agent: AgentArgs,
    /// Seed of the schedule, openings and built-in agents.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Random opening actions per game (the same for the games of a seating cycle).
    #[arg(long, value_name = "K", default_value_t = 0)]
    random_plies: usize,
    /// Opening suite: one start state per line (the game's state string); each seating
    /// cycle starts from the next line. Blank lines and # comments are skipped.
    #[arg(long, value_name = "FILE")]
    openings: Option<PathBuf>,
    /// The order the suite's lines are used in: sequential (file order), or random
    /// (each pass shuffled from --seed).
    #[arg(
        long,
        value_enum,
        value_name = "ORDER",
        default_value = "sequential",
        requires = "openings"
    )]
    openings_order: OpeningOrder,
    /// Print the current table every N finished games on stderr (0: only at the end).
    #[arg(long, value_name = "N", default_value_t = 10)]
    report_every: usize,
    /// Stop early on a decision between the first two entrants: elo0=… elo1=…
    /// alpha=… beta=… (two-seat games).
    #[arg(long, num_args = 1..=4, value_name = "KEY=VALUE")]
    sprt: Vec<String>,
    /// Output directory: tournament.json, games/, summary.json.
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Continue the tournament in --out, skipping finished games.
    #[arg(long, requires = "out")]
    resume: bool,
    /// Play only slice I of N of the schedule's seating cycles (combine with
    /// `referee merge`).
    #[arg(long, value_name = "I/N")]
    shard: Option<String>,
    /// A directory the shards of this tournament share: each appends its finished
    /// pairs there and all stop once their combined SPRT decides (needs --sprt).
    #[arg(long, value_name = "DIR", requires = "sprt")]
    shared: Option<PathBuf>,
    /// Print the summary as JSON instead of a table.
    #[arg(long)]
    json: bool,
}

/// Runs `referee tournament`.
pub fn run(args: TournamentArgs) -> Result<u8, Failure> {
    let id = args.game;
    let options = Options::parse(args.options.iter().map(String::as_str)).map_err(Failure::usage)?;
    let seats = id.create(&options, None).map_err(Failure::usage)?.seat_count();
    let mut list: Vec<Entrant> = match &args.agents_file {
        Some(path) => Entrant::load(path).map_err(|e| Failure::usage(anyhow!(e)))?,
        None => Vec::new(),
    };
    for spec in &args.agents {
        list.push(Entrant::parse(spec).map_err(|e| Failure::usage(anyhow!(e)))?);
    }
    entrants::dedupe_names(&mut list);
    let control = args.clock.control(None)?;
    let sprt = if args.sprt.is_empty() {
        None
    } else {
        if seats != 2 {
            return Err(Failure::usage(anyhow!("--sprt is for two-seat games")));
        }
        let s = Sprt::parse(&args.sprt).map_err(|e| Failure::usage(anyhow!(e)))?;
        Some(SprtDef {
            elo0: s.elo0,
            elo1: s.elo1,
            alpha: s.alpha,
            beta: s.beta,
        })
    };
    let def = Definition {
        game: id.to_string(),
        options: id.create(&options, None).map_err(Failure::usage)?.options(),
        entrants: list,
        format: args.format,
        games: args.games.unwrap_or(seats),
        rounds: args.rounds,
        seed: args.seed,
        random_plies: args.random_plies,
        openings: match &args.openings {
            Some(path) => openings::load(path, id, &options).map_err(|e| Failure::usage(anyhow!(e)))?,
            None => Vec::new(),
        },
        openings_order: args.openings_order,
        time_control: control.to_string(),
        sprt,
    };
    // Check the schedule before creating anything.
    def.schedule().map_err(Failure::usage)?;
    let shard = args
        .shard
        .as_deref()
        .map(Shard::parse)
        .transpose()
        .map_err(|e| Failure::usage(anyhow!(e)))?;
    let out = args.out.clone().unwrap_or_else(|| {
        let secs = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0);
        PathBuf::from("tournaments").join(format!("{}-{secs}", def.game))
    });
    let exe = std::env::current_exe()
        .context("cannot find the referee executable")
        .map_err(Failure::failed)?;
    let opts = RunOptions {
        out: out.clone(),
        concurrency: args.concurrency,
        shard,
        shared: args.shared.clone(),
        resume: args.resume,
        margin: args.clock.margin(),
        startup: args.agent.startup(),
        quit_grace: args.agent.quit_grace(),
        env: args.agent.env(),
        limits: args.agent.limits(),
        exe: shell_words::quote(&exe.to_string_lossy()).into_owned(),
        durability: Durability::Game,
        isolation: args.agent.isolation()?,
        network: args.agent.network(),
        restart: args.restart,
    };
    super::match_cmd::watch_interrupt()?;
    let mut live =
        Live::new(&def, args.report_every, std::io::stderr().is_terminal()).map_err(Failure::usage)?;
    let mut report =
        |event: tournament::Event<'_>, results: &[tournament::GameResult]| live.event(event, results);
    let outcome = tournament::run(&def, &opts, &mut report);
    // A signal between two games stops the workers without an error: still 130.
    if crate::referee::interrupted() {
        let why = outcome.err().map_or_else(String::new, |e| format!(" ({e})"));
        return Err(Failure {
            code: EXIT_INTERRUPTED,
            error: anyhow!("interrupted{why}; `--resume --out {}` continues", out.display()),
        });
    }
    let results = match outcome {
        Ok(r) => r,
        // As in `referee match`: an entrant that cannot be started is bad input, and
        // so is a record in --out that cannot be counted.
        Err(
            e @ TournamentError::Setup(_)
            | e @ TournamentError::Record { .. }
            | e @ TournamentError::Shared { .. }
            | e @ TournamentError::Game {
                source: MatchError::Agent { .. },
                ..
            },
        ) => return Err(Failure::usage(e)),
        Err(e) => return Err(Failure::failed(e)),
    };
    // `summary.json` holds the same figures: the run wrote it after its last game.
    let summary = tournament::summarize(&def, &results).map_err(Failure::failed)?;
    let json = serde_json::to_string_pretty(&summary).expect("summaries serialise");
    if summary.repeated > 0 {
        eprintln!(
            "warning: {}",
            tournament::repeat_warning(summary.repeated, summary.finished)
        );
    }
    if args.json {
        print(&(json + "\n"))?;
    } else {
        print(&summary.table())?;
        print(&format!("records: {}\n", out.join("games").display()))?;
    }
    Ok(EXIT_OK)
}

/// Arguments of `referee merge`.
#[derive(Debug, Args)]
pub struct MergeArgs {
    /// Output directories of the shards of one tournament.
    #[arg(required = true)]
    dirs: Vec<PathBuf>,
    /// Print the summary as JSON.
    #[arg(long)]
    json: bool,
}

/// Runs `referee merge`: the statistics of all shards together.
pub fn merge(args: MergeArgs) -> Result<u8, Failure> {
    let (def, results) = tournament::merge(&args.dirs).map_err(Failure::usage)?;
    let summary = tournament::summarize(&def, &results).map_err(Failure::failed)?;
    if args.json {
        print(&(serde_json::to_string_pretty(&summary).expect("summaries serialise") + "\n"))?;
    } else {
        print(&summary.table())?;
        if summary.finished < summary.scheduled {
            print(&format!(
                "({} games not played yet)\n",
                summary.scheduled - summary.finished
            ))?;
        }
    }
    Ok(EXIT_OK)
}
