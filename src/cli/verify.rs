//! `referee verify`: re-check records (and their signatures) and name the first bad
//! line; `referee keygen`: make the key pair that signs them.

use std::path::{Path, PathBuf};

use anyhow::anyhow;

use super::pbm::public_key;
use super::{print, Failure, EXIT_FAILED, EXIT_OK, EXIT_USAGE};
use crate::record::{self, PublicKey, SecretKey};

/// Writes a fresh key pair, `NAME.key` (mode 0600) and `NAME.pub`.
pub fn keygen(name: &Path) -> Result<u8, Failure> {
    let key = SecretKey::generate().map_err(|e| Failure::failed(anyhow!("cannot make a key: {e}")))?;
    let (secret, public) = key.write_pair(name).map_err(|e| match e.kind() {
        // A key pair already there, or a directory that is not: bad input.
        std::io::ErrorKind::AlreadyExists | std::io::ErrorKind::NotFound => Failure::usage(e),
        _ => Failure::failed(e),
    })?;
    print(&format!(
        "secret key: {} (keep it to yourself); public key: {} ({})\n",
        secret.display(),
        public.display(),
        key.public().to_hex()
    ))?;
    Ok(EXIT_OK)
}

/// Verifies each record, and with `key` its signatures; exit 1 if any is wrong, 2 if
/// any cannot be read at all (or the key file is bad).
pub fn run(records: &[PathBuf], key: Option<&Path>) -> Result<u8, Failure> {
    let key: Option<PublicKey> = key.map(public_key).transpose()?;
    let mut code = EXIT_OK;
    for path in records {
        match check(path, key.as_ref()) {
            Ok(replay) => print(&format!(
                "{}: ok, {}\n",
                path.display(),
                summary(path, &replay, key.is_some())
            ))?,
            Err((exit, why)) => {
                eprintln!(
                    "referee: {}",
                    crate::text::printable(&format!("{}: {why}", path.display()))
                );
                code = code.max(exit);
            }
        }
    }
    Ok(code)
}

/// Replays one record and checks its signatures under `key`; the error is the exit
/// code it maps to and the reason.
fn check(path: &Path, key: Option<&PublicKey>) -> Result<record::Replay, (u8, String)> {
    let replay = record::check_file(path).map_err(|e| {
        let exit = if e.is_unreadable() {
            EXIT_USAGE
        } else {
            EXIT_FAILED
        };
        (exit, e.to_string())
    })?;
    if let Some(k) = key {
        record::check_signatures(&replay, k).map_err(|why| (EXIT_FAILED, why))?;
    }
    Ok(replay)
}

/// What `verify` says of a good record: the game, its lines and plies, and whether it
/// finished.
fn summary(path: &Path, replay: &record::Replay, signed: bool) -> String {
    let labels: Vec<String> = replay.header.seats.iter().map(|s| s.label.clone()).collect();
    let mut status = match (&replay.result, replay.game.outcome()) {
        (Some(_), Some(outcome)) => format!("finished: {}", outcome.describe(replay.game.id(), &labels)),
        (Some(r), None) => format!(
            "finished: places {} reason {}",
            r.places.iter().map(u8::to_string).collect::<Vec<_>>().join(" "),
            r.reason
        ),
        // A mail game waits for its next mail, it was not interrupted.
        (None, _) if crate::pbm::in_progress(path) => format!(
            "UNFINISHED: a play-by-mail game in progress (`referee pbm status {}` says whose turn it is; `referee pbm play` continues it)",
            path.display()
        ),
        (None, _) => {
            "UNFINISHED: no result line (the game was interrupted; `match --resume` continues it)".to_string()
        }
    };
    if let Some(n) = replay.torn {
        status.push_str(&format!("; line {n} was cut short by a crash and is ignored"));
    }
    let signed = if signed { ", signed by the key" } else { "" };
    format!(
        "{} with {} lines after the header, {} plies{signed}, {status}",
        replay.header.game,
        replay.line_count,
        replay.game.plies()
    )
}
