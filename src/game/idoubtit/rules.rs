//! The position of I-Doubt-It TelnChes and what actions do to it: well-formedness
//! (R-D4), correctness against the true types (R-D5), taking effect as declared
//! (R-D6a), and the generators of both kinds of action.

use super::board::{BoardKind, Kind, Piece, Side, Square};
use super::notation::{Action, Promotion};
use crate::game::geometry::{ray, Dir, DIAGONAL, KNIGHT, ORTHOGONAL, QUEEN};

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
    pub benches: [Vec<Piece>; 2],
    /// Pieces not yet placed, by the side they belong to, in army order.
    pub supply: [Vec<Kind>; 2],
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
            benches: [Vec::new(), Vec::new()],
            supply: [army.to_vec(), army.to_vec()],
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

    // ---- R-D4: well-formedness, on public facts only ----

    /// Whether `side` may submit `action` now (R-D3, R-D4, R-D6, R-D7). Uses only
    /// public facts, so a seat's view suffices to compute it.
    pub fn well_formed(&self, side: Side, action: &Action) -> Result<(), String> {
        let board = self.board();
        match (self.phase, action) {
            (Phase::Won | Phase::Drawn, _) => Err("the game is over".into()),
            (_, _) if side != self.to_act => Err(format!("{} is to act", self.to_act)),
            (Phase::Place, Action::Place { kind, to }) => {
                let owner = self.variant.placed_for(side);
                if !self.supply[owner.index()].contains(kind) {
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
                let bench = &self.benches[side.index()];
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
                let mut kinds = self.supply[owner.index()].clone();
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
                    for slot in 1..=self.benches[side.index()].len() as u8 {
                        for to in board.all_squares().filter(|&sq| self.at(sq).is_none()) {
                            out.push(Action::Drop { slot, to });
                        }
                    }
                }
            }
        }
        out
    }

    // ---- R-D5: correctness, against the true types ----

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
    fn drop_fault(&self, side: Side, piece: Piece, to: Square) -> Option<String> {
        let board = self.board();
        if board == BoardKind::Chess {
            return None;
        }
        if !piece.promoted && !self.shogi_can_move_from(side, piece.kind, to) {
            return Some(format!(
                "a {} dropped on {to} could never move (R-D5)",
                kind_name(piece, board)
            ));
        }
        if piece.kind == Kind::Pawn && !piece.promoted && self.unpromoted_pawn_on_file(side, to.file) {
            return Some("a second unpromoted pawn on one file (nifu, R-D5)".into());
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
    pub fn correct(&self, side: Side, action: &Action) -> Result<(), String> {
        let board = self.board();
        match *action {
            Action::Place { .. } | Action::Doubt | Action::Accept => Ok(()),
            Action::Move { from, to, promotion } => {
                let piece = self.at(from).ok_or("no piece")?;
                if !self.targets(from).contains(&to) {
                    return Err(format!("a {} cannot move {from}{to}", kind_name(piece, board)));
                }
                match board {
                    BoardKind::Chess => {
                        let must = piece.kind == Kind::Pawn && self.in_last_ranks(side, to, 1);
                        match (must, promotion) {
                            (true, Promotion::To(_)) | (false, Promotion::None) => Ok(()),
                            (true, _) => Err("a pawn reaching the last rank must promote".into()),
                            (false, _) => Err(format!("a {} cannot promote", kind_name(piece, board))),
                        }
                    }
                    BoardKind::Shogi => match promotion {
                        Promotion::Promote if self.shogi_may_promote(side, piece, from, to) => Ok(()),
                        Promotion::Promote => {
                            Err(format!("a {} cannot promote here", kind_name(piece, board)))
                        }
                        _ if !piece.promoted && !self.shogi_can_move_from(side, piece.kind, to) => {
                            Err(format!("a {} must promote on {to}", kind_name(piece, board)))
                        }
                        _ => Ok(()),
                    },
                }
            }
            Action::EnPassant { from, to } => {
                if self.en_passant_correct(side, from, to) {
                    Ok(())
                } else {
                    Err("not a pawn taking a pawn that has just advanced two squares".into())
                }
            }
            Action::Drop { slot, to } => {
                let piece = *self.benches[side.index()]
                    .get(slot as usize - 1)
                    .ok_or("no such bench slot")?;
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
            for (slot, &piece) in self.benches[side.index()].iter().enumerate() {
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

    // ---- R-D6a: effects as declared ----

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
                let piece = self.benches[side.index()].remove(slot as usize - 1);
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
            self.benches[side.index()].push(victim);
        }
    }

    /// Places a piece (R-D3), assumed well-formed.
    pub fn apply_placement(&mut self, side: Side, kind: Kind, to: Square) {
        let owner = self.variant.placed_for(side);
        let supply = &mut self.supply[owner.index()];
        let at = supply
            .iter()
            .position(|&k| k == kind)
            .expect("well-formed: in the supply");
        supply.remove(at);
        self.put(to, Some(Piece::new(owner, kind)));
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

/// A piece's type in words, for error messages.
fn kind_name(piece: Piece, board: BoardKind) -> String {
    let base = match piece.kind {
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
    if piece.promoted && board == BoardKind::Shogi {
        format!("promoted {base}")
    } else {
        base.to_string()
    }
}
