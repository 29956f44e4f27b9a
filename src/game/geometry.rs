//! Board geometry the games share: the direction sets of the pieces and counters, and
//! the ray along which a slider (or a Peg Chow leap) travels.
//!
//! Each game has its own square type and its own idea of the board's edge (11×11
//! points; an 8×8 or 9×9 board; a private area joined to the public one), so a ray
//! is walked with that game's own step function. The order within each set is part
//! of the games' behaviour: legal and correct lists come out in it, and seeded
//! random play (and so every record of it) picks from those lists by position.

/// A direction `(file, rank)`: `(1, 0)` is one file to the right, `(0, 1)` one rank up.
pub type Dir = (i8, i8);

/// The four orthogonal directions (a rook's lines): right, left, up, down.
pub const ORTHOGONAL: [Dir; 4] = [(1, 0), (-1, 0), (0, 1), (0, -1)];

/// The four diagonal directions (a bishop's lines).
pub const DIAGONAL: [Dir; 4] = [(1, 1), (1, -1), (-1, 1), (-1, -1)];

/// The eight lines through a square, the orthogonal ones first (a queen's lines; the
/// I-Doubt-It king steps along them in this order).
pub const QUEEN: [Dir; 8] = {
    let mut all = [(0, 0); 8];
    let mut i = 0;
    while i < 4 {
        all[i] = ORTHOGONAL[i];
        all[i + 4] = DIAGONAL[i];
        i += 1;
    }
    all
};

/// The eight neighbours, counter-clockwise from the right (the Multi-player TelnChes
/// king's steps, and the eight lines a Peg Chow counter steps and leaps along).
pub const KING: [Dir; 8] = [
    (1, 0),
    (1, 1),
    (0, 1),
    (-1, 1),
    (-1, 0),
    (-1, -1),
    (0, -1),
    (1, -1),
];

/// A chess knight's eight leaps, clockwise from one file right and two ranks up.
pub const KNIGHT: [Dir; 8] = [
    (1, 2),
    (2, 1),
    (2, -1),
    (1, -2),
    (-1, -2),
    (-2, -1),
    (-2, 1),
    (-1, 2),
];

/// The squares along one line from `from` (which is not included), nearest first,
/// until `step` walks off the board. `step` is the game's own "the next square in
/// this direction" (it knows the square type and where the edge is).
#[inline]
pub fn ray<S: Copy, F: Fn(S) -> Option<S>>(from: S, step: F) -> Ray<S, F> {
    Ray { at: from, step }
}

/// The iterator [`ray`] returns.
#[derive(Clone, Debug)]
pub struct Ray<S, F> {
    /// The square reached last (at first, the start square).
    at: S,
    /// The step to the next square, `None` off the board.
    step: F,
}

impl<S: Copy, F: Fn(S) -> Option<S>> Iterator for Ray<S, F> {
    type Item = S;

    // Inlined so that a slide compiles to the loop it replaced: move generation runs
    // it for every slider in every listing of legal moves.
    #[inline]
    fn next(&mut self) -> Option<S> {
        let next = (self.step)(self.at)?;
        self.at = next;
        Some(next)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sets_hold_distinct_directions_of_their_kind() {
        let distinct = |set: &[Dir]| (1..set.len()).all(|i| !set[..i].contains(&set[i]));
        assert!(ORTHOGONAL.iter().all(|&(f, r)| (f == 0) != (r == 0)));
        assert!(DIAGONAL.iter().all(|&(f, r)| f.abs() == 1 && r.abs() == 1));
        assert!(KNIGHT.iter().all(|&(f, r)| f.abs() * r.abs() == 2));
        for set in [&QUEEN[..], &KING[..], &KNIGHT[..], &ORTHOGONAL[..], &DIAGONAL[..]] {
            assert!(distinct(set), "{set:?}");
        }
        // The same eight neighbours, in the two orders the games list them in.
        let mut queen = QUEEN;
        let mut king = KING;
        queen.sort();
        king.sort();
        assert_eq!(queen, king);
        assert_eq!(QUEEN[..4], ORTHOGONAL);
        assert_eq!(QUEEN[4..], DIAGONAL);
    }

    #[test]
    fn a_ray_stops_at_the_edge() {
        let on_board = |(f, r): (i8, i8)| (0..8).contains(&f) && (0..8).contains(&r);
        let step = |(df, dr): Dir| move |(f, r): (i8, i8)| Some((f + df, r + dr)).filter(|&s| on_board(s));
        assert_eq!(ray((2, 5), step((1, 1))).collect::<Vec<_>>(), [(3, 6), (4, 7)]);
        assert_eq!(ray((0, 0), step((-1, 0))).count(), 0);
        assert_eq!(ray((0, 0), step((0, 1))).count(), 7);
    }
}
