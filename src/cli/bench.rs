//! `referee bench`: the referee measured against the pipe round trip.

use clap::Args;

use super::{print, Failure, EXIT_OK};
use crate::agent::SandboxMode;
use crate::game::GameId;

/// Arguments of `referee bench`.
#[derive(Debug, Args)]
pub struct BenchArgs {
    /// Print JSON instead of a table.
    #[arg(long)]
    json: bool,
    /// Every measurement once, on a tiny workload (a smoke run; its figures are not
    /// worth quoting).
    #[arg(long)]
    quick: bool,
    /// Measure only this game (repeatable; every game by default).
    #[arg(long, value_parser = super::args::game_id, conflicts_with = "throughput")]
    game: Vec<GameId>,
    /// Instead: whole Telka tournaments of instant bots at concurrency 1, 2, 8, 32
    /// and 64 under --tc 1+0.01, unpinned and (where threads can be pinned) pinned:
    /// games/s, actions/s, CPU per action, time losses.
    #[arg(long)]
    throughput: bool,
    /// With --throughput: isolate the agents (auto: where the machine supports it).
    #[arg(long, value_enum, default_value = "auto", requires = "throughput")]
    sandbox: SandboxMode,
    /// With --throughput: measure at this many games at once instead, 1 to 1024
    /// (repeatable; each value once, in the order given).
    #[arg(long, requires = "throughput", value_parser = clap::value_parser!(u16).range(1..=1024))]
    concurrency: Vec<u16>,
    /// With --throughput: games played at each concurrency and pinning, an even
    /// number (default: 1024, or a game per worker with --quick).
    #[arg(long, requires = "throughput", value_parser = even_games)]
    games: Option<usize>,
    /// With --throughput: the two bots of every game.
    #[arg(long, value_enum, default_value = "replay", requires = "throughput")]
    bots: crate::bench::Bots,
}

/// Runs `referee bench`.
pub fn run(args: BenchArgs) -> Result<u8, Failure> {
    let exe = std::env::current_exe().map_err(Failure::failed)?;
    let exe = shell_words::quote(&exe.to_string_lossy()).into_owned();
    if args.throughput {
        let isolation = crate::agent::detect_sandbox(args.sandbox).map_err(Failure::usage)?;
        let at: Vec<usize> = args.concurrency.iter().map(|&c| usize::from(c)).collect();
        let measured = crate::bench::run_throughput(&exe, args.quick, &at, args.games, args.bots, &isolation)
            .map_err(Failure::failed)?;
        return print_figures(args.json, &measured, || measured.table());
    }
    let figures = crate::bench::run(&exe, args.quick, &args.game).map_err(Failure::failed)?;
    print_figures(args.json, &figures, || figures.table())
}

/// Prints `figures` as JSON, or as the table `table` makes.
fn print_figures(
    json: bool,
    figures: &impl serde::Serialize,
    table: impl FnOnce() -> String,
) -> Result<u8, Failure> {
    if json {
        print(&(serde_json::to_string_pretty(figures).expect("figures serialise") + "\n"))?;
    } else {
        print(&table())?;
    }
    Ok(EXIT_OK)
}

/// A `--games` value: an even count from 2 to 100,000 (each bot sits in each seat
/// equally often).
fn even_games(text: &str) -> Result<usize, String> {
    match text.parse::<usize>() {
        Ok(n) if (2..=100_000).contains(&n) && n % 2 == 0 => Ok(n),
        _ => Err(format!(
            "`{text}` is not an even number of games from 2 to 100000"
        )),
    }
}
