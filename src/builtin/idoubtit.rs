//! The built-in agents' play of I-Doubt-It, from the seat's view and events alone.
//!
//! `random` places anywhere, bluffs often (any well-formed move), and sometimes
//! doubts. `greedy` plays correct moves for the types it can see, always contests a
//! king capture, and doubts a move no piece type could have made.

use super::Strategy;
use crate::game::idoubtit::board::{BoardKind, Kind, Side, Square};
use crate::game::idoubtit::notation::{Action, Promotion};
use crate::game::idoubtit::rules::{Phase, Position, Variant};
use crate::game::idoubtit::state;
use crate::rng::Rng;

/// Picks an action from a view, or `None` if the view makes no sense.
pub(super) fn choose(
    strategy: Strategy,
    variant: Variant,
    view: &str,
    events: &[String],
    rng: &mut Rng,
) -> Option<String> {
    let pos = state::parse(view, variant, true).ok()?;
    let side = pos.to_act;
    let all = pos.well_formed_actions();
    let pick = |list: &[Action], rng: &mut Rng| (!list.is_empty()).then(|| list[rng.below(list.len())]);
    let action = match (pos.phase, strategy) {
        (Phase::Respond, Strategy::Random) => Some(if rng.below(2) == 0 {
            Action::Doubt
        } else {
            Action::Accept
        }),
        // Accepting loses for sure; a doubt loses only if the capture was correct.
        (Phase::Respond, Strategy::Greedy) => Some(Action::Doubt),
        (Phase::Place, Strategy::Random) => pick(&all, rng),
        (Phase::Place, Strategy::Greedy) => best(&all, rng, |a| placement_score(&pos, side, a)),
        (Phase::Play, Strategy::Random) => {
            let can_doubt = all.contains(&Action::Doubt);
            if can_doubt && rng.below(5) == 0 {
                Some(Action::Doubt)
            } else {
                let correct = pos.correct_actions();
                let moves: Vec<Action> = all.iter().copied().filter(|a| *a != Action::Doubt).collect();
                if !correct.is_empty() && rng.below(2) == 0 {
                    pick(&correct, rng)
                } else {
                    pick(&moves, rng)
                }
            }
        }
        (Phase::Play, Strategy::Greedy) => {
            if all.contains(&Action::Doubt) && looks_impossible(&pos, events) {
                Some(Action::Doubt)
            } else {
                let correct = pos.correct_actions();
                let candidates: Vec<Action> = if correct.is_empty() {
                    // Own types unseen (s = 1): moves that some type could make.
                    all.iter().copied().filter(|a| plausible_move(&pos, a)).collect()
                } else {
                    correct
                };
                best(&candidates, rng, |a| move_score(&pos, side, a)).or_else(|| pick(&all, rng))
            }
        }
        // Played by `strong_idoubtit`, never sent here.
        (_, Strategy::Strong) | (Phase::Won | Phase::Drawn, _) => None,
    }?;
    Some(action.to_string())
}

/// A best-scoring action, ties broken at random.
fn best(list: &[Action], rng: &mut Rng, score: impl Fn(&Action) -> i32) -> Option<Action> {
    let scores: Vec<i32> = list.iter().map(&score).collect();
    let top = *scores.iter().max()?;
    let tops: Vec<usize> = (0..list.len()).filter(|&i| scores[i] == top).collect();
    Some(list[tops[rng.below(tops.len())]])
}

/// Placement preferences: the king in a back corner, pawns in front, the rest behind.
fn placement_score(pos: &Position, side: Side, action: &Action) -> i32 {
    let Action::Place { kind, to } = *action else {
        return 0;
    };
    let owner = pos.variant.placed_for(side);
    let board = pos.board();
    let rank = owner.relative_rank(to.rank, board) as i32;
    let front = board.home_rows() as i32 - 1;
    let edge = (to.file as i32).min(board.size() as i32 - 1 - to.file as i32);
    match kind {
        Kind::King => -10 * rank - edge,
        Kind::Pawn => 10 * rank,
        _ => 10 * (front - rank),
    }
}

/// Move preferences: take a king it can see, take anything, promote.
fn move_score(pos: &Position, side: Side, action: &Action) -> i32 {
    let (to, promotes) = match *action {
        Action::Move { to, promotion, .. } => (to, promotion != Promotion::None),
        Action::EnPassant { .. } => return 15,
        _ => return 0,
    };
    let target = pos.at(to).filter(|p| p.owner != side);
    match target {
        Some(p) if p.kind == Kind::King => 1000,
        Some(_) => 20,
        None => i32::from(promotes) * 8,
    }
}

/// Whether some piece type could make `action` from the position as the seat sees it.
fn plausible_move(pos: &Position, action: &Action) -> bool {
    match *action {
        Action::Move { from, to, .. } => could_move(pos, from, to, pos.at(from).map(|p| p.kind)),
        _ => false,
    }
}

/// Whether the piece on `from` (of type `known`, if seen) could reach `to`.
fn could_move(pos: &Position, from: Square, to: Square, known: Option<Kind>) -> bool {
    let board = pos.board();
    let kinds: Vec<Kind> = match known {
        Some(k) if k != Kind::Unknown => vec![k],
        _ => board.kinds().to_vec(),
    };
    let Some(original) = pos.at(from) else {
        return false;
    };
    let mut probe = pos.clone();
    kinds.iter().any(|&kind| {
        [false, board == BoardKind::Shogi].into_iter().any(|promoted| {
            let mut p = original;
            p.kind = kind;
            p.promoted = promoted && kind.promotable_in_shogi();
            probe.squares[from.index(board)] = Some(p);
            probe.targets(from).contains(&to)
        })
    })
}

/// Whether the opponent's last move, told in `events`, is one no piece type could
/// have made on the board as it stood (what `greedy` doubts).
fn looks_impossible(pos: &Position, events: &[String]) -> bool {
    let Some(pending) = &pos.pending else { return false };
    let board = pos.board();
    let (from, to) = match pending.action {
        Action::Move { from, to, .. } => (from, to),
        _ => return false,
    };
    // Rebuild the board before the move: the piece back on `from`, and whatever it
    // took (as told by the event) back on `to`.
    let mut before = pos.clone();
    let Some(mover) = before.at(to) else { return false };
    before.squares[to.index(board)] = None;
    before.squares[from.index(board)] = Some(mover);
    let took = events
        .iter()
        .rev()
        .find(|e| e.starts_with("move "))
        .and_then(|e| e.split(" capture ").nth(1))
        .and_then(|sq| Square::parse(sq, board));
    if let Some(sq) = took {
        let mut victim = mover;
        victim.owner = mover.owner.opponent();
        victim.origin = victim.owner;
        victim.kind = Kind::Unknown;
        before.squares[sq.index(board)] = Some(victim);
    }
    !could_move(&before, from, to, Some(mover.kind))
}
