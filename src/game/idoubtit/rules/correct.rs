//! R-D5: correctness, against the true types. How each type moves on each board,
//! whether an action is correct (movement, promotion, en passant, shogi drops: nifu
//! and dead squares), every correct action of the side to act, and perft over them.
//! Its own room because it is the only ruling that reads the hidden types.

use super::super::board::{BoardKind, Kind, Piece, Side, Square};
use super::super::notation::{Action, Promotion};
use super::{Incorrect, Phase, PieceName, Position};
use crate::game::geometry::{ray, Dir, DIAGONAL, KNIGHT, ORTHOGONAL, QUEEN};

impl Position {
    /// Squares the piece on `from` could reach by correct movement, captures included
    /// (the king too: there is no check), promotion aside.
    pub fn targets(&self, from: Square) -> Vec<Square> {
        let mut out = Vec::new();
        if let Some(piece) = self.at(from) {
            self.each_target(from, piece, |to| out.push(to));
        }
        out
    }

    /// Calls `f` with every square `piece`, standing on `from`, reaches by correct
    /// movement (what [`Position::targets`] lists), without allocating.
    fn each_target(&self, from: Square, piece: Piece, mut f: impl FnMut(Square)) {
        let board = self.board();
        let side = piece.owner;
        let fwd = side.forward();
        if board == BoardKind::Chess && piece.kind == Kind::Pawn {
            if let Some(one) = from.offset(0, fwd, board).filter(|&sq| self.at(sq).is_none()) {
                f(one);
                let second_rank = side.relative_rank(from.rank, board) == 1;
                if let Some(two) = one
                    .offset(0, fwd, board)
                    .filter(|&sq| second_rank && self.at(sq).is_none())
                {
                    f(two);
                }
            }
            for df in [-1, 1] {
                if let Some(sq) = from
                    .offset(df, fwd, board)
                    .filter(|&sq| self.at(sq).is_some_and(|p| p.owner != side))
                {
                    f(sq);
                }
            }
            return;
        }
        let (steps, slides) = movement(board, piece.kind, piece.promoted);
        for &(df, dr) in steps {
            if let Some(sq) = from.offset(df, dr * fwd, board) {
                if self.at(sq).is_none_or(|p| p.owner != side) {
                    f(sq);
                }
            }
        }
        for &(df, dr) in slides {
            for sq in ray(from, |sq: Square| sq.offset(df, dr * fwd, board)) {
                match self.at(sq) {
                    None => f(sq),
                    Some(p) => {
                        if p.owner != side {
                            f(sq);
                        }
                        break;
                    }
                }
            }
        }
    }

    /// Whether a piece of `kind` (unpromoted) could ever move again from rank `sq` of
    /// `side` on the shogi board: P and L not on the last rank, N not on the last two.
    fn shogi_can_move_from(&self, side: Side, kind: Kind, sq: Square) -> bool {
        match kind {
            Kind::Pawn | Kind::Lance => !self.in_last_ranks(side, sq, 1),
            Kind::Knight => !self.in_last_ranks(side, sq, 2),
            _ => true,
        }
    }

    /// Whether `piece` of `side` may promote moving `from` → `to` on the shogi board:
    /// it has a promoted form, is not promoted yet, and the move touches the zone.
    fn shogi_may_promote(&self, side: Side, piece: Piece, from: Square, to: Square) -> bool {
        !piece.promoted
            && piece.kind.promotable_in_shogi()
            && (self.in_last_ranks(side, from, 3) || self.in_last_ranks(side, to, 3))
    }

    /// Whether an en-passant claim `from`→`to` of `side` is correct: a pawn stepping
    /// diagonally forward onto the passed-over square behind an enemy pawn.
    fn en_passant_correct(&self, side: Side, from: Square, to: Square) -> bool {
        let board = self.board();
        let is_pawn = self
            .at(from)
            .is_some_and(|p| p.kind == Kind::Pawn && p.owner == side);
        let diagonal = to.rank as i8 - from.rank as i8 == side.forward() && from.file.abs_diff(to.file) == 1;
        let victim = to
            .offset(0, side.opponent().forward(), board)
            .and_then(|sq| self.at(sq));
        board == BoardKind::Chess
            && is_pawn
            && diagonal
            && victim.is_some_and(|v| v.kind == Kind::Pawn && v.owner != side)
    }

    /// Why dropping `piece` of `side` on the empty square `to` is incorrect, if it is
    /// (R-D5: chess drops are always correct; shogi has nifu and dead squares).
    fn drop_fault(&self, side: Side, piece: Piece, to: Square) -> Option<Incorrect> {
        let board = self.board();
        if board == BoardKind::Chess {
            return None;
        }
        if !piece.promoted && !self.shogi_can_move_from(side, piece.kind, to) {
            let piece = PieceName { piece, board };
            return Some(Incorrect::DeadDrop { piece, to });
        }
        if piece.kind == Kind::Pawn && !piece.promoted && self.unpromoted_pawn_on_file(side, to.file) {
            return Some(Incorrect::Nifu);
        }
        None
    }

    /// Whether `side` has an unpromoted pawn on `file` (for nifu).
    fn unpromoted_pawn_on_file(&self, side: Side, file: u8) -> bool {
        let n = self.board().size();
        (0..n).any(|rank| {
            self.at(Square { file, rank })
                .is_some_and(|p| p.owner == side && p.kind == Kind::Pawn && !p.promoted)
        })
    }

    /// Checks an action of `side` against the true types (R-D5); `Err` says why it
    /// is incorrect. Assumes it is well-formed.
    pub fn correct(&self, side: Side, action: &Action) -> Result<(), Incorrect> {
        let board = self.board();
        match *action {
            Action::Place { .. } | Action::Doubt | Action::Accept => Ok(()),
            Action::Move { from, to, promotion } => {
                let piece = self.at(from).ok_or(Incorrect::NoPiece)?;
                let name = PieceName { piece, board };
                if !self.targets(from).contains(&to) {
                    return Err(Incorrect::CannotMove {
                        piece: name,
                        from,
                        to,
                    });
                }
                match board {
                    BoardKind::Chess => {
                        let must = piece.kind == Kind::Pawn && self.in_last_ranks(side, to, 1);
                        match (must, promotion) {
                            (true, Promotion::To(_)) | (false, Promotion::None) => Ok(()),
                            (true, _) => Err(Incorrect::MustPromote),
                            (false, _) => Err(Incorrect::CannotPromote { piece: name }),
                        }
                    }
                    BoardKind::Shogi => match promotion {
                        Promotion::Promote if self.shogi_may_promote(side, piece, from, to) => Ok(()),
                        Promotion::Promote => Err(Incorrect::CannotPromoteHere { piece: name }),
                        _ if !piece.promoted && !self.shogi_can_move_from(side, piece.kind, to) => {
                            Err(Incorrect::MustPromoteOn { piece: name, to })
                        }
                        _ => Ok(()),
                    },
                }
            }
            Action::EnPassant { from, to } => {
                if self.en_passant_correct(side, from, to) {
                    Ok(())
                } else {
                    Err(Incorrect::NotEnPassant)
                }
            }
            Action::Drop { slot, to } => {
                let piece = *self.benches[side]
                    .get(slot as usize - 1)
                    .ok_or(Incorrect::NoSuchSlot)?;
                self.drop_fault(side, piece, to).map_or(Ok(()), Err)
            }
        }
    }

    /// Every correct move and drop of the side to act (placements in the placement
    /// phase), in a stable order: what `correct` lists and what perft counts.
    pub fn correct_actions(&self) -> Vec<Action> {
        match self.phase {
            Phase::Place => self.well_formed_actions(),
            Phase::Play => {
                let mut out = Vec::with_capacity(64);
                self.push_correct_actions(&mut out);
                out
            }
            _ => Vec::new(),
        }
    }

    /// Appends the correct moves and drops of the side to act (play phase) to `out`.
    fn push_correct_actions(&self, out: &mut Vec<Action>) {
        let side = self.to_act;
        let board = self.board();
        let n = board.size();
        let ep = self
            .ep
            .filter(|&ep| board == BoardKind::Chess && self.at(ep).is_none());
        for (i, piece) in self.squares.iter().enumerate() {
            let Some(piece) = piece.filter(|p| p.owner == side) else {
                continue;
            };
            let from = Square {
                file: (i % n as usize) as u8,
                rank: (i / n as usize) as u8,
            };
            self.each_target(from, piece, |to| {
                let mut push = |promotion| out.push(Action::Move { from, to, promotion });
                match board {
                    BoardKind::Chess if piece.kind == Kind::Pawn && self.in_last_ranks(side, to, 1) => {
                        for k in [Kind::Queen, Kind::Rook, Kind::Bishop, Kind::Knight] {
                            push(Promotion::To(k));
                        }
                    }
                    BoardKind::Chess => push(Promotion::None),
                    BoardKind::Shogi => {
                        if piece.promoted || self.shogi_can_move_from(side, piece.kind, to) {
                            push(Promotion::None);
                        }
                        if self.shogi_may_promote(side, piece, from, to) {
                            push(Promotion::Promote);
                        }
                    }
                }
            });
            if let Some(ep) = ep.filter(|&ep| self.en_passant_correct(side, from, ep)) {
                out.push(Action::EnPassant { from, to: ep });
            }
        }
        if self.variant.drops > 0 {
            for (slot, &piece) in self.benches[side].iter().enumerate() {
                let slot = slot as u8 + 1;
                // Files where this drop would be nifu (shogi pawns only).
                let mut nifu = [false; 9];
                if board == BoardKind::Shogi && piece.kind == Kind::Pawn && !piece.promoted {
                    for (file, nifu) in (0..n).zip(nifu.iter_mut()) {
                        *nifu = self.unpromoted_pawn_on_file(side, file);
                    }
                }
                for (i, sq) in self.squares.iter().enumerate() {
                    if sq.is_some() {
                        continue;
                    }
                    let to = Square {
                        file: (i % n as usize) as u8,
                        rank: (i / n as usize) as u8,
                    };
                    let correct = match board {
                        BoardKind::Chess => true,
                        BoardKind::Shogi => {
                            (piece.promoted || self.shogi_can_move_from(side, piece.kind, to))
                                && !nifu[to.file as usize]
                        }
                    };
                    if correct {
                        out.push(Action::Drop { slot, to });
                    }
                }
            }
        }
    }

    /// Counts the sequences of `depth` correct actions from here (perft): each action
    /// takes effect as declared (R-D6a) and the other side acts next. King captures
    /// are ordinary moves and play goes on after them; there is no check.
    pub fn perft(&self, depth: u32) -> u64 {
        let mut root = self.clone();
        root.pending = None;
        let mut buffers = vec![Vec::new(); depth as usize];
        root.perft_with(depth, &mut buffers)
    }

    /// [`Position::perft`] with one reusable action buffer per remaining ply.
    fn perft_with(&self, depth: u32, buffers: &mut [Vec<Action>]) -> u64 {
        let Some((actions, deeper)) = buffers.split_first_mut() else {
            return 1;
        };
        actions.clear();
        self.push_correct_actions(actions);
        if depth == 1 {
            return actions.len() as u64;
        }
        let side = self.to_act;
        let mut count = 0;
        for action in actions.iter() {
            let mut next = self.clone();
            next.apply_declared(side, action);
            next.to_act = side.opponent();
            count += next.perft_with(depth - 1, deeper);
        }
        count
    }
}

/// Offsets `(file, rank)` a piece steps to once and directions it slides along, with
/// ranks counted forward for its owner. The chess pawn is handled apart; a type of
/// the other board (which no state can hold) or a hidden type moves nowhere.
fn movement(board: BoardKind, kind: Kind, promoted: bool) -> (&'static [Dir], &'static [Dir]) {
    const NONE: [Dir; 0] = [];
    const GOLD: [Dir; 6] = [(0, 1), (1, 1), (-1, 1), (1, 0), (-1, 0), (0, -1)];
    const SILVER: [Dir; 5] = [(0, 1), (1, 1), (-1, 1), (1, -1), (-1, -1)];
    const SHOGI_KNIGHT: [Dir; 2] = [(1, 2), (-1, 2)];
    const FORWARD: [Dir; 1] = [(0, 1)];
    match (board, kind, promoted) {
        (_, Kind::King, _) => (&QUEEN, &NONE),
        (BoardKind::Chess, Kind::Queen, _) => (&NONE, &QUEEN),
        (BoardKind::Chess, Kind::Rook, _) | (BoardKind::Shogi, Kind::Rook, false) => (&NONE, &ORTHOGONAL),
        (BoardKind::Chess, Kind::Bishop, _) | (BoardKind::Shogi, Kind::Bishop, false) => (&NONE, &DIAGONAL),
        (BoardKind::Chess, Kind::Knight, _) => (&KNIGHT, &NONE),
        (BoardKind::Shogi, Kind::Rook, true) => (&DIAGONAL, &ORTHOGONAL),
        (BoardKind::Shogi, Kind::Bishop, true) => (&ORTHOGONAL, &DIAGONAL),
        (BoardKind::Shogi, Kind::Gold, _)
        | (BoardKind::Shogi, Kind::Silver | Kind::Knight | Kind::Lance | Kind::Pawn, true) => (&GOLD, &NONE),
        (BoardKind::Shogi, Kind::Silver, false) => (&SILVER, &NONE),
        (BoardKind::Shogi, Kind::Knight, false) => (&SHOGI_KNIGHT, &NONE),
        (BoardKind::Shogi, Kind::Lance, false) => (&NONE, &FORWARD),
        (BoardKind::Shogi, Kind::Pawn, false) => (&FORWARD, &NONE),
        _ => (&NONE, &NONE),
    }
}
