//! The position of I-Doubt-It TelnChes and what actions do to it: well-formedness
//! (R-D4), correctness against the true types (R-D5), taking effect as declared
//! (R-D6a), and the generators of both kinds of action.
//!
//! This file holds the position and its plain accessors; the rulings are in one room
//! each, named by their ids: `well_formed` is R-D4 (what a seat may submit, from
//! public facts), `correct` is R-D5 (what the true types allow, the generator of
//! correct actions and perft), `declared` is R-D6a (an action taking effect as
//! declared, whatever the truth, and the placements of R-D3). Doubts (R-D6) and king
//! captures (R-D7) are played out in `state.rs`, on top of these.

use super::board::{BoardKind, BySide, Kind, Piece, Side, Square};
use super::notation::Action;

mod correct;
mod declared;
mod errors;
mod well_formed;

pub use errors::{Incorrect, NotWellFormed, PieceName};

/// The variant number decoded (R-D1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Variant {
    /// Drop mode `d`, 0..=3.
    pub drops: u8,
    /// `s` = 1: each side places the opponent's pieces; type visibility is swapped.
    pub swapped: bool,
    /// `b`: the board.
    pub board: BoardKind,
}

impl Variant {
    /// Decodes `variant = d + 4·s + 8·b`.
    pub fn from_number(n: u32) -> Option<Variant> {
        (n < 16).then_some(Variant {
            drops: (n % 4) as u8,
            swapped: n & 4 != 0,
            board: if n & 8 != 0 {
                BoardKind::Shogi
            } else {
                BoardKind::Chess
            },
        })
    }

    /// The variant number.
    pub fn number(self) -> u32 {
        self.drops as u32 + 4 * u32::from(self.swapped) + 8 * u32::from(self.board == BoardKind::Shogi)
    }

    /// The side whose pieces `placer` places (R-D3).
    pub fn placed_for(self, placer: Side) -> Side {
        if self.swapped {
            placer.opponent()
        } else {
            placer
        }
    }
}

/// The phase of the game.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// Placing pieces (R-D3).
    Place,
    /// Moves, drops and doubts.
    Play,
    /// The side to act must answer a king capture with `doubt` or `accept` (R-D7).
    Respond,
    /// A king capture stood: the side in `to_act` has won.
    Won,
    /// Drawn by `max-plies` (R-D8).
    Drawn,
}

/// An action that may still be doubted, with the position it was made from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pending {
    /// Who made it.
    pub actor: Side,
    /// What it was.
    pub action: Action,
    /// The position before it (never itself pending), restored if a doubt finds the
    /// action incorrect.
    pub before: Position,
}

/// Everything about a game of I-Doubt-It, hidden parts included.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Position {
    /// The variant.
    pub variant: Variant,
    /// Square contents, indexed by [`Square::index`].
    pub squares: Vec<Option<Piece>>,
    /// Each side's bench in order of capture (drop modes only).
    pub benches: BySide<Vec<Piece>>,
    /// Pieces not yet placed, by the side they belong to, in army order.
    pub supply: BySide<Vec<Kind>>,
    /// The phase.
    pub phase: Phase,
    /// The side to act (the winner once [`Phase::Won`]).
    pub to_act: Side,
    /// Play-phase actions made so far (R-D8).
    pub plies: u32,
    /// The square just passed over by an opponent's two-square advance, when that
    /// advance was the previous action (R-D4 en passant).
    pub ep: Option<Square>,
    /// The last action, while it may be doubted.
    pub pending: Option<Box<Pending>>,
}

/// What applying an action as declared did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Effect {
    /// The square a piece was captured on, if any.
    pub captured_on: Option<Square>,
    /// The captured piece was a king (R-D7).
    pub king: bool,
}

impl Position {
    /// The empty board at the start of the placement phase.
    pub fn new(variant: Variant) -> Position {
        let army = variant.board.army();
        Position {
            variant,
            squares: vec![None; variant.board.squares()],
            benches: BySide::default(),
            supply: BySide::both(army.to_vec()),
            phase: Phase::Place,
            to_act: Side::White,
            plies: 0,
            ep: None,
            pending: None,
        }
    }

    /// The board kind.
    pub fn board(&self) -> BoardKind {
        self.variant.board
    }

    /// What stands on `sq`.
    pub fn at(&self, sq: Square) -> Option<Piece> {
        self.squares[sq.index(self.board())]
    }

    pub(super) fn put(&mut self, sq: Square, piece: Option<Piece>) {
        let i = sq.index(self.board());
        self.squares[i] = piece;
    }

    /// Whether `sq` is in `side`'s last `n` ranks.
    fn in_last_ranks(&self, side: Side, sq: Square, n: u8) -> bool {
        side.relative_rank(sq.rank, self.board()) >= self.board().size() - n
    }

    /// Whether `sq` is in `side`'s home rows (R-D3).
    pub fn in_home_rows(&self, side: Side, sq: Square) -> bool {
        side.relative_rank(sq.rank, self.board()) < self.board().home_rows()
    }

    /// Squares holding pieces of `side`.
    pub fn pieces_of(&self, side: Side) -> impl Iterator<Item = (Square, Piece)> + '_ {
        self.board()
            .all_squares()
            .filter_map(move |sq| self.at(sq).filter(|p| p.owner == side).map(|p| (sq, p)))
    }
}
