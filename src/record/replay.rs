//! Reading a record back: [`replay`](fn@replay) re-checks every hash, re-plays every
//! line through the rules and checks the times, the result and the secrets revealed;
//! [`step`], [`seat_histories`] and [`start_game`] rebuild a game or what its seats
//! were told from a verified record. Its own room because it is what `verify`,
//! `show`, `match --resume` and play by mail all trust.

use std::fs::File;
use std::io::{self, BufRead};
use std::path::Path;

use super::chain::{is_lower_hex, salted_digest, sealed_line_hash, split_sealed_unchecked, HexHash};
use super::fast_action::{self, ActionRef};
use super::timing::Timing;
use super::{ActionLine, ForfeitLine, Header, Line, ResultLine, FORMAT, GENESIS};
use crate::clock::SeatClock;
use crate::game::{ForfeitKind, Game, GameId, Played, Seat, SeatEvent};

/// A problem found in a record, naming its line (1-based).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{}{message}", if *.line == 0 { String::new() } else { format!("line {line}: ") })]
pub struct RecordError {
    /// The first line that is wrong; 0 when the file could not be read at all.
    pub line: usize,
    /// What is wrong with it.
    pub message: String,
}

impl RecordError {
    /// Whether the file could not be read at all (bad input), rather than read and
    /// found wrong at a line (a failed check).
    pub fn is_unreadable(&self) -> bool {
        self.line == 0
    }

    fn at(line: usize, message: impl Into<String>) -> RecordError {
        RecordError {
            line,
            message: message.into(),
        }
    }
}

/// A record replayed and re-checked line by line.
#[derive(Debug)]
pub struct Replay {
    /// The header.
    pub header: Header,
    /// The game after the last line.
    pub game: Box<dyn Game>,
    /// The lines after the header, in order; empty after [`check_file`], which only
    /// counts them.
    pub lines: Vec<Line>,
    /// How many lines follow the header (kept or not).
    pub line_count: usize,
    /// How many of them are action lines.
    pub action_count: usize,
    /// The hash of the last line.
    pub last_hash: String,
    /// The result line, if the game finished.
    pub result: Option<ResultLine>,
    /// The number of a last line cut short by a crash (ignored), if any.
    pub torn: Option<usize>,
    /// Bytes of the complete lines: where an append must start.
    pub complete_len: u64,
    /// The secret salt, once a reveal line opened it.
    pub revealed: Option<String>,
    /// Each seat's clock after the last line, by seat index, as the match loop ran it
    /// (what a resumed match continues with); `None` when the header has no time
    /// control.
    pub clocks: Option<Vec<SeatClock>>,
}

/// Reads a record file and replays it, stopping at the first bad line.
pub fn replay_file(path: &Path) -> Result<Replay, RecordError> {
    replay_path(path, true)
}

/// [`replay_file`] without keeping the lines (`lines` stays empty): every check is
/// made, but a verification that only reports need not build and drop a `Line` per
/// action.
pub fn check_file(path: &Path) -> Result<Replay, RecordError> {
    replay_path(path, false)
}

/// Opens `path` and replays it, keeping its lines or not.
fn replay_path(path: &Path, keep: bool) -> Result<Replay, RecordError> {
    let file = File::open(path).map_err(|e| RecordError::at(0, format!("cannot open: {e}")))?;
    // Records run to hundreds of KiB: a larger buffer reads them in fewer calls.
    replay_lines(io::BufReader::with_capacity(64 * 1024, file), keep)
}

/// Replays a record: checks every hash, re-plays every action and forfeit through the
/// rules, compares every event, checks the times and flags of every action (with the
/// seats' clocks replayed), and checks the result.
pub fn replay(input: impl BufRead) -> Result<Replay, RecordError> {
    replay_lines(input, true)
}

/// [`replay`], keeping the lines after the header when `keep`.
fn replay_lines(mut input: impl BufRead, keep: bool) -> Result<Replay, RecordError> {
    let mut prev: HexHash = GENESIS.as_bytes().try_into().expect("64 hex digits");
    let mut header: Option<Header> = None;
    let mut game: Option<Box<dyn Game>> = None;
    let mut timing = Timing::default();
    let mut lines = Vec::new();
    let mut line_count = 0;
    let mut action_count = 0;
    let mut result = None;
    let mut torn = None;
    let mut complete_len = 0u64;
    let mut commitment: Option<(String, String)> = None;
    let mut revealed: Option<String> = None;
    let mut n = 0;
    let mut raw = Vec::new();
    loop {
        raw.clear();
        let read = input
            .read_until(b'\n', &mut raw)
            .map_err(|e| RecordError::at(n + 1, format!("cannot read: {e}")))?;
        if read == 0 {
            break;
        }
        n += 1;
        if raw.pop() != Some(b'\n') {
            // A last line without its newline was being written when the writer
            // died: it is not part of the record.
            torn = Some(n);
            break;
        }
        let text = std::str::from_utf8(&raw).map_err(|_| RecordError::at(n, "not UTF-8"))?;
        const NO_HASH: &str = "no trailing \"hash\" member of 64 hex digits";
        let (head, stored) = split_sealed_unchecked(text).ok_or_else(|| RecordError::at(n, NO_HASH))?;
        let computed = sealed_line_hash(&prev, head);
        if computed != stored.as_bytes() {
            // A hash equal to the computed one is hex, so only a mismatch needs a look.
            let message = if is_lower_hex(stored) {
                "hash mismatch: the line or one before it was altered"
            } else {
                NO_HASH
            };
            return Err(RecordError::at(n, message));
        }
        prev = computed;
        // Counted now: any later problem with the line ends the replay with an error.
        complete_len += read as u64;
        if let Some(a) = fast_action::parse(head) {
            if result.is_some() {
                return Err(RecordError::at(n, "a line after the result"));
            }
            let g = game
                .as_mut()
                .ok_or_else(|| RecordError::at(n, "the first line must be the header"))?;
            let events = check_action(g.as_mut(), &mut timing, a).map_err(|m| RecordError::at(n, m))?;
            line_count += 1;
            action_count += 1;
            if keep {
                lines.push(Line::Action(a.to_line(events)));
            }
            continue;
        }
        // The sealed text parses as the body: the `hash` member is simply ignored.
        let line = parse_line(text).map_err(|e| RecordError::at(n, format!("not a record line: {e}")))?;
        if result.is_some() && !matches!(line, Line::Reveal(_)) {
            return Err(RecordError::at(n, "a line after the result"));
        }
        match (&line, game.as_mut()) {
            (Line::Header(h), None) => {
                let g = start_game(h).map_err(|m| RecordError::at(n, m))?;
                timing = Timing::new(h, g.seat_count()).map_err(|m| RecordError::at(n, m))?;
                game = Some(g);
                header = Some(h.clone());
            }
            (Line::Header(_), Some(_)) => return Err(RecordError::at(n, "a second header")),
            (_, None) => return Err(RecordError::at(n, "the first line must be the header")),
            (Line::Action(a), Some(g)) => {
                check_action(g.as_mut(), &mut timing, ActionRef::of(a)).map_err(|m| RecordError::at(n, m))?;
            }
            (Line::Forfeit(f), Some(g)) => check_forfeit(g.as_mut(), f).map_err(|m| RecordError::at(n, m))?,
            (Line::Result(r), Some(g)) => {
                check_result(g.as_ref(), r).map_err(|m| RecordError::at(n, m))?;
                result = Some(r.clone());
            }
            (Line::Commit(c), Some(g)) => {
                let data = g.commitment_data().ok_or_else(|| {
                    RecordError::at(n, "a commitment where the game has nothing hidden to commit to")
                })?;
                if commitment.is_some() {
                    return Err(RecordError::at(n, "a second commitment"));
                }
                commitment = Some((c.commitment.clone(), data));
            }
            (Line::Reveal(r), Some(_)) => {
                if result.is_none() {
                    return Err(RecordError::at(n, "secrets revealed before the result"));
                }
                if revealed.is_some() {
                    return Err(RecordError::at(n, "a second reveal"));
                }
                if commitment.is_none() && r.data.is_some() {
                    return Err(RecordError::at(n, "data revealed without a commitment to it"));
                }
                if let Some((committed, data)) = &commitment {
                    if r.data.as_deref() != Some(data.as_str()) {
                        return Err(RecordError::at(
                            n,
                            "the revealed data is not the game's hidden part at the commitment",
                        ));
                    }
                    if salted_digest(&r.salt, "commit", data) != *committed {
                        return Err(RecordError::at(
                            n,
                            "the commitment does not open to the revealed salt and data",
                        ));
                    }
                }
                revealed = Some(r.salt.clone());
            }
        }
        if !matches!(line, Line::Header(_)) {
            line_count += 1;
            action_count += usize::from(matches!(line, Line::Action(_)));
            if keep {
                lines.push(line);
            }
        }
    }
    match (header, game) {
        (Some(header), Some(game)) => Ok(Replay {
            header,
            game,
            lines,
            line_count,
            action_count,
            last_hash: std::str::from_utf8(&prev).expect("hex is ASCII").to_string(),
            result,
            torn,
            complete_len,
            revealed,
            clocks: timing.into_clocks(),
        }),
        _ => Err(RecordError::at(1, "empty record: no complete header line")),
    }
}

/// Parses one line. Action lines, nearly all of a record, start with their type as
/// this referee writes them and go straight to their struct; anything else goes
/// through the tagged enum, which buffers the object first.
fn parse_line(text: &str) -> serde_json::Result<Line> {
    if text.starts_with("{\"type\":\"action\",") {
        return serde_json::from_str::<ActionLine>(text).map(Line::Action);
    }
    serde_json::from_str(text)
}

/// Applies one verified action or forfeit line to `game` and returns what it did
/// (`None` for the header and result lines).
pub fn step(game: &mut dyn Game, line: &Line) -> Option<Played> {
    match line {
        Line::Action(a) => {
            let seat = Seat::new(a.seat).expect("verified record");
            Some(game.play(seat, &a.action).expect("verified record"))
        }
        Line::Forfeit(f) => Some(game.forfeit(Seat::new(f.seat).expect("verified record"), f.reason)),
        Line::Header(_) | Line::Result(_) | Line::Commit(_) | Line::Reveal(_) => None,
    }
}

/// Everything each seat was told in a verified record, by seat index: what a resumed
/// agent is sent to catch up.
pub fn seat_histories(replay: &Replay) -> Vec<Vec<SeatEvent>> {
    let mut game = start_game(&replay.header).expect("verified record");
    let mut told = vec![Vec::new(); game.seat_count()];
    for line in &replay.lines {
        if let Some(played) = step(game.as_mut(), line) {
            for (i, events) in played.seat_events.into_iter().enumerate() {
                told[i].extend(events);
            }
        }
    }
    told
}

/// Sets up the game a header describes.
pub fn start_game(h: &Header) -> Result<Box<dyn Game>, String> {
    if h.format != FORMAT {
        return Err(format!(
            "record format {} is not supported (this referee reads {FORMAT})",
            h.format
        ));
    }
    let id = GameId::parse(&h.game).map_err(|e| e.to_string())?;
    let game = id
        .create(&h.options, h.state.as_deref())
        .map_err(|e| e.to_string())?;
    if h.seats.len() != game.seat_count() {
        return Err(format!(
            "{} seats listed, the game has {}",
            h.seats.len(),
            game.seat_count()
        ));
    }
    Ok(game)
}

/// Re-plays one action line and checks its times and flags with `timing`; returns
/// the events the rules give, which are the recorded ones.
fn check_action(game: &mut dyn Game, timing: &mut Timing, a: ActionRef<'_>) -> Result<Vec<String>, String> {
    if a.ply != game.plies() + 1 {
        return Err(format!("ply {} where ply {} was due", a.ply, game.plies() + 1));
    }
    let seat = Seat::new(a.seat).ok_or("seat 0 does not exist")?;
    if a.forced && game.forced_action().as_deref() != Some(a.action) {
        return Err(format!(
            "`{}` is marked forced but is not the forced action",
            a.action
        ));
    }
    // The match loop plays a forced action itself, untimed: no agent is asked for it.
    // Every game's forced action is `pass` (protocol.md §3), so only a timed `pass`
    // needs the look for one, which costs about as much as the action's own replay.
    let timed = a.think_ms.is_some() || a.clock_ms.is_some();
    if timed && !a.forced && a.action == "pass" && game.forced_action().as_deref() == Some(a.action) {
        return Err(format!(
            "`{}` is the forced action, yet timed as an agent's",
            a.action
        ));
    }
    let played = game.play_omniscient(seat, a.action).map_err(|e| e.to_string())?;
    if !a.events.matches(&played.events) {
        return Err(format!(
            "events {:?} recorded, the rules give {:?}",
            a.events.iter().collect::<Vec<_>>(),
            played.events
        ));
    }
    if played.taken.as_deref() != a.taken {
        return Err(format!(
            "taken move {:?} recorded, the rules give {:?}",
            a.taken, played.taken
        ));
    }
    timing.check(&a)?;
    Ok(played.events)
}

/// Re-plays one forfeit line.
fn check_forfeit(game: &mut dyn Game, f: &ForfeitLine) -> Result<(), String> {
    let seat = Seat::new(f.seat)
        .filter(|s| s.number() <= game.seat_count())
        .ok_or_else(|| format!("seat {} does not exist", f.seat))?;
    // Such a forfeit would change nothing and tell nobody anything: no writer makes
    // one, and what is derived from a forfeit line (`show --seat`) needs a real one.
    if game.outcome().is_some() {
        return Err(format!("seat {seat} forfeits, but the game is over"));
    }
    if game.is_out(seat) {
        return Err(format!("seat {seat} forfeits, but it is out of the game already"));
    }
    if f.reason == ForfeitKind::Illegal {
        let action = f
            .action
            .as_deref()
            .ok_or("an illegal-action forfeit must record the action")?;
        if game.boxed_clone().play(seat, action).is_ok() {
            return Err(format!(
                "`{action}` is legal, yet recorded as an illegal-action forfeit"
            ));
        }
    }
    let played = game.forfeit(seat, f.reason);
    if played.events != f.events {
        return Err(format!(
            "events {:?} recorded, the rules give {:?}",
            f.events, played.events
        ));
    }
    Ok(())
}

/// Checks the result line against the replayed game.
fn check_result(game: &dyn Game, r: &ResultLine) -> Result<(), String> {
    let outcome = game.outcome().ok_or("a result, but the game is not over")?;
    if outcome.places != r.places || outcome.reason.to_string() != r.reason {
        return Err(format!(
            "result places {:?} by {} recorded, the rules give {:?} by {}",
            r.places, r.reason, outcome.places, outcome.reason
        ));
    }
    if game.plies() != r.plies || game.state() != r.state {
        return Err("the final ply count or state differs from the replay".into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::{seal, CommitLine};
    use super::*;

    #[test]
    fn a_bad_hash_is_told_from_a_missing_one() {
        let line = Line::Commit(CommitLine {
            commitment: "c".into(),
        });
        let sealed = seal(GENESIS, &line);
        let error = |text: &str| replay(format!("{text}\n").as_bytes()).unwrap_err();
        let altered = sealed.replacen("\"c\"", "\"d\"", 1);
        assert_eq!(
            error(&altered).message,
            "hash mismatch: the line or one before it was altered"
        );
        let upper = format!(
            "{}{}\"}}",
            &sealed[..sealed.len() - 66],
            sealed[sealed.len() - 66..sealed.len() - 2].to_uppercase()
        );
        let missing = format!("{}}}", &sealed[..sealed.len() - 76]);
        for text in [upper.as_str(), missing.as_str(), "{}"] {
            assert_eq!(
                error(text).message,
                "no trailing \"hash\" member of 64 hex digits",
                "{text}"
            );
        }
        // A good chain over a line that is not a header gets past the hash checks.
        assert_eq!(error(&sealed).message, "the first line must be the header");
    }
}
