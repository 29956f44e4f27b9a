//! Play by mail (`referee pbm …`, `referee audit`), through the real binary only:
//! whole games of every game, rejections that change nothing, processes racing on
//! one record, a process dying in the middle of an update, audits that catch a game
//! master who lies, and R-S1 (no unsalted hash, no salt, no hidden type in anything a
//! seat is sent while the game goes on).

mod cli_support;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::mpsc;

use referee::record::{self, Line, RecordWriter};
use tempfile::TempDir;

use cli_support::{exe, expand_legal, legal_of, text, typed_lines, SplitMix64 as Rng, HANG_BOUND};

/// The record's file name inside each test's directory.
const RECORD: &str = "game.jsonl";
const BEGIN: &str = "=== referee play-by-mail message to seat ";
const END: &str = "=== end of message ===";

/// Splits command output into its messages: `(seat, text)` with the marker lines.
fn split_messages(out: &str) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    let mut current: Option<(usize, String)> = None;
    for line in out.lines() {
        if let Some(rest) = line.strip_prefix(BEGIN) {
            assert!(current.is_none(), "a message starts inside another:\n{out}");
            let seat = rest.split_whitespace().next().and_then(|w| w.parse().ok());
            current = Some((seat.expect("a seat number after the start marker"), String::new()));
        }
        if let Some((_, t)) = current.as_mut() {
            t.push_str(line);
            t.push('\n');
        }
        if line == END {
            found.push(current.take().expect("an end marker without a start"));
        }
    }
    assert!(current.is_none(), "output ends inside a message:\n{out}");
    found
}

/// One message a seat received, and whether it came from `pbm view` (asked for) or
/// from `pbm new`/`play`/`resign` (mailed after a change).
#[derive(Clone, Debug)]
struct Received {
    text: String,
    from_view: bool,
}

/// A play-by-mail game in its own directory, with everything each seat was sent.
struct Mail {
    dir: TempDir,
    seats: usize,
    /// Per seat index, every message in the order it was sent.
    inbox: Vec<Vec<Received>>,
}

fn command_in(dir: &Path) -> assert_cmd::Command {
    let mut cmd = assert_cmd::Command::new(exe());
    cmd.current_dir(dir)
        .timeout(HANG_BOUND)
        .env_remove("REFEREE_PBM_FAULT");
    cmd
}

impl Mail {
    /// `pbm new` with one seat per name `p1`, `p2`…
    fn new(game: &str, options: &[&str], seats: usize) -> Mail {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let mut mail = Mail {
            dir,
            seats,
            inbox: vec![Vec::new(); seats],
        };
        let mut args = vec!["pbm".to_string(), "new".into(), "--game".into(), game.into()];
        for o in options {
            args.extend(["-o".to_string(), o.to_string()]);
        }
        for s in 1..=seats {
            args.extend(["--seat".to_string(), format!("p{s}")]);
        }
        args.push(RECORD.into());
        let out = mail.run(&args);
        assert!(out.status.success(), "pbm new failed: {}", text(&out.stderr));
        mail.deliver(&out.stdout, false);
        assert!(
            mail.inbox.iter().all(|m| m.len() == 1),
            "pbm new mails every seat once"
        );
        mail
    }

    fn dir(&self) -> &Path {
        self.dir.path()
    }

    fn record(&self) -> PathBuf {
        self.dir().join(RECORD)
    }

    fn bytes(&self) -> Vec<u8> {
        std::fs::read(self.record()).expect("the record is readable")
    }

    fn run<S: AsRef<std::ffi::OsStr>>(&self, args: &[S]) -> Output {
        command_in(self.dir())
            .args(args)
            .output()
            .expect("the binary runs")
    }

    /// Files the seats' messages by seat.
    fn deliver(&mut self, stdout: &[u8], from_view: bool) {
        for (seat, t) in split_messages(&text(stdout)) {
            assert!((1..=self.seats).contains(&seat), "a message to seat {seat}");
            self.inbox[seat - 1].push(Received { text: t, from_view });
        }
    }

    /// The seat to act, or `None` once the game is over (from `pbm status`).
    fn turn(&self) -> Option<usize> {
        let out = self.run(&["pbm", "status", RECORD]);
        assert!(out.status.success(), "pbm status failed: {}", text(&out.stderr));
        let status = text(&out.stdout);
        for line in status.lines() {
            if let Some(rest) = line.strip_prefix("turn: seat ") {
                return Some(
                    rest.split_whitespace()
                        .next()
                        .and_then(|w| w.parse().ok())
                        .expect("a seat"),
                );
            }
            if line.starts_with("over") {
                return None;
            }
        }
        panic!("pbm status says neither turn nor over:\n{status}");
    }

    /// `pbm view`: the message for `seat` now, which it also receives.
    fn view(&mut self, seat: usize) -> String {
        let out = self.run(&["pbm", "view", RECORD, "--seat", &seat.to_string()]);
        assert!(out.status.success(), "pbm view failed: {}", text(&out.stderr));
        let messages = split_messages(&text(&out.stdout));
        assert_eq!(messages.len(), 1, "pbm view prints one message");
        assert_eq!(messages[0].0, seat);
        self.deliver(&out.stdout, true);
        messages[0].1.clone()
    }

    /// `pbm play`; on success every seat receives its message.
    fn play(&mut self, seat: usize, action: &str) -> Output {
        let out = self.run(&["pbm", "play", RECORD, "--seat", &seat.to_string(), action]);
        if out.status.success() {
            self.deliver(&out.stdout, false);
        }
        out
    }

    fn resign(&mut self, seat: usize) -> Output {
        let out = self.run(&["pbm", "resign", RECORD, "--seat", &seat.to_string()]);
        if out.status.success() {
            self.deliver(&out.stdout, false);
        }
        out
    }

    /// Asserts `referee verify` accepts the record.
    fn assert_verifies(&self) {
        let out = self.run(&["verify", RECORD]);
        assert!(
            out.status.success(),
            "verify rejected the record: {}\n{}",
            text(&out.stderr),
            String::from_utf8_lossy(&self.bytes())
        );
    }

    /// A transcript of `seat`'s messages, optionally only the mailed ones.
    fn transcript(&self, seat: usize, with_views: bool) -> Vec<String> {
        self.inbox[seat - 1]
            .iter()
            .filter(|m| with_views || !m.from_view)
            .map(|m| m.text.clone())
            .collect()
    }

    /// `referee audit` of `seat` against `messages` (written to a transcript file).
    fn audit(&self, seat: usize, messages: &[String], record: &str) -> Output {
        let name = format!("transcript-{seat}.txt");
        std::fs::write(self.dir().join(&name), messages.join("\n")).expect("transcript written");
        self.run(&[
            "audit",
            record,
            "--seat",
            &seat.to_string(),
            "--transcript",
            &name,
        ])
    }

    /// The record's lines, parsed.
    fn lines(&self) -> Vec<Line> {
        typed_lines(&text(&self.bytes()))
    }
}

/// The stored chain hash of every line of a record.
fn chain_hashes(body: &str) -> Vec<String> {
    body.lines()
        .map(|l| record::unseal(l).expect("a sealed line").1.to_string())
        .collect()
}

/// How often an I-Doubt-It seat doubts when it may.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Doubts {
    Never,
    Sometimes,
    Always,
}

fn choose(legal: &[String], rng: &mut Rng, doubts: Doubts) -> String {
    let can_doubt = legal.iter().any(|a| a == "doubt");
    let others: Vec<String> = legal.iter().filter(|a| *a != "doubt").cloned().collect();
    let doubt = can_doubt
        && (others.is_empty()
            || doubts == Doubts::Always
            || (doubts == Doubts::Sometimes && rng.below(3) == 0));
    if doubt {
        "doubt".into()
    } else {
        rng.pick(&others).clone()
    }
}

/// Plays until the game ends: the seat to act reads its `pbm view` and submits one
/// of the actions its `legal:` line offers.
fn play_out(mail: &mut Mail, seed: u64, doubts: Doubts) {
    let mut rng = Rng::new(seed);
    for _ in 0..2000 {
        let Some(seat) = mail.turn() else { return };
        let message = mail.view(seat);
        let action = choose(&legal_of(&message), &mut rng, doubts);
        let out = mail.play(seat, &action);
        assert!(
            out.status.success(),
            "seat {seat}'s legal action `{action}` was refused: {}",
            text(&out.stderr)
        );
    }
    panic!("the game did not end within 2000 actions");
}

fn line_type(line: &Line) -> &'static str {
    match line {
        Line::Header(_) => "header",
        Line::Action(_) => "action",
        Line::Forfeit(_) => "forfeit",
        Line::Result(_) => "result",
        Line::Commit(_) => "commit",
        Line::Reveal(_) => "reveal",
        Line::Signature(_) => "signature",
        Line::Deadline(_) => "deadline",
    }
}

/// An I-Doubt-It placement (`N@b1`), as opposed to a drop (`3@f3`).
fn is_placement(action: &str) -> bool {
    let b = action.as_bytes();
    b.len() > 2 && b[0].is_ascii_uppercase() && b[1] == b'@'
}

/// The final record of a finished game: ends with `result` then `reveal`; for
/// I-Doubt-It, exactly one `commit` line, right after the last placement.
fn assert_finished_record(mail: &Mail, game: &str) {
    let lines = mail.lines();
    let types: Vec<&str> = lines.iter().map(line_type).collect();
    assert_eq!(
        &types[types.len() - 2..],
        ["result", "reveal"],
        "the record ends with result, reveal"
    );
    assert_eq!(types.iter().filter(|t| **t == "result").count(), 1);
    let commits: Vec<usize> = (0..types.len()).filter(|&i| types[i] == "commit").collect();
    if game == "idoubtit" {
        let last_placement = lines
            .iter()
            .rposition(|l| matches!(l, Line::Action(a) if is_placement(&a.action)))
            .expect("placements");
        assert_eq!(
            commits,
            [last_placement + 1],
            "one commit line, right after the last placement"
        );
        let Some(Line::Reveal(r)) = lines.last() else {
            unreachable!()
        };
        assert!(r.data.is_some(), "the reveal opens the commitment");
    } else {
        assert!(commits.is_empty(), "{game} hides nothing that needs a commitment");
    }
}

/// Asserts every seat's complete transcript passes `referee audit`.
fn assert_audits(mail: &Mail) {
    for seat in 1..=mail.seats {
        let out = mail.audit(seat, &mail.transcript(seat, true), RECORD);
        assert!(
            out.status.success(),
            "audit of seat {seat} failed: {}",
            text(&out.stderr)
        );
        assert!(text(&out.stdout).starts_with("audit ok"), "{}", text(&out.stdout));
    }
}

/// The salt a finished record revealed.
fn revealed_salt(mail: &Mail) -> String {
    match mail.lines().last() {
        Some(Line::Reveal(r)) => r.salt.clone(),
        other => panic!("the record does not end with a reveal line: {other:?}"),
    }
}

/// R-S1: while the game goes on, a seat is sent no unsalted chain hash of any line,
/// not the salt, and not the committed hidden data; every 64-hex-digit token it is
/// sent is a salted chain hash or the commitment. The messages sent at the end carry
/// the salt, so that the seat can check them.
fn assert_rs1(mail: &Mail) {
    let body = text(&mail.bytes());
    let hashes = chain_hashes(&body);
    let lines = mail.lines();
    let salt = revealed_salt(mail);
    let (commitment, data) = lines.iter().fold((None, None), |acc, l| match l {
        Line::Commit(c) => (Some(c.commitment.clone()), acc.1),
        Line::Reveal(r) => (acc.0, r.data.clone()),
        _ => acc,
    });
    let salted: BTreeSet<String> = hashes
        .iter()
        .map(|h| record::salted_digest(&salt, "chain", h))
        .collect();
    let mut seen_end = false;
    for seat in 1..=mail.seats {
        for m in &mail.inbox[seat - 1] {
            let t = &m.text;
            let over = t.lines().any(|l| l.starts_with("result: "));
            // The record hash told is the salted hash of the line it names.
            let (k, h) = t
                .lines()
                .find_map(|l| l.strip_prefix("record: line "))
                .and_then(|r| r.split_once(", hash "))
                .expect("every message names its record line");
            let k: usize = k.parse().expect("a line number");
            assert_eq!(
                h,
                record::salted_digest(&salt, "chain", &hashes[k - 1]),
                "salted hash of line {k}"
            );
            if over {
                seen_end = true;
                assert!(
                    t.contains(&format!("salt: {salt}")),
                    "the final message reveals the salt:\n{t}"
                );
                continue;
            }
            assert!(
                !t.contains(&salt),
                "seat {seat} was sent the salt during play:\n{t}"
            );
            for (i, h) in hashes.iter().enumerate() {
                assert!(
                    !t.contains(h.as_str()),
                    "seat {seat} was sent the unsalted hash of line {}:\n{t}",
                    i + 1
                );
            }
            if let Some(d) = &data {
                assert!(
                    !t.contains(d.as_str()),
                    "seat {seat} was sent the committed hidden data:\n{t}"
                );
            }
            for token in t
                .split(|c: char| !c.is_ascii_hexdigit())
                .filter(|w| w.len() >= 64)
            {
                assert!(
                    salted.contains(token) || commitment.as_deref() == Some(token),
                    "seat {seat} was sent an unexplained digest {token}:\n{t}"
                );
            }
        }
    }
    assert!(seen_end, "the seats were told the game ended");
}

/// A whole game driven through `pbm` commands only, then verified and audited.
fn whole_game(game: &str, options: &[&str], seats: usize, seed: u64, doubts: Doubts) -> Mail {
    let mut mail = Mail::new(game, options, seats);
    play_out(&mut mail, seed, doubts);
    mail.assert_verifies();
    let out = mail.run(&["verify", RECORD]);
    assert!(text(&out.stdout).contains("finished"), "{}", text(&out.stdout));
    assert_finished_record(&mail, game);
    if game == "idoubtit" {
        let lines = mail.lines();
        let commit = lines
            .iter()
            .position(|l| matches!(l, Line::Commit(_)))
            .expect("a commit line");
        assert!(
            lines[commit..].iter().any(|l| matches!(l, Line::Action(_))),
            "the game went on past placement"
        );
    }
    assert_audits(&mail);
    assert_rs1(&mail);
    mail
}

#[test]
fn grouped_legal_lines_expand() {
    assert_eq!(
        expand_legal("a1[-c3 -c3-a5] e2[e3 e4] doubt K[@a1 @b2]"),
        ["a1-c3", "a1-c3-a5", "e2e3", "e2e4", "doubt", "K@a1", "K@b2"]
    );
    assert_eq!(expand_legal("c2-d3 accept"), ["c2-d3", "accept"]);
}

#[test]
fn whole_pegchow_game() {
    whole_game("pegchow", &["players=2", "max-plies=24"], 2, 1, Doubts::Never);
}

#[test]
fn whole_telka_game_of_three() {
    whole_game("telka", &["players=3", "max-plies=24"], 3, 2, Doubts::Never);
}

#[test]
fn whole_idoubtit_game_variant_0() {
    whole_game(
        "idoubtit",
        &["variant=0", "max-plies=16"],
        2,
        3,
        Doubts::Sometimes,
    );
}

#[test]
fn whole_idoubtit_game_with_drops_variant_3() {
    whole_game(
        "idoubtit",
        &["variant=3", "max-plies=16"],
        2,
        4,
        Doubts::Sometimes,
    );
}

#[test]
fn whole_idoubtit_game_shogi_board_with_drops_variant_9() {
    whole_game(
        "idoubtit",
        &["variant=9", "max-plies=12"],
        2,
        5,
        Doubts::Sometimes,
    );
}

#[test]
fn whole_multichess_game_of_three() {
    whole_game("multichess", &["players=3", "max-plies=24"], 3, 6, Doubts::Never);
}

/// The record, its salt file (empty once the game is over and the file is gone), and
/// the directory's file names.
fn snapshot(mail: &Mail) -> (Vec<u8>, Vec<u8>, BTreeSet<String>) {
    let salt = std::fs::read(mail.dir().join(format!("{RECORD}.salt"))).unwrap_or_default();
    (mail.bytes(), salt, file_names(mail.dir()))
}

fn file_names(dir: &Path) -> BTreeSet<String> {
    std::fs::read_dir(dir)
        .expect("the directory is readable")
        .map(|e| e.expect("an entry").file_name().to_string_lossy().into_owned())
        .collect()
}

/// A clean rejection: exit 2, nothing on stdout, one `referee:` line on stderr, and
/// nothing changed on disk.
fn assert_rejected(
    mail: &Mail,
    out: &Output,
    before: &(Vec<u8>, Vec<u8>, BTreeSet<String>),
    what: &str,
) -> String {
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{what}: exit code; stderr {err}");
    assert!(
        out.stdout.is_empty(),
        "{what}: nothing is mailed: {}",
        text(&out.stdout)
    );
    assert_eq!(err.lines().count(), 1, "{what}: one line on stderr: {err}");
    assert!(err.starts_with("referee: "), "{what}: {err}");
    assert!(
        snapshot(mail) == *before,
        "{what}: the record, its salt or its directory changed"
    );
    err
}

#[test]
fn rejections_change_nothing() {
    let mut mail = Mail::new("pegchow", &["players=2"], 2);
    let before = snapshot(&mail);
    let legal = legal_of(&mail.view(1));
    assert!(
        legal.iter().any(|a| a == "c2-d3"),
        "c2-d3 opens the game: {legal:?}"
    );

    let out = mail.play(2, "k10-j9");
    let err = assert_rejected(&mail, &out, &before, "wrong seat");
    assert!(err.contains("not seat 2's turn"), "{err}");
    let out = mail.play(1, "a1-a2");
    let err = assert_rejected(&mail, &out, &before, "illegal action");
    assert!(err.contains("rejected, nothing changed"), "{err}");
    let out = mail.play(1, "hello");
    let err = assert_rejected(&mail, &out, &before, "malformed action");
    assert!(err.contains("malformed"), "{err}");
    let out = mail.play(1, "c2-d4");
    let err = assert_rejected(&mail, &out, &before, "typo");
    assert!(err.contains("did you mean c2-d3?"), "{err}");
    let out = mail.play(3, "c2-d3");
    let err = assert_rejected(&mail, &out, &before, "no such seat");
    assert!(err.contains("seat 3 does not exist"), "{err}");
    let out = mail.run(&["pbm", "play", RECORD, "--seat", "0", "c2-d3"]);
    assert_rejected(&mail, &out, &before, "seat 0");
    let out = mail.run(&[
        "pbm", "new", "--game", "pegchow", "--seat", "a", "--seat", "b", RECORD,
    ]);
    let err = assert_rejected(&mail, &out, &before, "new over an existing record");
    assert!(err.contains("already exists"), "{err}");

    assert!(mail.play(1, "c2-d3").status.success());
    assert!(mail.resign(2).status.success(), "resigning");
    mail.assert_verifies();
    assert_finished_record(&mail, "pegchow");
    let over = snapshot(&mail);
    let message = mail.view(1);
    assert!(message.contains("result: "), "{message}");
    let out = mail.play(1, "d3-e4");
    let err = assert_rejected(&mail, &out, &over, "play after the end");
    assert!(err.contains("the game is over"), "{err}");
    let out = mail.resign(1);
    let err = assert_rejected(&mail, &out, &over, "resign after the end");
    assert!(err.contains("the game is over"), "{err}");
    mail.assert_verifies();
    assert_audits(&mail);
}

/// A seat that is out (R-F1, R-M5) cannot resign again, and is not shown the legal
/// actions of the seat to act as suggestions.
#[test]
fn a_seat_that_is_out_is_refused_without_hints() {
    let mut mail = Mail::new("multichess", &["players=3", "max-plies=12"], 3);
    assert!(mail.resign(3).status.success(), "seat 3 resigns");
    mail.assert_verifies();
    let before = snapshot(&mail);
    let out = mail.resign(3);
    let err = assert_rejected(&mail, &out, &before, "resigning twice");
    assert!(err.contains("out of the game"), "{err}");
    let out = mail.play(3, "3:e2-3:e4");
    let err = assert_rejected(&mail, &out, &before, "a move of a seat that is out");
    assert!(
        !err.contains("did you mean"),
        "no hints from another seat's legal actions: {err}"
    );
    let out = mail.play(2, "2:e2-2:e5");
    let err = assert_rejected(&mail, &out, &before, "out of turn");
    assert!(!err.contains("did you mean"), "{err}");
    for seat in 1..=3 {
        mail.view(seat);
    }
    play_out(&mut mail, 61, Doubts::Never);
    mail.assert_verifies();
    assert_finished_record(&mail, "multichess");
    assert_audits(&mail);
}

/// A record that holds a forfeit that did nothing (of a seat that is out already) is
/// not a record any writer makes: verify names its line, and no seat is mailed from it.
#[test]
fn a_forfeit_that_told_nothing_is_refused() {
    let mail = Mail::new("multichess", &["players=3"], 3);
    let out = mail.run(&["pbm", "resign", RECORD, "--seat", "3"]);
    assert!(out.status.success());
    let before = snapshot(&mail);
    let again = mail.run(&["pbm", "resign", RECORD, "--seat", "3"]);
    let err = assert_rejected(&mail, &again, &before, "seat 3 resigns again");
    assert!(err.contains("out of the game already"), "{err}");
    mail.assert_verifies();
    let mut lines = mail.lines();
    let Some(Line::Forfeit(f)) = lines.last() else {
        panic!("a forfeit line")
    };
    let mut idle = f.clone();
    idle.events.clear();
    lines.push(Line::Forfeit(idle));
    let mut w = RecordWriter::new(Vec::new());
    for l in &lines {
        w.write(l).expect("written to memory");
    }
    std::fs::write(mail.record(), w.into_inner()).expect("written");
    let out = mail.run(&["verify", RECORD]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(&format!("line {}:", lines.len())) && stderr.contains("out of the game already"),
        "{stderr}"
    );
    for seat in ["1", "2", "3"] {
        let out = mail.run(&["pbm", "view", RECORD, "--seat", seat]);
        assert!(!out.status.success(), "view of seat {seat} from a bad record");
    }
}

#[test]
fn idoubtit_rejections_change_nothing() {
    let mut mail = Mail::new("idoubtit", &["variant=0"], 2);
    let before = snapshot(&mail);
    let out = mail.play(2, "K@e8");
    assert_rejected(&mail, &out, &before, "black places first");
    let out = mail.play(1, "K@e3");
    let err = assert_rejected(&mail, &out, &before, "placement off the home rows");
    assert!(err.contains("did you mean"), "{err}");
    let out = mail.play(1, "doubt");
    assert_rejected(&mail, &out, &before, "nothing to doubt");
    assert!(mail.play(1, "K@e1").status.success());
    let after = snapshot(&mail);
    let out = mail.play(1, "Q@d1");
    let err = assert_rejected(&mail, &out, &after, "twice in a row");
    assert!(err.contains("not seat 1's turn"), "{err}");
    mail.assert_verifies();
}

/// Waits for a child with the liveness bound; a hang fails the test.
fn finish(child: std::process::Child) -> Output {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    rx.recv_timeout(HANG_BOUND)
        .expect("a pbm command hung (the lock was never released?)")
        .expect("the binary runs")
}

/// Starts several commands at once and waits for all of them.
fn race(dir: &Path, commands: &[Vec<String>]) -> Vec<Output> {
    let children: Vec<_> = commands
        .iter()
        .map(|args| {
            Command::new(exe())
                .current_dir(dir)
                .args(args)
                .env_remove("REFEREE_PBM_FAULT")
                .stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .expect("the binary starts")
        })
        .collect();
    children.into_iter().map(finish).collect()
}

fn play_args(seat: usize, action: &str) -> Vec<String> {
    ["pbm", "play", RECORD, "--seat", &seat.to_string(), action]
        .map(String::from)
        .to_vec()
}

/// Of racing outputs, the one that applied; asserts every other was cleanly rejected.
fn one_applied<'a>(outputs: &'a [Output], what: &str) -> &'a Output {
    let applied: Vec<&Output> = outputs.iter().filter(|o| o.status.success()).collect();
    assert_eq!(applied.len(), 1, "{what}: exactly one applies");
    for o in outputs.iter().filter(|o| !o.status.success()) {
        let err = text(&o.stderr);
        assert_eq!(
            o.status.code(),
            Some(2),
            "{what}: the loser is rejected, not broken: {err}"
        );
        assert_eq!(err.lines().count(), 1, "{what}: {err}");
        assert!(
            err.starts_with("referee: rejected, nothing changed"),
            "{what}: {err}"
        );
        assert!(o.stdout.is_empty(), "{what}: a rejected command mails nothing");
    }
    applied[0]
}

#[test]
fn racing_plays_of_one_seat_apply_once() {
    let mut mail = Mail::new("pegchow", &["players=2", "max-plies=200"], 2);
    let mut rng = Rng::new(11);
    for round in 0..12 {
        let seat = mail.turn().expect("the game goes on");
        let action = rng.pick(&legal_of(&mail.view(seat))).clone();
        let lines_before = mail.lines().len();
        let outputs = race(mail.dir(), &[play_args(seat, &action), play_args(seat, &action)]);
        let winner = one_applied(
            &outputs,
            &format!("round {round}: seat {seat} plays {action} twice"),
        );
        let stdout = winner.stdout.clone();
        mail.deliver(&stdout, false);
        assert_eq!(
            mail.lines().len(),
            lines_before + 1,
            "round {round}: one line more"
        );
        mail.assert_verifies();
    }
    assert!(mail.resign(1).status.success());
    mail.assert_verifies();
    assert_audits(&mail);
}

#[test]
fn racing_plays_of_two_seats_apply_once() {
    // Three seats: whatever the order, the seat two places after the one to act is
    // never next, so exactly one of the two applies.
    let mut mail = Mail::new("pegchow", &["players=3", "max-plies=200"], 3);
    let mut rng = Rng::new(12);
    for round in 0..10 {
        let seat = mail.turn().expect("the game goes on");
        let other = (seat + 1) % 3 + 1;
        let action = rng.pick(&legal_of(&mail.view(seat))).clone();
        let other_action = rng.pick(&legal_of(&mail.view(seat))).clone();
        let lines_before = mail.lines().len();
        let outputs = race(
            mail.dir(),
            &[play_args(other, &other_action), play_args(seat, &action)],
        );
        assert!(
            outputs[1].status.success(),
            "round {round}: the seat to act applies"
        );
        let winner = one_applied(&outputs, &format!("round {round}: seats {seat} and {other}"));
        let stdout = winner.stdout.clone();
        mail.deliver(&stdout, false);
        assert_eq!(mail.lines().len(), lines_before + 1);
        mail.assert_verifies();
    }
    // Two resignations at once: the first ends the game, the second finds it over.
    for round in 0..6 {
        let mail = Mail::new("telka", &["players=2"], 2);
        let resign = |seat: usize| {
            ["pbm", "resign", RECORD, "--seat", &seat.to_string()]
                .map(String::from)
                .to_vec()
        };
        let outputs = race(mail.dir(), &[resign(1), resign(2)]);
        one_applied(&outputs, &format!("round {round}: both seats resign"));
        mail.assert_verifies();
        assert_finished_record(&mail, "telka");
        let Some(Line::Result(r)) = mail.lines().into_iter().rev().nth(1) else {
            panic!("no result")
        };
        let resigned = if outputs[0].status.success() { 1 } else { 2 };
        assert_eq!(
            r.places[resigned - 1],
            2,
            "round {round}: the seat that resigned first loses"
        );
    }
}

#[test]
fn racing_new_games_on_one_path_create_one() {
    for round in 0..6 {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let new = |name: &str| {
            [
                "pbm", "new", "--game", "idoubtit", "--seat", name, "--seat", "b", RECORD,
            ]
            .map(String::from)
            .to_vec()
        };
        let outputs = race(dir.path(), &[new("first"), new("second")]);
        let applied = outputs.iter().filter(|o| o.status.success()).count();
        assert_eq!(applied, 1, "round {round}: one game is created");
        let loser = outputs.iter().find(|o| !o.status.success()).expect("a loser");
        assert_eq!(
            loser.status.code(),
            Some(2),
            "round {round}: {}",
            text(&loser.stderr)
        );
        assert!(
            text(&loser.stderr).contains("already exists"),
            "{}",
            text(&loser.stderr)
        );
        // The salt on disk is the game's: the reveal at the end opens with it.
        let salt_on_disk = std::fs::read_to_string(dir.path().join(format!("{RECORD}.salt"))).expect("salt");
        let out = command_in(dir.path())
            .args(["pbm", "resign", RECORD, "--seat", "1"])
            .output()
            .expect("runs");
        assert!(out.status.success(), "{}", text(&out.stderr));
        let lines = typed_lines(&std::fs::read_to_string(dir.path().join(RECORD)).expect("record"));
        let Some(Line::Reveal(r)) = lines.last() else {
            panic!("no reveal line")
        };
        assert_eq!(
            r.salt,
            salt_on_disk.trim(),
            "round {round}: the revealed salt is the one kept"
        );
        let out = command_in(dir.path())
            .args(["verify", RECORD])
            .output()
            .expect("runs");
        assert!(out.status.success(), "{}", text(&out.stderr));
    }
}

/// `pbm view` takes no lock: a view made while a play replaces the record must
/// still be one consistent message (its hash names the line its events reach).
#[test]
fn views_racing_plays_are_consistent() {
    let mut mail = Mail::new("idoubtit", &["variant=0", "max-plies=20"], 2);
    let dir = mail.dir().to_path_buf();
    let done = std::sync::atomic::AtomicBool::new(false);
    let views = std::thread::scope(|s| {
        let viewer = s.spawn(|| {
            let mut views = Vec::new();
            while !done.load(std::sync::atomic::Ordering::SeqCst) {
                for seat in ["1", "2"] {
                    let out = command_in(&dir)
                        .args(["pbm", "view", RECORD, "--seat", seat])
                        .output()
                        .expect("runs");
                    assert!(out.status.success(), "{}", text(&out.stderr));
                    views.push(text(&out.stdout));
                }
            }
            views
        });
        let mut rng = Rng::new(21);
        for _ in 0..24 {
            let seat = mail.turn().expect("placement goes on");
            let action = choose(&legal_of(&mail.view(seat)), &mut rng, Doubts::Never);
            assert!(mail.play(seat, &action).status.success());
        }
        done.store(true, std::sync::atomic::Ordering::SeqCst);
        viewer.join().expect("the viewer thread")
    });
    assert!(!views.is_empty());
    for v in &views {
        mail.deliver(v.as_bytes(), true);
    }
    assert!(mail.resign(2).status.success());
    mail.assert_verifies();
    assert_audits(&mail);
}

/// Runs a command that the fault hook kills after it wrote its temporary file and
/// before it renamed it over the record.
fn crash(dir: &Path, args: &[&str]) -> Output {
    command_in(dir)
        .env("REFEREE_PBM_FAULT", "after-temp-write")
        .args(args)
        .output()
        .expect("the binary runs")
}

#[test]
fn a_crash_mid_update_leaves_the_record_as_it_was() {
    let mut mail = Mail::new("pegchow", &["players=2"], 2);
    let mut rng = Rng::new(31);
    for _ in 0..2 {
        let seat = mail.turn().expect("on");
        let action = rng.pick(&legal_of(&mail.view(seat))).clone();
        assert!(mail.play(seat, &action).status.success());
    }
    let seat = mail.turn().expect("on");
    let action = rng.pick(&legal_of(&mail.view(seat))).clone();
    let (bytes, salt, names) = snapshot(&mail);
    let seat_text = seat.to_string();
    let out = crash(
        mail.dir(),
        &["pbm", "play", RECORD, "--seat", &seat_text, &action],
    );
    assert!(!out.status.success(), "the fault hook kills the process");
    assert_eq!(
        out.status.code(),
        None,
        "killed by a signal, not an orderly exit: {}",
        text(&out.stderr)
    );
    assert!(
        out.stdout.is_empty(),
        "nothing is mailed for an update that did not happen"
    );
    assert!(
        mail.bytes() == bytes,
        "the record is byte-identical after the crash"
    );
    let salt_after = std::fs::read(mail.dir().join(format!("{RECORD}.salt"))).expect("salt");
    assert_eq!(salt_after, salt, "the salt is untouched");
    mail.assert_verifies();
    let stray: Vec<String> = file_names(mail.dir()).difference(&names).cloned().collect();
    // Only the dead process's temporary file may be left behind (until the next
    // update removes it), and it must not disturb what follows.
    assert!(
        stray.iter().all(|n| n.starts_with(&format!("{RECORD}.tmp"))),
        "unexpected files: {stray:?}"
    );
    assert_eq!(mail.turn(), Some(seat), "the crashed action did not happen");

    let out = mail.play(seat, &action);
    assert!(out.status.success(), "the next play works: {}", text(&out.stderr));
    mail.assert_verifies();

    // A crash on the action that ends the game: no half result, no reveal.
    let seat = mail.turn().expect("on");
    let before = mail.bytes();
    let out = crash(
        mail.dir(),
        &["pbm", "resign", RECORD, "--seat", &seat.to_string()],
    );
    assert_eq!(out.status.code(), None);
    assert!(
        mail.bytes() == before,
        "the record is byte-identical after the crash"
    );
    assert_eq!(mail.turn(), Some(seat), "the game goes on");
    assert!(mail.resign(seat).status.success());
    mail.assert_verifies();
    assert_finished_record(&mail, "pegchow");
    assert_audits(&mail);
}

/// The temporary files of the record in `dir` (`<record>.tmp<pid>`).
fn temp_files(dir: &Path) -> BTreeSet<String> {
    file_names(dir)
        .into_iter()
        .filter(|n| {
            n.strip_prefix(&format!("{RECORD}.tmp"))
                .is_some_and(|pid| !pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit()))
        })
        .collect()
}

#[test]
fn the_next_update_removes_the_temporary_files_of_killed_ones() {
    let mut mail = Mail::new("pegchow", &["players=2"], 2);
    // Files that only look alike are not the record's temporary files: kept.
    let bystanders = [
        format!("{RECORD}.tmp"),
        format!("{RECORD}.tmpx1"),
        format!("{RECORD}.tmp12.bak"),
        format!("x{RECORD}.tmp12"),
        "other.jsonl.tmp12".to_string(),
    ];
    for name in &bystanders {
        std::fs::write(mail.dir().join(name), "keep").unwrap();
    }
    let mut rng = Rng::new(5);
    let seat = mail.turn().expect("on");
    let action = rng.pick(&legal_of(&mail.view(seat))).clone();
    let before = mail.bytes();
    let out = crash(
        mail.dir(),
        &["pbm", "play", RECORD, "--seat", &seat.to_string(), &action],
    );
    assert_eq!(out.status.code(), None, "killed: {}", text(&out.stderr));
    assert!(mail.bytes() == before, "the record is as it was");
    assert_eq!(
        temp_files(mail.dir()).len(),
        1,
        "the killed play left its temporary file"
    );
    // One more, as a writer with another process id would have left it.
    std::fs::write(mail.dir().join(format!("{RECORD}.tmp1")), "half a record").unwrap();

    let out = mail.play(seat, &action);
    assert!(out.status.success(), "the play: {}", text(&out.stderr));
    assert_eq!(
        temp_files(mail.dir()),
        BTreeSet::new(),
        "the play removed the stale temporary files"
    );
    mail.assert_verifies();
    assert!(
        matches!(mail.lines().last(), Some(Line::Action(a)) if a.action == action),
        "the play was applied"
    );
    for name in &bystanders {
        assert_eq!(
            std::fs::read_to_string(mail.dir().join(name)).unwrap(),
            "keep",
            "{name} was touched"
        );
    }

    // The same for a resign killed after its temporary write.
    let seat = mail.turn().expect("on");
    let before = mail.bytes();
    let out = crash(
        mail.dir(),
        &["pbm", "resign", RECORD, "--seat", &seat.to_string()],
    );
    assert_eq!(out.status.code(), None, "killed: {}", text(&out.stderr));
    assert!(mail.bytes() == before, "the record is as it was");
    assert_eq!(
        temp_files(mail.dir()).len(),
        1,
        "the killed resign left its temporary file"
    );
    assert!(mail.resign(seat).status.success());
    assert_eq!(temp_files(mail.dir()), BTreeSet::new());
    mail.assert_verifies();
    assert_finished_record(&mail, "pegchow");
    assert_audits(&mail);
}

#[test]
fn a_crash_while_creating_a_game_can_be_retried() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let new = [
        "pbm", "new", "--game", "telka", "--seat", "a", "--seat", "b", RECORD,
    ];
    let out = crash(dir.path(), &new);
    assert_eq!(out.status.code(), None, "killed: {}", text(&out.stderr));
    assert!(!dir.path().join(RECORD).exists(), "no record was created");
    assert_eq!(
        temp_files(dir.path()).len(),
        1,
        "the killed `new` left its temporary file"
    );
    let out = command_in(dir.path()).args(new).output().expect("runs");
    assert!(
        out.status.success(),
        "creating the game again works: {}",
        text(&out.stderr)
    );
    assert_eq!(
        temp_files(dir.path()),
        BTreeSet::new(),
        "creating it again removed the stale temporary file"
    );
    let out = command_in(dir.path())
        .args(["verify", RECORD])
        .output()
        .expect("runs");
    assert!(out.status.success(), "{}", text(&out.stderr));
}

/// The index of the first message to `seat` that contains `needle`.
fn find_message(mail: &Mail, seat: usize, with_views: bool, needle: &str) -> Option<usize> {
    mail.transcript(seat, with_views)
        .iter()
        .position(|m| m.contains(needle))
}

fn assert_audit_fails(mail: &Mail, seat: usize, messages: &[String], record: &str, expect: &str) {
    let out = mail.audit(seat, messages, record);
    let err = text(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(1),
        "audit must fail ({expect}): stdout {} stderr {err}",
        text(&out.stdout)
    );
    assert!(err.contains(expect), "audit names `{expect}`: {err}");
    assert!(err.lines().all(|l| l.starts_with("referee: ")), "{err}");
}

#[test]
fn audit_catches_an_altered_verdict() {
    let mail = whole_game("idoubtit", &["variant=0", "max-plies=12"], 2, 41, Doubts::Always);
    let mut caught = 0;
    for seat in 1..=2 {
        let mut messages = mail.transcript(seat, true);
        for (from, to) in [
            ("  event verdict correct", "  event verdict incorrect"),
            ("  event verdict incorrect", "  event verdict correct"),
        ] {
            let Some(i) = messages.iter().position(|m| m.lines().any(|l| l == from)) else {
                continue;
            };
            let original = messages[i].clone();
            messages[i] = original.replacen(from, to, 1);
            assert_audit_fails(
                &mail,
                seat,
                &messages,
                RECORD,
                "events told are not what the rules give",
            );
            let out = mail.audit(seat, &messages, RECORD);
            assert!(
                text(&out.stderr).contains("verdict"),
                "the audit shows the verdicts: {}",
                text(&out.stderr)
            );
            messages[i] = original;
            caught += 1;
        }
    }
    assert!(caught > 0, "doubting whenever possible produced a verdict");
}

#[test]
fn audit_catches_a_dropped_message_and_a_wrong_record_hash() {
    let mail = whole_game(
        "idoubtit",
        &["variant=0", "max-plies=10"],
        2,
        42,
        Doubts::Sometimes,
    );
    for seat in 1..=2 {
        // Only what was mailed after each change: no overlapping views.
        let mailed = mail.transcript(seat, false);
        let ok = mail.audit(seat, &mailed, RECORD);
        assert!(ok.status.success(), "{}", text(&ok.stderr));
        let middle = (1..mailed.len() - 1)
            .find(|&i| i > mailed.len() / 2 && mailed[i].contains("  event "))
            .expect("a message in the middle that tells events");
        let mut dropped = mailed.clone();
        dropped.remove(middle);
        assert_audit_fails(&mail, seat, &dropped, RECORD, "a message is missing");
        let mut dropped = mailed.clone();
        dropped.pop();
        assert_audit_fails(&mail, seat, &dropped, RECORD, "a message is missing");

        // A record hash that is not the record's: one digit changed, or an older
        // (genuine) hash reused.
        let hash_line = |m: &str| {
            m.lines()
                .find(|l| l.starts_with("record: line "))
                .expect("record line")
                .to_string()
        };
        let mut wrong = mailed.clone();
        let line = hash_line(&wrong[middle]);
        let last = line.chars().last().expect("a digit");
        let changed = format!(
            "{}{}",
            &line[..line.len() - 1],
            if last == '0' { '1' } else { '0' }
        );
        wrong[middle] = wrong[middle].replace(&line, &changed);
        assert_audit_fails(&mail, seat, &wrong, RECORD, "record hash");
        let mut reused = mailed.clone();
        let older = hash_line(&reused[middle - 1]);
        let (_, old_hash) = older.split_once(", hash ").expect("hash");
        let (head, _) = line.split_once(", hash ").expect("hash");
        reused[middle] = reused[middle].replace(&line, &format!("{head}, hash {old_hash}"));
        assert_audit_fails(&mail, seat, &reused, RECORD, "record hash");
        // A view that is not what the seat saw (its last field changed).
        let mut lying = mailed.clone();
        let view = lying[middle]
            .lines()
            .find(|l| l.starts_with("view: "))
            .expect("a view")
            .to_string();
        lying[middle] = lying[middle].replace(&view, &format!("{view} x"));
        assert_audit_fails(
            &mail,
            seat,
            &lying,
            RECORD,
            "its `view:` line is not what the record gives",
        );
        // A message for another seat slipped in.
        let mut foreign = mailed.clone();
        foreign.push(mail.transcript(3 - seat, false)[1].clone());
        assert_audit_fails(&mail, seat, &foreign, RECORD, "addressed to another seat");
    }
    assert!(
        find_message(&mail, 1, true, "commitment: ").is_some(),
        "the commitment was mailed"
    );
}

/// How a tampering game master tries to cover a changed hidden type.
#[derive(Clone, Copy, Debug)]
enum Cover {
    /// Leaves the commitment and the revealed data as they were.
    Nothing,
    /// Reveals the new hidden data under the old commitment.
    RevealNewData,
    /// Commits to the new data and reveals it (possible only with the salt).
    Recommit,
}

/// The record with two of White's placed types swapped (neither a king), every
/// later line recomputed through the rules, and the whole chain sealed again.
fn swap_hidden_types(lines: &[Line], salt: &str, cover: Cover) -> (Vec<u8>, String, String) {
    let Line::Header(header) = &lines[0] else {
        panic!("no header")
    };
    let placements: Vec<(usize, char)> = lines
        .iter()
        .enumerate()
        .filter_map(|(i, l)| match l {
            Line::Action(a) if a.seat.number() == 1 && is_placement(&a.action) => {
                Some((i, a.action.chars().next()?))
            }
            _ => None,
        })
        .filter(|(_, t)| *t != 'K')
        .collect();
    let (i, a) = placements[0];
    let (j, b) = *placements
        .iter()
        .find(|(_, t)| *t != a)
        .expect("two different types placed");
    let mut lines = lines.to_vec();
    for (k, from, to) in [(i, a, b), (j, b, a)] {
        let Line::Action(act) = &mut lines[k] else {
            unreachable!()
        };
        act.action = format!("{to}{}", &act.action[from.len_utf8()..]);
    }
    let mut game = record::start_game(header).expect("the header");
    let (mut old_data, mut new_data) = (String::new(), String::new());
    for line in lines.iter_mut().skip(1) {
        match line {
            Line::Action(act) => {
                let played = game
                    .play(act.seat, &act.action)
                    .expect("an undoubted game replays whatever the types");
                act.events = played.events;
                act.taken = played.taken;
            }
            Line::Commit(c) => {
                new_data = game.commitment_data().expect("committed after placement");
                if let Cover::Recommit = cover {
                    c.commitment = record::salted_digest(salt, "commit", &new_data);
                }
            }
            Line::Result(r) => {
                let o = game.outcome().expect("over");
                r.places = o.places.clone();
                r.reason = o.reason.to_string();
                r.plies = game.plies();
                r.state = game.state();
            }
            Line::Reveal(r) => {
                old_data = r.data.clone().expect("revealed data");
                if !matches!(cover, Cover::Nothing) {
                    r.data = Some(new_data.clone());
                }
            }
            Line::Header(_) | Line::Forfeit(_) | Line::Signature(_) | Line::Deadline(_) => {}
        }
    }
    let mut w = RecordWriter::new(Vec::new());
    for l in &lines {
        w.write(l).expect("written to memory");
    }
    (w.into_inner(), old_data, new_data)
}

#[test]
fn a_hidden_type_changed_after_the_commitment_is_caught() {
    let mail = whole_game("idoubtit", &["variant=0", "max-plies=10"], 2, 43, Doubts::Never);
    let lines = mail.lines();
    let salt = revealed_salt(&mail);
    let reveal_line = lines.len();
    for cover in [Cover::Nothing, Cover::RevealNewData, Cover::Recommit] {
        let (bytes, old, new) = swap_hidden_types(&lines, &salt, cover);
        assert_ne!(old, new, "the hidden part did change");
        let name = format!("tampered-{cover:?}.jsonl");
        std::fs::write(mail.dir().join(&name), &bytes).expect("written");
        let verify = mail.run(&["verify", &name]);
        let err = text(&verify.stderr);
        match cover {
            Cover::Nothing | Cover::RevealNewData => {
                assert_eq!(
                    verify.status.code(),
                    Some(1),
                    "{cover:?}: verify must fail: {}",
                    text(&verify.stdout)
                );
                assert!(
                    err.contains(&format!("line {reveal_line}: ")),
                    "{cover:?}: names the reveal line: {err}"
                );
                assert!(
                    err.contains("commitment"),
                    "{cover:?}: names the commitment: {err}"
                );
                // The chain itself is intact: only the commitment gives it away.
                assert!(!err.contains("hash mismatch"), "{err}");
                for seat in 1..=2 {
                    let out = mail.audit(seat, &mail.transcript(seat, true), &name);
                    assert_eq!(out.status.code(), Some(1), "{cover:?}: audit must fail");
                    assert!(text(&out.stderr).contains("commitment"), "{}", text(&out.stderr));
                }
            }
            Cover::Recommit => {
                // With the salt, a game master can make a record consistent in
                // itself; what the seats were told gives it away.
                assert!(verify.status.success(), "{err}");
                for seat in 1..=2 {
                    assert_audit_fails(
                        &mail,
                        seat,
                        &mail.transcript(seat, true),
                        &name,
                        "its `commitment:` line is not what the record gives",
                    );
                    assert_audit_fails(&mail, seat, &mail.transcript(seat, true), &name, "record hash");
                }
            }
        }
    }
}

/// R-S1 and R-D9 in the mail of I-Doubt-It variant 0: besides the digests (see
/// [`assert_rs1`]), a seat's view never shows an opponent's type letter on the board,
/// and it is never told the type of an opponent's placement.
#[test]
fn idoubtit_mail_hides_the_opponents_types() {
    for seed in [51, 52] {
        let mail = whole_game(
            "idoubtit",
            &["variant=0", "max-plies=16"],
            2,
            seed,
            Doubts::Sometimes,
        );
        for seat in 1..=2 {
            let (theirs, opponent) = if seat == 1 {
                ("kqrbnp", "black")
            } else {
                ("KQRBNP", "white")
            };
            for m in &mail.inbox[seat - 1] {
                let t = &m.text;
                if t.lines().any(|l| l.starts_with("result: ")) {
                    continue;
                }
                let view = t.lines().find_map(|l| l.strip_prefix("view: ")).expect("a view");
                let board = view.split(' ').next().expect("a board");
                let rows = t
                    .lines()
                    .filter_map(|l| l.strip_prefix("  | "))
                    .filter(|l| l.starts_with(|c: char| c.is_ascii_digit()));
                for part in std::iter::once(board).chain(rows) {
                    assert!(
                        !part.contains(|c: char| theirs.contains(c)),
                        "seat {seat} sees an opponent's type in `{part}`:\n{t}"
                    );
                }
                for e in t.lines().filter_map(|l| l.strip_prefix("  event ")) {
                    if let Some(p) = e.strip_prefix(&format!("place {opponent} ")) {
                        assert!(p.starts_with("X@"), "seat {seat} is told a placed type: {e}");
                    }
                }
            }
        }
    }
}
