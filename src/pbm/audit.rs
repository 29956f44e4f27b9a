//! The audit of a finished game by one seat: its transcript of messages is checked
//! against the record, whose salt is revealed once the game is over (the salted
//! chain hashes, the events, every other line but the informational ones, no message
//! missing). Its own
//! room because it is the seat's side of play by mail: it trusts the record only as
//! far as the record verifies.

use std::path::Path;

use super::message::{render, told_by_line, told_to, AtLine, BEGIN, END};
use super::{Open, PbmError};
use crate::game::{Game, Seat, SeatEvent};
use crate::record::{self, salted_digest, PublicKey, Replay};

/// The lines of a message that `audit` does not check, and why: `note:` says what
/// became of a mail (how many of its actions were applied, a rejection, the help),
/// which the record does not keep, and whose effect on the game every later line
/// shows; `password:` is the seat's secret for its mails, kept out of the record on
/// purpose (protocol.md §4).
pub(super) const INFORMATIONAL: [&str; 2] = ["note:", "password:"];

/// The lines checked on their own rather than compared whole: the record hash (with
/// the salt), the signature (with the key) and the events (with the rules).
const CHECKED_APART: [&str; 3] = ["record: ", "signature: ", "  event "];

/// Whether a message line is compared whole with the one the record makes.
fn compared(line: &str) -> bool {
    !INFORMATIONAL
        .iter()
        .chain(&CHECKED_APART)
        .any(|p| line.starts_with(p))
}

/// The first line where `told` and `expected` differ, named, with both texts.
fn first_difference(told: &[&str], expected: &[&str]) -> Option<String> {
    let i = (0..=told.len().max(expected.len())).find(|&i| told.get(i) != expected.get(i))?;
    let (t, e) = (told.get(i).copied(), expected.get(i).copied());
    let shown = |l: Option<&str>| l.map_or("nothing".to_string(), |l| format!("{l:?}"));
    Some(format!(
        "its {} is not what the record gives: told {}, record {}",
        kind_of(e.or(t).unwrap_or_default()),
        shown(t),
        shown(e)
    ))
}

/// What a message line is, to name it: `view:`, `legal:`, the diagram…
fn kind_of(line: &str) -> String {
    if line.starts_with("  | ") {
        "board diagram".into()
    } else if line.starts_with(BEGIN) {
        "first line (seat and name)".into()
    } else if line == END {
        "end".into()
    } else {
        match line.split_once(':') {
            Some((name, _)) => format!("`{name}:` line"),
            None => format!("line {line:?}"),
        }
    }
}

/// Why an audit did not pass.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AuditError {
    /// It could not be made: the record cannot be read, the game has not ended, or
    /// the transcript is not a transcript of messages.
    Input(PbmError),
    /// It was made, and the messages disagree with the record in these ways.
    Problems(Vec<String>),
}

/// What an audit found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AuditReport {
    /// Messages checked.
    pub messages: usize,
    /// Events checked.
    pub events: usize,
}

/// One parsed message of a transcript.
struct Parsed {
    seat: usize,
    line: usize,
    hash: String,
    since: usize,
    events: Vec<String>,
    /// The judge's signature of the salted hash, in a signed game.
    signature: Option<String>,
    /// Every line of the message, its markers included, as received.
    text: Vec<String>,
}

fn parse_transcript(text: &str) -> Result<Vec<Parsed>, String> {
    let mut out = Vec::new();
    let mut cur: Option<Parsed> = None;
    for (n, l) in text.lines().enumerate() {
        let n = n + 1;
        if let Some(rest) = l.strip_prefix(BEGIN) {
            let seat = rest.split_whitespace().next().and_then(|w| w.parse().ok());
            cur = Some(Parsed {
                seat: seat.ok_or(format!("transcript line {n}: no seat number"))?,
                line: 0,
                hash: String::new(),
                since: 0,
                events: Vec::new(),
                signature: None,
                text: vec![l.to_string()],
            });
        } else if l == END {
            let mut m = cur
                .take()
                .ok_or(format!("transcript line {n}: end without a start"))?;
            m.text.push(l.to_string());
            if m.line == 0 || m.hash.is_empty() {
                return Err(format!("transcript line {n}: a message without its record line"));
            }
            out.push(m);
        } else if let Some(m) = cur.as_mut() {
            m.text.push(l.to_string());
            if let Some(rest) = l.strip_prefix("record: line ") {
                let (line, hash) = rest
                    .split_once(", hash ")
                    .ok_or(format!("transcript line {n}: bad record line"))?;
                m.line = line
                    .parse()
                    .map_err(|_| format!("transcript line {n}: bad line number"))?;
                m.hash = hash.trim().to_string();
            } else if let Some(rest) = l.strip_prefix("since line ") {
                m.since = rest
                    .trim_end_matches(':')
                    .parse()
                    .map_err(|_| format!("transcript line {n}: bad since"))?;
            } else if let Some(rest) = l.strip_prefix("  event ") {
                m.events.push(rest.to_string());
            } else if let Some(rest) = l.strip_prefix("signature: ") {
                m.signature = Some(rest.to_string());
            }
        }
    }
    if cur.is_some() {
        return Err("the transcript ends inside a message".into());
    }
    Ok(out)
}

/// Checks that every message `seat` received (the transcript) is consistent with the
/// final record: the salted chain hashes, the commitment and its opening, every event
/// (and so every verdict) the rules give for that seat, and every other line the
/// message holds but the informational ones ([`INFORMATIONAL`]) exactly as the record
/// makes it at that line (names, view, diagram, legal actions, result, salt), and no
/// message missing; with `key`, also that the record is signed by it to its end and that
/// every message carries its signature of the salted hash it reports.
pub fn audit(
    path: &Path,
    seat: Seat,
    transcript: &str,
    key: Option<&PublicKey>,
) -> Result<AuditReport, AuditError> {
    let open = Open::read(path).map_err(AuditError::Input)?;
    let salt = open.replay.revealed.clone().ok_or_else(|| {
        AuditError::Input(PbmError::Record(format!(
            "{}: no salt revealed: not a play-by-mail record, or its game has not ended yet",
            path.display()
        )))
    })?;
    let messages = parse_transcript(transcript).map_err(|e| AuditError::Input(PbmError::Usage(e)))?;
    let mut audit = Audit {
        seat,
        salt,
        chain: &open.chain,
        told: told_by_line(&open.replay),
        replay: &open.replay,
        game: record::start_game(&open.replay.header).expect("verified record"),
        at_line: 1,
        problems: Vec::new(),
        covered: 1,
        events: 0,
        key,
    };
    if let Some(k) = key {
        if let Err(why) = record::check_signatures(&open.replay, k) {
            audit.problems.push(format!("the record: {why}"));
        }
    }
    let mut mine: Vec<&Parsed> = messages.iter().filter(|m| m.seat == seat.number()).collect();
    if mine.len() != messages.len() {
        audit.problems.push(format!(
            "{} messages are addressed to another seat",
            messages.len() - mine.len()
        ));
    }
    mine.sort_by_key(|m| (m.line, m.since));
    for m in &mine {
        audit.check(m);
    }
    audit.check_untold_end();
    // The record itself was verified when read: the commitment opens to the revealed
    // data (the reveal line is checked), so a changed hidden type cannot pass.
    if audit.problems.is_empty() {
        Ok(AuditReport {
            messages: mine.len(),
            events: audit.events,
        })
    } else {
        Err(AuditError::Problems(audit.problems))
    }
}

/// An audit under way: what the record says the seat was to be told, and what the
/// messages checked so far did tell.
struct Audit<'a> {
    /// The seat audited.
    seat: Seat,
    /// The revealed salt.
    salt: String,
    /// The chain hash after every record line.
    chain: &'a [String],
    /// What each line told each seat ([`told_by_line`]).
    told: Vec<(usize, Vec<Vec<SeatEvent>>)>,
    /// The final record.
    replay: &'a Replay,
    /// The game after record line `at_line`, stepped forward as messages are checked
    /// in the order of their lines.
    game: Box<dyn Game>,
    /// The record line `game` stands at.
    at_line: usize,
    /// What disagrees, so far.
    problems: Vec<String>,
    /// The last record line a message covered.
    covered: usize,
    /// Events checked.
    events: usize,
    /// The judge's public key, when signatures are checked.
    key: Option<&'a PublicKey>,
}

impl Audit<'_> {
    /// Checks one message (in the order of the lines they cover): its hash, that none
    /// is missing before it, its events, and every other line ([`Audit::check_text`]).
    fn check(&mut self, m: &Parsed) {
        let seat = self.seat;
        let at = format!("message up to line {}", m.line);
        self.check_signature(m, &at);
        let problems = &mut self.problems;
        match self.chain.get(m.line.wrapping_sub(1)) {
            Some(h) if salted_digest(&self.salt, "chain", h) == m.hash => {}
            Some(_) => problems.push(format!(
                "{at}: its record hash is not the record's (the record was changed)"
            )),
            None => problems.push(format!("{at}: the record has no line {}", m.line)),
        }
        // Lines that told the seat nothing (a reminder to another seat) need no
        // message of their own.
        let skipped = |(n, t): &&(usize, Vec<Vec<SeatEvent>>)| {
            *n > self.covered && *n <= m.since && !told_to(t, seat).is_empty()
        };
        if self.told.iter().any(|t| skipped(&t)) {
            problems.push(format!(
                "a message is missing: nothing told lines {}..{}",
                self.covered + 1,
                m.since
            ));
        }
        self.covered = self.covered.max(m.line);
        let expected: Vec<String> = self
            .told
            .iter()
            .filter(|(n, _)| *n > m.since && *n <= m.line)
            .flat_map(|(_, t)| told_to(t, seat).iter().map(|e| e.text().to_string()))
            .collect();
        if expected != m.events {
            problems.push(format!(
                "{at}: the events told are not what the rules give: told {:?}, rules {:?}",
                m.events, expected
            ));
        }
        self.events += m.events.len();
        self.check_text(m, &at);
    }

    /// Every line of the message that is not informational, nor checked on its own
    /// (the record hash, the signature, the events), must be the line the record
    /// makes for the seat at that record line: the first that is not is named.
    fn check_text(&mut self, m: &Parsed, at: &str) {
        let Some(hash) = self.chain.get(m.line.wrapping_sub(1)) else {
            return; // named already: the record has no such line
        };
        while self.at_line < m.line {
            record::step(self.game.as_mut(), &self.replay.lines[self.at_line - 1]);
            self.at_line += 1;
        }
        let snapshot = AtLine {
            header: &self.replay.header,
            game: self.game.as_ref(),
            lines: &self.replay.lines,
            line: m.line,
            hash,
            told: &self.told,
        };
        let made = render(&snapshot, self.seat, m.since, &self.salt, None);
        let expected: Vec<&str> = made.lines().filter(|l| compared(l)).collect();
        let told: Vec<&str> = m
            .text
            .iter()
            .map(String::as_str)
            .filter(|l| compared(l))
            .collect();
        if let Some(difference) = first_difference(&told, &expected) {
            self.problems.push(format!("{at}: {difference}"));
        }
    }

    /// With a key: the message's signature is the judge's over its seat, record line
    /// and salted hash.
    fn check_signature(&mut self, m: &Parsed, at: &str) {
        let Some(key) = self.key else { return };
        match &m.signature {
            None => self.problems.push(format!("{at}: not signed")),
            Some(sig) if !key.verifies_message(m.seat, m.line, &m.hash, sig) => self.problems.push(format!(
                "{at}: its signature is not this key's over its seat, line and hash (signed by another key, or altered)"
            )),
            Some(_) => {}
        }
    }

    /// After the last message: lines that told the seat something must have been
    /// covered by one.
    fn check_untold_end(&mut self) {
        let covered = self.covered;
        if covered < self.chain.len() {
            let last_told = self
                .told
                .iter()
                .filter(|(n, t)| *n > covered && !told_to(t, self.seat).is_empty())
                .count();
            if last_told > 0 {
                self.problems.push(format!(
                    "a message is missing: lines after {covered} were never told"
                ));
            }
        }
    }
}
