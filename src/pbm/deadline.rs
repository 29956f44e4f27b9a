//! Deadlines of a mail game (`pbm new --deadline`, `pbm tick`): a seat has a fixed
//! time to act from the record line that made it its turn; `pbm tick`, run from cron
//! or a timer, reminds it once a turn and applies the missed-move rule (`--nmr`) when
//! the deadline passes. Its own room because everything about deadlines is computed
//! here from the record alone (the header's rule and the lines' times), so a message
//! remade by `audit` shows the same deadline, and nothing a seat may not know goes
//! into one: a deadline is the public time of a public line plus a public duration.

use std::path::Path;
use std::time::{Duration, SystemTime};

use super::message::message;
use super::update::{commit_if_due, locked, settled, write_changes};
use super::{Message, Open, PbmError};
use crate::game::{ForfeitKind, Game, Seat, Turn};
use crate::record::{ActionLine, DeadlineEvent, DeadlineLine, DeadlineRule, ForfeitLine, Header, Line, Nmr};
use crate::wall_clock::{format_rfc3339, parse_rfc3339};

/// The longest duration `--deadline` and `--reminder` take: a year.
const MAX_SECONDS: u64 = 365 * 86_400;

/// Reads a duration like `72h`, `30m`, `2d` or `90s` as seconds (at least 1, at most
/// a year).
pub fn parse_duration(text: &str) -> Result<u64, String> {
    let bad = || format!("`{text}` is not a duration like 72h, 30m, 2d or 90s (a year at most)");
    let unit = match text.chars().last() {
        Some('s') => 1,
        Some('m') => 60,
        Some('h') => 3_600,
        Some('d') => 86_400,
        _ => return Err(bad()),
    };
    let digits = &text[..text.len() - 1];
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad());
    }
    let n: u64 = digits.parse().map_err(|_| bad())?;
    match n.checked_mul(unit) {
        Some(s) if (1..=MAX_SECONDS).contains(&s) => Ok(s),
        _ => Err(bad()),
    }
}

/// The rule `pbm new` stores, from its flags; a reminder or `--nmr` without a
/// deadline, or a reminder not shorter than the deadline, is refused.
pub fn rule(
    deadline: Option<u64>,
    reminder: Option<u64>,
    nmr: Option<Nmr>,
) -> Result<Option<DeadlineRule>, PbmError> {
    let Some(seconds) = deadline else {
        if reminder.is_some() || nmr.is_some() {
            return Err(PbmError::Usage("--reminder and --nmr need --deadline".into()));
        }
        return Ok(None);
    };
    if reminder.is_some_and(|r| r >= seconds) {
        return Err(PbmError::Usage(
            "--reminder must be shorter than --deadline".into(),
        ));
    }
    Ok(Some(DeadlineRule {
        seconds,
        reminder,
        nmr: nmr.unwrap_or(Nmr::Forfeit),
    }))
}

/// Where the seat to act stands with its deadline.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Current {
    /// The seat to act.
    pub seat: Seat,
    /// When its time runs out.
    pub deadline: SystemTime,
    /// Whether it was reminded this turn.
    pub reminded: bool,
    /// Whether its deadline was extended this turn.
    pub extended: bool,
}

/// The deadline of `seat`, to act after `lines` (the record's after the header):
/// the time of the last action or forfeit (or of the header) plus the rule's
/// duration, or the extension's end. `None` for a game without deadlines, or
/// whose lines have no times (written before lines carried them).
pub(super) fn current(header: &Header, lines: &[Line], seat: Seat) -> Option<Current> {
    let rule = header.deadline?;
    let mut start = header.time.as_deref();
    let (mut reminded, mut until) = (false, None);
    for line in lines {
        match line {
            Line::Action(_) | Line::Forfeit(_) => {
                start = line.time();
                (reminded, until) = (false, None);
            }
            Line::Deadline(d) if d.seat == seat => match d.event {
                DeadlineEvent::Reminder => reminded = true,
                DeadlineEvent::Extended => until = d.until.as_deref(),
                DeadlineEvent::Passed | DeadlineEvent::Forfeited => {}
            },
            _ => {}
        }
    }
    let deadline = match until {
        Some(t) => parse_rfc3339(t)?,
        None => parse_rfc3339(start?)? + Duration::from_secs(rule.seconds),
    };
    Some(Current {
        seat,
        deadline,
        reminded,
        extended: until.is_some(),
    })
}

/// The seat to act in `game` and its deadline, if the game has deadlines.
pub(super) fn to_act(header: &Header, game: &dyn Game, lines: &[Line]) -> Option<Current> {
    match (game.outcome(), game.turn()) {
        (None, Turn::Act { seat, .. }) => current(header, lines, seat),
        _ => None,
    }
}

/// Reminds the seat to act and applies the missed-move rule to deadlines passed, as
/// of the wall clock now; returns the messages to send (none when nothing was due,
/// and then the record is untouched).
pub fn tick(path: &Path) -> Result<Vec<Message>, PbmError> {
    let held = locked(path)?;
    settled(&held, path)?;
    let open = Open::read(path)?;
    // A record that is not a mail game is bad input here as in every `pbm` command.
    let salt = open.salt()?.to_string();
    let Some(rule) = open.replay.header.deadline else {
        return Ok(Vec::new());
    };
    let now = crate::wall_clock::now();
    let mut game = open.replay.game.boxed_clone();
    let mut lines = open.replay.lines.clone();
    due(&open.replay.header, &rule, game.as_mut(), &mut lines, now, &salt);
    if lines.len() == open.replay.lines.len() {
        return Ok(Vec::new());
    }
    let written: Vec<DeadlineLine> = lines[open.replay.lines.len()..]
        .iter()
        .filter_map(|l| match l {
            Line::Deadline(d) => Some(d.clone()),
            _ => None,
        })
        .collect();
    let reminder_only = lines[open.replay.lines.len()..]
        .iter()
        .all(|l| matches!(l, Line::Deadline(d) if d.event == DeadlineEvent::Reminder));
    let messages = match reminder_only {
        true => reminded(&held, path, &open, &lines)?,
        false => write_changes(&held, path, &open, game.as_ref(), lines, salt)?,
    };
    Ok(messages.into_iter().map(|m| noted(m, &written)).collect())
}

/// Appends to `lines` what is due `now`: every missed deadline's rule applied in
/// turn, then the reminder of the seat to act.
fn due(
    header: &Header,
    rule: &DeadlineRule,
    game: &mut dyn Game,
    lines: &mut Vec<Line>,
    now: SystemTime,
    salt: &str,
) {
    // Each pass settles one missed deadline; a seat's next one starts now, so this
    // ends, and the bound only guards against a game that never moves on.
    for _ in 0..=4 * game.seat_count() {
        let Some(cur) = to_act(header, game, lines) else {
            break;
        };
        if now < cur.deadline {
            remind(rule, cur, now, lines);
            break;
        }
        missed(game, rule, cur, now, lines, salt);
    }
}

/// Records a reminder for the seat to act, if one is due and none was sent this turn.
fn remind(rule: &DeadlineRule, cur: Current, now: SystemTime, lines: &mut Vec<Line>) {
    let Some(before) = rule.reminder else { return };
    if cur.reminded || now + Duration::from_secs(before) < cur.deadline {
        return;
    }
    let deadline = format_rfc3339(cur.deadline);
    push_deadline(lines, cur.seat, DeadlineEvent::Reminder, deadline, None, now);
}

/// Writes a reminder line alone; only the reminded seat is sent a message.
fn reminded(
    held: &super::store::Locked,
    path: &Path,
    open: &Open,
    lines: &[Line],
) -> Result<Vec<Message>, PbmError> {
    let Some(Line::Deadline(d)) = lines.last() else {
        return Ok(Vec::new());
    };
    super::store::rewrite(held, path, &open.replay.header, lines)?;
    Ok(vec![message(&Open::read(path)?, d.seat, open.chain.len())?])
}

/// Applies the missed-move rule to the seat to act, whose deadline has passed.
fn missed(
    game: &mut dyn Game,
    rule: &DeadlineRule,
    cur: Current,
    now: SystemTime,
    lines: &mut Vec<Line>,
    salt: &str,
) {
    let (seat, missed) = (cur.seat, format_rfc3339(cur.deadline));
    let pass = rule.nmr == Nmr::Pass && game.legal_actions().iter().any(|a| a == "pass");
    if rule.nmr == Nmr::Extend && !cur.extended {
        let until = format_rfc3339(cur.deadline + Duration::from_secs(rule.seconds));
        push_deadline(lines, seat, DeadlineEvent::Extended, missed, Some(until), now);
    } else if pass {
        push_deadline(lines, seat, DeadlineEvent::Passed, missed, None, now);
        lines.push(pass_line(game, seat, now));
    } else {
        let detail = format!("missed its deadline {missed}");
        push_deadline(lines, seat, DeadlineEvent::Forfeited, missed, None, now);
        lines.push(forfeit_line(game, seat, detail, now));
    }
    commit_if_due(game, lines, salt);
}

/// Plays the pass of `seat`, which the caller found among its legal actions.
fn pass_line(game: &mut dyn Game, seat: Seat, now: SystemTime) -> Line {
    // The games here allow a pass only when it is forced (R-B5, R-M6).
    let forced = game.forced_action().is_some_and(|f| f == "pass");
    let played = game.play(seat, "pass").expect("a legal action");
    Line::Action(ActionLine {
        ply: game.plies(),
        seat,
        action: "pass".into(),
        taken: played.taken,
        forced,
        opening: false,
        events: played.events,
        think_ms: None,
        clock_ms: None,
        time: Some(format_rfc3339(now)),
    })
}

/// Forfeits `seat`, the seat to act (so one that can forfeit), as on time.
fn forfeit_line(game: &mut dyn Game, seat: Seat, detail: String, now: SystemTime) -> Line {
    let played = game.forfeit(seat, ForfeitKind::Timeout);
    Line::Forfeit(ForfeitLine {
        seat,
        reason: ForfeitKind::Timeout,
        detail,
        action: None,
        events: played.events,
        time: Some(format_rfc3339(now)),
    })
}

/// Appends a deadline line written `now`.
fn push_deadline(
    lines: &mut Vec<Line>,
    seat: Seat,
    event: DeadlineEvent,
    deadline: String,
    until: Option<String>,
    now: SystemTime,
) {
    let line = DeadlineLine {
        seat,
        event,
        deadline,
        until,
        time: Some(format_rfc3339(now)),
    };
    lines.push(Line::Deadline(line));
}

/// `m` with a note of each deadline line of `written` its seat is told of (another
/// seat's reminder is not, as `show --seat` shows it), after its marker line, as
/// the replies to a mail carry theirs.
fn noted(mut m: Message, written: &[DeadlineLine]) -> Message {
    let (first, rest) = m.text.split_once('\n').unwrap_or((&m.text, ""));
    let notes: String = written
        .iter()
        .filter(|d| d.told_to(m.seat))
        .map(|d| format!("note: {}\n", d.summary()))
        .collect();
    m.text = format!("{first}\n{notes}{rest}");
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_are_a_number_and_a_unit() {
        assert_eq!(parse_duration("72h"), Ok(72 * 3600));
        assert_eq!(parse_duration("30m"), Ok(1800));
        assert_eq!(parse_duration("2d"), Ok(2 * 86_400));
        assert_eq!(parse_duration("90s"), Ok(90));
        for bad in [
            "",
            "h",
            "0h",
            "-1h",
            "1.5h",
            "1w",
            "366d",
            "99999999999999999999d",
            "7 h",
        ] {
            assert!(parse_duration(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn pass_passes_a_seat_whose_only_action_is_a_pass() {
        // R-B5: blue has no move here, so its only action is a (forced) pass.
        let options = crate::game::Options::parse(["players=2"]).unwrap();
        let state = "11/11/11/11/11/5r5/11/11/r1r8/rr9/brr8 b 0";
        let mut game = crate::game::GameId::PegChow
            .create(&options, Some(state))
            .unwrap();
        let rule = DeadlineRule {
            seconds: 60,
            reminder: None,
            nmr: Nmr::Pass,
        };
        let seat = Seat::new(1).unwrap();
        let cur = Current {
            seat,
            deadline: SystemTime::UNIX_EPOCH,
            reminded: false,
            extended: false,
        };
        let mut lines = Vec::new();
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(61);
        missed(game.as_mut(), &rule, cur, now, &mut lines, "00");
        assert!(matches!(&lines[0], Line::Deadline(d) if d.event == DeadlineEvent::Passed));
        assert!(matches!(&lines[1], Line::Action(a) if a.action == "pass" && a.forced && a.seat == seat));
        assert_eq!(lines.len(), 2);
        assert!(matches!(&lines[0], Line::Deadline(d) if d.summary().ends_with("it passes")));
    }

    #[test]
    fn a_reminder_needs_a_longer_deadline() {
        assert!(rule(None, Some(60), None).is_err());
        assert!(rule(None, None, Some(Nmr::Pass)).is_err());
        assert!(rule(Some(60), Some(60), None).is_err());
        assert_eq!(rule(Some(60), None, None).unwrap().unwrap().nmr, Nmr::Forfeit);
    }
}
