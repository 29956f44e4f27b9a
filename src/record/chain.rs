//! The hash chain: how a line is sealed with the hash of everything before it, how
//! a sealed line is split back into its body and hash, and the salted digests that
//! commit to hidden information (R-S1). Its own room because it is the one place that
//! knows the bytes hashed, shared by the writer and the replay; the hex is written by
//! hand because `verify` hashes every line of every record.

use sha2::{Digest, Sha256};

use super::{fast_action, Line};

/// `SHA-256(salt ‖ label ‖ text)` in hex: the one way salted digests are made (R-S1).
pub fn salted_digest(salt_hex: &str, label: &str, text: &str) -> String {
    let mut h = Sha256::new();
    h.update(salt_hex.as_bytes());
    h.update(label.as_bytes());
    h.update(text.as_bytes());
    hex(&h.finalize())
}

/// Serialises `line` and appends its chained hash.
pub fn seal(prev: &str, line: &Line) -> String {
    let mut text = String::with_capacity(256);
    let direct = matches!(line, Line::Action(a) if fast_action::write(a, &mut text));
    if !direct {
        text = serde_json::to_string(line).expect("record lines always serialise");
    }
    let digest = chain_digest(prev, text.as_bytes());
    text.pop(); // the closing brace
    text.push_str(",\"hash\":\"");
    push_hex(&mut text, &digest);
    text.push_str("\"}");
    text
}

/// SHA-256 over the previous hash and the line body, as lower-case hex.
pub fn chain_hash(prev: &str, body: &[u8]) -> String {
    hex(&chain_digest(prev, body))
}

/// SHA-256 over the previous hash and the line body.
fn chain_digest(prev: &str, body: &[u8]) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update(prev.as_bytes());
    h.update(body);
    h.finalize().into()
}

/// Lower-case hex of `bytes` (no formatting machinery).
pub fn hex(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len() * 2);
    push_hex(&mut out, bytes);
    out
}

/// Appends the lower-case hex of `bytes`.
fn push_hex(out: &mut String, bytes: &[u8]) {
    match <&[u8; 32]>::try_from(bytes) {
        // A digest: every record line has one, so it is one copy of stack bytes.
        Ok(digest) => out.push_str(std::str::from_utf8(&hex_digest(digest)).expect("hex digits are ASCII")),
        Err(_) => bytes.iter().for_each(|&b| {
            let [hi, lo] = HEX_PAIRS[b as usize];
            out.push(char::from(hi));
            out.push(char::from(lo));
        }),
    }
}

/// The lower-case hex of a SHA-256 digest, as ASCII bytes on the stack.
fn hex_digest(digest: &[u8; 32]) -> HexHash {
    let mut out = [0; 64];
    for (pair, &b) in out.chunks_exact_mut(2).zip(digest) {
        pair.copy_from_slice(&HEX_PAIRS[b as usize]);
    }
    out
}

const HEX_DIGITS: &[u8; 16] = b"0123456789abcdef";

/// A chain hash as the ASCII bytes of its hex: `verify` computes one per line, so it
/// lives on the stack rather than in a fresh `String`.
pub(super) type HexHash = [u8; 64];

/// The chain hash of a sealed line whose body without the closing brace is `head`.
pub(super) fn sealed_line_hash(prev: &HexHash, head: &str) -> HexHash {
    let mut h = Sha256::new();
    h.update(prev);
    h.update(head.as_bytes());
    h.update(b"}");
    hex_digest(&h.finalize().into())
}

/// The two hex digits of every byte, so that a digest is written a byte at a time.
static HEX_PAIRS: [[u8; 2]; 256] = {
    let mut pairs = [[0; 2]; 256];
    let mut b = 0;
    while b < 256 {
        pairs[b] = [HEX_DIGITS[b >> 4], HEX_DIGITS[b & 15]];
        b += 1;
    }
    pairs
};

/// Splits a sealed line into its body without the closing brace and its stored hash:
/// the hashed bytes are the head followed by `}`.
pub(super) fn split_sealed(text: &str) -> Option<(&str, &str)> {
    split_sealed_unchecked(text).filter(|(_, hash)| is_lower_hex(hash))
}

/// [`split_sealed`] without checking that the hash is hex, for callers that compare
/// it with a computed one first.
pub(super) fn split_sealed_unchecked(text: &str) -> Option<(&str, &str)> {
    const SUFFIX_LEN: usize = ",\"hash\":\"".len() + 64 + "\"}".len();
    if text.len() < SUFFIX_LEN + 2 || !text.is_char_boundary(text.len() - SUFFIX_LEN) {
        return None;
    }
    let (head, tail) = text.split_at(text.len() - SUFFIX_LEN);
    let hash = tail.strip_prefix(",\"hash\":\"")?.strip_suffix("\"}")?;
    Some((head, hash))
}

/// Whether `text` is lower-case hex digits only.
pub(super) fn is_lower_hex(text: &str) -> bool {
    text.bytes()
        .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// The hash stored at the end of a sealed line.
pub(super) fn hash_of_sealed(text: &str) -> &str {
    &text[text.len() - 66..text.len() - 2]
}

/// Splits a sealed line into its body (hash member removed) and its stored hash.
pub fn unseal(text: &str) -> Option<(String, &str)> {
    split_sealed(text).map(|(head, hash)| (format!("{head}}}"), hash))
}

#[cfg(test)]
mod tests {
    use super::super::{CommitLine, ResultLine, GENESIS};
    use super::*;

    #[test]
    fn sealed_lines_unseal_to_their_body() {
        let line = Line::Result(ResultLine {
            places: vec![1, 2],
            reason: "win".into(),
            plies: 3,
            state: "x".into(),
            escaped: None,
            time: None,
        });
        let sealed = seal(GENESIS, &line);
        let (body, hash) = unseal(&sealed).unwrap();
        assert_eq!(body, serde_json::to_string(&line).unwrap());
        assert_eq!(hash, chain_hash(GENESIS, body.as_bytes()));
        assert_eq!(unseal("{}"), None);
    }

    #[test]
    fn line_hashes_are_chain_hashes_of_the_body() {
        let line = Line::Commit(CommitLine {
            commitment: "c".into(),
            time: None,
        });
        let mut prev: HexHash = GENESIS.as_bytes().try_into().unwrap();
        for _ in 0..3 {
            let prev_text = std::str::from_utf8(&prev).unwrap();
            let sealed = seal(prev_text, &line);
            let (head, stored) = split_sealed(&sealed).unwrap();
            let computed = sealed_line_hash(&prev, head);
            assert_eq!(computed, stored.as_bytes());
            assert_eq!(
                computed,
                chain_hash(prev_text, unseal(&sealed).unwrap().0.as_bytes()).as_bytes()
            );
            prev = computed;
        }
    }
}
