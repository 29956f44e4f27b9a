//! Whole games played purely by mail, through the real binary: a four-seat Telka game
//! answered into outbox Maildirs and an I-Doubt-It game (placement, then play)
//! answered over SMTP (Debian's `python3-aiosmtpd` on 127.0.0.1). Every move is a mail
//! as a player writes it (any letter case, the previous message quoted, a signature,
//! multipart, quoted-printable and base64 bodies) carrying the seat's password and one
//! action of its latest message's `legal:` line, delivered in turn through a Maildir
//! (`pbm inbox`) and on stdin (`pbm mail`). Once in each game a seat misses its
//! deadline (`--nmr extend`, the clock set by `REFEREE_NOW`) and then moves. At the
//! end every seat's messages pass `referee audit --key`, and the record `verify --key`.

mod cli_support;

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::Value;
use tempfile::TempDir;

use cli_support::mail::{mailed, show_svg};
use cli_support::{base64_encode, legal_of, record_lines, referee_in, text, Rng, Smtp};

const RECORD: &str = "game.jsonl";
const JUDGE: &str = "judge@example.net";
/// Each seat's time to act.
const DEADLINE_MINUTES: u64 = 60;

/// The clock `minutes` after 2026-03-01T00:00:00Z, as `REFEREE_NOW` takes it.
fn clock(minutes: u64) -> String {
    let (day, rest) = (minutes / 1440, minutes % 1440);
    assert!(day < 31, "the test's clock stays in March");
    format!("2026-03-{:02}T{:02}:{:02}:00Z", day + 1, rest / 60, rest % 60)
}

/// Where the referee's mails to the seats arrive.
enum Sink {
    /// `--outbox DIR`: a Maildir per seat name.
    Outbox(PathBuf),
    /// `--smtp`: the server's one Maildir.
    Smtp(Smtp),
}

/// A game by mail in its own directory, with everything each seat received.
struct Game {
    dir: TempDir,
    /// The game's id (`telka`), which names every picture.
    game: String,
    names: Vec<String>,
    addresses: Vec<String>,
    passwords: Vec<String>,
    /// Per seat index, the body of every mail it received, in order.
    received: Vec<Vec<String>>,
    /// Per seat index, the ply and the attached picture of every mail it received.
    pictures: Vec<Vec<(u32, String)>>,
    sink: Sink,
    seen: HashSet<PathBuf>,
    /// The clock, in minutes (see [`clock`]), moved on before every command.
    now: u64,
    /// Mails sent by the players so far.
    sent: usize,
}

/// One mail a seat received: its To address and its body.
fn parse(bytes: &[u8]) -> (String, String) {
    let m = mail_parser::MessageParser::default()
        .parse(bytes)
        .expect("a mail message");
    let from = m.from().and_then(|a| a.first()).and_then(|a| a.address());
    assert_eq!(from, Some(JUDGE), "mail comes from the judge");
    let to = m
        .to()
        .and_then(|a| a.first())
        .and_then(|a| a.address())
        .expect("a To address")
        .to_string();
    let body = m.body_text(0).expect("a text body").replace("\r\n", "\n");
    (to, body)
}

/// The files in a Maildir's `new/`.
fn maildir_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir.join("new"))
        .map(|r| r.map(|e| e.expect("an entry").path()).collect())
        .unwrap_or_default();
    files.sort();
    files
}

/// The `action` members of a record's action lines, in order.
fn actions_of(lines: &[Value]) -> Vec<String> {
    cli_support::actions(lines)
}

/// Quoted-printable, lines soft-broken before 76 characters.
fn quoted_printable(body: &str) -> String {
    let mut out = String::new();
    for line in body.split("\r\n") {
        let mut width = 0;
        for &b in line.as_bytes() {
            let piece = if b == b'=' || !(b' '..=b'~').contains(&b) {
                format!("={b:02X}")
            } else {
                (b as char).to_string()
            };
            if width + piece.len() > 72 {
                out.push_str("=\r\n");
                width = 0;
            }
            width += piece.len();
            out.push_str(&piece);
        }
        out.push_str("\r\n");
    }
    out
}

impl Game {
    /// `pbm new` of `game` with `options` for seats `names`, signed by a fresh judge
    /// key, with deadlines of an hour extended once, mailing into `sink`.
    fn new(game: &str, options: &[&str], names: &[&str], smtp: bool) -> Game {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let d = dir.path().to_path_buf();
        let sink = if smtp {
            match Smtp::start(&d) {
                Ok(s) => Sink::Smtp(s),
                Err(why) => {
                    eprintln!("note: SMTP part skipped, replies read from an outbox instead: cannot start an SMTP server: {why}");
                    Sink::Outbox(d.join("out"))
                }
            }
        } else {
            Sink::Outbox(d.join("out"))
        };
        let mut g = Game {
            dir,
            game: game.to_string(),
            names: names.iter().map(|n| n.to_string()).collect(),
            addresses: names.iter().map(|n| format!("{n}@example.org")).collect(),
            passwords: Vec::new(),
            received: vec![Vec::new(); names.len()],
            pictures: vec![Vec::new(); names.len()],
            sink,
            seen: HashSet::new(),
            now: 0,
            sent: 0,
        };
        let out = g.run(&["keygen", "--out", "judge"], b"");
        assert!(out.status.success(), "keygen: {}", text(&out.stderr));
        let mut args: Vec<String> = ["pbm", "new", "--game", game]
            .iter()
            .map(|s| s.to_string())
            .collect();
        for o in options {
            args.extend(["-o".into(), o.to_string()]);
        }
        for (n, a) in g.names.iter().zip(&g.addresses) {
            args.extend(["--seat".into(), n.clone(), "--address".into(), a.clone()]);
        }
        args.extend(["--from".into(), JUDGE.into(), "--key".into(), "judge.key".into()]);
        args.extend(["--deadline".into(), format!("{DEADLINE_MINUTES}m")]);
        args.extend(["--nmr".into(), "extend".into()]);
        match &g.sink {
            Sink::Outbox(o) => args.extend(["--outbox".into(), o.display().to_string()]),
            Sink::Smtp(s) => args.extend(["--smtp".into(), s.at()]),
        }
        args.push(RECORD.into());
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = g.run(&args, b"");
        assert!(out.status.success(), "pbm new: {}", text(&out.stderr));
        assert!(out.stdout.is_empty(), "mailed, not printed");
        assert_eq!(g.collect(), vec![true; names.len()], "a first mail to every seat");
        for seat in 0..names.len() {
            let first = &g.received[seat][0];
            let pw = first
                .lines()
                .find_map(|l| l.strip_prefix("password: "))
                .and_then(|l| l.split(' ').next())
                .expect("a seat's first message holds its password")
                .to_string();
            for other in 0..names.len() {
                if other != seat {
                    assert!(
                        !g.received[other][0].contains(&pw),
                        "a password is its seat's alone"
                    );
                }
            }
            g.passwords.push(pw);
        }
        g
    }

    fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// Runs the referee at the test's clock, moved on a minute first.
    fn run(&mut self, args: &[&str], stdin: &[u8]) -> Output {
        self.now += 1;
        referee_in(self.dir.path())
            .env("REFEREE_NOW", clock(self.now))
            .env_remove("REFEREE_PBM_FAULT")
            .args(args)
            .write_stdin(stdin)
            .output()
            .expect("the binary runs")
    }

    fn lines(&self) -> Vec<Value> {
        record_lines(&self.dir().join(RECORD))
    }

    /// Files every mail not read before under its seat; which seats got one (each at
    /// most one: one command sends a seat one message).
    fn collect(&mut self) -> Vec<bool> {
        let files: Vec<PathBuf> = match &self.sink {
            Sink::Outbox(o) => self
                .names
                .iter()
                .flat_map(|n| maildir_files(&o.join(n)))
                .collect(),
            Sink::Smtp(s) => maildir_files(&s.maildir),
        };
        let mut got = vec![false; self.names.len()];
        for f in files {
            if !self.seen.insert(f.clone()) {
                continue;
            }
            let bytes = std::fs::read(&f).expect("a mail");
            let (to, body) = parse(&bytes);
            let seat = self
                .addresses
                .iter()
                .position(|a| *a == to)
                .unwrap_or_else(|| panic!("a mail to an unknown address {to}"));
            assert!(
                body.starts_with(&format!(
                    "=== referee play-by-mail message to seat {} ({})",
                    seat + 1,
                    self.names[seat]
                )),
                "a mail to {to} holds its own seat's message:\n{body}"
            );
            assert!(!got[seat], "two mails to seat {} from one command", seat + 1);
            got[seat] = true;
            // Every reply carries the seat's picture, named for its game, ply and seat.
            let m = mailed(&bytes, &self.game, seat + 1);
            assert_eq!(m.body.replace("\r\n", "\n"), body, "the text part is the message");
            self.pictures[seat].push((m.ply, m.svg));
            self.received[seat].push(body);
        }
        got
    }

    /// The seat to act (index), or `None` once the game is over.
    fn turn(&mut self) -> Option<usize> {
        let out = self.run(&["pbm", "status", RECORD], b"");
        assert!(out.status.success(), "pbm status: {}", text(&out.stderr));
        let status = text(&out.stdout);
        if let Some(rest) = status.lines().find_map(|l| l.strip_prefix("turn: seat ")) {
            let n: usize = rest
                .split_whitespace()
                .next()
                .and_then(|w| w.parse().ok())
                .expect("a seat number");
            return Some(n - 1);
        }
        assert!(status.lines().any(|l| l.starts_with("over")), "{status}");
        None
    }

    /// A mail from `seat` playing `action`, written the way the `sent`-th mail
    /// of a player would be: the encoding and the letter case vary.
    fn compose(&self, seat: usize, action: &str) -> Vec<u8> {
        let k = self.sent;
        let name = &self.names[seat];
        let quoted: String = self.received[seat]
            .last()
            .expect("a message to answer")
            .lines()
            .map(|l| format!("> {l}\r\n"))
            .collect();
        let (password, play) = match k % 3 {
            0 => ("password", "play "),
            1 => ("PASSWORD", "PLAY "),
            _ => ("Password", ""),
        };
        let body = format!(
            "{password} {}\r\n{play}{action}\r\n\r\n{quoted}\r\n-- \r\n{name} \u{2014} by mail\r\n",
            self.passwords[seat]
        );
        let head = format!(
            "From: {name} <{}>\r\nTo: Judge <{JUDGE}>\r\nSubject: Re: your move\r\nMessage-ID: <m{k}.{name}@example.org>\r\nMIME-Version: 1.0\r\n",
            self.addresses[seat]
        );
        let mail = match k % 4 {
            0 => format!("{head}Content-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: 8bit\r\n\r\n{body}"),
            1 => format!(
                "{head}Content-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n{}",
                quoted_printable(&body)
            ),
            2 => format!(
                "{head}Content-Type: multipart/alternative; boundary=\"b{k}\"\r\n\r\n--b{k}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n{}--b{k}\r\nContent-Type: text/html; charset=utf-8\r\n\r\n<p>resign</p>\r\n--b{k}--\r\n",
                quoted_printable(&body)
            ),
            _ => {
                let b64 = base64_encode(body.as_bytes());
                let wrapped: String = b64
                    .as_bytes()
                    .chunks(76)
                    .map(|c| format!("{}\r\n", String::from_utf8_lossy(c)))
                    .collect();
                format!("{head}Content-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: base64\r\n\r\n{wrapped}")
            }
        };
        mail.into_bytes()
    }

    /// `seat` mails `action`, through the Maildir inbox or on stdin in turn; asserts
    /// the action, and only it, was recorded and every seat was answered.
    fn mail_move(&mut self, seat: usize, action: &str) {
        let before = actions_of(&self.lines());
        let mail = self.compose(seat, action);
        let k = self.sent;
        self.sent += 1;
        let out = if k % 2 == 0 {
            let inbox = self.dir().join("in");
            for sub in ["tmp", "new", "cur"] {
                std::fs::create_dir_all(inbox.join(sub)).expect("the inbox");
            }
            std::fs::write(inbox.join(format!("new/{k:05}.m{k}.host")), &mail).expect("a mail");
            let out = self.run(&["pbm", "inbox", RECORD, "--maildir", "in"], b"");
            assert!(
                text(&out.stderr).contains("inbox: 1 mails processed, 0 refused"),
                "{}",
                text(&out.stderr)
            );
            assert_eq!(
                std::fs::read_dir(inbox.join("new")).unwrap().count(),
                0,
                "moved to cur/"
            );
            out
        } else {
            self.run(&["pbm", "mail", RECORD], &mail)
        };
        assert_eq!(
            out.status.code(),
            Some(0),
            "mail {k} from seat {} ({action}): {}",
            seat + 1,
            text(&out.stderr)
        );
        assert!(out.stdout.is_empty(), "mailed, not printed");
        let after = actions_of(&self.lines());
        assert_eq!(after.len(), before.len() + 1, "mail {k} recorded one action");
        assert_eq!(&after[..before.len()], &before[..]);
        assert_eq!(after.last().unwrap(), action, "mail {k} recorded its action");
        assert_eq!(self.collect(), vec![true; self.names.len()], "every seat is told");
        for (s, pictures) in self.pictures.iter().enumerate() {
            let ply = pictures.last().expect("a picture").0;
            assert_eq!(
                ply as usize,
                after.len(),
                "seat {}'s picture is at the ply played",
                s + 1
            );
        }
        let reply = self.received[seat].last().unwrap();
        assert!(reply.contains("note: applied: 1 of 1"), "mail {k}:\n{reply}");
    }

    /// The seat to act lets its deadline pass: a tick past it extends the deadline
    /// once (every seat is told), and a tick before the extension changes nothing.
    fn miss_deadline(&mut self, seat: usize) {
        let before = std::fs::read(self.dir().join(RECORD)).unwrap();
        self.now += DEADLINE_MINUTES / 2;
        let out = self.run(&["pbm", "tick", RECORD], b"");
        assert!(out.status.success(), "tick: {}", text(&out.stderr));
        assert_eq!(
            std::fs::read(self.dir().join(RECORD)).unwrap(),
            before,
            "nothing due yet"
        );
        assert_eq!(self.collect(), vec![false; self.names.len()]);
        self.now += DEADLINE_MINUTES;
        let out = self.run(&["pbm", "tick", RECORD], b"");
        assert!(out.status.success(), "tick: {}", text(&out.stderr));
        let lines = self.lines();
        let events: Vec<&Value> = lines.iter().filter(|l| l["type"] == "deadline").collect();
        assert_eq!(events.len(), 1, "one deadline line");
        assert_eq!(events[0]["seat"], seat as u64 + 1);
        assert_eq!(events[0]["event"], "extended");
        assert_eq!(events[0]["time"], clock(self.now).as_str());
        assert!(
            lines.iter().all(|l| l["type"] != "forfeit"),
            "extended, not forfeited"
        );
        assert_eq!(self.collect(), vec![true; self.names.len()], "every seat is told");
        self.assert_pictures_shown();
        let told = self.received[seat].last().unwrap();
        assert!(
            told.contains(&format!("note: seat {} missed its deadline", seat + 1))
                && told.contains("extended once"),
            "{told}"
        );
    }

    /// Plays the game out by mail, choosing among each seat's legal actions; the
    /// seat to act at action `miss_at` misses its deadline first.
    fn play_out(&mut self, seed: u64, miss_at: usize) -> usize {
        let mut rng = Rng(seed);
        for i in 0..1000 {
            let Some(seat) = self.turn() else {
                assert!(i > miss_at, "the game ended before a seat missed its deadline");
                return i;
            };
            if i == miss_at {
                self.miss_deadline(seat);
            }
            let latest = self.received[seat].last().expect("a message").clone();
            let legal = legal_of(&latest);
            let others: Vec<&String> = legal.iter().filter(|a| *a != "doubt").collect();
            let action = if others.is_empty() || rng.below(8) == 0 {
                legal[rng.below(legal.len())].clone()
            } else {
                others[rng.below(others.len())].clone()
            };
            self.mail_move(seat, &action);
        }
        panic!("the game did not end within 1000 actions");
    }

    /// Every seat's latest picture is `show --format svg --ply K --seat N` of the
    /// record now, K its mail's ply: call it while the record is as the mails left it.
    fn assert_pictures_shown(&self) {
        for (s, pictures) in self.pictures.iter().enumerate() {
            let (ply, svg) = pictures.last().expect("a picture");
            let shown = show_svg(self.dir(), RECORD, *ply, s + 1);
            assert!(
                *svg == shown,
                "seat {}'s picture at ply {ply} is not show's",
                s + 1
            );
        }
    }

    /// Every seat's messages pass `audit --key`, and the record `verify --key`; the
    /// last pictures, the result's, are `show`'s.
    fn assert_audits(&mut self) {
        self.assert_pictures_shown();
        for seat in 0..self.names.len() {
            let name = format!("transcript-{}.txt", seat + 1);
            std::fs::write(self.dir().join(&name), self.received[seat].join("\n")).unwrap();
            let n = (seat + 1).to_string();
            let out = self.run(
                &[
                    "audit",
                    RECORD,
                    "--seat",
                    &n,
                    "--transcript",
                    &name,
                    "--key",
                    "judge.pub",
                ],
                b"",
            );
            assert_eq!(
                out.status.code(),
                Some(0),
                "audit of seat {n}: {}{}",
                text(&out.stdout),
                text(&out.stderr)
            );
            assert!(text(&out.stdout).starts_with("audit ok"), "{}", text(&out.stdout));
        }
        let out = self.run(&["verify", RECORD, "--key", "judge.pub"], b"");
        assert_eq!(out.status.code(), Some(0), "verify: {}", text(&out.stderr));
        let said = text(&out.stdout);
        assert!(said.contains(": ok,") && said.contains("finished"), "{said}");
    }
}

#[test]
fn a_whole_four_seat_telka_game_by_mail_into_outboxes() {
    let mut g = Game::new(
        "telka",
        &["players=4", "max-plies=48"],
        &["ann", "ben", "cat", "dan"],
        false,
    );
    let plies = g.play_out(7, 13);
    assert_eq!(plies, 48, "the game runs to its ply limit");
    let lines = g.lines();
    let result = lines.iter().find(|l| l["type"] == "result").expect("a result");
    assert_eq!(result["reason"], "max-plies", "{result}");
    for seat in 0..4 {
        assert!(
            g.received[seat].last().unwrap().contains("result: "),
            "seat {} is told the result",
            seat + 1
        );
        let (_, svg) = g.pictures[seat].last().unwrap();
        assert!(
            svg.contains("result: "),
            "seat {}'s last picture says the result",
            seat + 1
        );
    }
    g.assert_audits();
}

#[test]
fn a_whole_idoubtit_game_by_mail_over_smtp() {
    let mut g = Game::new("idoubtit", &["variant=0", "max-plies=24"], &["ivy", "joe"], true);
    let plies = g.play_out(11, 40);
    let lines = g.lines();
    let commit = lines
        .iter()
        .position(|l| l["type"] == "commit")
        .expect("placement ended in a commit line");
    let placed = actions_of(&lines[..commit]).len();
    assert!(placed > 0, "the game started with placement");
    assert!(
        lines[commit..].iter().any(|l| l["type"] == "action"),
        "the game went on past placement"
    );
    assert!(plies > placed);
    for seat in 0..2 {
        assert!(g.received[seat].last().unwrap().contains("result: "));
        assert!(g.pictures[seat].last().unwrap().1.contains("result: "));
    }
    g.assert_audits();
}
