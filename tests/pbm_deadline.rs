//! Play-by-mail deadlines (`pbm new --deadline`, `pbm tick`) and the `time` of every
//! record line, through the real binary, with the wall clock set by `REFEREE_NOW`
//! for each command instead of sleeping: a seat missing its deadline under each
//! missed-move rule, reminders sent once a turn, a tick with nothing due changing
//! nothing, and `verify` refusing a record whose times go backwards while still
//! accepting records written before lines had times.

mod cli_support;

use std::path::Path;

use referee::record::Line;
use serde_json::Value;
use tempfile::TempDir;

use cli_support::{assert_verifies, record_lines, referee_in, reseal, text, verify};

const RECORD: &str = "game.jsonl";
/// When every game here starts.
const START: &str = "2026-03-01T12:00:00Z";

/// Runs `referee ARGS` in `dir` with the wall clock at `now`; (exit code, stdout, stderr).
fn at(dir: &Path, now: &str, args: &[&str]) -> (i32, String, String) {
    let out = referee_in(dir)
        .env("REFEREE_NOW", now)
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        text(&out.stdout),
        text(&out.stderr),
    )
}

/// Runs `referee ARGS` at `now` and asserts it succeeds; its stdout.
fn ok(dir: &Path, now: &str, args: &[&str]) -> String {
    let (code, out, err) = at(dir, now, args);
    assert_eq!(code, 0, "{args:?} at {now}: {err}");
    out
}

/// A two-seat Peg Chow game by mail with deadlines `flags`, made at [`START`].
fn game(flags: &[&str]) -> TempDir {
    let dir = tempfile::tempdir().unwrap();
    let mut args = vec![
        "pbm", "new", "--game", "pegchow", "--seat", "alice", "--seat", "bob",
    ];
    args.extend_from_slice(flags);
    args.push(RECORD);
    ok(dir.path(), START, &args);
    dir
}

/// The first legal action in a message (`legal: a1[-c3 -c5] b1[-d3]` or plain).
fn first_legal(message: &str) -> String {
    let line = message
        .lines()
        .find_map(|l| l.strip_prefix("legal: "))
        .expect("a legal: line");
    let word = line.split(' ').next().unwrap();
    match word.split_once('[') {
        Some((head, tail)) => format!("{head}{}", tail.trim_end_matches(']')),
        None => word.to_string(),
    }
}

/// Seat `seat` plays its first legal action at `now`.
fn play_first(dir: &Path, now: &str, seat: &str) {
    let view = ok(dir, now, &["pbm", "view", RECORD, "--seat", seat]);
    ok(
        dir,
        now,
        &["pbm", "play", RECORD, "--seat", seat, &first_legal(&view)],
    );
}

fn record(dir: &Path) -> Vec<u8> {
    std::fs::read(dir.join(RECORD)).unwrap()
}

fn lines(dir: &Path) -> Vec<Value> {
    record_lines(&dir.join(RECORD))
}

/// The `deadline` lines of the record: (seat, event).
fn deadline_events(dir: &Path) -> Vec<(u64, String)> {
    lines(dir)
        .iter()
        .filter(|l| l["type"] == "deadline")
        .map(|l| {
            (
                l["seat"].as_u64().unwrap(),
                l["event"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// How many messages `out` holds, and to which seats.
fn recipients(out: &str) -> Vec<String> {
    out.lines()
        .filter_map(|l| l.strip_prefix("=== referee play-by-mail message to seat "))
        .map(|r| r.split(' ').next().unwrap().to_string())
        .collect()
}

/// The forfeit line of the record and the result's reason.
fn forfeit_and_result(dir: &Path) -> (Value, String) {
    let all = lines(dir);
    let forfeit = all
        .iter()
        .find(|l| l["type"] == "forfeit")
        .expect("a forfeit")
        .clone();
    let result = all.iter().find(|l| l["type"] == "result").expect("a result");
    (forfeit, result["reason"].as_str().unwrap().to_string())
}

#[test]
fn a_seat_that_misses_its_deadline_forfeits_on_time() {
    let dir = game(&["--deadline", "72h", "--nmr", "forfeit"]);
    let d = dir.path();
    play_first(d, "2026-03-01T13:00:00Z", "alice");
    // Bob's deadline runs from alice's move: 72 hours later, not from the start.
    let status = ok(d, "2026-03-01T13:00:00Z", &["pbm", "status", RECORD]);
    assert!(status.contains("deadline: 2026-03-04T13:00:00Z"), "{status}");
    let before = record(d);
    assert_eq!(ok(d, "2026-03-04T12:59:59Z", &["pbm", "tick", RECORD]), "");
    assert_eq!(record(d), before, "a tick before the deadline changes nothing");
    let out = ok(d, "2026-03-04T13:00:01Z", &["pbm", "tick", RECORD]);
    assert_eq!(recipients(&out), ["1", "2"], "{out}");
    assert!(
        out.contains("note: seat 2 missed its deadline 2026-03-04T13:00:00Z: it forfeits"),
        "{out}"
    );
    assert_eq!(deadline_events(d), [(2, "forfeited".to_string())]);
    let (forfeit, reason) = forfeit_and_result(d);
    assert_eq!(forfeit["reason"], "timeout");
    assert_eq!(forfeit["time"], "2026-03-04T13:00:01Z");
    assert_eq!(reason, "forfeit 2 timeout");
    assert_verifies(&d.join(RECORD));
    // The deadline line adds no ply: the last ply's picture runs through it to the
    // forfeit and the result, as the whole record's does (a mail's picture is this).
    let svg = |extra: &[&str]| {
        let mut args = vec!["show", RECORD, "--format", "svg", "--seat", "2"];
        args.extend_from_slice(extra);
        ok(d, START, &args)
    };
    let last = svg(&["--ply", "1"]);
    assert!(last.contains("result: "), "{last}");
    assert_eq!(last, svg(&[]));
    // Over: later ticks have nothing to do.
    let after = record(d);
    assert_eq!(ok(d, "2026-04-01T00:00:00Z", &["pbm", "tick", RECORD]), "");
    assert_eq!(record(d), after);
}

#[test]
fn pass_forfeits_a_seat_that_may_not_pass() {
    // In Peg Chow a seat passes only when it has no move (R-B5): bob has moves.
    let dir = game(&["--deadline", "2d", "--nmr", "pass"]);
    let d = dir.path();
    play_first(d, "2026-03-01T12:00:00Z", "alice");
    let out = ok(d, "2026-03-03T12:00:00Z", &["pbm", "tick", RECORD]);
    assert!(
        out.contains("seat 2 missed its deadline 2026-03-03T12:00:00Z: it forfeits"),
        "{out}"
    );
    assert_eq!(deadline_events(d), [(2, "forfeited".to_string())]);
    assert_eq!(forfeit_and_result(d).1, "forfeit 2 timeout");
    assert_verifies(&d.join(RECORD));
}

#[test]
fn extend_gives_the_same_time_once_then_forfeits() {
    let dir = game(&["--deadline", "30m", "--nmr", "extend"]);
    let d = dir.path();
    // Alice's first deadline runs from the header's time.
    let out = ok(d, "2026-03-01T12:45:00Z", &["pbm", "tick", RECORD]);
    assert!(
        out.contains(
            "seat 1 missed its deadline 2026-03-01T12:30:00Z: extended once, to 2026-03-01T13:00:00Z"
        ),
        "{out}"
    );
    assert!(out.contains("deadline: 2026-03-01T13:00:00Z"), "{out}");
    let extended = lines(d).into_iter().find(|l| l["type"] == "deadline").unwrap();
    assert_eq!(extended["until"], "2026-03-01T13:00:00Z");
    assert_eq!(extended["time"], "2026-03-01T12:45:00Z");
    let before = record(d);
    assert_eq!(ok(d, "2026-03-01T12:59:00Z", &["pbm", "tick", RECORD]), "");
    assert_eq!(record(d), before);
    ok(d, "2026-03-01T13:00:00Z", &["pbm", "tick", RECORD]);
    assert_eq!(
        deadline_events(d),
        [(1, "extended".to_string()), (1, "forfeited".to_string())]
    );
    assert_eq!(forfeit_and_result(d).1, "forfeit 1 timeout");
    assert_verifies(&d.join(RECORD));
    // Every seat was told of the extension and the forfeit, and `show` says so.
    let seat2 = ok(d, START, &["show", RECORD, "--seat", "2"]);
    for told in [
        "seat 1 missed its deadline 2026-03-01T12:30:00Z: extended once, to 2026-03-01T13:00:00Z",
        "seat 1 missed its deadline 2026-03-01T13:00:00Z: it forfeits",
    ] {
        assert!(seat2.contains(told), "{seat2}");
    }
}

#[test]
fn a_late_tick_extends_and_forfeits_at_once() {
    let dir = game(&["--deadline", "1h", "--nmr", "extend"]);
    let d = dir.path();
    ok(d, "2026-03-01T15:00:00Z", &["pbm", "tick", RECORD]);
    assert_eq!(
        deadline_events(d),
        [(1, "extended".to_string()), (1, "forfeited".to_string())]
    );
    assert_verifies(&d.join(RECORD));
}

#[test]
fn a_reminder_is_sent_once_a_turn_to_the_seat_to_act_only() {
    let dir = game(&["--deadline", "72h", "--reminder", "24h"]);
    let d = dir.path();
    let before = record(d);
    assert_eq!(ok(d, "2026-03-03T11:59:59Z", &["pbm", "tick", RECORD]), "");
    assert_eq!(record(d), before, "not yet within the reminder's time");
    let out = ok(d, "2026-03-03T12:00:00Z", &["pbm", "tick", RECORD]);
    assert_eq!(recipients(&out), ["1"], "{out}");
    assert!(
        out.contains("note: reminder: seat 1 is to act by 2026-03-04T12:00:00Z"),
        "{out}"
    );
    let reminded = record(d);
    for now in [
        "2026-03-03T12:00:00Z",
        "2026-03-03T18:00:00Z",
        "2026-03-04T11:59:59Z",
    ] {
        assert_eq!(ok(d, now, &["pbm", "tick", RECORD]), "", "at {now}");
        assert_eq!(record(d), reminded, "at {now}");
    }
    // A new turn, a new reminder: bob's.
    play_first(d, "2026-03-04T00:00:00Z", "alice");
    assert_eq!(ok(d, "2026-03-05T23:59:59Z", &["pbm", "tick", RECORD]), "");
    let out = ok(d, "2026-03-06T00:00:00Z", &["pbm", "tick", RECORD]);
    assert_eq!(recipients(&out), ["2"], "{out}");
    assert_eq!(ok(d, "2026-03-06T06:00:00Z", &["pbm", "tick", RECORD]), "");
    assert_eq!(
        deadline_events(d),
        [(1, "reminder".to_string()), (2, "reminder".to_string())]
    );
    assert_verifies(&d.join(RECORD));
    // `show` tells each seat of its own reminders only, as `pbm tick` did.
    let (alice, bob) = (
        "reminder: seat 1 is to act by 2026-03-04T12:00:00Z",
        "reminder: seat 2 is to act by",
    );
    let all = ok(d, START, &["show", RECORD]);
    assert!(all.contains(alice) && all.contains(bob), "{all}");
    let seat1 = ok(d, START, &["show", RECORD, "--seat", "1"]);
    assert!(seat1.contains(alice) && !seat1.contains(bob), "{seat1}");
}

#[test]
fn every_message_of_a_game_with_deadlines_audits() {
    let dir = game(&["--deadline", "72h", "--reminder", "24h", "--nmr", "extend"]);
    let d = dir.path();
    let mut told = [String::new(), String::new()];
    let mut keep = |out: &str| {
        for (i, t) in told.iter_mut().enumerate() {
            let marker = format!("=== referee play-by-mail message to seat {} ", i + 1);
            let mut inside = false;
            for l in out.lines() {
                inside |= l.starts_with(&marker);
                if inside {
                    t.push_str(l);
                    t.push('\n');
                }
                inside &= l != "=== end of message ===";
            }
        }
    };
    keep(&ok(
        d,
        "2026-03-01T12:00:00Z",
        &["pbm", "view", RECORD, "--seat", "1"],
    ));
    keep(&ok(
        d,
        "2026-03-01T12:00:00Z",
        &["pbm", "view", RECORD, "--seat", "2"],
    ));
    keep(&ok(d, "2026-03-03T13:00:00Z", &["pbm", "tick", RECORD]));
    keep(&ok(d, "2026-03-04T13:00:00Z", &["pbm", "tick", RECORD]));
    keep(&ok(d, "2026-03-08T13:00:00Z", &["pbm", "tick", RECORD]));
    for (i, t) in told.iter().enumerate() {
        let file = d.join(format!("seat{}.txt", i + 1));
        std::fs::write(&file, t).unwrap();
        let seat = (i + 1).to_string();
        let args = [
            "audit",
            RECORD,
            "--seat",
            &seat,
            "--transcript",
            file.to_str().unwrap(),
        ];
        let (code, out, err) = at(d, "2026-03-09T00:00:00Z", &args);
        assert_eq!(code, 0, "seat {seat}: {out}{err}");
    }
}

#[test]
fn verify_refuses_times_that_go_backwards() {
    let dir = game(&["--deadline", "1h"]);
    let d = dir.path();
    play_first(d, "2026-03-01T12:10:00Z", "alice");
    play_first(d, "2026-03-01T12:20:00Z", "bob");
    assert_verifies(&d.join(RECORD));
    let bad = d.join("backwards.jsonl");
    reseal(&d.join(RECORD), &bad, |lines| {
        // Bob's move, line 3, said to come before alice's.
        let Line::Action(a) = &mut lines[2] else {
            panic!("line 3 is an action")
        };
        a.time = Some("2026-03-01T12:05:00Z".into());
    });
    let (code, _, err) = verify(&bad);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("line 3") && err.contains("earlier"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
}

#[test]
fn verify_refuses_a_deadline_line_for_a_seat_not_to_act() {
    let dir = game(&["--deadline", "1h", "--reminder", "30m"]);
    let d = dir.path();
    ok(d, "2026-03-01T12:40:00Z", &["pbm", "tick", RECORD]);
    assert_eq!(deadline_events(d), [(1, "reminder".to_string())]);
    let bad = d.join("other.jsonl");
    reseal(&d.join(RECORD), &bad, |lines| {
        let Line::Deadline(l) = &mut lines[1] else {
            panic!("line 2 is the reminder")
        };
        l.seat = referee::game::Seat::new(2).unwrap();
    });
    let (code, _, err) = verify(&bad);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("line 2") && err.contains("not to act"), "{err}");
}

#[test]
fn records_without_times_still_verify() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    ok(
        d,
        START,
        &[
            "match", "--game", "telka", "--seed", "3", "--record", "m.jsonl", "-q",
        ],
    );
    let all = record_lines(&d.join("m.jsonl"));
    assert!(all.iter().all(|l| l["time"] == START), "every line has the time");
    let old = d.join("old.jsonl");
    reseal(&d.join("m.jsonl"), &old, |lines| {
        for line in lines.iter_mut() {
            strip_time(line);
        }
    });
    assert!(!std::fs::read_to_string(&old).unwrap().contains("\"time\""));
    assert_verifies(&old);
}

#[test]
fn serve_and_tournament_records_carry_the_time_on_every_line() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let out = referee_in(d)
        .env("REFEREE_NOW", START)
        .arg("serve")
        .write_stdin("new telka\nplay 1 c2-d3\nresign 2\nrecord s.jsonl\nquit\n")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let served = record_lines(&d.join("s.jsonl"));
    assert_eq!(served.len(), 4, "header, action, forfeit, result");
    assert!(served.iter().all(|l| l["time"] == START), "{served:?}");
    let args = [
        "tournament",
        "--game",
        "telka",
        "--agent",
        "builtin:random",
        "--agent",
        "builtin:greedy",
        "--games",
        "2",
        "--out",
        "t",
        "--st",
        "1",
    ];
    ok(d, START, &args);
    let games: Vec<_> = std::fs::read_dir(d.join("t/games"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    assert_eq!(games.len(), 2);
    for game in games {
        assert!(
            record_lines(&game).iter().all(|l| l["time"] == START),
            "{}",
            game.display()
        );
    }
}

/// `line` as written before lines carried times.
fn strip_time(line: &mut Line) {
    match line {
        Line::Header(l) => l.time = None,
        Line::Action(l) => l.time = None,
        Line::Forfeit(l) => l.time = None,
        Line::Result(l) => l.time = None,
        Line::Commit(l) => l.time = None,
        Line::Reveal(l) => l.time = None,
        Line::Signature(l) => l.time = None,
        Line::Deadline(l) => l.time = None,
    }
}

#[test]
fn bad_deadlines_and_clocks_are_refused_and_create_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let new = ["pbm", "new", "--game", "pegchow", "--seat", "a", "--seat", "b"];
    for flags in [
        &["--deadline", "3x"][..],
        &["--deadline", "0h"],
        &["--reminder", "1h"],
        &["--nmr", "pass"],
        &["--deadline", "1h", "--reminder", "2h"],
        &["--deadline", "1h", "--nmr", "never"],
    ] {
        let args: Vec<&str> = new.iter().chain(flags).chain(&[RECORD]).copied().collect();
        let (code, _, err) = at(d, START, &args);
        assert_eq!(code, 2, "{flags:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{flags:?}: {err}");
        assert!(!d.join(RECORD).exists(), "{flags:?}");
    }
    let args: Vec<&str> = new.iter().chain(&[RECORD]).copied().collect();
    let (code, _, err) = at(d, "next tuesday", &args);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("REFEREE_NOW") && err.lines().count() == 1, "{err}");
    assert!(!d.join(RECORD).exists());
    let (code, _, err) = at(d, START, &["pbm", "tick", "missing.jsonl"]);
    assert_eq!(code, 2, "{err}");
    ok(
        d,
        START,
        &["match", "--game", "telka", "--record", "m.jsonl", "-q"],
    );
    let (code, _, err) = at(d, START, &["pbm", "tick", "m.jsonl"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("not a play-by-mail game"), "{err}");
}

#[test]
fn a_game_without_deadlines_has_nothing_due() {
    let dir = game(&[]);
    let d = dir.path();
    let before = record(d);
    assert_eq!(ok(d, "2030-01-01T00:00:00Z", &["pbm", "tick", RECORD]), "");
    assert_eq!(record(d), before);
    let status = ok(d, "2030-01-01T00:00:00Z", &["pbm", "status", RECORD]);
    assert!(!status.contains("deadline"), "{status}");
}

#[test]
fn a_clock_set_back_never_writes_a_time_earlier_than_the_record() {
    let dir = game(&["--deadline", "1h"]);
    let d = dir.path();
    play_first(d, "2026-03-01T12:30:00Z", "alice");
    // The clock stepped back before bob's move: his line takes alice's time.
    play_first(d, "2026-03-01T11:00:00Z", "bob");
    let all = lines(d);
    let last_action = all.iter().rev().find(|l| l["type"] == "action").unwrap();
    assert_eq!(last_action["time"], "2026-03-01T12:30:00Z");
    assert_verifies(&d.join(RECORD));
}

#[test]
fn a_signed_game_stays_signed_and_outdir_gets_the_messages() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    ok(d, START, &["keygen", "--out", "judge"]);
    let new = [
        "pbm",
        "new",
        "--game",
        "pegchow",
        "--seat",
        "alice",
        "--seat",
        "bob",
        "--key",
        "judge.key",
        "--deadline",
        "1h",
        "--reminder",
        "10m",
        RECORD,
    ];
    ok(d, START, &new);
    assert_eq!(
        ok(
            d,
            "2026-03-01T12:50:00Z",
            &["pbm", "tick", RECORD, "--outdir", "out"]
        ),
        ""
    );
    let reminder = std::fs::read_to_string(d.join("out/seat-1.txt")).unwrap();
    assert!(
        reminder.contains("note: reminder:") && reminder.contains("signature: "),
        "{reminder}"
    );
    assert!(
        !d.join("out/seat-2.txt").exists(),
        "only the seat to act is reminded"
    );
    ok(
        d,
        "2026-03-01T13:00:00Z",
        &["pbm", "tick", RECORD, "--outdir", "out"],
    );
    assert!(std::fs::read_to_string(d.join("out/seat-2.txt"))
        .unwrap()
        .contains("it forfeits"));
    ok(
        d,
        "2026-03-01T13:00:00Z",
        &["verify", RECORD, "--key", "judge.pub"],
    );
}

/// The messages in `out`, by the seat each is to.
fn messages_by_seat(out: &str) -> Vec<(String, String)> {
    let marker = "=== referee play-by-mail message to seat ";
    out.split(marker)
        .skip(1)
        .map(|m| (m.split(' ').next().unwrap().to_string(), m.to_string()))
        .collect()
}

#[test]
fn a_late_tick_that_extends_and_reminds_tells_only_the_seat_to_act_of_its_reminder() {
    let dir = game(&["--deadline", "1h", "--reminder", "30m", "--nmr", "extend"]);
    let d = dir.path();
    // No tick ran in alice's reminder window: this one extends her deadline to 14:00
    // and, being within 30 minutes of that, reminds her.
    let out = ok(d, "2026-03-01T13:40:00Z", &["pbm", "tick", RECORD]);
    assert_eq!(
        deadline_events(d),
        [(1, "extended".to_string()), (1, "reminder".to_string())]
    );
    let (extended, reminder) = (
        "note: seat 1 missed its deadline 2026-03-01T13:00:00Z: extended once",
        "note: reminder: seat 1 is to act by",
    );
    let messages = messages_by_seat(&out);
    assert_eq!(messages.len(), 2, "{out}");
    for (seat, message) in &messages {
        assert!(message.contains(extended), "seat {seat}: {message}");
        assert_eq!(message.contains(reminder), seat == "1", "seat {seat}: {message}");
    }
    assert_verifies(&d.join(RECORD));
}
