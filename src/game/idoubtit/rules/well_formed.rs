//! R-D4: well-formedness, on public facts only. What a seat may submit now (with
//! the phase rules of R-D3, R-D6 and R-D7 that say which kinds of action are due),
//! and every such action: a seat's view suffices to compute both, so they are what a
//! seat is told it may do and what is refused before the true types are looked at.

use super::super::board::{BoardKind, Kind, Side, Square};
use super::super::notation::{Action, Promotion};
use super::{Phase, Position};

impl Position {
    /// Whether `side` may submit `action` now (R-D3, R-D4, R-D6, R-D7). Uses only
    /// public facts, so a seat's view suffices to compute it.
    pub fn well_formed(&self, side: Side, action: &Action) -> Result<(), String> {
        let board = self.board();
        match (self.phase, action) {
            (Phase::Won | Phase::Drawn, _) => Err("the game is over".into()),
            (_, _) if side != self.to_act => Err(format!("{} is to act", self.to_act)),
            (Phase::Place, Action::Place { kind, to }) => {
                let owner = self.variant.placed_for(side);
                if !self.supply[owner].contains(kind) {
                    return Err(format!("no {} left to place for {owner}", kind.letter()));
                }
                if !self.in_home_rows(owner, *to) {
                    return Err(format!("{to} is not on {owner}'s home rows (R-D3)"));
                }
                if self.at(*to).is_some() {
                    return Err(format!("{to} is occupied"));
                }
                Ok(())
            }
            (Phase::Place, _) => Err("the placement phase is on: place a piece, e.g. `N@b1` (R-D3)".into()),
            (_, Action::Place { .. }) => Err("the placement phase is over".into()),
            (Phase::Respond, Action::Doubt | Action::Accept) => Ok(()),
            (Phase::Respond, _) => Err("your king was captured: `doubt` or `accept` (R-D7)".into()),
            (_, Action::Accept) => Err("`accept` answers a king capture only (R-D7)".into()),
            (_, Action::Doubt) => match &self.pending {
                Some(p) if p.actor != side => Ok(()),
                _ => Err("there is no action of the opponent to doubt (R-D6)".into()),
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
                    _ => Err("a promotion suffix is allowed only where a pawn could promote (R-D4)".into()),
                }
            }
            (_, Action::EnPassant { from, to }) => {
                self.own_piece_moves(side, *from, *to)?;
                if board != BoardKind::Chess || self.ep != Some(*to) || self.at(*to).is_some() {
                    return Err(format!(
                        "{to} was not just passed over by an enemy two-square advance (R-D4 en passant)"
                    ));
                }
                Ok(())
            }
            (_, Action::Drop { slot, to }) => {
                if self.variant.drops == 0 {
                    return Err("this variant has no drops (R-D1)".into());
                }
                let bench = &self.benches[side];
                if *slot as usize > bench.len() {
                    return Err(format!(
                        "bench slot {slot} is empty: your bench holds {}",
                        bench.len()
                    ));
                }
                if self.at(*to).is_some() {
                    return Err(format!("{to} is occupied: drops go to empty squares"));
                }
                Ok(())
            }
        }
    }

    /// A move starts on one of `side`'s pieces and ends elsewhere, not on its own.
    fn own_piece_moves(&self, side: Side, from: Square, to: Square) -> Result<(), String> {
        if self.at(from).is_none_or(|p| p.owner != side) {
            return Err(format!("{from} holds none of {side}'s pieces"));
        }
        if from == to || self.at(to).is_some_and(|p| p.owner == side) {
            return Err(format!("{to} holds one of {side}'s own pieces"));
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
