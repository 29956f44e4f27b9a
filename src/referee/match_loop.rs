//! The match in progress: [`Match`] is the only place where the game and the agents
//! meet. It runs a match step by step (the handshake up to `newgame`'s `readyok`,
//! the header, the opening, the catch-up of a resumed game, the turns, the finish)
//! and records every accepted action and forfeit as it happens. Its own room
//! because it is the loop itself; `mod.rs` sets it up and reports how it ended.

use std::time::{Duration, Instant};

use super::session::{AgentSession, Forfeit};
use super::{interrupted, MatchConfig, Progress};
use crate::clock::SeatClock;
use crate::game::{ActionKind, ForfeitKind, Game, Played, Seat, SeatEvent, Turn};
use crate::record::{
    self, ActionLine, Durability, ForfeitLine, Header, Line, RecordWriter, ResultLine, SeatEntry,
};

/// The I/O error the loop stops with once interrupted.
fn stop_if_interrupted() -> std::io::Result<()> {
    if interrupted() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::Interrupted,
            "interrupted",
        ));
    }
    Ok(())
}

/// Who made an accepted action.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Origin {
    /// The seat's agent.
    Agent,
    /// The referee, because it was the only action (a forced pass).
    Forced,
    /// The referee, as part of a random opening.
    Opening,
}

/// The match in progress: the only place where the game and the agents meet.
pub(super) struct Match<'c> {
    pub(super) config: &'c MatchConfig,
    pub(super) game: Box<dyn Game>,
    pub(super) sessions: Vec<Option<AgentSession>>,
    /// How many escaped descendants stopping each seat's agent found and killed, for
    /// the result line.
    pub(super) escaped: Vec<usize>,
    /// `None` until the header is written: the file is created with its first line,
    /// so a referee killed during the handshakes leaves no empty record behind.
    pub(super) record: Option<RecordWriter<std::fs::File>>,
    /// The record read back when resuming an interrupted game.
    pub(super) resumed: Option<record::Replay>,
    /// Each seat's label, which never changes during a game.
    pub(super) labels: Vec<String>,
    /// The seats whose agent was kept from an earlier match and renewed for this
    /// one: they skip the handshake and `newgame` (they were told it already).
    pub(super) reused: Vec<bool>,
    /// The seats whose agent is kept afterwards: told `gameover`, not `quit`.
    pub(super) keep: Vec<bool>,
    /// The seats whose agent never got ready for the game, with why.
    pub(super) unready: Vec<(Seat, String)>,
    /// The actions and forfeits recorded so far, for the report.
    pub(super) moves: Vec<super::Move>,
}

impl Match<'_> {
    /// Plays the match on its agents, step by step: the handshake (up to the agents'
    /// `readyok` for this game), the header, the opening, the catch-up of a resumed
    /// game, the turns, the finish.
    /// Returns the seats as the header records them.
    pub(super) fn run(&mut self, progress: &mut dyn FnMut(Progress<'_>)) -> std::io::Result<Vec<SeatEntry>> {
        let forfeits = self.handshake();
        self.note_unready(&forfeits);
        let seats = self.header()?;
        for (seat, forfeit) in forfeits {
            self.forfeit(seat, forfeit, None, progress)?;
        }
        if self.resumed.is_none() {
            self.opening(progress)?;
        }
        let mut clocks = self.catch_up();
        self.turns(&mut clocks, progress)?;
        self.finish()?;
        Ok(seats)
    }

    /// The handshake with every fresh agent, up to its `readyok` for this game;
    /// returns the seats that failed it, whose forfeits are recorded once there is a
    /// header. After `protocolok` an agent is sent its options and `newgame` at once,
    /// as a kept agent is (`reuse::renew`): one `readyok` covers both.
    fn handshake(&mut self) -> Vec<(Seat, Forfeit)> {
        let config = self.config;
        let options = self.game.options();
        let seat_count = self.game.seat_count();
        // Every step of the handshake goes to all agents before any is waited for,
        // so they start up in parallel and each has the whole startup time.
        let mut forfeits: Vec<(Seat, Forfeit)> = Vec::new();
        self.each_agent(&mut forfeits, |s, _| s.hello());
        let deadline = Instant::now() + config.startup;
        self.each_agent(&mut forfeits, |s, _| s.await_protocolok(deadline));
        self.each_agent(&mut forfeits, |s, i| {
            s.send_new_game(&config.agents[i].options, config.game, seat_count, &options)
        });
        let deadline = Instant::now() + config.startup;
        self.each_agent(&mut forfeits, |s, _| s.await_readyok(deadline));
        forfeits
    }

    /// Writes the header of a new record, with the names the agents gave; a resumed
    /// record has its header already. Returns the seats of the header.
    fn header(&mut self) -> std::io::Result<Vec<SeatEntry>> {
        let config = self.config;
        let seats: Vec<SeatEntry> = match &self.resumed {
            Some(replay) => replay.header.seats.clone(),
            None => {
                let mut header = Header::new(self.game.as_ref(), config.state.clone(), config.seed, |seat| {
                    let command = config.agents[seat.index()].spec.command.clone();
                    let name = self.sessions[seat.index()].as_ref().and_then(|s| s.name());
                    (
                        name.map_or_else(|| command.clone(), str::to_string),
                        Some(command),
                    )
                });
                header.time_control = Some(config.control.to_string());
                for (i, entry) in header.seats.iter_mut().enumerate() {
                    entry.entrant.clone_from(&config.agents[i].entrant);
                    let own = config.seat_control(i);
                    entry.time_control = (own != config.control).then(|| own.to_string());
                }
                header.sandbox = Some(config.isolation.describe());
                let seats = header.seats.clone();
                stop_if_interrupted()?;
                self.write(&Line::Header(header))?;
                seats
            }
        };
        stop_if_interrupted()?;
        Ok(seats)
    }

    /// Keeps the seats that failed to get ready, even those whose forfeit the game
    /// no longer records (a two-seat game ends with the first): a tournament tells
    /// an entrant that never starts from one that loses.
    fn note_unready(&mut self, forfeits: &[(Seat, Forfeit)]) {
        for (seat, forfeit) in forfeits {
            self.unready.push((*seat, forfeit.detail.clone()));
        }
    }

    /// The referee's random opening, as long as the game takes it.
    fn opening(&mut self, progress: &mut dyn FnMut(Progress<'_>)) -> std::io::Result<()> {
        for action in &self.config.opening {
            let Turn::Act { seat, .. } = self.game.turn() else {
                break;
            };
            let played = self.game.play(seat, action).map_err(|r| {
                std::io::Error::new(std::io::ErrorKind::InvalidInput, format!("opening: {r}"))
            })?;
            self.accept(seat, action.clone(), played, Origin::Opening, None, progress)?;
        }
        Ok(())
    }

    /// The seats' clocks, fresh or, for a resumed game, where the record left them;
    /// the agents of a resumed game are told what their seats saw so far.
    fn catch_up(&mut self) -> Vec<SeatClock> {
        let mut clocks: Vec<SeatClock> = (0..self.game.seat_count())
            .map(|i| SeatClock::new(self.config.seat_control(i)))
            .collect();
        if let Some(replay) = &self.resumed {
            // A resumed agent is told everything its seat saw so far, and each clock
            // continues from what the record shows.
            let told = record::seat_histories(replay);
            for (slot, events) in self.sessions.iter_mut().zip(told) {
                if let Some(s) = slot {
                    s.observe(events);
                }
            }
            // The replay charged every clock with the think times recorded, as this
            // loop charges them, so each continues exactly where it stood. A record
            // without a time control (a controller's) has no clocks to continue.
            if let Some(recorded) = &replay.clocks {
                clocks.clone_from(recorded);
            }
        }
        clocks
    }

    /// The turns until the game is over: a forced action is played by the referee,
    /// any other is asked of the seat's agent.
    fn turns(
        &mut self,
        clocks: &mut [SeatClock],
        progress: &mut dyn FnMut(Progress<'_>),
    ) -> std::io::Result<()> {
        while let Turn::Act { seat, kind } = self.game.turn() {
            if let Some(action) = self.game.forced_action() {
                let played = self.game.play(seat, &action).expect("a forced action is legal");
                self.accept(seat, action, played, Origin::Forced, None, progress)?;
                continue;
            }
            self.agent_turn(seat, kind, &mut clocks[seat.index()], progress)?;
        }
        Ok(())
    }

    /// Asks `seat`'s agent for an action of `kind` on its `clock`, and accepts it or
    /// records the forfeit (an error of the agent, its time, or an illegal action).
    fn agent_turn(
        &mut self,
        seat: Seat,
        kind: ActionKind,
        clock: &mut SeatClock,
        progress: &mut dyn FnMut(Progress<'_>),
    ) -> std::io::Result<()> {
        let config = self.config;
        let view = self.game.view(seat);
        let session = self.sessions[seat.index()]
            .as_mut()
            .expect("a seat to act has a live agent");
        let limit = clock.budget() + config.margin;
        let answer = session.decide(&view, kind, clock.go(), limit);
        let (action, used) = match answer {
            Ok(answer) => answer,
            Err(forfeit) => return self.forfeit(seat, forfeit, None, progress),
        };
        if !clock.charge(used, config.margin) {
            let forfeit = Forfeit {
                kind: ForfeitKind::Timeout,
                detail: format!(
                    "took {} ms with {} ms on the clock",
                    used.as_millis(),
                    clock.budget().as_millis()
                ),
            };
            return self.forfeit(seat, forfeit, None, progress);
        }
        let timing = (used, clock.left().as_millis() as u64);
        match self.game.play(seat, &action) {
            Ok(played) => self.accept(seat, action, played, Origin::Agent, Some(timing), progress),
            Err(rejection) => {
                let forfeit = Forfeit {
                    kind: ForfeitKind::Illegal,
                    detail: rejection.to_string(),
                };
                self.forfeit(seat, forfeit, Some(action), progress)
            }
        }
    }

    /// Sends every agent still there `gameover`, and `quit` unless it is kept, then
    /// records the result.
    fn finish(&mut self) -> std::io::Result<()> {
        let outcome = self.game.outcome().expect("the game is over");
        // The agents are stopped before the result is written, so that it can say
        // what stopping them found. A referee killed in between leaves a game over
        // without a result, which `--resume` finishes.
        // Every seat is told first and then waited for: the agents exit side by side,
        // and the game costs one exit, not one per seat. Each has the grace from
        // when it was told, so one slow to take its `quit` shortens no other's.
        let grace = self.config.quit_grace;
        let mut deadlines = vec![None; self.sessions.len()];
        for (i, slot) in self.sessions.iter_mut().enumerate() {
            match slot {
                // A kept agent's descendants are looked for when it is finally stopped.
                Some(s) if self.keep[i] => s.game_over(&outcome, grace),
                Some(s) => {
                    let deadline = Instant::now() + grace;
                    s.say_goodbye(&outcome, deadline);
                    deadlines[i] = Some(deadline);
                }
                None => {}
            }
        }
        for ((slot, escaped), deadline) in self.sessions.iter_mut().zip(&mut self.escaped).zip(deadlines) {
            if let (Some(s), Some(deadline)) = (slot.as_mut(), deadline) {
                *escaped += s.stop_by(deadline).escaped.len();
            }
        }
        stop_if_interrupted()?;
        let escaped = self.escaped.iter().any(|&n| n > 0).then(|| self.escaped.clone());
        let result = ResultLine::of(self.game.as_ref(), escaped).expect("the game is over");
        self.write(&Line::Result(result))
    }

    /// Appends a record line, forcing it to disk when the durability policy says so.
    fn write(&mut self, line: &Line) -> std::io::Result<()> {
        match self.record.as_mut() {
            None => self.record = Some(RecordWriter::start(&self.config.record, line)?),
            Some(record) => record.write(line)?,
        }
        let record = self.record.as_mut().expect("written above");
        let end = matches!(line, Line::Result(_));
        // Signed once the players are known and once the game is decided: what a
        // signature vouches for is everything before it.
        if let (Some(key), Line::Header(_) | Line::Result(_)) = (&self.config.sign, line) {
            record.sign(key)?;
        }
        match self.config.durability {
            Durability::Line => record.sync(),
            Durability::Game if end => record.sync(),
            _ => Ok(()),
        }
    }

    /// Runs one handshake step on every live agent that has not failed yet (with its
    /// seat index), collecting the forfeits; kept agents, renewed already, are skipped.
    fn each_agent(
        &mut self,
        forfeits: &mut Vec<(Seat, Forfeit)>,
        mut step: impl FnMut(&mut AgentSession, usize) -> Result<(), Forfeit>,
    ) {
        for (i, slot) in self.sessions.iter_mut().enumerate() {
            let Some(s) = slot else { continue };
            if self.reused[i] || forfeits.iter().any(|(seat, _)| *seat == s.seat()) {
                continue;
            }
            if let Err(f) = step(s, i) {
                forfeits.push((s.seat(), f));
            }
        }
    }

    /// Records an accepted action and tells every seat what it saw.
    fn accept(
        &mut self,
        seat: Seat,
        action: String,
        played: Played,
        origin: Origin,
        timing: Option<(Duration, u64)>,
        progress: &mut dyn FnMut(Progress<'_>),
    ) -> std::io::Result<()> {
        stop_if_interrupted()?;
        let ply = self.game.plies();
        // A resumed record whose header has no time control (a controller's) keeps
        // none: the clocks still run, but verify could check no time against it.
        let recorded = timing.filter(|_| {
            self.resumed
                .as_ref()
                .is_none_or(|r| r.header.time_control.is_some())
        });
        let line = Line::Action(ActionLine {
            ply,
            seat,
            action,
            taken: played.taken,
            forced: origin == Origin::Forced,
            opening: origin == Origin::Opening,
            events: played.events,
            think_ms: recorded.map(|t| t.0.as_millis() as u64),
            clock_ms: recorded.map(|t| t.1),
            time: Some(crate::wall_clock::now_rfc3339()),
        });
        self.write(&line)?;
        self.distribute(played.seat_events);
        let Line::Action(line) = line else {
            unreachable!("built above")
        };
        progress(Progress::Action {
            ply,
            seat,
            label: &self.labels[seat.index()],
            action: line.taken.as_deref().unwrap_or(&line.action),
            forced: origin != Origin::Agent,
            think: timing.map(|t| t.0),
        });
        // The action's own string, moved rather than copied: no allocation per action.
        self.moves.push(super::Move::Action {
            seat,
            action: line.action,
        });
        Ok(())
    }

    /// Records a forfeit, stops the agent, and tells the others.
    fn forfeit(
        &mut self,
        seat: Seat,
        forfeit: Forfeit,
        action: Option<String>,
        progress: &mut dyn FnMut(Progress<'_>),
    ) -> std::io::Result<()> {
        // An agent killed because the referee is stopping did not fail.
        stop_if_interrupted()?;
        if let Some(mut s) = self.sessions[seat.index()].take() {
            self.escaped[seat.index()] += s.stop(Duration::ZERO).escaped.len();
        }
        if self.game.forfeitable(seat).is_err() {
            // The game ended already (another seat's forfeit in a two-sided game), or
            // the seat is out of it: this forfeit changes nothing and is not recorded.
            return Ok(());
        }
        let played = self.game.forfeit(seat, forfeit.kind);
        self.write(&Line::Forfeit(ForfeitLine {
            seat,
            reason: forfeit.kind,
            detail: forfeit.detail.clone(),
            action,
            events: played.events,
            time: Some(crate::wall_clock::now_rfc3339()),
        }))?;
        self.moves.push(super::Move::Forfeit {
            seat,
            reason: forfeit.kind,
        });
        self.distribute(played.seat_events);
        progress(Progress::Forfeit {
            seat,
            forfeit: &forfeit,
        });
        Ok(())
    }

    /// Queues each seat's own events with its session (and nothing else).
    fn distribute(&mut self, seat_events: Vec<Vec<SeatEvent>>) {
        for (slot, events) in self.sessions.iter_mut().zip(seat_events) {
            if let Some(s) = slot {
                s.observe(events);
            }
        }
    }
}
