//! The built-in agents' play of Multi-player TelnChes, from the seat's view alone
//! (unseen squares taken as empty, as R-M4 judges moves).
//!
//! `random` plays a uniform legal move; `greedy` captures the most valuable piece it
//! can, and otherwise heads for the enemy kings it has seen (remembered across
//! decisions), or into foreign areas to look for them.

use std::collections::BTreeMap;

use super::Strategy;
use crate::game::multichess::board::{Area, Kind, Square};
use crate::game::multichess::rules::Move;
use crate::game::multichess::state;
use crate::game::Seat;
use crate::rng::Rng;

/// What the bots remember between decisions of one game.
#[derive(Debug, Default)]
pub(super) struct Memory {
    /// Where `greedy` last saw each enemy king.
    kings: BTreeMap<Seat, Square>,
    /// What `strong` believes stands on the squares it cannot see.
    pub(super) belief: super::strong_multichess::Belief,
}

/// Picks a move (or the forced `pass`) from a view.
pub(super) fn choose(
    strategy: Strategy,
    seats: usize,
    view: &str,
    memory: &mut Memory,
    rng: &mut Rng,
) -> Option<String> {
    let (pos, seen) = state::parse(view, seats, true).ok()?;
    let me = pos.to_move;
    // Forget kings of seats that are out, and kings no longer where we last saw them.
    memory.kings.retain(|s, sq| {
        !pos.out.contains(s)
            && (!seen[sq.index()] || pos.at(*sq).is_some_and(|p| p.kind == Kind::King && p.owner == *s))
    });
    for sq in pos.all_squares() {
        if let Some(p) = pos.at(sq).filter(|p| p.kind == Kind::King && p.owner != me) {
            memory.kings.insert(p.owner, sq);
        }
    }
    let moves = pos.moves(me);
    if moves.is_empty() {
        return Some("pass".into());
    }
    let pick = match strategy {
        // Played by its own module (`strong_multichess`), never sent here.
        Strategy::Strong => return None,
        Strategy::Random => moves[rng.below(moves.len())],
        Strategy::Greedy => {
            let score = |m: &Move| -> i64 {
                if let Some(p) = pos.at(m.to).filter(|p| p.owner != me) {
                    return 1000 * value(p.kind);
                }
                let piece = pos.at(m.from).expect("a move starts on a piece");
                if piece.kind == Kind::King {
                    return -50; // the king stays home
                }
                let promote = if m.promotion == Some(Kind::Queen) { 500 } else { 0 };
                let target = memory.kings.values().map(|&k| distance(m.to, k)).min();
                promote
                    + match target {
                        Some(d) => 100 - 10 * d,
                        // No king seen yet: explore the other areas.
                        None => match m.to.area {
                            Area::Private(a) if a as usize != me.index() => 40,
                            Area::Public => m.to.rank as i64,
                            Area::Private(_) => 0,
                        },
                    }
            };
            let scores: Vec<i64> = moves.iter().map(score).collect();
            let best = *scores.iter().max()?;
            let tops: Vec<&Move> = moves
                .iter()
                .zip(&scores)
                .filter(|(_, s)| **s == best)
                .map(|(m, _)| m)
                .collect();
            *tops[rng.below(tops.len())]
        }
    };
    Some(pick.to_string())
}

/// Rough material values.
fn value(kind: Kind) -> i64 {
    match kind {
        Kind::King => 100,
        Kind::Queen => 9,
        Kind::Rook => 5,
        Kind::Bishop | Kind::Knight => 3,
        Kind::Pawn => 1,
    }
}

/// Moves a king would need between two squares, going through the public area when
/// they lie in different private areas.
pub(super) fn distance(a: Square, b: Square) -> i64 {
    let files = (a.file as i64 - b.file as i64).abs();
    let ranks = if a.area == b.area || a.area == Area::Public || b.area == Area::Public {
        (a.rank as i64 - b.rank as i64).abs()
    } else {
        (4 - a.rank as i64) + (4 - b.rank as i64)
    };
    files.max(ranks)
}
