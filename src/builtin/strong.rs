//! The strong strategy of the Parker games (Peg Chow, Telka), written to be read as
//! a tutorial of how to search them from a seat's view.
//!
//! The view of a Parker game is the whole state, so the bot can look ahead exactly:
//! it searches the moves of every colour in turn order, its own side's to make its
//! position best and every other side's to make it worst ("paranoid" search: in a
//! game of three or four sides the others are assumed to gang up, which is safe
//! rather than hopeful). Alpha-beta cuts the lines that cannot change the choice.
//! Chains of leaps make hundreds of moves per position, so each node looks only at
//! its most promising moves by a one-move estimate (the greedy bot's), and the
//! search deepens one ply at a time until its node budget is spent; the budget, not
//! the clock, decides how deep it goes, so a seed and a budget give the same game
//! whenever the clock does not stop a search. The clock only stops it early, when
//! half the time the referee allows for the decision has passed.

use std::time::Instant;

use super::parker::point_cost;
use crate::game::parker::board::{Colour, Point, POINTS};
use crate::game::parker::rules::{Action, Position, Variant};
use crate::game::parker::seating::Seating;
use crate::rng::Rng;

/// Nodes searched per decision by default.
pub const DEFAULT_NODES: u64 = 20_000;

/// Moves looked at per node below the root, and at the root.
const BEAM: usize = 8;
const ROOT_BEAM: usize = 24;

/// The deepest search, in plies (one ply: one colour's move).
const MAX_DEPTH: u32 = 6;

/// A won position's value; a win sooner is worth a little more.
const WIN: i64 = 1_000_000;

/// How much a decision may cost: nodes, and a time after which it stops.
#[derive(Clone, Copy, Debug)]
pub struct Budget {
    /// Nodes to search at most.
    pub nodes: u64,
    /// When to stop whatever the nodes say.
    pub deadline: Option<Instant>,
}

impl Budget {
    /// Whether a search that has counted `nodes` nodes must stop: past the node
    /// budget, or past the deadline.
    ///
    /// The clock is read at every node, in every game's search: a node's moves
    /// (hundreds of leap chains in Peg Chow, a board of drawn positions in
    /// I-Doubt-It) cost far more than reading it, and reading it every 256 nodes
    /// let a loaded machine run seconds past the deadline, into time losses.
    pub fn spent(&self, nodes: u64) -> bool {
        nodes > self.nodes || self.deadline.is_some_and(|d| Instant::now() >= d)
    }
}

/// A node of a paranoid alpha-beta search: the best value found so far for the
/// side to move, and the window `alpha`..`beta` within which a value still matters.
/// Every game's search folds its children through it.
pub(super) struct Node {
    /// Whether the side to move is the bot's (it maximises; the others minimise).
    ours: bool,
    /// The best value found so far, for the side to move.
    pub best: i64,
    /// The value the bot is already sure of.
    pub alpha: i64,
    /// The value the others are already sure of holding the bot to.
    pub beta: i64,
}

impl Node {
    /// A node where the bot moves when `ours`, with `best` before any child.
    pub fn new(ours: bool, best: i64, alpha: i64, beta: i64) -> Node {
        Node {
            ours,
            best,
            alpha,
            beta,
        }
    }

    /// Takes a child's value; `true` when the other children cannot change what the
    /// node is worth to its parent (a cut-off).
    pub fn take(&mut self, value: i64) -> bool {
        if self.ours {
            self.best = self.best.max(value);
            self.alpha = self.alpha.max(value);
        } else {
            self.best = self.best.min(value);
            self.beta = self.beta.min(value);
        }
        self.alpha >= self.beta
    }
}

/// The best move for the colour to move in `pos`, found within `budget`; `None`
/// when it has no move.
pub(super) fn choose(
    variant: Variant,
    seating: &Seating,
    pos: &Position,
    budget: Budget,
    rng: &mut Rng,
) -> Option<Action> {
    let mut search = Search {
        variant,
        seating,
        side: seating.side(pos.to_move),
        nodes: 0,
        budget,
        cost: Colour::ALL.map(|c| std::array::from_fn(|i| point_cost(variant, c, Point::from_index(i)))),
    };
    let mut root = search.ordered(pos, ROOT_BEAM);
    if root.is_empty() {
        return None;
    }
    // Equal estimates in a random order, so that equal moves vary with the seed.
    shuffle_ties(&mut root, rng);
    let mut best = root[0].1.clone();
    for depth in 1..=MAX_DEPTH {
        match search.root(pos, &root, depth) {
            Some((action, value)) => {
                best = action;
                if value.abs() >= WIN - i64::from(MAX_DEPTH) {
                    break;
                }
            }
            None => break,
        }
    }
    Some(best)
}

/// One decision's search.
struct Search<'a> {
    variant: Variant,
    seating: &'a Seating,
    /// The side the bot plays for.
    side: usize,
    nodes: u64,
    budget: Budget,
    /// What each point costs each colour (`point_cost`), priced once per decision:
    /// pricing a point scans a home, and a search prices millions of them.
    cost: [[i64; POINTS]; 4],
}

impl Search<'_> {
    /// The best of `moves` searched `depth` plies deep, or `None` when the budget ran
    /// out before the depth was searched through.
    fn root(&mut self, pos: &Position, moves: &[(i64, Action)], depth: u32) -> Option<(Action, i64)> {
        let mut best: Option<(Action, i64)> = None;
        let mut alpha = -WIN - 1;
        for (_, action) in moves {
            let value = self.after(pos, action, depth, alpha, WIN + 1)?;
            if best.as_ref().is_none_or(|(_, b)| value > *b) {
                best = Some((action.clone(), value));
                alpha = alpha.max(value);
            }
        }
        best
    }

    /// The value of playing `action` in `pos`, searched `depth` plies from `pos`.
    fn after(&mut self, pos: &Position, action: &Action, depth: u32, alpha: i64, beta: i64) -> Option<i64> {
        let mover = pos.to_move;
        let mut next = pos.clone();
        next.apply(self.variant, self.seating, action).ok()?;
        if next.has_won(self.variant, self.seating, mover) {
            let sooner = i64::from(depth);
            return Some(if self.seating.side(mover) == self.side {
                WIN + sooner
            } else {
                -WIN - sooner
            });
        }
        next.to_move = self.next_colour(&next, mover);
        next.moves += 1;
        self.value(&next, depth - 1, alpha, beta)
    }

    /// Alpha-beta value of `pos` for the bot's side; `None` once the budget is spent.
    fn value(&mut self, pos: &Position, depth: u32, alpha: i64, beta: i64) -> Option<i64> {
        self.nodes += 1;
        if self.budget.spent(self.nodes) {
            return None;
        }
        if depth == 0 {
            return Some(self.evaluate(pos));
        }
        let ours = self.seating.side(pos.to_move) == self.side;
        let moves = self.ordered(pos, BEAM);
        if moves.is_empty() {
            // A colour without a move passes (R-B5).
            return self.after(pos, &Action::Pass, depth, alpha, beta);
        }
        if depth == 1 && self.variant == Variant::PegChow {
            return Some(self.last_ply(pos, &moves));
        }
        let mut node = Node::new(ours, if ours { -WIN - 2 } else { WIN + 2 }, alpha, beta);
        for (_, action) in &moves {
            if node.take(self.after(pos, action, depth, node.alpha, node.beta)?) {
                break;
            }
        }
        Some(node.best)
    }

    /// The value of the last ply in Peg Chow, without making the moves: there the
    /// estimate is exactly what a move changes in its colour's worth, and the best
    /// move for the mover, whichever side it is on, is the first of `moves`.
    fn last_ply(&mut self, pos: &Position, moves: &[(i64, Action)]) -> i64 {
        self.nodes += moves.len() as u64;
        let mover = pos.to_move;
        let ours = self.seating.side(mover) == self.side;
        let gain = moves[0].0;
        if gain >= WIN {
            return if ours { WIN + 1 } else { -WIN - 1 };
        }
        let mut worth = self.worths(pos);
        worth[mover.index()] += gain;
        self.combine(&worth)
    }

    /// The moves of the colour to move, best first by a one-move estimate, at most
    /// `beam` of them.
    fn ordered(&self, pos: &Position, beam: usize) -> Vec<(i64, Action)> {
        let mover = pos.to_move;
        let holes = self.holes(pos, mover);
        let mut scored: Vec<(i64, Action)> = pos
            .moves(self.variant, self.seating)
            .into_iter()
            .map(|action| (self.estimate(pos, mover, holes, &action), action))
            .collect();
        // Only the best `beam` are searched: pick them out before sorting them.
        if scored.len() > beam {
            scored.select_nth_unstable_by_key(beam - 1, |(score, _)| -score);
            scored.truncate(beam);
        }
        scored.sort_by_key(|(score, _)| -score);
        scored
    }

    /// Peg Chow: the points of `mover`'s target home not yet filled for its win
    /// (R-B7: by its own counters or the home's owner's); Telka: none counted.
    fn holes(&self, pos: &Position, mover: Colour) -> usize {
        if self.variant == Variant::Telka {
            return usize::MAX;
        }
        let target = mover.target();
        let owner = self.seating.colours().contains(&target).then_some(target);
        target
            .home_points()
            .filter(|&p| {
                let c = pos.at(p);
                c != Some(mover) && (c.is_none() || c != owner)
            })
            .count()
    }

    /// What a move gains its colour at once: distance made towards its goal, and
    /// counters captured; in Peg Chow, a move filling the last of `holes` wins, and
    /// is worth [`WIN`] so that no beam leaves it out.
    fn estimate(&self, pos: &Position, mover: Colour, holes: usize, action: &Action) -> i64 {
        let Action::Path(points) = action else { return 0 };
        let (from, to) = (points[0], points[points.len() - 1]);
        let target = Some(mover.target());
        if holes == 1 && to.home() == target && from.home() != target {
            return WIN;
        }
        let captures = match self.variant {
            Variant::Telka => points
                .windows(2)
                .filter(|w| {
                    let (a, b) = (w[0], w[1]);
                    let over = a.offset((b.x() - a.x()) / 2, (b.y() - a.y()) / 2);
                    over.is_some_and(|o| {
                        o.home().is_none()
                            && (a.x() - b.x()).abs().max((a.y() - b.y()).abs()) == 2
                            && pos
                                .at(o)
                                .is_some_and(|c| self.seating.side(c) != self.seating.side(mover))
                    })
                })
                .count() as i64,
            Variant::PegChow => 0,
        };
        let cost = &self.cost[mover.index()];
        cost[from.index()] - cost[to.index()] + 30 * captures
    }

    /// The position's worth to the bot's side.
    fn evaluate(&self, pos: &Position) -> i64 {
        self.combine(&self.worths(pos))
    }

    /// The worth of a position to the bot's side, from each colour's progress (by
    /// colour index): its own side's minus the others'. In Peg Chow with teams, a
    /// team is as strong as its colour nearest to winning (one colour's win is its
    /// team's, R-B7), and the other a little; so the bot races its team's leader and
    /// blocks the other team's leader rather than whichever is easiest to hold back.
    /// Otherwise every colour counts in full: in Telka captures fight over every
    /// counter, and three sides are three races that the others must all lose.
    fn combine(&self, worth: &[i64; 4]) -> i64 {
        let teams = self.seating.players() == 4 || self.seating.colours_per_player() == 2;
        if self.variant == Variant::Telka || !teams {
            return self
                .seating
                .colours()
                .iter()
                .map(|&c| {
                    let w = worth[c.index()];
                    if self.seating.side(c) == self.side {
                        w
                    } else {
                        -w
                    }
                })
                .sum();
        }
        let (mut ours, mut theirs) = (Leader::default(), Leader::default());
        for &c in self.seating.colours() {
            if self.seating.side(c) == self.side {
                ours.add(worth[c.index()]);
            } else {
                theirs.add(worth[c.index()]);
            }
        }
        ours.value() - theirs.value()
    }

    /// Each colour's progress in `pos` (by colour index; 0 for colours not in play).
    fn worths(&self, pos: &Position) -> [i64; 4] {
        let mut worth = [0; 4];
        for &c in self.seating.colours() {
            worth[c.index()] = self.colour_worth(pos, c);
        }
        worth
    }

    /// How close colour `c` is to its goal (higher is closer), the goal being R-B7's.
    /// Telka: its three nearest counters to the target home (three home win), and
    /// each counter it still has (fewer than three cannot win); Peg Chow: all of its
    /// counters, since every point of the target home must be filled.
    fn colour_worth(&self, pos: &Position, c: Colour) -> i64 {
        let cost = &self.cost[c.index()];
        let mut costs: Vec<i64> = pos.counters(c).map(|p| cost[p.index()]).collect();
        match self.variant {
            Variant::Telka => {
                costs.sort_unstable();
                let left = costs.len() as i64;
                let nearest: i64 = costs.iter().take(3).sum();
                let spare: i64 = costs.iter().skip(3).take(3).sum();
                let short = if left < 3 { 500 } else { 0 };
                20 * left - 3 * nearest - spare / 2 - short
            }
            Variant::PegChow => -costs.iter().sum::<i64>(),
        }
    }

    /// The colour in play after `mover`: the next in seating order that still has
    /// counters (an out seat's counters leave the board, R-F1).
    fn next_colour(&self, pos: &Position, mover: Colour) -> Colour {
        let order = self.seating.colours();
        let at = order.iter().position(|&c| c == mover).unwrap_or(0);
        (1..=order.len())
            .map(|k| order[(at + k) % order.len()])
            .find(|&c| pos.counters(c).next().is_some())
            .unwrap_or(mover)
    }
}

/// The worth of a group of colours: its best colour's, and a quarter of the rest.
#[derive(Default)]
struct Leader {
    best: Option<i64>,
    rest: i64,
}

impl Leader {
    /// Counts one more colour of the group.
    fn add(&mut self, worth: i64) {
        match self.best {
            Some(b) if b >= worth => self.rest += worth,
            Some(b) => {
                self.rest += b;
                self.best = Some(worth);
            }
            None => self.best = Some(worth),
        }
    }

    /// The group's worth.
    fn value(&self) -> i64 {
        self.best.unwrap_or(0) + self.rest / 4
    }
}

/// Shuffles runs of equal estimates, keeping the order of the estimates.
fn shuffle_ties(moves: &mut [(i64, Action)], rng: &mut Rng) {
    let mut start = 0;
    while start < moves.len() {
        let end = (start..moves.len())
            .find(|&i| moves[i].0 != moves[start].0)
            .unwrap_or(moves.len());
        for i in (start + 1..end).rev() {
            let j = start + rng.below(i - start + 1);
            moves.swap(i, j);
        }
        start = end;
    }
}
