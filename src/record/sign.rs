//! Ed25519 signatures over chain hashes: the judge's key files, the bytes signed and
//! the checks. Its own room because the hash chain alone is unkeyed (anyone can seal a
//! different legal game), and a signature is what ties a record, or a message a seat
//! was mailed, to the one who holds the secret key.
//!
//! A key file is one line: the 64 lower-case hex digits of the 32-byte Ed25519 secret
//! seed (`NAME.key`, mode 0600) or public key (`NAME.pub`). What is signed is always a
//! short text naming its purpose, so that a record signature can never pass for a
//! message signature or the other way round (protocol.md §4).

use std::fs::OpenOptions;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

use ed25519_dalek::{Signature, Signer, SigningKey, VerifyingKey};

use super::chain::{hex, is_lower_hex};
use super::Replay;

/// Why a key file cannot be used (bad input: exit 2).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct KeyError(String);

/// The judge's secret signing key.
#[derive(Clone)]
pub struct SecretKey(SigningKey);

/// A public key that checks the judge's signatures.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PublicKey(VerifyingKey);

impl std::fmt::Debug for SecretKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the seed itself: a debug print must not leak the key.
        write!(f, "SecretKey(public {})", hex(self.0.verifying_key().as_bytes()))
    }
}

/// The text a record signature signs: the chain hash of the line before it.
fn record_text(chain_hash: &str) -> String {
    format!("referee record {chain_hash}")
}

/// The text a message signature signs: the seat, the record line and the salted
/// chain hash the message reports.
fn message_text(seat: usize, line: usize, salted: &str) -> String {
    format!("referee message seat {seat} line {line} hash {salted}")
}

impl SecretKey {
    /// A fresh key from the operating system's randomness.
    pub fn generate() -> io::Result<SecretKey> {
        let mut seed = [0u8; 32];
        std::fs::File::open("/dev/urandom")?.read_exact(&mut seed)?;
        Ok(SecretKey(SigningKey::from_bytes(&seed)))
    }

    /// Reads a secret key file (64 hex digits).
    pub fn read(path: &Path) -> Result<SecretKey, KeyError> {
        read_32(path, "secret key").map(|seed| SecretKey(SigningKey::from_bytes(&seed)))
    }

    /// The public key that checks this key's signatures.
    pub fn public(&self) -> PublicKey {
        PublicKey(self.0.verifying_key())
    }

    /// The seed as a key file's line (hex), e.g. to copy the key beside a record.
    pub fn to_hex(&self) -> String {
        hex(self.0.as_bytes())
    }

    /// Writes `NAME.key` (mode 0600) and `NAME.pub`; neither may exist yet, and a
    /// failure leaves neither.
    pub fn write_pair(&self, name: &Path) -> io::Result<(PathBuf, PathBuf)> {
        let (secret, public) = (with_ext(name, ".key"), with_ext(name, ".pub"));
        if public.exists() {
            return Err(io::Error::new(
                io::ErrorKind::AlreadyExists,
                format!("{} already exists; nothing is overwritten", public.display()),
            ));
        }
        write_new(&secret, &self.to_hex(), 0o600)?;
        if let Err(e) = write_new(&public, &self.public().to_hex(), 0o644) {
            let _ = std::fs::remove_file(&secret);
            return Err(e);
        }
        Ok((secret, public))
    }

    /// The signature (hex) of the chain hash of a record line.
    pub fn sign_record(&self, chain_hash: &str) -> String {
        hex(&self.0.sign(record_text(chain_hash).as_bytes()).to_bytes())
    }

    /// The signature (hex) of a message to `seat` reporting record line `line` and
    /// its salted chain hash.
    pub fn sign_message(&self, seat: usize, line: usize, salted: &str) -> String {
        hex(&self
            .0
            .sign(message_text(seat, line, salted).as_bytes())
            .to_bytes())
    }
}

impl PublicKey {
    /// Reads a public key file (64 hex digits).
    pub fn read(path: &Path) -> Result<PublicKey, KeyError> {
        let bytes = read_32(path, "public key")?;
        VerifyingKey::from_bytes(&bytes)
            .map(PublicKey)
            .map_err(|_| KeyError(format!("{}: not an Ed25519 public key", path.display())))
    }

    /// The key as a key file's line (hex).
    pub fn to_hex(&self) -> String {
        hex(self.0.as_bytes())
    }

    /// Whether `signature` (hex) signs the record chain hash `chain_hash`.
    pub fn verifies_record(&self, chain_hash: &str, signature: &str) -> bool {
        self.verifies(&record_text(chain_hash), signature)
    }

    /// Whether `signature` (hex) signs a message to `seat` reporting line `line` and
    /// its salted chain hash.
    pub fn verifies_message(&self, seat: usize, line: usize, salted: &str, signature: &str) -> bool {
        self.verifies(&message_text(seat, line, salted), signature)
    }

    /// Whether `signature` (hex) signs `text` under this key (strict: no malleable
    /// encodings).
    fn verifies(&self, text: &str, signature: &str) -> bool {
        let Some(bytes) = unhex::<64>(signature) else {
            return false;
        };
        let signature = Signature::from_bytes(&bytes);
        self.0.verify_strict(text.as_bytes(), &signature).is_ok()
    }
}

/// Checks a replayed record's signatures against `key`: there is at least one, each
/// signs the chain hash before it under `key`, and the last line of the record is one
/// (so nothing after the last signature escapes it). The reason is one line naming
/// the line at fault.
pub fn check_signatures(replay: &Replay, key: &PublicKey) -> Result<(), String> {
    let last_line = replay.line_count + 1;
    let Some(last) = replay.signatures.last() else {
        return Err("not signed: the record has no signature line".into());
    };
    if let Some(bad) = replay
        .signatures
        .iter()
        .find(|s| !key.verifies_record(&s.hash, &s.signature))
    {
        return Err(format!(
            "line {}: the signature is not this key's over the lines before it (signed by another key, or a line before it was altered)",
            bad.line
        ));
    }
    if last.line != last_line {
        return Err(format!(
            "lines {}..{last_line} come after the last signature (line {}) and are not signed",
            last.line + 1,
            last.line
        ));
    }
    Ok(())
}

/// Whether `text` has the shape of a signature: 128 lower-case hex digits.
pub fn is_signature(text: &str) -> bool {
    text.len() == 128 && is_lower_hex(text)
}

/// `N` bytes from exactly `2N` lower-case hex digits.
fn unhex<const N: usize>(text: &str) -> Option<[u8; N]> {
    if text.len() != 2 * N || !is_lower_hex(text) {
        return None;
    }
    let mut out = [0u8; N];
    for (b, pair) in out.iter_mut().zip(text.as_bytes().chunks_exact(2)) {
        *b = u8::from_str_radix(std::str::from_utf8(pair).ok()?, 16).ok()?;
    }
    Some(out)
}

/// The 32 bytes of a key file: one line of 64 lower-case hex digits.
fn read_32(path: &Path, what: &str) -> Result<[u8; 32], KeyError> {
    let mut text = String::new();
    std::fs::File::open(path)
        // A key file is 65 bytes: a bounded read keeps a wrong path from filling memory.
        .and_then(|f| f.take(1024).read_to_string(&mut text))
        .map_err(|e| KeyError(format!("{}: cannot read the {what}: {e}", path.display())))?;
    unhex::<32>(text.trim_end_matches('\n')).ok_or_else(|| {
        KeyError(format!(
            "{}: not a {what} file (one line of 64 lower-case hex digits)",
            path.display()
        ))
    })
}

/// `name` with `ext` appended (`game` → `game.key`).
fn with_ext(name: &Path, ext: &str) -> PathBuf {
    let mut s = name.as_os_str().to_owned();
    s.push(ext);
    PathBuf::from(s)
}

/// Writes `line` to a new file of mode `mode` (never over an existing one), synced.
fn write_new(path: &Path, line: &str, mode: u32) -> io::Result<()> {
    use std::os::unix::fs::OpenOptionsExt;
    let mut f = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(mode)
        .open(path)
        .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", path.display())))?;
    writeln!(f, "{line}").and_then(|_| f.sync_all())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signatures_check_only_what_and_whom_they_sign() {
        let key = SecretKey::generate().unwrap();
        let other = SecretKey::generate().unwrap();
        let h = "ab".repeat(32);
        let sig = key.sign_record(&h);
        assert!(is_signature(&sig));
        assert!(key.public().verifies_record(&h, &sig));
        assert!(!other.public().verifies_record(&h, &sig));
        assert!(!key.public().verifies_record(&"cd".repeat(32), &sig));
        // A record signature never passes for a message signature.
        assert!(!key.public().verifies_message(1, 2, &h, &sig));
        let m = key.sign_message(1, 2, &h);
        assert!(key.public().verifies_message(1, 2, &h, &m));
        assert!(!key.public().verifies_message(2, 2, &h, &m));
        assert!(!key.public().verifies_record(&h, "zz"));
    }

    #[test]
    fn hex_round_trips_and_rejects_bad_text() {
        let key = SecretKey::generate().unwrap();
        assert_eq!(unhex::<32>(&key.to_hex()), Some(*key.0.as_bytes()));
        assert_eq!(unhex::<32>("AB"), None);
        assert_eq!(unhex::<1>("AB"), None);
        assert_eq!(unhex::<1>("ab"), Some([0xab]));
    }
}
