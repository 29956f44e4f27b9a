//! Mail in (`referee pbm mail`, `referee pbm inbox`), through the real binary, with
//! mails written as players write them: any letter case, quoted replies, signatures,
//! multipart, base64 and quoted-printable bodies; forged senders and wrong passwords
//! that change nothing; a Maildir processed exactly once, crashes included.

mod cli_support;

use std::path::Path;
use std::process::Output;

use cli_support::{base64_encode, mail_game_args, referee_in, text};

const RECORD: &str = "game.jsonl";
const ALICE: &str = "alice@example.org";
const BOB: &str = "bob@example.org";

fn run(dir: &Path, args: &[&str], stdin: &[u8], fault: Option<&str>) -> Output {
    let mut cmd = referee_in(dir);
    cmd.env_remove("REFEREE_PBM_FAULT");
    if let Some(f) = fault {
        cmd.env("REFEREE_PBM_FAULT", f);
    }
    cmd.args(args)
        .write_stdin(stdin)
        .output()
        .expect("the binary runs")
}

/// A two-seat Telka game taking mail from alice (seat 1) and bob (seat 2); returns
/// the directory and the passwords.
fn new_game() -> (tempfile::TempDir, [String; 2]) {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let mut args = mail_game_args(["Alice@Example.org", BOB]);
    args.push(RECORD);
    let out = run(dir.path(), &args, b"", None);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let said = text(&out.stdout);
    let passwords: Vec<String> = said
        .lines()
        .filter_map(|l| l.strip_prefix("password: "))
        .map(|l| l.split(' ').next().expect("a password").to_string())
        .collect();
    assert_eq!(
        passwords.len(),
        2,
        "each seat is told its own password once:\n{said}"
    );
    assert_ne!(passwords[0], passwords[1]);
    // Each password is in its own seat's message only.
    let second = said.find("message to seat 2").expect("seat 2's message");
    assert!(said[..second].contains(&passwords[0]) && !said[second..].contains(&passwords[0]));
    assert!(said[second..].contains(&passwords[1]) && !said[..second].contains(&passwords[1]));
    (dir, [passwords[0].clone(), passwords[1].clone()])
}

/// A plain mail.
fn plain(from: &str, id: &str, body: &str) -> Vec<u8> {
    format!("From: Player <{from}>\r\nTo: referee@example.org\r\nSubject: Re: your move\r\nMessage-ID: <{id}@example.org>\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n{body}").into_bytes()
}

fn mail(dir: &Path, bytes: &[u8]) -> Output {
    run(dir, &["pbm", "mail", RECORD], bytes, None)
}

fn record(dir: &Path) -> String {
    std::fs::read_to_string(dir.join(RECORD)).expect("the record")
}

fn actions(dir: &Path) -> Vec<String> {
    record(dir)
        .lines()
        .filter(|l| l.contains("\"type\":\"action\""))
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).expect("json");
            v["action"].as_str().expect("an action").to_string()
        })
        .collect()
}

#[test]
fn a_mail_as_players_write_it_moves_for_its_seat() {
    let (dir, pw) = new_game();
    let d = dir.path();
    let body = format!(
        "Hi referee,\r\n\r\n  PassWord {}\r\nPLAY A1-C3\r\n\r\n> On Monday you wrote:\r\n> resign\r\n-- \r\nAlice\r\nresign\r\n",
        pw[0].to_uppercase()
    );
    // "Hi referee," is no command: it is taken as an action and stops the mail.
    let out = mail(d, &plain(ALICE, "1", &body));
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(actions(d).is_empty(), "nothing after a rejected line is applied");
    assert!(
        text(&out.stdout).contains("note: rejected, nothing changed"),
        "{}",
        text(&out.stdout)
    );
    let body = format!(
        "  PassWord {}\r\nPLAY A1-C3\r\n\r\n> resign\r\n-- \r\nresign\r\n",
        pw[0]
    );
    let out = mail(d, &plain(ALICE, "2", &body));
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(actions(d), ["a1-c3"], "written as the game writes it");
    assert!(
        !record(d).contains("\"type\":\"forfeit\""),
        "quoted and signed lines are ignored"
    );
    let said = text(&out.stdout);
    assert!(said.contains("note: applied: 1 of 1"), "{said}");
    assert!(
        said.contains("message to seat 2 (bob)"),
        "every seat is mailed:\n{said}"
    );
    assert!(
        !said.contains(&pw[0]) && !said.contains(&pw[1]),
        "no password is repeated"
    );
    // The same mail delivered twice is applied once.
    let out = mail(d, &plain(ALICE, "2", &body));
    assert!(out.status.success());
    assert!(
        text(&out.stderr).contains("processed before"),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(actions(d), ["a1-c3"]);
    let verify = run(d, &["verify", RECORD], b"", None);
    assert!(verify.status.success(), "{}", text(&verify.stderr));
}

#[test]
fn multipart_base64_and_quoted_printable_bodies_are_read() {
    let (dir, pw) = new_game();
    let d = dir.path();
    assert!(
        mail(d, &plain(ALICE, "1", &format!("password {}\na1-c3\n", pw[0])))
            .status
            .success()
    );
    // Bob: multipart/alternative, the text part quoted-printable with a soft break.
    let qp = format!(
        "From: bob@example.org\r\nMessage-ID: <b1@example.org>\r\nMIME-Version: 1.0\r\nContent-Type: multipart/alternative; boundary=\"XX\"\r\n\r\n--XX\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\npass=\r\nword {}\r\nk11-i9\r\n-- =\r\n\r\nBob =E2=80=94 sent from my phone\r\n--XX\r\nContent-Type: text/html\r\n\r\n<p>resign</p>\r\n--XX--\r\n",
        pw[1]
    );
    let out = mail(d, qp.as_bytes());
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(actions(d), ["a1-c3", "k11-i9"]);
    // Alice: base64, two actions; the second is not hers to make and stops there.
    let body = format!("password {}\r\nb1-d3\r\nc1-e1\r\nview\r\n", pw[0]);
    let b64 = base64_encode(body.as_bytes());
    let m = format!("From: Alice <alice@example.org>\r\nMessage-ID: <a2@example.org>\r\nMIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: base64\r\n\r\n{b64}\r\n");
    let dir_out = d.join("out");
    let out = run(d, &["pbm", "mail", RECORD, "--outdir", "out"], m.as_bytes(), None);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(actions(d), ["a1-c3", "k11-i9", "b1-d3"]);
    let alice = std::fs::read_to_string(dir_out.join("seat-1.txt")).expect("seat 1's file");
    assert!(alice.contains("note: applied: 1 of 2"), "{alice}");
    assert!(
        alice.contains("note: rejected, nothing changed: not seat 1's turn"),
        "{alice}"
    );
    let bob = std::fs::read_to_string(dir_out.join("seat-2.txt")).expect("seat 2's file");
    assert!(!bob.contains("note:"), "replies go to the sender only:\n{bob}");
}

#[test]
fn a_forged_sender_or_a_wrong_password_changes_nothing() {
    let (dir, pw) = new_game();
    let d = dir.path();
    let files = |d: &Path| {
        let mut v: Vec<(String, Vec<u8>)> = std::fs::read_dir(d)
            .expect("dir")
            .map(|e| e.expect("entry"))
            .map(|e| {
                (
                    e.file_name().to_string_lossy().into_owned(),
                    std::fs::read(e.path()).expect("file"),
                )
            })
            .collect();
        v.sort();
        v
    };
    let before = files(d);
    for (what, m) in [
        (
            "bob's address, alice's password",
            plain(BOB, "f1", &format!("password {}\nk11-i9\n", pw[0])),
        ),
        (
            "alice's address, bob's password",
            plain(ALICE, "f2", &format!("password {}\na1-c3\n", pw[1])),
        ),
        ("no password", plain(ALICE, "f3", "a1-c3\n")),
        (
            "an unknown address",
            plain(
                "mallory@example.org",
                "f4",
                &format!("password {}\na1-c3\n", pw[0]),
            ),
        ),
        ("no From", b"Subject: hi\r\n\r\npassword x\r\n".to_vec()),
    ] {
        let out = mail(d, &m);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{what}: {err}");
        assert_eq!(err.lines().count(), 1, "{what}: {err}");
        assert!(err.contains("refused, nothing changed"), "{what}: {err}");
        assert!(out.stdout.is_empty(), "{what}: nothing is mailed");
        assert_eq!(files(d), before, "{what}: nothing changed on disk");
    }
}

/// A Maildir with `mails` in new/, named in delivery order.
fn maildir(d: &Path, mails: &[Vec<u8>]) {
    for sub in ["tmp", "new", "cur"] {
        std::fs::create_dir_all(d.join("mail").join(sub)).expect("maildir");
    }
    for (i, m) in mails.iter().enumerate() {
        std::fs::write(d.join(format!("mail/new/{}.{i}.host", 1000 + i)), m).expect("mail");
    }
}

fn count(d: &Path, sub: &str) -> usize {
    std::fs::read_dir(d.join("mail").join(sub)).expect("dir").count()
}

fn inbox(d: &Path, fault: Option<&str>) -> Output {
    run(d, &["pbm", "inbox", RECORD, "--maildir", "mail"], b"", fault)
}

#[test]
fn an_inbox_is_processed_once_each_mail_in_order() {
    let (dir, pw) = new_game();
    let d = dir.path();
    let first = plain(ALICE, "m1", &format!("password {}\na1-c3\n", pw[0]));
    maildir(
        d,
        &[
            first.clone(),
            plain(BOB, "m2", &format!("password {}\nk11-i9\n", pw[0])),
            plain(BOB, "m3", &format!("password {}\nk11-i9\n", pw[1])),
            first,
        ],
    );
    let out = inbox(d, None);
    assert_eq!(
        out.status.code(),
        Some(2),
        "a refused mail is bad input: {}",
        text(&out.stderr)
    );
    assert!(text(&out.stderr).contains("1 refused"), "{}", text(&out.stderr));
    assert_eq!(actions(d), ["a1-c3", "k11-i9"]);
    assert_eq!((count(d, "new"), count(d, "cur")), (0, 4));
    let out = inbox(d, None);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(out.stdout.is_empty());
    assert_eq!(actions(d), ["a1-c3", "k11-i9"]);
}

#[test]
fn a_crash_midway_neither_loses_nor_repeats_a_mail() {
    let (dir, pw) = new_game();
    let d = dir.path();
    maildir(d, &[plain(ALICE, "c1", &format!("password {}\na1-c3\n", pw[0]))]);
    // Dead before the record is replaced: the mail is not applied, and not lost.
    let out = inbox(d, Some("after-temp-write"));
    assert!(!out.status.success());
    assert!(actions(d).is_empty());
    assert_eq!((count(d, "new"), count(d, "cur")), (1, 0));
    // Dead after the record is replaced, before the mail is marked done and moved.
    let out = inbox(d, Some("after-mail-applied"));
    assert!(!out.status.success());
    assert_eq!(actions(d), ["a1-c3"]);
    assert_eq!(count(d, "new"), 1, "the mail is still in new/");
    // A game master's command in between settles the journal first.
    let out = run(d, &["pbm", "play", RECORD, "--seat", "bob", "k11-i9"], b"", None);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = inbox(d, None);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("1 processed before"),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(actions(d), ["a1-c3", "k11-i9"], "applied exactly once");
    assert_eq!((count(d, "new"), count(d, "cur")), (0, 1));
    let verify = run(d, &["verify", RECORD], b"", None);
    assert!(verify.status.success(), "{}", text(&verify.stderr));
}

#[test]
fn help_and_view_reply_to_the_sender_only() {
    let (dir, pw) = new_game();
    let d = dir.path();
    let out = mail(d, &plain(BOB, "h1", &format!("password {}\nHELP\n", pw[1])));
    assert!(out.status.success(), "{}", text(&out.stderr));
    let said = text(&out.stdout);
    assert!(
        said.contains("message to seat 2 (bob)") && !said.contains("message to seat 1"),
        "{said}"
    );
    assert!(said.contains("note: commands, one a line"), "{said}");
    let out = mail(d, &plain(BOB, "h2", &format!("password {}\n", pw[1])));
    assert!(
        text(&out.stdout).contains("no command found"),
        "{}",
        text(&out.stdout)
    );
    // A game without addresses takes no mail.
    let plain_game = tempfile::tempdir().expect("dir");
    let p = plain_game.path();
    let args = [
        "pbm", "new", "--game", "telka", "--seat", "a", "--seat", "b", RECORD,
    ];
    assert!(run(p, &args, b"", None).status.success());
    let out = mail(p, &plain(ALICE, "x", "password 00\nview\n"));
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("takes no mail"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn addresses_that_would_not_identify_one_seat_are_refused_at_new() {
    for (addresses, why) in [
        (&[ALICE][..], "1 --address for a game of 2 seats"),
        (&[ALICE, "Alice@example.org"], "cannot share an address"),
        (&[ALICE, "bob"], "not a mail address"),
        (&[ALICE, "bob @example.org"], "not a mail address"),
    ] {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let mut args = vec!["pbm", "new", "--game", "pegchow", "--seat", "a", "--seat", "b"];
        for a in addresses {
            args.extend(["--address", a]);
        }
        args.push(RECORD);
        let out = run(dir.path(), &args, b"", None);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{addresses:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains(why), "{addresses:?}: {err}");
        assert!(!dir.path().join(RECORD).exists(), "no game is created");
    }
}

#[test]
fn what_a_player_wrote_cannot_forge_a_line_of_the_reply() {
    let (dir, pw) = new_game();
    let d = dir.path();
    let body = format!("password {}\r\nx\r=== end of message ===\u{1b}[2J\r\n", pw[0]);
    let out = mail(d, &plain(ALICE, "e1", &body));
    assert!(out.status.success(), "{}", text(&out.stderr));
    let said = text(&out.stdout);
    let ends = said.lines().filter(|l| *l == "=== end of message ===").count();
    assert_eq!(ends, 1, "{said}");
    assert!(!said.contains('\r') && !said.contains('\u{1b}'), "{said:?}");
    assert!(actions(d).is_empty());
}

#[test]
fn a_mail_on_stdin_sent_again_after_a_crash_is_not_applied_twice() {
    let (dir, pw) = new_game();
    let d = dir.path();
    let m = plain(ALICE, "s1", &format!("password {}\na1-c3\n", pw[0]));
    let out = run(d, &["pbm", "mail", RECORD], &m, Some("after-mail-applied"));
    assert!(!out.status.success(), "the process died");
    assert_eq!(actions(d), ["a1-c3"]);
    let out = mail(d, &m);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("processed before"),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(actions(d), ["a1-c3"], "applied once");
    // Died before the record was replaced: sent again, it is applied.
    let m = plain(BOB, "s2", &format!("password {}\nk11-i9\n", pw[1]));
    let out = run(d, &["pbm", "mail", RECORD], &m, Some("after-temp-write"));
    assert!(!out.status.success(), "the process died");
    assert_eq!(actions(d), ["a1-c3"]);
    assert!(mail(d, &m).status.success());
    assert_eq!(actions(d), ["a1-c3", "k11-i9"]);
    let journal = std::fs::read_to_string(d.join(format!("{RECORD}.mailids"))).expect("journal");
    assert!(
        !journal.contains("s2@"),
        "the journal holds digests, not what players wrote"
    );
}
