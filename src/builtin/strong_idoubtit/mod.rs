//! The strong strategy of I-Doubt-It TelnChes, written to be read as a tutorial of
//! how to play the game from a seat's view and events (protocol.md §3.2).
//!
//! The view shows where every piece stands and whose it is, but not (most) types.
//! So the bot keeps a **belief** ([`belief`]): each piece is followed by identity
//! from the events, with a weight per type that what the seat saw narrows — a
//! verdict proves (R-D6), a move that stood suggests (as strongly as the watcher's
//! doubts have shown it careful), a king-capture announcement names a king (R-D7).
//! In the variants where a seat does not see its own types (`s` = 1, or `d` = 2
//! after a drop) the same evidence teaches it its own pieces.
//!
//! To decide, it **determinises**: it draws complete positions from the belief
//! (every hidden type filled in, within what is left of both armies) and scores each
//! candidate action in each of them, two plies deep ([`search`]): what the action
//! takes, what the opponent could take back by a correct move, what it would
//! threaten next. A candidate is a move correct in some drawn position, or a
//! **bluff**: a capture some type could make, which pays when the opponent lets
//! bluffs stand. Whether the opponent doubts is a **model that learns**: how many of
//! our bluffs, and of our honest moves, it has doubted so far.
//!
//! A **doubt** is weighed the same way: the chance that the opponent's last action is
//! incorrect, from the drawn positions before it and from how honest its doubted
//! actions have been, against the cost of a missed turn (R-D6: a correct action
//! doubted lets the opponent act again). A king capture is always doubted: accepting
//! loses for sure (R-D7).
//!
//! The number of drawn positions comes from the node budget (`--nodes`), so a seed
//! and a budget give the same game unless the clock stops a search, which it does
//! only early, at half of what the referee allows for the decision.

mod belief;
mod search;

use super::strong::Budget;
use crate::game::idoubtit::board::{Kind, Side};
use crate::game::idoubtit::notation::Action;
use crate::game::idoubtit::rules::{Phase, Position, Variant};
use crate::game::idoubtit::state;
use crate::rng::Rng;
use belief::Belief;

/// What the strong agent remembers between decisions of one game.
#[derive(Clone, Debug, Default)]
pub struct Memory {
    belief: Belief,
    /// Our bluffs so far, and how many of them the opponent doubted.
    bluffs: (u32, u32),
    /// Our honest moves so far, and how many of them the opponent doubted.
    honest: (u32, u32),
    /// Whether our last action was a bluff (`None`: it was no move or drop).
    last_bluff: Option<bool>,
}

impl Memory {
    /// How likely the opponent is to doubt a bluff of ours, and an honest move.
    fn doubt_rates(&self) -> (f64, f64) {
        let rate =
            |(made, doubted): (u32, u32), prior: f64| (f64::from(doubted) + prior) / (f64::from(made) + 2.0);
        (rate(self.bluffs, 1.0), rate(self.honest, 0.4))
    }

    /// Counts whether the opponent doubted our last move or drop (the events of a
    /// `go` start with it).
    fn learn(&mut self, me: Side, events: &[String]) {
        let Some(bluff) = self.last_bluff.take() else {
            return;
        };
        let doubted = events.iter().any(|e| e == &format!("doubt {}", me.opponent()));
        let tally = if bluff { &mut self.bluffs } else { &mut self.honest };
        tally.0 += 1;
        tally.1 += u32::from(doubted);
    }
}

/// Picks the strong agent's action from a view and the events since its last
/// decision, or `None` if the view makes no sense.
pub(super) fn choose(
    variant: Variant,
    view: &str,
    events: &[String],
    budget: Budget,
    memory: &mut Memory,
    rng: &mut Rng,
) -> Option<String> {
    let pos = state::parse(view, variant, true).ok()?;
    let me = pos.to_act;
    memory.learn(me, events);
    memory.belief.update(variant, me, events, &pos);
    let action = match pos.phase {
        Phase::Place => place(&pos, me, rng)?,
        // R-D7: accepting loses for sure; a doubt wins unless the capture was correct.
        Phase::Respond => Action::Doubt,
        Phase::Play => {
            let mut search = search::Search::new(&pos, me, budget);
            if pos.pending.as_ref().is_some_and(|p| p.actor != me) && search.doubt_pays(&memory.belief, rng) {
                Action::Doubt
            } else {
                memory.belief.let_stand(variant, me);
                let rates = memory.doubt_rates();
                let (action, bluff) = search.best_move(&memory.belief, rates, rng)?;
                memory.last_bluff = Some(bluff);
                action
            }
        }
        Phase::Won | Phase::Drawn => return None,
    };
    Some(action.to_string())
}

/// A placement (R-D3). Its own pieces: the king on the back row, where most pieces
/// shield it, pawns in front. The opponent's pieces (`s` = 1, whose types we see
/// and it does not): its king first, on its front row near the centre where our
/// pieces reach it, its pawns beside it, so that its long-range pieces start behind
/// them and cannot reach our camp at once.
fn place(pos: &Position, me: Side, rng: &mut Rng) -> Option<Action> {
    let owner = pos.variant.placed_for(me);
    let board = pos.board();
    let front = i32::from(board.home_rows()) - 1;
    let centre = |file: u8| (2 * i32::from(file) - i32::from(board.size()) + 1).abs() / 2;
    let score = |a: &Action| -> i32 {
        let Action::Place { kind, to } = *a else {
            return i32::MIN;
        };
        let rank = i32::from(owner.relative_rank(to.rank, board));
        match (owner == me, kind) {
            // First, so that its square is chosen: away from the corners and the centre.
            (true, Kind::King) => 100 - 10 * rank - (centre(to.file) - 2).abs(),
            (true, Kind::Pawn) => 10 * rank,
            (true, _) => 10 * (front - rank),
            (false, Kind::King) => 100 + 10 * rank - centre(to.file),
            (false, Kind::Pawn) => 10 * rank,
            (false, _) => 10 * (front - rank),
        }
    };
    let all = pos.well_formed_actions();
    let top = all.iter().map(score).max()?;
    let best: Vec<&Action> = all.iter().filter(|a| score(a) == top).collect();
    Some(*best[rng.below(best.len())])
}
