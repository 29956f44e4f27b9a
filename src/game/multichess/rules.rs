//! Moves of Multi-player TelnChes: legality on the mover's view (R-M1, R-M4), the
//! move as taken on the true board, visibility (R-M3) and elimination (R-M5).

use std::fmt;

use super::board::{Area, Kind, Piece, Square, AREA};
pub use super::errors::{MoveError, NotationError};
use crate::game::geometry::{ray, Dir, DIAGONAL, KING, KNIGHT, ORTHOGONAL, QUEEN};
use crate::game::Seat;

/// How a piece kind captures (R-M2): one step or a slide, in these directions. A
/// pawn's captures are its diagonal steps forward; its pushes are its own.
#[derive(Clone, Copy, Debug)]
enum Reach {
    /// One step in any of the directions.
    Step(&'static [Dir]),
    /// Any number of steps along one of the directions, up to the first piece.
    Slide(&'static [Dir]),
}

/// A pawn's captures: one step diagonally forward.
const PAWN_CAPTURES: [Dir; 2] = [(-1, 1), (1, 1)];

/// The one table of how each kind captures, for what a piece attacks (R-M3) and
/// where it may move (R-M2).
fn reach(kind: Kind) -> Reach {
    match kind {
        Kind::King => Reach::Step(&KING),
        Kind::Knight => Reach::Step(&KNIGHT),
        Kind::Pawn => Reach::Step(&PAWN_CAPTURES),
        Kind::Rook => Reach::Slide(&ORTHOGONAL),
        Kind::Bishop => Reach::Slide(&DIAGONAL),
        Kind::Queen => Reach::Slide(&QUEEN),
    }
}

/// A move as written in R-M2: `1:e2-1:e4`, `b7-b8=Q`, castling `1:e1-1:g1`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Move {
    /// From.
    pub from: Square,
    /// To.
    pub to: Square,
    /// Promotion type (pawns reaching public rank 8).
    pub promotion: Option<Kind>,
}

impl Move {
    /// Parses `<square>-<square>[=<Q|R|B|N>]` for a table of `seats`.
    pub fn parse(text: &str, seats: usize) -> Result<Move, NotationError> {
        let (squares, promotion) = match text.split_once('=') {
            Some((s, p)) => match Kind::from_letter(p.chars().next().unwrap_or(' ')) {
                Some(k) if p.len() == 1 && !matches!(k, Kind::King | Kind::Pawn) => (s, Some(k)),
                _ => {
                    return Err(NotationError::Promotion {
                        text: text.to_string(),
                    })
                }
            },
            None => (text, None),
        };
        let (from, to) = squares.split_once('-').ok_or_else(|| NotationError::NoDash {
            text: text.to_string(),
        })?;
        Ok(Move {
            from: Square::parse(from, seats)?,
            to: Square::parse(to, seats)?,
            promotion,
        })
    }

    /// The private area the move involves, if any (it may involve at most one).
    pub fn private_area(&self) -> Result<Option<u8>, MoveError> {
        match (self.from.area, self.to.area) {
            (Area::Private(a), Area::Private(b)) if a != b => Err(MoveError::BetweenPrivateAreas),
            (Area::Private(a), _) | (_, Area::Private(a)) => Ok(Some(a)),
            _ => Ok(None),
        }
    }
}

impl fmt::Display for Move {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}-{}", self.from, self.to)?;
        if let Some(k) = self.promotion {
            write!(f, "={}", k.letter())?;
        }
        Ok(())
    }
}

/// The whole board and the table's public facts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Position {
    /// Number of seats.
    pub seats: usize,
    /// Square contents by [`Square::index`]; in a seat's view unseen squares are `None`.
    pub squares: Vec<Option<Piece>>,
    /// Owner of each private area (`None` after its owner forfeited: seen by all).
    pub owners: Vec<Option<Seat>>,
    /// Castling rights per private area: [king side, queen side].
    pub castling: Vec<[bool; 2]>,
    /// Seat to move.
    pub to_move: Seat,
    /// Moves made (passes included).
    pub plies: u32,
    /// Seats out of the game, in the order they went out.
    pub out: Vec<Seat>,
}

/// What a move did on the true board.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Taken {
    /// The move as made (a slider stopped by an unseen piece ends there, R-M4).
    pub mv: Move,
    /// What it captured, and where.
    pub captured: Option<(Square, Piece)>,
    /// The seat eliminated by a king capture (R-M5).
    pub eliminated: Option<Seat>,
}

impl Position {
    /// The start: every seat's usual chess setup on ranks 1–2 of its own area.
    pub fn start(seats: usize) -> Position {
        let mut squares = vec![None; AREA * (seats + 1)];
        use Kind::*;
        let back = [Rook, Knight, Bishop, Queen, King, Bishop, Knight, Rook];
        for seat in Seat::all(seats) {
            for file in 0..8u8 {
                let area = Area::Private(seat.index() as u8);
                let put = |rank, kind| {
                    (
                        Square { area, file, rank }.index(),
                        Some(Piece { kind, owner: seat }),
                    )
                };
                let (i, p) = put(0, back[file as usize]);
                squares[i] = p;
                let (i, p) = put(1, Pawn);
                squares[i] = p;
            }
        }
        Position {
            seats,
            squares,
            owners: Seat::all(seats).map(Some).collect(),
            castling: vec![[true, true]; seats],
            to_move: Seat::from_index(0),
            plies: 0,
            out: Vec::new(),
        }
    }

    /// What stands on `sq`.
    pub fn at(&self, sq: Square) -> Option<Piece> {
        self.squares[sq.index()]
    }

    /// Every square of the board.
    pub fn all_squares(&self) -> impl Iterator<Item = Square> {
        (0..self.squares.len()).map(Square::from_index)
    }

    /// The seats still playing, in seat order.
    pub fn remaining(&self) -> Vec<Seat> {
        Seat::all(self.seats).filter(|s| !self.out.contains(s)).collect()
    }

    /// The next seat to move after `seat`, skipping seats that are out.
    pub fn next_seat(&self, seat: Seat) -> Seat {
        (1..=self.seats)
            .map(|k| Seat::from_index((seat.index() + k) % self.seats))
            .find(|s| !self.out.contains(s))
            .unwrap_or(seat)
    }

    /// Squares the piece on `sq` could capture on right now, traced on the true board
    /// through `private` and the public area (R-M3).
    fn attacks(&self, sq: Square, private: Option<u8>) -> Vec<Square> {
        let Some(piece) = self.at(sq) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        let steps = |set: &[Dir], out: &mut Vec<Square>| {
            out.extend(set.iter().filter_map(|&(f, r)| sq.offset(f, r, private)));
        };
        // A slider attacks along each line up to the first piece, that one included.
        let rays = |set: &[Dir], out: &mut Vec<Square>| {
            for &(f, r) in set {
                for next in ray(sq, |s: Square| s.offset(f, r, private)) {
                    out.push(next);
                    if self.at(next).is_some() {
                        break;
                    }
                }
            }
        };
        match reach(piece.kind) {
            Reach::Step(set) => steps(set, &mut out),
            Reach::Slide(set) => rays(set, &mut out),
        }
        out
    }

    /// R-M3: which squares `seat` sees, by square index. The public area and areas it
    /// owns (or nobody owns) entirely; elsewhere its own pieces and every square one
    /// of its pieces inside that area could capture on.
    pub fn visible(&self, seat: Seat) -> Vec<bool> {
        self.visibility(Some(seat)).pop().expect("one row for one seat")
    }

    /// [`Position::visible`] for every seat at once, indexed by seat index: one pass
    /// over the board instead of one per seat (each action tells every seat what it
    /// saw, before and after).
    pub fn visible_all(&self) -> Vec<Vec<bool>> {
        self.visibility(None)
    }

    /// The R-M3 rule itself, for `only` one seat (one row) or for all (a row each).
    fn visibility(&self, only: Option<Seat>) -> Vec<Vec<bool>> {
        let row_of = |s: Seat| match only {
            Some(o) => (s == o).then_some(0),
            None => Some(s.index()),
        };
        let rows = if only.is_some() { 1 } else { self.seats };
        let mut seen = vec![vec![false; self.squares.len()]; rows];
        for sq in self.all_squares() {
            let i = sq.index();
            let owner = match sq.area {
                Area::Public => None,
                Area::Private(a) => self.owners[a as usize],
            };
            let Some(owner) = owner else {
                seen.iter_mut().for_each(|row| row[i] = true);
                continue;
            };
            if let Some(r) = row_of(owner) {
                seen[r][i] = true;
            }
            // A piece inside another seat's area: its owner sees it and what it attacks.
            let Some(piece) = self.at(sq).filter(|p| p.owner != owner) else {
                continue;
            };
            let (Some(r), Area::Private(a)) = (row_of(piece.owner), sq.area) else {
                continue;
            };
            seen[r][i] = true;
            for t in self.attacks(sq, Some(a)) {
                seen[r][t.index()] = true;
            }
        }
        seen
    }

    /// The position as `seat` knows it: unseen squares empty (R-M4 judges moves on it),
    /// and castling rights of areas it does not fully see unknown (cleared).
    pub fn masked(&self, seat: Seat) -> (Position, Vec<bool>) {
        let seen = self.visible(seat);
        (self.masked_by(seat, &seen), seen)
    }

    /// [`Position::masked`] with what `seat` sees already known (`seen`, as
    /// [`Position::visible`] gives it).
    pub fn masked_by(&self, seat: Seat, seen: &[bool]) -> Position {
        let mut view = self.clone();
        for (i, cell) in view.squares.iter_mut().enumerate() {
            if !seen[i] {
                *cell = None;
            }
        }
        for (a, rights) in view.castling.iter_mut().enumerate() {
            if !self.sees_area(seat, a) {
                *rights = [false, false];
            }
        }
        view
    }

    /// Whether `seat` sees all of private area `a`.
    pub fn sees_area(&self, seat: Seat, a: usize) -> bool {
        self.owners[a].is_none_or(|o| o == seat)
    }

    /// Every move of `seat` legal on this position taken as fully known, i.e. on the
    /// seat's masked view (R-M4): moves, captures, promotions and castling.
    pub fn moves(&self, seat: Seat) -> Vec<Move> {
        self.squares_of(seat)
            .flat_map(|from| self.moves_from(from))
            .collect()
    }

    /// Whether `seat` has any move ([`Position::moves`] without listing them all: a
    /// turn asks this before every decision).
    pub fn has_move(&self, seat: Seat) -> bool {
        self.squares_of(seat)
            .any(|from| !self.moves_from(from).is_empty())
    }

    /// The squares holding pieces of `seat`.
    fn squares_of(&self, seat: Seat) -> impl Iterator<Item = Square> + '_ {
        self.all_squares()
            .filter(move |&sq| self.at(sq).is_some_and(|p| p.owner == seat))
    }

    /// The moves of the piece on `from` (none for an empty square), under the same
    /// rules as [`Position::moves`].
    pub fn moves_from(&self, from: Square) -> Vec<Move> {
        let mut out = Vec::new();
        let Some(piece) = self.at(from) else {
            return out;
        };
        let contexts: Vec<Option<u8>> = match from.area {
            Area::Private(a) => vec![Some(a)],
            Area::Public => std::iter::once(None)
                .chain((0..self.seats as u8).map(Some))
                .collect(),
        };
        for ctx in contexts {
            for to in self.destinations(from, piece, ctx) {
                // From the public area, a context only adds squares inside its area.
                if from.area == Area::Public && ctx.is_some() && to.area == Area::Public {
                    continue;
                }
                if piece.kind == Kind::Pawn && to.rank == 7 {
                    for k in [Kind::Queen, Kind::Rook, Kind::Bishop, Kind::Knight] {
                        out.push(Move {
                            from,
                            to,
                            promotion: Some(k),
                        });
                    }
                } else {
                    out.push(Move {
                        from,
                        to,
                        promotion: None,
                    });
                }
            }
        }
        out
    }

    /// Destinations of the piece on `from` on the board of `ctx` plus the public area.
    fn destinations(&self, from: Square, piece: Piece, ctx: Option<u8>) -> Vec<Square> {
        let seat = piece.owner;
        let free_or_enemy = |sq: Square| self.at(sq).is_none_or(|p| p.owner != seat);
        let mut out = Vec::new();
        match piece.kind {
            Kind::Pawn => {
                if let Some(one) = from.offset(0, 1, ctx).filter(|&s| self.at(s).is_none()) {
                    out.push(one);
                    if from.rank == 1 && matches!(from.area, Area::Private(_)) {
                        if let Some(two) = one.offset(0, 1, ctx).filter(|&s| self.at(s).is_none()) {
                            out.push(two);
                        }
                    }
                }
                for &(df, dr) in &PAWN_CAPTURES {
                    if let Some(sq) = from
                        .offset(df, dr, ctx)
                        .filter(|&s| self.at(s).is_some_and(|p| p.owner != seat))
                    {
                        out.push(sq);
                    }
                }
            }
            kind => match reach(kind) {
                Reach::Step(set) => {
                    out.extend(
                        set.iter()
                            .filter_map(|&(f, r)| from.offset(f, r, ctx))
                            .filter(|&s| free_or_enemy(s)),
                    );
                    if kind == Kind::King {
                        out.extend(self.castlings(from, seat));
                    }
                }
                Reach::Slide(dirs) => {
                    for &(f, r) in dirs {
                        for next in ray(from, |s: Square| s.offset(f, r, ctx)) {
                            match self.at(next) {
                                None => out.push(next),
                                Some(p) => {
                                    if p.owner != seat {
                                        out.push(next);
                                    }
                                    break;
                                }
                            }
                        }
                    }
                }
            },
        }
        out
    }

    /// Castling destinations of a king on `from` (R-M1: in the seat's own area, king
    /// and rook unmoved, the squares between empty; there is no check).
    fn castlings(&self, from: Square, seat: Seat) -> Vec<Square> {
        let own = Area::Private(seat.index() as u8);
        if from
            != (Square {
                area: own,
                file: 4,
                rank: 0,
            })
        {
            return Vec::new();
        }
        let rights = self.castling[seat.index()];
        let sq = |file| Square {
            area: own,
            file,
            rank: 0,
        };
        let rook_ok = |file| {
            self.at(sq(file))
                == Some(Piece {
                    kind: Kind::Rook,
                    owner: seat,
                })
        };
        let mut out = Vec::new();
        if rights[0] && rook_ok(7) && [5, 6].iter().all(|&f| self.at(sq(f)).is_none()) {
            out.push(sq(6));
        }
        if rights[1] && rook_ok(0) && [1, 2, 3].iter().all(|&f| self.at(sq(f)).is_none()) {
            out.push(sq(2));
        }
        out
    }

    /// Makes `mv` of `seat` on the true board. The move was legal on the seat's view;
    /// a slider meeting a piece the seat could not see stops there and captures it
    /// (R-M4). Passes the turn on and counts the ply.
    pub fn make(&mut self, seat: Seat, mv: Move) -> Taken {
        let piece = self.at(mv.from).expect("legal on the view: a piece on from");
        let ctx = mv.private_area().expect("legal on the view");
        let mut to = mv.to;
        if piece.kind.slides() {
            let df = (mv.to.file as i8 - mv.from.file as i8).signum();
            let dr = (mv.to.rank as i8 - mv.from.rank as i8).signum();
            if let Some(stop) =
                ray(mv.from, |s: Square| s.offset(df, dr, ctx)).find(|&s| s == mv.to || self.at(s).is_some())
            {
                to = stop;
            }
        }
        let taken = Move {
            from: mv.from,
            to,
            promotion: mv.promotion,
        };
        let captured = self.at(to).map(|p| (to, p));
        // Castling moves the rook too.
        if piece.kind == Kind::King && mv.from.file == 4 && mv.from.rank == 0 && to.file.abs_diff(4) == 2 {
            let (rook_from, rook_to) = if to.file == 6 { (7, 5) } else { (0, 3) };
            let rook = self.squares[Square {
                file: rook_from,
                ..mv.from
            }
            .index()]
            .take();
            self.squares[Square {
                file: rook_to,
                ..mv.from
            }
            .index()] = rook;
        }
        // Rights are lost when the king or a rook leaves its square, or a rook is taken.
        for sq in [mv.from, to] {
            if let Area::Private(a) = sq.area {
                let rights = &mut self.castling[a as usize];
                match (sq.rank, sq.file) {
                    (0, 4) if sq == mv.from => *rights = [false, false],
                    (0, 7) => rights[0] = false,
                    (0, 0) => rights[1] = false,
                    _ => {}
                }
            }
        }
        let moved = Piece {
            kind: mv.promotion.unwrap_or(piece.kind),
            owner: seat,
        };
        self.squares[mv.from.index()] = None;
        self.squares[to.index()] = Some(moved);
        let eliminated = captured
            .filter(|(_, p)| p.kind == Kind::King)
            .map(|(_, p)| p.owner);
        if let Some(victim) = eliminated {
            self.eliminate(victim, seat);
        }
        self.plies += 1;
        self.to_move = self.next_seat(seat);
        Taken {
            mv: taken,
            captured,
            eliminated,
        }
    }

    /// R-M5: every piece and private area of `victim` passes to `capturer`.
    fn eliminate(&mut self, victim: Seat, capturer: Seat) {
        for p in self.squares.iter_mut().flatten() {
            if p.owner == victim {
                p.owner = capturer;
            }
        }
        for owner in self.owners.iter_mut() {
            if *owner == Some(victim) {
                *owner = Some(capturer);
            }
        }
        self.out.push(victim);
    }

    /// R-F1: a forfeiting seat's pieces leave the board and its areas become unowned
    /// (seen by everybody). Returns how many pieces left.
    pub fn remove_seat(&mut self, seat: Seat) -> usize {
        let mut n = 0;
        for cell in self.squares.iter_mut() {
            if cell.is_some_and(|p| p.owner == seat) {
                *cell = None;
                n += 1;
            }
        }
        for owner in self.owners.iter_mut() {
            if *owner == Some(seat) {
                *owner = None;
            }
        }
        for (a, rights) in self.castling.iter_mut().enumerate() {
            if a == seat.index() {
                *rights = [false, false];
            }
        }
        self.out.push(seat);
        if self.to_move == seat {
            self.to_move = self.next_seat(seat);
        }
        n
    }
}
