//! `referee agent`: a built-in agent speaking the agent protocol on stdin/stdout.

use std::io;
use std::path::PathBuf;

use anyhow::Context;
use clap::Subcommand;

use super::{Failure, EXIT_OK};
use crate::builtin::Strategy;

/// The built-in agents.
#[derive(Debug, Subcommand)]
pub enum BuiltinAgent {
    /// Uniform over the legal actions, seeded.
    Random {
        /// Seed for its random choices.
        #[arg(long, default_value_t = 0)]
        seed: u64,
    },
    /// One-ply heuristic: best immediate gain, ties broken at random.
    Greedy {
        /// Seed for its random choices.
        #[arg(long, default_value_t = 0)]
        seed: u64,
    },
    /// Search within a node budget, from its seat's view: alpha-beta in Peg Chow,
    /// Telka and Multi-player TelnChes, look-ahead over drawn guesses of the hidden
    /// types in I-Doubt-It (the clock only stops it early).
    Strong {
        /// Seed for its choices among equal moves.
        #[arg(long, default_value_t = 0)]
        seed: u64,
        /// Nodes searched per decision.
        #[arg(long, default_value_t = crate::builtin::DEFAULT_NODES, value_parser = super::args::positive::<u64>)]
        nodes: u64,
    },
    /// Play back the actions its seat's agent made in a record (an instant bot:
    /// it decides nothing), then `none`.
    Replay {
        /// The record (read as written, not verified: the referee checks every
        /// action it plays).
        record: PathBuf,
    },
}

/// Runs a built-in agent until `quit` or the end of its input; a closed output is
/// the referee going away, not an error.
pub fn run(which: BuiltinAgent) -> Result<u8, Failure> {
    let stdin = io::stdin().lock();
    // Buffered whole, not by line: the agent flushes after each line it reads, so an
    // answer of several lines (`id`…`protocolok`) reaches the referee in one write
    // and wakes it once.
    let stdout = io::BufWriter::new(io::stdout().lock());
    let played = match which {
        BuiltinAgent::Random { seed } => crate::builtin::run(Strategy::Random, seed, 0, stdin, stdout),
        BuiltinAgent::Greedy { seed } => crate::builtin::run(Strategy::Greedy, seed, 0, stdin, stdout),
        BuiltinAgent::Strong { seed, nodes } => {
            crate::builtin::run(Strategy::Strong, seed, nodes, stdin, stdout)
        }
        BuiltinAgent::Replay { record } => {
            // Not verified: the referee checks each action as it is played, and a
            // bench agent that replayed the game first would be timed as the referee.
            let (game, lines) = crate::record::read_unchecked(&record)
                .with_context(|| format!("cannot replay {}", record.display()))
                .map_err(Failure::usage)?;
            let script = crate::builtin::replay_script(&lines, game.seat_count());
            crate::builtin::run_replay(game.id(), &game.options(), script, stdin, stdout)
        }
    };
    match played {
        Err(e) if e.kind() != io::ErrorKind::BrokenPipe => Err(Failure::failed(e)),
        _ => Ok(EXIT_OK),
    }
}
