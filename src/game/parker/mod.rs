//! Peg Chow and Telka (RULES.md §2, R-B1…R-B9), the two Parker Brothers games played
//! with the same counters on the same board. Everything is public in these games, so
//! a seat's view is the state string itself.

pub mod board;
pub mod rules;
pub mod seating;
pub mod state;

use board::{Colour, Point, SIZE};
use rules::{Action, Position, Variant};
use seating::Seating;

use super::{
    ActionKind, ByGame, EndReason, ForfeitKind, Game, GameId, Omniscient, Options, Outcome, Played,
    Rejection, Seat, SeatEvent, SetupError, Turn, View,
};

/// Option keys these games accept.
const KEYS: [&str; 3] = ["players", "colors-per-player", "max-plies"];

/// Builds a Peg Chow or Telka game from options and an optional state string.
pub fn create(id: GameId, options: &Options, state: Option<&str>) -> Result<Box<dyn Game>, SetupError> {
    options.expect_only(&KEYS)?;
    let players = options.int("players", 2, 2..=4)? as usize;
    let per_player = options.int("colors-per-player", 1, 1..=2)? as usize;
    let max_plies = options.int("max-plies", 1000, 1..=1_000_000)?;
    let seating = Seating::new(players, per_player).map_err(|e| SetupError::Option(e.to_string()))?;
    let variant = match id {
        GameId::Telka => Variant::Telka,
        _ => Variant::PegChow,
    };
    let (pos, out) = match state {
        None => (Position::start(&seating), Vec::new()),
        Some(text) => state::parse(text, &seating).map_err(SetupError::State)?,
    };
    let mut game = ParkerGame {
        id,
        variant,
        seating,
        max_plies,
        pos,
        out,
        outcome: None,
    };
    game.outcome = game.derived_outcome();
    Ok(Box::new(game))
}

/// A Peg Chow or Telka game in progress.
#[derive(Clone, Debug)]
pub struct ParkerGame {
    id: GameId,
    variant: Variant,
    seating: Seating,
    max_plies: u32,
    pos: Position,
    /// Seats that forfeited in a game of three independent sides, in order (R-F1).
    out: Vec<Seat>,
    outcome: Option<Outcome>,
}

impl ParkerGame {
    /// The position (counters, colour to move, moves made).
    pub fn position(&self) -> &Position {
        &self.pos
    }

    /// The seating.
    pub fn seating(&self) -> &Seating {
        &self.seating
    }

    /// Which of the two games this is.
    pub fn variant(&self) -> Variant {
        self.variant
    }

    /// The seats still playing.
    fn remaining(&self) -> Vec<Seat> {
        Seat::all(self.seating.players())
            .filter(|s| !self.out.contains(s))
            .collect()
    }

    /// Places with `winners` first, the other remaining seats next, then the seats
    /// that went out, the last to go out ranking best (R-F1). Places are dense: a
    /// losing team of two is second, not third.
    fn places(&self, winners: &[Seat]) -> Vec<u8> {
        let mut groups: Vec<Vec<Seat>> = vec![winners.to_vec()];
        groups.push(
            self.remaining()
                .into_iter()
                .filter(|s| !winners.contains(s))
                .collect(),
        );
        groups.extend(self.out.iter().rev().map(|&s| vec![s]));
        let mut places = vec![0; self.seating.players()];
        for (place, group) in groups.iter().filter(|g| !g.is_empty()).enumerate() {
            for s in group {
                places[s.index()] = place as u8 + 1;
            }
        }
        places
    }

    /// The result a position implies on its own: the colour that moved last has won,
    /// the ply limit is reached, or one side is left.
    fn derived_outcome(&self) -> Option<Outcome> {
        // Counted, not listed: this runs after every move, and one side is rarely left.
        let remaining = Seat::all(self.seating.players())
            .filter(|s| !self.out.contains(s))
            .count();
        if remaining == 1 {
            return Some(Outcome {
                places: self.places(&self.remaining()),
                reason: EndReason::LastStanding,
            });
        }
        if self.pos.moves > 0 {
            let last = self.previous_colour();
            if self.pos.has_won(self.variant, &self.seating, last) {
                let seat = self.seating.owner(last).expect("colours in play have owners");
                let winners = self.seating.team(seat);
                return Some(Outcome {
                    places: self.places(&winners),
                    reason: EndReason::Win,
                });
            }
        }
        (self.pos.moves >= self.max_plies).then(|| Outcome {
            places: self.places(&self.remaining()),
            reason: EndReason::MaxPlies,
        })
    }

    /// Whether `colour` still takes turns (its seat has not gone out).
    fn active(&self, colour: Colour) -> bool {
        self.seating.owner(colour).is_some_and(|s| !self.out.contains(&s))
    }

    /// The next active colour after `colour` in turn order.
    fn next_colour(&self, colour: Colour) -> Colour {
        let order = self.seating.colours();
        let at = order.iter().position(|&c| c == colour).expect("in play");
        (1..=order.len())
            .map(|k| order[(at + k) % order.len()])
            .find(|&c| self.active(c))
            .unwrap_or(colour)
    }

    /// The active colour whose turn came just before the colour to move.
    fn previous_colour(&self) -> Colour {
        let order = self.seating.colours();
        let at = order
            .iter()
            .position(|&c| c == self.pos.to_move)
            .expect("in play");
        (1..=order.len())
            .map(|k| order[(at + order.len() * 2 - k) % order.len()])
            .find(|&c| self.active(c))
            .unwrap_or(self.pos.to_move)
    }

    /// The same events for every seat: everything is public in these games.
    fn public(&self, events: Vec<String>, taken: Option<String>) -> Played {
        let seat_events = Seat::all(self.seating.players())
            .map(|_| events.iter().cloned().map(SeatEvent::new).collect())
            .collect();
        Played {
            taken,
            events,
            seat_events,
        }
    }
}

impl Game for ParkerGame {
    fn id(&self) -> GameId {
        self.id
    }

    fn options(&self) -> Options {
        let mut o = Options::new();
        o.set("players", self.seating.players());
        o.set("colors-per-player", self.seating.colours_per_player());
        o.set("max-plies", self.max_plies);
        o
    }

    fn seat_count(&self) -> usize {
        self.seating.players()
    }

    fn partners(&self, seat: Seat) -> Vec<Seat> {
        self.seating
            .team(seat)
            .into_iter()
            .filter(|&s| s != seat)
            .collect()
    }

    fn seat_label(&self, seat: Seat) -> String {
        let names: Vec<String> = self
            .seating
            .colours_of(seat)
            .iter()
            .map(|c| {
                let n = c.name();
                n[..1].to_uppercase() + &n[1..]
            })
            .collect();
        names.join("+")
    }

    fn turn(&self) -> Turn {
        match &self.outcome {
            Some(_) => Turn::Over,
            None => Turn::Act {
                seat: self
                    .seating
                    .owner(self.pos.to_move)
                    .expect("colour to move is in play"),
                kind: ActionKind::Move,
            },
        }
    }

    fn plies(&self) -> u32 {
        self.pos.moves
    }

    fn legal_actions(&self) -> Vec<String> {
        if self.outcome.is_some() {
            return Vec::new();
        }
        let moves = self.pos.moves(self.variant, &self.seating);
        if moves.is_empty() {
            return vec![Action::Pass.to_string()];
        }
        moves.iter().map(Action::text).collect()
    }

    fn play(&mut self, seat: Seat, text: &str) -> Result<Played, Rejection> {
        let Omniscient { taken, events } = self.play_omniscient(seat, text)?;
        Ok(self.public(events, taken))
    }

    fn play_omniscient(&mut self, seat: Seat, text: &str) -> Result<Omniscient, Rejection> {
        let to_move = self.pos.to_move;
        self.turn()
            .check(seat, |to_act| format!("seat {to_act} ({to_move}) is to move"))?;
        let action = Action::parse(text).map_err(|reason| Rejection::Malformed {
            action: text.to_string(),
            reason: ByGame::Parker(reason),
        })?;
        let mut next = self.pos.clone();
        let effect = next
            .apply(self.variant, &self.seating, &action)
            .map_err(|reason| Rejection::Illegal {
                action: text.to_string(),
                reason: ByGame::Parker(reason),
            })?;
        let mover = next.to_move;
        next.moves += 1;
        next.to_move = self.next_colour(mover);
        self.pos = next;
        self.outcome = self.derived_outcome();
        // Pushed piece by piece rather than formatted: `verify` derives one per line.
        let mut event = String::with_capacity(text.len() + 16 + 4 * effect.captured.len());
        event.push_str(if action == Action::Pass { "pass " } else { "move " });
        event.push_str(mover.name());
        if action != Action::Pass {
            event.push(' ');
            action.push_text(&mut event);
        }
        for (i, (p, _)) in effect.captured.iter().enumerate() {
            event.push_str(if i == 0 { " capture " } else { " " });
            p.push_text(&mut event);
        }
        Ok(Omniscient {
            taken: None,
            events: vec![event],
        })
    }

    fn forced_action(&self) -> Option<String> {
        (self.outcome.is_none() && !self.pos.has_move()).then(|| Action::Pass.to_string())
    }

    fn is_out(&self, seat: Seat) -> bool {
        self.out.contains(&seat)
    }

    fn forfeit(&mut self, seat: Seat, kind: ForfeitKind) -> Played {
        if self.outcome.is_some() || self.is_out(seat) {
            return Played::default();
        }
        let mut events = vec![format!("forfeit {seat} {kind}")];
        let independent = self.seating.team(seat).len() == 1 && self.seating.players() >= 3;
        if independent {
            // R-F1: the seat is out, its counters leave the board, the others play on.
            for c in self.seating.colours_of(seat) {
                let n = self.pos.counters(c).count();
                for p in Point::all() {
                    if self.pos.at(p) == Some(c) {
                        self.pos.board[p.index()] = None;
                    }
                }
                events.push(format!("remove {c} {n}"));
            }
            self.out.push(seat);
            if self.seating.owner(self.pos.to_move) == Some(seat) {
                self.pos.to_move = self.next_colour(self.pos.to_move);
            }
            if self.remaining().len() == 1 {
                let last = self.remaining();
                self.outcome = Some(Outcome {
                    places: self.places(&last),
                    reason: EndReason::Forfeit { seat, kind },
                });
            }
        } else {
            // Two sides: a seat's forfeit loses the game for its side.
            let side = self.seating.side_of_seat(seat);
            let winners: Vec<Seat> = Seat::all(self.seating.players())
                .filter(|&s| self.seating.side_of_seat(s) != side)
                .collect();
            self.outcome = Some(Outcome::win(
                self.seating.players(),
                &winners,
                EndReason::Forfeit { seat, kind },
            ));
        }
        self.public(events, None)
    }

    fn view(&self, seat: Seat) -> View {
        // Nothing is hidden in Peg Chow and Telka: the view is the state string.
        View::new(seat, self.state())
    }

    fn state(&self) -> String {
        state::print(&self.pos, &self.out)
    }

    fn outcome(&self) -> Option<Outcome> {
        self.outcome.clone()
    }

    fn diagram(&self, _seat: Option<Seat>) -> String {
        let mut s = String::new();
        for y in (0..SIZE as i8).rev() {
            s.push_str(&format!("{:>2} ", y + 1));
            for x in 0..SIZE as i8 {
                let p = Point::new(x, y).expect("on board");
                let ch = match (self.pos.at(p), p.home()) {
                    (Some(c), _) => c.letter().to_ascii_uppercase(),
                    (None, Some(_)) => ':',
                    (None, None) => '.',
                };
                s.push(' ');
                s.push(ch);
            }
            s.push('\n');
        }
        s.push_str("    a b c d e f g h i j k\n");
        match self.turn() {
            Turn::Act { seat, .. } => s.push_str(&format!(
                "{} to move (seat {seat}), {} moves made\n",
                self.pos.to_move, self.pos.moves
            )),
            Turn::Over => s.push_str(&format!("game over after {} moves\n", self.pos.moves)),
        }
        s
    }

    fn boxed_clone(&self) -> Box<dyn Game> {
        Box::new(self.clone())
    }
}
