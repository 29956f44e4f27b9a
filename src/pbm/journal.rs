//! The mail journal, `<record>.mailids`: which mails were processed, so that each one
//! changes the game exactly once even when the referee dies midway.
//!
//! Processing a mail is: `begin` (append `pending <id> <lines> <hash>`: the record's
//! length and last chain hash before the mail), then at most one atomic rewrite of the
//! record (all of the mail's actions together), then `finish` (append `done <id>`).
//! Every writer takes the record's lock and calls [`settle`] before changing anything,
//! so a `pending` without its `done` is the mail of a writer that died: if the record
//! is still as the entry says, the mail was not applied (`dropped`, and it is processed
//! again from the mailbox); if the record has grown, nothing but that mail can have
//! grown it, so it was applied (`done`). A mail whose id is `done` is never applied
//! again. Ids are SHA-256 digests (of the Message-ID, or of the whole mail when it has
//! none), so the file holds nothing a player wrote.

use std::fs::OpenOptions;
use std::io::Write;
use std::path::Path;

use super::store::{io, side, Locked};
use super::PbmError;

/// The journal's state for one mail id, by its last entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Pending { lines: usize },
    Done,
    Dropped,
}

/// Every id with its state, in the order first seen, and the lengths/hashes pending.
fn read(path: &Path) -> Result<Vec<(String, State, String)>, PbmError> {
    let journal = side(path, ".mailids");
    let text = match std::fs::read_to_string(&journal) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(io(&journal)(e)),
    };
    let mut ids: Vec<(String, State, String)> = Vec::new();
    let count = text.lines().count();
    for (n, line) in text.lines().enumerate() {
        let words: Vec<&str> = line.split(' ').collect();
        let (id, state, hash) = match words[..] {
            // A record has its header line at least.
            ["pending", id, lines, hash] => match lines.parse() {
                Ok(lines) if lines >= 1 => (id, State::Pending { lines }, hash),
                _ => return Err(bad(&journal, n)),
            },
            ["done", id] => (id, State::Done, ""),
            ["dropped", id] => (id, State::Dropped, ""),
            // A torn last line (a crash mid-append) is no entry.
            _ if n + 1 == count && !text.ends_with('\n') => continue,
            _ => return Err(bad(&journal, n)),
        };
        match ids.iter_mut().find(|(i, _, _)| i == id) {
            Some(entry) => *entry = (id.to_string(), state, hash.to_string()),
            None => ids.push((id.to_string(), state, hash.to_string())),
        }
    }
    Ok(ids)
}

fn bad(journal: &Path, n: usize) -> PbmError {
    PbmError::Invalid(format!(
        "{}: line {} is no journal entry",
        journal.display(),
        n + 1
    ))
}

fn append(path: &Path, entry: &str) -> Result<(), PbmError> {
    let journal = side(path, ".mailids");
    let mut f = OpenOptions::new()
        .create(true)
        .append(true)
        .open(&journal)
        .map_err(io(&journal))?;
    // Synced before the step it records comes next, or a power cut could keep the
    // step and lose the entry.
    f.write_all(format!("{entry}\n").as_bytes())
        .and_then(|_| f.sync_all())
        .map_err(io(&journal))
}

/// Resolves the entries a dead writer left pending (see the module comment);
/// `chain` is the record's chain hash after each line, as read under `_held`.
pub(super) fn settle(_held: &Locked, path: &Path, chain: &[String]) -> Result<(), PbmError> {
    for (id, state, hash) in read(path)? {
        let State::Pending { lines } = state else {
            continue;
        };
        let same = chain.len() == lines && chain.last().is_some_and(|h| *h == hash);
        let grown = chain.len() > lines && chain.get(lines - 1).is_some_and(|h| *h == hash);
        if same {
            append(path, &format!("dropped {id}"))?;
        } else if grown {
            append(path, &format!("done {id}"))?;
        } else {
            return Err(PbmError::Invalid(format!(
                "{}: mail {id} was pending at record line {lines}, and the record no longer has that line: it was changed by something other than the referee",
                side(path, ".mailids").display()
            )));
        }
    }
    Ok(())
}

/// Whether mail `id` was processed already.
pub(super) fn is_done(_held: &Locked, path: &Path, id: &str) -> Result<bool, PbmError> {
    Ok(read(path)?.iter().any(|(i, s, _)| i == id && *s == State::Done))
}

/// Notes that mail `id` is being processed, with the record as it is (`chain`).
pub(super) fn begin(_held: &Locked, path: &Path, id: &str, chain: &[String]) -> Result<(), PbmError> {
    let last = chain.last().map_or("", String::as_str);
    append(path, &format!("pending {id} {} {last}", chain.len()))
}

/// Notes that mail `id` was processed.
pub(super) fn finish(_held: &Locked, path: &Path, id: &str) -> Result<(), PbmError> {
    append(path, &format!("done {id}"))
}
