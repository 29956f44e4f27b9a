//! What a record shows a viewer up to a ply, omniscient or as one seat was told it:
//! the line `show` prints for each record line, the events of the last one, and the
//! ending. Its own room because three readers must agree on it to the byte: the text
//! and SVG of `referee show`, its HTML pages, and the picture attached to a mail game's
//! messages (`pbm`), which is `show --format svg --ply K --seat N` of the record as
//! it stood.

use crate::game::{Game, Played, Seat};
use crate::record::{step, Header, Line, Replay, ResultLine};

/// What replaying the lines up to the ply shown found.
pub struct Shown {
    /// The line `show` prints for each record line replayed, in order.
    pub text: String,
    /// The result line, if it was reached.
    pub result: Option<ResultLine>,
    /// The events of the last line shown, as the viewer was told them.
    pub last_events: Vec<String>,
}

/// Replays the lines of `replay` on `game` (at the start) up to ply `upto`,
/// omniscient or as `seat_shown` saw them. Lines that add no ply (forfeits, the
/// result, deadlines, commitments) after ply `upto` still belong to it: they happened
/// before the next ply, so `--ply K` of the last ply shows what the whole record does.
pub fn replayed_lines(replay: &Replay, game: &mut dyn Game, seat_shown: Option<Seat>, upto: u32) -> Shown {
    let mut out = String::new();
    let mut result = None;
    let mut last_events = Vec::new();
    for line in &replay.lines {
        if game.plies() >= upto && matches!(line, Line::Action(_)) {
            break;
        }
        if let Line::Result(r) = line {
            result = Some(r.clone());
            continue;
        }
        if let Line::Deadline(d) = line {
            // A mail game's clock: shown to the seats `pbm tick` told of it.
            if seat_shown.is_none_or(|seat| d.told_to(seat)) {
                out.push_str(&format!("      {}\n", d.summary()));
            }
            continue;
        }
        let Some(played) = step(game, line) else {
            continue;
        };
        let (text, told) = told(line, &played, &*game, seat_shown);
        out.push_str(&text);
        out.push('\n');
        last_events = told;
    }
    Shown {
        text: out,
        result,
        last_events,
    }
}

/// The line `show` prints for a record `line` that `played` as it did on `game`,
/// omniscient or as `seat_shown` was told it, and the events it told that viewer.
pub fn told(
    line: &Line,
    played: &Played,
    game: &dyn Game,
    seat_shown: Option<Seat>,
) -> (String, Vec<String>) {
    match seat_shown {
        // A seat saw its own events, not the omniscient ones. A line that told
        // nobody anything has no per-seat lists at all; verify refuses such lines,
        // and this reads one as telling the seat nothing rather than panicking.
        Some(seat) => {
            let seen: Vec<String> = played
                .seat_events
                .get(seat.index())
                .map_or(&[][..], Vec::as_slice)
                .iter()
                .map(|e| e.text().to_string())
                .collect();
            (format!("{:>4}. {}", game.plies(), seen.join("; ")), seen)
        }
        None => {
            let heading = match line {
                Line::Action(a) => match &played.taken {
                    Some(t) => format!("{:>4}. seat {} {t} (requested {})", a.ply, a.seat, a.action),
                    None => format!("{:>4}. seat {} {}", a.ply, a.seat, a.action),
                },
                Line::Forfeit(f) => format!("      seat {} forfeits: {}", f.seat, f.reason),
                _ => String::new(),
            };
            (
                format!("{heading}  [{}]", played.events.join("; ")),
                played.events.clone(),
            )
        }
    }
}

/// Who played each seat: `seat 1 Blue (greedy)`.
pub fn players(header: &Header) -> Vec<String> {
    header
        .seats
        .iter()
        .map(|s| format!("seat {} {} ({})", s.seat, s.label, s.name))
        .collect()
}

/// The last line `show` prints: the result once the shown plies reach it,
/// `unfinished` for a record without one, otherwise nothing.
pub fn ending(game: &dyn Game, reached: bool, unfinished: bool, header: &Header) -> Option<String> {
    let labels: Vec<String> = header.seats.iter().map(|s| s.label.clone()).collect();
    match (reached, game.outcome()) {
        (true, Some(outcome)) => Some(format!(
            "result: {}, after {} plies",
            outcome.describe(game.id(), &labels),
            game.plies()
        )),
        _ if unfinished => Some("unfinished".to_string()),
        _ => None,
    }
}
