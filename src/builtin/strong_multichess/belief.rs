//! What the seat believes stands on the squares it cannot see.
//!
//! Memory is the last thing seen on every square, with the ply it was seen at, so
//! that when memory holds more pieces of a kind than a seat can have, the oldest
//! sightings are the ones forgotten. Two sources feed it: the view, which shows
//! what is in sight now, and the `square` events, which also tell what became of
//! squares that went out of sight with the action (R-M7): when an enemy king
//! takes a probe of ours deep in its area, the event says where the king now
//! stands although the view no longer shows that square.

use super::start_count;
use crate::builtin::multichess::distance;
use crate::game::multichess::board::{Area, Kind, Piece, Square};
use crate::game::multichess::rules::{Move, Position};
use crate::game::Seat;

/// How many of its own last moves the bot remembers, to avoid undoing them.
const RECENT: usize = 4;

/// What the bot remembers between decisions: the last contents seen on every square.
#[derive(Debug, Default)]
pub(in crate::builtin) struct Belief {
    /// Last contents seen (or guessed) on every square, by square index.
    squares: Vec<Option<Piece>>,
    /// The ply each square was last seen at (0: the known setup).
    seen_at: Vec<u32>,
    /// Whether a square's king is only guessed there (never seen there), by index.
    guessed: Vec<bool>,
    /// Where each seat's king was last seen, by seat index.
    last_king: Vec<Option<Square>>,
    /// The bot's own last moves, newest last.
    recent: Vec<Move>,
}

impl Belief {
    /// Takes in the events since the last decision and a new view, and returns the
    /// believed board: the view with its unseen squares filled from memory.
    pub(super) fn update(&mut self, view: &Position, seen: &[bool], events: &[String]) -> Position {
        if self.squares.len() != view.squares.len() {
            // A new game (or a view of another table): the setup is known to all.
            self.squares = Position::start(view.seats).squares;
            self.seen_at = vec![0; view.squares.len()];
            self.guessed = vec![false; view.squares.len()];
            self.last_king = vec![None; view.seats];
            self.recent.clear();
        }
        self.absorb(view, events);
        let out = |s: Seat| view.out.contains(&s);
        for (i, cell) in self.squares.iter_mut().enumerate() {
            if seen[i] {
                *cell = view.squares[i];
                self.seen_at[i] = view.plies;
                self.guessed[i] = false;
                continue;
            }
            // R-M3: the bot sees every piece of its own, so none stands in the fog.
            if cell.is_some_and(|p| p.owner == view.to_move) {
                *cell = None;
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
        self.note_kings();
        self.guess_kings(view, seen);
        let mut board = view.clone();
        for (i, cell) in board.squares.iter_mut().enumerate() {
            if !seen[i] {
                *cell = self.squares[i];
            }
        }
        board
    }

    /// Whether each seat's king (by seat index) stands on the believed board only
    /// where it was guessed: finding it there is a hope, not a win.
    pub(super) fn guessed_kings(&self) -> Vec<bool> {
        let mut out = vec![false; self.last_king.len()];
        for (i, cell) in self.squares.iter().enumerate() {
            if let Some(p) = cell.filter(|_| self.guessed[i]) {
                out[p.owner.index()] = true;
            }
        }
        out
    }

    /// Records the bot's own move, so that the next decisions know what it undoes.
    pub(super) fn played(&mut self, mv: Move) {
        self.recent.push(mv);
        if self.recent.len() > RECENT {
            self.recent.remove(0);
        }
    }

    /// Whether `mv` takes a piece back to where one of the last moves brought it
    /// from: shuffling a piece to and fro wastes the plies the game has (R-M6).
    pub(super) fn undoes(&self, mv: &Move) -> bool {
        self.recent.iter().any(|r| r.to == mv.from && r.from == mv.to)
    }

    /// Writes the `square <square> <cell>` events into memory, as fresh as the view
    /// (they all happened since the last decision).
    fn absorb(&mut self, view: &Position, events: &[String]) {
        for event in events {
            let mut words = event.split(' ');
            if words.next() != Some("square") {
                continue;
            }
            let (Some(square), Some(cell)) = (words.next(), words.next()) else {
                continue;
            };
            let Ok(sq) = Square::parse(square, view.seats) else {
                continue;
            };
            if let Some(contents) = parse_cell(cell, view.seats) {
                self.squares[sq.index()] = contents;
                self.seen_at[sq.index()] = view.plies;
                self.guessed[sq.index()] = false;
            }
        }
    }

    /// Forgets remembered unseen pieces that cannot all still be there: no seat has
    /// more of a kind than it started with (counting what is seen). The oldest
    /// sightings go first, and among equally old ones the highest (pieces leave an
    /// area towards the public ranks). A promoted pawn may make this forget a real
    /// piece; the next look corrects it.
    fn forget_extra(&mut self, view: &Position, seen: &[bool]) {
        for owner in Seat::all(view.seats) {
            for kind in Kind::ALL {
                let piece = Some(Piece { kind, owner });
                let in_sight = (0..seen.len())
                    .filter(|&i| seen[i] && view.squares[i] == piece)
                    .count();
                let mut hidden: Vec<usize> = (0..seen.len())
                    .filter(|&i| !seen[i] && self.squares[i] == piece)
                    .collect();
                let room = start_count(kind).saturating_sub(in_sight);
                if hidden.len() > room {
                    hidden.sort_by_key(|&i| (self.seen_at[i], std::cmp::Reverse(Square::from_index(i).rank)));
                    for &i in &hidden[..hidden.len() - room] {
                        self.squares[i] = None;
                    }
                }
            }
        }
    }

    /// Remembers where each king seen (or told of) stands, and drops the guess marks
    /// of squares whose guessed king is gone.
    fn note_kings(&mut self) {
        for (i, cell) in self.squares.iter().enumerate() {
            let king = cell.filter(|p| p.kind == Kind::King);
            if king.is_none() {
                self.guessed[i] = false;
            }
            if let Some(p) = king.filter(|_| !self.guessed[i]) {
                self.last_king[p.owner.index()] = Some(Square::from_index(i));
            }
        }
    }

    /// Puts back a king for every other seat still playing whose king is neither in
    /// sight nor remembered: it is on some unseen square (R-M5: a seat without its
    /// king is out), most likely near where it was last seen (a king steps one
    /// square at a time), in an area the seat owns, near where kings start. Each
    /// look that finds the square empty moves the guess on, so that the search for
    /// the king sweeps the fog. The guess is marked as one (`guessed_kings`).
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
            let last = self.last_king[seat.index()];
            let guess = (0..seen.len())
                .filter(|&i| !seen[i] && self.squares[i].is_none())
                .min_by_key(|&i| {
                    let sq = Square::from_index(i);
                    let own = matches!(sq.area, Area::Private(a) if view.owners[a as usize] == Some(seat));
                    let near = last.map_or(0, |k| distance(sq, k));
                    (!own, near, sq.rank, (i16::from(sq.file) - 4).abs(), i)
                });
            if let Some(i) = guess {
                self.squares[i] = king;
                self.guessed[i] = true;
            }
        }
    }
}

/// A cell of a `square` event: `.` (empty, `Some(None)`) or a piece like `K2`.
fn parse_cell(text: &str, seats: usize) -> Option<Option<Piece>> {
    if text == "." {
        return Some(None);
    }
    let mut chars = text.chars();
    let kind = Kind::from_letter(chars.next()?)?;
    let owner: Seat = chars
        .as_str()
        .parse()
        .ok()
        .filter(|s: &Seat| s.number() <= seats)?;
    Some(Some(Piece { kind, owner }))
}
