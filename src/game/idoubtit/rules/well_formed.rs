//! R-D4: well-formedness, on public facts only. What a seat may submit now (with
//! the phase rules of R-D3, R-D6 and R-D7 that say which kinds of action are due),
//! and every such action: a seat's view suffices to compute both, so they are what a
//! seat is told it may do and what is refused before the true types are looked at.

use super::super::board::{BoardKind, Kind, Side, Square};
use super::super::notation::{Action, Promotion};
use super::{NotWellFormed, Phase, Position};

impl Position {
    /// Whether `side`, the side to act in a game not over (the game's `Turn::check`
    /// has said so), may submit `action` now (R-D3, R-D4, R-D6, R-D7). Uses only
    /// public facts, so a seat's view suffices to compute it.
    pub(crate) fn well_formed(&self, side: Side, action: &Action) -> Result<(), NotWellFormed> {
        let board = self.board();
        match (self.phase, action) {
            (Phase::Place, Action::Place { kind, to }) => {
                let owner = self.variant.placed_for(side);
                if !self.supply[owner].contains(kind) {
                    return Err(NotWellFormed::NoneLeftToPlace { kind: *kind, owner });
                }
                if !self.in_home_rows(owner, *to) {
                    return Err(NotWellFormed::NotOnHomeRows { to: *to, owner });
                }
                if self.at(*to).is_some() {
                    return Err(NotWellFormed::PlacedOnOccupied { to: *to });
                }
                Ok(())
            }
            (Phase::Place, _) => Err(NotWellFormed::PlacementPhase),
            (_, Action::Place { .. }) => Err(NotWellFormed::PlacementOver),
            (Phase::Respond, Action::Doubt | Action::Accept) => Ok(()),
            (Phase::Respond, _) => Err(NotWellFormed::MustRespond),
            (_, Action::Accept) => Err(NotWellFormed::NoKingCapture),
            (_, Action::Doubt) => match &self.pending {
                Some(p) if p.actor != side => Ok(()),
                _ => Err(NotWellFormed::NothingToDoubt),
            },
            (_, Action::Move { from, to, promotion }) => {
                self.own_piece_moves(side, *from, *to)?;
                match promotion {
                    Promotion::None => Ok(()),
                    Promotion::To(_) if board == BoardKind::Chess && self.in_last_ranks(side, *to, 1) => {
                        Ok(())
                    }
                    Promotion::Promote
                        if board == BoardKind::Shogi
                            && (self.in_last_ranks(side, *from, 3) || self.in_last_ranks(side, *to, 3)) =>
                    {
                        Ok(())
                    }
                    _ => Err(NotWellFormed::PromotionSuffix),
                }
            }
            (_, Action::EnPassant { from, to }) => {
                self.own_piece_moves(side, *from, *to)?;
                if board != BoardKind::Chess || self.ep != Some(*to) || self.at(*to).is_some() {
                    return Err(NotWellFormed::NoEnPassant { to: *to });
                }
                Ok(())
            }
            (_, Action::Drop { slot, to }) => {
                if self.variant.drops == 0 {
                    return Err(NotWellFormed::NoDrops);
                }
                let bench = &self.benches[side];
                if *slot as usize > bench.len() {
                    return Err(NotWellFormed::EmptySlot {
                        slot: *slot,
                        held: bench.len(),
                    });
                }
                if self.at(*to).is_some() {
                    return Err(NotWellFormed::DropOnOccupied { to: *to });
                }
                Ok(())
            }
        }
    }

    /// A move starts on one of `side`'s pieces and ends elsewhere, not on its own.
    fn own_piece_moves(&self, side: Side, from: Square, to: Square) -> Result<(), NotWellFormed> {
        if self.at(from).is_none_or(|p| p.owner != side) {
            return Err(NotWellFormed::NotOwnPiece { from, side });
        }
        if from == to || self.at(to).is_some_and(|p| p.owner == side) {
            return Err(NotWellFormed::OntoOwnPiece { to, side });
        }
        Ok(())
    }

    /// Every well-formed action of the side to act, in a stable order.
    pub fn well_formed_actions(&self) -> Vec<Action> {
        let side = self.to_act;
        let board = self.board();
        let mut out = Vec::new();
        match self.phase {
            Phase::Won | Phase::Drawn => {}
            Phase::Respond => out.extend([Action::Doubt, Action::Accept]),
            Phase::Place => {
                let owner = self.variant.placed_for(side);
                let mut kinds = self.supply[owner].clone();
                kinds.dedup();
                for kind in kinds {
                    for to in board
                        .all_squares()
                        .filter(|&sq| self.in_home_rows(owner, sq) && self.at(sq).is_none())
                    {
                        out.push(Action::Place { kind, to });
                    }
                }
            }
            Phase::Play => {
                if self.pending.as_ref().is_some_and(|p| p.actor != side) {
                    out.push(Action::Doubt);
                }
                for (from, _) in self.pieces_of(side).collect::<Vec<_>>() {
                    for to in board.all_squares() {
                        if to == from || self.at(to).is_some_and(|p| p.owner == side) {
                            continue;
                        }
                        out.push(Action::Move {
                            from,
                            to,
                            promotion: Promotion::None,
                        });
                        match board {
                            BoardKind::Chess if self.in_last_ranks(side, to, 1) => {
                                for k in [Kind::Queen, Kind::Rook, Kind::Bishop, Kind::Knight] {
                                    out.push(Action::Move {
                                        from,
                                        to,
                                        promotion: Promotion::To(k),
                                    });
                                }
                            }
                            BoardKind::Shogi
                                if self.in_last_ranks(side, from, 3) || self.in_last_ranks(side, to, 3) =>
                            {
                                out.push(Action::Move {
                                    from,
                                    to,
                                    promotion: Promotion::Promote,
                                });
                            }
                            _ => {}
                        }
                    }
                    if let Some(ep) = self.ep.filter(|&ep| self.at(ep).is_none()) {
                        out.push(Action::EnPassant { from, to: ep });
                    }
                }
                if self.variant.drops > 0 {
                    for slot in 1..=self.benches[side].len() as u8 {
                        for to in board.all_squares().filter(|&sq| self.at(sq).is_none()) {
                            out.push(Action::Drop { slot, to });
                        }
                    }
                }
            }
        }
        out
    }
}
