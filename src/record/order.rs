//! Checks that span lines of a record rather than sit in one: the lines' times never
//! go backwards, and a missed deadline (`deadline` line, `passed` or `forfeited`) is
//! followed by what it says happened. Its own room to keep the replay about the rules.

use std::time::SystemTime;

use super::{DeadlineEvent, DeadlineLine};
use crate::game::{ForfeitKind, Seat};

/// What a line is, as far as [`Order`] cares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Kind<'a> {
    /// An action line of the seat.
    Action(Seat),
    /// A forfeit line of the seat, for the reason.
    Forfeit(Seat, ForfeitKind),
    /// A deadline line.
    Deadline(&'a DeadlineLine),
    /// Any other line.
    Other,
}

/// What the lines so far require of the next ones.
#[derive(Debug, Default)]
pub(super) struct Order {
    /// The time of the last line that had one: no line may be earlier.
    last_time: Option<(SystemTime, String)>,
    /// A missed deadline's seat and event, which the next line must carry out.
    missed: Option<(Seat, DeadlineEvent)>,
}

impl Order {
    /// Checks the next line: its `time`, if it has one (lines without one come from
    /// records written before lines carried times), and what a missed deadline
    /// before it requires.
    pub fn check(&mut self, time: Option<&str>, kind: Kind<'_>) -> Result<(), String> {
        self.check_time(time)?;
        if let Some((seat, event)) = self.missed.take() {
            let done = match event {
                DeadlineEvent::Passed => kind == Kind::Action(seat),
                _ => kind == Kind::Forfeit(seat, ForfeitKind::Timeout),
            };
            if !done {
                let what = match event {
                    DeadlineEvent::Passed => "its action",
                    _ => "its timeout forfeit",
                };
                return Err(format!(
                    "seat {seat} missed its deadline, and this line is not {what}"
                ));
            }
        }
        if let Kind::Deadline(d) = kind {
            if matches!(d.event, DeadlineEvent::Passed | DeadlineEvent::Forfeited) {
                self.missed = Some((d.seat, d.event));
            }
            if (d.event == DeadlineEvent::Extended) != d.until.is_some() {
                return Err("`until` is given with an extension and only then".into());
            }
        }
        Ok(())
    }

    /// The latest time of the lines checked.
    pub fn last_time(&self) -> Option<SystemTime> {
        self.last_time.as_ref().map(|(t, _)| *t)
    }

    /// Whether a missed deadline still waits for its line: a record cannot end so.
    pub fn unfinished(&self) -> bool {
        self.missed.is_some()
    }

    fn check_time(&mut self, time: Option<&str>) -> Result<(), String> {
        let Some(text) = time else { return Ok(()) };
        let t = crate::wall_clock::parse_rfc3339(text)
            .ok_or_else(|| format!("time {text:?} is not an RFC 3339 UTC time"))?;
        if let Some((last, last_text)) = &self.last_time {
            if t < *last {
                return Err(format!(
                    "time {text} is earlier than {last_text}, the time of a line before it"
                ));
            }
        }
        self.last_time = Some((t, text.to_string()));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn missed(event: DeadlineEvent) -> DeadlineLine {
        DeadlineLine {
            seat: Seat::new(2).unwrap(),
            event,
            deadline: "2026-01-01T00:00:00Z".into(),
            until: None,
            time: None,
        }
    }

    #[test]
    fn times_may_repeat_but_never_go_back() {
        let mut o = Order::default();
        for t in [
            "2026-01-01T00:00:00Z",
            "2026-01-01T00:00:00Z",
            "2026-01-02T00:00:00Z",
        ] {
            o.check(Some(t), Kind::Other).unwrap();
        }
        o.check(None, Kind::Other).unwrap();
        let e = o.check(Some("2026-01-01T23:59:59Z"), Kind::Other).unwrap_err();
        assert!(e.contains("earlier than 2026-01-02T00:00:00Z"), "{e}");
        assert!(o.check(Some("soon"), Kind::Other).is_err());
    }

    #[test]
    fn a_missed_deadline_is_carried_out_by_the_next_line() {
        let seat = Seat::new(2).unwrap();
        let passed = missed(DeadlineEvent::Passed);
        let forfeited = missed(DeadlineEvent::Forfeited);
        let mut o = Order::default();
        o.check(None, Kind::Deadline(&passed)).unwrap();
        assert!(o.unfinished());
        o.check(None, Kind::Action(seat)).unwrap();
        o.check(None, Kind::Deadline(&forfeited)).unwrap();
        assert!(o.check(None, Kind::Forfeit(seat, ForfeitKind::Resign)).is_err());
        o.check(None, Kind::Deadline(&passed)).unwrap();
        assert!(o.check(None, Kind::Action(Seat::new(1).unwrap())).is_err());
        let mut extended = missed(DeadlineEvent::Extended);
        assert!(Order::default().check(None, Kind::Deadline(&extended)).is_err());
        extended.until = Some("2026-01-02T00:00:00Z".into());
        Order::default().check(None, Kind::Deadline(&extended)).unwrap();
    }
}
