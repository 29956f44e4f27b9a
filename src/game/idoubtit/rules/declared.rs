//! R-D6a: an action takes effect as declared, whatever the truth: the piece moves
//! (promoting as declared), a capture goes to the bench in drop modes (unpromoted on
//! the shogi board, R-D5), and the en-passant square is set for the next action; and
//! R-D3's placements. The doubts that may undo an action (R-D6) restore the position
//! saved before it, in `state.rs`.

use super::super::board::{BoardKind, Kind, Piece, Side, Square};
use super::super::notation::{Action, Promotion};
use super::{Effect, Position};

impl Position {
    /// Whether `action` of `side`, taken as declared, captures something (without
    /// making it).
    pub fn captures(&self, side: Side, action: &Action) -> bool {
        self.captured_square(side, action).is_some()
    }

    /// The square of the opponent's piece that `action` of `side` would take, if any
    /// (for `ep`, the square of the piece that has just advanced two squares).
    pub fn captured_square(&self, side: Side, action: &Action) -> Option<Square> {
        let sq = match *action {
            Action::Move { to, .. } => Some(to),
            Action::EnPassant { to, .. } => to.offset(0, side.opponent().forward(), self.board()),
            _ => None,
        }?;
        self.at(sq).is_some_and(|p| p.owner != side).then_some(sq)
    }

    /// Applies a well-formed move, en-passant claim or drop of `side` as declared,
    /// whatever the truth (R-D6a); sets the en-passant square for the next action.
    /// Turn, phase, plies and doubts are the caller's business.
    pub fn apply_declared(&mut self, side: Side, action: &Action) -> Effect {
        let board = self.board();
        let mut effect = Effect::default();
        let next_ep = match *action {
            Action::Move { from, to, .. }
                if board == BoardKind::Chess
                    && from.file == to.file
                    && side.relative_rank(from.rank, board) == 1
                    && side.relative_rank(to.rank, board) == 3 =>
            {
                from.offset(0, side.forward(), board)
            }
            _ => None,
        };
        match *action {
            Action::Move { from, to, promotion } => {
                let mut piece = self.at(from).expect("well-formed: a piece on from");
                self.capture(side, to, &mut effect);
                match promotion {
                    Promotion::To(k) if piece.kind != Kind::King => piece.kind = k,
                    Promotion::Promote if piece.kind.promotable_in_shogi() => piece.promoted = true,
                    _ => {}
                }
                self.put(from, None);
                self.put(to, Some(piece));
            }
            Action::EnPassant { from, to } => {
                let piece = self.at(from).expect("well-formed: a piece on from");
                if let Some(victim) = to.offset(0, side.opponent().forward(), board) {
                    if self.at(victim).is_some_and(|p| p.owner != side) {
                        self.capture(side, victim, &mut effect);
                    }
                }
                self.put(from, None);
                self.put(to, Some(piece));
            }
            Action::Drop { slot, to } => {
                let piece = self.benches[side].remove(slot as usize - 1);
                self.put(to, Some(piece));
            }
            Action::Place { .. } | Action::Doubt | Action::Accept => unreachable!("not a board action"),
        }
        self.ep = next_ep;
        effect
    }

    /// Takes the opponent's piece on `sq` (if any): to `side`'s bench in drop modes,
    /// unpromoted on the shogi board (R-D5).
    fn capture(&mut self, side: Side, sq: Square, effect: &mut Effect) {
        let Some(mut victim) = self.at(sq) else { return };
        effect.captured_on = Some(sq);
        effect.king = victim.kind == Kind::King;
        self.put(sq, None);
        if self.variant.drops > 0 {
            victim.owner = side;
            if self.board() == BoardKind::Shogi {
                victim.promoted = false;
            }
            self.benches[side].push(victim);
        }
    }

    /// Places a piece (R-D3), assumed well-formed.
    pub fn apply_placement(&mut self, side: Side, kind: Kind, to: Square) {
        let owner = self.variant.placed_for(side);
        let supply = &mut self.supply[owner];
        let at = supply
            .iter()
            .position(|&k| k == kind)
            .expect("well-formed: in the supply");
        supply.remove(at);
        self.put(to, Some(Piece::new(owner, kind)));
    }
}
