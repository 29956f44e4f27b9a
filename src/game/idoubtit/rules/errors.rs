//! What R-D4 refuses and why R-D5 finds an action incorrect, as types. The texts of
//! [`NotWellFormed`] reach the seats (`error` lines) and records word for word.

use super::super::board::{BoardKind, Kind, Piece, Side, Square};

/// Why `side` may not submit an action now (R-D3, R-D4, R-D6, R-D7), on public facts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum NotWellFormed {
    /// R-D3: a side places the pieces its supply still holds.
    #[error("no {} left to place for {owner}", .kind.letter())]
    NoneLeftToPlace {
        /// The type named.
        kind: Kind,
        /// Whose supply it would come from.
        owner: Side,
    },
    /// R-D3: pieces are placed on their owner's home rows.
    #[error("{to} is not on {owner}'s home rows (R-D3)")]
    NotOnHomeRows {
        /// Where the placement goes.
        to: Square,
        /// The owner of the piece placed.
        owner: Side,
    },
    /// R-D3: pieces are placed on empty squares.
    #[error("{to} is occupied")]
    PlacedOnOccupied {
        /// Where the placement goes.
        to: Square,
    },
    /// R-D3: while the supplies last, every action is a placement.
    #[error("the placement phase is on: place a piece, e.g. `N@b1` (R-D3)")]
    PlacementPhase,
    /// R-D3: placements end with the placement phase.
    #[error("the placement phase is over")]
    PlacementOver,
    /// R-D7: a side whose king was captured answers `doubt` or `accept`.
    #[error("your king was captured: `doubt` or `accept` (R-D7)")]
    MustRespond,
    /// R-D7: `accept` is an answer to a king capture only.
    #[error("`accept` answers a king capture only (R-D7)")]
    NoKingCapture,
    /// R-D6: a doubt is of the opponent's action just made.
    #[error("there is no action of the opponent to doubt (R-D6)")]
    NothingToDoubt,
    /// R-D4: a move starts on one of the mover's pieces.
    #[error("{from} holds none of {side}'s pieces")]
    NotOwnPiece {
        /// Where the move starts.
        from: Square,
        /// The side moving.
        side: Side,
    },
    /// R-D4: a move ends elsewhere, not on one of the mover's own pieces.
    #[error("{to} holds one of {side}'s own pieces")]
    OntoOwnPiece {
        /// Where the move ends.
        to: Square,
        /// The side moving.
        side: Side,
    },
    /// R-D4: a promotion suffix only where a pawn of the mover could promote.
    #[error("a promotion suffix is allowed only where a pawn could promote (R-D4)")]
    PromotionSuffix,
    /// R-D4 en passant: the square just passed over by an enemy two-square advance.
    #[error("{to} was not just passed over by an enemy two-square advance (R-D4 en passant)")]
    NoEnPassant {
        /// The square claimed.
        to: Square,
    },
    /// R-D1: drop mode 0 has no drops.
    #[error("this variant has no drops (R-D1)")]
    NoDrops,
    /// R-D4: a drop names a slot the bench holds.
    #[error("bench slot {slot} is empty: your bench holds {held}")]
    EmptySlot {
        /// The slot named, 1-based.
        slot: u8,
        /// How many pieces the bench holds.
        held: usize,
    },
    /// R-D4: drops go to empty squares.
    #[error("{to} is occupied: drops go to empty squares")]
    DropOnOccupied {
        /// Where the drop goes.
        to: Square,
    },
}

/// Why a well-formed action is incorrect against the true types (R-D5): what a doubt
/// of it finds (R-D6).
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Incorrect {
    /// R-D5: a move starts on a piece (well-formedness has checked it does).
    #[error("no piece")]
    NoPiece,
    /// R-D5: each type moves its own way.
    #[error("a {piece} cannot move {from}{to}")]
    CannotMove {
        /// The piece moved.
        piece: PieceName,
        /// Where from.
        from: Square,
        /// Where to.
        to: Square,
    },
    /// R-D5 (chess board): a pawn reaching the last rank promotes.
    #[error("a pawn reaching the last rank must promote")]
    MustPromote,
    /// R-D5 (chess board): only a pawn reaching the last rank promotes.
    #[error("a {piece} cannot promote")]
    CannotPromote {
        /// The piece moved.
        piece: PieceName,
    },
    /// R-D5 (shogi board): promotion is of a promotable piece in, into or out of the
    /// last three ranks.
    #[error("a {piece} cannot promote here")]
    CannotPromoteHere {
        /// The piece moved.
        piece: PieceName,
    },
    /// R-D5 (shogi board): a piece that could never move again from `to` promotes.
    #[error("a {piece} must promote on {to}")]
    MustPromoteOn {
        /// The piece moved.
        piece: PieceName,
        /// Where it lands.
        to: Square,
    },
    /// R-D5: en passant is a pawn taking a pawn that has just advanced two squares.
    #[error("not a pawn taking a pawn that has just advanced two squares")]
    NotEnPassant,
    /// R-D5: a drop names a slot the bench holds (well-formedness has checked it does).
    #[error("no such bench slot")]
    NoSuchSlot,
    /// R-D5 (shogi board): no drop where the piece could never move.
    #[error("a {piece} dropped on {to} could never move (R-D5)")]
    DeadDrop {
        /// The piece dropped.
        piece: PieceName,
        /// Where.
        to: Square,
    },
    /// R-D5 (shogi board): nifu.
    #[error("a second unpromoted pawn on one file (nifu, R-D5)")]
    Nifu,
}

/// A piece's type in words, as [`Incorrect`] names it: `promoted` is said on the
/// shogi board only.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PieceName {
    /// The piece.
    pub piece: Piece,
    /// The board it stands on.
    pub board: BoardKind,
}

impl std::fmt::Display for PieceName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let base = match self.piece.kind {
            Kind::King => "king",
            Kind::Queen => "queen",
            Kind::Rook => "rook",
            Kind::Bishop => "bishop",
            Kind::Knight => "knight",
            Kind::Pawn => "pawn",
            Kind::Gold => "gold",
            Kind::Silver => "silver",
            Kind::Lance => "lance",
            Kind::Unknown => "piece",
        };
        if self.piece.promoted && self.board == BoardKind::Shogi {
            f.write_str("promoted ")?;
        }
        f.write_str(base)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The words of each error are those seats were sent before the errors had
    /// types: the texts the old `format!` calls printed, for the same values.
    #[test]
    fn errors_print_the_words_they_always_have() {
        let sq = |s| Square::parse(s, BoardKind::Chess).unwrap();
        let (from, to, side) = (sq("e2"), sq("e4"), Side::Black);
        let cases = [
            (
                NotWellFormed::NoneLeftToPlace {
                    kind: Kind::Knight,
                    owner: side,
                },
                "no N left to place for black",
            ),
            (
                NotWellFormed::NotOnHomeRows { to, owner: side },
                "e4 is not on black's home rows (R-D3)",
            ),
            (NotWellFormed::PlacedOnOccupied { to }, "e4 is occupied"),
            (
                NotWellFormed::PlacementPhase,
                "the placement phase is on: place a piece, e.g. `N@b1` (R-D3)",
            ),
            (NotWellFormed::PlacementOver, "the placement phase is over"),
            (
                NotWellFormed::MustRespond,
                "your king was captured: `doubt` or `accept` (R-D7)",
            ),
            (
                NotWellFormed::NoKingCapture,
                "`accept` answers a king capture only (R-D7)",
            ),
            (
                NotWellFormed::NothingToDoubt,
                "there is no action of the opponent to doubt (R-D6)",
            ),
            (
                NotWellFormed::NotOwnPiece { from, side },
                "e2 holds none of black's pieces",
            ),
            (
                NotWellFormed::OntoOwnPiece { to, side },
                "e4 holds one of black's own pieces",
            ),
            (
                NotWellFormed::PromotionSuffix,
                "a promotion suffix is allowed only where a pawn could promote (R-D4)",
            ),
            (
                NotWellFormed::NoEnPassant { to },
                "e4 was not just passed over by an enemy two-square advance (R-D4 en passant)",
            ),
            (NotWellFormed::NoDrops, "this variant has no drops (R-D1)"),
            (
                NotWellFormed::EmptySlot { slot: 3, held: 2 },
                "bench slot 3 is empty: your bench holds 2",
            ),
            (
                NotWellFormed::DropOnOccupied { to },
                "e4 is occupied: drops go to empty squares",
            ),
        ];
        for (error, text) in cases {
            assert_eq!(error.to_string(), text);
        }
    }

    /// The same for [`Incorrect`], and the piece names it uses.
    #[test]
    fn incorrect_actions_are_named_as_they_always_were() {
        let sq = |s| Square::parse(s, BoardKind::Shogi).unwrap();
        let (from, to) = (sq("b2"), sq("b9"));
        let mut promoted = Piece::new(Side::White, Kind::Silver);
        promoted.promoted = true;
        let shogi = |piece| PieceName {
            piece,
            board: BoardKind::Shogi,
        };
        let chess = |piece| PieceName {
            piece,
            board: BoardKind::Chess,
        };
        let knight = Piece::new(Side::White, Kind::Knight);
        let cases = [
            (Incorrect::NoPiece, "no piece".to_string()),
            (
                Incorrect::CannotMove {
                    piece: shogi(promoted),
                    from,
                    to,
                },
                "a promoted silver cannot move b2b9".into(),
            ),
            (
                Incorrect::MustPromote,
                "a pawn reaching the last rank must promote".into(),
            ),
            (
                Incorrect::CannotPromote {
                    piece: chess(promoted),
                },
                "a silver cannot promote".into(),
            ),
            (
                Incorrect::CannotPromoteHere { piece: shogi(knight) },
                "a knight cannot promote here".into(),
            ),
            (
                Incorrect::MustPromoteOn {
                    piece: shogi(knight),
                    to,
                },
                "a knight must promote on b9".into(),
            ),
            (
                Incorrect::NotEnPassant,
                "not a pawn taking a pawn that has just advanced two squares".into(),
            ),
            (Incorrect::NoSuchSlot, "no such bench slot".into()),
            (
                Incorrect::DeadDrop {
                    piece: shogi(knight),
                    to,
                },
                "a knight dropped on b9 could never move (R-D5)".into(),
            ),
            (
                Incorrect::Nifu,
                "a second unpromoted pawn on one file (nifu, R-D5)".into(),
            ),
        ];
        for (error, text) in cases {
            assert_eq!(error.to_string(), text);
        }
        let unknown = Piece::new(Side::Black, Kind::Unknown);
        assert_eq!(chess(unknown).to_string(), "piece");
    }
}
