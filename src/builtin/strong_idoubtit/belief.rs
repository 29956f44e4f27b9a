//! What the strong agent believes about the hidden types: every piece followed by
//! identity from the events (placements, moves, drops, undos), each with a weight
//! per type, narrowed by what the seat saw happen to it (R-D10), and the
//! determinisations sampled from those weights.
//!
//! A verdict is proof (R-D6): `correct` rules out every type that could not have
//! made the move, `incorrect` every type that could. A move that stood is evidence
//! only as strong as the side watching it is careful: the types that could not have
//! made it lose weight by how often that side's doubts were right. A king capture
//! announcement (R-D7) names the victim's type even when a doubt undoes it.

use crate::game::idoubtit::board::{BoardKind, BySide, Kind, Piece, Side, Square};
use crate::game::idoubtit::notation::{self, Action, Promotion};
use crate::game::idoubtit::rules::{Position, Variant};
use crate::rng::Rng;

/// One piece as the seat follows it.
#[derive(Clone, Debug)]
struct Tracked {
    /// Who owns it now.
    owner: Side,
    /// A weight for each of the board's kinds ([`BoardKind::kinds`] order).
    weights: Vec<f64>,
    /// Promoted as far as the events tell (a `+` that stood, shogi board).
    promoted: bool,
}

/// A move or drop that may still be doubted, with everything a doubt would restore.
#[derive(Clone, Debug)]
struct Pending {
    actor: Side,
    action: Action,
    mover: Option<usize>,
    captured: Option<Square>,
    squares: Vec<Option<usize>>,
    benches: BySide<Vec<usize>>,
    pieces: Vec<Tracked>,
}

/// How each side's doubted actions came out: the learned model of how honest a
/// side is (the opponent's bluffs, and how the opponent's doubts meet ours).
#[derive(Clone, Debug, Default)]
pub struct Record {
    /// Doubts of this side's actions that found them correct.
    pub doubted_correct: BySide<u32>,
    /// Doubts of this side's actions that found them incorrect.
    pub doubted_incorrect: BySide<u32>,
}

impl Record {
    /// How likely a doubted action of `side` is correct (Laplace-smoothed, a prior
    /// of 3 in 5): its honesty when caught.
    pub fn honesty(&self, side: Side) -> f64 {
        (f64::from(self.doubted_correct[side]) + 3.0)
            / (f64::from(self.doubted_correct[side] + self.doubted_incorrect[side]) + 5.0)
    }
}

/// The seat's memory of one game: pieces by identity and what it learned.
#[derive(Clone, Debug, Default)]
pub struct Belief {
    pieces: Vec<Tracked>,
    squares: Vec<Option<usize>>,
    benches: BySide<Vec<usize>>,
    pending: Option<Pending>,
    /// The verdicts so far.
    pub record: Record,
}

impl Belief {
    /// Follows the events of one `go`, then checks them against the view: a board
    /// that disagrees (an event missed) is followed afresh from the view. The
    /// types the view shows are certain and overwrite the weights.
    pub fn update(&mut self, variant: Variant, me: Side, events: &[String], view: &Position) {
        let board = variant.board;
        if self.squares.len() != board.squares() {
            self.squares = vec![None; board.squares()];
        }
        for event in events {
            self.event(variant, me, event);
        }
        if !self.agrees(view) {
            self.restart(view);
        }
        for sq in board.all_squares() {
            if let (Some(id), Some(p)) = (self.squares[sq.index(board)], view.at(sq)) {
                self.see(board, id, &p);
            }
        }
        for side in Side::BOTH {
            for (i, p) in view.benches[side].iter().enumerate() {
                if let Some(&id) = self.benches[side].get(i) {
                    self.see(board, id, p);
                }
            }
        }
    }

    /// Makes piece `id`'s type the one the view shows, if it shows one.
    fn see(&mut self, board: BoardKind, id: usize, piece: &Piece) {
        if piece.kind == Kind::Unknown {
            return;
        }
        let t = &mut self.pieces[id];
        t.weights = one_hot(board, piece.kind);
        t.promoted = piece.promoted;
    }

    /// Whether the followed board has the view's occupants and bench sizes.
    fn agrees(&self, view: &Position) -> bool {
        let board = view.board();
        board.all_squares().all(|sq| {
            let i = sq.index(board);
            self.squares[i].map(|id| self.pieces[id].owner) == view.squares[i].map(|p| p.owner)
        }) && Side::BOTH
            .iter()
            .all(|&s| self.benches[s].len() == view.benches[s].len())
    }

    /// Starts following the view's pieces afresh, every hidden one as likely any type.
    fn restart(&mut self, view: &Position) {
        let board = view.board();
        self.pieces.clear();
        self.squares = vec![None; board.squares()];
        self.benches = BySide::default();
        self.pending = None;
        for sq in board.all_squares() {
            if let Some(p) = view.at(sq) {
                self.squares[sq.index(board)] = Some(self.fresh(board, p.owner));
            }
        }
        for side in Side::BOTH {
            for _ in &view.benches[side] {
                let id = self.fresh(board, side);
                self.benches[side].push(id);
            }
        }
    }

    /// A new piece of `owner`, of unknown type.
    fn fresh(&mut self, board: BoardKind, owner: Side) -> usize {
        self.pieces.push(Tracked {
            owner,
            weights: vec![1.0; board.kinds().len()],
            promoted: false,
        });
        self.pieces.len() - 1
    }

    /// Follows one event (protocol.md §3.2), ignoring what it cannot read.
    fn event(&mut self, variant: Variant, me: Side, event: &str) {
        let board = variant.board;
        let words: Vec<&str> = event.split(' ').collect();
        let side = match words.get(1).copied() {
            Some("white") => Some(Side::White),
            Some("black") => Some(Side::Black),
            _ => None,
        };
        match (words[0], side, words.get(2)) {
            ("place", Some(placer), Some(text)) => {
                let Some((letter, sq)) = text.split_once('@') else {
                    return;
                };
                let Some(sq) = Square::parse(sq, board) else {
                    return;
                };
                let id = self.fresh(board, variant.placed_for(placer));
                if let Some(kind) = letter.chars().next().and_then(|c| Kind::from_letter(c, board)) {
                    self.pieces[id].weights = one_hot(board, kind);
                }
                self.squares[sq.index(board)] = Some(id);
            }
            ("move" | "drop", Some(actor), Some(text)) => {
                let captured = words
                    .iter()
                    .position(|w| *w == "capture")
                    .and_then(|i| words.get(i + 1))
                    .and_then(|sq| Square::parse(sq, board));
                self.stand(variant, me);
                self.play(variant, actor, text, captured);
            }
            ("verdict", _, _) => self.verdict(variant, words.get(1) == Some(&"correct")),
            ("undo", _, _) => self.undo(),
            ("king-captured", _, _) => {
                // The victim of the pending capture was a king, whatever a doubt says.
                let victim = self
                    .pending
                    .as_ref()
                    .and_then(|p| p.captured.and_then(|sq| p.squares[sq.index(board)]));
                if let Some(id) = victim {
                    self.pieces[id].weights = one_hot(board, Kind::King);
                    if let Some(p) = self.pending.as_mut() {
                        p.pieces[id].weights = one_hot(board, Kind::King);
                    }
                }
            }
            _ => {}
        }
    }

    /// Plays a move or drop as declared (R-D6a) on the followed board, keeping what
    /// a doubt would restore.
    fn play(&mut self, variant: Variant, actor: Side, text: &str, captured: Option<Square>) {
        let board = variant.board;
        let Ok(mut action) = notation::parse(text.trim_end_matches('?'), board) else {
            return;
        };
        if let (true, Action::Move { from, to, .. }) = (text.ends_with('?'), action) {
            action = Action::Move {
                from,
                to,
                promotion: Promotion::To(Kind::Unknown),
            };
        }
        let (from, to) = match action {
            Action::Move { from, to, .. } | Action::EnPassant { from, to } => (Some(from), to),
            Action::Drop { to, .. } => (None, to),
            _ => return,
        };
        let mover = match (from, action) {
            (Some(from), _) => self.squares[from.index(board)],
            (None, Action::Drop { slot, .. }) => self.benches[actor]
                .get(usize::from(slot).wrapping_sub(1))
                .copied(),
            _ => None,
        };
        self.pending = Some(Pending {
            actor,
            action,
            mover,
            captured,
            squares: self.squares.clone(),
            benches: self.benches.clone(),
            pieces: self.pieces.clone(),
        });
        if let Some(victim) = captured.and_then(|sq| self.squares[sq.index(board)].take()) {
            if variant.drops > 0 {
                self.benches[actor].push(victim);
                self.pieces[victim].owner = actor;
                // R-D5: a captured piece unpromotes on the shogi board.
                self.pieces[victim].promoted &= board == BoardKind::Chess;
            }
        }
        match (from, action) {
            (Some(from), _) => self.squares[from.index(board)] = None,
            (None, Action::Drop { slot, .. }) => {
                let slot = usize::from(slot);
                if (1..=self.benches[actor].len()).contains(&slot) {
                    self.benches[actor].remove(slot - 1);
                }
            }
            _ => {}
        }
        self.squares[to.index(board)] = mover;
        let (Some(id), Action::Move { promotion, .. }) = (mover, action) else {
            return;
        };
        match promotion {
            Promotion::To(kind) => self.pieces[id].weights = promoted(board, &self.pieces[id].weights, kind),
            Promotion::Promote => self.pieces[id].promoted = true,
            Promotion::None => {}
        }
    }

    /// We act instead of doubting the opponent's pending action, so it stands now:
    /// what it says of its mover must count in this decision already (a piece that
    /// just took down a file is likely one that can take down it again).
    pub fn let_stand(&mut self, variant: Variant, me: Side) {
        if self.pending.as_ref().is_some_and(|p| p.actor != me) {
            self.stand(variant, me);
        }
    }

    /// The pending action stood (R-D6): the types that could not have made it lose
    /// weight. How much: for the opponent's action, by how honest its doubted
    /// actions were; for ours (types we may not see, `s` = 1), by how often the
    /// opponent's doubts of ours were right, since a careful doubter lets only
    /// correct moves stand.
    fn stand(&mut self, variant: Variant, me: Side) {
        let Some(p) = self.pending.take() else { return };
        let r = &self.record;
        let evidence = if p.actor == me {
            (f64::from(r.doubted_incorrect[me]) + 1.0)
                / (f64::from(r.doubted_incorrect[me] + r.doubted_correct[me]) + 2.0)
        } else {
            r.honesty(p.actor)
        };
        let keep = 1.0 - 0.9 * evidence;
        self.narrow(variant, &p, |could| if could { 1.0 } else { keep });
    }

    /// A doubt's verdict: proof about the doubted action's mover.
    fn verdict(&mut self, variant: Variant, correct: bool) {
        let Some(p) = self.pending.clone() else { return };
        if correct {
            self.record.doubted_correct[p.actor] += 1;
            self.pending = None;
        } else {
            self.record.doubted_incorrect[p.actor] += 1;
        }
        let proved = self.narrow(variant, &p, |could| f64::from(u8::from(could == correct)));
        // An undo is coming: what was proved must survive it.
        if let (Some(id), Some(pending)) = (p.mover, self.pending.as_mut()) {
            pending.pieces[id].weights = proved;
        }
    }

    /// Multiplies the mover's weights before the move by `factor(could this type
    /// have made it)` for moves, promotions included (R-D5: a move's correctness
    /// hangs on the mover's type alone; an en-passant claim's or a drop's on other
    /// pieces too), and returns them. The piece on the board gets them as the move
    /// left it: a declared promotion turns what moved into what it claimed (R-D6a),
    /// and so must not be undone by what the move says of the mover.
    fn narrow(&mut self, variant: Variant, p: &Pending, factor: impl Fn(bool) -> f64) -> Vec<f64> {
        let board = variant.board;
        let Some(id) = p.mover else { return Vec::new() };
        let before = p.pieces[id].weights.clone();
        let Action::Move { from, promotion, .. } = p.action else {
            return self.pieces[id].weights.clone();
        };
        let mut pos = Position::new(variant);
        for sq in board.all_squares() {
            if let Some(other) = p.squares[sq.index(board)] {
                pos.squares[sq.index(board)] = Some(Piece::new(p.pieces[other].owner, Kind::Unknown));
            }
        }
        let evidence: Vec<f64> = board
            .kinds()
            .iter()
            .map(|&kind| {
                let mut piece = Piece::new(p.actor, kind);
                piece.promoted = p.pieces[id].promoted && kind.promotable_in_shogi();
                pos.squares[from.index(board)] = Some(piece);
                factor(pos.correct(p.actor, &p.action).is_ok())
            })
            .collect();
        let mut weights: Vec<f64> = before.iter().zip(&evidence).map(|(w, e)| w * e).collect();
        // Evidence against every type we allowed means we missed something: the
        // verdict is proof, so it wins over what we believed (else every later move
        // of the piece would look incorrect, and be doubted, one missed turn each).
        if weights.iter().all(|&w| w <= 0.0) {
            weights = if evidence.iter().any(|&e| e > 0.0) {
                evidence
            } else {
                before
            };
        }
        self.pieces[id].weights = match promotion {
            Promotion::To(kind) => promoted(board, &weights, kind),
            _ => weights.clone(),
        };
        weights
    }

    /// A doubt found the action incorrect: everything as it was before it.
    fn undo(&mut self) {
        let Some(p) = self.pending.take() else { return };
        self.squares = p.squares;
        self.benches = p.benches;
        self.pieces = p.pieces;
    }

    /// One determinisation of `view`: every hidden type drawn from the weights,
    /// within what is left of both armies once the seen types are counted out.
    pub fn sample(&self, view: &Position, rng: &mut Rng) -> Position {
        let board = view.board();
        let kinds = board.kinds();
        let mut left = vec![0.0f64; kinds.len()];
        for k in board.army() {
            left[index(board, *k)] += 2.0;
        }
        let mut hidden: Vec<(Option<usize>, Option<Square>, Side, usize)> = Vec::new();
        let mut seen = |p: &Piece| {
            if p.kind != Kind::Unknown {
                let i = index(board, p.kind);
                left[i] = (left[i] - 1.0).max(0.0);
            }
        };
        for sq in board.all_squares() {
            if let Some(p) = view.at(sq) {
                seen(&p);
                if p.kind == Kind::Unknown {
                    hidden.push((self.squares[sq.index(board)], Some(sq), p.owner, 0));
                }
            }
        }
        for side in Side::BOTH {
            for (i, p) in view.benches[side].iter().enumerate() {
                seen(p);
                if p.kind == Kind::Unknown {
                    hidden.push((self.benches[side].get(i).copied(), None, side, i));
                }
            }
        }
        // A random order, so that the counts do not always favour the same pieces.
        for i in (1..hidden.len()).rev() {
            hidden.swap(i, rng.below(i + 1));
        }
        let mut pos = view.clone();
        pos.pending = None;
        for (id, sq, side, slot) in hidden {
            let tracked = id.and_then(|i| self.pieces.get(i));
            let weights: Vec<f64> = (0..kinds.len())
                .map(|i| {
                    let w = tracked.map_or(1.0, |t| t.weights[i]);
                    // Over the counts only when nothing else fits; never a third king.
                    let room = if left[i] > 0.0 {
                        left[i]
                    } else if kinds[i] == Kind::King {
                        0.0
                    } else {
                        0.02
                    };
                    w * room
                })
                .collect();
            let i = draw(&weights, rng).unwrap_or(index(board, Kind::Pawn));
            left[i] = (left[i] - 1.0).max(0.0);
            let mut piece = match sq {
                Some(sq) => pos.at(sq),
                None => pos.benches[side].get(slot).copied(),
            }
            .unwrap_or(Piece::new(side, Kind::Pawn));
            piece.kind = kinds[i];
            piece.promoted =
                tracked.is_some_and(|t| t.promoted) && kinds[i].promotable_in_shogi() && sq.is_some();
            match sq {
                Some(sq) => pos.squares[sq.index(board)] = Some(piece),
                None => pos.benches[side][slot] = piece,
            }
        }
        pos
    }

    /// The position before the pending action of the view, with its hidden types
    /// drawn as [`Belief::sample`] draws them, or `None` if it was not followed.
    pub fn sample_before(&self, view: &Position, rng: &mut Rng) -> Option<Position> {
        let p = self.pending.as_ref()?;
        let mut before = self.clone();
        before.squares = p.squares.clone();
        before.benches = p.benches.clone();
        before.pieces = p.pieces.clone();
        let board = view.board();
        let mut shape = view.clone();
        for sq in board.all_squares() {
            shape.squares[sq.index(board)] = p.squares[sq.index(board)].map(|id| {
                let t = &p.pieces[id];
                let kind = known(board, &t.weights).unwrap_or(Kind::Unknown);
                let mut piece = Piece::new(t.owner, kind);
                piece.promoted = t.promoted && kind != Kind::Unknown;
                piece
            });
        }
        for side in Side::BOTH {
            shape.benches[side] = p.benches[side]
                .iter()
                .map(|&id| Piece::new(side, known(board, &p.pieces[id].weights).unwrap_or(Kind::Unknown)))
                .collect();
        }
        shape.pending = None;
        shape.to_act = p.actor;
        let mut pos = before.sample(&shape, rng);
        pos.ep = view.pending.as_ref().and_then(|v| v.before.ep);
        Some(pos)
    }
}

/// The index of `kind` among the board's kinds.
fn index(board: BoardKind, kind: Kind) -> usize {
    board.kinds().iter().position(|&k| k == kind).unwrap_or(0)
}

/// Weights certain of `kind`.
fn one_hot(board: BoardKind, kind: Kind) -> Vec<f64> {
    board
        .kinds()
        .iter()
        .map(|&k| f64::from(u8::from(k == kind)))
        .collect()
}

/// The weights of a piece of `weights` after a declared chess promotion to `kind`
/// stood (R-D6a): a king stays a king, anything else becomes what was claimed (one
/// of the four, if the claim's type is hidden: `e7e8?`).
fn promoted(board: BoardKind, weights: &[f64], kind: Kind) -> Vec<f64> {
    let four = [Kind::Queen, Kind::Rook, Kind::Bishop, Kind::Knight];
    let king = weights[index(board, Kind::King)];
    let rest: f64 = weights.iter().sum::<f64>() - king;
    let claimed: Vec<Kind> = if kind == Kind::Unknown {
        four.to_vec()
    } else {
        vec![kind]
    };
    board
        .kinds()
        .iter()
        .map(|k| match k {
            Kind::King => king,
            k if claimed.contains(k) => rest / claimed.len() as f64,
            _ => 0.0,
        })
        .collect()
}

/// The one kind the weights allow, if only one.
fn known(board: BoardKind, weights: &[f64]) -> Option<Kind> {
    let mut allowed = weights.iter().enumerate().filter(|(_, &w)| w > 0.0);
    match (allowed.next(), allowed.next()) {
        (Some((i, _)), None) if weights[i] > 0.0 => Some(board.kinds()[i]),
        _ => None,
    }
}

/// An index drawn with probability proportional to its weight.
fn draw(weights: &[f64], rng: &mut Rng) -> Option<usize> {
    let total: f64 = weights.iter().sum();
    if total <= 0.0 {
        return None;
    }
    let mut x = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64 * total;
    for (i, &w) in weights.iter().enumerate() {
        if x < w {
            return Some(i);
        }
        x -= w;
    }
    weights.iter().rposition(|&w| w > 0.0)
}
