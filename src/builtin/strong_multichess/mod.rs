//! The strong strategy of Multi-player TelnChes, written to be read as a tutorial of
//! how to play a game of fog from a seat's view.
//!
//! **What the seat knows.** Its view shows the public area and its own area whole,
//! and of every other area only what its pieces there could capture (R-M3). So every
//! threat to its own king is in sight: a piece can only reach a private area from
//! inside it or from the public area (R-M1). Not every threat to its pieces in the
//! public area, though: a slider in an enemy area may strike out of the fog once
//! the pawn in its way has moved unseen, a pawn steps to its area's rank 4 and takes
//! on public rank 5, a knight jumps out (`fog.rs`). The enemy kings are the unknown.
//!
//! **A belief over the unseen squares** (`belief.rs`). The bot remembers what it
//! last saw on every square, and when, starting from the known setup (every king on
//! its `e1`), and fills the squares it cannot see now with that memory. The events
//! feed it too: they tell what became of a square that went out of sight with the
//! action (R-M7), so an enemy king that takes a probe is known where it stands. No
//! piece of its own is ever in the fog (it sees them all). A seat never has more of
//! a kind than it started with, so the oldest sightings beyond that are forgotten
//! (a piece that shows up came from somewhere in the fog), and the pieces of a seat
//! that went out pass to whoever took its area (R-M5).
//!
//! **Moves into the fog.** The legal moves are those of the view, with unseen squares
//! taken as empty (R-M4); what a move does is judged on the believed board, where a
//! slider stops at, and captures, the first believed piece in its way, exactly as the
//! referee would if the belief is right. So a rook sent down a file into an enemy
//! area is a probe that captures what it meets, and a capture of the king when the
//! believed line to it is clear. A king neither seen nor remembered is guessed,
//! next to where it was last seen; a guess is a hope, not a sighting, so in the
//! search the move onto it finds the square empty: it is worth the look (and the
//! squares it then sees), not a won game. A king only remembered is treated so too
//! when the bot's own king hangs: a stale memory would cost it the game at once.
//!
//! **Search** (`search.rs`). Alpha-beta on the believed board, the bot against "the
//! others": every other seat's moves form one opponent that moves once between two
//! of the bot's moves and plays whatever is worst for it (paranoid, so safe rather
//! than hopeful; exact with two seats). Below the full-width plies a capture-only
//! search settles the exchanges (either side may stop capturing; with three seats
//! or more the others may take twice before the bot answers, as two seats may), so
//! a piece left hanging or a king left open is seen. A loss further off scores
//! above a near one: when every line loses against all the others at once, the one
//! that loses latest is the one the real, uncoordinated seats will most likely
//! miss. The search deepens until `--nodes` is spent or half of the decision's time
//! has passed; the last depth finished decides, so a seed (ties at the root) and a
//! budget give the same game unless the clock stops a search. A root move that undoes one of its last moves costs a
//! little, so that the bot does not shuffle while the plies run out (R-M6).
//!
//! **Evaluation.** Material, its own at one and a half times the others' (keeping is
//! worth more than taking when several seats may strike), a lost king as a loss, and
//! small terms for heading to the believed enemy kings and promoting pawns, and a
//! piece of its own counted half lost where one hidden piece may strike it, lost
//! where two or more may (with eight seats, next to public rank 5 stand seven
//! areas' rank 4s), in the public area and inside the enemy areas alike, where a
//! probe is struck by pawns that stepped unseen and by kings one step off. The king
//! stays home, except when it has less than a rook's worth of pieces besides king
//! and pawns to hunt with and the others have nothing but their kings: then it hunts itself, since an enemy king that steps
//! next to it is taken, and staying home only waits for the ply limit. With that
//! little its pawns push on through the fog: a queen is its one way to a win.
//!

mod belief;
mod fog;
mod search;

pub(super) use belief::Belief;
use search::Search;

use super::strong::Budget;
use crate::game::multichess::board::{Kind, Piece};
use crate::game::multichess::rules::{Move, Position};
use crate::game::multichess::state;
use crate::rng::Rng;

/// A lost (or won) game's value.
const WIN: i64 = 10_000_000;

/// Full-width plies searched at most (the bot's and the others' moves).
const MAX_DEPTH: u32 = 4;

/// What undoing one of its last moves costs a root move: enough to pick another
/// of nearly the same worth, so that the bot does not shuffle to and fro.
const UNDO: i64 = 25;

/// Picks a move (or `pass`) from a view and the events since the last decision,
/// within `budget`.
pub(super) fn choose(
    seats: usize,
    view: &str,
    events: &[String],
    belief: &mut Belief,
    budget: Budget,
    rng: &mut Rng,
) -> Option<String> {
    let (pos, seen) = state::parse(view, seats, true).ok()?;
    let mut legal = pos.moves(pos.to_move);
    let board = belief.update(&pos, &seen, events);
    if legal.is_empty() {
        return Some("pass".into()); // R-M6: a seat without a move passes
    }
    let guessed = belief.guessed_kings();
    let exposed = fog::exposed(&board, &seen, pos.to_move, &guessed);
    let mut search = Search::new(&board, budget, exposed, guessed, seen);
    // The root in the order of a one-move estimate, equal estimates shuffled by the
    // seed, so that equal moves vary between seeds and not between runs.
    rng_shuffle(&mut legal, rng);
    legal.sort_by_cached_key(|m| -estimate(&board, m));
    let penalty = |m: &Move| if belief.undoes(m) { UNDO } else { 0 };
    let mut best = legal[0];
    for depth in 1..=MAX_DEPTH {
        match search.root(&board, &legal, depth, penalty) {
            Some((mv, value)) => {
                best = mv;
                if value.abs() >= WIN / 2 {
                    break;
                }
            }
            None => break,
        }
    }
    belief.played(best);
    Some(best.to_string())
}

/// How many of a kind each seat starts with.
fn start_count(kind: Kind) -> usize {
    match kind {
        Kind::King | Kind::Queen => 1,
        Kind::Rook | Kind::Bishop | Kind::Knight => 2,
        Kind::Pawn => 8,
    }
}

/// Material values in hundredths of a pawn; a king is worth its seat, scored apart.
fn worth(kind: Kind) -> i64 {
    match kind {
        Kind::King => 0,
        Kind::Queen => 900,
        Kind::Rook => 500,
        Kind::Bishop => 330,
        Kind::Knight => 320,
        Kind::Pawn => 100,
    }
}

/// A move's promise on the believed board, to order the search: the most valuable
/// capture by the least valuable piece first, a king above all, then promotions.
fn estimate(board: &Position, mv: &Move) -> i64 {
    let mover = board.at(mv.from).map_or(0, |p| worth(p.kind));
    let victim = captured_by(board, mv).map_or(0, |p| {
        if p.kind == Kind::King {
            100_000
        } else {
            10 * worth(p.kind) - mover / 10
        }
    });
    victim + mv.promotion.map_or(0, worth)
}

/// What `mv` would capture on the believed board: where a slider stops (R-M4).
fn captured_by(board: &Position, mv: &Move) -> Option<Piece> {
    let mut after = board.clone();
    let mover = board.at(mv.from)?.owner;
    after.make(mover, *mv).captured.map(|(_, p)| p)
}

/// Shuffles the moves with the seed (the sort after it is stable, so only equal
/// estimates keep the shuffled order).
fn rng_shuffle(moves: &mut [Move], rng: &mut Rng) {
    for i in (1..moves.len()).rev() {
        let j = rng.below(i + 1);
        moves.swap(i, j);
    }
}
