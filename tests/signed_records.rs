//! Signed records and messages (`referee keygen`, `match --sign`, `tournament --sign`,
//! `pbm new --key`, `verify --key`, `audit --key`), through the real binary only: a
//! signed record verifies with its key and with no other, fails once any line is
//! changed even with the hash chain sealed again, an unsigned one fails `--key` but
//! still verifies, and every message of a signed mail game carries a signature
//! `audit --key` checks.

mod cli_support;

use std::path::Path;
use std::process::Output;

use referee::record::{Line, SignatureLine};
use tempfile::TempDir;

use cli_support::{referee_in, reseal, text};

const BEGIN: &str = "=== referee play-by-mail message to seat ";

/// Runs the referee in `dir` with `args`.
fn run(dir: &Path, args: &[&str]) -> Output {
    referee_in(dir).args(args).output().expect("the binary runs")
}

/// Asserts `out` failed with `code` and one line on stderr holding `needle`.
fn assert_fails(out: &Output, code: i32, needle: &str) {
    let err = text(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(code),
        "stdout {} stderr {err}",
        text(&out.stdout)
    );
    assert!(err.contains(needle), "stderr names `{needle}`: {err}");
    assert!(err.lines().all(|l| l.starts_with("referee: ")), "{err}");
}

/// A directory with two key pairs, `judge` and `other`.
fn keys() -> TempDir {
    let dir = tempfile::tempdir().expect("a temporary directory");
    for name in ["judge", "other"] {
        let out = run(dir.path(), &["keygen", "--out", name]);
        assert!(out.status.success(), "keygen: {}", text(&out.stderr));
    }
    dir
}

/// A match of `game` between random agents, at most `plies` plies, with `extra`
/// words (`--sign KEY`), recorded in `record` in `dir`; it must succeed.
fn random_match(dir: &Path, game: &str, plies: u32, extra: &[&str], record: &str) {
    let max = format!("max-plies={plies}");
    let mut args = vec!["match", "--game", game, "-o", &max, "--fill", "random"];
    args.extend_from_slice(extra);
    args.extend(["--record", record, "-q"]);
    let out = run(dir, &args);
    assert!(out.status.success(), "match: {}", text(&out.stderr));
}

/// `verify --key PUB RECORD` in `dir`.
fn verify_key(dir: &Path, key: &str, record: &str) -> Output {
    run(dir, &["verify", "--key", key, record])
}

#[test]
fn keygen_writes_a_private_secret_and_never_overwrites() {
    use std::os::unix::fs::PermissionsExt;
    let dir = keys();
    let mode = |f: &str| {
        std::fs::metadata(dir.path().join(f))
            .unwrap()
            .permissions()
            .mode()
            & 0o777
    };
    assert_eq!(mode("judge.key"), 0o600);
    let public = std::fs::read_to_string(dir.path().join("judge.pub")).unwrap();
    assert_eq!(public.trim().len(), 64, "64 hex digits: {public}");
    let before = std::fs::read(dir.path().join("judge.key")).unwrap();
    assert_fails(
        &run(dir.path(), &["keygen", "--out", "judge"]),
        2,
        "already exists",
    );
    assert_eq!(std::fs::read(dir.path().join("judge.key")).unwrap(), before);
    assert_fails(
        &run(dir.path(), &["keygen", "--out", "no/such/dir/k"]),
        2,
        "No such file",
    );
}

#[test]
fn a_signed_match_verifies_with_its_key_only() {
    let dir = keys();
    let d = dir.path();
    random_match(d, "telka", 12, &["--sign", "judge.key"], "r.jsonl");
    let ok = verify_key(d, "judge.pub", "r.jsonl");
    assert!(ok.status.success(), "verify --key: {}", text(&ok.stderr));
    assert!(
        text(&ok.stdout).contains("signed by the key"),
        "{}",
        text(&ok.stdout)
    );
    assert_fails(&verify_key(d, "other.pub", "r.jsonl"), 1, "signed by another key");
    // A key file that is not one: bad input.
    std::fs::write(d.join("bad.pub"), "not hex\n").unwrap();
    assert_fails(&verify_key(d, "bad.pub", "r.jsonl"), 2, "not a public key file");
    assert_fails(
        &verify_key(d, "missing.pub", "r.jsonl"),
        2,
        "cannot read the public key",
    );
    // A bad secret key: the match does not start, and no record is written.
    let out = run(
        d,
        &[
            "match", "--game", "telka", "--sign", "bad.pub", "--record", "x.jsonl", "-q",
        ],
    );
    assert_fails(&out, 2, "not a secret key file");
    assert!(!d.join("x.jsonl").exists());
}

/// A forger's change to a record's typed lines.
type Edit = fn(&mut Vec<Line>);

#[test]
fn a_changed_line_sealed_again_fails_verify_key_but_not_verify() {
    let dir = keys();
    let d = dir.path();
    random_match(d, "pegchow", 10, &["--sign", "judge.key"], "r.jsonl");
    let edits: [(&str, Edit); 3] = [
        ("header", |lines| {
            if let Line::Header(h) = &mut lines[0] {
                h.seats[0].name = "someone else".into();
            }
        }),
        ("result", |lines| {
            let i = lines.iter().rposition(|l| matches!(l, Line::Result(_))).unwrap();
            if let Line::Result(r) = &mut lines[i] {
                r.reason = "forged".into();
            }
        }),
        // A forger who drops the last signature: the lines after the one before are
        // then unsigned.
        ("dropped signature", |lines| {
            lines.pop();
        }),
    ];
    for (what, edit) in edits {
        reseal(&d.join("r.jsonl"), &d.join("forged.jsonl"), edit);
        let out = verify_key(d, "judge.pub", "forged.jsonl");
        assert_eq!(out.status.code(), Some(1), "{what}: {}", text(&out.stderr));
        if what == "header" {
            // The chain is whole: only the signature tells the forgery.
            let plain = run(d, &["verify", "forged.jsonl"]);
            assert!(plain.status.success(), "{what}: {}", text(&plain.stderr));
            assert!(text(&out.stderr).contains("line 2: the signature is not this key's"));
        }
    }
    // A signature copied from elsewhere onto an unsigned record does not sign it.
    reseal(&d.join("r.jsonl"), &d.join("copied.jsonl"), |lines| {
        let sig = lines.last().cloned().unwrap();
        lines.retain(|l| !matches!(l, Line::Signature(_)));
        if let Line::Header(h) = &mut lines[0] {
            h.seed += 1;
        }
        lines.push(sig);
    });
    assert_fails(&verify_key(d, "judge.pub", "copied.jsonl"), 1, "not this key's");
}

#[test]
fn an_unsigned_record_fails_verify_key_and_passes_verify() {
    let dir = keys();
    let d = dir.path();
    random_match(d, "telka", 6, &[], "u.jsonl");
    assert!(run(d, &["verify", "u.jsonl"]).status.success());
    assert_fails(&verify_key(d, "judge.pub", "u.jsonl"), 1, "not signed");
    // A signature line in the middle only: the lines after it are not signed.
    reseal(&d.join("u.jsonl"), &d.join("half.jsonl"), |lines| {
        lines.insert(
            1,
            Line::Signature(SignatureLine {
                signature: "ab".repeat(64),
                time: None,
            }),
        );
    });
    assert!(run(d, &["verify", "half.jsonl"]).status.success());
    assert_fails(&verify_key(d, "judge.pub", "half.jsonl"), 1, "line 2");
}

#[test]
fn a_signed_tournament_signs_every_game() {
    let dir = keys();
    let d = dir.path();
    let out = run(
        d,
        &[
            "tournament",
            "--game",
            "telka",
            "-o",
            "max-plies=8",
            "--agent",
            "builtin:random",
            "--agent",
            "builtin:greedy",
            "--games",
            "2",
            "--out",
            "t",
            "--sign",
            "judge.key",
            "--report-every",
            "0",
        ],
    );
    assert!(out.status.success(), "tournament: {}", text(&out.stderr));
    let games: Vec<_> = std::fs::read_dir(d.join("t/games"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    assert_eq!(games.len(), 2, "{games:?}");
    for g in games {
        let g = g.to_string_lossy().into_owned();
        let ok = verify_key(d, "judge.pub", &g);
        assert!(ok.status.success(), "{g}: {}", text(&ok.stderr));
    }
}

/// The messages to `seat` in a command's output.
fn messages_to(out: &Output, seat: usize) -> Vec<String> {
    let mut found = Vec::new();
    for block in text(&out.stdout).split_inclusive("=== end of message ===\n") {
        if block.trim_start().starts_with(&format!("{BEGIN}{seat} ")) {
            found.push(block.trim_start().to_string());
        }
    }
    found
}

/// A signed two-seat Telka mail game, played one action and resigned; returns the
/// directory and seat 1's messages.
fn signed_mail_game() -> (TempDir, Vec<String>) {
    let dir = keys();
    let d = dir.path();
    let mut mine = Vec::new();
    let steps: [&[&str]; 3] = [
        &[
            "pbm",
            "new",
            "--game",
            "telka",
            "--seat",
            "a",
            "--seat",
            "b",
            "--key",
            "judge.key",
            "g.jsonl",
        ],
        &["pbm", "play", "g.jsonl", "--seat", "1", "a1-c3"],
        &["pbm", "resign", "g.jsonl", "--seat", "2"],
    ];
    for args in steps {
        let out = run(d, args);
        assert!(out.status.success(), "{args:?}: {}", text(&out.stderr));
        mine.extend(messages_to(&out, 1));
        // Signed as it grows: every state of the record verifies with the key.
        let ok = verify_key(d, "judge.pub", "g.jsonl");
        assert!(ok.status.success(), "after {args:?}: {}", text(&ok.stderr));
    }
    assert_eq!(mine.len(), 3);
    assert!(mine
        .iter()
        .all(|m| m.lines().any(|l| l.starts_with("signature: "))));
    (dir, mine)
}

/// `audit g.jsonl --seat 1` of `messages`, with `key` if any.
fn audit(dir: &Path, messages: &[String], key: Option<&str>) -> Output {
    std::fs::write(dir.join("t.txt"), messages.join("\n")).unwrap();
    let mut args = vec!["audit", "g.jsonl", "--seat", "1", "--transcript", "t.txt"];
    if let Some(k) = key {
        args.extend(["--key", k]);
    }
    run(dir, &args)
}

#[test]
fn audit_key_checks_every_messages_signature() {
    let (dir, mine) = signed_mail_game();
    let d = dir.path();
    for key in [None, Some("judge.pub")] {
        let ok = audit(d, &mine, key);
        assert!(ok.status.success(), "{key:?}: {}", text(&ok.stderr));
    }
    assert_fails(&audit(d, &mine, Some("other.pub")), 1, "signed by another key");
    let unsigned: Vec<String> = mine
        .iter()
        .map(|m| {
            m.lines()
                .filter(|l| !l.starts_with("signature: "))
                .map(|l| format!("{l}\n"))
                .collect()
        })
        .collect();
    assert_fails(&audit(d, &unsigned, Some("judge.pub")), 1, "not signed");
    // A signature of another message (another line) does not pass for this one's.
    let mut swapped = mine.clone();
    let sig = |m: &str| {
        m.lines()
            .find(|l| l.starts_with("signature: "))
            .unwrap()
            .to_string()
    };
    swapped[0] = swapped[0].replace(&sig(&mine[0]), &sig(&mine[1]));
    assert_fails(
        &audit(d, &swapped, Some("judge.pub")),
        1,
        "message up to line 2: its signature",
    );
    std::fs::write(d.join("bad.pub"), "zz\n").unwrap();
    assert_fails(&audit(d, &mine, Some("bad.pub")), 2, "not a public key file");
}

#[test]
fn audit_key_fails_a_record_not_signed() {
    let (dir, mine) = signed_mail_game();
    let d = dir.path();
    // The judge's record replaced by the same game sealed again without signatures.
    reseal(&d.join("g.jsonl"), &d.join("g.jsonl"), |lines| {
        lines.retain(|l| !matches!(l, Line::Signature(_)))
    });
    assert_fails(&audit(d, &mine, Some("judge.pub")), 1, "the record: not signed");
}

#[test]
fn a_bad_key_creates_no_game() {
    let dir = keys();
    let d = dir.path();
    std::fs::write(d.join("bad.key"), "0123\n").unwrap();
    let before: Vec<_> = std::fs::read_dir(d)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    let args = [
        "pbm", "new", "--game", "telka", "--seat", "a", "--seat", "b", "--key", "bad.key", "g.jsonl",
    ];
    assert_fails(&run(d, &args), 2, "not a secret key file");
    let after: Vec<_> = std::fs::read_dir(d)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(before, after, "nothing is written");
}

#[test]
fn messages_carry_no_unsalted_hash_nor_record_signature() {
    let (dir, mine) = signed_mail_game();
    let body = std::fs::read_to_string(dir.path().join("g.jsonl")).unwrap();
    // Every hash and signature the record holds: none may reach a seat, as one over
    // unsalted hidden state could be tested against guesses of it (R-S1).
    let secrets: Vec<String> = cli_support::typed_lines(&body)
        .iter()
        .filter_map(|l| match l {
            Line::Signature(s) => Some(s.signature.clone()),
            _ => None,
        })
        .chain(
            body.lines()
                .map(|l| referee::record::unseal(l).unwrap().1.to_string()),
        )
        .collect();
    assert!(secrets.len() > 4);
    for m in &mine {
        for s in &secrets {
            assert!(!m.contains(s.as_str()), "a message holds {s}:\n{m}");
        }
    }
}
