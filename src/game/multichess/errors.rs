//! Why a text is not a move of Multi-player TelnChes (R-M2) and why a seat's action
//! is refused (R-M1, R-M4…R-M6), as types. Their texts are the `error` lines seats
//! read, word for word.

use super::board::Square;
use crate::game::Seat;

/// Why a text is not a square of R-M2 at this table.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SquareError {
    /// R-M2: a private square is `<seat>:<square>`, with a seat number from 1.
    #[error("`{text}`: `{seat}` is not a seat")]
    NotASeat {
        /// The square as written.
        text: String,
        /// What stands where the seat should.
        seat: String,
    },
    /// R-M1: each seat has one private area, and no other seat has one.
    #[error("`{text}`: there is no private area {seat} in a game of {seats}")]
    NoSuchArea {
        /// The square as written.
        text: String,
        /// The seat named.
        seat: Seat,
        /// The seats at the table.
        seats: usize,
    },
    /// R-M2: a square is a file `a`…`h` and a rank `1`…`8`.
    #[error("`{text}`: expected a square like `e5` or `2:e1`")]
    NotASquare {
        /// The square as written.
        text: String,
    },
    /// R-M1: ranks 1–4 are private, so a square there names its area.
    #[error("`{text}`: public squares are on ranks 5–8; name the private area, e.g. `1:{text}`")]
    PublicRank {
        /// The square as written (no area, so also the name to put one before).
        text: String,
    },
    /// R-M1: a private area has ranks 1–4.
    #[error("`{text}`: private areas have ranks 1–4 (R-M1)")]
    PrivateRank {
        /// The square as written.
        text: String,
    },
}

/// Why a text is not a move in R-M2 notation.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum NotationError {
    /// R-M2: a promotion suffix names a queen, rook, bishop or knight.
    #[error("`{text}`: promotion is `=Q`, `=R`, `=B` or `=N`")]
    Promotion {
        /// The move as written.
        text: String,
    },
    /// R-M2: a move is two squares joined by `-`.
    #[error("`{text}`: expected `<from>-<to>`, e.g. `1:e2-1:e4` or `e5-3:e4`")]
    NoDash {
        /// The move as written.
        text: String,
    },
    /// R-M2: one of the two squares is not a square at this table.
    #[error(transparent)]
    Square(#[from] SquareError),
}

/// Why a seat's action breaks the rules of movement, judged on its view (R-M4).
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum MoveError {
    /// R-M5: an eliminated or forfeited seat acts no more.
    #[error("seat {seat} is out of the game (R-M5)")]
    Out {
        /// The seat that tried to act.
        seat: Seat,
    },
    /// R-M6: a pass is forced, for a seat with no move only.
    #[error("seat {seat} has a move, and passes are forced only (R-M6)")]
    PassWithAMove {
        /// The seat that passed.
        seat: Seat,
    },
    /// R-M1: a move involves at most one private area.
    #[error("no single move goes from one private area to another (R-M1)")]
    BetweenPrivateAreas,
    /// R-M1, R-M4: the move is not among the seat's legal moves on what it sees.
    #[error("not a legal move on the seat's view (R-M1, R-M4)")]
    NotLegalOnView,
    /// R-M1: a move starts on one of the mover's pieces.
    #[error("{from} holds none of seat {seat}'s pieces")]
    NotOwnPiece {
        /// Where the move starts.
        from: Square,
        /// The seat moving.
        seat: Seat,
    },
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::multichess::rules::Move;

    /// What a seat is told of a refused move, word for word as before the errors had
    /// types: each text the old `format!` calls printed, reached through the parser.
    #[test]
    fn errors_print_the_words_they_always_have() {
        let parsed = |text: &str| Move::parse(text, 3).unwrap_err().to_string();
        for (text, said) in [
            ("x:e1-1:e2", "`x:e1`: `x` is not a seat"),
            ("4:e1-1:e2", "`4:e1`: there is no private area 4 in a game of 3"),
            ("1:e2-e9", "`e9`: expected a square like `e5` or `2:e1`"),
            (
                "e2-e5",
                "`e2`: public squares are on ranks 5–8; name the private area, e.g. `1:e2`",
            ),
            ("1:e5-e6", "`1:e5`: private areas have ranks 1–4 (R-M1)"),
            ("e7-e8=K", "`e7-e8=K`: promotion is `=Q`, `=R`, `=B` or `=N`"),
            (
                "1:e2e4",
                "`1:e2e4`: expected `<from>-<to>`, e.g. `1:e2-1:e4` or `e5-3:e4`",
            ),
        ] {
            assert_eq!(parsed(text), said, "{text}");
        }
        let across = Move::parse("1:e2-2:e2", 3).unwrap();
        assert_eq!(across.private_area(), Err(MoveError::BetweenPrivateAreas));
        let seat = Seat::new(2).unwrap();
        let from = Square::parse("1:e2", 3).unwrap();
        for (error, said) in [
            (
                MoveError::BetweenPrivateAreas,
                "no single move goes from one private area to another (R-M1)",
            ),
            (MoveError::Out { seat }, "seat 2 is out of the game (R-M5)"),
            (
                MoveError::PassWithAMove { seat },
                "seat 2 has a move, and passes are forced only (R-M6)",
            ),
            (
                MoveError::NotLegalOnView,
                "not a legal move on the seat's view (R-M1, R-M4)",
            ),
            (
                MoveError::NotOwnPiece { from, seat },
                "1:e2 holds none of seat 2's pieces",
            ),
        ] {
            assert_eq!(error.to_string(), said);
        }
    }
}
