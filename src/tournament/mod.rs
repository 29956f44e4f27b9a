//! Tournaments: many games between many bots, run concurrently, with statistics.
//!
//! The schedule is deterministic (from the seed), every game writes its own record
//! in `<out>/games/`, and all statistics are computed from those records, so an
//! interrupted tournament resumes without replaying finished games, and the shards of
//! a tournament run on several machines merge into exactly what one run gives.
//!
//! The rooms: `definition` is what a tournament is (stored as `tournament.json`),
//! `run` plays its games concurrently (each by `game`, counted by `tally`),
//! `results` reads each game's record back, checked against the schedule, and loads
//! and merges directories, `summary` turns the results into the table, and
//! `shared` is the directory through
//! which shards share finished cycles for a global SPRT; [`entrants`], [`openings`],
//! [`schedule`] and [`stats`] are the bots, the opening suites, the pairings and the
//! statistics they use, and [`engines`] the agent processes a worker keeps between
//! its games.

mod definition;
pub mod engines;
pub mod entrants;
mod game;
pub mod openings;
mod results;
mod run;
pub mod schedule;
mod shared;
pub mod stats;
mod summary;
mod tally;

use std::path::{Path, PathBuf};

use crate::referee::MatchError;
pub use definition::{Definition, SprtDef};
pub use engines::Restart;
pub use entrants::Entrant;
pub use openings::{OpeningOrder, OpeningsError};
pub use results::{load_dir, merge, read_result, record_path, GameResult, RecordProblem};
pub use run::{run, Event, RunOptions};
pub use shared::SharedProblem;
pub use summary::{
    fmt_elo, repeat_warning, repeats, summarize, summarize_counted, write_summary, Pairing, Standing, Summary,
};

/// Why a tournament could not run.
#[derive(Debug, thiserror::Error)]
pub enum TournamentError {
    /// Bad definition or options.
    #[error("{0}")]
    Setup(String),
    /// The output directory.
    #[error("{}: {source}", path.display())]
    Io {
        /// Path.
        path: PathBuf,
        /// Error.
        source: std::io::Error,
    },
    /// A game could not be played at all.
    #[error("game {index}: {source}")]
    Game {
        /// Schedule index.
        index: usize,
        /// Error.
        source: MatchError,
    },
    /// An entrant that cannot be started, or that never got ready in its first
    /// games of a run ([`tally::FIRST_GAMES`]): the tournament stops rather than score
    /// it losses that say nothing about its play.
    #[error("entrant `{name}`: {why}{}", stderr_part(stderr))]
    Entrant {
        /// Its name.
        name: String,
        /// What went wrong.
        why: String,
        /// The end of its stderr, one line (empty if it never ran).
        stderr: String,
    },
    /// A record in an output directory that cannot be counted (bad input).
    #[error("{}: {problem}", path.display())]
    Record {
        /// The record.
        path: PathBuf,
        /// What is wrong with it.
        problem: RecordProblem,
    },
    /// A shared directory (`--shared`) that cannot be used.
    #[error("--shared {}: {problem}", path.display())]
    Shared {
        /// The directory, or the shard's file in it.
        path: PathBuf,
        /// What is wrong with it.
        problem: SharedProblem,
    },
}

/// `; its stderr ends: …` when there is a stderr to show.
fn stderr_part(stderr: &str) -> String {
    if stderr.is_empty() {
        String::new()
    } else {
        format!("; its stderr ends: {stderr}")
    }
}

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> TournamentError + '_ {
    move |source| TournamentError::Io {
        path: path.to_path_buf(),
        source,
    }
}
