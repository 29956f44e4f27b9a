//! Carrying a built message to its seat: into the seat's outbox Maildir (written in
//! `tmp/`, synced, renamed into `new/`, so a reader never sees half a mail), through a
//! `sendmail`-compatible command, or to an SMTP server with `lettre`'s client. Its own
//! room because it is all the code that talks to the world outside the record.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use lettre::address::Envelope;
use lettre::Transport as _;

use super::outbox::Delivery;
use super::store::io;
use super::PbmError;
use crate::game::Seat;

/// How long an SMTP server may take to answer one step.
const SMTP_TIMEOUT: Duration = Duration::from_secs(30);

/// `HOST:PORT` of `--smtp`, checked.
pub(super) fn host_port(at: &str) -> Result<(String, u16), PbmError> {
    let bad = || {
        PbmError::Usage(format!(
            "--smtp `{}`: expected HOST:PORT, e.g. 127.0.0.1:25",
            crate::text::printable(at)
        ))
    };
    let (host, port) = at.rsplit_once(':').ok_or_else(bad)?;
    let port: u16 = port.parse().map_err(|_| bad())?;
    let host = host.trim_start_matches('[').trim_end_matches(']');
    if host.is_empty() || port == 0 {
        return Err(bad());
    }
    Ok((host.to_string(), port))
}

/// Delivers the mail `bytes` for `seat` (whose player names are `names`) by `how`,
/// to the envelope's recipients.
pub(super) fn deliver(
    how: &Delivery,
    names: &[String],
    seat: Seat,
    envelope: &Envelope,
    bytes: &[u8],
) -> Result<(), PbmError> {
    match how {
        Delivery::Outbox(dir) => to_maildir(&dir.join(seat_dir(names, seat)), bytes),
        Delivery::Sendmail(cmd) => sendmail(cmd, envelope, bytes),
        Delivery::Smtp(at) => {
            let (host, port) = host_port(at)?;
            // Unencrypted, so for a server on this machine or a trusted network only.
            lettre::SmtpTransport::builder_dangerous(host)
                .port(port)
                .timeout(Some(SMTP_TIMEOUT))
                .build()
                .send_raw(envelope, bytes)
                .map(|_| ())
                .map_err(|e| PbmError::Io(format!("SMTP {at}: {e}")))
        }
    }
}

/// A seat's outbox directory: its player's name when that is a plain file name,
/// else its number.
pub(super) fn seat_dir(names: &[String], seat: Seat) -> String {
    let name = &names[seat.index()];
    let plain = !name.starts_with('.')
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b));
    if plain {
        name.clone()
    } else {
        seat.to_string()
    }
}

/// Writes one mail into the Maildir `dir` (made when missing): in `tmp/`, synced,
/// then renamed into `new/`. Directories the owner's alone (0700) and mails 0600, as
/// mail is kept: a seat's first message holds its password.
pub(super) fn to_maildir(dir: &Path, bytes: &[u8]) -> Result<(), PbmError> {
    use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
    for sub in ["tmp", "new", "cur"] {
        let d = dir.join(sub);
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&d)
            .map_err(io(&d))?;
    }
    let name = unique_name()?;
    let tmp: PathBuf = dir.join("tmp").join(&name);
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&tmp)
        .map_err(io(&tmp))?;
    f.write_all(bytes).and_then(|_| f.sync_all()).map_err(io(&tmp))?;
    let new = dir.join("new").join(&name);
    std::fs::rename(&tmp, &new).map_err(io(&tmp))
}

/// A Maildir file name no other delivery uses: time, process and random bytes.
fn unique_name() -> Result<String, PbmError> {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    let random = super::store::fresh_hex(8)?;
    Ok(format!(
        "{}.M{}P{}R{random}.referee",
        now.as_secs(),
        now.subsec_micros(),
        std::process::id()
    ))
}

/// Runs `cmd -i -f FROM -- ADDRESS…` with the mail on its stdin, as `sendmail` is run.
fn sendmail(cmd: &str, envelope: &Envelope, bytes: &[u8]) -> Result<(), PbmError> {
    let words = shell_words::split(cmd).map_err(|e| PbmError::Usage(format!("--sendmail: {e}")))?;
    let (program, args) = words
        .split_first()
        .ok_or_else(|| PbmError::Usage("--sendmail: an empty command".into()))?;
    let mut c = Command::new(program);
    c.args(args).arg("-i");
    if let Some(from) = envelope.from() {
        c.arg("-f").arg(from);
    }
    c.arg("--").args(envelope.to());
    let failed = |why: String| PbmError::Io(format!("`{}`: {why}", crate::text::printable(cmd)));
    let mut child = c
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| failed(e.to_string()))?;
    let bytes = bytes.to_vec();
    let mut stdin = child.stdin.take().ok_or_else(|| failed("no stdin".into()))?;
    // On its own thread, so a command that does not read cannot block the referee
    // while its stderr fills.
    let writer = std::thread::spawn(move || stdin.write_all(&bytes));
    let out = child.wait_with_output().map_err(|e| failed(e.to_string()))?;
    let wrote = writer.join().unwrap_or(Ok(()));
    if !out.status.success() {
        let said = String::from_utf8_lossy(&out.stderr);
        let first = said.lines().next().unwrap_or("");
        return Err(failed(format!(
            "{}: {}",
            out.status,
            crate::text::printable(first)
        )));
    }
    wrote.map_err(|e| failed(format!("cannot write the mail: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn smtp_addresses_are_host_and_port() {
        assert_eq!(host_port("127.0.0.1:2525").ok(), Some(("127.0.0.1".into(), 2525)));
        assert_eq!(host_port("[::1]:25").ok(), Some(("::1".into(), 25)));
        for bad in ["127.0.0.1", ":25", "host:0", "host:99999", "host:x"] {
            assert!(host_port(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_seat_dir_is_its_name_when_that_is_a_plain_file_name() {
        let names: Vec<String> = ["alice", "../bob", ".x", "Ann Lee"].map(String::from).into();
        let dirs: Vec<String> = (0..4).map(|i| seat_dir(&names, Seat::from_index(i))).collect();
        assert_eq!(dirs, ["alice", "2", "3", "4"]);
    }
}
