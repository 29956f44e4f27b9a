//! Game records (SPEC §6): JSON Lines, one object per line, hash-chained.
//!
//! Each line is a JSON object whose last member is `"hash"`: the lower-case hex
//! SHA-256 of the previous line's hash (64 zeros before the first line) followed by
//! the line's own bytes without `,"hash":"…"` (i.e. the object closed right after its
//! last other member). The hashed bytes are exactly the bytes in the file, so
//! checking needs no canonical re-serialisation. Lines are written and flushed one at
//! a time as play happens. Record hashes are never sent to agents.

use std::fs::File;
use std::io::{self, BufRead, Write};
use std::path::Path;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::clock::SeatClock;
use crate::game::{ForfeitKind, Game, GameId, Options, Played, Seat, SeatEvent};

mod fast_action;
mod timing;

use fast_action::ActionRef;
use timing::Timing;

/// The record format version this referee writes and reads.
pub const FORMAT: u32 = 1;

/// The hash that stands before the first line.
pub const GENESIS: &str = "0000000000000000000000000000000000000000000000000000000000000000";

/// Who sits in a seat, as the header records it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SeatEntry {
    /// Seat number from 1.
    pub seat: usize,
    /// The side it plays, e.g. `Blue`.
    pub label: String,
    /// The agent's name (`id name`), or the controller's name for the seat.
    pub name: String,
    /// The command that started the agent, if it is a process.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
}

/// The first line of every record.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Header {
    /// Record format version ([`FORMAT`]).
    pub format: u32,
    /// Version of the referee that wrote it.
    pub referee: String,
    /// Game id.
    pub game: String,
    /// Game options in force, defaults included.
    pub options: Options,
    /// The state the game started from, when not the usual start.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<String>,
    /// Who sat where.
    pub seats: Vec<SeatEntry>,
    /// The seed for the built-in agents and any randomness of the referee.
    pub seed: u64,
    /// Time control, as `--tc`/`--st` gave it, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_control: Option<String>,
    /// How the agents were isolated (`bubblewrap 0.8.0`, or `none (<why>)`), for
    /// games played by agent processes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<String>,
    /// Wall-clock start time, RFC 3339 UTC.
    pub start: String,
}

impl Header {
    /// The header of a game starting now: `game`'s id and options, `state` when it
    /// does not start from the start position, and for each seat its label and the
    /// name (and command, for an agent process) `seat` gives it. No clock and no
    /// sandbox: a match sets those.
    pub fn new(
        game: &dyn Game,
        state: Option<String>,
        seed: u64,
        seat: impl Fn(Seat) -> (String, Option<String>),
    ) -> Header {
        Header {
            format: FORMAT,
            referee: env!("CARGO_PKG_VERSION").to_string(),
            game: game.id().to_string(),
            options: game.options(),
            state,
            seats: Seat::all(game.seat_count())
                .map(|s| {
                    let (name, command) = seat(s);
                    SeatEntry {
                        seat: s.number(),
                        label: game.seat_label(s),
                        name,
                        command,
                    }
                })
                .collect(),
            seed,
            time_control: None,
            sandbox: None,
            start: humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string(),
        }
    }
}

/// An accepted action.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ActionLine {
    /// The ply this action made (1 for the first).
    pub ply: u32,
    /// The seat that acted.
    pub seat: usize,
    /// The action as submitted.
    pub action: String,
    /// The action as taken, when different (R-M4).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub taken: Option<String>,
    /// Made by the referee because it was the only one (a forced pass).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub forced: bool,
    /// A random opening action the referee made for the seat (`tournament
    /// --random-plies`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub opening: bool,
    /// What it did, omniscient.
    pub events: Vec<String>,
    /// Time the agent took, in milliseconds, from `go` written to `bestmove` read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub think_ms: Option<u64>,
    /// Time left on the seat's clock after the action, in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock_ms: Option<u64>,
}

/// A seat's forfeit (the game may end with it or go on, R-F1).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ForfeitLine {
    /// The seat that forfeited.
    pub seat: usize,
    /// Why.
    pub reason: ForfeitKind,
    /// A human-readable explanation.
    pub detail: String,
    /// For an `illegal` forfeit, the rejected action (so `verify` can re-check it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub action: Option<String>,
    /// What the forfeit did, omniscient.
    pub events: Vec<String>,
}

/// The last line of a finished game.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResultLine {
    /// Place of each seat, seat 1 first (1 is best; shared places repeat).
    pub places: Vec<u8>,
    /// `win`, `max-plies`, `last-standing` or `forfeit <seat> <kind>`.
    pub reason: String,
    /// Plies played.
    pub plies: u32,
    /// The final omniscient state.
    pub state: String,
    /// Per seat, seat 1 first, how many processes that had left its agent's process
    /// group were found and killed when the agents were stopped; only when there
    /// were any (never in a sandbox, whose PID namespace takes them with it). Not
    /// derived from the rules, so `verify` takes it as written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub escaped: Option<Vec<usize>>,
}

/// A commitment to the hidden part of a game (play by mail): `commitment` is
/// `SHA-256(salt ‖ "commit" ‖ data)` in hex, where `data` is the game's hidden part
/// at this point and `salt` the game's secret salt, both revealed at the end.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CommitLine {
    /// The commitment.
    pub commitment: String,
}

/// The opening of the game's secrets once it is over: the salt (hex) and the data
/// committed to.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RevealLine {
    /// The secret salt, hex.
    pub salt: String,
    /// The committed data, if there was a commitment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<String>,
}

/// `SHA-256(salt ‖ label ‖ text)` in hex: the one way salted digests are made (R-S1).
pub fn salted_digest(salt_hex: &str, label: &str, text: &str) -> String {
    let mut h = Sha256::new();
    h.update(salt_hex.as_bytes());
    h.update(label.as_bytes());
    h.update(text.as_bytes());
    hex(&h.finalize())
}

/// One record line.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum Line {
    /// The header (first line).
    Header(Header),
    /// An accepted action.
    Action(ActionLine),
    /// A forfeit.
    Forfeit(ForfeitLine),
    /// The result.
    Result(ResultLine),
    /// A commitment to hidden information (play by mail).
    Commit(CommitLine),
    /// The secrets revealed after the result (play by mail).
    Reveal(RevealLine),
}

/// Writes hash-chained lines to any sink, flushing each line.
#[derive(Debug)]
pub struct RecordWriter<W: Write> {
    out: W,
    prev: String,
}

/// When record lines reach the disk, not just the operating system.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Durability {
    /// fsync after every line: survives a power cut mid-game, costs a disk sync per action.
    Line,
    /// fsync after the header and the result (lines are still flushed one by one, so
    /// a crash of the referee loses nothing; an operating-system crash may lose the
    /// lines since the header).
    Game,
    /// Never fsync (flush only).
    Never,
}

impl RecordWriter<File> {
    /// Creates a new record holding `first` (its header), atomically: the line is
    /// written to a hidden file beside it, which is then linked to `path`, so a crash
    /// leaves either no record or one with a whole header, never an empty file. An
    /// existing file is never overwritten.
    pub fn start(path: &Path, first: &Line) -> io::Result<RecordWriter<File>> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)?;
        }
        let name = path
            .file_name()
            .ok_or_else(|| io::Error::other("a record path names a file"))?;
        let tmp = path.with_file_name(format!(".{}.new{}", name.to_string_lossy(), std::process::id()));
        let mut writer = RecordWriter::new(File::create(&tmp)?);
        let written = writer.write(first);
        let linked = written.and_then(|_| std::fs::hard_link(&tmp, path));
        let _ = std::fs::remove_file(&tmp);
        linked?;
        Ok(writer)
    }

    /// Reopens a record to continue it after `replay` read it: a torn last line is cut
    /// off, and the chain goes on from its last complete line.
    pub fn append(path: &Path, replay: &Replay) -> io::Result<RecordWriter<File>> {
        let file = File::options().write(true).open(path)?;
        file.set_len(replay.complete_len)?;
        let mut file = file;
        io::Seek::seek(&mut file, io::SeekFrom::End(0))?;
        Ok(RecordWriter {
            out: file,
            prev: replay.last_hash.clone(),
        })
    }

    /// Forces what was written to the disk.
    pub fn sync(&mut self) -> io::Result<()> {
        self.out.sync_data()
    }
}

impl<W: Write> RecordWriter<W> {
    /// A writer whose first line chains from [`GENESIS`].
    pub fn new(out: W) -> RecordWriter<W> {
        RecordWriter {
            out,
            prev: GENESIS.to_string(),
        }
    }

    /// Appends one line and flushes it.
    pub fn write(&mut self, line: &Line) -> io::Result<()> {
        let mut text = seal(&self.prev, line);
        text.push('\n');
        // One write per line keeps the window for a torn line as small as it gets.
        self.out.write_all(text.as_bytes())?;
        self.out.flush()?;
        text.pop();
        // The previous hash's buffer is reused: no allocation per line.
        self.prev.clear();
        self.prev.push_str(hash_of_sealed(&text));
        Ok(())
    }

    /// The hash of the last line written.
    pub fn last_hash(&self) -> &str {
        &self.prev
    }

    /// The sink, e.g. to sync a file after the last line.
    pub fn into_inner(self) -> W {
        self.out
    }
}

/// Serialises `line` and appends its chained hash.
pub fn seal(prev: &str, line: &Line) -> String {
    let mut text = String::with_capacity(256);
    let direct = matches!(line, Line::Action(a) if fast_action::write(a, &mut text));
    if !direct {
        text = serde_json::to_string(line).expect("record lines always serialise");
    }
    let digest = chain_digest(prev, text.as_bytes());
    text.pop(); // the closing brace
    text.push_str(",\"hash\":\"");
    push_hex(&mut text, &digest);
    text.push_str("\"}");
    text
}

/// SHA-256 over the previous hash and the line body, as lower-case hex.
pub fn chain_hash(prev: &str, body: &[u8]) -> String {
    hex(&chain_digest(prev, body))
}

/// SHA-256 over the previous hash and the line body.
fn chain_digest(prev: &str, body: &[u8]) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update(prev.as_bytes());
    h.update(body);
    h.finalize().into()
}

/// Lower-case hex of `bytes` (no formatting machinery).
pub fn hex(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len() * 2);
    push_hex(&mut out, bytes);
    out
}

/// Appends the lower-case hex of `bytes`.
fn push_hex(out: &mut String, bytes: &[u8]) {
    match <&[u8; 32]>::try_from(bytes) {
        // A digest: every record line has one, so it is one copy of stack bytes.
        Ok(digest) => out.push_str(std::str::from_utf8(&hex_digest(digest)).expect("hex digits are ASCII")),
        Err(_) => bytes.iter().for_each(|&b| {
            let [hi, lo] = HEX_PAIRS[b as usize];
            out.push(char::from(hi));
            out.push(char::from(lo));
        }),
    }
}

/// The lower-case hex of a SHA-256 digest, as ASCII bytes on the stack.
fn hex_digest(digest: &[u8; 32]) -> HexHash {
    let mut out = [0; 64];
    for (pair, &b) in out.chunks_exact_mut(2).zip(digest) {
        pair.copy_from_slice(&HEX_PAIRS[b as usize]);
    }
    out
}

const HEX_DIGITS: &[u8; 16] = b"0123456789abcdef";

/// A chain hash as the ASCII bytes of its hex: `verify` computes one per line, so it
/// lives on the stack rather than in a fresh `String`.
type HexHash = [u8; 64];

/// The chain hash of a sealed line whose body without the closing brace is `head`.
fn sealed_line_hash(prev: &HexHash, head: &str) -> HexHash {
    let mut h = Sha256::new();
    h.update(prev);
    h.update(head.as_bytes());
    h.update(b"}");
    hex_digest(&h.finalize().into())
}

/// The two hex digits of every byte, so that a digest is written a byte at a time.
static HEX_PAIRS: [[u8; 2]; 256] = {
    let mut pairs = [[0; 2]; 256];
    let mut b = 0;
    while b < 256 {
        pairs[b] = [HEX_DIGITS[b >> 4], HEX_DIGITS[b & 15]];
        b += 1;
    }
    pairs
};

/// Splits a sealed line into its body without the closing brace and its stored hash:
/// the hashed bytes are the head followed by `}`.
fn split_sealed(text: &str) -> Option<(&str, &str)> {
    split_sealed_unchecked(text).filter(|(_, hash)| is_lower_hex(hash))
}

/// [`split_sealed`] without checking that the hash is hex, for callers that compare
/// it with a computed one first.
fn split_sealed_unchecked(text: &str) -> Option<(&str, &str)> {
    const SUFFIX_LEN: usize = ",\"hash\":\"".len() + 64 + "\"}".len();
    if text.len() < SUFFIX_LEN + 2 || !text.is_char_boundary(text.len() - SUFFIX_LEN) {
        return None;
    }
    let (head, tail) = text.split_at(text.len() - SUFFIX_LEN);
    let hash = tail.strip_prefix(",\"hash\":\"")?.strip_suffix("\"}")?;
    Some((head, hash))
}

/// Whether `text` is lower-case hex digits only.
fn is_lower_hex(text: &str) -> bool {
    text.bytes()
        .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// The hash stored at the end of a sealed line.
fn hash_of_sealed(text: &str) -> &str {
    &text[text.len() - 66..text.len() - 2]
}

/// Splits a sealed line into its body (hash member removed) and its stored hash.
pub fn unseal(text: &str) -> Option<(String, &str)> {
    split_sealed(text).map(|(head, hash)| (format!("{head}}}"), hash))
}

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
    use super::*;

    #[test]
    fn sealed_lines_unseal_to_their_body() {
        let line = Line::Result(ResultLine {
            places: vec![1, 2],
            reason: "win".into(),
            plies: 3,
            state: "x".into(),
            escaped: None,
        });
        let sealed = seal(GENESIS, &line);
        let (body, hash) = unseal(&sealed).unwrap();
        assert_eq!(body, serde_json::to_string(&line).unwrap());
        assert_eq!(hash, chain_hash(GENESIS, body.as_bytes()));
        assert_eq!(unseal("{}"), None);
    }

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

    #[test]
    fn line_hashes_are_chain_hashes_of_the_body() {
        let line = Line::Commit(CommitLine {
            commitment: "c".into(),
        });
        let mut prev: HexHash = GENESIS.as_bytes().try_into().unwrap();
        for _ in 0..3 {
            let prev_text = std::str::from_utf8(&prev).unwrap();
            let sealed = seal(prev_text, &line);
            let (head, stored) = split_sealed(&sealed).unwrap();
            let computed = sealed_line_hash(&prev, head);
            assert_eq!(computed, stored.as_bytes());
            assert_eq!(
                computed,
                chain_hash(prev_text, unseal(&sealed).unwrap().0.as_bytes()).as_bytes()
            );
            prev = computed;
        }
    }
}
