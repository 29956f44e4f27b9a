//! What a running tournament says on stderr: a line per finished game with the time
//! gone and the time to go, and every `--report-every` games the current table. On a terminal the game line
//! is one status line redrawn in place; in a pipe (a log file, CI) every game is a
//! plain line of its own, so logs can be read and grepped.

use std::time::{Duration, Instant};

use crate::game::ordinal;
use crate::text::printable;
use crate::tournament::{self, Definition, Event, GameResult};

/// The reporter of one run.
pub struct Live<'d> {
    /// The tournament.
    def: &'d Definition,
    /// Seats per game.
    seats: usize,
    /// Games in the whole schedule (the table's "of N").
    scheduled: usize,
    /// Print the table every this many finished games (0: never).
    every: usize,
    /// Whether stderr is a terminal.
    tty: bool,
    /// When the run started.
    started: Instant,
    /// Games already finished when the run started (resumed): they took no time now.
    resumed: Option<usize>,
}

impl<'d> Live<'d> {
    /// A reporter for `def`, printing the table every `every` games.
    pub fn new(
        def: &'d Definition,
        every: usize,
        tty: bool,
    ) -> Result<Live<'d>, tournament::TournamentError> {
        Ok(Live {
            def,
            seats: def.seats()?,
            scheduled: def.schedule()?.len(),
            every,
            tty,
            started: Instant::now(),
            resumed: None,
        })
    }

    /// Reports one event of the run; `results` are all finished games so far.
    pub fn event(&mut self, event: Event<'_>, results: &[GameResult]) {
        match event {
            Event::Finished { result, done, total } => {
                self.game_line(result, done, total);
                if self.every > 0 && done % self.every == 0 {
                    self.table(done, results);
                }
            }
            Event::SprtDecided(text) => {
                self.end_status_line();
                eprintln!("SPRT: {text}; no new seating cycle is started");
            }
        }
    }

    /// The line of a finished game, with the time gone and an estimate of the time to
    /// go (from this run's games only, for all games left: an SPRT may stop sooner).
    fn game_line(&mut self, result: &GameResult, done: usize, total: usize) {
        let resumed = *self.resumed.get_or_insert(done.saturating_sub(1));
        let elapsed = self.started.elapsed();
        let played = done.saturating_sub(resumed).max(1) as u32;
        let eta = (elapsed / played) * total.saturating_sub(done) as u32;
        let timing = format!("{} elapsed, ETA {}", clock(elapsed), clock(eta));
        let places = self.places(result);
        if self.tty {
            let width = 30;
            let filled = done * width / total.max(1);
            eprint!(
                "\r[{}{}] {done}/{total} games  {timing}  last: {places}\x1b[K",
                "#".repeat(filled),
                ".".repeat(width - filled),
            );
            if done == total {
                eprintln!();
            }
        } else {
            eprintln!(
                "game {done}/{total} (#{}): {places} ({}); {timing}",
                result.index,
                printable(&result.reason)
            );
        }
    }

    /// The places of a game, best first: `1st greedy, 2nd random`.
    fn places(&self, result: &GameResult) -> String {
        let mut by_place: Vec<(u8, &str)> = result
            .seats
            .iter()
            .zip(&result.places)
            .map(|(&who, &place)| (place, self.def.entrants[who].name.as_str()))
            .collect();
        by_place.sort_by_key(|&(place, _)| place);
        by_place
            .iter()
            .map(|(place, name)| format!("{} {}", ordinal(*place), printable(name)))
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// The current table.
    fn table(&mut self, done: usize, results: &[GameResult]) {
        let Ok(summary) = tournament::summarize_counted(self.def, self.seats, self.scheduled, results) else {
            return;
        };
        self.end_status_line();
        eprint!(
            "standings after {done} games ({} elapsed):\n{}",
            clock(self.started.elapsed()),
            summary.table()
        );
    }

    /// On a terminal, ends the status line so the next text starts on a line of its
    /// own (the status line is drawn again by the next game).
    fn end_status_line(&self) {
        if self.tty {
            eprint!("\r\x1b[K");
        }
    }
}

/// `H:MM:SS`.
fn clock(d: Duration) -> String {
    let s = d.as_secs();
    format!("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clock_reads_hours_minutes_seconds() {
        assert_eq!(clock(Duration::from_secs(0)), "0:00:00");
        assert_eq!(clock(Duration::from_millis(61_900)), "0:01:01");
        assert_eq!(clock(Duration::from_secs(3 * 3600 + 59 * 60 + 7)), "3:59:07");
    }
}
