//! Play by mail as a game master meets it, through the real binary (issue 17): the
//! salt file goes once the game is over, `verify` advises the pbm commands for a mail
//! game in progress, every rejection says what to do next, and a Parker move that
//! goes on after a step is refused for what is really wrong with it.

mod cli_support;

use std::path::Path;
use std::process::Output;

use cli_support::{referee_in, text};

const RECORD: &str = "game.jsonl";
const SALT: &str = "game.jsonl.salt";

fn run(dir: &Path, args: &[&str]) -> Output {
    referee_in(dir)
        .env_remove("REFEREE_PBM_FAULT")
        .args(args)
        .output()
        .expect("the binary runs")
}

/// A new two-seat game of `game` in a fresh directory.
fn new_game(game: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let out = run(
        dir.path(),
        &[
            "pbm", "new", "--game", game, "--seat", "alice", "--seat", "bob", RECORD,
        ],
    );
    assert!(out.status.success(), "pbm new: {}", text(&out.stderr));
    dir
}

/// A rejection: exit 2, nothing on stdout, one line on stderr, the record unchanged;
/// returns the line.
fn rejected(dir: &Path, args: &[&str]) -> String {
    let before = std::fs::read(dir.join(RECORD)).expect("the record");
    let out = run(dir, args);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert!(out.stdout.is_empty(), "{args:?}: nothing is mailed");
    assert_eq!(err.lines().count(), 1, "{args:?}: one line: {err}");
    assert_eq!(
        std::fs::read(dir.join(RECORD)).expect("the record"),
        before,
        "{args:?}"
    );
    err
}

#[test]
fn the_salt_file_goes_when_the_game_ends_and_audit_still_works() {
    let dir = new_game("pegchow");
    let d = dir.path();
    assert!(d.join(SALT).is_file(), "the salt is kept while the game goes on");
    assert!(run(d, &["pbm", "play", RECORD, "--seat", "1", "c2-d3"])
        .status
        .success());
    assert!(d.join(SALT).is_file());
    let out = run(d, &["pbm", "resign", RECORD, "--seat", "2"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        !d.join(SALT).exists(),
        "the salt is in the record now, its file is gone"
    );
    let record = std::fs::read_to_string(d.join(RECORD)).expect("the record");
    assert!(record.contains("\"type\":\"reveal\""), "{record}");
    // Everything still works from the revealed salt.
    let view = run(d, &["pbm", "view", RECORD, "--seat", "1"]);
    assert!(view.status.success(), "{}", text(&view.stderr));
    assert!(text(&view.stdout).contains("salt: "), "{}", text(&view.stdout));
    std::fs::write(d.join("t1.txt"), &view.stdout).expect("transcript");
    let audit = run(d, &["audit", RECORD, "--seat", "1", "--transcript", "t1.txt"]);
    // One message is not the whole transcript, but the salt must be found: the audit
    // reports missing messages, not a missing salt.
    assert!(!text(&audit.stderr).contains("salt"), "{}", text(&audit.stderr));
    // By name, the same audit as by number.
    let by_name = run(d, &["audit", RECORD, "--seat", "Alice", "--transcript", "t1.txt"]);
    assert_eq!(by_name.stderr, audit.stderr);
    assert_eq!(by_name.status.code(), audit.status.code());
    let verify = run(d, &["verify", RECORD]);
    assert!(verify.status.success(), "{}", text(&verify.stderr));
}

#[test]
fn verify_of_a_mail_game_in_progress_suggests_the_pbm_commands() {
    let dir = new_game("telka");
    let out = run(dir.path(), &["verify", RECORD]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let said = text(&out.stdout);
    assert!(said.contains("UNFINISHED"), "{said}");
    assert!(said.contains("referee pbm status"), "{said}");
    assert!(said.contains("referee pbm play"), "{said}");
    assert!(!said.contains("match --resume"), "{said}");
}

#[test]
fn every_rejection_says_what_to_do() {
    let dir = new_game("telka");
    let d = dir.path();
    // Not the seat's turn (the case the game master found).
    let err = rejected(d, &["pbm", "play", RECORD, "--seat", "2", "a1-c3"]);
    assert!(err.contains("not seat 2's turn"), "{err}");
    assert!(err.contains("wait for your turn"), "{err}");
    assert!(err.contains("pbm view game.jsonl --seat 2"), "{err}");
    // Nothing close to a legal action: pointed at the list.
    let err = rejected(d, &["pbm", "play", RECORD, "--seat", "1", "xyzzy"]);
    assert!(err.contains("lists your legal actions"), "{err}");
    let err = rejected(d, &["pbm", "play", RECORD, "--seat", "1", "k11-k10"]);
    assert!(err.contains("--seat 1` lists your legal actions"), "{err}");
    // A typo: the closest legal actions.
    let err = rejected(d, &["pbm", "play", RECORD, "--seat", "1", "a1-c4"]);
    assert!(err.contains("did you mean a1-c3"), "{err}");
    assert!(run(d, &["pbm", "resign", RECORD, "--seat", "1"]).status.success());
    let err = rejected(d, &["pbm", "play", RECORD, "--seat", "2", "k11-i9"]);
    assert!(
        err.contains("the game is over") && err.contains("shows the result"),
        "{err}"
    );
    let err = rejected(d, &["pbm", "resign", RECORD, "--seat", "2"]);
    assert!(
        err.contains("the game is over") && err.contains("shows the result"),
        "{err}"
    );
}

#[test]
fn a_step_followed_by_more_is_refused_as_such() {
    for game in ["telka", "pegchow"] {
        let dir = new_game(game);
        let err = rejected(dir.path(), &["pbm", "play", RECORD, "--seat", "1", "c2-d3-e4"]);
        assert!(
            err.contains("c2-d3 is a step, and a step is a whole move"),
            "{game}: {err}"
        );
        assert!(!err.contains("neither a step"), "{game}: {err}");
        // A step after a leap is the same fault.
        let err = rejected(dir.path(), &["pbm", "play", RECORD, "--seat", "1", "a1-c3-d4"]);
        assert!(err.contains("c3-d4 is a step"), "{game}: {err}");
    }
}

#[test]
fn seats_are_addressed_by_name_and_told_who_is_who() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let d = dir.path();
    let names = ["alice", "bob", "carol", "dave"];
    let mut args = vec!["pbm", "new", "--game", "telka", "-o", "players=4"];
    for n in names {
        args.extend(["--seat", n]);
    }
    args.push(RECORD);
    let out = run(d, &args);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let all = "players: seat 1 alice (Blue), seat 2 bob (Yellow), seat 3 carol (Red), seat 4 dave (Green)";
    let said = text(&out.stdout);
    assert_eq!(
        said.matches(all).count(),
        4,
        "every seat is told who is who:\n{said}"
    );
    // R-B3: seats 1 + 4 against 2 + 3.
    for partners in ["partners: seat 4 dave (Green)", "partners: seat 3 carol (Red)"] {
        assert_eq!(said.matches(partners).count(), 1, "{partners}:\n{said}");
    }
    // By name, in any letter case, the same as by number.
    let by_name = run(d, &["pbm", "view", RECORD, "--seat", "Dave"]);
    let by_number = run(d, &["pbm", "view", RECORD, "--seat", "4"]);
    assert!(by_name.status.success(), "{}", text(&by_name.stderr));
    assert_eq!(by_name.stdout, by_number.stdout);
    assert!(text(&by_name.stdout).contains("partners: seat 1 alice (Blue)"));
    let out = run(d, &["pbm", "play", RECORD, "--seat", "alice", "a1-c3"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let err = rejected(d, &["pbm", "play", RECORD, "--seat", "alice", "a2-c4"]);
    assert!(err.contains("not seat 1's turn"), "{err}");
    let err = rejected(d, &["pbm", "resign", RECORD, "--seat", "erin"]);
    assert!(err.contains("no seat is named `erin`"), "{err}");
    assert!(
        err.contains("seat 1 alice, seat 2 bob, seat 3 carol, seat 4 dave"),
        "{err}"
    );
    // Two players have no partners.
    let dir2 = new_game("pegchow");
    let view = run(dir2.path(), &["pbm", "view", RECORD, "--seat", "bob"]);
    let said = text(&view.stdout);
    assert!(
        said.contains("players: seat 1 alice (Blue), seat 2 bob (Red)"),
        "{said}"
    );
    assert!(!said.contains("partners:"), "{said}");
}

#[test]
fn names_that_would_not_address_one_seat_are_refused_at_new() {
    for (names, why) in [
        (["alice", "ALICE"], "two seats cannot have one name"),
        (["alice", "2"], "cannot be a number"),
        (["alice", " "], "cannot be empty"),
        (["alice", "bo\nb"], "control characters"),
    ] {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let out = run(
            dir.path(),
            &[
                "pbm", "new", "--game", "pegchow", "--seat", names[0], "--seat", names[1], RECORD,
            ],
        );
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{names:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{names:?}: {err}");
        assert!(err.contains(why), "{names:?}: {err}");
        assert!(!dir.path().join(RECORD).exists(), "{names:?}: no game is created");
    }
}
