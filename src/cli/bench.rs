//! `referee bench`: the referee measured against the pipe round trip.

use clap::Args;

use super::{print, Failure, EXIT_OK};
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
    #[arg(long, value_parser = super::args::game_id)]
    game: Vec<GameId>,
}

/// Runs `referee bench`.
pub fn run(args: BenchArgs) -> Result<u8, Failure> {
    let exe = std::env::current_exe().map_err(Failure::failed)?;
    let exe = shell_words::quote(&exe.to_string_lossy()).into_owned();
    let figures = crate::bench::run(&exe, args.quick, &args.game).map_err(Failure::failed)?;
    if args.json {
        print(&(serde_json::to_string_pretty(&figures).expect("figures serialise") + "\n"))?;
    } else {
        print(&figures.table())?;
    }
    Ok(EXIT_OK)
}
