//! `referee tournament` and `referee merge`.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};

use crate::agent::HiddenPath;

use anyhow::{anyhow, Context};
use clap::Args;

use super::args::{AgentArgs, ClockArgs, UnisolatedWarning};
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

/// Arguments of `referee tournament`. Those that define the tournament are
/// options without defaults here, so that a `--resume` can tell which were given:
/// the stored tournament supplies the rest, and a given one must agree with it.
#[derive(Debug, Args)]
pub struct TournamentArgs {
    /// Game: pegchow, telka, idoubtit or multichess (with --resume: from
    /// tournament.json).
    #[arg(long, value_parser = super::args::game_id, required_unless_present = "resume")]
    game: Option<GameId>,
    /// Game option KEY=VALUE, repeatable.
    #[arg(short = 'o', long = "option", value_name = "KEY=VALUE")]
    options: Vec<String>,
    /// An entrant: `name=N cmd='…' [dir=D] [tc=TC|st=S] [restart=always|on-failure]
    /// [option.K=V]…`, or just a command; `builtin:random` / `builtin:greedy` are the
    /// built-in agents. Repeatable.
    #[arg(long = "agent", value_name = "SPEC")]
    agents: Vec<String>,
    /// Entrants from a JSON array or a TOML file of [[agent]] tables (name, cmd, dir,
    /// tc, st, restart, options).
    #[arg(long, value_name = "FILE")]
    agents_file: Option<PathBuf>,
    /// round-robin: every table of entrants; gauntlet: the first against the rest
    /// (default: round-robin).
    #[arg(long, value_enum)]
    format: Option<Format>,
    /// Games per table, a multiple of the seat count (default: one per seating).
    #[arg(long, value_parser = super::args::positive::<usize>)]
    games: Option<usize>,
    /// Times the schedule is repeated (default: 1).
    #[arg(long, value_parser = super::args::positive::<usize>)]
    rounds: Option<usize>,
    /// Games played at once.
    #[arg(long, default_value_t = 1, value_parser = super::args::positive::<usize>)]
    concurrency: usize,
    /// Pin each of the games played at once, the referee's thread and its agents, to
    /// a CPU of its own (round robin when games outnumber CPUs); a multi-threaded
    /// engine then gets one CPU. Linux only.
    #[arg(long)]
    affinity: bool,
    /// The pages written when the run ends: all (index.html and every game's viewer),
    /// index (index.html alone, linking the records) or none.
    #[arg(long, value_enum, default_value = "all")]
    pages: super::tournament_html::Pages,
    /// When an entrant's process is started again: before every game, or only after
    /// a game it forfeited (it is kept between games otherwise); `restart=` of an
    /// entrant overrides it.
    #[arg(long, value_enum, value_name = "WHEN", default_value = "on-failure")]
    restart: tournament::Restart,
    #[command(flatten)]
    clock: ClockArgs,
    #[command(flatten)]
    agent: AgentArgs,
    /// Seed of the schedule, openings and built-in agents (default: 1).
    #[arg(long)]
    seed: Option<u64>,
    /// Random opening actions per game, the same for the games of a seating cycle
    /// (default: 0).
    #[arg(long, value_name = "K")]
    random_plies: Option<usize>,
    /// Opening suite: one start state per line (the game's state string); each seating
    /// cycle starts from the next line. Blank lines and # comments are skipped.
    #[arg(long, value_name = "FILE")]
    openings: Option<PathBuf>,
    /// The order the suite's lines are used in: sequential (file order), or random
    /// (each pass shuffled from --seed) (default: sequential).
    #[arg(long, value_enum, value_name = "ORDER", requires = "openings")]
    openings_order: Option<OpeningOrder>,
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
    /// Continue the tournament in --out, skipping finished games; what defines it
    /// comes from its tournament.json.
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
    /// Keep each game's transcripts and stderr per seat in DIR/game-NNNNN/.
    #[arg(long, value_name = "DIR")]
    log_dir: Option<PathBuf>,
    /// Sign every game's record with this secret key (`referee keygen`).
    #[arg(long, value_name = "FILE")]
    sign: Option<PathBuf>,
    /// Score an entrant that fails the handshake in its first games as forfeits
    /// instead of stopping the tournament.
    #[arg(long)]
    play_unready: bool,
    /// Print the summary as JSON instead of a table.
    #[arg(long)]
    json: bool,
}

/// The entrants `--agents-file` and `--agent` give, in that order, named uniquely;
/// a relative `dir=` of an `--agent` is from the current directory.
fn given_entrants(args: &TournamentArgs) -> Result<Vec<Entrant>, Failure> {
    let mut list: Vec<Entrant> = match &args.agents_file {
        Some(path) => Entrant::load(path).map_err(|e| Failure::usage(anyhow!(e)))?,
        None => Vec::new(),
    };
    let here = std::env::current_dir()
        .context("cannot read the current directory")
        .map_err(Failure::failed)?;
    for spec in &args.agents {
        let mut e = Entrant::parse(spec).map_err(|e| Failure::usage(anyhow!(e)))?;
        e.anchor_dir(&here).map_err(|e| Failure::usage(anyhow!(e)))?;
        list.push(e);
    }
    entrants::dedupe_names(&mut list);
    Ok(list)
}

/// The SPRT `--sprt` gives, if any, for a game of `seats` seats.
fn given_sprt(args: &TournamentArgs, seats: usize) -> Result<Option<SprtDef>, Failure> {
    if args.sprt.is_empty() {
        return Ok(None);
    }
    if seats != 2 {
        return Err(Failure::usage(anyhow!("--sprt is for two-seat games")));
    }
    let s = Sprt::parse(&args.sprt).map_err(|e| Failure::usage(anyhow!(e)))?;
    Ok(Some(SprtDef {
        elo0: s.elo0,
        elo1: s.elo1,
        alpha: s.alpha,
        beta: s.beta,
    }))
}

/// The game options `-o` gives for `id`, normalised (defaults filled in).
fn given_options(args: &TournamentArgs, id: GameId) -> Result<Options, Failure> {
    let options = Options::parse(args.options.iter().map(String::as_str)).map_err(Failure::usage)?;
    Ok(id.create(&options, None).map_err(Failure::usage)?.options())
}

/// A new tournament from the arguments alone.
fn fresh_definition(args: &TournamentArgs, id: GameId) -> Result<Definition, Failure> {
    let options = given_options(args, id)?;
    let seats = id.create(&options, None).map_err(Failure::usage)?.seat_count();
    let openings = given_openings(args, id, &options)?.unwrap_or_default();
    Ok(Definition {
        game: id.to_string(),
        options,
        entrants: given_entrants(args)?,
        format: args.format.unwrap_or(Format::RoundRobin),
        games: args.games.unwrap_or(seats),
        rounds: args.rounds.unwrap_or(1),
        seed: args.seed.unwrap_or(1),
        random_plies: args.random_plies.unwrap_or(0),
        openings,
        openings_order: args.openings_order.unwrap_or_default(),
        time_control: args.clock.control(None)?.to_string(),
        sprt: given_sprt(args, seats)?,
    })
}

/// The opening suite's lines `--openings` gives, if any, checked for `id`.
fn given_openings(
    args: &TournamentArgs,
    id: GameId,
    options: &Options,
) -> Result<Option<Vec<String>>, Failure> {
    args.openings
        .as_ref()
        .map(|path| openings::load(path, id, options).map_err(|e| Failure::usage(anyhow!(e))))
        .transpose()
}

/// The tournament to play: with `--resume`, the one stored in `<out>/tournament.json`
/// (a new one if there is none yet and `--game` is given), else the arguments'.
fn definition(args: &TournamentArgs) -> Result<Definition, Failure> {
    let stored = match (&args.out, args.resume) {
        (Some(out), true) => stored_definition(out)?,
        _ => None,
    };
    match (stored, args.game) {
        (Some(mut stored), _) => {
            check_given(args, &stored)?;
            // How an entrant's processes restart changes no game: entrants given
            // again may choose it anew for this run.
            if !args.agents.is_empty() || args.agents_file.is_some() {
                for (kept, given) in stored.entrants.iter_mut().zip(given_entrants(args)?) {
                    kept.restart = given.restart;
                }
            }
            Ok(stored)
        }
        (None, Some(id)) => fresh_definition(args, id),
        (None, None) => Err(Failure::usage(anyhow!(
            "{}: no tournament to resume; give --game and the entrants to start one",
            args.out
                .as_deref()
                .unwrap_or(Path::new("."))
                .join("tournament.json")
                .display()
        ))),
    }
}

/// The definition stored in `out`, if there is one.
fn stored_definition(out: &Path) -> Result<Option<Definition>, Failure> {
    let meta = out.join("tournament.json");
    match std::fs::read_to_string(&meta) {
        Ok(text) => serde_json::from_str(&text)
            .map(Some)
            .map_err(|e| Failure::usage(anyhow!("{}: {e}", meta.display()))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(Failure::usage(anyhow!("{}: {e}", meta.display()))),
    }
}

/// Refuses every argument given beside `--resume` that disagrees with the stored
/// tournament, naming the first.
fn check_given(args: &TournamentArgs, stored: &Definition) -> Result<(), Failure> {
    let id = GameId::parse(&stored.game).map_err(Failure::usage)?;
    let seats = stored.seats().map_err(Failure::usage)?;
    let mut differ: Vec<String> = Vec::new();
    let mut check = |flag: &str, same: bool| {
        if !same {
            differ.push(flag.to_string());
        }
    };
    if let Some(g) = args.game {
        check("--game", g == id);
    }
    if !args.options.is_empty() {
        check("--option", given_options(args, id)? == stored.options);
    }
    if !args.agents.is_empty() || args.agents_file.is_some() {
        check(
            "--agent/--agents-file",
            same_entrants(&given_entrants(args)?, &stored.entrants),
        );
    }
    check("--format", args.format.is_none_or(|f| f == stored.format));
    check("--games", args.games.is_none_or(|g| g == stored.games));
    check("--rounds", args.rounds.is_none_or(|r| r == stored.rounds));
    check("--seed", args.seed.is_none_or(|s| s == stored.seed));
    check(
        "--random-plies",
        args.random_plies.is_none_or(|k| k == stored.random_plies),
    );
    if let Some(lines) = given_openings(args, id, &stored.options)? {
        check("--openings", lines == stored.openings);
    }
    check(
        "--openings-order",
        args.openings_order.is_none_or(|o| o == stored.openings_order),
    );
    if let Some(tc) = args.clock.given() {
        check("--tc/--st", tc.to_string() == stored.time_control);
    }
    if !args.sprt.is_empty() {
        check("--sprt", given_sprt(args, seats)? == stored.sprt);
    }
    match differ.first() {
        None => Ok(()),
        Some(flag) => Err(Failure::usage(anyhow!(
            "{flag} disagrees with the tournament stored in {}: `--resume --out {0}` alone continues it",
            args.out.as_deref().unwrap_or(Path::new(".")).display()
        ))),
    }
}

/// Whether the entrants given are the stored ones, compared as stored (the file
/// keeps options sorted by name), but for `restart=`, which changes no game.
fn same_entrants(given: &[Entrant], stored: &[Entrant]) -> bool {
    let round_trip = |list: &[Entrant]| {
        let list: Vec<Entrant> = list
            .iter()
            .map(|e| Entrant {
                restart: None,
                ..e.clone()
            })
            .collect();
        serde_json::to_value(list).ok()
    };
    round_trip(given).is_some_and(|g| Some(g) == round_trip(stored))
}

/// Runs `referee tournament`.
pub fn run(args: TournamentArgs) -> Result<u8, Failure> {
    let def = definition(&args)?;
    // Check the schedule before creating anything.
    def.schedule().map_err(Failure::usage)?;
    let (opts, mut warning) = run_options(&args, &def)?;
    super::match_cmd::watch_interrupt()?;
    let mut live =
        Live::new(&def, args.report_every, std::io::stderr().is_terminal()).map_err(Failure::usage)?;
    warning.arm();
    let mut report = |event: tournament::Event<'_>, results: &[tournament::GameResult]| {
        // A game was played: the run is under way.
        warning.say();
        live.event(event, results)
    };
    let outcome = tournament::run(&def, &opts, &mut report);
    // A signal between two games stops the workers without an error: still 130.
    if crate::referee::interrupted() {
        let why = outcome.err().map_or_else(String::new, |e| format!(" ({e})"));
        return Err(Failure {
            code: EXIT_INTERRUPTED,
            error: anyhow!(
                "interrupted{why}; `--resume --out {}` continues",
                opts.out.display()
            ),
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
            | e @ TournamentError::Entrant { .. }
            | e @ TournamentError::Game {
                source: MatchError::Agent { .. },
                ..
            },
        ) => return Err(Failure::usage(e)),
        Err(e) => return Err(Failure::failed(e)),
    };
    // The pages go with the final summary: the last `summary.json` is written. A
    // page that cannot be written fails the run, but only after the table is
    // printed: the games were played and counted all the same.
    let pages = super::tournament_html::write(&opts.out, &def, &results, opts.concurrency, args.pages);
    let indexed = pages.is_ok() && args.pages != super::tournament_html::Pages::None;
    print_summary(&args, &def, &results, &opts.out, indexed)?;
    pages.map_err(|e| Failure::failed(e.context("the tournament's pages")))?;
    Ok(EXIT_OK)
}

/// How this run is carried out: everything the arguments say beyond the tournament.
fn run_options(args: &TournamentArgs, def: &Definition) -> Result<(RunOptions, UnisolatedWarning), Failure> {
    let shard = args
        .shard
        .as_deref()
        .map(Shard::parse)
        .transpose()
        .map_err(|e| Failure::usage(anyhow!(e)))?;
    let out = args.out.clone().unwrap_or_else(|| {
        let secs = crate::wall_clock::unix_seconds(crate::wall_clock::now());
        PathBuf::from("tournaments").join(format!("{}-{secs}", def.game))
    });
    let exe = std::env::current_exe()
        .context("cannot find the referee executable")
        .map_err(Failure::failed)?;
    let (isolation, warning) = args.agent.isolation()?;
    let opts = RunOptions {
        out,
        concurrency: args.concurrency,
        affinity: args.affinity,
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
        isolation,
        network: args.agent.network(),
        restart: args.restart,
        log_dir: args.log_dir.clone(),
        play_unready: args.play_unready,
        sign: args.sign.as_deref().map(super::pbm::secret_key).transpose()?,
        hidden: hidden_paths(args),
    };
    Ok((opts, warning))
}

/// What agents may not see besides the output directory: the shards' shared
/// directory, the whole log directory, the key, the agents and openings files, and
/// `--hide`.
fn hidden_paths(args: &TournamentArgs) -> Vec<HiddenPath> {
    let dirs = args
        .shared
        .iter()
        .chain(&args.log_dir)
        .cloned()
        .map(HiddenPath::dir);
    let files = [&args.sign, &args.agents_file, &args.openings]
        .into_iter()
        .flatten()
        .cloned()
        .map(HiddenPath::file);
    dirs.chain(files).chain(args.agent.hidden()).collect()
}

/// Prints the final table (or its JSON) on stdout, and the repeat warning if any;
/// names the index page if `pages` were written.
fn print_summary(
    args: &TournamentArgs,
    def: &Definition,
    results: &[tournament::GameResult],
    out: &Path,
    pages: bool,
) -> Result<(), Failure> {
    // `summary.json` holds the same figures: the run wrote it after its last game.
    let summary = tournament::summarize(def, results).map_err(Failure::failed)?;
    if summary.repeated > 0 {
        eprintln!(
            "warning: {}",
            tournament::repeat_warning(summary.repeated, summary.finished)
        );
    }
    if args.json {
        let json = serde_json::to_string_pretty(&summary).expect("summaries serialise");
        print(&(json + "\n"))?;
    } else {
        print(&summary.table())?;
        print(&format!("records: {}\n", out.join("games").display()))?;
        if pages {
            print(&format!("pages: {}\n", out.join("index.html").display()))?;
        }
    }
    Ok(())
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
