//! Mail out (`pbm new --from/--outbox/--sendmail/--smtp` and the same on every
//! command that answers), through the real binary: a short game played by mail whose
//! replies go to a real SMTP server (Debian's `python3-aiosmtpd`, started here on
//! 127.0.0.1), to outbox Maildirs and to a sendmail-compatible script; every message
//! read back and checked: To, Subject, In-Reply-To, who got what, the body, and the
//! attached picture (every mail's shape; over SMTP, that it is `show`'s picture).

mod cli_support;

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::Output;

use cli_support::mail::{mailed, show_svg};
use cli_support::{mail_game_args, referee_in, text, Smtp};

const RECORD: &str = "game.jsonl";
const ALICE: &str = "alice@example.org";
const BOB: &str = "bob@example.org";
const JUDGE: &str = "judge@example.net";

fn run(dir: &Path, args: &[&str], stdin: &[u8]) -> Output {
    referee_in(dir)
        .args(args)
        .write_stdin(stdin)
        .output()
        .expect("the binary runs")
}

/// `pbm new` of a two-seat Telka game mailing alice and bob, with `extra` flags.
fn new_game(dir: &Path, extra: &[&str]) -> Output {
    let mut args = mail_game_args([ALICE, BOB]);
    args.extend(["--from", JUDGE]);
    args.extend(extra);
    args.push(RECORD);
    run(dir, &args, b"")
}

/// A mail received, parsed.
struct Got {
    file: PathBuf,
    to: String,
    rcpt: Option<String>,
    subject: String,
    in_reply_to: Option<String>,
    references: Option<String>,
    message_id: String,
    body: String,
    /// The attached picture, as decoded.
    svg: String,
}

fn parse(file: PathBuf, bytes: &[u8]) -> Got {
    let m = mail_parser::MessageParser::default()
        .parse(bytes)
        .expect("a mail message");
    let first = |a: Option<&mail_parser::Address>| {
        a.and_then(|a| a.first())
            .and_then(|a| a.address())
            .map(str::to_string)
    };
    assert_eq!(first(m.from()).as_deref(), Some(JUDGE));
    assert!(m.date().is_some(), "a Date header");
    let to = first(m.to()).expect("a To address");
    let seat = if to == ALICE { 1 } else { 2 };
    Got {
        file,
        svg: mailed(bytes, "telka", seat).svg,
        to,
        rcpt: m.header_raw("X-RcptTo").map(|r| r.trim().to_string()),
        subject: m.subject().unwrap_or_default().to_string(),
        in_reply_to: m.in_reply_to().as_text().map(str::to_string),
        references: m.references().as_text().map(str::to_string),
        message_id: m.message_id().expect("a Message-ID").to_string(),
        body: m.body_text(0).unwrap_or_default().replace("\r\n", "\n"),
    }
}

/// Every mail in the Maildir `dir`'s new/ (none left in tmp/).
fn maildir(dir: &Path) -> Vec<Got> {
    let mut names: Vec<PathBuf> = std::fs::read_dir(dir.join("new"))
        .map(|r| r.map(|e| e.expect("entry").path()).collect())
        .unwrap_or_default();
    names.sort();
    let tmp = std::fs::read_dir(dir.join("tmp")).map_or(0, |r| r.count());
    assert_eq!(tmp, 0, "nothing is left in tmp/");
    names
        .iter()
        .map(|p| parse(p.clone(), &std::fs::read(p).expect("a mail")))
        .collect()
}

fn password(body: &str) -> String {
    body.lines()
        .find_map(|l| l.strip_prefix("password: "))
        .and_then(|l| l.split(' ').next())
        .expect("a password")
        .to_string()
}

fn plain(from: &str, id: &str, body: &str) -> Vec<u8> {
    format!("From: <{from}>\r\nTo: {JUDGE}\r\nSubject: Re: your move\r\nMessage-ID: <{id}@example.org>\r\n\r\n{body}").into_bytes()
}

fn view(dir: &Path, seat: &str) -> String {
    let out = run(dir, &["pbm", "view", RECORD, "--seat", seat], b"");
    assert!(out.status.success(), "{}", text(&out.stderr));
    text(&out.stdout)
}

fn actions(dir: &Path) -> usize {
    std::fs::read_to_string(dir.join(RECORD))
        .expect("the record")
        .matches("\"type\":\"action\"")
        .count()
}

/// Checks that every mail went to its own seat only: To and envelope recipient are
/// the seat's address, and the body is a message to that seat.
fn each_to_its_own(got: &[Got]) {
    for g in got {
        let seat = if g.to == ALICE { "1 (alice)" } else { "2 (bob)" };
        assert!(g.to == ALICE || g.to == BOB, "{}", g.to);
        if let Some(r) = &g.rcpt {
            assert_eq!(r, &g.to, "the envelope goes to the To address only");
        }
        assert!(
            g.body.contains(&format!("message to seat {seat} ===")),
            "{} got:\n{}",
            g.to,
            g.body
        );
        assert!(
            g.subject.contains("telka game") && g.subject.contains("ply "),
            "{}",
            g.subject
        );
        assert!(g.subject.contains(&format!("seat {seat}")), "{}", g.subject);
    }
}

#[test]
fn a_game_by_mail_is_answered_over_smtp_to_each_seat_alone() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let d = dir.path();
    let mut smtp = match Smtp::start(d) {
        Ok(s) => s,
        Err(why) => {
            eprintln!("skipped: cannot start an SMTP server: {why}");
            return;
        }
    };
    let out = new_game(d, &["--smtp", &smtp.at()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(out.stdout.is_empty(), "mailed, not printed");
    let first = maildir(&smtp.maildir);
    assert_eq!(first.len(), 2);
    let mut seen: HashSet<PathBuf> = first.iter().map(|g| g.file.clone()).collect();
    each_to_its_own(&first);
    let pw_alice = password(&first.iter().find(|g| g.to == ALICE).expect("alice's").body);
    let pw_bob = password(&first.iter().find(|g| g.to == BOB).expect("bob's").body);
    assert!(first.iter().all(|g| g.in_reply_to.is_none()));
    for g in &first {
        let other = if g.to == ALICE { &pw_bob } else { &pw_alice };
        assert!(
            !g.body.contains(other.as_str()),
            "a seat never sees another's password"
        );
    }

    // Alice mails a move: the stored default (SMTP) answers both seats.
    let m = plain(ALICE, "a1", &format!("password {pw_alice}\na1-c3\n"));
    let out = run(d, &["pbm", "mail", RECORD], &m);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let got = maildir(&smtp.maildir);
    assert_eq!(got.len(), 4);
    each_to_its_own(&got);
    let (alice, bob) = mine(&got, &mut seen);
    assert_eq!(alice.in_reply_to.as_deref(), Some("a1@example.org"));
    assert_eq!(alice.references.as_deref(), Some("a1@example.org"));
    assert_eq!(bob.references, None);
    assert!(alice.body.contains("note: applied: 1 of 1"), "{}", alice.body);
    assert_eq!(bob.in_reply_to, None, "only the sender's reply answers its mail");
    assert_eq!(
        bob.body.trim_end(),
        view(d, "bob").trim_end(),
        "the body is the view"
    );
    // The picture survives SMTP byte for byte: what `show` draws for each seat.
    assert!(
        alice.svg == show_svg(d, RECORD, 1, 1),
        "alice's picture is show's"
    );
    assert!(bob.svg == show_svg(d, RECORD, 1, 2), "bob's picture is show's");

    // Bob answers through a Maildir inbox.
    for sub in ["tmp", "new", "cur"] {
        std::fs::create_dir_all(d.join("in").join(sub)).expect("inbox");
    }
    let m = plain(BOB, "b1", &format!("password {pw_bob}\nk11-i9\n"));
    std::fs::write(d.join("in/new/1.b1.host"), m).expect("a mail");
    let out = run(d, &["pbm", "inbox", RECORD, "--maildir", "in"], b"");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let got = maildir(&smtp.maildir);
    assert_eq!(got.len(), 6);
    each_to_its_own(&got);
    let (alice, bob) = mine(&got, &mut seen);
    assert_eq!(bob.in_reply_to.as_deref(), Some("b1@example.org"));
    assert_eq!(alice.in_reply_to, None);
    assert_eq!(alice.body.trim_end(), view(d, "alice").trim_end());
    let ids: HashSet<&str> = got.iter().map(|g| g.message_id.as_str()).collect();
    assert_eq!(ids.len(), got.len(), "every Message-ID is unique");

    // The server is gone: the move is kept, one line says what was not sent.
    smtp.stop();
    let out = run(d, &["pbm", "play", RECORD, "--seat", "alice", "b1-d3"], b"");
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("2 of 2 messages, for seat 1, 2, not sent"), "{err}");
    assert!(err.contains("pbm send"), "{err}");
    assert_eq!(actions(d), 3, "the update is kept");
    assert!(view(d, "bob").contains("your turn"));
    let kept = |seat: &str| maildir(&d.join(format!("{RECORD}.unsent")).join(seat));
    assert_eq!((kept("alice").len(), kept("bob").len()), (1, 1));
    let status = text(&run(d, &["pbm", "status", RECORD], b"").stdout);
    assert!(status.contains("unsent: 2 mails"), "{status}");

    // Sent again once a server is back; nothing is kept then.
    let smtp = Smtp::start(d).expect("the server starts again");
    let out = run(d, &["pbm", "send", RECORD, "--smtp", &smtp.at()], b"");
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("2 messages sent again"),
        "{}",
        text(&out.stderr)
    );
    let got = maildir(&smtp.maildir);
    assert_eq!(got.len(), 8);
    each_to_its_own(&got);
    let (_, bob) = mine(&got, &mut seen);
    assert_eq!(bob.body.trim_end(), view(d, "bob").trim_end());
    assert!(
        bob.svg == show_svg(d, RECORD, 3, 2),
        "a kept mail keeps its picture"
    );
    assert_eq!((kept("alice").len(), kept("bob").len()), (0, 0));
    let status = text(&run(d, &["pbm", "status", RECORD], b"").stdout);
    assert!(!status.contains("unsent"), "{status}");
}

/// Alice's and bob's mail among those of `got` not `seen` before, which are two.
fn mine<'a>(got: &'a [Got], seen: &mut HashSet<PathBuf>) -> (&'a Got, &'a Got) {
    let fresh: Vec<&Got> = got.iter().filter(|g| seen.insert(g.file.clone())).collect();
    assert_eq!(fresh.len(), 2, "one mail to each seat");
    let find = |a: &str| *fresh.iter().find(|g| g.to == a).expect("a mail to each");
    (find(ALICE), find(BOB))
}

#[test]
fn an_outbox_holds_a_maildir_per_seat() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let d = dir.path();
    let out = new_game(d, &["--outbox", "out"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(out.stdout.is_empty());
    let out = run(d, &["pbm", "play", RECORD, "--seat", "alice", "a1-c3"], b"");
    assert!(out.status.success(), "{}", text(&out.stderr));
    for (seat, address) in [("alice", ALICE), ("bob", BOB)] {
        let got = maildir(&d.join("out").join(seat));
        assert_eq!(got.len(), 2, "{seat}");
        assert!(got.iter().all(|g| g.to == address));
        each_to_its_own(&got);
        assert!(d.join("out").join(seat).join("cur").is_dir());
        use std::os::unix::fs::PermissionsExt;
        for e in std::fs::read_dir(d.join("out").join(seat).join("new")).expect("new/") {
            let mode = e
                .expect("entry")
                .metadata()
                .expect("metadata")
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600, "a mail (its password) is the owner's alone");
        }
    }
    // Printed instead, on request: --outdir keeps its meaning.
    let out = run(
        d,
        &[
            "pbm", "play", RECORD, "--seat", "bob", "k11-i9", "--outbox", "other",
        ],
        b"",
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(maildir(&d.join("other/bob")).len(), 1);
    assert_eq!(
        maildir(&d.join("out/bob")).len(),
        2,
        "an override is for one command"
    );
}

#[test]
fn a_sendmail_command_gets_the_mail_on_stdin_and_the_recipient_as_argument() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let d = dir.path();
    let script = d.join("fake-sendmail");
    std::fs::write(
        &script,
        "#!/bin/sh\nd=\"$(dirname \"$0\")/sent\"; mkdir -p \"$d\"\nn=$(ls \"$d\" | wc -l)\nprintf '%s\\n' \"$@\" > \"$d/$n.args\"\ncat > \"$d/$n.eml\"\n",
    )
    .expect("the script");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let cmd = script.display().to_string();
    let out = new_game(d, &["--sendmail", &cmd]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    for (n, address) in [(0, ALICE), (2, BOB)] {
        let args = std::fs::read_to_string(d.join(format!("sent/{n}.args"))).expect("args");
        assert_eq!(args, format!("-i\n-f\n{JUDGE}\n--\n{address}\n"));
        let file = d.join(format!("sent/{n}.eml"));
        let got = parse(file.clone(), &std::fs::read(&file).expect("the mail"));
        assert_eq!(got.to, address);
        each_to_its_own(&[got]);
    }
    // A failing command: the update is kept, exit 1, one line.
    let out = run(
        d,
        &[
            "pbm",
            "play",
            RECORD,
            "--seat",
            "alice",
            "a1-c3",
            "--sendmail",
            "false",
        ],
        b"",
    );
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert_eq!(actions(d), 1);
    // `pbm send` sends the kept mails by the game's default, the script.
    let out = run(d, &["pbm", "send", RECORD], b"");
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(std::fs::read_dir(d.join("sent")).expect("sent").count(), 8);
    let args = std::fs::read_to_string(d.join("sent/4.args")).expect("args");
    assert_eq!(args, format!("-i\n-f\n{JUDGE}\n--\n{ALICE}\n"));
    let file = d.join("sent/4.eml");
    let again = parse(file.clone(), &std::fs::read(&file).expect("the mail"));
    assert!(again.body.contains("message to seat 1 (alice)"));
}

#[test]
fn bad_mail_out_flags_change_nothing() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let d = dir.path();
    for bad in [
        &["--smtp", "nowhere"][..],
        &["--smtp", "127.0.0.1:0"],
        &["--sendmail", ""],
        &["--from", "not an address"],
        &["--outbox", "o", "--smtp", "127.0.0.1:25"],
    ] {
        let out = new_game(d, bad);
        assert_eq!(out.status.code(), Some(2), "{bad:?}: {}", text(&out.stderr));
        assert_eq!(text(&out.stderr).lines().count(), 1, "{bad:?}");
        assert_eq!(
            std::fs::read_dir(d).expect("dir").count(),
            0,
            "{bad:?}: nothing written"
        );
    }
    // A game without addresses mails no one, and says so before playing.
    let args = [
        "pbm", "new", "--game", "telka", "--seat", "a", "--seat", "b", RECORD,
    ];
    assert!(run(d, &args, b"").status.success());
    let before = std::fs::read(d.join(RECORD)).expect("record");
    let out = run(
        d,
        &["pbm", "play", RECORD, "--seat", "a", "a1-c3", "--outbox", "o"],
        b"",
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("mails no one"));
    assert_eq!(std::fs::read(d.join(RECORD)).expect("record"), before);
}
