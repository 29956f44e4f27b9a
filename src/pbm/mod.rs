//! Play by mail: every command is a short-lived process working on one record file.
//!
//! Updates are atomic (a new file is written beside the record, synced, and renamed
//! over it) and serialised by an exclusive lock on `<record>.lock`, so two mails
//! processed at once cannot both apply and a crash leaves the previous record intact
//! (its temporary file, `<record>.tmp<pid>`, is removed by the next update).
//! A game's secret salt lives in `<record>.salt` until the game ends; then a `reveal`
//! line publishes it, so every seat can check what it was told (`audit`), and the
//! file is removed. So a salt file beside a record marks a mail game in progress.
//!
//! This file holds the commands that make or read a game (`new`, `status`, `view`) and the open
//! record they share; `update` is how `play`, `resign` and a mail change the record,
//! `store` is how the record and its side files are locked, rewritten and salted on
//! disk, `message` is what a seat is mailed, `seats` how a seat is named, `senders`
//! who may mail for a seat, `mail` and `inbox` the mails read and `journal` how each
//! changes the game exactly once, `outbox` each message as a mail to its seat and
//! `smtp` how it is delivered, `deadline` the time each seat has to act and what
//! `pbm tick` does when it runs out, and `audit` checks a seat's messages against the
//! finished record.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::game::{GameId, NoSuchSeat, Options, Seat, Turn};
use crate::record::{self, Header, Line, Replay, SecretKey};

mod audit;
mod deadline;
mod inbox;
mod journal;
mod mail;
mod message;
mod outbox;
mod seats;
mod senders;
mod smtp;
mod store;
mod update;

pub use audit::{audit, AuditError, AuditReport};
pub use deadline::{parse_duration, rule as deadline_rule, tick};
pub use inbox::{inbox, mail, InboxReport};
pub use mail::{Outcome as MailOutcome, MAX_MAIL};
use message::message;
pub use outbox::{delivery, resend, send, unsent, Delivery, NewMail, DEFAULT_FROM};
pub use seats::SeatRef;
use store::{lock, read_key, rewrite, side, write_key, write_salt};
pub use update::{play, resign};

/// Why a play-by-mail command failed; nothing was changed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PbmError {
    /// The action or command was rejected; the text explains, with suggestions.
    #[error("{0}")]
    Rejected(String),
    /// Bad arguments (unknown game, seat, existing file…).
    #[error("{0}")]
    Usage(String),
    /// The record cannot be read, or is not a play-by-mail game (bad input).
    #[error("{0}")]
    Record(String),
    /// The record was read and fails verification at a line (a failed check).
    #[error("{0}")]
    Invalid(String),
    /// The record or its files could not be written, or the system failed.
    #[error("{0}")]
    Io(String),
}

/// A message for one seat.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Message {
    /// The seat.
    pub seat: Seat,
    /// Its text, ready to mail.
    pub text: String,
    /// The Message-ID of the seat's mail it answers, if any (mail out's In-Reply-To).
    pub reply_to: Option<String>,
    /// The seat's picture of the game as the message leaves it, attached to its mail;
    /// `None` in a game that mails no one (the picture would only be thrown away).
    pub picture: Option<Picture>,
}

/// The SVG picture a seat's mail carries: `referee show RECORD --format svg --ply K
/// --seat N` of the record as it stood when the message was made.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Picture {
    /// The ply it shows, K (also the mail's Subject's).
    pub ply: u32,
    /// The SVG document.
    pub svg: String,
}

/// The open game of a record.
struct Open {
    path: PathBuf,
    replay: Replay,
    /// The chain hash after every line (1-based line numbers), header first.
    chain: Vec<String>,
    salt: Option<String>,
    /// The judge's key, for a signed game: every message is signed with it.
    key: Option<SecretKey>,
}

impl Open {
    fn read(path: &Path) -> Result<Open, PbmError> {
        // One read serves the replay and the chain hashes alike: reading the file twice
        // could mix two versions of a record that another process replaced meanwhile
        // (`view` takes no lock), giving a message the hash of a line it does not tell.
        let bytes = std::fs::read(path)
            .map_err(|e| PbmError::Record(format!("{}: cannot open: {e}", path.display())))?;
        let replay = record::replay(&bytes[..]).map_err(|e| {
            let text = format!("{}: {e}", path.display());
            if e.is_unreadable() {
                PbmError::Record(text)
            } else {
                PbmError::Invalid(text)
            }
        })?;
        // Lines this process adds come after those there, whatever the clock says.
        if let Some(t) = replay.last_time {
            crate::wall_clock::not_before(t);
        }
        let complete =
            usize::try_from(replay.complete_len).map_or(&bytes[..], |n| &bytes[..n.min(bytes.len())]);
        let chain = String::from_utf8_lossy(complete)
            .lines()
            .filter_map(|l| record::unseal(l).map(|(_, h)| h.to_string()))
            .collect();
        let salt_path = side(path, ".salt");
        let salt = match &replay.revealed {
            Some(s) => Some(s.clone()),
            None => std::fs::read_to_string(&salt_path)
                .ok()
                .map(|s| s.trim().to_string()),
        };
        Ok(Open {
            path: path.to_path_buf(),
            replay,
            chain,
            salt,
            key: read_key(path)?,
        })
    }

    fn salt(&self) -> Result<&str, PbmError> {
        self.salt.as_deref().ok_or_else(|| {
            PbmError::Record(format!(
                "{}: not a play-by-mail game: its secret salt file {} is missing",
                self.path.display(),
                side(&self.path, ".salt").display()
            ))
        })
    }

    fn names(&self) -> Vec<String> {
        self.replay.header.seats.iter().map(|s| s.name.clone()).collect()
    }
}

/// Creates a game: `names` are the seats' players, in seat order, and `addresses`
/// their mail addresses (none, or one per seat: then each seat's first message
/// carries the password its mails must hold, and no other message does). With a
/// `key`, the record and every message are signed with it, now and on every update.
/// `mail` is how the game mails its messages (only a game with addresses does).
/// With a `deadline` rule, each seat has that long to act (see `pbm tick`).
// Each argument is one of `pbm new`'s independent settings; a struct of them would
// only be unpacked again here.
#[allow(clippy::too_many_arguments)]
pub fn new_game(
    path: &Path,
    game: &str,
    options: &Options,
    names: &[String],
    addresses: &[String],
    key: Option<&SecretKey>,
    mail: &NewMail,
    deadline: Option<record::DeadlineRule>,
) -> Result<Vec<Message>, PbmError> {
    let id = GameId::parse(game).map_err(|e| PbmError::Usage(e.to_string()))?;
    let g = id
        .create(options, None)
        .map_err(|e| PbmError::Usage(e.to_string()))?;
    if names.len() != g.seat_count() {
        return Err(PbmError::Usage(format!(
            "{} --seat names for a game of {} seats",
            names.len(),
            g.seat_count()
        )));
    }
    seats::check_names(names)?;
    if !addresses.is_empty() {
        senders::check_addresses(addresses, names.len())?;
    }
    outbox::check_new(mail, addresses)?;
    let held = lock(path)?;
    // Checked under the lock, so two `new` on one path cannot both pass.
    if path.exists() {
        return Err(PbmError::Usage(format!(
            "{} already exists; nothing is overwritten",
            path.display()
        )));
    }
    write_salt(&held, path)?;
    write_key(&held, path, key)?;
    outbox::write_new(&held, path, mail, addresses)?;
    let passwords = match addresses {
        [] => Vec::new(),
        _ => senders::issue(&held, path, addresses)?,
    };
    let mut header = Header::new(g.as_ref(), None, 0, |seat| (names[seat.index()].clone(), None));
    header.deadline = deadline;
    rewrite(&held, path, &header, &[])?;
    let open = Open::read(path)?;
    Seat::all(g.seat_count())
        .map(|s| {
            let mut m = message(&open, s, 1)?;
            if let Some(p) = passwords.get(s.index()) {
                // After the marker line, so the message stays one a seat can audit.
                let (first, rest) = m.text.split_once('\n').unwrap_or((&m.text, ""));
                m.text = format!(
                    "{first}\npassword: {p} (write `password {p}` in every mail you send; it is yours alone)\n{rest}"
                );
            }
            Ok(m)
        })
        .collect()
}

/// Whether `path` is a play-by-mail game still in progress: its secret salt file lies
/// beside it (the file is removed when the game ends).
pub fn in_progress(path: &Path) -> bool {
    side(path, ".salt").is_file()
}

/// The seat `seat` names in the record at `path` (by number or by player's name).
pub fn seat_of(path: &Path, seat: &SeatRef) -> Result<Seat, PbmError> {
    seat.resolve(&Open::read(path)?.names())
}

/// Whose turn it is and what is expected.
pub fn status(path: &Path) -> Result<String, PbmError> {
    let open = Open::read(path)?;
    let g = &open.replay.game;
    let names = open.names();
    let mut t = format!("{} {}\n", open.replay.header.game, open.replay.header.options);
    match g.outcome() {
        Some(o) => {
            let _ = writeln!(t, "over: {}", o.protocol_text());
        }
        None => match g.turn() {
            Turn::Act { seat, kind } => {
                let _ = writeln!(t, "turn: seat {seat} ({}) to {kind}", names[seat.index()]);
                if let Some(cur) = deadline::current(&open.replay.header, &open.replay.lines, seat) {
                    let _ = writeln!(t, "deadline: {}", crate::wall_clock::format_rfc3339(cur.deadline));
                }
            }
            Turn::Over => t.push_str("over\n"),
        },
    }
    let _ = writeln!(t, "actions: {}", g.plies());
    Ok(t)
}

/// The message for `seat` now: its view, what it saw since its last turn, its legal
/// actions when it is to act, and the salted chain hash.
pub fn view(path: &Path, seat: Seat) -> Result<Message, PbmError> {
    let open = Open::read(path)?;
    seat.at_table(open.replay.game.seat_count())?;
    // Events since the seat's own last action (its last turn).
    let since = open
        .replay
        .lines
        .iter()
        .enumerate()
        .rev()
        .find(|(_, l)| matches!(l, Line::Action(a) if a.seat == seat))
        .map_or(1, |(i, _)| i + 2);
    message(&open, seat, since)
}

impl From<NoSuchSeat> for PbmError {
    fn from(e: NoSuchSeat) -> PbmError {
        PbmError::Usage(e.to_string())
    }
}
