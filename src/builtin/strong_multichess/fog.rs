//! Where a hidden slider may strike from the fog.
//!
//! The view hides the enemy areas, and every one of them joins the public area
//! (R-M1): a queen still on `2:d1` reaches `h5` along `2:e2`, `2:f3`, `2:g4` the
//! moment the pawn on `2:e2` has moved, and the bot is not told when it does (the
//! move is in the fog). So a remembered pawn is a poor shield: the bot counts the
//! public squares its believed enemy sliders would reach if no pawn in the fog stood
//! in their way as exposed, and a piece of its own left there as half lost.
//!
//! Sliders are not the only danger. A pawn of the fog steps to its area's rank 4
//! unseen and takes on public rank 5 next to its file; a knight of the fog is two
//! unseen jumps from the public squares it lands on. Those squares are exposed too:
//! most pieces the bot lost on public squares were taken from an area's rank 4.
//!
//! Inside an enemy area the fog is closer still: a probe there sees only what it
//! attacks, and the pawns, knights and sliders around it may have moved since they
//! were seen. So the squares of the enemy areas count too, as do those two steps
//! from a king remembered in the fog (one unseen step, then the capture).

use crate::game::geometry::{ray, DIAGONAL, KING, KNIGHT, ORTHOGONAL, QUEEN};
use crate::game::multichess::board::{Area, Kind, Square};
use crate::game::multichess::rules::Position;
use crate::game::Seat;

/// For every square (by square index), how many enemy pieces on unseen squares of
/// `board` may strike it: sliders through the fog's pawns as if they had moved,
/// pawns from any rank they may have stepped to, knights in two jumps, kings not
/// merely guessed (`guessed`, by seat index) in two steps.
pub(super) fn exposed(board: &Position, seen: &[bool], me: Seat, guessed: &[bool]) -> Vec<u8> {
    let mut out = vec![0u8; board.squares.len()];
    for sq in board.all_squares() {
        let Area::Private(area) = sq.area else { continue };
        if seen[sq.index()] {
            continue;
        }
        let Some(p) = board.at(sq).filter(|p| p.owner != me) else {
            continue;
        };
        let mut reach = Vec::new();
        match p.kind {
            Kind::Queen => slider(board, seen, sq, area, &QUEEN, &mut reach),
            Kind::Rook => slider(board, seen, sq, area, &ORTHOGONAL, &mut reach),
            Kind::Bishop => slider(board, seen, sq, area, &DIAGONAL, &mut reach),
            Kind::Pawn => pawn(sq, area, &mut reach),
            Kind::Knight => knight(sq, area, seen, &mut reach),
            Kind::King if !guessed[p.owner.index()] => king(sq, area, &mut reach),
            Kind::King => {}
        }
        reach.sort_unstable();
        reach.dedup();
        for i in reach {
            out[i] = out[i].saturating_add(1);
        }
    }
    out
}

/// Adds the squares a slider on `sq` (in private `area`) reaches along `lines`,
/// through the fog's pawns.
fn slider(board: &Position, seen: &[bool], sq: Square, area: u8, lines: &[(i8, i8)], reach: &mut Vec<usize>) {
    for &(df, dr) in lines {
        for next in ray(sq, |s: Square| s.offset(df, dr, Some(area))) {
            let i = next.index();
            reach.push(i);
            let blocks = match board.at(next) {
                // A pawn in the fog may have gone; anything else is a wall.
                Some(q) => seen[i] || q.kind != Kind::Pawn,
                None => false,
            };
            if blocks {
                break;
            }
        }
    }
}

/// Adds the squares a pawn on `sq` (in private `area`) takes on from any square
/// ahead of it it may have stepped to unseen, up to its area's rank 4, from where
/// it takes on public rank 5.
fn pawn(sq: Square, area: u8, reach: &mut Vec<usize>) {
    for rank in sq.rank..4 {
        let from = Square { rank, ..sq };
        for df in [-1, 1] {
            if let Some(target) = from.offset(df, 1, Some(area)) {
                reach.push(target.index());
            }
        }
    }
}

/// Adds the squares a king on `sq` (in private `area`) takes on after one step.
fn king(sq: Square, area: u8, reach: &mut Vec<usize>) {
    for &(df, dr) in &KING {
        let Some(step) = sq.offset(df, dr, Some(area)) else {
            continue;
        };
        reach.extend(
            KING.iter()
                .filter_map(|&(df, dr)| step.offset(df, dr, Some(area)))
                .map(Square::index),
        );
    }
}

/// Adds the squares a knight on `sq` (in private `area`) reaches in one jump, or
/// in two through an unseen square of its area.
fn knight(sq: Square, area: u8, seen: &[bool], reach: &mut Vec<usize>) {
    for &(df, dr) in &KNIGHT {
        let Some(first) = sq.offset(df, dr, Some(area)) else {
            continue;
        };
        reach.push(first.index());
        if first.area == Area::Public || seen[first.index()] {
            continue;
        }
        reach.extend(
            KNIGHT
                .iter()
                .filter_map(|&(df, dr)| first.offset(df, dr, Some(area)))
                .map(Square::index),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::multichess::board::Piece;

    /// The setup of three seats seen by seat 1: its area and the public one.
    fn setup() -> (Position, Vec<bool>) {
        let board = Position::start(3);
        let seen = board
            .all_squares()
            .map(|sq| sq.area == Area::Public || sq.area == Area::Private(0))
            .collect();
        (board, seen)
    }

    fn at(board: &Position, exposed: &[u8], name: &str) -> u8 {
        exposed[Square::parse(name, board.seats).unwrap().index()]
    }

    #[test]
    fn a_probe_deep_in_an_area_is_exposed_to_pawns_that_may_have_stepped_unseen() {
        let (mut board, mut seen) = setup();
        let probe = Square::parse("2:g4", 3).unwrap();
        board.squares[probe.index()] = Some(Piece {
            kind: Kind::Queen,
            owner: Seat::from_index(0),
        });
        seen[probe.index()] = true;
        let exposed = exposed(&board, &seen, Seat::from_index(0), &[false; 3]);
        // The pawn on 2:h2 takes on 2:g4 once it has stepped to 2:h3 unseen; no
        // piece of seat 2 attacks 2:g4 from where it was last seen.
        assert!(at(&board, &exposed, "2:g4") >= 1);
        // Next to the king remembered on 2:e1, one unseen step away.
        assert!(at(&board, &exposed, "2:e3") >= 1);
        // Its own area cannot be struck out of the fog.
        assert_eq!(at(&board, &exposed, "1:e3"), 0);
    }

    #[test]
    fn a_guessed_king_makes_no_square_exposed() {
        let (mut board, seen) = setup();
        for sq in board.all_squares().collect::<Vec<_>>() {
            if board.at(sq).is_some_and(|p| p.kind != Kind::King) {
                board.squares[sq.index()] = None;
            }
        }
        let guessed = exposed(&board, &seen, Seat::from_index(0), &[false, true, true]);
        assert_eq!(at(&board, &guessed, "2:e3"), 0);
        let believed = exposed(&board, &seen, Seat::from_index(0), &[false; 3]);
        assert_eq!(at(&board, &believed, "2:e3"), 1);
    }
}
