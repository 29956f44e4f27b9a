//! Who may mail moves for a seat: each seat's address and a digest of the secret
//! password issued to it at `pbm new`, in `<record>.senders` (mode 0600). A mail is
//! taken for a seat only when it comes from the seat's address AND holds the seat's
//! password, so a forged From alone cannot move for another seat. Its own room
//! because it is the one place that decides who a mail speaks for.

use std::fs::OpenOptions;
use std::io::Write;
use std::path::Path;

use super::store::{fresh_hex, io, side, Locked};
use super::PbmError;
use crate::game::Seat;
use crate::record::salted_digest;

/// The longest address taken (RFC 5321's limit on a path).
const MAX_ADDRESS: usize = 254;

/// An address as compared: letter case does not distinguish mailboxes in practice.
fn normal(address: &str) -> String {
    address.trim().to_lowercase()
}

/// The digest stored for a password: salted with the seat's address, so equal
/// passwords of two seats (there are none: they are random) would not show.
fn digest(address: &str, password: &str) -> String {
    salted_digest(&normal(address), "password", &password.trim().to_lowercase())
}

/// Checks the `--address` list of `pbm new`: one per seat, each a plausible address
/// on one line, no two alike.
pub(super) fn check_addresses(addresses: &[String], seats: usize) -> Result<(), PbmError> {
    if addresses.len() != seats {
        return Err(PbmError::Usage(format!(
            "{} --address for a game of {seats} seats: give one per seat, in seat order, or none",
            addresses.len()
        )));
    }
    for (i, a) in addresses.iter().enumerate() {
        let bad = |why: &str| {
            Err(PbmError::Usage(format!(
                "--address `{}`: {why}",
                crate::text::printable(a)
            )))
        };
        let plausible = a
            .split_once('@')
            .is_some_and(|(l, d)| !l.is_empty() && !d.is_empty());
        if !plausible || a.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return bad("not a mail address (local@domain, no blanks)");
        }
        if a.len() > MAX_ADDRESS {
            return bad(&format!("longer than {MAX_ADDRESS} bytes"));
        }
        if addresses[..i].iter().any(|b| normal(b) == normal(a)) {
            return bad("two seats cannot share an address: it identifies the seat");
        }
    }
    Ok(())
}

/// Issues a fresh password to every seat and writes the senders file; returns the
/// passwords in seat order. The caller holds the lock and the record does not exist.
pub(super) fn issue(_held: &Locked, path: &Path, addresses: &[String]) -> Result<Vec<String>, PbmError> {
    let file = side(path, ".senders");
    let mut passwords = Vec::new();
    let mut text = String::new();
    for (i, a) in addresses.iter().enumerate() {
        // 64 bits: short enough to type, far too many to guess by mail.
        let password = fresh_hex(8)?;
        text.push_str(&format!("{} {} {}\n", i + 1, normal(a), digest(a, &password)));
        passwords.push(password);
    }
    // Left by a `new` that died before its record was written, it belongs to no game.
    let _ = std::fs::remove_file(&file);
    let mut f = OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&file)
        .map_err(io(&file))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let _ = f.set_permissions(std::fs::Permissions::from_mode(0o600));
    }
    f.write_all(text.as_bytes())
        .and_then(|_| f.sync_all())
        .map_err(io(&file))?;
    Ok(passwords)
}

/// The seat a mail from `from` holding `password` speaks for, or its refusal.
pub(super) fn identify(path: &Path, from: &str, password: Option<&str>) -> Result<Seat, PbmError> {
    let file = side(path, ".senders");
    let text = std::fs::read_to_string(&file).map_err(|e| {
        PbmError::Usage(format!(
            "{}: this game takes no mail (it was created without --address): {e}",
            file.display()
        ))
    })?;
    let from = normal(from);
    let entry = text.lines().find_map(|l| {
        let mut w = l.split(' ');
        match (w.next(), w.next(), w.next()) {
            (Some(seat), Some(a), Some(d)) if a == from => Some((seat.parse::<Seat>().ok(), d.to_string())),
            _ => None,
        }
    });
    // The same words whether the address is unknown or the password wrong, so a
    // forger learns nothing of which addresses play.
    let refused = || {
        PbmError::Rejected(format!(
            "mail from {} refused, nothing changed: no seat has that address and password (write `password …` as issued at the start)",
            crate::text::printable(&from)
        ))
    };
    match (entry, password) {
        (Some((Some(seat), d)), Some(p)) if digest(&from, p) == d => Ok(seat),
        _ => Err(refused()),
    }
}
