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
use super::order::{Kind, Order};
use super::timing::Timing;
use super::{ActionLine, ForfeitLine, Header, Line, ResultLine, RevealLine, FORMAT, GENESIS};
use crate::clock::SeatClock;
use crate::game::{ForfeitKind, Game, GameId, Played, SeatEvent, Turn, Unforfeitable};

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
    /// The signature lines, in order, each with the chain hash it signs.
    pub signatures: Vec<Signed>,
    /// Each seat's clock after the last line, by seat index, as the match loop ran it
    /// (what a resumed match continues with); `None` when the header has no time
    /// control.
    pub clocks: Option<Vec<SeatClock>>,
    /// The latest `time` of its lines (none in records from before lines had times).
    pub last_time: Option<std::time::SystemTime>,
}

/// A signature line of a record, with what it signs (checked against a key by
/// [`super::check_signatures`]; a replay checks only its shape).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Signed {
    /// Its line number.
    pub line: usize,
    /// The chain hash of the line before it, which it signs.
    pub hash: String,
    /// The signature, hex.
    pub signature: String,
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

/// The header and the lines of a record as written, read without checking hashes or
/// rules: for the replay agent, whose every action the referee checks as it is played,
/// so that starting one costs a parse of the file and no replay of the game. The
/// header must describe a game this referee can set up (returned at its start); a torn
/// last line is left out.
pub fn read_unchecked(path: &Path) -> Result<(Box<dyn Game>, Vec<Line>), RecordError> {
    let text = std::fs::read_to_string(path).map_err(|e| RecordError::at(0, format!("cannot read: {e}")))?;
    let mut header = None;
    let mut lines = Vec::new();
    // Only complete lines: the text after the last newline was being written.
    let complete = text.rfind('\n').map_or("", |end| &text[..end]);
    for (n, raw) in complete.split('\n').enumerate() {
        let n = n + 1;
        let head = split_sealed_unchecked(raw).map(|(head, _)| head);
        if let Some(a) = head.and_then(fast_action::parse) {
            let events = a.events.iter().map(str::to_string).collect();
            lines.push(Line::Action(a.to_line(events)));
            continue;
        }
        match parse_line(raw).map_err(|e| RecordError::at(n, format!("not a record line: {e}")))? {
            Line::Header(h) if header.is_none() => header = Some(h),
            Line::Header(_) => return Err(RecordError::at(n, "a second header")),
            _ if header.is_none() => return Err(RecordError::at(n, "the first line must be the header")),
            line => lines.push(line),
        }
    }
    let header = header.ok_or_else(|| RecordError::at(1, "the first line must be the header"))?;
    let game = start_game(&header).map_err(|m| RecordError::at(1, m))?;
    Ok((game, lines))
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
    let mut replaying = Replaying::new(keep);
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
            replaying.torn = Some(n);
            break;
        }
        let text = std::str::from_utf8(&raw).map_err(|_| RecordError::at(n, "not UTF-8"))?;
        replaying.line(n, text, read)?;
    }
    replaying.finish()
}

/// What a replay has established so far, line by line.
struct Replaying {
    /// Whether the lines after the header are kept (see [`Replay::lines`]).
    keep: bool,
    /// The hash of the last line checked.
    prev: HexHash,
    /// The hash of the line before it (what a signature line signs).
    before: HexHash,
    header: Option<Header>,
    game: Option<Box<dyn Game>>,
    timing: Timing,
    lines: Vec<Line>,
    line_count: usize,
    action_count: usize,
    result: Option<ResultLine>,
    torn: Option<usize>,
    complete_len: u64,
    /// The commitment and the hidden data it was made to, once a commit line came.
    commitment: Option<(String, String)>,
    revealed: Option<String>,
    signatures: Vec<Signed>,
    /// What the lines so far require of the next (times, missed deadlines).
    order: Order,
}

impl Replaying {
    /// Nothing replayed yet: the chain starts from [`GENESIS`].
    fn new(keep: bool) -> Replaying {
        Replaying {
            keep,
            prev: GENESIS.as_bytes().try_into().expect("64 hex digits"),
            before: GENESIS.as_bytes().try_into().expect("64 hex digits"),
            header: None,
            game: None,
            timing: Timing::default(),
            lines: Vec::new(),
            line_count: 0,
            action_count: 0,
            result: None,
            torn: None,
            complete_len: 0,
            commitment: None,
            revealed: None,
            signatures: Vec::new(),
            order: Order::default(),
        }
    }

    /// Checks line `n`, `text` (read as `read` bytes with its newline): its hash, then
    /// what it says. Action lines in the shape this referee writes take the fast way.
    fn line(&mut self, n: usize, text: &str, read: usize) -> Result<(), RecordError> {
        const NO_HASH: &str = "no trailing \"hash\" member of 64 hex digits";
        let (head, stored) = split_sealed_unchecked(text).ok_or_else(|| RecordError::at(n, NO_HASH))?;
        let computed = sealed_line_hash(&self.prev, head);
        if computed != stored.as_bytes() {
            // A hash equal to the computed one is hex, so only a mismatch needs a look.
            let message = if is_lower_hex(stored) {
                "hash mismatch: the line or one before it was altered"
            } else {
                NO_HASH
            };
            return Err(RecordError::at(n, message));
        }
        self.before = std::mem::replace(&mut self.prev, computed);
        // Counted now: any later problem with the line ends the replay with an error.
        self.complete_len += read as u64;
        if let Some(a) = fast_action::parse(head) {
            self.order
                .check(a.time, Kind::Action(a.seat))
                .map_err(|m| RecordError::at(n, m))?;
            if self.result.is_some() {
                return Err(RecordError::at(n, "a line after the result"));
            }
            let g = self
                .game
                .as_mut()
                .ok_or_else(|| RecordError::at(n, "the first line must be the header"))?;
            let events = check_action(g.as_mut(), &mut self.timing, a).map_err(|m| RecordError::at(n, m))?;
            self.line_count += 1;
            self.action_count += 1;
            if self.keep {
                self.lines.push(Line::Action(a.to_line(events)));
            }
            return Ok(());
        }
        // The sealed text parses as the body: the `hash` member is simply ignored.
        let line = parse_line(text).map_err(|e| RecordError::at(n, format!("not a record line: {e}")))?;
        let kind = match &line {
            Line::Action(a) => Kind::Action(a.seat),
            Line::Forfeit(f) => Kind::Forfeit(f.seat, f.reason),
            Line::Deadline(d) => Kind::Deadline(d),
            _ => Kind::Other,
        };
        self.order
            .check(line.time(), kind)
            .map_err(|m| RecordError::at(n, m))?;
        self.apply(n, line)
    }

    /// Checks a line that went through serde against the game so far and keeps it.
    fn apply(&mut self, n: usize, line: Line) -> Result<(), RecordError> {
        // The secrets are revealed, and the whole record signed, once the game is over.
        if self.result.is_some() && !matches!(line, Line::Reveal(_) | Line::Signature(_)) {
            return Err(RecordError::at(n, "a line after the result"));
        }
        match (&line, self.game.as_mut()) {
            (Line::Header(h), None) => {
                let g = start_game(h).map_err(|m| RecordError::at(n, m))?;
                self.timing = Timing::new(h, g.seat_count()).map_err(|m| RecordError::at(n, m))?;
                self.game = Some(g);
                self.header = Some(h.clone());
            }
            (Line::Header(_), Some(_)) => return Err(RecordError::at(n, "a second header")),
            (_, None) => return Err(RecordError::at(n, "the first line must be the header")),
            (Line::Action(a), Some(g)) => {
                check_action(g.as_mut(), &mut self.timing, ActionRef::of(a))
                    .map_err(|m| RecordError::at(n, m))?;
            }
            (Line::Forfeit(f), Some(g)) => check_forfeit(g.as_mut(), f).map_err(|m| RecordError::at(n, m))?,
            (Line::Result(r), Some(g)) => {
                check_result(g.as_ref(), r).map_err(|m| RecordError::at(n, m))?;
                self.result = Some(r.clone());
            }
            (Line::Commit(c), Some(g)) => {
                let data = g.commitment_data().ok_or_else(|| {
                    RecordError::at(n, "a commitment where the game has nothing hidden to commit to")
                })?;
                if self.commitment.is_some() {
                    return Err(RecordError::at(n, "a second commitment"));
                }
                self.commitment = Some((c.commitment.clone(), data));
            }
            (Line::Reveal(r), Some(_)) => {
                self.check_reveal(r).map_err(|m| RecordError::at(n, m))?;
                self.revealed = Some(r.salt.clone());
            }
            (Line::Deadline(d), Some(g)) => {
                if !matches!(g.turn(), Turn::Act { seat, .. } if seat == d.seat) {
                    return Err(RecordError::at(
                        n,
                        format!("a deadline line for seat {}, which is not to act", d.seat),
                    ));
                }
            }
            (Line::Signature(s), Some(_)) => {
                if !super::is_signature(&s.signature) {
                    return Err(RecordError::at(n, "a signature that is not 128 hex digits"));
                }
                self.signatures.push(Signed {
                    line: n,
                    hash: std::str::from_utf8(&self.before)
                        .expect("hex is ASCII")
                        .to_string(),
                    signature: s.signature.clone(),
                });
            }
        }
        if !matches!(line, Line::Header(_)) {
            self.line_count += 1;
            self.action_count += usize::from(matches!(line, Line::Action(_)));
            if self.keep {
                self.lines.push(line);
            }
        }
        Ok(())
    }

    /// Checks a reveal line: after the result, once, and opening the commitment if
    /// there was one.
    fn check_reveal(&self, r: &RevealLine) -> Result<(), &'static str> {
        if self.result.is_none() {
            return Err("secrets revealed before the result");
        }
        if self.revealed.is_some() {
            return Err("a second reveal");
        }
        if self.commitment.is_none() && r.data.is_some() {
            return Err("data revealed without a commitment to it");
        }
        if let Some((committed, data)) = &self.commitment {
            if r.data.as_deref() != Some(data.as_str()) {
                return Err("the revealed data is not the game's hidden part at the commitment");
            }
            if salted_digest(&r.salt, "commit", data) != *committed {
                return Err("the commitment does not open to the revealed salt and data");
            }
        }
        Ok(())
    }

    /// The replay, once every line is read: a record needs at least its header.
    fn finish(self) -> Result<Replay, RecordError> {
        if self.order.unfinished() {
            let last = self.line_count + 1;
            return Err(RecordError::at(
                last,
                "a missed deadline without the line that carries it out",
            ));
        }
        match (self.header, self.game) {
            (Some(header), Some(game)) => Ok(Replay {
                header,
                game,
                lines: self.lines,
                line_count: self.line_count,
                action_count: self.action_count,
                last_hash: std::str::from_utf8(&self.prev).expect("hex is ASCII").to_string(),
                result: self.result,
                torn: self.torn,
                complete_len: self.complete_len,
                revealed: self.revealed,
                signatures: self.signatures,
                clocks: self.timing.into_clocks(),
                last_time: self.order.last_time(),
            }),
            _ => Err(RecordError::at(1, "empty record: no complete header line")),
        }
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
            // Invariant: `line` is from a verified record, whose every action the
            // rules accepted when it was verified.
            Some(game.play(a.seat, &a.action).expect("verified record"))
        }
        Line::Forfeit(f) => Some(game.forfeit(f.seat, f.reason)),
        Line::Header(_)
        | Line::Result(_)
        | Line::Commit(_)
        | Line::Reveal(_)
        | Line::Signature(_)
        | Line::Deadline(_) => None,
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
    // Wide enough that a state at the last ply a counter can hold cannot overflow.
    let due = u64::from(game.plies()) + 1;
    if u64::from(a.ply) != due {
        return Err(format!("ply {} where ply {due} was due", a.ply));
    }
    let seat = a.seat;
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
    let seat = f.seat.at_table(game.seat_count()).map_err(|e| e.to_string())?;
    // Such a forfeit would change nothing and tell nobody anything: no writer makes
    // one, and what is derived from a forfeit line (`show --seat`) needs a real one.
    match game.forfeitable(seat) {
        Err(Unforfeitable::Over) => return Err(format!("seat {seat} forfeits, but the game is over")),
        Err(Unforfeitable::Out) => {
            return Err(format!("seat {seat} forfeits, but it is out of the game already"))
        }
        Ok(()) => {}
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
            time: None,
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
