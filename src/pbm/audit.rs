//! The audit of a finished game by one seat: its transcript of messages is checked
//! against the record, whose salt is revealed once the game is over (the salted
//! chain hashes, the commitment, every event and view, no message missing). Its own
//! room because it is the seat's side of play by mail: it trusts the record only as
//! far as the record verifies.

use std::path::Path;

use super::message::{told_by_line, told_to, BEGIN, END};
use super::{Open, PbmError};
use crate::game::{Seat, SeatEvent};
use crate::record::{self, salted_digest, Line, PublicKey, Replay};

/// `seat`'s view after every record line (index: line number - 1, header first).
fn views_by_line(replay: &Replay, seat: Seat) -> Vec<String> {
    let mut game = record::start_game(&replay.header).expect("verified record");
    let mut views = vec![game.view(seat).text().to_string()];
    for line in &replay.lines {
        record::step(game.as_mut(), line);
        views.push(game.view(seat).text().to_string());
    }
    views
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
    commitment: Option<String>,
    view: Option<String>,
    /// The judge's signature of the salted hash, in a signed game.
    signature: Option<String>,
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
                commitment: None,
                view: None,
                signature: None,
            });
        } else if l == END {
            let m = cur
                .take()
                .ok_or(format!("transcript line {n}: end without a start"))?;
            if m.line == 0 || m.hash.is_empty() {
                return Err(format!("transcript line {n}: a message without its record line"));
            }
            out.push(m);
        } else if let Some(m) = cur.as_mut() {
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
            } else if let Some(rest) = l.strip_prefix("commitment: ") {
                m.commitment = Some(rest.to_string());
            } else if let Some(rest) = l.strip_prefix("view: ") {
                m.view = Some(rest.to_string());
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
/// (and so every verdict) the rules give for that seat, every view, and no message
/// missing; with `key`, also that the record is signed by it to its end and that
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
        views: views_by_line(&open.replay, seat),
        commitment: open.replay.lines.iter().find_map(|l| match l {
            Line::Commit(c) => Some(c.commitment.clone()),
            _ => None,
        }),
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
    /// The seat's view after every line ([`views_by_line`]).
    views: Vec<String>,
    /// The record's commitment, if it has one.
    commitment: Option<String>,
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
    /// is missing before it, its events, its view and its commitment.
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
        if m.since > self.covered {
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
        if let (Some(told_v), Some(real)) = (&m.view, self.views.get(m.line.wrapping_sub(1))) {
            if told_v != real {
                problems.push(format!(
                    "{at}: the view told is not the seat's view at that line: told {told_v:?}, rules {real:?}"
                ));
            }
        }
        if let (Some(told_c), Some(real)) = (&m.commitment, &self.commitment) {
            if told_c != real {
                problems.push(format!("{at}: the commitment told differs from the record's"));
            }
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
