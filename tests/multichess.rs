//! Multi-player TelnChes (RULES.md §4, R-M1…R-M7, and R-F1) through the `Game` trait, the
//! record and the command line.
//!
//! `model` below restates the rules independently of the game's code (geometry, R-M3
//! visibility, moves on the view, slides stopped by unseen pieces, elimination, R-M7
//! events); seeded random play with 2 to 8 seats checks the game against it ply by
//! ply. Hand-built move cases are in `fixtures/multichess/cases.txt`.

mod cli_support;

use std::collections::{BTreeSet, VecDeque};
use std::path::{Path, PathBuf};

use cli_support::*;
use model::{Board, Sq};
use referee::game::multichess::rules::MoveError;
use referee::game::{
    ActionKind, EndReason, ForfeitKind, Game, GameId, IllegalReason, Options, Played, Rejection, Seat, Turn,
};
use referee::record::{self, Line};
use referee::rng::Rng;
use tempfile::TempDir;

/// An independent statement of the rules, written from RULES.md §4: square names,
/// state and view strings, R-M3 visibility, moves legal on a seat's view (R-M1,
/// R-M4), a move on the true board (R-M4 truncation, castling, R-M5 elimination),
/// a forfeit (R-F1), and what each seat is told (R-M7).
mod model {
    use std::collections::BTreeSet;
    use std::fmt;

    const KING: [(i8, i8); 8] = [
        (1, 0),
        (1, 1),
        (0, 1),
        (-1, 1),
        (-1, 0),
        (-1, -1),
        (0, -1),
        (1, -1),
    ];
    const KNIGHT: [(i8, i8); 8] = [
        (1, 2),
        (2, 1),
        (2, -1),
        (1, -2),
        (-1, -2),
        (-2, -1),
        (-2, 1),
        (-1, 2),
    ];
    const ORTHO: [(i8, i8); 4] = [(1, 0), (-1, 0), (0, 1), (0, -1)];
    const DIAG: [(i8, i8); 4] = [(1, 1), (1, -1), (-1, 1), (-1, -1)];

    /// A square: area 0 is the public area (ranks 5–8), area k seat k's private area
    /// (ranks 1–4); files 0..8, ranks as in chess.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
    pub struct Sq {
        pub area: usize,
        pub file: i8,
        pub rank: i8,
    }

    impl Sq {
        /// `e5`, `2:e1` (R-M2) in a game of `n` seats.
        pub fn parse(text: &str, n: usize) -> Option<Sq> {
            let (area, name) = match text.split_once(':') {
                Some((k, name)) => (k.parse::<usize>().ok().filter(|k| (1..=n).contains(k))?, name),
                None => (0, text),
            };
            let b = name.as_bytes();
            if b.len() != 2 || !(b'a'..=b'h').contains(&b[0]) || !(b'1'..=b'8').contains(&b[1]) {
                return None;
            }
            let (file, rank) = ((b[0] - b'a') as i8, (b[1] - b'0') as i8);
            let ok = if area == 0 { rank >= 5 } else { rank <= 4 };
            ok.then_some(Sq { area, file, rank })
        }

        /// Position in the state string: areas in order, each from its top rank.
        pub fn index(self) -> usize {
            let row = if self.area == 0 {
                8 - self.rank
            } else {
                4 - self.rank
            };
            self.area * 32 + row as usize * 8 + self.file as usize
        }

        pub fn from_index(i: usize) -> Sq {
            let (area, row, file) = (i / 32, (i % 32) / 8, i % 8);
            let top = if area == 0 { 8 } else { 4 };
            Sq {
                area,
                file: file as i8,
                rank: top - row as i8,
            }
        }

        /// The square `(df, dr)` away on the board made of the public area and the
        /// private area `ctx` (R-M1: every private rank 4 joins public rank 5).
        pub fn step(self, df: i8, dr: i8, ctx: usize) -> Option<Sq> {
            let (file, rank) = (self.file + df, self.rank + dr);
            if !(0..8).contains(&file) || !(1..=8).contains(&rank) {
                return None;
            }
            let area = if rank >= 5 { 0 } else { ctx };
            Some(Sq { area, file, rank })
        }
    }

    impl fmt::Display for Sq {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            if self.area > 0 {
                write!(f, "{}:", self.area)?;
            }
            write!(f, "{}{}", (b'a' + self.file as u8) as char, self.rank)
        }
    }

    /// A piece: type letter and owning seat.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub struct Pc {
        pub kind: char,
        pub owner: usize,
    }

    impl Pc {
        pub fn parse(text: &str) -> Option<Pc> {
            let mut chars = text.chars();
            let kind = chars.next().filter(|c| "KQRBNP".contains(*c))?;
            let owner = chars.as_str().parse().ok()?;
            Some(Pc { kind, owner })
        }
    }

    impl fmt::Display for Pc {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            write!(f, "{}{}", self.kind, self.owner)
        }
    }

    /// The whole table.
    #[derive(Clone, Debug, PartialEq, Eq)]
    pub struct Board {
        pub n: usize,
        pub cells: Vec<Option<Pc>>,
        pub to_move: usize,
        pub plies: u32,
        pub owners: Vec<Option<usize>>,
        pub castling: Vec<String>,
        pub out: Vec<usize>,
    }

    /// What a move did: the omniscient events, the move taken when it differs from
    /// the one requested, the facts told to every seat, and the mover's own line.
    pub struct Applied {
        pub events: Vec<String>,
        pub taken: Option<String>,
        pub public: Vec<String>,
        pub mover: Option<String>,
    }

    impl Board {
        /// No pieces; each seat owns its area, no castling rights, seat 1 to move.
        pub fn empty(n: usize) -> Board {
            Board {
                n,
                cells: vec![None; 32 * (n + 1)],
                to_move: 1,
                plies: 0,
                owners: (1..=n).map(Some).collect(),
                castling: vec!["-".to_string(); n],
                out: Vec::new(),
            }
        }

        /// Parses a state or view string; the second value marks the `?` cells.
        pub fn parse(text: &str, n: usize) -> (Board, Vec<bool>) {
            let f: Vec<&str> = text.split(' ').collect();
            assert_eq!(f.len(), n + 6, "fields of `{text}`");
            let mut b = Board::empty(n);
            let mut hidden = vec![false; b.cells.len()];
            for (area, field) in f[..=n].iter().enumerate() {
                let ranks: Vec<&str> = field.split('/').collect();
                assert_eq!(ranks.len(), 4, "ranks of area {area} in `{text}`");
                for (row, rank) in ranks.iter().enumerate() {
                    let mut chars = rank.chars();
                    let mut file = 0;
                    while let Some(c) = chars.next() {
                        let i = area * 32 + row * 8 + file;
                        match c {
                            '.' => {}
                            '?' => hidden[i] = true,
                            kind => {
                                let owner = chars.next().and_then(|d| d.to_digit(10)).expect("owner digit");
                                b.cells[i] = Some(Pc {
                                    kind,
                                    owner: owner as usize,
                                });
                            }
                        }
                        file += 1;
                    }
                    assert_eq!(file, 8, "cells of `{rank}` in `{text}`");
                }
            }
            b.to_move = f[n + 1].parse().expect("to-move");
            b.plies = f[n + 2].parse().expect("plies");
            b.owners = f[n + 3].split(',').map(|o| o.parse().ok()).collect();
            b.castling = f[n + 4].split(',').map(str::to_string).collect();
            b.out = match f[n + 5] {
                "-" => Vec::new(),
                t => t.split(',').map(|s| s.parse().expect("out seat")).collect(),
            };
            (b, hidden)
        }

        /// The state string.
        pub fn state(&self) -> String {
            self.print(None)
        }

        /// The view string of `seat`: `?` on every square R-M3 hides, castling `?` in
        /// areas it does not see whole.
        pub fn view(&self, seat: usize) -> String {
            self.print(Some(seat))
        }

        fn print(&self, seat: Option<usize>) -> String {
            let seen = seat.map(|s| self.visible(s));
            let mut fields = Vec::new();
            for area in 0..=self.n {
                let ranks: Vec<String> = (0..4)
                    .map(|row| {
                        (0..8)
                            .map(|file| {
                                let i = area * 32 + row * 8 + file;
                                match (&seen, self.cells[i]) {
                                    (Some(v), _) if !v[i] => "?".to_string(),
                                    (_, None) => ".".to_string(),
                                    (_, Some(p)) => p.to_string(),
                                }
                            })
                            .collect()
                    })
                    .collect();
                fields.push(ranks.join("/"));
            }
            fields.push(self.to_move.to_string());
            fields.push(self.plies.to_string());
            let owners: Vec<String> = self
                .owners
                .iter()
                .map(|o| o.map_or("-".to_string(), |s| s.to_string()))
                .collect();
            fields.push(owners.join(","));
            let castling: Vec<String> = (1..=self.n)
                .map(|a| match seat {
                    Some(s) if !self.sees_whole(s, a) => "?".to_string(),
                    _ => self.castling[a - 1].clone(),
                })
                .collect();
            fields.push(castling.join(","));
            fields.push(if self.out.is_empty() {
                "-".to_string()
            } else {
                self.out
                    .iter()
                    .map(usize::to_string)
                    .collect::<Vec<_>>()
                    .join(",")
            });
            fields.join(" ")
        }

        pub fn at(&self, sq: Sq) -> Option<Pc> {
            self.cells[sq.index()]
        }

        /// Puts `piece` (`R1`, or `.` for nothing) on `square`.
        pub fn put(&mut self, square: &str, piece: &str) {
            let sq = Sq::parse(square, self.n).unwrap_or_else(|| panic!("bad square `{square}`"));
            self.cells[sq.index()] = match piece {
                "." => None,
                p => Some(Pc::parse(p).unwrap_or_else(|| panic!("bad piece `{p}`"))),
            };
        }

        pub fn squares(&self) -> impl Iterator<Item = Sq> {
            (0..self.cells.len()).map(Sq::from_index)
        }

        pub fn remaining(&self) -> Vec<usize> {
            (1..=self.n).filter(|s| !self.out.contains(s)).collect()
        }

        /// The next seat after `seat` still playing (R-M5).
        pub fn next(&self, seat: usize) -> usize {
            (1..=self.n)
                .map(|k| (seat - 1 + k) % self.n + 1)
                .find(|s| !self.out.contains(s))
                .unwrap_or(seat)
        }

        /// The public area, and private areas owned by `seat` or by nobody.
        pub fn sees_whole(&self, seat: usize, area: usize) -> bool {
            area == 0 || self.owners[area - 1].is_none_or(|o| o == seat)
        }

        /// Squares the piece on `sq` could capture on now, on the board of area `ctx`.
        pub fn attacks(&self, sq: Sq, ctx: usize) -> Vec<Sq> {
            let Some(p) = self.at(sq) else { return Vec::new() };
            let mut out = Vec::new();
            let steps: &[(i8, i8)] = match p.kind {
                'P' => &[(-1, 1), (1, 1)],
                'N' => &KNIGHT,
                'K' => &KING,
                _ => &[],
            };
            out.extend(steps.iter().filter_map(|&(f, r)| sq.step(f, r, ctx)));
            for (f, r) in rays(p.kind) {
                let mut cur = sq;
                while let Some(next) = cur.step(f, r, ctx) {
                    out.push(next);
                    if self.at(next).is_some() {
                        break;
                    }
                    cur = next;
                }
            }
            out
        }

        /// R-M3: the public area, areas `seat` owns or nobody owns; elsewhere its own
        /// pieces and every square one of them inside that area attacks.
        pub fn visible(&self, seat: usize) -> Vec<bool> {
            let mut seen: Vec<bool> = self.squares().map(|sq| self.sees_whole(seat, sq.area)).collect();
            for sq in self.squares() {
                if !self.sees_whole(seat, sq.area) && self.at(sq).is_some_and(|p| p.owner == seat) {
                    seen[sq.index()] = true;
                    for t in self.attacks(sq, sq.area) {
                        seen[t.index()] = true;
                    }
                }
            }
            seen
        }

        /// The board `seat` judges its moves on: unseen squares empty (R-M4).
        pub fn masked(&self, seat: usize) -> Board {
            let seen = self.visible(seat);
            let mut b = self.clone();
            for (i, cell) in b.cells.iter_mut().enumerate() {
                if !seen[i] {
                    *cell = None;
                }
            }
            b
        }

        /// Every move of `seat` legal on its view (R-M1, R-M4).
        pub fn moves(&self, seat: usize) -> BTreeSet<String> {
            let v = self.masked(seat);
            let mut out = BTreeSet::new();
            for from in v.squares() {
                let Some(p) = v.at(from).filter(|p| p.owner == seat) else {
                    continue;
                };
                // A piece in a private area moves on that area's board; a public one
                // on every area's board.
                let boards: Vec<usize> = if from.area > 0 {
                    vec![from.area]
                } else {
                    (1..=v.n).collect()
                };
                for ctx in boards {
                    for to in v.targets(from, p, ctx) {
                        if p.kind == 'P' && to.rank == 8 {
                            for k in ['Q', 'R', 'B', 'N'] {
                                out.insert(format!("{from}-{to}={k}"));
                            }
                        } else {
                            out.insert(format!("{from}-{to}"));
                        }
                    }
                }
                let home = Sq {
                    area: seat,
                    file: 4,
                    rank: 1,
                };
                if p.kind == 'K' && from == home && v.sees_whole(seat, seat) {
                    let rights = &v.castling[seat - 1];
                    let at = |file| v.at(Sq { file, ..home });
                    let rook = Some(Pc {
                        kind: 'R',
                        owner: seat,
                    });
                    if rights.contains('K') && at(7) == rook && at(5).is_none() && at(6).is_none() {
                        out.insert(format!("{home}-{}", Sq { file: 6, ..home }));
                    }
                    if rights.contains('Q') && at(0) == rook && (1..4).all(|f| at(f).is_none()) {
                        out.insert(format!("{home}-{}", Sq { file: 2, ..home }));
                    }
                }
            }
            out
        }

        fn targets(&self, from: Sq, p: Pc, ctx: usize) -> Vec<Sq> {
            let own = |s: Sq| self.at(s).is_some_and(|q| q.owner == p.owner);
            let enemy = |s: Sq| self.at(s).is_some_and(|q| q.owner != p.owner);
            let mut out = Vec::new();
            match p.kind {
                'P' => {
                    if let Some(one) = from.step(0, 1, ctx).filter(|&s| self.at(s).is_none()) {
                        out.push(one);
                        if from.area > 0 && from.rank == 2 {
                            out.extend(one.step(0, 1, ctx).filter(|&s| self.at(s).is_none()));
                        }
                    }
                    out.extend(
                        [-1, 1]
                            .iter()
                            .filter_map(|&df| from.step(df, 1, ctx))
                            .filter(|&s| enemy(s)),
                    );
                }
                'N' | 'K' => {
                    let set = if p.kind == 'N' { &KNIGHT } else { &KING };
                    out.extend(
                        set.iter()
                            .filter_map(|&(f, r)| from.step(f, r, ctx))
                            .filter(|&s| !own(s)),
                    );
                }
                kind => {
                    for (f, r) in rays(kind) {
                        let mut cur = from;
                        while let Some(next) = cur.step(f, r, ctx) {
                            if !own(next) {
                                out.push(next);
                            }
                            if self.at(next).is_some() {
                                break;
                            }
                            cur = next;
                        }
                    }
                }
            }
            out
        }

        /// Plays `action` (a move legal on `seat`'s view, or `pass`) on the true board.
        pub fn apply(&mut self, seat: usize, action: &str) -> Applied {
            if action == "pass" {
                self.plies += 1;
                self.to_move = self.next(seat);
                // R-M7a: the others learn only whose turn it was, as after a move
                // they see none of.
                let e = format!("pass {seat}");
                return Applied {
                    events: vec![e.clone()],
                    taken: None,
                    public: vec![format!("moved {seat}")],
                    mover: Some(e),
                };
            }
            let (squares, promotion) = match action.split_once('=') {
                Some((s, k)) => (s, k.chars().next()),
                None => (action, None),
            };
            let (from, to) = squares.split_once('-').expect("a move");
            let (from, to) = (Sq::parse(from, self.n).unwrap(), Sq::parse(to, self.n).unwrap());
            let piece = self.at(from).expect("a piece on from");
            let ctx = if from.area > 0 { from.area } else { to.area.max(1) };
            // R-M4: a slider stops on the first piece it meets.
            let mut dest = to;
            if "QRB".contains(piece.kind) {
                let (df, dr) = ((to.file - from.file).signum(), (to.rank - from.rank).signum());
                let mut cur = from;
                loop {
                    cur = cur.step(df, dr, ctx).expect("the path stays on the board");
                    if cur == to || self.at(cur).is_some() {
                        dest = cur;
                        break;
                    }
                }
            }
            let captured = self.at(dest);
            if piece.kind == 'K'
                && from.area > 0
                && from.rank == 1
                && from.file == 4
                && (dest.file - 4).abs() == 2
            {
                let (rook_from, rook_to) = if dest.file == 6 { (7, 5) } else { (0, 3) };
                let rook = self.cells[Sq {
                    file: rook_from,
                    ..from
                }
                .index()]
                .take();
                self.cells[Sq {
                    file: rook_to,
                    ..from
                }
                .index()] = rook;
            }
            // Rights go with the king leaving e1 and a rook leaving (or being taken on)
            // its corner.
            for sq in [from, dest] {
                if sq.area > 0 && sq.rank == 1 {
                    let rights = &mut self.castling[sq.area - 1];
                    let mut keep: String = rights.chars().filter(|c| "KQ".contains(*c)).collect();
                    match sq.file {
                        4 if sq == from => keep.clear(),
                        7 => keep.retain(|c| c != 'K'),
                        0 => keep.retain(|c| c != 'Q'),
                        _ => {}
                    }
                    *rights = if keep.is_empty() { "-".to_string() } else { keep };
                }
            }
            self.cells[from.index()] = None;
            self.cells[dest.index()] = Some(Pc {
                kind: promotion.unwrap_or(piece.kind),
                owner: seat,
            });
            let suffix = promotion.map(|k| format!("={k}")).unwrap_or_default();
            let taken = format!("{from}-{dest}{suffix}");
            let mut record = format!("move {seat} {taken}");
            if dest != to {
                record.push_str(&format!(" requested {action}"));
            }
            if let Some(c) = captured {
                record.push_str(&format!(" capture {dest} {c}"));
            }
            let mut events = vec![record];
            let mut public = vec![format!("moved {seat}")];
            if let Some(victim) = captured.filter(|c| c.kind == 'K').map(|c| c.owner) {
                // R-M5: every piece and area of the victim passes to the capturer.
                for p in self.cells.iter_mut().flatten() {
                    if p.owner == victim {
                        p.owner = seat;
                    }
                }
                for o in self.owners.iter_mut() {
                    if *o == Some(victim) {
                        *o = Some(seat);
                    }
                }
                self.out.push(victim);
                let e = format!("eliminate {victim} by {seat}");
                events.push(e.clone());
                public.push(e);
            }
            self.plies += 1;
            self.to_move = self.next(seat);
            Applied {
                events,
                taken: (dest != to).then(|| taken.clone()),
                public,
                mover: Some(format!("move {taken}")),
            }
        }

        /// R-F1 with 3 or more seats: `seat`'s pieces leave the board, every area it
        /// owned becomes unowned, its own area's castling rights go, and it is out.
        /// Returns the omniscient events.
        pub fn forfeit(&mut self, seat: usize, reason: &str) -> Vec<String> {
            let mut n = 0;
            for cell in self.cells.iter_mut() {
                if cell.is_some_and(|p| p.owner == seat) {
                    *cell = None;
                    n += 1;
                }
            }
            for o in self.owners.iter_mut() {
                if *o == Some(seat) {
                    *o = None;
                }
            }
            self.castling[seat - 1] = "-".to_string();
            self.out.push(seat);
            if self.to_move == seat {
                self.to_move = self.next(seat);
            }
            vec![format!("forfeit {seat} {reason}"), format!("remove {seat} {n}")]
        }
    }

    /// R-M7b, R-M7c: how many of `seat`'s pieces `viewer` is told left in its
    /// forfeit from `before`: those on squares it saw before.
    pub fn removed_seen(before: &Board, seat: usize, viewer: usize) -> usize {
        let was = before.visible(viewer);
        (0..before.cells.len())
            .filter(|&i| before.cells[i].is_some_and(|p| p.owner == seat) && was[i])
            .count()
    }

    fn rays(kind: char) -> Vec<(i8, i8)> {
        match kind {
            'R' => ORTHO.to_vec(),
            'B' => DIAG.to_vec(),
            'Q' => ORTHO.iter().chain(&DIAG).copied().collect(),
            _ => Vec::new(),
        }
    }

    /// R-M7: what each seat (by index) is told about a change from `before` to
    /// `after`: the public facts, the mover's own line, and every changed square it
    /// saw before or (after a move, not a forfeit: R-M7c) sees after. Sorted, since
    /// the order is not part of the rule.
    pub fn told(
        before: &Board,
        after: &Board,
        public: &[String],
        mover: Option<(usize, &str)>,
    ) -> Vec<Vec<String>> {
        told_seeing(before, after, public, mover, true)
    }

    /// [`told`], counting the squares seen after only when `after_counts`.
    pub fn told_seeing(
        before: &Board,
        after: &Board,
        public: &[String],
        mover: Option<(usize, &str)>,
        after_counts: bool,
    ) -> Vec<Vec<String>> {
        (1..=before.n)
            .map(|seat| {
                let was = before.visible(seat);
                let is: Vec<bool> = if after_counts {
                    after.visible(seat)
                } else {
                    vec![false; was.len()]
                };
                let mut told = public.to_vec();
                if let Some((_, text)) = mover.filter(|(m, _)| *m == seat) {
                    told.push(text.to_string());
                }
                for (i, (old, new)) in before.cells.iter().zip(&after.cells).enumerate() {
                    if old != new && (was[i] || is[i]) {
                        let cell = new.map_or(".".to_string(), |p| p.to_string());
                        told.push(format!("square {} {cell}", Sq::from_index(i)));
                    }
                }
                told.sort();
                told
            })
            .collect()
    }
}

// --- helpers ---------------------------------------------------------------------------

fn seat(n: usize) -> Seat {
    Seat::new(n).unwrap()
}

fn options(players: usize, extra: &[&str]) -> Options {
    let mut words = vec![format!("players={players}")];
    words.extend(extra.iter().map(|w| w.to_string()));
    Options::parse(words.iter().map(String::as_str)).expect("options")
}

/// A game of `players` from `state` (or the start).
fn game(players: usize, state: Option<&str>) -> Box<dyn Game> {
    game_with(&options(players, &[]), state)
}

fn game_with(opts: &Options, state: Option<&str>) -> Box<dyn Game> {
    GameId::MultiChess
        .create(opts, state)
        .unwrap_or_else(|e| panic!("cannot create from {state:?}: {e}"))
}

/// A table of `players` with only the pieces of `spec` (`R1@e7 P2@2:e3`), each seat
/// owning its area, no castling rights, seat 1 to move, unless `spec` says otherwise
/// with `to=`, `plies=`, `owners=`, `castling=` or `out=` (lists as in the state).
fn setup(players: usize, spec: &str) -> Board {
    let mut b = Board::empty(players);
    for word in spec.split_whitespace() {
        if let Some((piece, square)) = word.split_once('@') {
            b.put(square, piece);
            continue;
        }
        let (key, value) = word
            .split_once('=')
            .unwrap_or_else(|| panic!("bad setup word `{word}`"));
        let list = || value.split(',').map(str::to_string);
        match key {
            "to" => b.to_move = value.parse().unwrap(),
            "plies" => b.plies = value.parse().unwrap(),
            "owners" => b.owners = list().map(|o| o.parse().ok()).collect(),
            "castling" => b.castling = list().collect(),
            "out" => b.out = list().map(|s| s.parse().unwrap()).collect(),
            _ => panic!("bad setup word `{word}`"),
        }
    }
    b
}

/// The game for a board built with [`setup`].
fn from_board(b: &Board) -> Box<dyn Game> {
    game(b.n, Some(&b.state()))
}

/// Plays an action that must be accepted.
fn play(g: &mut dyn Game, s: usize, action: &str) -> Played {
    let before = g.state();
    g.play(seat(s), action)
        .unwrap_or_else(|e| panic!("seat {s} `{action}` rejected in `{before}`: {e}"))
}

/// Plays an action that must be rejected; checks that the error is one line and that
/// nothing changed (state, every view, the turn).
fn reject(g: &mut dyn Game, s: usize, action: &str) -> Rejection {
    let (state, turn) = (g.state(), g.turn());
    let views: Vec<String> = Seat::all(g.seat_count())
        .map(|k| g.view(k).text().to_string())
        .collect();
    let err = match g.play(seat(s), action) {
        Ok(p) => panic!("seat {s} `{action}` accepted in `{state}`: {:?}", p.events),
        Err(e) => e,
    };
    let text = err.to_string();
    assert!(
        !text.is_empty() && !text.contains('\n'),
        "one-line error: {text:?}"
    );
    assert_eq!(
        g.state(),
        state,
        "`{action}` was rejected ({text}) but changed the state"
    );
    assert_eq!(g.turn(), turn);
    for k in Seat::all(g.seat_count()) {
        assert_eq!(
            g.view(k).text(),
            views[k.index()],
            "a rejection changed seat {k}'s view"
        );
    }
    err
}

/// What seat `s` was told, sorted.
fn told(p: &Played, s: usize) -> Vec<String> {
    let mut t: Vec<String> = p.seat_events[s - 1]
        .iter()
        .map(|e| e.text().to_string())
        .collect();
    t.sort();
    t
}

/// The fields of a view or state string that hold area `area` (0 public).
fn area_field(view: &str, area: usize) -> &str {
    view.split(' ').nth(area).unwrap()
}

fn legal_set(g: &dyn Game) -> BTreeSet<String> {
    g.legal_actions().into_iter().collect()
}

// --- the fixture cases -----------------------------------------------------------------

/// One line of `fixtures/multichess/cases.txt`, checked.
fn run_case(line: &str) {
    let fields: Vec<&str> = line.split(" | ").collect();
    assert_eq!(fields.len(), 4, "case `{line}`: four fields");
    let players: usize = fields[0].parse().expect("players");
    let board = setup(players, fields[1]);
    let mut g = from_board(&board);
    let mut model = board;
    let actions: Vec<&str> = fields[2].split_whitespace().collect();
    let (last, before) = actions.split_last().expect("an action");
    for a in before {
        let Turn::Act { seat: s, .. } = g.turn() else {
            panic!("case `{line}`: game over")
        };
        play(g.as_mut(), s.number(), a);
        model.apply(s.number(), a);
    }
    let Turn::Act { seat: s, .. } = g.turn() else {
        panic!("case `{line}`: game over")
    };
    let s = s.number();
    let (expected, then) = match fields[3].split_once(" then ") {
        Some((e, t)) => (e, Some(t)),
        None => (fields[3], None),
    };
    let listed = legal_set(g.as_ref()).contains(*last);
    assert_eq!(
        model.moves(s).contains(*last),
        listed,
        "case `{line}`: the model disagrees on `{last}`"
    );
    match expected.split_whitespace().collect::<Vec<_>>().as_slice() {
        ["legal"] | ["truncated", _] => {
            assert!(
                listed,
                "case `{line}`: `{last}` not listed: {:?}",
                g.legal_actions()
            );
            let p = play(g.as_mut(), s, last);
            let want = expected.strip_prefix("truncated ").map(str::to_string);
            assert_eq!(p.taken, want, "case `{line}`: the move taken");
            model.apply(s, last);
            assert_eq!(
                g.state(),
                model.state(),
                "case `{line}`: the model disagrees on the result"
            );
            for word in then.unwrap_or("").split_whitespace() {
                let (piece, square) = word.split_once('@').expect("then <piece>@<square>");
                let sq = Sq::parse(square, players).expect("square");
                let cell = model.at(sq).map_or(".".to_string(), |p| p.to_string());
                assert_eq!(cell, piece, "case `{line}`: on {square} afterwards");
            }
        }
        ["illegal"] => {
            assert!(!listed, "case `{line}`: `{last}` listed");
            let e = reject(g.as_mut(), s, last);
            assert!(matches!(e, Rejection::Illegal { .. }), "case `{line}`: {e:?}");
        }
        ["malformed"] => {
            assert!(!listed, "case `{line}`: `{last}` listed");
            let e = reject(g.as_mut(), s, last);
            assert!(matches!(e, Rejection::Malformed { .. }), "case `{line}`: {e:?}");
        }
        _ => panic!("case `{line}`: bad expectation"),
    }
}

#[test]
fn r_m1_r_m2_r_m4_move_cases_from_the_fixture_file() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/multichess/cases.txt");
    let text = std::fs::read_to_string(&path).expect("read the cases");
    let cases: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect();
    assert!(cases.len() >= 80, "{} cases", cases.len());
    for line in cases {
        run_case(line);
    }
}

// --- R-M1 geometry -----------------------------------------------------------------------

#[test]
fn r_m1_rook_on_e7_reaches_every_private_e_file_through_an_empty_column() {
    for players in 2..=8 {
        let g = from_board(&setup(players, "R1@e7"));
        let legal = legal_set(g.as_ref());
        for k in 1..=players {
            for r in 1..=4 {
                assert!(
                    legal.contains(&format!("e7-{k}:e{r}")),
                    "{players} seats: e7-{k}:e{r}"
                );
            }
        }
        // e8, e6, e5, the other 7 squares of rank 7, then 4 squares per area.
        assert_eq!(legal.len(), 3 + 7 + 4 * players, "{players} seats: {legal:?}");
    }
}

#[test]
fn r_m1_r_m4_blocker_seen_makes_the_slide_illegal_unseen_one_truncates_it() {
    // Seen: seat 1's knight on 2:c2 attacks 2:e3.
    let mut g = from_board(&setup(3, "R1@e7 K1@1:e1 K2@2:h1 K3@3:e1 P2@2:e3 N1@2:c2"));
    let view = g.view(seat(1)).text().to_string();
    assert_eq!(
        area_field(&view, 2),
        "?.?.????/.???P2???/??N1?????/.???.???",
        "2:e3 is seen"
    );
    let legal = legal_set(g.as_ref());
    assert!(legal.contains("e7-2:e3") && legal.contains("e7-2:e4"));
    assert!(!legal.contains("e7-2:e2") && !legal.contains("e7-2:e1"));
    let e = reject(g.as_mut(), 1, "e7-2:e1");
    assert!(matches!(e, Rejection::Illegal { .. }), "{e:?}");

    // Unseen: the same slide is accepted, stops on 2:e3 and captures the pawn.
    let mut g = from_board(&setup(3, "R1@e7 K1@1:e1 K2@2:h1 K3@3:e1 P2@2:e3"));
    let view = g.view(seat(1)).text().to_string();
    assert_eq!(area_field(&view, 2), "????????/????????/????????/????????");
    assert!(legal_set(g.as_ref()).contains("e7-2:e1"));
    let p = play(g.as_mut(), 1, "e7-2:e1");
    assert_eq!(p.taken.as_deref(), Some("e7-2:e3"));
    let b = Board::parse(&g.state(), 3).0;
    assert_eq!(b.at(Sq::parse("2:e3", 3).unwrap()).unwrap().to_string(), "R1");
    assert_eq!(b.at(Sq::parse("2:e1", 3).unwrap()), None);
}

#[test]
fn r_m1_knight_on_d5_reaches_the_same_four_squares_of_every_area() {
    for players in 2..=8 {
        let mut spec = "N1@d5".to_string();
        for k in 1..=players {
            spec.push_str(&format!(" K{k}@{k}:h1"));
        }
        // Something unseen on one landing square changes nothing (R-M4).
        spec.push_str(&format!(" P{players}@{players}:c3"));
        let g = from_board(&setup(players, &spec));
        let knight: BTreeSet<String> = g
            .legal_actions()
            .into_iter()
            .filter(|m| m.starts_with("d5-"))
            .collect();
        let mut want: BTreeSet<String> = ["c7", "e7", "b6", "f6"]
            .iter()
            .map(|s| format!("d5-{s}"))
            .collect();
        for k in 1..=players {
            for s in ["c3", "e3", "b4", "f4"] {
                want.insert(format!("d5-{k}:{s}"));
            }
        }
        assert_eq!(knight, want, "{players} seats");
    }
}

#[test]
fn r_m1_no_move_goes_from_one_private_area_into_another() {
    // Seat 1 with pieces on the edge of its own area and of seat 2's.
    let mut g = from_board(&setup(
        3,
        "K1@1:e1 R1@1:a4 N1@1:c3 Q1@2:d4 B1@2:c3 K2@2:h1 K3@3:h1",
    ));
    for m in g.legal_actions() {
        let (from, to) = m.split_once('-').unwrap();
        let (from, to) = (
            Sq::parse(from, 3).unwrap(),
            Sq::parse(to.split('=').next().unwrap(), 3).unwrap(),
        );
        assert!(from.area == 0 || to.area == 0 || from.area == to.area, "{m}");
    }
    for m in [
        "1:a4-2:a4",
        "1:a4-3:a4",
        "1:a1-2:a1",
        "1:c3-2:d1",
        "1:c3-3:b1",
        "2:d4-1:d4",
        "2:d4-3:d3",
        "2:c3-1:d4",
    ] {
        let e = reject(g.as_mut(), 1, m);
        assert!(
            matches!(
                &e,
                Rejection::Illegal {
                    reason: IllegalReason::MultiChess(
                        MoveError::BetweenPrivateAreas | MoveError::NotLegalOnView
                    ),
                    ..
                }
            ),
            "{m}: {e}"
        );
    }
}

// --- random play against the model ----------------------------------------------------

/// Picks an action for `s` from `legal`, leaning towards captures and raids into
/// foreign areas so that games reach the interesting positions.
fn pick(board: &Board, s: usize, legal: &[String], rng: &mut Rng) -> String {
    let dest = |m: &str| {
        m.split('=')
            .next()?
            .split_once('-')
            .and_then(|(_, to)| Sq::parse(to, board.n))
    };
    let captures: Vec<&String> = legal
        .iter()
        .filter(|m| dest(m).and_then(|d| board.at(d)).is_some_and(|p| p.owner != s))
        .collect();
    let raids: Vec<&String> = legal
        .iter()
        .filter(|m| dest(m).is_some_and(|d| !board.sees_whole(s, d.area)))
        .collect();
    let r = rng.below(100);
    let pool = if r < 20 && !captures.is_empty() {
        captures
    } else if r < 60 && !raids.is_empty() {
        raids
    } else {
        legal.iter().collect()
    };
    pool[rng.below(pool.len())].clone()
}

/// Plays a seeded game of `players` from the start for at most `plies` plies,
/// checking at every ply, against the model: the legal actions (R-M1, R-M4), the
/// views (R-M3), the state after the move (R-M4 truncation, R-M5 elimination), the
/// omniscient events and `taken`, what each seat is told (R-M7), turns and the result;
/// and that the state string round-trips. Without `check`, it only plays.
fn random_play(players: usize, seed: u64, plies: usize, check: bool) -> Run {
    let mut g = game(players, None);
    let mut rng = Rng::new(seed);
    let mut run = Run {
        states: vec![g.state()],
        truncated: 0,
        passes: 0,
        eliminations: 0,
    };
    for _ in 0..plies {
        let state = g.state();
        let board = Board::parse(&state, players).0;
        if !check {
            let Turn::Act { seat: mover, .. } = g.turn() else {
                break;
            };
            let action = pick(&board, mover.number(), &g.legal_actions(), &mut rng);
            play(g.as_mut(), mover.number(), &action);
            run.states.push(g.state());
            continue;
        }
        assert_eq!(board.state(), state, "the model prints the state back");
        let copy = game(players, Some(&state));
        assert_eq!(copy.state(), state, "state round trip");
        for k in 1..=players {
            let view = g.view(seat(k)).text().to_string();
            assert_eq!(view, board.view(k), "R-M3: seat {k}'s view of `{state}`");
            assert_eq!(copy.view(seat(k)).text(), view);
        }
        let Turn::Act { seat: mover, .. } = g.turn() else {
            let outcome = g.outcome().expect("over means an outcome");
            assert_eq!(board.remaining().len(), 1, "over with seats left: `{state}`");
            assert_eq!(outcome.reason, EndReason::Win);
            let mut places = vec![1u8; players];
            for (k, out) in board.out.iter().rev().enumerate() {
                places[out - 1] = k as u8 + 2;
            }
            assert_eq!(outcome.places, places, "R-M5: reverse elimination order");
            assert!(g.legal_actions().is_empty());
            break;
        };
        let s = mover.number();
        assert_eq!(s, board.to_move);
        assert!(board.remaining().len() > 1 && g.outcome().is_none());
        let legal = g.legal_actions();
        let set: BTreeSet<String> = legal.iter().cloned().collect();
        assert_eq!(set.len(), legal.len(), "no action listed twice");
        assert_eq!(legal, copy.legal_actions());
        let expected = board.moves(s);
        if expected.is_empty() {
            assert_eq!(
                legal,
                ["pass"],
                "R-M6: a seat without a move passes, in `{state}`"
            );
            assert_eq!(g.forced_action().as_deref(), Some("pass"));
        } else {
            assert_eq!(set, expected, "legal actions of seat {s} in `{state}`");
            assert_eq!(g.forced_action(), None);
        }
        let action = pick(&board, s, &legal, &mut rng);
        run.passes += usize::from(action == "pass");
        pawns_stay_in_sight(&board, s, &action);
        let played = play(g.as_mut(), s, &action);
        let mut after = board.clone();
        let applied = after.apply(s, &action);
        assert_eq!(g.state(), after.state(), "seat {s} `{action}` in `{state}`");
        assert_eq!(played.events, applied.events, "`{action}` in `{state}`");
        assert_eq!(played.taken, applied.taken, "`{action}` in `{state}`");
        let want = model::told(
            &board,
            &after,
            &applied.public,
            applied.mover.as_deref().map(|m| (s, m)),
        );
        for k in 1..=players {
            assert_eq!(
                told(&played, k),
                want[k - 1],
                "R-M7: seat {k} told after `{action}` in `{state}`"
            );
        }
        run.truncated += usize::from(played.taken.is_some());
        run.eliminations += after.out.len() - board.out.len();
        run.states.push(g.state());
    }
    run
}

/// protocol.md: a pawn's move never meets an unseen square (its seat sees every square
/// of the move), so only sliders are ever stopped short.
fn pawns_stay_in_sight(board: &Board, s: usize, action: &str) {
    let Some((from, to)) = action.split('=').next().unwrap().split_once('-') else {
        return;
    };
    let (from, to) = (Sq::parse(from, board.n).unwrap(), Sq::parse(to, board.n).unwrap());
    if board.at(from).is_some_and(|p| p.kind == 'P') {
        let seen = board.visible(s);
        let ctx = from.area.max(to.area).max(1);
        let mut path = vec![to];
        if (to.rank - from.rank).abs() == 2 {
            path.extend(from.step(0, 1, ctx));
        }
        for sq in path {
            assert!(
                seen[sq.index()],
                "seat {s}'s pawn move `{action}` crosses unseen {sq}"
            );
        }
    }
}

/// What a seeded random game went through.
struct Run {
    /// Every state, from the start.
    states: Vec<String>,
    /// Slides stopped by an unseen piece (R-M4).
    truncated: usize,
    /// Forced passes (R-M6).
    passes: usize,
    /// Seats eliminated (R-M5).
    eliminations: usize,
}

/// Seeded games of `players` until `count` states have been seen.
fn random_states(players: usize, count: usize, first_seed: u64) -> Vec<String> {
    let mut states = Vec::new();
    let mut seed = first_seed;
    while states.len() < count {
        states.extend(random_play(players, seed, 400, false).states);
        seed += 1;
    }
    states
}

#[test]
fn r_m1_r_m4_r_m5_r_m7_random_play_agrees_with_an_independent_model() {
    let (mut states, mut truncated, mut passes, mut eliminations) = (0, 0, 0, 0);
    for players in 2..=8 {
        for seed in 0..2 {
            let run = random_play(players, 100 * players as u64 + seed, 400, true);
            states += run.states.len();
            truncated += run.truncated;
            passes += run.passes;
            eliminations += run.eliminations;
        }
    }
    // The games went where the rules are interesting.
    eprintln!("{states} states, {truncated} truncated slides, {passes} passes, {eliminations} eliminations");
    assert!(states > 2500, "{states} states");
    assert!(truncated >= 20, "{truncated} truncated slides");
    assert!(eliminations >= 20, "{eliminations} eliminations");
}

#[test]
fn state_strings_round_trip_on_random_positions() {
    let mut n = 0;
    for players in [2, 4, 6, 7] {
        for state in random_states(players, 300, 7000 + players as u64) {
            let g = game(players, Some(&state));
            assert_eq!(g.state(), state);
            let again = game(players, Some(&g.state()));
            assert_eq!(again.state(), state);
            assert_eq!(Board::parse(&state, players).0.state(), state);
            n += 1;
        }
    }
    assert!(n >= 1200);
    // Bad strings get one error listing every problem.
    let start = game(3, None).state();
    let bad = start.replacen("R1", "X1", 1).replace(" 1 0 ", " 9 x ");
    let err = GameId::MultiChess
        .create(&options(3, &[]), Some(&bad))
        .unwrap_err()
        .to_string();
    assert!(!err.contains('\n'), "{err}");
    for what in ["`X`", "to-move `9`", "plies `x`"] {
        assert!(err.contains(what), "`{what}` not named in: {err}");
    }
    let out_with_pieces = format!("{} 2", start.strip_suffix(" -").unwrap());
    let err = GameId::MultiChess
        .create(&options(3, &[]), Some(&out_with_pieces))
        .unwrap_err()
        .to_string();
    assert!(err.contains("out"), "{err}");
    assert!(
        GameId::MultiChess.create(&options(4, &[]), Some(&start)).is_err(),
        "3-seat state in a 4-seat game"
    );
    // Out seats own nothing and go out once (R-M5, R-F1).
    for (spec, what) in [
        ("K1@1:e1 K3@3:e1 owners=1,1,3 out=2,2", "listed twice"),
        ("K1@1:e1 K3@3:e1 owners=1,2,3 out=2", "owns a private area"),
        ("K1@1:e1 K3@3:e1 owners=1,1,3 out=2 to=2", "to move"),
        ("K1@1:e1 K2@2:e1 K3@3:e1 owners=1,1,3 out=2", "owns pieces"),
    ] {
        let state = setup(3, spec).state();
        let err = GameId::MultiChess
            .create(&options(3, &[]), Some(&state))
            .unwrap_err()
            .to_string();
        assert!(err.contains(what) && !err.contains('\n'), "`{spec}`: {err}");
    }
}

// --- R-M3 visibility -------------------------------------------------------------------------

/// A random piece for seat `owner`, never a king.
fn random_piece(owner: usize, rng: &mut Rng) -> String {
    let kinds = ['Q', 'R', 'B', 'N', 'P'];
    format!("{}{owner}", kinds[rng.below(kinds.len())])
}

/// Changes some of the squares `hidden` marks (never a king, never to `seat`'s own
/// piece or a piece of a seat that is out) and the castling rights of areas `seat`
/// does not see whole.
fn change_unseen(board: &Board, seat: usize, hidden: &[bool], rng: &mut Rng) -> Board {
    let mut b = board.clone();
    let others: Vec<usize> = board.remaining().into_iter().filter(|&s| s != seat).collect();
    let squares: Vec<usize> = (0..hidden.len()).filter(|&i| hidden[i]).collect();
    if squares.is_empty() {
        return b;
    }
    for _ in 0..1 + rng.below(6) {
        let i = squares[rng.below(squares.len())];
        if b.cells[i].is_some_and(|p| p.kind == 'K') {
            continue;
        }
        let remove = others.is_empty() || rng.below(3) == 0;
        b.cells[i] = if remove {
            None
        } else {
            model::Pc::parse(&random_piece(others[rng.below(others.len())], rng))
        };
    }
    for a in 1..=b.n {
        if !b.sees_whole(seat, a) && rng.below(2) == 0 {
            b.castling[a - 1] = ["KQ", "K", "Q", "-"][rng.below(4)].to_string();
        }
    }
    b
}

/// For every seat still playing in `state`: its view is the model's (R-M3); changing
/// squares it cannot see (as its own view marks them) changes neither its view nor
/// its legal actions with it to move; changing a square it sees changes its view.
fn check_invariance(players: usize, state: &str, rng: &mut Rng) -> usize {
    let board = Board::parse(state, players).0;
    let g = game(players, Some(state));
    let mut changed = 0;
    for s in board.remaining() {
        let view = g.view(seat(s)).text().to_string();
        assert_eq!(view, board.view(s), "R-M3: seat {s}'s view of `{state}`");
        let (shown, hidden) = Board::parse(&view, players);
        for (i, &h) in hidden.iter().enumerate() {
            // Independent of both: what the view shows is the truth, and only the
            // public area and the areas a seat sees whole are shown in full.
            if !h {
                assert_eq!(shown.cells[i], board.cells[i]);
            } else {
                assert!(!board.sees_whole(s, Sq::from_index(i).area));
                assert!(
                    board.cells[i].is_none_or(|p| p.owner != s),
                    "seat {s}'s own piece hidden"
                );
            }
        }
        let modified = change_unseen(&board, s, &hidden, rng);
        if modified != board {
            changed += 1;
        }
        let other = game(players, Some(&modified.state()));
        assert_eq!(
            other.view(seat(s)).text(),
            view,
            "seat {s}'s view changed with unseen squares:\n`{state}`\n`{}`",
            modified.state()
        );
        let (mut b1, mut b2) = (board.clone(), modified.clone());
        b1.to_move = s;
        b2.to_move = s;
        let (g1, g2) = (from_board(&b1), from_board(&b2));
        assert_eq!(
            g1.legal_actions(),
            g2.legal_actions(),
            "seat {s}'s legal actions:\n`{}`",
            b2.state()
        );
        if s == board.to_move {
            assert_eq!(g.legal_actions(), other.legal_actions());
        }
        // The control: a square it sees (not a king) changed shows in its view.
        let seen: Vec<usize> = (0..hidden.len())
            .filter(|&i| !hidden[i] && board.cells[i].is_none_or(|p| p.kind != 'K'))
            .collect();
        let i = seen[rng.below(seen.len())];
        let mut control = board.clone();
        control.cells[i] = match board.cells[i] {
            Some(_) => None,
            None => model::Pc::parse(&random_piece(board.remaining()[0], rng)),
        };
        let control = game(players, Some(&control.state()));
        assert_ne!(
            control.view(seat(s)).text(),
            view,
            "changing {} went unseen",
            Sq::from_index(i)
        );
    }
    changed
}

#[test]
fn r_m3_views_follow_the_rule_and_ignore_every_unseen_square() {
    let mut rng = Rng::new(33);
    let (mut states, mut changed) = (0, 0);
    let mut hidden_foreign_pieces = 0;
    for (players, count) in [(2, 600), (3, 600), (5, 500), (8, 400)] {
        for state in random_states(players, count, 1000 * players as u64) {
            changed += check_invariance(players, &state, &mut rng);
            states += 1;
            let b = Board::parse(&state, players).0;
            hidden_foreign_pieces += b
                .remaining()
                .iter()
                .map(|&s| {
                    let seen = b.visible(s);
                    (0..seen.len())
                        .filter(|&i| !seen[i] && b.cells[i].is_some())
                        .count()
                })
                .sum::<usize>();
        }
    }
    eprintln!("{states} states, {changed} changed, {hidden_foreign_pieces} hidden pieces");
    assert!(states >= 2000, "{states} states");
    assert!(changed >= 5000, "{changed} changed states");
    assert!(hidden_foreign_pieces > 10_000);
}

#[test]
fn r_m3_the_view_example_of_protocol_md() {
    let mut g = game(3, None);
    let moves = [
        "1:g1-1:f3",
        "2:a2-2:a3",
        "3:a2-3:a3",
        "1:f3-e5",
        "2:a3-2:a4",
        "3:a3-3:a4",
        "e5-2:d3",
    ];
    for (i, m) in moves.iter().enumerate() {
        play(g.as_mut(), i % 3 + 1, m);
    }
    assert_eq!(
        g.view(seat(1)).text(),
        "......../......../......../........ ......../......../P1P1P1P1P1P1P1P1/R1N1B1Q1K1B1.R1 \
         ?.???.??/???N1????/?P2???P2??/??B2?K2??? ????????/????????/????????/???????? 2 7 1,2,3 KQ,?,? -"
    );
}

#[test]
fn r_m3_a_piece_in_a_foreign_area_sees_what_it_attacks_and_nothing_more() {
    // Seat 1's rook on 2:a2 sees up to 2:a4 (and the pawn there), along rank 2 up to
    // 2:d2; its knight on 2:g3 sees 2:e4, 2:e2, 2:f1, 2:h1 (and public f5, h5).
    let b = setup(
        3,
        "R1@2:a2 P2@2:a4 P2@2:d2 P2@2:h2 N1@2:g3 K2@2:e1 K1@1:e1 K3@3:e1 Q1@d5",
    );
    let g = from_board(&b);
    let view = g.view(seat(1)).text().to_string();
    assert_eq!(area_field(&view, 2), "P2???.???/.?????N1?/R1..P2.???/.????.?.");
    assert_eq!(
        area_field(&view, 3),
        "????????/????????/????????/????????",
        "a queen on d5 shows nothing of 3:"
    );
    assert_eq!(view, b.view(1));
    assert_eq!(
        area_field(g.view(seat(3)).text(), 2),
        "????????/????????/????????/????????"
    );
    // Seat 2 sees its own area whole, and the castling rights of no other area.
    let v2 = g.view(seat(2)).text().to_string();
    assert!(!area_field(&v2, 2).contains('?'));
    assert_eq!(v2.split(' ').nth(7).unwrap(), "?,-,?");
}

// --- R-M4 truncation -------------------------------------------------------------------------

#[test]
fn r_m4_truncated_slide_is_played_recorded_and_told() {
    let mut g = from_board(&setup(3, "R1@e7 K1@1:e1 K2@2:h1 K3@3:e1 P2@2:e3"));
    let p = play(g.as_mut(), 1, "e7-2:e1");
    assert_eq!(p.taken.as_deref(), Some("e7-2:e3"));
    assert_eq!(p.events, ["move 1 e7-2:e3 requested e7-2:e1 capture 2:e3 P2"]);
    assert_eq!(
        told(&p, 1),
        ["move e7-2:e3", "moved 1", "square 2:e3 R1", "square e7 ."]
    );
    assert_eq!(told(&p, 2), ["moved 1", "square 2:e3 R1", "square e7 ."]);
    assert_eq!(told(&p, 3), ["moved 1", "square e7 ."]);
    for k in 1..=3 {
        assert!(
            p.seat_events[k - 1].iter().all(|e| !e.text().contains("2:e1")),
            "the request is the mover's own"
        );
    }
    // Now seat 1's rook sees its rays inside area 2.
    let view = g.view(seat(1)).text().to_string();
    assert_eq!(area_field(&view, 2), "????.???/....R1.../????.???/????.???");
}

/// A match of `players` seats from `state` where seat 1 is the scripted bot playing
/// `moves` and the other seats are greedy built-in agents; returns the record.
fn scripted_match(dir: &Path, players: usize, state: &str, moves: &[&str], seed: u64) -> PathBuf {
    let record = dir.join(format!("scripted-{seed}.jsonl"));
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/bots/scripted.sh");
    let mut words = vec!["sh".to_string(), script.to_string_lossy().into_owned()];
    words.extend(moves.iter().map(|m| m.to_string()));
    let out = referee_in(dir)
        .args([
            "match",
            "--game",
            "multichess",
            "-o",
            &format!("players={players}"),
            "--state",
            state,
        ])
        .args([
            "--agent",
            &shell_words::join(words),
            "--seed",
            &seed.to_string(),
            "-q",
        ])
        .arg("--log-dir")
        .arg(dir.join(format!("logs-{seed}")))
        .arg("--record")
        .arg(&record)
        .output()
        .expect("run referee match");
    assert_eq!(out.status.code(), Some(0), "match failed: {}", text(&out.stderr));
    record
}

#[test]
fn r_m4_taken_move_in_a_match_record_is_verified_and_an_edit_is_caught() {
    let dir = TempDir::new().unwrap();
    // Seat 1's rook slides for 2:e1 and meets seat 2's unseen king on 2:e4.
    let state = setup(2, "R1@e7 K1@1:e1 K2@2:e4 P2@2:a2").state();
    let rec = scripted_match(dir.path(), 2, &state, &["e7-2:e1"], 5);
    let lines = record_lines(&rec);
    let action = &lines[1];
    assert_eq!(action["action"], "e7-2:e1");
    assert_eq!(action["taken"], "e7-2:e4");
    assert_eq!(
        action["events"][0],
        "move 1 e7-2:e4 requested e7-2:e1 capture 2:e4 K2"
    );
    assert_eq!(action["events"][1], "eliminate 2 by 1");
    assert_eq!(places(&lines), [1, 2]);
    assert_verifies(&rec);
    // The mover was told the move taken, and nobody the move requested.
    let t1 = std::fs::read_to_string(dir.path().join("logs-5/seat1.transcript")).unwrap();
    assert!(t1.lines().any(|l| l == "> event move e7-2:e4"), "{t1}");
    assert!(!t1.contains("> event move e7-2:e1"));
    let t2 = std::fs::read_to_string(dir.path().join("logs-5/seat2.transcript")).unwrap();
    assert!(!t2.contains("2:e1"), "{t2}");

    // Re-sealed unchanged, the record still verifies (the re-sealing is sound) ...
    let same = dir.path().join("same.jsonl");
    reseal(&rec, &same, |_| {});
    assert_verifies(&same);
    // ... and with `taken` edited or dropped, the hash chain is fine but verify fails.
    for (name, taken) in [("edited", Some("e7-2:e1")), ("dropped", None)] {
        let bad = dir.path().join(format!("{name}.jsonl"));
        reseal(&rec, &bad, |lines| {
            for l in lines {
                if let Line::Action(a) = l {
                    a.taken = taken.map(str::to_string);
                }
            }
        });
        let (code, _, stderr) = verify(&bad);
        assert_eq!(code, 1, "{name}: {stderr}");
        assert!(
            stderr.contains("line 2") && stderr.contains("taken"),
            "{name}: {stderr}"
        );
        assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
    }
}

// --- R-M5 elimination, R-M6 ----------------------------------------------------------------

#[test]
fn r_m5_king_capture_hands_over_every_piece_and_the_area_and_play_goes_on() {
    let b = setup(
        3,
        "Q1@e7 K1@1:e1 K2@2:e4 R2@2:a1 P2@2:h2 N2@f6 R2@3:a1 N2@1:b3 R3@2:b2 K3@3:e1 P3@3:h2",
    );
    let mut g = from_board(&b);
    assert!(area_field(g.view(seat(1)).text(), 2).contains('?'));
    let p = play(g.as_mut(), 1, "e7-2:e4");
    assert_eq!(p.events, ["move 1 e7-2:e4 capture 2:e4 K2", "eliminate 2 by 1"]);
    assert_eq!(p.taken, None);
    let after = Board::parse(&g.state(), 3).0;
    assert_eq!(after.owners, [Some(1), Some(1), Some(3)]);
    assert_eq!(after.out, [2]);
    assert!(
        after.cells.iter().flatten().all(|p| p.owner != 2),
        "no piece of seat 2 is left"
    );
    for (square, piece) in [
        ("2:a1", "R1"),
        ("2:h2", "P1"),
        ("f6", "N1"),
        ("3:a1", "R1"),
        ("1:b3", "N1"),
        ("2:b2", "R3"),
    ] {
        assert_eq!(
            after.at(Sq::parse(square, 3).unwrap()).unwrap().to_string(),
            piece,
            "{square}"
        );
    }
    // Seat 1 now sees area 2 whole, its castling rights included.
    let v1 = g.view(seat(1)).text().to_string();
    assert_eq!(area_field(&v1, 2), "....Q1.../......../.R3.....P1/R1.......");
    assert!(!area_field(&v1, 2).contains('?'));
    assert_eq!(v1.split(' ').nth(7).unwrap(), "-,-,?");
    // Everybody is told of the elimination; seat 3 sees the pieces change hands where it looks.
    for k in 1..=3 {
        assert!(told(&p, k).contains(&"eliminate 2 by 1".to_string()), "seat {k}");
    }
    let t3 = told(&p, 3);
    assert!(
        t3.contains(&"square f6 N1".to_string()) && t3.contains(&"square 3:a1 R1".to_string()),
        "{t3:?}"
    );
    // Its rook on 2:b2 sees along rank 2 to 2:h2, not 2:a1.
    assert!(t3.contains(&"square 2:h2 P1".to_string()) && !t3.iter().any(|e| e.starts_with("square 2:a1")));
    // The game goes on, skipping seat 2.
    assert_eq!(g.outcome(), None);
    assert_eq!(
        g.turn(),
        Turn::Act {
            seat: seat(3),
            kind: ActionKind::Move
        }
    );
    let e = reject(g.as_mut(), 2, "2:a1-2:a2");
    assert!(e.to_string().contains("seat 2 is out"), "{e}");
    play(g.as_mut(), 3, "3:h2-3:h3");
    assert_eq!(
        g.turn(),
        Turn::Act {
            seat: seat(1),
            kind: ActionKind::Move
        }
    );
    let e = reject(g.as_mut(), 2, "pass");
    assert!(e.to_string().contains("seat 2 is out"), "{e}");
    // Seat 1's rook inherited on 3:a1 takes seat 3's king: last seat standing.
    let p = play(g.as_mut(), 1, "3:a1-3:e1");
    assert_eq!(p.events, ["move 1 3:a1-3:e1 capture 3:e1 K3", "eliminate 3 by 1"]);
    assert_eq!(g.turn(), Turn::Over);
    let outcome = g.outcome().unwrap();
    assert_eq!(outcome.places, [1, 3, 2], "places in reverse elimination order");
    assert_eq!(outcome.reason, EndReason::Win);
    assert_eq!(outcome.protocol_text(), "places 1 3 2 reason win");
    assert!(matches!(reject(g.as_mut(), 1, "e7-e6"), Rejection::GameOver));
    assert!(g.legal_actions().is_empty());
}

#[test]
fn r_m5_places_follow_reverse_elimination_order_with_five_seats() {
    // Seats 4 and 2 went out (in that order); seat 5 takes seat 3's king, then seat
    // 1's; seat 5 wins, 1 is second, 3 third, 2 fourth, 4 fifth.
    let b = setup(
        5,
        "K1@1:e1 K3@3:e1 K5@5:e1 R5@3:a1 R5@1:a1 owners=1,3,3,1,5 out=4,2 to=5 plies=40",
    );
    let mut g = from_board(&b);
    play(g.as_mut(), 5, "3:a1-3:e1");
    assert_eq!(
        g.turn(),
        Turn::Act {
            seat: seat(1),
            kind: ActionKind::Move
        }
    );
    play(g.as_mut(), 1, "1:e1-1:f1");
    play(g.as_mut(), 5, "1:a1-1:f1");
    let outcome = g.outcome().unwrap();
    assert_eq!(outcome.places, [2, 4, 3, 5, 1]);
    assert_eq!(outcome.reason, EndReason::Win);
}

#[test]
fn r_m6_the_ply_limit_draws_with_the_remaining_seats_sharing_first_place() {
    let b = setup(3, "K1@1:e1 K3@3:e1 R1@2:a1 owners=1,1,3 out=2 plies=9");
    let mut g = game_with(&options(3, &["max-plies=10"]), Some(&b.state()));
    assert_eq!(g.outcome(), None);
    play(g.as_mut(), 1, "1:e1-1:e2");
    assert_eq!(g.turn(), Turn::Over);
    let outcome = g.outcome().unwrap();
    assert_eq!(outcome.places, [1, 2, 1]);
    assert_eq!(outcome.reason, EndReason::MaxPlies);
    assert_eq!(outcome.protocol_text(), "places 1 2 1 reason max-plies");
    assert!(matches!(reject(g.as_mut(), 3, "3:e1-3:e2"), Rejection::GameOver));
    // With nobody out, everybody shares first place.
    let mut g = game_with(&options(4, &["max-plies=4"]), None);
    for (s, m) in [
        (1, "1:a2-1:a3"),
        (2, "2:a2-2:a3"),
        (3, "3:a2-3:a3"),
        (4, "4:a2-4:a3"),
    ] {
        play(g.as_mut(), s, m);
    }
    assert_eq!(g.outcome().unwrap().places, [1, 1, 1, 1]);
}

#[test]
fn r_m6_a_seat_without_a_legal_move_on_its_view_passes() {
    // Seat 2's only piece, a pawn on 2:a4, is blocked by seat 1's rook on a5.
    let b = setup(3, "K1@1:e1 R1@a5 P2@2:a4 K3@3:e1 to=2 plies=3");
    let mut g = from_board(&b);
    assert_eq!(g.legal_actions(), ["pass"]);
    assert_eq!(g.forced_action().as_deref(), Some("pass"));
    assert!(matches!(
        reject(g.as_mut(), 2, "2:a4-a5"),
        Rejection::Illegal { .. }
    ));
    let p = play(g.as_mut(), 2, "pass");
    assert_eq!(p.events, ["pass 2"]);
    // R-M7a: only the passing seat is told it passed.
    assert_eq!(told(&p, 2), ["moved 2", "pass 2"]);
    for k in [1, 3] {
        assert_eq!(told(&p, k), ["moved 2"]);
    }
    assert_eq!(g.plies(), 4);
    assert_eq!(
        g.turn(),
        Turn::Act {
            seat: seat(3),
            kind: ActionKind::Move
        }
    );
    // A seat with a move may not pass.
    let e = reject(g.as_mut(), 3, "pass");
    assert!(matches!(e, Rejection::Illegal { .. }), "{e}");
}

// --- R-M7a forced passes -----------------------------------------------------------------------

/// What seat `s` was sent after `p`: its events in order, exactly as sent, and its view.
fn sent(p: &Played, g: &dyn Game, s: usize) -> (Vec<String>, String) {
    let events = p.seat_events[s - 1]
        .iter()
        .map(|e| e.text().to_string())
        .collect();
    (events, g.view(seat(s)).text().to_string())
}

/// Seat 2's pawn on 2:a4 is blocked by seat 1's rook on a5, so with nothing else seat 2
/// must pass; `more` adds pieces (which may give it a move).
fn pass_table(more: &str) -> Board {
    setup(3, &format!("K1@1:e1 R1@a5 P2@2:a4 K3@3:e1 {more} to=2 plies=3"))
}

#[test]
fn r_m7a_a_forced_pass_reads_like_a_move_the_seat_sees_none_of() {
    let mut passed = from_board(&pass_table(""));
    assert_eq!(passed.forced_action().as_deref(), Some("pass"));
    // The same table but for what seat 1 cannot see: a pawn of seat 2 in seat 2's
    // area that can step, or a knight of seat 2 in seat 3's area that can capture.
    // Seat 3 sees the pawn's area no more than seat 1 does.
    for (more, action, blind) in [
        ("P2@2:b2", "2:b2-2:b3", &[1, 3][..]),
        ("N2@3:c3 P3@3:b1", "3:c3-3:b1", &[1][..]),
    ] {
        let mut moved = from_board(&pass_table(more));
        for &k in blind {
            assert_eq!(
                moved.view(seat(k)).text(),
                passed.view(seat(k)).text(),
                "the two tables differ only in what seat {k} cannot see"
            );
        }
        assert_eq!(moved.forced_action(), None, "`{more}` gives seat 2 a move");
        let mut pass_game = passed.boxed_clone();
        let p = play(pass_game.as_mut(), 2, "pass");
        let m = play(moved.as_mut(), 2, action);
        assert_ne!(p.events, m.events, "the record tells them apart");
        for &k in blind {
            let (told_pass, view_pass) = sent(&p, pass_game.as_ref(), k);
            assert_eq!(told_pass, ["moved 2"], "seat {k} after the pass");
            assert_eq!(
                (told_pass, view_pass),
                sent(&m, moved.as_ref(), k),
                "R-M7a: seat {k} tells the pass from `{action}`"
            );
        }
    }
    // The pass itself, for the game played on.
    let p = play(passed.as_mut(), 2, "pass");
    assert_eq!(p.events, ["pass 2"], "the record keeps the pass");
    assert_eq!(passed.plies(), 4, "R-M6a");
}

#[test]
fn r_m7a_the_passing_seat_knows_and_a_seat_seeing_the_move_tells_it_apart() {
    let mut passed = from_board(&pass_table(""));
    let p = play(passed.as_mut(), 2, "pass");
    assert_eq!(sent(&p, passed.as_ref(), 2).0, ["moved 2", "pass 2"]);
    // Seat 1's knight on 2:a1 sees 2:b3 and 2:c2: it sees the pawn arrive; seat 3,
    // with nothing in area 2, does not.
    let mut moved = from_board(&pass_table("P2@2:b2 N1@2:a1"));
    let m = play(moved.as_mut(), 2, "2:b2-2:b3");
    assert_eq!(sent(&m, moved.as_ref(), 1).0, ["moved 2", "square 2:b3 P2"]);
    assert_eq!(sent(&m, moved.as_ref(), 3).0, ["moved 2"]);
    assert_eq!(
        sent(&m, moved.as_ref(), 2).0,
        ["moved 2", "move 2:b2-2:b3", "square 2:b2 .", "square 2:b3 P2"]
    );
    // A move in the public area: everybody sees it.
    let mut public = from_board(&pass_table("N2@h8"));
    let m = play(public.as_mut(), 2, "h8-g6");
    for k in [1, 3] {
        assert_eq!(told(&m, k), ["moved 2", "square g6 N2", "square h8 ."]);
    }
}

// --- R-F1 ------------------------------------------------------------------------------------

#[test]
fn r_f1_forfeit_with_three_seats_empties_the_area_which_everybody_then_sees() {
    let b = setup(
        3,
        "K1@1:e1 N1@2:c1 K2@2:e1 P2@2:a2 N2@f6 N2@1:c3 Q3@2:d3 K3@3:e1 castling=-,KQ,- to=3",
    );
    let mut g = from_board(&b);
    let p = g.forfeit(seat(2), ForfeitKind::Crash);
    assert_eq!(p.events, ["forfeit 2 crash", "remove 2 4"]);
    let after = Board::parse(&g.state(), 3).0;
    assert!(after.cells.iter().flatten().all(|p| p.owner != 2));
    assert_eq!(after.owners, [Some(1), None, Some(3)]);
    assert_eq!(after.out, [2]);
    for k in [1, 3] {
        let v = g.view(seat(k)).text().to_string();
        assert_eq!(area_field(&v, 2), "......../...Q3..../......../..N1.....");
        assert_eq!(v, after.view(k));
        assert_eq!(v.split(' ').nth(7).unwrap().split(',').nth(1), Some("-"));
    }
    // Seat 3 is told what it saw change, and that seat 2 is gone.
    let t3 = told(&p, 3);
    assert_eq!(t3, ["forfeit 2 crash", "remove 2 1", "square f6 ."]);
    // R-M7c: area 2, which seat 3 never saw, reaches it through its view (above),
    // never as a change: `square 2:e1 .` would tell that seat 2's king stood there.
    // R-M7b: seat 3 never saw the knight on 1:c3 and does not count it.
    assert!(
        !t3.iter().any(|e| e.contains("2:") || e.contains("1:c3")),
        "{t3:?}"
    );
    // Seat 1 saw three of the four leave, 2:a2 among them (in its sight before the
    // forfeit); of the rest of area 2 it learns through its view.
    assert_eq!(
        told(&p, 1),
        [
            "forfeit 2 crash",
            "remove 2 3",
            "square 1:c3 .",
            "square 2:a2 .",
            "square f6 ."
        ]
    );
    // Play goes on among seats 1 and 3, into the unowned area with a full view.
    assert_eq!(g.outcome(), None);
    assert_eq!(
        g.turn(),
        Turn::Act {
            seat: seat(3),
            kind: ActionKind::Move
        }
    );
    let legal = legal_set(g.as_ref());
    assert!(legal.contains("2:d3-2:c2") && legal.contains("2:d3-2:d1") && legal.contains("2:d3-2:a3"));
    play(g.as_mut(), 3, "2:d3-2:c2");
    assert!(reject(g.as_mut(), 2, "pass").to_string().contains("out"));
    // A second forfeit ends it; the later forfeit places better than the earlier.
    let p = g.forfeit(seat(1), ForfeitKind::Timeout);
    assert_eq!(p.events, ["forfeit 1 timeout", "remove 1 2"]);
    let outcome = g.outcome().unwrap();
    assert_eq!(outcome.places, [2, 3, 1]);
    assert_eq!(
        outcome.reason,
        EndReason::Forfeit {
            seat: seat(1),
            kind: ForfeitKind::Timeout
        }
    );
}

#[test]
fn r_f1_r_m7b_a_removal_tells_a_seat_nothing_of_pieces_it_sees_neither_before_nor_after() {
    // Seat 2 forfeits. Seat 1 sees its own area, the public area and area 2 (open to
    // all after the forfeit); in area 3 its rook on 3:a1 sees 3:b1 and the bishop on
    // 3:c1 (then, with the bishop gone, up to the king on 3:e1) and 3:a2, 3:a3; it
    // sees nothing of area 4. `hidden` adds pieces of seat 2 only where seat 1 sees
    // nothing before or after.
    let base = "K1@1:e1 R1@3:a1 K2@2:e1 P2@2:b2 N2@d5 N2@1:c3 B2@3:c1 P3@3:a3 K3@3:e1 K4@4:e1";
    let hidden = "N2@3:h4 R2@3:f2 Q2@4:d4 P2@4:a2";
    let forfeit = |spec: &str| {
        let mut g = from_board(&setup(4, spec));
        let before = g.view(seat(1)).text().to_string();
        let p = g.forfeit(seat(2), ForfeitKind::Crash);
        (before, p, g)
    };
    let (before_a, a, ga) = forfeit(base);
    let (before_b, b, gb) = forfeit(&format!("{base} {hidden}"));
    assert_eq!(
        before_a, before_b,
        "the tables differ only in what seat 1 cannot see"
    );
    assert_eq!(a.events, ["forfeit 2 crash", "remove 2 5"]);
    assert_eq!(
        b.events,
        ["forfeit 2 crash", "remove 2 9"],
        "the record counts every piece"
    );
    assert_eq!(
        sent(&a, ga.as_ref(), 1),
        sent(&b, gb.as_ref(), 1),
        "R-M7b: seat 1's events and view do not depend on the pieces it never saw"
    );
    // The control: seat 1 is told every piece it saw leave, and counts them; the
    // pieces in area 2, which it sees only once the forfeit opens it, are not
    // changes to it (R-M7c).
    assert_eq!(
        told(&a, 1),
        [
            "forfeit 2 crash",
            "remove 2 3",
            "square 1:c3 .",
            "square 3:c1 .",
            "square d5 .",
        ]
    );
    assert_eq!(
        area_field(gb.view(seat(1)).text(), 3),
        "????????/P3???????/.???????/R1...K3???"
    );
    // Seats 3 and 4 see their own areas: they are told the extra pieces there.
    for (k, extra) in [
        (3, ["square 3:f2 .", "square 3:h4 ."]),
        (4, ["square 4:a2 .", "square 4:d4 ."]),
    ] {
        let (ta, tb) = (told(&a, k), told(&b, k));
        for e in extra {
            assert!(
                !ta.contains(&e.to_string()) && tb.contains(&e.to_string()),
                "seat {k}: {tb:?}"
            );
        }
        let count = |t: &[String]| {
            t.iter()
                .find_map(|e| e.strip_prefix("remove 2 ")?.parse::<usize>().ok())
        };
        assert_eq!(count(&tb), count(&ta).map(|n| n + 2), "seat {k}: {ta:?} {tb:?}");
    }
}

/// What seat `viewer` is told when `seat` forfeits `before`, by the model (R-M7,
/// R-M7b, R-M7c).
fn model_forfeit_told(
    before: &Board,
    after: &Board,
    seat: usize,
    reason: &str,
    viewer: usize,
) -> Vec<String> {
    let public = [
        format!("forfeit {seat} {reason}"),
        format!("remove {seat} {}", model::removed_seen(before, seat, viewer)),
    ];
    model::told_seeing(before, after, &public, None, false).swap_remove(viewer - 1)
}

#[test]
fn r_f1_r_m7b_r_m7c_random_forfeits_agree_with_the_model_and_ignore_unseen_pieces() {
    let mut rng = Rng::new(71);
    let (mut checked, mut hidden_differences, mut opened_pairs) = (0, 0, 0);
    for (players, count) in [(3, 150), (4, 150), (5, 100), (6, 100), (7, 100), (8, 100)] {
        for state in random_states(players, count, 500 * players as u64) {
            let board = Board::parse(&state, players).0;
            let remaining = board.remaining();
            if remaining.len() < 2 {
                continue;
            }
            let f = remaining[rng.below(remaining.len())];
            let mut g = game(players, Some(&state));
            let p = g.forfeit(seat(f), ForfeitKind::Timeout);
            let mut after = board.clone();
            assert_eq!(p.events, after.forfeit(f, "timeout"), "in `{state}`");
            assert_eq!(g.state(), after.state());
            for k in 1..=players {
                assert_eq!(
                    told(&p, k),
                    {
                        let mut want = model_forfeit_told(&board, &after, f, "timeout", k);
                        want.sort();
                        want
                    },
                    "seat {k} told of seat {f}'s forfeit in `{state}`"
                );
            }
            // The same table with seat f's pieces added or taken away where seat k
            // sees nothing before or after: seat k is sent the same bytes.
            for k in remaining.iter().copied().filter(|&k| k != f) {
                let (was, is) = (board.visible(k), after.visible(k));
                let blind: Vec<usize> = (0..was.len())
                    .filter(|&i| {
                        !was[i] && !is[i] && board.cells[i].is_none_or(|p| p.owner == f && p.kind != 'K')
                    })
                    .collect();
                if blind.is_empty() {
                    continue;
                }
                let mut other = board.clone();
                for _ in 0..1 + rng.below(4) {
                    let i = blind[rng.below(blind.len())];
                    other.cells[i] = match other.cells[i] {
                        Some(_) => None,
                        None => model::Pc::parse(&random_piece(f, &mut rng)),
                    };
                }
                let mut g2 = game(players, Some(&other.state()));
                assert_eq!(g2.view(seat(k)).text(), board.view(k));
                let p2 = g2.forfeit(seat(f), ForfeitKind::Timeout);
                assert_eq!(
                    sent(&p2, g2.as_ref(), k),
                    sent(&p, g.as_ref(), k),
                    "R-M7b: seat {k} after seat {f}'s forfeit:\n`{state}`\n`{}`",
                    other.state()
                );
                hidden_differences += usize::from(p2.events != p.events);
                checked += 1;
            }
            // R-M7c: the same with the forfeiting seat's pieces changed where seat k
            // saw nothing before and the forfeit opens its sight: the forfeit's
            // events to seat k are the same bytes (what stands there now reaches it
            // through its view, which may differ).
            for k in remaining.iter().copied().filter(|&k| k != f) {
                let (was, is) = (board.visible(k), after.visible(k));
                let opened: Vec<usize> = (0..was.len())
                    .filter(|&i| {
                        !was[i] && is[i] && board.cells[i].is_none_or(|p| p.owner == f && p.kind != 'K')
                    })
                    .collect();
                if opened.is_empty() {
                    continue;
                }
                let mut other = board.clone();
                for _ in 0..1 + rng.below(4) {
                    let i = opened[rng.below(opened.len())];
                    other.cells[i] = match other.cells[i] {
                        Some(_) => None,
                        None => model::Pc::parse(&random_piece(f, &mut rng)),
                    };
                }
                let mut g2 = game(players, Some(&other.state()));
                assert_eq!(g2.view(seat(k)).text(), board.view(k));
                let p2 = g2.forfeit(seat(f), ForfeitKind::Timeout);
                assert_eq!(
                    told(&p2, k),
                    told(&p, k),
                    "R-M7c: seat {k} told of seat {f}'s forfeit:\n`{state}`\n`{}`",
                    other.state()
                );
                opened_pairs += 1;
            }
        }
    }
    eprintln!(
        "{checked} pairs, {hidden_differences} with a different record, {opened_pairs} opened by the forfeit"
    );
    assert!(opened_pairs >= 500, "{opened_pairs} pairs opened by the forfeit");
    assert!(checked >= 2000, "{checked} pairs");
    assert!(
        hidden_differences >= 1500,
        "{hidden_differences} pairs with different records"
    );
}

// --- bad input ---------------------------------------------------------------------------------

#[test]
fn bad_input_gets_a_one_line_error_and_changes_nothing() {
    let mut g = game(3, None);
    for (action, what) in [
        ("1:g1-9:e1", "9:e1"),
        ("1:g1-4:f3", "4:f3"),
        ("1:e2-1:e5", "1:e5"),
        ("1:e2-e3", "e3"),
        ("1:e2", "1:e2"),
        ("", ""),
        ("1:e2-1:e4 ", "1:e4 "),
    ] {
        let e = reject(g.as_mut(), 1, action);
        assert!(matches!(e, Rejection::Malformed { .. }), "`{action}`: {e:?}");
        assert!(e.to_string().contains(what), "`{action}`: {e}");
    }
    for action in [
        "1:a1-1:a3",
        "1:e1-1:g1",
        "1:e2-1:e1",
        "2:e2-2:e4",
        "e5-e6",
        "pass",
    ] {
        let e = reject(g.as_mut(), 1, action);
        assert!(matches!(e, Rejection::Illegal { .. }), "`{action}`: {e:?}");
    }
    assert!(matches!(
        reject(g.as_mut(), 2, "2:e2-2:e4"),
        Rejection::NotYourTurn { .. }
    ));
    // From an eliminated seat.
    let mut g = from_board(&setup(3, "K1@1:e1 K3@3:e1 owners=1,1,3 out=2 to=3"));
    let e = reject(g.as_mut(), 2, "2:e2-2:e4");
    assert_eq!(
        e.to_string(),
        "illegal action `2:e2-2:e4`: seat 2 is out of the game (R-M5)"
    );
}

// --- on the wire -------------------------------------------------------------------------------

/// Runs a 3-seat match (`agents` for the first seats, built-in `fill` agents for the
/// others) with transcripts, replays its record, and checks every `view` and `event`
/// line sent to each seat against what that seat could see at that moment (the
/// model's R-M3 on the replayed true positions). Returns the number of lines checked
/// and the record's lines.
fn wire_check(agents: &[String], fill: &str, seed: u64) -> (usize, Vec<Line>) {
    let dir = TempDir::new().unwrap();
    let rec = dir.path().join("r.jsonl");
    let logs = dir.path().join("logs");
    let mut cmd = referee_in(dir.path());
    cmd.args([
        "match",
        "--game",
        "multichess",
        "-o",
        "players=3",
        "--fill",
        fill,
        "-q",
    ]);
    for a in agents {
        cmd.args(["--agent", a]);
    }
    let out = cmd
        .args(["--seed", &seed.to_string()])
        .arg("--log-dir")
        .arg(&logs)
        .arg("--record")
        .arg(&rec)
        .output()
        .expect("run referee match");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_verifies(&rec);
    let replay = record::replay_file(&rec).expect("the record replays");
    let n = 3;
    let mut g = GameId::MultiChess
        .create(&replay.header.options, replay.header.state.as_deref())
        .unwrap();
    // boards[i]: the true position after the i-th action or forfeit.
    let mut boards = vec![Board::parse(&g.state(), n).0];
    let mut queues: Vec<VecDeque<(String, usize)>> = vec![VecDeque::new(); n];
    // forfeits[i]: whether the step from boards[i] to boards[i + 1] was a forfeit.
    let mut forfeits = Vec::new();
    for line in &replay.lines {
        let p = match line {
            Line::Action(a) => g.play(a.seat, &a.action).expect("replays"),
            Line::Forfeit(f) => g.forfeit(f.seat, f.reason),
            _ => continue,
        };
        forfeits.push(matches!(line, Line::Forfeit(_)));
        for (k, events) in p.seat_events.iter().enumerate() {
            queues[k].extend(events.iter().map(|e| (e.text().to_string(), boards.len() - 1)));
        }
        boards.push(Board::parse(&g.state(), n).0);
    }
    let mut checked = 0;
    for k in 1..=n {
        let transcript = std::fs::read_to_string(logs.join(format!("seat{k}.transcript"))).unwrap();
        let queue = &mut queues[k - 1];
        for sent in transcript.lines().filter_map(|l| l.strip_prefix("> ")) {
            if let Some(event) = sent.strip_prefix("event ") {
                let (want, i) = queue
                    .pop_front()
                    .unwrap_or_else(|| panic!("seat {k}: unexpected `{sent}`"));
                assert_eq!(event, want, "seat {k}: events in order");
                if let Some(rest) = event.strip_prefix("square ") {
                    let (square, cell) = rest.split_once(' ').unwrap();
                    let sq = Sq::parse(square, n).unwrap();
                    let (before, after) = (&boards[i], &boards[i + 1]);
                    // R-M7c: after a forfeit, only the squares it saw before.
                    let seen_after = !forfeits[i] && after.visible(k)[sq.index()];
                    assert!(
                        before.visible(k)[sq.index()] || seen_after,
                        "seat {k} told `{sent}` about a square it could not see (step {})",
                        i + 1
                    );
                    assert_eq!(cell, after.at(sq).map_or(".".to_string(), |p| p.to_string()));
                }
                // R-M7a: a pass is told to the passing seat only.
                if let Some(who) = event.strip_prefix("pass ") {
                    assert_eq!(who, k.to_string(), "seat {k} told `{sent}`");
                }
                // R-M7b: a removal counts only the pieces the seat saw leave.
                if let Some(rest) = event.strip_prefix("remove ") {
                    let (who, count) = rest.split_once(' ').unwrap();
                    let who: usize = who.parse().unwrap();
                    let before = &boards[i];
                    assert_eq!(
                        count.parse::<usize>().unwrap(),
                        model::removed_seen(before, who, k),
                        "seat {k} told `{sent}`"
                    );
                }
                checked += 1;
            } else if let Some(view) = sent.strip_prefix("view ") {
                // The position it was sent in: the one with its ply count (a forfeit
                // keeps the count, so there may be two).
                let plies: u32 = view.split(' ').nth(n + 2).unwrap().parse().unwrap();
                let at = (0..boards.len())
                    .filter(|&i| boards[i].plies == plies)
                    .find(|&i| boards[i].view(k) == view)
                    .unwrap_or_else(|| panic!("seat {k} sent a view of no position: `{view}`"));
                let seen = boards[at].visible(k);
                let (shown, hidden) = Board::parse(view, n);
                for i in 0..seen.len() {
                    assert_eq!(
                        hidden[i],
                        !seen[i],
                        "seat {k}, ply {plies}: {}",
                        Sq::from_index(i)
                    );
                    if hidden[i] {
                        assert_eq!(shown.cells[i], None);
                    }
                }
                // Everything that happened before this position was told first.
                assert!(
                    queue.front().is_none_or(|(_, i)| *i >= at),
                    "seat {k}: events held back"
                );
                checked += 1;
            }
        }
        // A seat that forfeited is stopped at once and told nothing more.
        let forfeited = replay
            .lines
            .iter()
            .any(|l| matches!(l, Line::Forfeit(f) if f.seat.number() == k));
        assert!(forfeited || queue.is_empty(), "seat {k} was not told {queue:?}");
    }
    (checked, replay.lines)
}

#[test]
fn r_m3_r_m7_what_each_seat_is_sent_in_a_match_is_what_it_could_see() {
    let checked = std::thread::scope(|s| {
        let handles = [
            s.spawn(|| wire_check(&[], "greedy", 11)),
            s.spawn(|| wire_check(&[], "random", 12)),
        ];
        handles.into_iter().map(|h| h.join().unwrap().0).sum::<usize>()
    });
    assert!(checked > 500, "{checked} lines checked");
}

#[test]
fn r_f1_a_seat_forfeiting_a_three_seat_match_leaves_the_others_playing() {
    // Seat 2 plays one move, then an action no game accepts.
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/bots/scripted.sh");
    let scripted = shell_words::join(["sh", &script.to_string_lossy(), "2:e2-2:e4"]);
    let (checked, lines) = wire_check(&[builtin_command("greedy", 3), scripted], "greedy", 13);
    assert!(checked > 100);
    let at = lines
        .iter()
        .position(
            |l| matches!(l, Line::Forfeit(f) if f.seat.number() == 2 && f.reason == ForfeitKind::Illegal),
        )
        .expect("seat 2 forfeits");
    let Line::Forfeit(f) = &lines[at] else {
        unreachable!()
    };
    assert_eq!(f.action.as_deref(), Some("none"));
    assert_eq!(f.events[0], "forfeit 2 illegal");
    let after: Vec<usize> = lines[at..]
        .iter()
        .filter_map(|l| match l {
            Line::Action(a) => Some(a.seat.number()),
            _ => None,
        })
        .collect();
    assert!(
        after.len() > 2 && after.iter().all(|&s| s != 2),
        "play goes on without seat 2: {after:?}"
    );
    let Some(Line::Result(r)) = lines.last() else {
        panic!("a result")
    };
    assert_eq!(
        r.places[1],
        *r.places.iter().max().unwrap(),
        "seat 2 is last: {:?}",
        r.places
    );
    let end = Board::parse(&r.state, 3).0;
    assert!(end.owners[1].is_none_or(|o| o != 2) && end.cells.iter().flatten().all(|p| p.owner != 2));
}

#[test]
fn full_matches_of_builtin_agents_finish_and_verify() {
    let dir = TempDir::new().unwrap();
    let runs: Vec<(usize, &str)> = [2, 3, 4, 8]
        .iter()
        .flat_map(|&n| [(n, "greedy"), (n, "random")])
        .collect();
    let results: Vec<(PathBuf, usize)> = std::thread::scope(|s| {
        let handles: Vec<_> = runs
            .iter()
            .map(|&(n, fill)| {
                let dir = dir.path();
                s.spawn(move || {
                    let rec = dir.join(format!("{n}-{fill}.jsonl"));
                    let out = referee_in(dir)
                        .args([
                            "match",
                            "--game",
                            "multichess",
                            "-o",
                            &format!("players={n}"),
                            "--fill",
                            fill,
                        ])
                        .args(["--seed", &(40 + n).to_string(), "-q", "--record"])
                        .arg(&rec)
                        .output()
                        .expect("run referee match");
                    assert_eq!(out.status.code(), Some(0), "{n} {fill}: {}", text(&out.stderr));
                    (rec, n)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let mut taken = 0;
    for (rec, n) in results {
        let out = assert_verifies(&rec);
        assert!(out.contains("finished"), "{out}");
        let lines = record_lines(&rec);
        let places = places(&lines);
        assert_eq!(places.len(), n);
        assert!(places.contains(&1));
        assert!(lines.iter().all(|l| kind(l) != "forfeit"));
        taken += lines.iter().filter(|l| l.get("taken").is_some()).count();
        let replay = record::replay_file(&rec).unwrap();
        assert_eq!(
            replay
                .game
                .outcome()
                .unwrap()
                .places
                .iter()
                .map(|&p| p as u64)
                .collect::<Vec<_>>(),
            places
        );
    }
    assert!(taken > 0, "no slide was stopped by an unseen piece in 8 matches");
}
