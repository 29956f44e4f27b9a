//! What an action line says about time and openings (`think_ms`, `clock_ms`,
//! `opening`), checked the way the writers fill those members: only the match loop
//! times actions, and only those its agents made; it plays a tournament's random
//! opening before any agent acts, untimed. Every seat's clock is replayed from the
//! header's time control and the think times recorded, as the match loop charged
//! it (under the seat's own time control when its header entry has one), so each
//! `clock_ms` must be exactly what that clock shows; the clocks a record
//! leaves are the ones `match --resume` continues.

use std::time::Duration;

use super::fast_action::ActionRef;
use super::Header;
use crate::clock::{SeatClock, TimeControl};

/// The time control and seat clocks of a record being replayed, and where its opening
/// ends.
#[derive(Clone, Debug, Default)]
pub(super) struct Timing {
    /// Each seat's clock, by seat index, under the seat's own time control or else
    /// the header's; `None` when the header has none (controller and play-by-mail
    /// records), whose actions are never timed.
    clocks: Option<Vec<SeatClock>>,
    /// Whether an action line that is not an opening one was seen: the opening's
    /// actions are the first of the record.
    past_opening: bool,
}

impl Timing {
    /// The clocks at the start of the game `header` describes, which has `seats` seats.
    pub fn new(header: &Header, seats: usize) -> Result<Timing, String> {
        let parse = |text: &str| TimeControl::parse_recorded(text).map_err(|e| format!("time_control: {e}"));
        let clocks = match &header.time_control {
            None => {
                if let Some(e) = header.seats.iter().find(|e| e.time_control.is_some()) {
                    return Err(format!(
                        "seat {} has a time_control in a record without one: only matches time seats",
                        e.seat
                    ));
                }
                None
            }
            Some(text) => {
                let control = parse(text)?;
                let mut clocks = vec![SeatClock::new(control); seats];
                for (clock, entry) in clocks.iter_mut().zip(&header.seats) {
                    if let Some(own) = &entry.time_control {
                        *clock = SeatClock::new(parse(own).map_err(|e| format!("seat {}: {e}", entry.seat))?);
                    }
                }
                Some(clocks)
            }
        };
        Ok(Timing {
            clocks,
            past_opening: false,
        })
    }

    /// Checks the flags and times of `a`, an action line the rules accepted (so its
    /// seat is one of the game's), and charges the seat's clock with its think time.
    pub fn check(&mut self, a: &ActionRef<'_>) -> Result<(), String> {
        if a.opening {
            if a.forced {
                return Err("an opening action is never marked forced: the opening plays it as it is".into());
            }
            if self.past_opening {
                return Err("an opening action after other actions: a random opening comes first".into());
            }
            if self.clocks.is_none() {
                return Err(
                    "an opening action in a record without a time control: only matches (tournament \
                     --random-plies) play openings"
                        .into(),
                );
            }
        } else {
            self.past_opening = true;
        }
        let (think, clock_ms) = match (a.think_ms, a.clock_ms) {
            (None, None) => return Ok(()),
            (Some(think), Some(clock_ms)) => (think, clock_ms),
            (Some(_), None) => return Err("think_ms without clock_ms: a timed action records both".into()),
            (None, Some(_)) => return Err("clock_ms without think_ms: a timed action records both".into()),
        };
        if a.forced || a.opening {
            let what = if a.forced {
                "a forced action"
            } else {
                "an opening action"
            };
            return Err(format!(
                "think_ms and clock_ms on {what}: the referee made it, and only agents' actions are timed"
            ));
        }
        let Some(clocks) = self.clocks.as_mut() else {
            return Err(
                "think_ms and clock_ms in a record without a time control: controller and play-by-mail \
                 actions are not timed"
                    .into(),
            );
        };
        let clock = clocks
            .get_mut(a.seat.index())
            .ok_or_else(|| format!("seat {} does not exist", a.seat))?;
        // A think time over the budget is no error: the margin, which the record does
        // not keep, may have allowed it, and the clock then stops at zero.
        clock.spend(Duration::from_millis(think));
        let left = clock.left().as_millis();
        if left != u128::from(clock_ms) {
            return Err(format!(
                "clock_ms {clock_ms} recorded, seat {}'s clock under {} gives {left} after think_ms \
                 {think}",
                a.seat,
                clock.control()
            ));
        }
        Ok(())
    }

    /// Each seat's clock after the lines checked, by seat index; `None` when the record
    /// has no time control.
    pub fn into_clocks(self) -> Option<Vec<SeatClock>> {
        self.clocks
    }
}
