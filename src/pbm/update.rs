//! Changing a mail game: a seat's actions and resignation, checked by the rules and
//! written in one atomic rewrite of the record together with the lines they imply
//! (commitment, result, reveal), and the suggestion every rejection carries. Its own
//! room because `play`, `resign` and a mail with several actions all change the
//! record the same way, under one lock.

use std::path::Path;

use super::journal;
use super::message::message;
use super::store::{lock, remove_salt, rewrite, Locked};
use super::{Message, Open, PbmError};
use crate::game::{ForfeitKind, Game, Rejection, Seat, Turn, Unforfeitable};
use crate::record::{
    self, salted_digest, ActionLine, CommitLine, ForfeitLine, Line, Replay, ResultLine, RevealLine,
};

/// One change a seat asks for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Change {
    /// An action, as the seat wrote it.
    Play(String),
    /// A resignation (a forfeit, R-F1).
    Resign,
}

/// How the seat asked, which is how it can ask for its view: the suggestions of a
/// rejection name the way the seat can take.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Via {
    /// The `pbm` command line of the game master.
    Cli,
    /// A mail of the seat's own.
    Mail,
}

impl Via {
    fn view(self, path: &Path, seat: Seat) -> String {
        match self {
            Via::Cli => format!("`referee pbm view {} --seat {seat}`", path.display()),
            Via::Mail => "a mail saying `view`".to_string(),
        }
    }
}

/// What an update did: every seat's message, and the rejection that stopped a list
/// of changes after some of them were applied.
pub(super) struct Applied {
    /// One message per seat.
    pub(super) messages: Vec<Message>,
    /// How many changes were applied (the first ones).
    pub(super) count: usize,
    /// Why the changes after the applied ones were not made.
    pub(super) stopped: Option<String>,
}

/// Validates and applies `action` of `seat`; returns the message for every seat.
pub fn play(path: &Path, seat: Seat, action: &str) -> Result<Vec<Message>, PbmError> {
    let held = locked(path)?;
    settled(&held, path)?;
    Ok(update(&held, path, seat, &[Change::Play(action.to_string())], Via::Cli)?.messages)
}

/// Records that `seat` resigns (a forfeit, R-F1 applies).
pub fn resign(path: &Path, seat: Seat) -> Result<Vec<Message>, PbmError> {
    let held = locked(path)?;
    settled(&held, path)?;
    Ok(update(&held, path, seat, &[Change::Resign], Via::Cli)?.messages)
}

/// The record's lock, taken only when the record is there (no lock file beside a
/// record that is not).
pub(super) fn locked(path: &Path) -> Result<Locked, PbmError> {
    if !path.is_file() {
        return Err(PbmError::Record(format!("{}: no such record", path.display())));
    }
    lock(path)
}

/// Settles the mail journal, which every writer does before changing the record (see
/// `journal`); the caller holds the record's lock (`held`).
pub(super) fn settled(held: &Locked, path: &Path) -> Result<(), PbmError> {
    journal::settle(held, path, &Open::read(path)?.chain)
}

/// Applies `changes` in order, stopping at the first rejection, appends the lines
/// they imply (commitment, result, reveal), rewrites the record once, atomically, and
/// builds every seat's message. A first change rejected is an error and nothing is
/// written. The caller holds the record's lock (`held`) and has settled the journal.
pub(super) fn update(
    held: &Locked,
    path: &Path,
    seat: Seat,
    changes: &[Change],
    via: Via,
) -> Result<Applied, PbmError> {
    let open = Open::read(path)?;
    let salt = open.salt()?.to_string();
    let mut game = open.replay.game.boxed_clone();
    seat.at_table(game.seat_count())?;
    let mut lines = open.replay.lines.clone();
    let mut stopped = None;
    let mut count = 0;
    for (i, change) in changes.iter().enumerate() {
        let line = match apply(game.as_mut(), path, seat, change, via) {
            Ok(line) => line,
            Err(e) if i == 0 => return Err(e),
            Err(e) => {
                stopped = Some(e.to_string());
                break;
            }
        };
        lines.push(line);
        count += 1;
        commit_if_due(game.as_ref(), &mut lines, &salt);
    }
    let messages = write_changes(held, path, &open, game.as_ref(), lines, salt)?;
    Ok(Applied {
        messages,
        count,
        stopped,
    })
}

/// Appends the commitment once the game first has its hidden part to commit to
/// (I-Doubt-It: when placement ends); `lines` are the record's after the header.
pub(super) fn commit_if_due(game: &dyn Game, lines: &mut Vec<Line>, salt: &str) {
    let committed = lines.iter().any(|l| matches!(l, Line::Commit(_)));
    if let (false, Some(data)) = (committed, game.commitment_data()) {
        lines.push(Line::Commit(CommitLine {
            commitment: salted_digest(salt, "commit", &data),
            time: Some(crate::wall_clock::now_rfc3339()),
        }));
    }
}

/// Writes `lines`, the record after the header once `game` is where they leave it,
/// with the result and reveal when it is over, in one atomic rewrite; returns every
/// seat's message covering the lines after `open`'s. The caller holds the lock.
pub(super) fn write_changes(
    held: &Locked,
    path: &Path,
    open: &Open,
    game: &dyn Game,
    mut lines: Vec<Line>,
    salt: String,
) -> Result<Vec<Message>, PbmError> {
    let before = open.chain.len();
    // Play by mail runs no agent processes: none can have escaped.
    if let Some(result) = ResultLine::of(game, None) {
        lines.push(Line::Result(result));
        let data = committed_data(&open.replay, &lines);
        lines.push(Line::Reveal(RevealLine {
            salt,
            data,
            time: Some(crate::wall_clock::now_rfc3339()),
        }));
    }
    rewrite(held, path, &open.replay.header, &lines)?;
    if game.outcome().is_some() {
        // The record's reveal line holds the salt now, and every later command reads
        // it from there: a copy left beside the record would only be a secret file
        // that is no longer secret (a crash just before this leaves it, harmlessly).
        remove_salt(held, path)?;
    }
    let open = Open::read(path)?;
    Seat::all(game.seat_count())
        .map(|s| message(&open, s, before))
        .collect()
}

/// Applies one change to `game`; the record line it makes, or why it is rejected.
fn apply(game: &mut dyn Game, path: &Path, seat: Seat, change: &Change, via: Via) -> Result<Line, PbmError> {
    match change {
        Change::Play(typed) => {
            let action = match via {
                Via::Mail => canonical(game, seat, typed),
                Via::Cli => typed.clone(),
            };
            play_one(game, path, seat, &action, via)
        }
        Change::Resign => {
            // A forfeit that changes nothing is refused by verify too (R-F1, R-M5).
            game.forfeitable(seat).map_err(|why| {
                let view = via.view(path, seat);
                PbmError::Rejected(match why {
                    Unforfeitable::Over => {
                        format!("rejected, nothing changed: the game is over; {view} shows the result")
                    }
                    Unforfeitable::Out => format!(
                        "rejected, nothing changed: seat {seat} is out of the game already; {view} shows the game now"
                    ),
                })
            })?;
            let played = game.forfeit(seat, ForfeitKind::Resign);
            Ok(Line::Forfeit(ForfeitLine {
                seat,
                reason: ForfeitKind::Resign,
                detail: "resigned by mail".into(),
                action: None,
                events: played.events,
                time: Some(crate::wall_clock::now_rfc3339()),
            }))
        }
    }
}

/// Applies one action of `seat`.
fn play_one(game: &mut dyn Game, path: &Path, seat: Seat, action: &str, via: Via) -> Result<Line, PbmError> {
    match game.play(seat, action) {
        Ok(played) => Ok(Line::Action(ActionLine {
            ply: game.plies(),
            seat,
            action: action.to_string(),
            taken: played.taken,
            forced: false,
            opening: false,
            events: played.events,
            think_ms: None,
            clock_ms: None,
            time: Some(crate::wall_clock::now_rfc3339()),
        })),
        Err(rejection) => Err(PbmError::Rejected(format!(
            "rejected, nothing changed: {rejection}; {}",
            suggestion(path, seat, &*game, &rejection, action, via)
        ))),
    }
}

/// A mail's action as the game writes it: people write `k@a1` for `K@a1`, so a legal
/// action of the seat equal to it but for letter case is taken. Only the seat to act
/// has legal actions looked up, so nothing of another seat's moves is used.
fn canonical(game: &dyn Game, seat: Seat, typed: &str) -> String {
    if !matches!(game.turn(), Turn::Act { seat: to, .. } if to == seat) {
        return typed.to_string();
    }
    let legal = game.legal_actions();
    if legal.iter().any(|a| a == typed) {
        return typed.to_string();
    }
    let mut alike = legal.iter().filter(|a| a.eq_ignore_ascii_case(typed));
    match (alike.next(), alike.next()) {
        (Some(one), None) => one.clone(),
        _ => typed.to_string(),
    }
}

/// What the seat can do about a rejection: every rejection carries one. The closest
/// legal actions come from the legal actions of the seat to act, so they are only
/// offered to that seat (an eliminated multichess seat gets `Illegal` and must not
/// learn another seat's moves); everyone else is pointed at their own view.
fn suggestion(
    path: &Path,
    seat: Seat,
    game: &dyn Game,
    rejection: &Rejection,
    action: &str,
    via: Via,
) -> String {
    let view = via.view(path, seat);
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
