//! `pbm mail` and `pbm inbox`: one mail from stdin, or every new mail of a Maildir,
//! processed under the record's lock. A Maildir mail is moved from `new/` to `cur/`
//! only after the journal says it was processed, and one found in `new/` whose id is
//! processed already is only moved: so a crash at any point neither loses a mail
//! (it stays in `new/` until processed) nor applies one twice (the journal). Its own
//! room because it is the only code that touches a mailbox.

use std::path::{Path, PathBuf};

use super::mail::{process, Outcome, MAX_MAIL};
use super::store::io;
use super::update::locked;
use super::{Message, PbmError};

/// What `inbox` did.
#[derive(Debug, Default)]
pub struct InboxReport {
    /// The messages to send, in the order the mails were processed.
    pub messages: Vec<Message>,
    /// One line per mail refused (not a mail, unknown sender, wrong password).
    pub refused: Vec<String>,
    /// Mails processed before (their replies went out then), moved to `cur/` only.
    pub duplicates: usize,
    /// Mails processed now.
    pub processed: usize,
}

/// Processes one mail (`bytes`, at most [`MAX_MAIL`]) for the record at `path`.
pub fn mail(path: &Path, bytes: &[u8]) -> Result<Outcome, PbmError> {
    if bytes.len() > MAX_MAIL {
        return Err(PbmError::Usage(format!("a mail has at most {MAX_MAIL} bytes")));
    }
    let held = locked(path)?;
    process(&held, path, bytes)
}

/// Processes every mail in `maildir/new/` (oldest name first), moving each to
/// `maildir/cur/` once processed.
pub fn inbox(path: &Path, maildir: &Path) -> Result<InboxReport, PbmError> {
    let new = maildir.join("new");
    let cur = maildir.join("cur");
    if !new.is_dir() || !cur.is_dir() {
        return Err(PbmError::Usage(format!(
            "{}: not a Maildir (it needs new/ and cur/)",
            maildir.display()
        )));
    }
    let held = locked(path)?;
    let mut names: Vec<PathBuf> = std::fs::read_dir(&new)
        .map_err(io(&new))?
        .filter_map(Result::ok)
        .map(|e| e.path())
        // Maildir readers skip names starting with a dot.
        .filter(|p| {
            p.is_file()
                && !p
                    .file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with('.'))
        })
        .collect();
    names.sort();
    let mut report = InboxReport::default();
    for file in names {
        let bytes = std::fs::read(&file).map_err(io(&file))?;
        let outcome = if bytes.len() > MAX_MAIL {
            Err(PbmError::Rejected(format!(
                "mail refused: more than {MAX_MAIL} bytes"
            )))
        } else {
            process(&held, path, &bytes)
        };
        let name = file
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        match outcome {
            Ok(Outcome::Replied(messages)) => {
                report.processed += 1;
                report.messages.extend(messages);
            }
            Ok(Outcome::Duplicate) => report.duplicates += 1,
            Err(PbmError::Rejected(why)) => report.refused.push(format!("{name}: {why}")),
            // The record or the disk failed: stop, the mail stays in new/.
            Err(e) => return Err(e),
        }
        // Maildir: a mail in cur/ carries its flags after `:2,` (S: seen).
        let seen = if name.contains(':') {
            name
        } else {
            format!("{name}:2,S")
        };
        let to = cur.join(seen);
        std::fs::rename(&file, &to).map_err(io(&file))?;
    }
    Ok(report)
}
