//! Opening suites (`--openings FILE`): one start state per line, each checked by the
//! game's own state parser before anything is played, and the choice of the line
//! each seating cycle starts from. Its own room because the choice must be a pure
//! function of the definition: shards and resumes compute it and must agree with the
//! single run.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::schedule::Scheduled;
use crate::game::{GameId, Options};
use crate::rng::Rng;

/// In which order the lines of an opening suite are used.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum OpeningOrder {
    /// In file order, starting again at the top after the last line.
    #[default]
    Sequential,
    /// Every pass through the suite in a fresh order shuffled from the seed, so no line
    /// repeats before every line was used.
    Random,
}

impl OpeningOrder {
    /// Whether this is the default (it is then left out of `tournament.json`).
    pub fn is_sequential(&self) -> bool {
        *self == OpeningOrder::Sequential
    }
}

/// Why an opening suite cannot be used; nothing has been played when it is found.
#[derive(Debug, thiserror::Error)]
pub enum OpeningsError {
    /// The file cannot be read.
    #[error("{}: {source}", path.display())]
    Unreadable {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A line is not a start state of the game.
    #[error("{}:{line}: {problem}", path.display())]
    BadLine {
        /// The file.
        path: PathBuf,
        /// Its line number, from 1.
        line: usize,
        /// What the game's state parser (or the check that the game goes on) says.
        problem: String,
    },
    /// Only blank lines and comments.
    #[error("{}: no openings (one start state per line; blank lines and # comments are skipped)", path.display())]
    Empty {
        /// The file.
        path: PathBuf,
    },
}

/// Reads an opening suite for `game` with `options`: every line that is not blank
/// and does not start with `#` (after leading blanks) is a start state, trimmed,
/// which the game must accept and in which the game is not over.
pub fn load(path: &Path, game: GameId, options: &Options) -> Result<Vec<String>, OpeningsError> {
    let text = std::fs::read_to_string(path).map_err(|source| OpeningsError::Unreadable {
        path: path.to_path_buf(),
        source,
    })?;
    let mut out = Vec::new();
    for (n, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        check_state(game, options, line).map_err(|problem| OpeningsError::BadLine {
            path: path.to_path_buf(),
            line: n + 1,
            problem,
        })?;
        out.push(line.to_string());
    }
    if out.is_empty() {
        return Err(OpeningsError::Empty {
            path: path.to_path_buf(),
        });
    }
    Ok(out)
}

/// Whether `state` is a state of `game` in which play goes on.
fn check_state(game: GameId, options: &Options, state: &str) -> Result<(), String> {
    let g = game.create(options, Some(state)).map_err(|e| e.to_string())?;
    if g.outcome().is_some() {
        return Err(format!("the game is already over in `{state}`"));
    }
    Ok(())
}

/// Sets the line of a suite of `count` openings each game of `games` starts from: its
/// seating cycle's. Random order shuffles each pass through the suite from `seed` and
/// the pass number alone, so every shard and every resume finds the same line for a
/// cycle.
pub(super) fn assign(order: OpeningOrder, count: usize, seed: u64, games: &mut [Scheduled]) {
    if count == 0 {
        return;
    }
    // One shuffle per pass through the suite, not one per game: a suite may hold many
    // thousands of lines.
    let mut pass: Option<(usize, Vec<usize>)> = None;
    for g in games {
        let (p, at) = (g.cycle / count, g.cycle % count);
        g.opening = Some(match order {
            OpeningOrder::Sequential => at,
            OpeningOrder::Random => {
                if pass.as_ref().is_none_or(|(q, _)| *q != p) {
                    pass = Some((p, shuffled(count, seed, p)));
                }
                pass.as_ref().map_or(at, |(_, lines)| lines[at])
            }
        });
    }
}

/// Pass `pass` through a suite of `count` lines in random order (Fisher-Yates).
fn shuffled(count: usize, seed: u64, pass: usize) -> Vec<usize> {
    // "suite": a stream of its own, apart from the random plies' and the agents'.
    let mut rng = Rng::new(Rng::derive(seed ^ 0x0073_7569_7465, pass as u64 + 1));
    let mut order: Vec<usize> = (0..count).collect();
    for i in (1..count).rev() {
        order.swap(i, rng.below(i + 1));
    }
    order
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tournament::schedule::{build, Format};

    /// The suite line of every game of a two-seat schedule of `cycles` pairs.
    fn lines(order: OpeningOrder, count: usize, seed: u64, cycles: usize) -> Vec<usize> {
        let mut games = build(Format::RoundRobin, 2, 2, cycles * 2, 1, seed).unwrap();
        assign(order, count, seed, &mut games);
        games.iter().map(|g| g.opening.unwrap()).collect()
    }

    #[test]
    fn random_order_uses_every_line_once_per_pass_and_is_reproducible() {
        let all = lines(OpeningOrder::Random, 7, 5, 21);
        assert_eq!(all, lines(OpeningOrder::Random, 7, 5, 21));
        for pair in all.chunks(2) {
            assert_eq!(pair[0], pair[1], "both games of a pair start from one line");
        }
        let per_cycle: Vec<usize> = all.iter().copied().step_by(2).collect();
        for pass in per_cycle.chunks(7) {
            let mut pass = pass.to_vec();
            pass.sort_unstable();
            assert_eq!(pass, (0..7).collect::<Vec<_>>());
        }
        assert_ne!(
            shuffled(20, 5, 0),
            shuffled(20, 6, 0),
            "the seed changes the order"
        );
        assert_ne!(
            shuffled(20, 5, 0),
            shuffled(20, 5, 1),
            "each pass is shuffled anew"
        );
    }

    #[test]
    fn sequential_order_wraps_around() {
        let got = lines(OpeningOrder::Sequential, 3, 9, 5);
        assert_eq!(got, vec![0, 0, 1, 1, 2, 2, 0, 0, 1, 1]);
    }
}
