//! Mail in: one RFC 5322 message, parsed by `mail-parser` (MIME, multipart, base64,
//! quoted-printable, charsets), its sender identified (`senders`), its commands
//! applied exactly once (`journal`), and the replies built. Its own room because it
//! is where what a person wrote becomes commands.

use std::fmt::Write as _;
use std::path::Path;

use super::journal;
use super::message::BEGIN;
use super::senders;
use super::store::Locked;
use super::update::{settled, update, Change, Via};
use super::{view, Message, Open, PbmError};
use crate::record::salted_digest;

/// The largest mail read, in bytes: a move fits in far less, and a mailbox may hold
/// anything.
pub const MAX_MAIL: usize = 1 << 20;

/// What one line of a mail's body asks for.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Command {
    /// `password …`: the seat's secret.
    Password(String),
    /// `view`: the seat's message now.
    View,
    /// `resign`.
    Resign,
    /// `help`: the commands.
    Help,
    /// Anything else (or `play …`): an action.
    Action(String),
}

/// The commands of a body: one a line, the first word in any letter case; blank and
/// quoted (`>`) lines skipped, and nothing after a signature separator (`-- `).
fn commands(body: &str) -> Vec<Command> {
    let mut out = Vec::new();
    for line in body.lines() {
        // Many mail programs strip the separator's trailing blank.
        if line.trim_end() == "--" {
            break;
        }
        let line = line.trim();
        if line.is_empty() || line.starts_with('>') {
            continue;
        }
        let (word, rest) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
        let rest = rest.trim();
        out.push(match (word.to_lowercase().as_str(), rest.is_empty()) {
            ("password", false) => Command::Password(rest.to_string()),
            ("view", true) => Command::View,
            ("resign", true) => Command::Resign,
            ("help", true) => Command::Help,
            ("play" | "move", false) => Command::Action(rest.to_string()),
            _ => Command::Action(line.to_string()),
        });
    }
    out
}

/// A mail, parsed: its journal id, its sender's address and its commands.
struct Letter {
    id: String,
    /// Its Message-ID, which the replies to the sender answer (In-Reply-To).
    message_id: Option<String>,
    from: String,
    commands: Vec<Command>,
}

fn parse(bytes: &[u8]) -> Result<Letter, PbmError> {
    let bad = |why: &str| PbmError::Rejected(format!("mail refused, nothing changed: {why}"));
    let mail = mail_parser::MessageParser::default()
        .parse(bytes)
        .ok_or_else(|| bad("not a mail message"))?;
    let from = mail
        .from()
        .and_then(|a| a.first())
        .and_then(|a| a.address())
        .ok_or_else(|| bad("it has no From address"))?
        .to_string();
    // The Message-ID names a mail across deliveries; without one, its bytes do.
    let id = match mail.message_id() {
        Some(m) => salted_digest("", "message-id", m),
        None => salted_digest("", "mail", &String::from_utf8_lossy(bytes)),
    };
    let body = mail.body_text(0).unwrap_or_default();
    Ok(Letter {
        id,
        // Written into the replies' headers, so only a plain one is kept.
        message_id: mail
            .message_id()
            .filter(|m| m.len() <= 250 && m.bytes().all(|b| b.is_ascii_graphic()))
            .map(str::to_string),
        from,
        commands: commands(&body),
    })
}

/// What became of one mail.
pub enum Outcome {
    /// It was processed: the messages to send (the sender's carries the replies).
    Replied(Vec<Message>),
    /// Its id was processed before: nothing was done again.
    Duplicate,
}

/// Processes one mail for the record at `path`; the caller holds its lock (`held`).
/// A mail refused (not a mail, unknown sender, wrong password) is an error and
/// changes nothing.
pub(super) fn process(held: &Locked, path: &Path, bytes: &[u8]) -> Result<Outcome, PbmError> {
    settled(held, path)?;
    let letter = parse(bytes)?;
    if journal::is_done(held, path, &letter.id)? {
        return Ok(Outcome::Duplicate);
    }
    let password = letter.commands.iter().find_map(|c| match c {
        Command::Password(p) => Some(p.as_str()),
        _ => None,
    });
    let seat = senders::identify(path, &letter.from, password)?;
    let open = Open::read(path)?;
    journal::begin(held, path, &letter.id, &open.chain)?;
    let changes: Vec<Change> = letter
        .commands
        .iter()
        .filter_map(|c| match c {
            Command::Action(a) => Some(Change::Play(a.clone())),
            Command::Resign => Some(Change::Resign),
            _ => None,
        })
        .collect();
    let mut notes = Vec::new();
    let mut messages = Vec::new();
    if !changes.is_empty() {
        match update(held, path, seat, &changes, Via::Mail) {
            Ok(applied) => {
                notes.push(format!("applied: {} of {}", applied.count, changes.len()));
                notes.extend(applied.stopped);
                messages = applied.messages;
            }
            Err(PbmError::Rejected(why)) => notes.push(why),
            Err(e) => return Err(e),
        }
    }
    if letter.commands.contains(&Command::Help) {
        notes.extend(HELP.lines().map(str::to_string));
    }
    if changes.is_empty()
        && !letter
            .commands
            .iter()
            .any(|c| matches!(c, Command::View | Command::Help))
    {
        notes.push("no command found: write `help` for the commands".into());
    }
    if messages.is_empty() {
        messages.push(view(path, seat)?);
    }
    super::store::fault("after-mail-applied");
    journal::finish(held, path, &letter.id)?;
    for m in messages.iter_mut().filter(|m| m.seat == seat) {
        m.text = with_notes(&m.text, &notes);
        m.reply_to.clone_from(&letter.message_id);
    }
    Ok(Outcome::Replied(messages))
}

/// What `help` replies.
const HELP: &str = "commands, one a line, in any letter case:
  password SECRET   the password you were given (in every mail)
  ACTION            an action as the legal: line writes it; several are applied in order
  view              your message now
  resign            resign the game
  help              this
lines starting with > and everything after a line `-- ` are ignored";

/// `text` with a `note:` line for each note after its first line.
fn with_notes(text: &str, notes: &[String]) -> String {
    let Some((first, rest)) = text.split_once('\n') else {
        return text.to_string();
    };
    debug_assert!(first.starts_with(BEGIN));
    let mut t = format!("{first}\n");
    // A note may quote what the player wrote: a lone carriage return or an escape
    // in it must not start a line of its own in a mail reader or a terminal.
    for n in notes {
        let _ = writeln!(t, "note: {}", crate::text::printable(n));
    }
    t.push_str(rest);
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bodies_are_read_as_people_write_them() {
        let body = "Hi!\r\nPASSWORD 00ff\r\n> c2-d3\r\n  Play a1-c3 \r\nView\r\n\r\n-- \r\nresign\r\n";
        assert_eq!(
            commands(body),
            vec![
                Command::Action("Hi!".into()),
                Command::Password("00ff".into()),
                Command::Action("a1-c3".into()),
                Command::View,
            ]
        );
        assert_eq!(commands("help\n--\nresign"), vec![Command::Help]);
    }
}
