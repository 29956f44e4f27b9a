//! Time controls (`--tc [moves/]seconds[+increment]`, `--st seconds`) and the seat
//! clocks they drive. Time is measured on the monotonic clock from the moment `go`
//! has been written to the agent until its `bestmove` line has been read.

use std::fmt;
use std::time::Duration;

use nom::character::complete::{char, digit1, u32 as dec_u32};
use nom::combinator::{all_consuming, opt, recognize};
use nom::sequence::{pair, preceded, terminated};
use nom::{IResult, Parser};

use crate::protocol::agent::GoClock;

/// A time control.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimeControl {
    /// cutechess-style `[moves/]seconds[+increment]`.
    Clock {
        /// Moves per period (`None`: the whole game is one period).
        moves: Option<u32>,
        /// Time per period.
        base: Duration,
        /// Added after each of the seat's moves.
        increment: Duration,
    },
    /// A fixed time per decision (`--st`).
    PerMove(Duration),
}

/// Why a time-control string was rejected.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("bad time control `{text}`: {reason}")]
pub struct TimeControlError {
    text: String,
    reason: &'static str,
}

/// Parses a non-negative decimal number of seconds, e.g. `10`, `0.5`, `.25`.
fn seconds(i: &str) -> IResult<&str, Duration> {
    let (rest, text) = recognize(pair(opt(digit1), opt(preceded(char('.'), digit1)))).parse(i)?;
    match text.parse::<f64>() {
        Ok(s) if s.is_finite() && s <= 1e9 => Ok((rest, Duration::from_secs_f64(s))),
        _ => Err(nom::Err::Error(nom::error::Error::new(
            i,
            nom::error::ErrorKind::Float,
        ))),
    }
}

impl TimeControl {
    /// Parses `[moves/]seconds[+increment]` (e.g. `40/60+0.5`, `10+0.1`, `5`).
    pub fn parse_tc(text: &str) -> Result<TimeControl, TimeControlError> {
        let err = |reason| TimeControlError {
            text: text.to_string(),
            reason,
        };
        let parsed = all_consuming((
            opt(terminated(dec_u32, char('/'))),
            seconds,
            opt(preceded(char('+'), seconds)),
        ))
        .parse(text);
        let (_, (moves, base, increment)) =
            parsed.map_err(|_| err("expected [moves/]seconds[+increment], e.g. 40/60+0.5"))?;
        if moves == Some(0) {
            return Err(err("moves per period must be at least 1"));
        }
        let increment = increment.unwrap_or_default();
        if base.is_zero() && increment.is_zero() {
            return Err(err("the control gives no time at all"));
        }
        Ok(TimeControl::Clock {
            moves,
            base,
            increment,
        })
    }

    /// Parses a control as a record header stores it (`40/60+0.5`, or `st=1`).
    pub fn parse_recorded(text: &str) -> Result<TimeControl, TimeControlError> {
        match text.strip_prefix("st=") {
            Some(st) => TimeControl::parse_st(st),
            None => TimeControl::parse_tc(text),
        }
    }

    /// Parses `--st` seconds per move.
    pub fn parse_st(text: &str) -> Result<TimeControl, TimeControlError> {
        match all_consuming(seconds).parse(text) {
            Ok((_, d)) if !d.is_zero() => Ok(TimeControl::PerMove(d)),
            _ => Err(TimeControlError {
                text: text.to_string(),
                reason: "expected a positive number of seconds per move",
            }),
        }
    }
}

impl fmt::Display for TimeControl {
    /// The form records store and `--tc`/`--st` accept back.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TimeControl::PerMove(d) => write!(f, "st={}", d.as_secs_f64()),
            TimeControl::Clock {
                moves,
                base,
                increment,
            } => {
                if let Some(m) = moves {
                    write!(f, "{m}/")?;
                }
                write!(f, "{}", base.as_secs_f64())?;
                if !increment.is_zero() {
                    write!(f, "+{}", increment.as_secs_f64())?;
                }
                Ok(())
            }
        }
    }
}

/// One seat's clock under a time control.
#[derive(Clone, Debug)]
pub struct SeatClock {
    control: TimeControl,
    left: Duration,
    moves_made: u32,
}

impl SeatClock {
    /// A full clock at the start of a game.
    pub fn new(control: TimeControl) -> SeatClock {
        let left = match control {
            TimeControl::Clock { base, .. } => base,
            TimeControl::PerMove(d) => d,
        };
        SeatClock {
            control,
            left,
            moves_made: 0,
        }
    }

    /// The time control this clock runs under.
    pub fn control(&self) -> TimeControl {
        self.control
    }

    /// Time this seat may use for the coming decision (before the margin).
    pub fn budget(&self) -> Duration {
        match self.control {
            TimeControl::PerMove(d) => d,
            // The increment is added after the move, as in cutechess-cli; allowing it
            // now is what makes a `0+inc` control playable.
            TimeControl::Clock { base, increment, .. } if base.is_zero() => {
                self.left.saturating_add(increment)
            }
            TimeControl::Clock { .. } => self.left,
        }
    }

    /// Time left on the clock now.
    pub fn left(&self) -> Duration {
        self.left
    }

    /// What the `go` line tells the agent.
    pub fn go(&self) -> GoClock {
        match self.control {
            TimeControl::PerMove(d) => GoClock::MoveTime(d.as_millis() as u64),
            TimeControl::Clock { moves, increment, .. } => GoClock::Clock {
                time_ms: self.left.as_millis() as u64,
                inc_ms: increment.as_millis() as u64,
                moves_to_go: moves.map(|m| m - self.moves_made % m),
            },
        }
    }

    /// Charges `used` for one decision; `false` means the flag fell (`used` exceeded
    /// the budget by more than `margin`). The flag falls on the exact time, but the
    /// clock is charged the whole milliseconds a record keeps as `think_ms`, so that
    /// replaying the record's think times with [`SeatClock::spend`] gives every
    /// `clock_ms` it holds exactly (`verify`, `match --resume`).
    pub fn charge(&mut self, used: Duration, margin: Duration) -> bool {
        if used > self.budget().saturating_add(margin) {
            self.left = Duration::ZERO;
            return false;
        }
        self.spend(whole_ms(used));
        true
    }

    /// What a decision that took `used` and did not lose on time does to the clock:
    /// the increment is added and `used` taken off (down to zero, when the seat used
    /// part of the margin), and a new period begins after its last move. Saturating,
    /// as the times may come from a record.
    pub fn spend(&mut self, used: Duration) {
        match self.control {
            TimeControl::PerMove(_) => {}
            TimeControl::Clock {
                moves,
                base,
                increment,
            } => {
                self.left = self.left.saturating_add(increment).saturating_sub(used);
                self.moves_made = self.moves_made.wrapping_add(1);
                if moves.is_some_and(|m| self.moves_made % m == 0) {
                    self.left = self.left.saturating_add(base);
                }
            }
        }
    }
}

/// `d` cut to whole milliseconds, the unit of `think_ms` and `clock_ms`.
pub fn whole_ms(d: Duration) -> Duration {
    Duration::from_millis(u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_cutechess_controls() {
        assert_eq!(
            TimeControl::parse_tc("40/60+0.5").unwrap(),
            TimeControl::Clock {
                moves: Some(40),
                base: Duration::from_secs(60),
                increment: Duration::from_millis(500)
            }
        );
        assert_eq!(
            TimeControl::parse_tc("10").unwrap(),
            TimeControl::Clock {
                moves: None,
                base: Duration::from_secs(10),
                increment: Duration::ZERO
            }
        );
        assert!(TimeControl::parse_tc("0+0.1").is_ok());
        for bad in [
            "", "a", "40/", "/60", "0/60", "60+", "60+x", "0", "-1", "1e3", "60 +1", "inf",
        ] {
            assert!(TimeControl::parse_tc(bad).is_err(), "{bad}");
        }
        assert_eq!(
            TimeControl::parse_st("0.25").unwrap(),
            TimeControl::PerMove(Duration::from_millis(250))
        );
        assert!(TimeControl::parse_st("0").is_err());
        assert_eq!(
            TimeControl::parse_tc("40/60+0.5").unwrap().to_string(),
            "40/60+0.5"
        );
    }

    #[test]
    fn clock_adds_increment_and_new_periods() {
        let tc = TimeControl::parse_tc("2/10+1").unwrap();
        let mut c = SeatClock::new(tc);
        let margin = Duration::ZERO;
        assert!(c.charge(Duration::from_secs(3), margin));
        assert_eq!(c.left(), Duration::from_secs(8));
        assert!(c.charge(Duration::from_secs(1), margin));
        // 8 + 1 - 1, then a new period of 10.
        assert_eq!(c.left(), Duration::from_secs(18));
        assert!(!c.charge(Duration::from_secs(19), margin));
        // Charged in whole milliseconds: 2.9 ms costs 2 ms, as `think_ms` records it.
        let mut c = SeatClock::new(TimeControl::parse_tc("1+0").unwrap());
        assert!(c.charge(Duration::from_micros(2_900), margin));
        assert_eq!(c.left(), Duration::from_millis(998));
        // Past the budget but within the margin: the clock stops at zero.
        assert!(c.charge(Duration::from_millis(1_020), Duration::from_millis(50)));
        assert_eq!(c.left(), Duration::ZERO);
        let mut st = SeatClock::new(TimeControl::parse_st("1").unwrap());
        assert!(st.charge(Duration::from_millis(1050), Duration::from_millis(100)));
        assert!(!st.charge(Duration::from_millis(1200), Duration::from_millis(100)));
    }
}
