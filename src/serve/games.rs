//! One game under controller command: its start, the game now, the record so far and,
//! beside each recorded action or forfeit, what it told each seat. `undo` replays the
//! record from the start, so a game taken back is exactly the game that was.

use super::{err, CommandError, ErrorKind};
use crate::game::{ForfeitKind, Game, Played, Seat, SeatEvent, Turn, Unforfeitable, View};
use crate::protocol::agent::ToAgent;
use crate::record::{self, ActionLine, ForfeitLine, Header, Line, ResultLine};

/// What one recorded action or forfeit told the seats.
#[derive(Clone, Debug)]
struct Told {
    /// The view the acting seat was sent with its `go`, as a match sends it; `None`
    /// for a forfeit and for an action no agent is asked for (forced, opening).
    asked: Option<View>,
    /// Each seat's events, by seat index.
    events: Vec<Vec<SeatEvent>>,
    /// The seat this resigned: a match stops a forfeiting seat's agent before the
    /// forfeit is told to anyone, so that agent is told nothing from here on.
    resigned: Option<Seat>,
}

/// A game under controller command.
#[derive(Debug)]
pub(super) struct ControlledGame {
    /// The game as it started (from its state string, if any): what `undo` replays on.
    start: Box<dyn Game>,
    pub(super) game: Box<dyn Game>,
    pub(super) header: Header,
    pub(super) lines: Vec<Line>,
    /// One entry per action or forfeit line of `lines`, in order.
    told: Vec<Told>,
    /// Per seat index: how many entries of `told` its last `events` covered.
    heard: Vec<usize>,
}

impl Clone for ControlledGame {
    fn clone(&self) -> ControlledGame {
        ControlledGame {
            start: self.start.boxed_clone(),
            game: self.game.boxed_clone(),
            header: self.header.clone(),
            lines: self.lines.clone(),
            told: self.told.clone(),
            heard: self.heard.clone(),
        }
    }
}

/// Whether a record line is one `undo` takes back.
fn undoable(line: &Line) -> bool {
    matches!(line, Line::Action(_) | Line::Forfeit(_))
}

impl ControlledGame {
    /// A game at its start, nothing played.
    pub(super) fn fresh(game: Box<dyn Game>, header: Header) -> ControlledGame {
        ControlledGame::replayed(game, header, Vec::new())
    }

    /// The game of a verified record, with what it told each seat.
    pub(super) fn of_record(header: Header, lines: Vec<Line>) -> Result<ControlledGame, String> {
        let start = record::start_game(&header)?;
        Ok(ControlledGame::replayed(start, header, lines))
    }

    /// `lines` replayed on `start` by the rules (they were accepted once, so they are
    /// again: the games are deterministic).
    fn replayed(start: Box<dyn Game>, header: Header, lines: Vec<Line>) -> ControlledGame {
        let mut game = start.boxed_clone();
        let mut told = Vec::new();
        for line in &lines {
            let asked = match line {
                Line::Action(a) if !a.forced && !a.opening => Some(game.view(a.seat)),
                _ => None,
            };
            let resigned = match line {
                Line::Forfeit(f) => Some(f.seat),
                _ => None,
            };
            if let Some(played) = record::step(game.as_mut(), line) {
                told.push(Told {
                    asked,
                    events: played.seat_events,
                    resigned,
                });
            }
        }
        let heard = vec![0; game.seat_count()];
        ControlledGame {
            start,
            game,
            header,
            lines,
            told,
            heard,
        }
    }

    /// Plays `action` for `seat`, recording it; returns the omniscient events.
    pub(super) fn play(&mut self, seat: Seat, action: String) -> Result<Vec<String>, CommandError> {
        seat.at_table(self.game.seat_count())?;
        let forced = self.game.forced_action().is_some_and(|f| f == action);
        // What a match sends the seat with its `go`, taken before the action changes it;
        // a match asks no agent for a forced action.
        let asked = (!forced && matches!(self.game.turn(), Turn::Act { seat: s, .. } if s == seat))
            .then(|| self.game.view(seat));
        let played = self.game.play(seat, &action)?;
        self.lines.push(Line::Action(ActionLine {
            ply: self.game.plies(),
            seat,
            action,
            taken: played.taken.clone(),
            forced,
            opening: false,
            events: played.events.clone(),
            think_ms: None,
            clock_ms: None,
            time: Some(crate::wall_clock::now_rfc3339()),
        }));
        Ok(self.note(asked, None, played))
    }

    /// Resigns `seat` (a forfeit, R-F1), recording it; returns the omniscient events.
    pub(super) fn resign(&mut self, seat: Seat) -> Result<Vec<String>, CommandError> {
        seat.at_table(self.game.seat_count())?;
        // A forfeit that changes nothing would record a line saying nothing.
        self.game.forfeitable(seat).map_err(|why| match why {
            Unforfeitable::Over => err(ErrorKind::Over, "the game is over"),
            Unforfeitable::Out => err(ErrorKind::Over, format!("seat {seat} is out of the game already")),
        })?;
        let played = self.game.forfeit(seat, ForfeitKind::Resign);
        self.lines.push(Line::Forfeit(ForfeitLine {
            seat,
            reason: ForfeitKind::Resign,
            detail: "resigned by the controller".into(),
            action: None,
            events: played.events.clone(),
            time: Some(crate::wall_clock::now_rfc3339()),
        }));
        Ok(self.note(None, Some(seat), played))
    }

    /// Keeps what an accepted action or forfeit told the seats, and appends the result
    /// line once the game is over.
    fn note(&mut self, asked: Option<View>, resigned: Option<Seat>, played: Played) -> Vec<String> {
        self.told.push(Told {
            asked,
            events: played.seat_events,
            resigned,
        });
        // The controller's seats are not processes the referee started.
        if let Some(result) = ResultLine::of(self.game.as_ref(), None) {
            self.lines.push(Line::Result(result));
        }
        played.events
    }

    /// Takes back the last `n` actions and forfeits by replaying the rest from the
    /// start; refused, changing nothing, when fewer were played.
    pub(super) fn undo(&mut self, n: usize) -> Result<(), CommandError> {
        let played = self.told.len();
        if n > played {
            return Err(err(
                ErrorKind::Undo,
                format!("cannot undo {n}: {played} actions and forfeits were played"),
            ));
        }
        let keep = played - n;
        // The lines through the last kept action, and a commitment right after it
        // (it was made at that point); a result or reveal after it no longer holds.
        let mut cut = 0;
        let mut seen = 0;
        for (i, line) in self.lines.iter().enumerate() {
            if seen == keep && !matches!(line, Line::Commit(_)) {
                break;
            }
            seen += usize::from(undoable(line));
            cut = i + 1;
        }
        let heard = std::mem::take(&mut self.heard);
        let lines = self.lines[..cut].to_vec();
        *self = ControlledGame::replayed(self.start.boxed_clone(), self.header.clone(), lines);
        // A seat is never told again what it was told once.
        self.heard = heard.into_iter().map(|h| h.min(keep)).collect();
        Ok(())
    }

    /// How far into `told` the seat's agent was told anything: up to its own
    /// resignation, if it resigned, else to the end.
    fn reach(&self, seat: Seat) -> usize {
        self.told
            .iter()
            .position(|t| t.resigned == Some(seat))
            .unwrap_or(self.told.len())
    }

    /// The lines `seat`'s agent would have been sent since the last call: its `event`
    /// lines, then its `view` (or `gameover` once the game is over); for a seat that
    /// resigned, only what came before its resignation.
    pub(super) fn events(&mut self, seat: Seat) -> Result<Vec<String>, CommandError> {
        seat.at_table(self.game.seat_count())?;
        let reach = self.reach(seat);
        let from = self.heard[seat.index()].min(reach);
        let mut lines: Vec<String> = self.told[from..reach]
            .iter()
            .flat_map(|t| &t.events[seat.index()])
            .map(|e| ToAgent::Event(e).to_string())
            .collect();
        lines.extend(self.now_line(seat));
        self.heard[seat.index()] = reach;
        Ok(lines)
    }

    /// `view …` while the game goes on, `gameover …` once it is over; nothing for a
    /// seat that resigned (its agent is gone).
    fn now_line(&self, seat: Seat) -> Option<String> {
        if self.reach(seat) < self.told.len() {
            return None;
        }
        Some(match self.game.outcome() {
            Some(outcome) => ToAgent::GameOver(&outcome).to_string(),
            None => ToAgent::View(&self.game.view(seat)).to_string(),
        })
    }

    /// Everything `seat` was told, in order, as one line: its `newgame`, then for
    /// each action or forfeit the view it was sent when asked to decide and the
    /// events it saw, then its view now (or `gameover`); the lines joined by ` | `.
    /// A seat that resigned knows only what came before its resignation.
    pub(super) fn information_state(&self, seat: Seat) -> Result<String, CommandError> {
        seat.at_table(self.game.seat_count())?;
        let options = self.game.options();
        let mut lines = vec![ToAgent::NewGame {
            game: self.game.id(),
            seat,
            seats: self.game.seat_count(),
            options: &options,
        }
        .to_string()];
        for told in &self.told[..self.reach(seat)] {
            if let Some(view) = told.asked.as_ref().filter(|v| v.seat() == seat) {
                lines.push(ToAgent::View(view).to_string());
            }
            lines.extend(
                told.events[seat.index()]
                    .iter()
                    .map(|e| ToAgent::Event(e).to_string()),
            );
        }
        lines.extend(self.now_line(seat));
        Ok(lines.join(" | "))
    }
}
