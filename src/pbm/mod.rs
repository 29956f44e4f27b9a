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
//! This file holds the commands (`new`, `status`, `view`, `play`, `resign`) and the
//! update they share; `store` is how the record and its side files are locked,
//! rewritten and salted on disk, `message` is what a seat is mailed, and `audit`
//! checks a seat's messages against the finished record.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::game::{Game, GameId, NoSuchSeat, Options, Played, Rejection, Seat, Turn, Unforfeitable};
use crate::record::{
    self, salted_digest, ActionLine, CommitLine, ForfeitLine, Header, Line, Replay, ResultLine, RevealLine,
};

mod audit;
mod message;
mod seats;
mod store;

pub use audit::{audit, AuditError, AuditReport};
use message::message;
pub use seats::SeatRef;
use store::{lock, remove_salt, rewrite, side, write_salt};

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
}

/// The open game of a record.
struct Open {
    path: PathBuf,
    replay: Replay,
    /// The chain hash after every line (1-based line numbers), header first.
    chain: Vec<String>,
    salt: Option<String>,
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

/// Creates a game: `names` are the seats' players, in seat order.
pub fn new_game(
    path: &Path,
    game: &str,
    options: &Options,
    names: &[String],
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
    let held = lock(path)?;
    // Checked under the lock, so two `new` on one path cannot both pass.
    if path.exists() {
        return Err(PbmError::Usage(format!(
            "{} already exists; nothing is overwritten",
            path.display()
        )));
    }
    write_salt(&held, path)?;
    let header = Header::new(g.as_ref(), None, 0, |seat| (names[seat.index()].clone(), None));
    rewrite(&held, path, &header, &[])?;
    let open = Open::read(path)?;
    Seat::all(g.seat_count()).map(|s| message(&open, s, 1)).collect()
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

/// Validates and applies `action` of `seat`; returns the message for every seat.
pub fn play(path: &Path, seat: Seat, action: &str) -> Result<Vec<Message>, PbmError> {
    update(path, seat, |game| match game.play(seat, action) {
        Ok(played) => Ok((
            played.clone(),
            Line::Action(ActionLine {
                ply: game.plies(),
                seat,
                action: action.to_string(),
                taken: played.taken.clone(),
                forced: false,
                opening: false,
                events: played.events,
                think_ms: None,
                clock_ms: None,
            }),
        )),
        Err(rejection) => Err(PbmError::Rejected(format!(
            "rejected, nothing changed: {rejection}; {}",
            suggestion(path, seat, &*game, &rejection, action)
        ))),
    })
}

/// What the seat can do about a rejection: every rejection carries one. The closest
/// legal actions come from the legal actions of the seat to act, so they are only
/// offered to that seat (an eliminated multichess seat gets `Illegal` and must not
/// learn another seat's moves); everyone else is pointed at their own view.
fn suggestion(path: &Path, seat: Seat, game: &dyn Game, rejection: &Rejection, action: &str) -> String {
    let view = format!("`referee pbm view {} --seat {seat}`", path.display());
    let to_act = matches!(game.turn(), Turn::Act { seat: to, .. } if to == seat);
    match rejection {
        Rejection::Malformed { .. } | Rejection::Illegal { .. } if to_act => {
            let legal = game.legal_actions();
            let close = crate::text::closest(action, legal.iter().map(String::as_str), 5);
            if close.is_empty() {
                format!("{view} lists your legal actions")
            } else {
                format!("did you mean {}?", close.join(", "))
            }
        }
        Rejection::NotYourTurn { .. } => {
            format!("wait for your turn: a message tells you when it comes; {view} shows the game now")
        }
        Rejection::GameOver => format!("{view} shows the result"),
        Rejection::Malformed { .. } | Rejection::Illegal { .. } => format!("{view} shows the game now"),
    }
}

/// Records that `seat` resigns (a forfeit, R-F1 applies).
pub fn resign(path: &Path, seat: Seat) -> Result<Vec<Message>, PbmError> {
    update(path, seat, |game| {
        // A forfeit that changes nothing is refused by verify too (R-F1, R-M5).
        game.forfeitable(seat).map_err(|why| {
            let view = format!("`referee pbm view {} --seat {seat}`", path.display());
            PbmError::Rejected(match why {
                Unforfeitable::Over => {
                    format!("rejected, nothing changed: the game is over; {view} shows the result")
                }
                Unforfeitable::Out => format!(
                    "rejected, nothing changed: seat {seat} is out of the game already; {view} shows the game now"
                ),
            })
        })?;
        let played = game.forfeit(seat, crate::game::ForfeitKind::Resign);
        Ok((
            played.clone(),
            Line::Forfeit(ForfeitLine {
                seat,
                reason: crate::game::ForfeitKind::Resign,
                detail: "resigned by mail".into(),
                action: None,
                events: played.events,
            }),
        ))
    })
}

/// Applies one change under the lock, appends the lines it implies (commitment,
/// result, reveal), rewrites the record atomically, and builds every seat's message.
fn update(
    path: &Path,
    seat: Seat,
    change: impl FnOnce(&mut dyn Game) -> Result<(Played, Line), PbmError>,
) -> Result<Vec<Message>, PbmError> {
    // No lock file beside a record that is not there.
    if !path.is_file() {
        return Err(PbmError::Record(format!("{}: no such record", path.display())));
    }
    let held = lock(path)?;
    let open = Open::read(path)?;
    let salt = open.salt()?.to_string();
    let mut game = open.replay.game.boxed_clone();
    seat.at_table(game.seat_count())?;
    let before = open.chain.len();
    let (_, line) = change(game.as_mut())?;
    let mut lines = open.replay.lines.clone();
    lines.push(line);
    let committed = lines.iter().any(|l| matches!(l, Line::Commit(_)));
    if let (false, Some(data)) = (committed, game.commitment_data()) {
        lines.push(Line::Commit(CommitLine {
            commitment: salted_digest(&salt, "commit", &data),
        }));
    }
    // Play by mail runs no agent processes: none can have escaped.
    if let Some(result) = ResultLine::of(game.as_ref(), None) {
        lines.push(Line::Result(result));
        let data = committed_data(&open.replay, &lines);
        lines.push(Line::Reveal(RevealLine { salt, data }));
    }
    rewrite(&held, path, &open.replay.header, &lines)?;
    if game.outcome().is_some() {
        // The record's reveal line holds the salt now, and every later command reads
        // it from there: a copy left beside the record would only be a secret file
        // that is no longer secret (a crash just before this leaves it, harmlessly).
        remove_salt(&held, path)?;
    }
    let open = Open::read(path)?;
    Seat::all(game.seat_count())
        .map(|s| message(&open, s, before))
        .collect()
}

/// The hidden data committed to in `lines`, recomputed by replaying them.
fn committed_data(replay: &Replay, lines: &[Line]) -> Option<String> {
    let mut game = record::start_game(&replay.header).ok()?;
    for line in lines {
        if let Line::Commit(_) = line {
            return game.commitment_data();
        }
        record::step(game.as_mut(), line);
    }
    None
}
