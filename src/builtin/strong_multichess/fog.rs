//! Where a hidden slider may strike from the fog.
//!
//! The view hides the enemy areas, and every one of them joins the public area
//! (R-M1): a queen still on `2:d1` reaches `h5` along `2:e2`, `2:f3`, `2:g4` the
//! moment the pawn on `2:e2` has moved, and the bot is not told when it does (the
//! move is in the fog). So a remembered pawn is a poor shield: the bot counts the
//! public squares its believed enemy sliders would reach if no pawn in the fog stood
//! in their way as exposed, and a piece of its own left there as half lost.

use crate::game::geometry::{ray, DIAGONAL, ORTHOGONAL, QUEEN};
use crate::game::multichess::board::{Area, Kind, Square};
use crate::game::multichess::rules::Position;
use crate::game::Seat;

/// The public squares (by square index) that an enemy slider on an unseen square
/// of `board` may reach, through the fog's pawns as if they had moved.
pub(super) fn exposed(board: &Position, seen: &[bool], me: Seat) -> Vec<bool> {
    let mut out = vec![false; board.squares.len()];
    for sq in board.all_squares() {
        let Area::Private(area) = sq.area else { continue };
        if seen[sq.index()] {
            continue;
        }
        let Some(p) = board.at(sq).filter(|p| p.owner != me) else {
            continue;
        };
        let lines: &[(i8, i8)] = match p.kind {
            Kind::Queen => &QUEEN,
            Kind::Rook => &ORTHOGONAL,
            Kind::Bishop => &DIAGONAL,
            _ => continue,
        };
        for &(df, dr) in lines {
            for next in ray(sq, |s: Square| s.offset(df, dr, Some(area))) {
                let i = next.index();
                if next.area == Area::Public {
                    out[i] = true;
                }
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
    out
}
