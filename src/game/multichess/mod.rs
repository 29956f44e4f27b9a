//! Multi-player TelnChes (RULES.md §4, R-M1…R-M7): 2–8 seats, a private area each, a
//! shared public area, fog of war, and elimination by king capture.
//!
//! What a seat may know is [`Position::visible`] (R-M3); its view, its legal moves
//! (R-M4) and the events it is told (R-M7) are all computed from that one function.

pub mod board;
mod errors;
pub mod rules;
pub mod state;

use board::{Area, Square};
use rules::{Move, MoveError, Position};

use super::{
    ActionKind, ByGame, EndReason, ForfeitKind, Game, GameId, Options, Outcome, Played, Rejection, Seat,
    SeatEvent, SetupError, Turn, View,
};

/// Option keys of this game.
const KEYS: [&str; 2] = ["players", "max-plies"];

/// Builds a game from options and an optional state string.
pub fn create(options: &Options, state: Option<&str>) -> Result<Box<dyn Game>, SetupError> {
    options.expect_only(&KEYS)?;
    let seats = options.int("players", 2, 2..=8)? as usize;
    let max_plies = options.int("max-plies", 2000, 1..=1_000_000)?;
    let pos = match state {
        None => Position::start(seats),
        Some(text) => state::parse(text, seats, false).map_err(SetupError::State)?.0,
    };
    let end = (pos.remaining().len() == 1).then_some(EndReason::LastStanding);
    let seen = pos.visible_all();
    Ok(Box::new(MultiGame {
        max_plies,
        pos,
        end,
        seen,
    }))
}

/// A game of Multi-player TelnChes in progress.
#[derive(Clone, Debug)]
pub struct MultiGame {
    max_plies: u32,
    pos: Position,
    /// How the game ended, once one seat is left.
    end: Option<EndReason>,
    /// `pos.visible_all()`, kept in step by every change of the position: views,
    /// moves and the forced-pass check all need it each turn.
    seen: Vec<Vec<bool>>,
}

impl MultiGame {
    /// R-M6: `seat`, which has no move on what it knows, passes; `before` is the
    /// board before it.
    fn pass(&mut self, seat: Seat, before: &[Option<board::Piece>]) -> Played {
        self.pos.plies += 1;
        self.pos.to_move = self.pos.next_seat(seat);
        let seen_before = self.refresh_seen();
        let event = format!("pass {seat}");
        // R-M7a: the others are told only whose turn it was, as for a move they see
        // none of; `pass` would tell them the seat has no move on squares they cannot
        // see. The passing seat is told it passed, as a mover is told its move.
        let seat_events = self.tell(
            before,
            (&seen_before, &self.seen),
            &[format!("moved {seat}")],
            Some((seat, event.clone())),
        );
        Played {
            taken: None,
            events: vec![event],
            seat_events,
        }
    }

    /// The true position.
    pub fn position(&self) -> &Position {
        &self.pos
    }

    /// After the position changed: recomputes what every seat sees, returning what
    /// they saw before.
    fn refresh_seen(&mut self) -> Vec<Vec<bool>> {
        std::mem::replace(&mut self.seen, self.pos.visible_all())
    }

    /// What `seat` sees now (R-M3).
    fn seen_by(&self, seat: Seat) -> &[bool] {
        debug_assert_eq!(
            self.seen,
            self.pos.visible_all(),
            "the visibility follows the position"
        );
        &self.seen[seat.index()]
    }

    /// R-M7: each seat is told what changed on the squares it saw before or sees
    /// after (`seen_after`: after a forfeit, R-M7c, the squares seen before again);
    /// `public` facts go to everybody, `own` only to `mover`.
    fn tell(
        &self,
        before: &[Option<board::Piece>],
        seen: (&[Vec<bool>], &[Vec<bool>]),
        public: &[String],
        mover: Option<(Seat, String)>,
    ) -> Vec<Vec<SeatEvent>> {
        let (seen_before, seen_after) = seen;
        // Each changed square's event, written once whoever is told it.
        let changed: Vec<(usize, String)> = before
            .iter()
            .zip(&self.pos.squares)
            .enumerate()
            .filter(|(_, (old, new))| old != new)
            .map(|(k, (_, new))| {
                let cell = new.map_or(".".to_string(), |p| p.to_string());
                (k, format!("square {} {cell}", Square::from_index(k)))
            })
            .collect();
        Seat::all(self.pos.seats)
            .map(|seat| {
                let i = seat.index();
                let mut told: Vec<SeatEvent> = public.iter().cloned().map(SeatEvent::new).collect();
                if let Some((m, text)) = &mover {
                    if *m == seat {
                        told.push(SeatEvent::new(text.clone()));
                    }
                }
                for (k, text) in &changed {
                    if seen_before[i][*k] || seen_after[i][*k] {
                        told.push(SeatEvent::new(text.clone()));
                    }
                }
                told
            })
            .collect()
    }

    /// Whether the ply limit has been reached (R-M6).
    fn drawn(&self) -> bool {
        self.pos.plies >= self.max_plies && self.pos.remaining().len() > 1
    }
}

impl Game for MultiGame {
    fn id(&self) -> GameId {
        GameId::MultiChess
    }

    fn options(&self) -> Options {
        let mut o = Options::new();
        o.set("players", self.pos.seats);
        o.set("max-plies", self.max_plies);
        o
    }

    fn seat_count(&self) -> usize {
        self.pos.seats
    }

    fn seat_label(&self, seat: Seat) -> String {
        format!("Area{seat}")
    }

    fn turn(&self) -> Turn {
        if self.outcome().is_some() {
            return Turn::Over;
        }
        Turn::Act {
            seat: self.pos.to_move,
            kind: ActionKind::Move,
        }
    }

    fn plies(&self) -> u32 {
        self.pos.plies
    }

    fn legal_actions(&self) -> Vec<String> {
        let Turn::Act { seat, .. } = self.turn() else {
            return Vec::new();
        };
        let moves = self.pos.masked_by(seat, self.seen_by(seat)).moves(seat);
        if moves.is_empty() {
            return vec!["pass".to_string()];
        }
        moves.iter().map(Move::to_string).collect()
    }

    fn play(&mut self, seat: Seat, text: &str) -> Result<Played, Rejection> {
        let turn = self.turn();
        // R-M5's check sits between the two halves of the turn check: a finished game
        // says so first, and a seat that is out is told that, not whose turn it is.
        if turn != Turn::Over && self.pos.out.contains(&seat) {
            return Err(Rejection::Illegal {
                action: text.to_string(),
                reason: ByGame::MultiChess(MoveError::Out { seat }),
            });
        }
        turn.check(seat, |to_move| format!("seat {to_move} is to move"))?;
        let illegal = |reason: MoveError| Rejection::Illegal {
            action: text.to_string(),
            reason: ByGame::MultiChess(reason),
        };
        // R-M4: judged on what the seat knows.
        let known = self.pos.masked_by(seat, self.seen_by(seat));
        let before = self.pos.squares.clone();
        if text == "pass" {
            if known.has_move(seat) {
                return Err(illegal(MoveError::PassWithAMove { seat }));
            }
            return Ok(self.pass(seat, &before));
        }
        let mv = Move::parse(text, self.pos.seats).map_err(|reason| Rejection::Malformed {
            action: text.to_string(),
            reason: ByGame::MultiChess(reason),
        })?;
        mv.private_area().map_err(illegal)?;
        let own = known.at(mv.from).is_some_and(|p| p.owner == seat);
        if !(own && known.moves_from(mv.from).contains(&mv)) {
            let why = match self.pos.at(mv.from) {
                Some(p) if p.owner == seat => MoveError::NotLegalOnView,
                _ => MoveError::NotOwnPiece { from: mv.from, seat },
            };
            return Err(illegal(why));
        }
        let taken = self.pos.make(seat, mv);
        let seen_before = self.refresh_seen();
        let mut record = format!("move {seat} {}", taken.mv);
        if taken.mv != mv {
            record.push_str(&format!(" requested {mv}"));
        }
        if let Some((sq, p)) = taken.captured {
            record.push_str(&format!(" capture {sq} {p}"));
        }
        let mut public = vec![format!("moved {seat}")];
        let mut events = vec![record];
        if let Some(victim) = taken.eliminated {
            let e = format!("eliminate {victim} by {seat}");
            public.push(e.clone());
            events.push(e);
            if self.pos.remaining().len() == 1 {
                self.end = Some(EndReason::Win);
            }
        }
        let seat_events = self.tell(
            &before,
            (&seen_before, &self.seen),
            &public,
            Some((seat, format!("move {}", taken.mv))),
        );
        Ok(Played {
            taken: (taken.mv != mv).then(|| taken.mv.to_string()),
            events,
            seat_events,
        })
    }

    fn forced_action(&self) -> Option<String> {
        let Turn::Act { seat, .. } = self.turn() else {
            return None;
        };
        (!self.pos.masked_by(seat, self.seen_by(seat)).has_move(seat)).then(|| "pass".to_string())
    }

    fn is_out(&self, seat: Seat) -> bool {
        self.pos.out.contains(&seat)
    }

    fn forfeit(&mut self, seat: Seat, kind: ForfeitKind) -> Played {
        if self.outcome().is_some() || self.is_out(seat) {
            return Played::default();
        }
        let before = self.pos.squares.clone();
        let n = self.pos.remove_seat(seat);
        let seen_before = self.refresh_seen();
        if self.pos.remaining().len() == 1 {
            self.end = Some(EndReason::Forfeit { seat, kind });
        }
        let forfeit = format!("forfeit {seat} {kind}");
        // R-M7c: what the forfeit opens to a seat reaches it through its next view,
        // as current contents: the change of a square it did not see would tell what
        // stood there. So it is told of, and counts, the squares it saw before only.
        let mut seat_events = self.tell(
            &before,
            (&seen_before, &seen_before),
            std::slice::from_ref(&forfeit),
            None,
        );
        for (i, told) in seat_events.iter_mut().enumerate() {
            let seen = before
                .iter()
                .enumerate()
                .filter(|&(k, p)| p.is_some_and(|p| p.owner == seat) && seen_before[i][k])
                .count();
            told.insert(1, SeatEvent::new(format!("remove {seat} {seen}")));
        }
        Played {
            taken: None,
            events: vec![forfeit, format!("remove {seat} {n}")],
            seat_events,
        }
    }

    fn view(&self, seat: Seat) -> View {
        View::new(seat, state::print(&self.pos, Some((seat, self.seen_by(seat)))))
    }

    fn state(&self) -> String {
        state::print(&self.pos, None)
    }

    fn outcome(&self) -> Option<Outcome> {
        let remaining = self.pos.remaining();
        let reason = match &self.end {
            Some(reason) if remaining.len() == 1 => reason.clone(),
            _ if self.drawn() => EndReason::MaxPlies,
            _ => return None,
        };
        // Places: the seats still in (sharing first place on a draw), then the others
        // in reverse order of going out (R-M5, R-M6).
        let mut places = vec![0u8; self.pos.seats];
        for s in &remaining {
            places[s.index()] = 1;
        }
        for (k, s) in self.pos.out.iter().rev().enumerate() {
            places[s.index()] = k as u8 + 2;
        }
        Some(Outcome { places, reason })
    }

    fn diagram(&self, seat: Option<Seat>) -> String {
        let seen = seat.map(|s| self.pos.visible(s));
        let cell = |sq: Square| match (&seen, self.pos.at(sq)) {
            (Some(v), _) if !v[sq.index()] => " ?".to_string(),
            (_, None) => " .".to_string(),
            (_, Some(p)) => {
                let letter = p.kind.letter();
                format!("{letter}{}", p.owner)
            }
        };
        let mut out = String::from("public\n");
        for rank in (4..8).rev() {
            out.push_str(&format!("{} ", rank + 1));
            for file in 0..8 {
                out.push_str(&format!(
                    " {}",
                    cell(Square {
                        area: Area::Public,
                        file,
                        rank
                    })
                ));
            }
            out.push('\n');
        }
        for a in 0..self.pos.seats as u8 {
            let owner = self.pos.owners[a as usize].map_or("nobody".to_string(), |s| format!("seat {s}"));
            out.push_str(&format!("area {} (owned by {owner})\n", a + 1));
            for rank in (0..4).rev() {
                out.push_str(&format!("{} ", rank + 1));
                for file in 0..8 {
                    out.push_str(&format!(
                        " {}",
                        cell(Square {
                            area: Area::Private(a),
                            file,
                            rank
                        })
                    ));
                }
                out.push('\n');
            }
        }
        out.push_str("    a  b  c  d  e  f  g  h\n");
        out.push_str(&format!(
            "seat {} to move, {} plies\n",
            self.pos.to_move, self.pos.plies
        ));
        out
    }

    fn boxed_clone(&self) -> Box<dyn Game> {
        Box::new(self.clone())
    }
}
