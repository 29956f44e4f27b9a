//! The messages mailed to the seats: each one names the record line and its salted
//! chain hash (R-S1), the commitment, the events the seat was told since a line, its
//! view and diagram, and what it is to do. Its own room because it is all a seat ever
//! learns of the game, so it is where information hiding shows; [`super::audit`]
//! reads these messages back.

use std::fmt::Write as _;

use super::{Message, Open, PbmError, Picture};
use crate::game::{Game, Seat, SeatEvent, Turn};
use crate::record::{self, salted_digest, Header, Line, Replay, SecretKey};

/// Marks the start of a message, with the seat it is for (audit reads these).
pub(super) const BEGIN: &str = "=== referee play-by-mail message to seat";
/// Marks its end.
pub(super) const END: &str = "=== end of message ===";

/// What each seat was told by each record line: `(line number, events per seat)`
/// (a line that told nothing may have no per-seat entries at all: use [`told_to`]).
pub(super) fn told_by_line(replay: &Replay) -> Vec<(usize, Vec<Vec<SeatEvent>>)> {
    let mut game = record::start_game(&replay.header).expect("verified record");
    replay
        .lines
        .iter()
        .enumerate()
        .filter_map(|(i, line)| record::step(game.as_mut(), line).map(|p| (i + 2, p.seat_events)))
        .collect()
}

/// What `seat` was told by one line.
pub(super) fn told_to(told: &[Vec<SeatEvent>], seat: Seat) -> &[SeatEvent] {
    told.get(seat.index()).map_or(&[], Vec::as_slice)
}

/// The record as it stood when a message was made: its first `line` lines, and the
/// game after them. A message is made from this alone, so that `audit` can make it
/// again from the final record.
pub(super) struct AtLine<'a> {
    /// The header.
    pub header: &'a Header,
    /// The game after line `line`.
    pub game: &'a dyn Game,
    /// The lines after the header, up to line `line` (more are ignored).
    pub lines: &'a [Line],
    /// The number of the last line (the header is line 1).
    pub line: usize,
    /// The chain hash of line `line`.
    pub hash: &'a str,
    /// What each line told each seat ([`told_by_line`]; lines past `line` are ignored).
    pub told: &'a [(usize, Vec<Vec<SeatEvent>>)],
}

/// Builds the message for `seat` covering what it was told after record line `since`.
pub(super) fn message(open: &Open, seat: Seat, since: usize) -> Result<Message, PbmError> {
    let told = told_by_line(&open.replay);
    let at = AtLine {
        header: &open.replay.header,
        game: open.replay.game.as_ref(),
        lines: &open.replay.lines,
        line: open.chain.len(),
        hash: &open.chain[open.chain.len() - 1],
        told: &told,
    };
    let text = render(&at, seat, since, open.salt()?, open.key.as_ref());
    Ok(Message {
        seat,
        text,
        reply_to: None,
        picture: picture(open, seat)?,
    })
}

/// The picture for `seat`'s mail, drawn from the same open record as its text (read
/// once, so both show the same line even while other mails update the record), by
/// the code `show --format svg --ply K --seat N` runs: it holds only what that seat
/// was told. `None` for a game that mails no one.
fn picture(open: &Open, seat: Seat) -> Result<Option<Picture>, PbmError> {
    if super::outbox::read(&open.path)?.is_none() {
        return Ok(None);
    }
    let ply = open.replay.game.plies();
    let svg = crate::picture::of_record(&open.replay, Some(seat), ply)
        .map_err(|e| PbmError::Invalid(format!("{}: seat {seat}: {e}", open.path.display())))?;
    Ok(Some(Picture { ply, svg }))
}

/// The text of the message for `seat` at `at`, covering what it was told after
/// record line `since`, signed with `key` if any.
pub(super) fn render(
    at: &AtLine<'_>,
    seat: Seat,
    since: usize,
    salt: &str,
    key: Option<&SecretKey>,
) -> String {
    let game = at.game;
    let h = at.header;
    let names: Vec<&str> = h.seats.iter().map(|s| s.name.as_str()).collect();
    let lines = &at.lines[..at.lines.len().min(at.line.saturating_sub(1))];
    let mut t = String::new();
    let _ = writeln!(t, "{BEGIN} {seat} ({}) ===", names[seat.index()]);
    let _ = writeln!(t, "game: {} {}", h.game, h.options);
    let _ = writeln!(t, "you: seat {seat}, {}", game.seat_label(seat));
    // Who is who, so a person can answer another by name; all public (the header).
    let label = |s: Seat| format!("seat {s} {} ({})", names[s.index()], game.seat_label(s));
    let all: Vec<String> = Seat::all(game.seat_count()).map(label).collect();
    let _ = writeln!(t, "players: {}", all.join(", "));
    let partners: Vec<String> = game.partners(seat).into_iter().map(label).collect();
    if !partners.is_empty() {
        let _ = writeln!(t, "partners: {}", partners.join(", "));
    }
    // R-S1: the chain hash covers hidden facts, so seats get it salted.
    let salted = salted_digest(salt, "chain", at.hash);
    let _ = writeln!(t, "record: line {}, hash {salted}", at.line);
    // Over the salted hash only: a signature over anything unsalted could be
    // checked against guesses of what the seat may not know.
    if let Some(key) = key {
        let _ = writeln!(
            t,
            "signature: {}",
            key.sign_message(seat.number(), at.line, &salted)
        );
    }
    for line in lines {
        if let Line::Commit(c) = line {
            let _ = writeln!(t, "commitment: {}", c.commitment);
        }
    }
    let _ = writeln!(t, "since line {since}:");
    for (_, told) in at.told.iter().filter(|(n, _)| *n > since && *n <= at.line) {
        for e in told_to(told, seat) {
            let _ = writeln!(t, "  event {}", e.text());
        }
    }
    let _ = writeln!(t, "view: {}", game.view(seat).text());
    for l in game.diagram(Some(seat)).lines() {
        let _ = writeln!(t, "  | {l}");
    }
    let revealed = lines.iter().find_map(|l| match l {
        Line::Reveal(r) => Some(&r.salt),
        _ => None,
    });
    match (game.outcome(), game.turn()) {
        (Some(o), _) => {
            let _ = writeln!(t, "result: {}", o.protocol_text());
            if let Some(s) = revealed {
                let _ = writeln!(t, "salt: {s}");
            }
        }
        (None, Turn::Act { seat: to, kind }) if to == seat => {
            let _ = writeln!(t, "your turn: {kind}");
            let _ = writeln!(t, "legal: {}", short_legal(&game.legal_actions()));
            // Public: the time of a line every seat was told of, plus the rule's.
            if let Some(cur) = super::deadline::current(h, lines, seat) {
                let _ = writeln!(t, "deadline: {}", crate::wall_clock::format_rfc3339(cur.deadline));
            }
        }
        (None, Turn::Act { seat: to, kind }) => {
            let _ = writeln!(t, "waiting for: seat {to} ({}) to {kind}", names[to.index()]);
        }
        (None, Turn::Over) => {}
    }
    let _ = writeln!(t, "{END}");
    t
}

/// The legal actions, grouped by their first four characters (a from-square pair or
/// a placement type) when there are many, so a person can read them.
fn short_legal(legal: &[String]) -> String {
    if legal.len() <= 40 {
        return legal.join(" ");
    }
    let mut groups: Vec<(String, Vec<String>)> = Vec::new();
    for a in legal {
        let (head, tail) = match a.find(['-', '@']) {
            Some(i) if i > 0 => (a[..i].to_string(), a[i..].to_string()),
            _ if a.len() > 2 && a.is_char_boundary(2) => (a[..2].to_string(), a[2..].to_string()),
            _ => (a.clone(), String::new()),
        };
        match groups.iter_mut().find(|(h, _)| *h == head) {
            Some((_, v)) => v.push(tail),
            None => groups.push((head, vec![tail])),
        }
    }
    groups
        .iter()
        .map(|(h, v)| format!("{h}[{}]", v.join(" ")))
        .collect::<Vec<_>>()
        .join(" ")
}
