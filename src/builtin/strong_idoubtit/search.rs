//! The strong agent's look-ahead over determinisations: each candidate action is
//! scored in positions drawn from the belief, two plies deep, and the doubt of the
//! opponent's last action is weighed against the turn it may cost.

use super::belief::Belief;
use super::Budget;
use crate::game::idoubtit::board::{BoardKind, Kind, Piece, Side};
use crate::game::idoubtit::notation::{Action, Promotion};
use crate::game::idoubtit::rules::{Phase, Position};
use crate::rng::Rng;

/// What a won game is worth, in pawns.
const WIN: f64 = 1000.0;

/// What a king is worth as a piece that may be taken or threatened: much, but less
/// than a win, since the side that could take it may not know it is the king.
const KING: f64 = 40.0;

/// What a turn is worth: a missed one (a correct action doubted, R-D6) or an
/// undone one (an incorrect action doubted).
const TEMPO: f64 = 1.0;

/// How much of the opponent's best correct capture counts against a position: it
/// may not see which of our pieces is worth taking.
const REPLY: f64 = 0.7;

/// How much the best capture we threaten counts: the opponent may move away.
const THREAT: f64 = 0.3;

/// The least chance that an opponent able to take our king does so.
const FIND: f64 = 0.3;

/// What each open line to our king costs: the opponent's next capture may come down it.
const SHELTER: f64 = 1.5;

/// Drawn positions per decision, at least and at most.
const SAMPLES: (u64, u64) = (2, 48);

/// One decision's search from the view `pos` of side `me`.
pub struct Search<'a> {
    pos: &'a Position,
    me: Side,
    budget: Budget,
    nodes: u64,
}

impl<'a> Search<'a> {
    /// A search of `pos` for `me` within `budget`.
    pub fn new(pos: &'a Position, me: Side, budget: Budget) -> Search<'a> {
        Search {
            pos,
            me,
            budget,
            nodes: 0,
        }
    }

    /// Whether the budget is spent: nodes, or the clock's deadline.
    fn spent(&self) -> bool {
        // The next node would be one too many.
        self.budget.spent(self.nodes + 1)
    }

    /// Whether doubting the opponent's pending action pays (R-D6): the chance it is
    /// incorrect times what undoing it gives back, against the chance it is correct
    /// times the turn lost and what the opponent may take with its extra move.
    pub fn doubt_pays(&mut self, belief: &Belief, rng: &mut Rng) -> bool {
        let Some(pending) = self.pos.pending.as_ref() else {
            return false;
        };
        let (actor, action) = (pending.actor, pending.action);
        let draws = (self.budget.nodes / 40).clamp(8, 64);
        let (mut incorrect, mut taken, mut risk, mut n) = (0.0f64, 0.0, 0.0, 0.0);
        for _ in 0..draws {
            let Some(before) = belief.sample_before(self.pos, rng) else {
                return false;
            };
            // A followed board that cannot have allowed the action: no doubt from it.
            let possible = match action {
                Action::Move { from, .. } | Action::EnPassant { from, .. } => {
                    before.at(from).is_some_and(|p| p.owner == actor)
                }
                Action::Drop { slot, .. } => (1..=before.benches[actor].len()).contains(&usize::from(slot)),
                _ => false,
            };
            if !possible {
                return false;
            }
            self.nodes += 1;
            taken += before
                .captured_square(actor, &action)
                .and_then(|sq| before.at(sq))
                .map_or(0.0, |p| worth(before.board(), &p));
            n += 1.0;
            if before.correct(actor, &action).is_err() {
                incorrect += 1.0;
            } else {
                // A doubt costs only where the action is correct: there the opponent
                // acts again, with the types that made it (a rook that took down a
                // file may take down it again), so the risk is weighed there alone.
                let mut after = before.clone();
                after.apply_declared(actor, &action);
                risk += danger(&after, actor.opponent());
            }
            if self.spent() {
                break;
            }
        }
        let drawn = incorrect / n;
        let risk = risk / (n - incorrect).max(1.0);
        // How honest the opponent's moves are weighs against what the draws say: an
        // honest side plays moves its types can make, so a move many types could
        // make is most likely correct (R-D6 verdicts teach how honest it is).
        let h = belief.record.honesty(actor).clamp(0.02, 0.98);
        let odds = 8.0 * h / (1.0 - h);
        let q = if drawn >= 1.0 {
            1.0
        } else {
            drawn / (drawn + (1.0 - drawn) * odds)
        };
        q * (taken / n + TEMPO) > (1.0 - q) * (TEMPO + risk)
    }

    /// The best action for `me` and whether it is a bluff (correct in fewer than
    /// half of the drawn positions); `rates` are the opponent's learned chances of
    /// doubting a bluff and an honest action.
    pub fn best_move(&mut self, belief: &Belief, rates: (f64, f64), rng: &mut Rng) -> Option<(Action, bool)> {
        let view = self.pos;
        let wf: Vec<Action> = view
            .well_formed_actions()
            .into_iter()
            .filter(|a| *a != Action::Doubt)
            .collect();
        if wf.is_empty() {
            return None;
        }
        let mut samples = vec![belief.sample(view, rng)];
        let mut candidates: Vec<Action> = Vec::new();
        let mut seen = std::collections::HashSet::new();
        for _ in 0..6 {
            let s = belief.sample(view, rng);
            for a in playable(&s).correct_actions() {
                if seen.insert(a) {
                    candidates.push(a);
                }
            }
            samples.push(s);
        }
        for a in &wf {
            if plausible_capture(view, a) && seen.insert(*a) {
                candidates.push(*a);
            }
        }
        candidates.retain(|a| wf.contains(a));
        if candidates.is_empty() {
            return Some((wf[rng.below(wf.len())], true));
        }
        // A seeded order, so that equal scores fall to the seed.
        for i in (1..candidates.len()).rev() {
            candidates.swap(i, rng.below(i + 1));
        }
        let per = (self.budget.nodes / candidates.len() as u64).clamp(SAMPLES.0, SAMPLES.1);
        let mut totals = vec![0.0; candidates.len()];
        let mut correct = vec![0u32; candidates.len()];
        let mut drawn = 0;
        for k in 0..per {
            let s = if (k as usize) < samples.len() {
                samples[k as usize].clone()
            } else {
                belief.sample(view, rng)
            };
            let s = playable(&s);
            let now = danger(&s, self.me);
            for (i, a) in candidates.iter().enumerate() {
                let (value, ok) = self.score(&s, a, now, rates);
                totals[i] += value;
                correct[i] += u32::from(ok);
                self.nodes += 1;
            }
            drawn += 1;
            if self.spent() {
                break;
            }
        }
        let best = (0..candidates.len()).max_by(|&i, &j| totals[i].total_cmp(&totals[j]).then(j.cmp(&i)))?;
        Some((candidates[best], 2 * correct[best] < drawn))
    }

    /// The value of `action` in the drawn position `s` (where the opponent's best
    /// capture is worth `now`), and whether it is correct there.
    fn score(
        &self,
        s: &Position,
        action: &Action,
        now: f64,
        (doubt_bluff, doubt_honest): (f64, f64),
    ) -> (f64, bool) {
        let (me, board) = (self.me, s.board());
        let ok = s.correct(me, action).is_ok();
        let victim = s.captured_square(me, action).and_then(|sq| s.at(sq));
        let undone = -TEMPO - now;
        if victim.is_some_and(|v| v.kind == Kind::King) {
            // R-D7: a king capture is doubted by anyone who can; only a correct one wins.
            return (if ok { WIN } else { undone }, ok);
        }
        let mover = match *action {
            Action::Move { from, .. } | Action::EnPassant { from, .. } => s.at(from),
            Action::Drop { slot, .. } => s.benches[me].get(usize::from(slot) - 1).copied(),
            _ => None,
        };
        let mut after = s.clone();
        after.apply_declared(me, action);
        let mut gain = victim.map_or(0.0, |v| worth(board, &v));
        if let (Action::Move { from, to, promotion }, Some(m)) = (*action, mover) {
            gain += match promotion {
                Promotion::To(k) => worth(board, &Piece::new(me, k)) - worth(board, &m),
                Promotion::Promote => 2.0,
                Promotion::None => 0.0,
            };
            // A little forward, the king excepted: pieces that come nearer find more.
            let ahead =
                i32::from(me.relative_rank(to.rank, board)) - i32::from(me.relative_rank(from.rank, board));
            gain += if m.kind == Kind::King {
                -0.1 * f64::from(ahead.abs())
            } else {
                0.05 * f64::from(ahead)
            };
        }
        let reply = danger(&after, me);
        let threat = best_capture(&after, me);
        let stands = gain + THREAT * threat - reply - SHELTER * (exposure(&after, me) - exposure(s, me));
        let value = if ok {
            (1.0 - doubt_honest) * stands + doubt_honest * (stands + TEMPO)
        } else {
            (1.0 - doubt_bluff) * stands + doubt_bluff * undone
        };
        (value, ok)
    }
}

/// `pos` as a play-phase position with nothing pending, for generating actions.
fn playable(pos: &Position) -> Position {
    let mut p = pos.clone();
    p.pending = None;
    p.phase = Phase::Play;
    p
}

/// The most valuable piece `side` could take by a correct move in `pos` (drawn
/// types, so "correct" is known), as if `side` were to act.
fn best_capture(pos: &Position, side: Side) -> f64 {
    captures(pos, side).0
}

/// What `side`'s opponent may take from `side` next in `pos`, counted against a
/// position: its best correct capture, discounted ([`REPLY`]), or, when it could
/// take the king, a share of a lost game: all of it if that is its only capture,
/// else as if it picked among its captures at random (it may not see which piece is
/// the king), never less than [`FIND`].
fn danger(pos: &Position, side: Side) -> f64 {
    let (best, king, n) = captures(pos, side.opponent());
    if king {
        WIN * (1.0 / n as f64).max(FIND)
    } else {
        REPLY * best
    }
}

/// The best correct capture of `side` in `pos` by worth, whether one takes a king,
/// and how many captures there are.
fn captures(pos: &Position, side: Side) -> (f64, bool, usize) {
    let mut p = playable(pos);
    p.to_act = side;
    let victims: Vec<Piece> = p
        .correct_actions()
        .iter()
        .filter_map(|a| p.captured_square(side, a).and_then(|sq| p.at(sq)))
        .collect();
    let best = victims.iter().map(|v| worth(p.board(), v)).fold(0.0, f64::max);
    (best, victims.iter().any(|v| v.kind == Kind::King), victims.len())
}

/// How open `side`'s king stands in `pos`: each line from it that meets an enemy
/// piece first counts one, each that runs empty to the edge a third, each enemy
/// piece a knight's leap away one. Greedy captures in a crowd find a king behind
/// nothing; a bluff that moves its shield away pays for it here.
fn exposure(pos: &Position, side: Side) -> f64 {
    let board = pos.board();
    let Some(king) = board.all_squares().find(|&sq| {
        pos.at(sq)
            .is_some_and(|p| p.owner == side && p.kind == Kind::King)
    }) else {
        return 0.0;
    };
    let mut open = 0.0;
    for (df, dr) in crate::game::geometry::QUEEN {
        let mut sq = king;
        loop {
            let Some(next) = sq.offset(df, dr, board) else {
                open += 1.0 / 3.0;
                break;
            };
            sq = next;
            if let Some(p) = pos.at(sq) {
                if p.owner != side {
                    open += 1.0;
                }
                break;
            }
        }
    }
    for (df, dr) in crate::game::geometry::KNIGHT {
        if king
            .offset(df, dr, board)
            .and_then(|sq| pos.at(sq))
            .is_some_and(|p| p.owner != side)
        {
            open += 1.0;
        }
    }
    open
}

/// A piece's worth in pawns (the king's as a target, [`KING`]).
fn worth(board: BoardKind, p: &Piece) -> f64 {
    let base = match (board, p.kind) {
        (_, Kind::King) => KING,
        (_, Kind::Pawn) => 1.0,
        (BoardKind::Chess, Kind::Knight | Kind::Bishop) => 3.0,
        (BoardKind::Chess, Kind::Rook) => 5.0,
        (_, Kind::Queen) => 9.0,
        (BoardKind::Shogi, Kind::Knight) | (_, Kind::Lance) => 3.0,
        (_, Kind::Silver) => 4.0,
        (_, Kind::Gold) => 5.0,
        (BoardKind::Shogi, Kind::Bishop) => 7.0,
        (BoardKind::Shogi, Kind::Rook) => 8.0,
        (_, Kind::Unknown) => 2.0,
    };
    if p.promoted {
        base + 2.0
    } else {
        base
    }
}

/// Whether `action` captures an enemy piece along a line some type could move
/// along (a queen's line with a clear path, a knight's leap): a bluff a watcher
/// who does not see the mover's type cannot tell from a correct capture.
fn plausible_capture(pos: &Position, action: &Action) -> bool {
    let Action::Move { from, to, .. } = *action else {
        return false;
    };
    let Some(mover) = pos.at(from) else { return false };
    if pos.at(to).is_none_or(|p| p.owner == mover.owner) {
        return false;
    }
    let mut probe = playable(pos);
    let shapes: &[(Kind, bool)] = match pos.board() {
        BoardKind::Chess => &[(Kind::Queen, false), (Kind::Knight, false)],
        BoardKind::Shogi => &[(Kind::Rook, true), (Kind::Bishop, true), (Kind::Knight, false)],
    };
    shapes.iter().any(|&(kind, promoted)| {
        let mut p = mover;
        p.kind = kind;
        p.promoted = promoted;
        probe.squares[from.index(pos.board())] = Some(p);
        probe.targets(from).contains(&to)
    })
}
