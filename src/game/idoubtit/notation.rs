//! Actions of I-Doubt-It TelnChes and their notation (R-D3, R-D4, R-D6, R-D7):
//! placements `N@b1`, moves `e2e4`, promotions `e7e8q` / `b8b2+`, en passant `e5d6ep`,
//! drops `3@f3`, and `doubt` / `accept`.

use std::fmt;

use nom::branch::alt;
use nom::bytes::complete::tag;
use nom::character::complete::{digit1, satisfy};
use nom::combinator::{all_consuming, map, map_opt, opt, value};
use nom::sequence::{pair, separated_pair};
use nom::{IResult, Parser};

use super::board::{BoardKind, Kind, Square};

/// A promotion claim on a move.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Promotion {
    /// No suffix.
    None,
    /// Chess `q r b n`.
    To(Kind),
    /// Shogi `+`.
    Promote,
}

/// One action, as typed; whether it is well-formed in a position is for the rules.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Action {
    /// `N@b1`: placement of a piece of this type from the supply.
    Place {
        /// The type placed.
        kind: Kind,
        /// Where.
        to: Square,
    },
    /// `e2e4`, `e7e8q`, `b8b2+`.
    Move {
        /// From.
        from: Square,
        /// To.
        to: Square,
        /// Promotion claimed.
        promotion: Promotion,
    },
    /// `e5d6ep`: an en-passant claim (chess board).
    EnPassant {
        /// From.
        from: Square,
        /// The square passed over.
        to: Square,
    },
    /// `3@f3`: a drop of the 3rd bench piece.
    Drop {
        /// Bench slot, 1-based.
        slot: u8,
        /// An empty square.
        to: Square,
    },
    /// `doubt`.
    Doubt,
    /// `accept` (a king capture).
    Accept,
}

/// Why a text is not an action in the notation of R-D3, R-D4, R-D6 and R-D7.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum NotationError {
    /// R-D4: a drop names a bench slot counted from 1.
    #[error("bench slots are numbered from 1")]
    SlotZero,
    /// R-D3, R-D4, R-D6, R-D7: the text is no placement, move, drop, `doubt` or
    /// `accept` on this board.
    #[error("{}", expected(.board))]
    Unreadable {
        /// The board the text was read for (it decides the squares and suffixes).
        board: BoardKind,
    },
}

/// What [`NotationError::Unreadable`] says, with examples on `board`.
fn expected(board: &BoardKind) -> &'static str {
    match board {
        BoardKind::Chess => "expected a placement `N@b1`, a move `e2e4` (`e7e8q`, `e5d6ep`), a drop `3@f3`, `doubt` or `accept` on squares a1…h8",
        BoardKind::Shogi => "expected a placement `G@d1`, a move `c3c4` (`b8b2+`), a drop `3@f5`, `doubt` or `accept` on squares a1…i9",
    }
}

/// Parses an action for `board`.
pub fn parse(text: &str, board: BoardKind) -> Result<Action, NotationError> {
    let square = |i| square(i, board);
    let kind = map_opt(satisfy(|c| c.is_ascii_uppercase()), |c| {
        Kind::from_letter(c, board)
    });
    let promotion = |i| -> IResult<&str, Promotion> {
        match board {
            BoardKind::Chess => map_opt(satisfy(|c| "qrbn".contains(c)), |c| {
                Kind::from_letter(c.to_ascii_uppercase(), board).map(Promotion::To)
            })
            .parse(i),
            BoardKind::Shogi => value(Promotion::Promote, tag("+")).parse(i),
        }
    };
    let action = alt((
        value(Action::Doubt, tag("doubt")),
        value(Action::Accept, tag("accept")),
        map(separated_pair(kind, tag("@"), square), |(kind, to)| {
            Action::Place { kind, to }
        }),
        map(separated_pair(slot, tag("@"), square), |(slot, to)| {
            Action::Drop { slot, to }
        }),
        map((square, square, tag("ep")), |(from, to, _)| Action::EnPassant {
            from,
            to,
        }),
        map(pair(pair(square, square), opt(promotion)), |((from, to), p)| {
            Action::Move {
                from,
                to,
                promotion: p.unwrap_or(Promotion::None),
            }
        }),
    ));
    match all_consuming(action).parse(text) {
        Ok((_, Action::Drop { slot: 0, .. })) => Err(NotationError::SlotZero),
        Ok((_, a)) => Ok(a),
        Err(_) => Err(NotationError::Unreadable { board }),
    }
}

/// A bench slot: a number from 1, written without leading zeros (one spelling).
fn slot(i: &str) -> IResult<&str, u8> {
    map_opt(
        digit1,
        |d: &str| if d.starts_with('0') { None } else { d.parse().ok() },
    )
    .parse(i)
}

/// A square on `board`: a file letter and a one-digit rank.
fn square(i: &str, board: BoardKind) -> IResult<&str, Square> {
    map_opt(
        pair(
            satisfy(|c| c.is_ascii_lowercase()),
            satisfy(|c| c.is_ascii_digit()),
        ),
        move |(f, r)| Square::new(f as i8 - b'a' as i8, r as i8 - b'1' as i8, board),
    )
    .parse(i)
}

impl Action {
    /// Appends the action's notation; events, views and record lines are built this
    /// way once per action, so without the formatting machinery.
    pub fn push_to(&self, out: &mut String) {
        match *self {
            Action::Place { kind, to } => {
                out.push(kind.letter());
                out.push('@');
                to.push_to(out);
            }
            Action::Move { from, to, promotion } => {
                from.push_to(out);
                to.push_to(out);
                match promotion {
                    Promotion::None => {}
                    Promotion::To(k) => out.push(k.letter().to_ascii_lowercase()),
                    Promotion::Promote => out.push('+'),
                }
            }
            Action::EnPassant { from, to } => {
                from.push_to(out);
                to.push_to(out);
                out.push_str("ep");
            }
            Action::Drop { slot, to } => {
                crate::game::push_decimal(out, slot);
                out.push('@');
                to.push_to(out);
            }
            Action::Doubt => out.push_str("doubt"),
            Action::Accept => out.push_str("accept"),
        }
    }
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut text = String::with_capacity(8);
        self.push_to(&mut text);
        f.write_str(&text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a seat is told of an unreadable action, word for word as before the
    /// errors had types.
    #[test]
    fn notation_errors_print_the_words_they_always_have() {
        // `0@e4` never gets this far (a slot has no leading zero), hence no parse.
        assert_eq!(
            NotationError::SlotZero.to_string(),
            "bench slots are numbered from 1"
        );
        assert_eq!(
            parse("e2-e4", BoardKind::Chess).unwrap_err().to_string(),
            "expected a placement `N@b1`, a move `e2e4` (`e7e8q`, `e5d6ep`), a drop `3@f3`, `doubt` or `accept` on squares a1…h8"
        );
        assert_eq!(
            parse("e7e8q", BoardKind::Shogi).unwrap_err().to_string(),
            "expected a placement `G@d1`, a move `c3c4` (`b8b2+`), a drop `3@f5`, `doubt` or `accept` on squares a1…i9"
        );
    }

    #[test]
    fn notation_round_trips() {
        for (text, board) in [
            ("N@b1", BoardKind::Chess),
            ("e2e4", BoardKind::Chess),
            ("e7e8q", BoardKind::Chess),
            ("e5d6ep", BoardKind::Chess),
            ("3@f3", BoardKind::Chess),
            ("12@a8", BoardKind::Chess),
            ("doubt", BoardKind::Chess),
            ("accept", BoardKind::Shogi),
            ("b8b2+", BoardKind::Shogi),
            ("G@i9", BoardKind::Shogi),
            ("L@a3", BoardKind::Shogi),
        ] {
            assert_eq!(parse(text, board).unwrap().to_string(), text);
        }
        for (bad, board) in [
            ("", BoardKind::Chess),
            ("e2e9", BoardKind::Chess),
            ("i1i2", BoardKind::Chess),
            ("e7e8k", BoardKind::Chess),
            ("e7e8+", BoardKind::Chess),
            ("b8b2q", BoardKind::Shogi),
            ("G@b1", BoardKind::Chess),
            ("Q@b1", BoardKind::Shogi),
            ("0@f3", BoardKind::Chess),
            ("x@f3", BoardKind::Chess),
            ("e2e4 ", BoardKind::Chess),
            ("E2E4", BoardKind::Chess),
            ("e2-e4", BoardKind::Chess),
            ("e10e4", BoardKind::Shogi),
            ("doubts", BoardKind::Chess),
        ] {
            assert!(parse(bad, board).is_err(), "{bad}");
        }
    }
}
