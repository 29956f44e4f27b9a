//! `referee audit` checks every line a seat is told, through the real binary: a real
//! transcript of a four-seat Telka game by mail (partners, passwords, a signature)
//! passes, and altering any one line of it that is not informational fails the audit
//! naming that line; the informational lines (`note:`, `password:`) may change.

mod cli_support;

use std::path::Path;
use std::process::Output;

use tempfile::TempDir;

use cli_support::{referee_in, text};

const BEGIN: &str = "=== referee play-by-mail message to seat ";
const END: &str = "=== end of message ===";

/// Runs the referee in `dir` with `args`.
fn run(dir: &Path, args: &[&str]) -> Output {
    referee_in(dir).args(args).output().expect("the binary runs")
}

/// The messages to seat 1 in a command's output.
fn to_seat_1(out: &Output) -> Vec<String> {
    text(&out.stdout)
        .split_inclusive(&format!("{END}\n"))
        .map(str::trim_start)
        .filter(|m| m.starts_with(&format!("{BEGIN}1 ")))
        .map(str::to_string)
        .collect()
}

/// The first legal action of a message's `legal:` line (grouped or not).
fn first_legal(message: &str) -> String {
    let line = message
        .lines()
        .find_map(|l| l.strip_prefix("legal: "))
        .expect("a legal line");
    let word = line.split(']').next().unwrap();
    match word.split_once('[') {
        Some((head, tails)) => format!("{head}{}", tails.split(' ').next().unwrap()),
        None => word.split(' ').next().unwrap().to_string(),
    }
}

/// A signed four-seat Telka game by mail, played to its ply limit by each seat's
/// first legal action; returns the directory and seat 1's messages, in order.
fn played() -> (TempDir, Vec<String>) {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let d = dir.path();
    assert!(run(d, &["keygen", "--out", "judge"]).status.success());
    let mut args = vec![
        "pbm",
        "new",
        "--game",
        "telka",
        "-o",
        "players=4",
        "-o",
        "max-plies=5",
    ];
    for s in ["p1", "p2", "p3", "p4"] {
        args.extend(["--seat", s]);
    }
    for a in [
        "p1@example.org",
        "p2@example.org",
        "p3@example.org",
        "p4@example.org",
    ] {
        args.extend(["--address", a]);
    }
    args.extend(["--key", "judge.key", "g.jsonl"]);
    let out = run(d, &args);
    assert!(out.status.success(), "pbm new: {}", text(&out.stderr));
    let mut mine = to_seat_1(&out);
    for _ in 0..5 {
        let status = text(&run(d, &["pbm", "status", "g.jsonl"]).stdout);
        let seat = status
            .lines()
            .find_map(|l| l.strip_prefix("turn: seat "))
            .and_then(|r| r.split(' ').next())
            .expect("someone to act")
            .to_string();
        let view = text(&run(d, &["pbm", "view", "g.jsonl", "--seat", &seat]).stdout);
        let action = first_legal(&view);
        let out = run(d, &["pbm", "play", "g.jsonl", "--seat", &seat, &action]);
        assert!(out.status.success(), "play {action}: {}", text(&out.stderr));
        mine.extend(to_seat_1(&out));
    }
    assert!(text(&run(d, &["pbm", "status", "g.jsonl"]).stdout).contains("over"));
    (dir, mine)
}

/// `audit g.jsonl --seat 1 --key judge.pub` of `messages`.
fn audit(dir: &Path, messages: &[String]) -> Output {
    std::fs::write(dir.join("t.txt"), messages.join("\n")).unwrap();
    run(
        dir,
        &[
            "audit",
            "g.jsonl",
            "--seat",
            "1",
            "--transcript",
            "t.txt",
            "--key",
            "judge.pub",
        ],
    )
}

/// `messages` with the first line starting with `prefix` (in the first message that
/// has one) replaced by `change` of it; `None` when no message has such a line.
fn altered(messages: &[String], prefix: &str, change: impl Fn(&str) -> String) -> Option<Vec<String>> {
    let i = messages
        .iter()
        .position(|m| m.lines().any(|l| l.starts_with(prefix)))?;
    let mut out = messages.to_vec();
    let mut done = false;
    out[i] = messages[i]
        .lines()
        .map(|l| {
            if !done && l.starts_with(prefix) {
                done = true;
                format!("{}\n", change(l))
            } else {
                format!("{l}\n")
            }
        })
        .collect();
    Some(out)
}

#[test]
fn every_line_a_seat_is_told_is_audited() {
    let (dir, mine) = played();
    let d = dir.path();
    let ok = audit(d, &mine);
    assert!(ok.status.success(), "the true transcript: {}", text(&ok.stderr));
    let all = mine.concat();
    for needed in [
        "partners: ",
        "password: ",
        "signature: ",
        "legal: ",
        "waiting for: ",
        "result: ",
        "salt: ",
    ] {
        assert!(all.contains(needed), "the game told seat 1 a `{needed}` line");
    }
    let cases: [(&str, &str); 15] = [
        (BEGIN, "first line (seat and name)"),
        ("game: ", "`game:` line"),
        ("you: ", "`you:` line"),
        ("players: ", "`players:` line"),
        ("partners: ", "`partners:` line"),
        ("record: ", "its record hash is not the record's"),
        ("signature: ", "its signature is not this key's"),
        ("  event ", "the events told are not what the rules give"),
        ("view: ", "`view:` line"),
        ("  | ", "board diagram"),
        ("your turn: ", "`your turn:` line"),
        ("legal: ", "`legal:` line"),
        ("waiting for: ", "`waiting for:` line"),
        ("result: ", "`result:` line"),
        ("salt: ", "`salt:` line"),
    ];
    for (prefix, named) in cases {
        let changed = altered(&mine, prefix, |l| {
            // A changed last digit keeps a hash or a signature the shape it has.
            match l.strip_suffix('0') {
                Some(rest) => format!("{rest}1"),
                None => format!("{}0", &l[..l.len() - 1]),
            }
        })
        .unwrap_or_else(|| panic!("seat 1 was told a `{prefix}` line"));
        let out = audit(d, &changed);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "altered `{prefix}`: {err}");
        assert!(
            err.contains(named),
            "altered `{prefix}` is named `{named}`: {err}"
        );
        // Dropped instead of changed: caught too (a message without its marker or its
        // `record:` line is no message: bad input, tested in tests/pbm.rs).
        let dropped: Vec<String> = changed.iter().map(|m| drop_first(m, prefix)).collect();
        if prefix != BEGIN && prefix != "record: " {
            assert_eq!(audit(d, &dropped).status.code(), Some(1), "dropped `{prefix}`");
        }
    }
}

/// `message` without its first line starting with `prefix`.
fn drop_first(message: &str, prefix: &str) -> String {
    let mut done = false;
    message
        .lines()
        .filter(|l| {
            let drop = !done && l.starts_with(prefix);
            done |= drop;
            !drop
        })
        .map(|l| format!("{l}\n"))
        .collect()
}

#[test]
fn a_since_line_that_hides_events_is_caught() {
    let (dir, mine) = played();
    let d = dir.path();
    // A message that told events, claiming they came before its `since`.
    let i = mine
        .iter()
        .position(|m| m.contains("\n  event "))
        .expect("events were told");
    let line = mine[i]
        .lines()
        .find_map(|l| l.strip_prefix("record: line "))
        .and_then(|r| r.split(',').next())
        .unwrap()
        .to_string();
    let mut lying = mine.clone();
    lying[i] = altered(&mine[i..=i], "since line ", |_| format!("since line {line}:")).unwrap()[0].clone();
    let out = audit(d, &lying);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("the events told are not what the rules give"));
}

#[test]
fn informational_lines_may_change_and_other_lines_may_not_be_added() {
    let (dir, mine) = played();
    let d = dir.path();
    let mut changed = altered(&mine, "password: ", |_| "password: something else".into()).unwrap();
    changed[1] = changed[1].replacen('\n', "\nnote: 2 actions applied\n", 1);
    let ok = audit(d, &changed);
    assert!(
        ok.status.success(),
        "notes and passwords are informational: {}",
        text(&ok.stderr)
    );
    let mut added = mine.clone();
    added[1] = added[1].replace(&format!("{END}\n"), &format!("bonus: you win\n{END}\n"));
    let out = audit(d, &added);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("told \"bonus: you win\""),
        "{}",
        text(&out.stderr)
    );
}
