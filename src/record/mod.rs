//! Game records (protocol.md §4): JSON Lines, one object per line, hash-chained.
//!
//! Each line is a JSON object whose last member is `"hash"`: the lower-case hex
//! SHA-256 of the previous line's hash (64 zeros before the first line) followed by
//! the line's own bytes without `,"hash":"…"` (i.e. the object closed right after its
//! last other member). The hashed bytes are exactly the bytes in the file, so
//! checking needs no canonical re-serialisation. Lines are written and flushed one at
//! a time as play happens. Record hashes are never sent to agents.
//!
//! This file holds the line types, the format itself; the rooms beside it hold what
//! is done with lines: `chain` hashes and seals them (and makes the salted digests
//! of play by mail), `writer` appends them to a file, `sign` signs chain hashes
//! with the judge's key, `replay` reads
//! and re-checks a record, with `fast_action` (action lines without serde),
//! `timing` (think times and clocks) and `order` (times that never go backwards,
//! missed deadlines carried out) as its helpers; `shown` is what a record shows a
//! viewer up to a ply (`show`, its pictures, a mail game's attached picture).

use serde::{Deserialize, Serialize};

use crate::game::{ForfeitKind, Game, Options, Seat};

mod chain;
mod fast_action;
mod order;
mod replay;
pub mod shown;
mod sign;
mod timing;
mod writer;

pub use chain::{chain_hash, hex, salted_digest, seal, unseal};
pub use replay::{
    check_file, read_unchecked, replay, replay_file, seat_histories, start_game, step, RecordError, Replay,
    Signed,
};
pub use sign::{check_signatures, is_signature, KeyError, PublicKey, SecretKey};
pub use writer::{write_whole, Durability, RecordWriter};

/// The record format version this referee writes and reads.
pub const FORMAT: u32 = 1;

/// The hash that stands before the first line.
pub const GENESIS: &str = "0000000000000000000000000000000000000000000000000000000000000000";

/// Who sits in a seat, as the header records it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SeatEntry {
    /// The seat (written as its number from 1).
    pub seat: Seat,
    /// The side it plays, e.g. `Blue`.
    pub label: String,
    /// The agent's name (`id name`), or the controller's name for the seat.
    pub name: String,
    /// The command that started the agent, if it is a process.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// The tournament entrant that played the seat (its name in the tournament),
    /// which tells apart two entrants running the same program.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entrant: Option<String>,
    /// The seat's own time control, when it is not the header's (a tournament
    /// entrant's `tc=` or `st=`); its clock runs under it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_control: Option<String>,
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
    /// The play-by-mail deadlines (`pbm new --deadline`), when the game has them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deadline: Option<DeadlineRule>,
    /// When the line was written: RFC 3339 UTC (absent in records from before lines
    /// carried times, which stay readable).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time: Option<String>,
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
        let now = crate::wall_clock::now_rfc3339();
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
                        seat: s,
                        label: game.seat_label(s),
                        name,
                        command,
                        entrant: None,
                        time_control: None,
                    }
                })
                .collect(),
            seed,
            time_control: None,
            sandbox: None,
            start: now.clone(),
            deadline: None,
            time: Some(now),
        }
    }
}

/// An accepted action.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ActionLine {
    /// The ply this action made (1 for the first).
    pub ply: u32,
    /// The seat that acted.
    pub seat: Seat,
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
    /// When the line was written: RFC 3339 UTC (absent in records from before lines
    /// carried times, which stay readable).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time: Option<String>,
}

/// A seat's forfeit (the game may end with it or go on, R-F1).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ForfeitLine {
    /// The seat that forfeited.
    pub seat: Seat,
    /// Why.
    pub reason: ForfeitKind,
    /// A human-readable explanation.
    pub detail: String,
    /// For an `illegal` forfeit, the rejected action (so `verify` can re-check it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub action: Option<String>,
    /// What the forfeit did, omniscient.
    pub events: Vec<String>,
    /// When the line was written: RFC 3339 UTC (absent in records from before lines
    /// carried times, which stay readable).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time: Option<String>,
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
    /// When the line was written: RFC 3339 UTC (absent in records from before lines
    /// carried times, which stay readable).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time: Option<String>,
}

impl ResultLine {
    /// The result line of `game` once it is over, with the `escaped` counts of its
    /// agents (`None` where there were none, or no agents at all); the one way every
    /// mode writes a result.
    pub fn of(game: &dyn Game, escaped: Option<Vec<usize>>) -> Option<ResultLine> {
        let outcome = game.outcome()?;
        Some(ResultLine {
            places: outcome.places,
            reason: outcome.reason.to_string(),
            plies: game.plies(),
            state: game.state(),
            escaped,
            time: Some(crate::wall_clock::now_rfc3339()),
        })
    }
}

/// A commitment to the hidden part of a game (play by mail): `commitment` is
/// `SHA-256(salt ‖ "commit" ‖ data)` in hex, where `data` is the game's hidden part
/// at this point and `salt` the game's secret salt, both revealed at the end.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CommitLine {
    /// The commitment.
    pub commitment: String,
    /// When the line was written: RFC 3339 UTC (absent in records from before lines
    /// carried times, which stay readable).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time: Option<String>,
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
    /// When the line was written: RFC 3339 UTC (absent in records from before lines
    /// carried times, which stay readable).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time: Option<String>,
}

/// The judge's signature over the chain hash of the line before it (protocol.md §4):
/// as that hash covers every line up to it, a valid signature at the end of a record
/// vouches for the whole record.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SignatureLine {
    /// The Ed25519 signature, hex (see [`SecretKey::sign_record`]).
    pub signature: String,
    /// When the line was written: RFC 3339 UTC (absent in records from before lines
    /// carried times, which stay readable).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time: Option<String>,
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
    /// The judge's signature of everything before it.
    Signature(SignatureLine),
    /// A play-by-mail deadline event: a reminder, an extension, a missed move.
    Deadline(DeadlineLine),
}

impl Line {
    /// When the line was written, if it says (see [`ActionLine::time`]).
    pub fn time(&self) -> Option<&str> {
        match self {
            Line::Header(l) => l.time.as_deref(),
            Line::Action(l) => l.time.as_deref(),
            Line::Forfeit(l) => l.time.as_deref(),
            Line::Result(l) => l.time.as_deref(),
            Line::Commit(l) => l.time.as_deref(),
            Line::Reveal(l) => l.time.as_deref(),
            Line::Signature(l) => l.time.as_deref(),
            Line::Deadline(l) => l.time.as_deref(),
        }
    }
}

/// What happens when a seat misses its play-by-mail deadline (`--nmr`, "no moves
/// received").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Nmr {
    /// The seat forfeits, as on time.
    Forfeit,
    /// The seat passes where the game has a `pass` action, else forfeits.
    Pass,
    /// The deadline is extended once by the same duration, then the seat forfeits.
    Extend,
}

/// A play-by-mail game's deadlines, public and part of its header.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeadlineRule {
    /// Seconds a seat has to act, from the line that made it the seat's turn.
    pub seconds: u64,
    /// Seconds before its deadline at which the seat is reminded, once a turn.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reminder: Option<u64>,
    /// What happens when the deadline passes.
    pub nmr: Nmr,
}

/// What a deadline line records.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DeadlineEvent {
    /// The seat was sent a reminder of its coming deadline.
    Reminder,
    /// The seat missed its deadline, which was extended to `until`.
    Extended,
    /// The seat missed its deadline and passes: a `pass` action line follows.
    Passed,
    /// The seat missed its deadline and forfeits: a `timeout` forfeit line follows.
    Forfeited,
}

/// A deadline event of a play-by-mail game (`pbm tick`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeadlineLine {
    /// The seat to act.
    pub seat: Seat,
    /// What happened.
    pub event: DeadlineEvent,
    /// The deadline concerned (RFC 3339 UTC): the coming one for a reminder, the
    /// one missed otherwise.
    pub deadline: String,
    /// The new deadline, for an extension.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub until: Option<String>,
    /// When the line was written, RFC 3339 UTC.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time: Option<String>,
}

impl DeadlineLine {
    /// What happened, in the words the judge's note and `show` use.
    pub fn summary(&self) -> String {
        let (seat, deadline) = (self.seat, &self.deadline);
        match self.event {
            DeadlineEvent::Reminder => format!("reminder: seat {seat} is to act by {deadline}"),
            DeadlineEvent::Extended => format!(
                "seat {seat} missed its deadline {deadline}: extended once, to {}",
                self.until.as_deref().unwrap_or("?")
            ),
            DeadlineEvent::Passed => format!("seat {seat} missed its deadline {deadline}: it passes"),
            DeadlineEvent::Forfeited => format!("seat {seat} missed its deadline {deadline}: it forfeits"),
        }
    }

    /// Whether `seat` was told of this event: a reminder goes to its seat alone,
    /// a missed deadline's outcome to every seat (`pbm tick`).
    pub fn told_to(&self, seat: Seat) -> bool {
        self.event != DeadlineEvent::Reminder || self.seat == seat
    }
}
