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

use crate::game::geometry::{ray, DIAGONAL, KNIGHT, ORTHOGONAL, QUEEN};
use crate::game::multichess::board::{Area, Kind, Square};
use crate::game::multichess::rules::Position;
use crate::game::Seat;

/// For every public square (by square index), how many enemy pieces on unseen
/// squares of `board` may strike it: sliders through the fog's pawns as if they
/// had moved, pawns from rank 4, knights in two jumps.
pub(super) fn exposed(board: &Position, seen: &[bool], me: Seat) -> Vec<u8> {
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
            Kind::Pawn => pawn(sq, &mut reach),
            Kind::Knight => knight(sq, area, seen, &mut reach),
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

/// Adds the public squares a slider on `sq` (in private `area`) reaches along
/// `lines`, through the fog's pawns.
fn slider(board: &Position, seen: &[bool], sq: Square, area: u8, lines: &[(i8, i8)], reach: &mut Vec<usize>) {
    for &(df, dr) in lines {
        for next in ray(sq, |s: Square| s.offset(df, dr, Some(area))) {
            let i = next.index();
            if next.area == Area::Public {
                reach.push(i);
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

/// Adds the public rank 5 squares a pawn on `sq` takes on once it has stepped to
/// its area's rank 4.
fn pawn(sq: Square, reach: &mut Vec<usize>) {
    let edge = Square {
        area: Area::Public,
        file: sq.file,
        rank: 4,
    };
    for df in [-1, 1] {
        if let Some(target) = edge.offset(df, 0, None) {
            reach.push(target.index());
        }
    }
}

/// Adds the public squares a knight on `sq` (in private `area`) reaches in one
/// jump, or in two through an unseen square of its area.
fn knight(sq: Square, area: u8, seen: &[bool], reach: &mut Vec<usize>) {
    for &(df, dr) in &KNIGHT {
        let Some(first) = sq.offset(df, dr, Some(area)) else {
            continue;
        };
        if first.area == Area::Public {
            reach.push(first.index());
            continue;
        }
        if seen[first.index()] {
            continue;
        }
        for &(df, dr) in &KNIGHT {
            if let Some(second) = first
                .offset(df, dr, Some(area))
                .filter(|s| s.area == Area::Public)
            {
                reach.push(second.index());
            }
        }
    }
}
