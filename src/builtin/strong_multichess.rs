//! The strong strategy of Multi-player TelnChes, written to be read as a tutorial of
//! how to play a game of fog from a seat's view.
//!
//! **What the seat knows.** Its view shows the public area and its own area whole,
//! and of every other area only what its pieces there could capture (R-M3). So every
//! threat to its own king is in sight: a piece can only reach a private area from
//! inside it or from the public area (R-M1). The enemy kings are the unknown.
//!
//! **A belief over the unseen squares.** The bot remembers what it last saw on every
//! square, starting from the known setup (every king on its `e1`), and fills the
//! squares it cannot see now with that memory. A piece that shows up in sight takes
//! one remembered copy of its kind away (it came from somewhere in the fog), an enemy
//! king seen anywhere is no longer remembered anywhere else, and the pieces of a seat
//! that went out pass to whoever took its area (R-M5).
//!
//! **Moves into the fog.** The legal moves are those of the view, with unseen squares
//! taken as empty (R-M4); what a move does is judged on the believed board, where a
//! slider stops at, and captures, the first believed piece in its way, exactly as the
//! referee would if the belief is right. So a rook sent down a file into an enemy
//! area is a probe that captures what it meets, and a capture of the king when the
//! believed line to it is clear.
//!
//! **Search.** Alpha-beta on the believed board, the bot against "the others": every
//! other seat's moves form one opponent that moves once between two of the bot's
//! moves and plays whatever is worst for it (paranoid, so safe rather than hopeful;
//! exact with two seats). Below the full-width plies a capture-only search settles
//! the exchanges (either side may stop capturing), so a piece left hanging or a king
//! left open is seen. The search deepens until `--nodes` is spent or half of the
//! decision's time has passed; the last depth finished decides, so a seed (ties at
//! the root) and a budget give the same game.
//!
//! **Evaluation.** Material, its own at one and a half times the others' (keeping is
//! worth more than taking when several seats may strike), a lost king as a loss, and
//! small terms for heading to the believed enemy kings and promoting pawns.

use super::multichess::distance;
use super::strong::Budget;
use crate::game::multichess::board::{Area, Kind, Piece, Square};
use crate::game::multichess::rules::{Move, Position};
use crate::game::multichess::state;
use crate::game::Seat;
use crate::rng::Rng;
use std::time::Instant;

/// A lost (or won) game's value.
const WIN: i64 = 10_000_000;

/// Full-width plies searched at most (the bot's and the others' moves).
const MAX_DEPTH: u32 = 4;

/// Moves searched per full-width node below the root.
const BEAM: usize = 10;

/// Captures searched per node of the capture-only search.
const CAPTURE_BEAM: usize = 6;

/// What the bot remembers between decisions: the last contents seen on every square.
#[derive(Debug, Default)]
pub(super) struct Belief {
    squares: Vec<Option<Piece>>,
}

/// Picks a move (or `pass`) from a view, within `budget`.
pub(super) fn choose(
    seats: usize,
    view: &str,
    belief: &mut Belief,
    budget: Budget,
    rng: &mut Rng,
) -> Option<String> {
    let (pos, seen) = state::parse(view, seats, true).ok()?;
    let me = pos.to_move;
    let mut legal = pos.moves(me);
    if legal.is_empty() {
        return Some("pass".into()); // R-M6: a seat without a move passes
    }
    let board = belief.update(&pos, &seen);
    let mut search = Search { me, nodes: 0, budget };
    // The root in the order of a one-move estimate, equal estimates shuffled by the
    // seed, so that equal moves vary between seeds and not between runs.
    rng_shuffle(&mut legal, rng);
    legal.sort_by_cached_key(|m| -estimate(&board, m));
    let mut best = legal[0];
    for depth in 1..=MAX_DEPTH {
        match search.root(&board, &legal, depth) {
            Some((mv, value)) => {
                best = mv;
                if value.abs() >= WIN / 2 {
                    break;
                }
            }
            None => break,
        }
    }
    Some(best.to_string())
}

impl Belief {
    /// Takes in a new view and returns the believed board: the view with its unseen
    /// squares filled from memory.
    fn update(&mut self, view: &Position, seen: &[bool]) -> Position {
        if self.squares.len() != view.squares.len() {
            // A new game (or a view of another table): the setup is known to all.
            self.squares = Position::start(view.seats).squares;
        }
        let out = |s: Seat| view.out.contains(&s);
        for (i, cell) in self.squares.iter_mut().enumerate() {
            if seen[i] {
                *cell = view.squares[i];
                continue;
            }
            // R-M5: an eliminated seat's pieces belong to whoever owns its area now;
            // its king was taken. After a forfeit (R-F1) its pieces are gone.
            if let Some(p) = cell.filter(|p| out(p.owner)) {
                *cell = match view.owners[p.owner.index()] {
                    Some(heir) if p.kind != Kind::King => Some(Piece { owner: heir, ..p }),
                    _ => None,
                };
            }
        }
        self.forget_extra(view, seen);
        self.guess_kings(view, seen);
        let mut board = view.clone();
        for (i, cell) in board.squares.iter_mut().enumerate() {
            if !seen[i] {
                *cell = self.squares[i];
            }
        }
        board
    }

    /// Forgets remembered unseen pieces that cannot all still be there: no seat has
    /// more of a kind than it started with (counting what is seen), and pieces leave
    /// an area towards the public ranks, so the highest remembered ones go first.
    /// (A promoted pawn may make this forget a real piece; the next look corrects it.)
    fn forget_extra(&mut self, view: &Position, seen: &[bool]) {
        for owner in Seat::all(view.seats) {
            for kind in [
                Kind::King,
                Kind::Queen,
                Kind::Rook,
                Kind::Bishop,
                Kind::Knight,
                Kind::Pawn,
            ] {
                let piece = Some(Piece { kind, owner });
                let in_sight = (0..seen.len())
                    .filter(|&i| seen[i] && view.squares[i] == piece)
                    .count();
                let mut hidden: Vec<usize> = (0..seen.len())
                    .filter(|&i| !seen[i] && self.squares[i] == piece)
                    .collect();
                let room = start_count(kind).saturating_sub(in_sight);
                if hidden.len() > room {
                    hidden.sort_by_key(|&i| std::cmp::Reverse(Square::from_index(i).rank));
                    for &i in &hidden[..hidden.len() - room] {
                        self.squares[i] = None;
                    }
                }
            }
        }
    }

    /// Puts back a king for every other seat still playing whose king is neither in
    /// sight nor remembered: it is on some unseen square (R-M5: a seat without its
    /// king is out), most likely in an area the seat owns, near where kings start.
    /// Each look that finds the square empty moves the guess on, so that the search
    /// for the king sweeps the fog.
    fn guess_kings(&mut self, view: &Position, seen: &[bool]) {
        for seat in view.remaining().into_iter().filter(|&s| s != view.to_move) {
            let king = Some(Piece {
                kind: Kind::King,
                owner: seat,
            });
            let known =
                (0..seen.len()).any(|i| (if seen[i] { view.squares[i] } else { self.squares[i] }) == king);
            if known {
                continue;
            }
            let guess = (0..seen.len())
                .filter(|&i| !seen[i] && self.squares[i].is_none())
                .min_by_key(|&i| {
                    let sq = Square::from_index(i);
                    let own = matches!(sq.area, Area::Private(a) if view.owners[a as usize] == Some(seat));
                    (!own, sq.rank, (i16::from(sq.file) - 4).abs(), i)
                });
            if let Some(i) = guess {
                self.squares[i] = king;
            }
        }
    }
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

/// One decision's search.
struct Search {
    /// The seat the bot plays.
    me: Seat,
    nodes: u64,
    budget: Budget,
}

impl Search {
    /// The best of `moves` searched `depth` full-width plies deep, or `None` when the
    /// budget ran out before the depth was searched through.
    fn root(&mut self, board: &Position, moves: &[Move], depth: u32) -> Option<(Move, i64)> {
        let mut best: Option<(Move, i64)> = None;
        let mut alpha = -WIN - 1;
        for mv in moves {
            let next = self.play(board, self.me, mv);
            let value = self.value(&next, depth - 1, alpha, WIN + 1)?;
            if best.is_none_or(|(_, b)| value > b) {
                best = Some((*mv, value));
                alpha = alpha.max(value);
            }
        }
        best
    }

    /// `board` after `seat` plays `mv`, with the turn given to the other side of the
    /// search (the bot after any other seat, the others after the bot).
    fn play(&self, board: &Position, seat: Seat, mv: &Move) -> Position {
        let mut next = board.clone();
        next.make(seat, *mv);
        next.to_move = if seat == self.me {
            next.next_seat(self.me)
        } else {
            self.me
        };
        next
    }

    /// Whether the bot is to move in `board` (else the others are).
    fn ours(&self, board: &Position) -> bool {
        board.to_move == self.me
    }

    /// Every move of the side to move, as (seat, move): the bot's, or all the others'.
    fn moves(&self, board: &Position) -> Vec<(Seat, Move)> {
        let seats: Vec<Seat> = if self.ours(board) {
            vec![self.me]
        } else {
            board.remaining().into_iter().filter(|&s| s != self.me).collect()
        };
        seats
            .into_iter()
            .flat_map(|s| board.moves(s).into_iter().map(move |m| (s, m)))
            .collect()
    }

    /// Counts a node; `None` once the budget is spent.
    fn tick(&mut self) -> Option<()> {
        self.nodes += 1;
        let late = self.nodes % 256 == 0 && self.budget.deadline.is_some_and(|d| Instant::now() >= d);
        (self.nodes <= self.budget.nodes && !late).then_some(())
    }

    /// Alpha-beta value of `board` for the bot, `depth` full-width plies deep.
    fn value(&mut self, board: &Position, depth: u32, mut alpha: i64, mut beta: i64) -> Option<i64> {
        self.tick()?;
        if let Some(end) = self.finished(board) {
            return Some(end);
        }
        if depth == 0 {
            return self.captures(board, alpha, beta);
        }
        let ours = self.ours(board);
        let mut moves = self.moves(board);
        if moves.is_empty() {
            // Nobody on this side can move: they pass (R-M6).
            let mut next = board.clone();
            next.to_move = if ours { board.next_seat(self.me) } else { self.me };
            return self.value(&next, depth - 1, alpha, beta);
        }
        moves.sort_by_cached_key(|(_, m)| -estimate(board, m));
        moves.truncate(BEAM);
        let mut best = if ours { -WIN - 2 } else { WIN + 2 };
        for (seat, mv) in &moves {
            let v = self.value(&self.play(board, *seat, mv), depth - 1, alpha, beta)?;
            if ours {
                best = best.max(v);
                alpha = alpha.max(v);
            } else {
                best = best.min(v);
                beta = beta.min(v);
            }
            if alpha >= beta {
                break;
            }
        }
        Some(best)
    }

    /// The capture-only search: the side to move may stop (the position as it
    /// stands) or capture, its most valuable captures first.
    fn captures(&mut self, board: &Position, mut alpha: i64, mut beta: i64) -> Option<i64> {
        let ours = self.ours(board);
        let stand = self.evaluate(board);
        if ours {
            alpha = alpha.max(stand);
        } else {
            beta = beta.min(stand);
        }
        if alpha >= beta {
            return Some(stand);
        }
        let mut moves: Vec<(i64, Seat, Move)> = self
            .moves(board)
            .into_iter()
            .filter(|(_, m)| board.at(m.to).is_some())
            .map(|(s, m)| (estimate(board, &m), s, m))
            .collect();
        moves.sort_by_key(|(e, _, _)| -e);
        moves.truncate(CAPTURE_BEAM);
        let mut best = stand;
        for (_, seat, mv) in &moves {
            self.tick()?;
            let next = self.play(board, *seat, mv);
            let v = match self.finished(&next) {
                Some(end) => end,
                None => self.captures(&next, alpha, beta)?,
            };
            if ours {
                best = best.max(v);
                alpha = alpha.max(v);
            } else {
                best = best.min(v);
                beta = beta.min(v);
            }
            if alpha >= beta {
                break;
            }
        }
        Some(best)
    }

    /// The value of a finished game: the bot out (its king taken, R-M5) or last.
    fn finished(&self, board: &Position) -> Option<i64> {
        if board.out.contains(&self.me) {
            return Some(-WIN);
        }
        (board.remaining().len() == 1).then_some(WIN)
    }

    /// The believed board's worth to the bot.
    fn evaluate(&self, board: &Position) -> i64 {
        let kings: Vec<Square> = board
            .all_squares()
            .filter(|&sq| {
                board
                    .at(sq)
                    .is_some_and(|p| p.kind == Kind::King && p.owner != self.me)
            })
            .collect();
        let (mut mine, mut theirs, mut placing) = (0, 0, 0);
        for sq in board.all_squares() {
            let Some(p) = board.at(sq) else { continue };
            if p.owner != self.me {
                theirs += worth(p.kind);
                continue;
            }
            mine += worth(p.kind);
            placing += match p.kind {
                // Pawns on the way to promotion (public rank 8).
                Kind::Pawn => 4 * i64::from(sq.rank),
                // The king at home, behind its pieces: out in the open any seat may
                // find it.
                Kind::King => match sq.area {
                    Area::Private(_) => -20 * i64::from(sq.rank),
                    Area::Public => -400,
                },
                // Other pieces towards the nearest enemy king, seen or believed, and
                // into foreign areas, where they see what they attack (R-M3).
                _ => {
                    let near = kings.iter().map(|&k| -8 * distance(sq, k)).max().unwrap_or(0);
                    let inside =
                        matches!(sq.area, Area::Private(a) if board.owners[a as usize] != Some(self.me));
                    near + if inside { 30 } else { 0 }
                }
            };
        }
        let others = board.remaining().len() as i64 - 1;
        mine + mine / 2 - theirs + placing - 2_000 * others
    }
}

/// Shuffles the moves with the seed (the sort after it is stable, so only equal
/// estimates keep the shuffled order).
fn rng_shuffle(moves: &mut [Move], rng: &mut Rng) {
    for i in (1..moves.len()).rev() {
        let j = rng.below(i + 1);
        moves.swap(i, j);
    }
}
