//! `referee match`, `verify` and `show` end to end, with the built-in agents as
//! real processes: full games of both games at every table size, determinism,
//! tamper detection, strength of the built-in strategies, and bad input.

mod cli_support;

use std::path::{Path, PathBuf};

use cli_support::*;
use tempfile::TempDir;

/// Plays one match with `args` (the game, options, agents…) into `<dir>/<name>`,
/// asserts that it succeeded, and returns the record path and stdout.
fn play(dir: &Path, name: &str, args: &[String]) -> (PathBuf, String) {
    let record = dir.join(name);
    let out = referee_in(dir)
        .arg("match")
        .args(args)
        .arg("--record")
        .arg(&record)
        .arg("-q")
        .output()
        .expect("run referee match");
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(
        out.status.code(),
        Some(0),
        "match {args:?} failed\nstdout: {stdout}\nstderr: {stderr}"
    );
    (record, stdout)
}

fn strings(words: &[&str]) -> Vec<String> {
    words.iter().map(|w| w.to_string()).collect()
}

/// A full match: exit 0, the summary names the result and the record, the record
/// ends with its result line, and `verify` accepts it.
fn full_match(game: &str, players: usize, extra: &[&str], seed: u64) {
    let dir = TempDir::new().unwrap();
    let mut args = strings(&["--game", game, "-o"]);
    args.push(format!("players={players}"));
    args.extend(strings(extra));
    args.extend(["--seed".to_string(), seed.to_string()]);
    let (record, stdout) = play(dir.path(), "r.jsonl", &args);
    assert!(stdout.contains("result:"), "{args:?}: no result in {stdout}");
    assert!(stdout.contains("record:"), "{args:?}: no record in {stdout}");
    let lines = record_lines(&record);
    assert_eq!(kind(&lines[0]), "header");
    assert_eq!(lines[0]["game"], game);
    assert_eq!(lines[0]["seed"], seed);
    let seats = lines[0]["seats"].as_array().unwrap().len();
    let places = places(&lines);
    assert_eq!(places.len(), seats, "{args:?}: one place per seat");
    assert!(places.contains(&1), "{args:?}: somebody is first: {places:?}");
    assert!(
        lines.iter().all(|l| kind(l) != "forfeit"),
        "{args:?}: built-in agents never forfeit"
    );
    let verified = assert_verifies(&record);
    assert!(verified.contains("finished"), "{verified}");
}

/// Random play rarely finishes a game: a limit keeps it short (and is a result too).
const RANDOM: [&str; 4] = ["--fill", "random", "-o", "max-plies=200"];

/// Pairs of colours on two seats.
const PAIRS: [&str; 2] = ["-o", "colors-per-player=2"];

#[test]
fn pegchow_two_player_matches_finish_and_verify() {
    full_match("pegchow", 2, &[], 1);
    full_match("pegchow", 2, &RANDOM, 2);
}

#[test]
fn pegchow_three_player_matches_finish_and_verify() {
    full_match("pegchow", 3, &[], 3);
    full_match("pegchow", 3, &RANDOM, 4);
}

#[test]
fn pegchow_four_player_matches_finish_and_verify() {
    full_match("pegchow", 4, &[], 5);
    full_match("pegchow", 4, &RANDOM, 6);
}

#[test]
fn pegchow_two_colour_matches_finish_and_verify() {
    full_match("pegchow", 2, &PAIRS, 7);
    full_match("pegchow", 2, &[&PAIRS[..], &RANDOM[..]].concat(), 8);
}

#[test]
fn telka_two_player_matches_finish_and_verify() {
    full_match("telka", 2, &[], 1);
    full_match("telka", 2, &RANDOM, 2);
}

#[test]
fn telka_three_player_matches_finish_and_verify() {
    full_match("telka", 3, &[], 3);
    full_match("telka", 3, &RANDOM, 4);
}

#[test]
fn telka_four_player_matches_finish_and_verify() {
    full_match("telka", 4, &[], 5);
    full_match("telka", 4, &RANDOM, 6);
}

#[test]
fn telka_two_colour_matches_finish_and_verify() {
    full_match("telka", 2, &PAIRS, 7);
    full_match("telka", 2, &[&PAIRS[..], &RANDOM[..]].concat(), 8);
}

#[test]
fn four_colours_on_two_seats_are_labelled_as_pairs() {
    let dir = TempDir::new().unwrap();
    let args = strings(&["--game", "telka", "-o", "colors-per-player=2", "--seed", "11"]);
    let (record, _) = play(dir.path(), "r.jsonl", &args);
    let lines = record_lines(&record);
    let labels: Vec<&str> = lines[0]["seats"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["label"].as_str().unwrap())
        .collect();
    assert_eq!(labels, ["Blue+Green", "Yellow+Red"]);
    // Colours move in the 4-player order, each by its owner: seats 1 2 2 1 1 2 2 1 …
    let seats: Vec<u64> = lines
        .iter()
        .filter(|l| kind(l) == "action")
        .take(8)
        .map(|l| l["seat"].as_u64().unwrap())
        .collect();
    assert_eq!(seats, [1, 2, 2, 1, 1, 2, 2, 1]);
}

#[test]
fn the_same_seed_plays_the_same_game() {
    for (game, extra) in [
        (
            "telka",
            ["-o", "players=3", "--fill", "random", "-o", "max-plies=200"],
        ),
        (
            "pegchow",
            ["-o", "players=4", "--fill", "greedy", "-o", "max-plies=60"],
        ),
    ] {
        let dir = TempDir::new().unwrap();
        let mut args = strings(&["--game", game]);
        args.extend(strings(&extra));
        let with_seed = |seed: &str| {
            let mut a = args.clone();
            a.extend(["--seed".to_string(), seed.to_string()]);
            a
        };
        let (first, _) = play(dir.path(), "a.jsonl", &with_seed("20240601"));
        let (second, _) = play(dir.path(), "b.jsonl", &with_seed("20240601"));
        let (other, _) = play(dir.path(), "c.jsonl", &with_seed("777"));
        let (first, second, other) = (record_lines(&first), record_lines(&second), record_lines(&other));
        assert!(!actions(&first).is_empty());
        assert_eq!(
            actions(&first),
            actions(&second),
            "{game}: same seed, same actions"
        );
        assert_eq!(first.last().unwrap()["places"], second.last().unwrap()["places"]);
        assert_eq!(
            first[0]["seats"], second[0]["seats"],
            "{game}: same seats and agent seeds"
        );
        assert_ne!(
            actions(&first),
            actions(&other),
            "{game}: another seed, another game"
        );
    }
}

/// A finished 2-player Telka record of a few dozen plies.
fn finished_record(dir: &Path) -> PathBuf {
    let args = strings(&["--game", "telka", "--seed", "5"]);
    let (record, _) = play(dir, "orig.jsonl", &args);
    assert_verifies(&record);
    record
}

/// The record's lines with their newlines, as bytes.
fn raw_lines(path: &Path) -> Vec<Vec<u8>> {
    let bytes = std::fs::read(path).unwrap();
    assert_eq!(bytes.last(), Some(&b'\n'), "a record ends with a newline");
    bytes
        .split_inclusive(|&b| b == b'\n')
        .map(<[u8]>::to_vec)
        .collect()
}

/// A different letter or digit in place of `b`.
fn flipped(b: u8) -> u8 {
    match b {
        b'0'..=b'8' | b'a'..=b'y' | b'A'..=b'Y' => b + 1,
        b'9' => b'0',
        b'z' => b'a',
        b'Z' => b'A',
        other => panic!("not alphanumeric: {other}"),
    }
}

/// Writes `lines` to `<dir>/<name>` and asserts that verify exits `code` and names
/// `line` (1-based) in a one-line error.
fn assert_verify_fails(dir: &Path, name: &str, lines: &[Vec<u8>], line: usize, what: &str) {
    let path = dir.join(name);
    std::fs::write(&path, lines.concat()).unwrap();
    let (code, stdout, stderr) = verify(&path);
    assert_eq!(
        code, 1,
        "{what}: verify exit code\nstdout: {stdout}\nstderr: {stderr}"
    );
    assert!(
        stderr.contains(&format!("line {line}:")),
        "{what}: verify does not name line {line}: {stderr}"
    );
    assert_eq!(
        stderr.trim_end().lines().count(),
        1,
        "{what}: one error line: {stderr}"
    );
    assert!(stderr.starts_with("referee: "), "{what}: {stderr}");
    assert!(!stdout.contains(": ok"), "{what}: {stdout}");
}

#[test]
fn verify_names_the_line_where_one_byte_was_changed() {
    let dir = TempDir::new().unwrap();
    let record = finished_record(dir.path());
    let lines = raw_lines(&record);
    assert!(lines.len() > 10, "a game of some length");
    let middle = lines.len() / 2;
    for target in [0, 1, middle, lines.len() - 1] {
        let alnum: Vec<usize> = (0..lines[target].len())
            .filter(|&i| lines[target][i].is_ascii_alphanumeric())
            .collect();
        // A spread of positions, from the `type` member to the hash at the end.
        for k in 0..8 {
            let at = alnum[k * (alnum.len() - 1) / 7];
            let mut tampered = lines.clone();
            tampered[target][at] = flipped(tampered[target][at]);
            let what = format!("byte {at} of line {} changed", target + 1);
            assert_verify_fails(dir.path(), "tampered.jsonl", &tampered, target + 1, &what);
        }
    }
    // The original is still fine: the damage was only ever in the copies.
    assert_verifies(&record);
}

#[test]
fn verify_rejects_removed_appended_and_missing_lines() {
    let dir = TempDir::new().unwrap();
    let record = finished_record(dir.path());
    let lines = raw_lines(&record);
    let middle = lines.len() / 2;

    let mut removed = lines.clone();
    removed.remove(middle);
    // The line now in that place no longer chains from the one before it.
    assert_verify_fails(
        dir.path(),
        "removed.jsonl",
        &removed,
        middle + 1,
        "a middle line removed",
    );

    let mut swapped = lines.clone();
    swapped.swap(middle, middle + 1);
    assert_verify_fails(
        dir.path(),
        "swapped.jsonl",
        &swapped,
        middle + 1,
        "two lines swapped",
    );

    let mut appended = lines.clone();
    appended.push(b"{\"type\":\"action\",\"garbage\":true}\n".to_vec());
    assert_verify_fails(
        dir.path(),
        "appended.jsonl",
        &appended,
        lines.len() + 1,
        "a garbage line appended",
    );

    let mut junk = lines.clone();
    junk.push(b"not json at all\n".to_vec());
    assert_verify_fails(dir.path(), "junk.jsonl", &junk, lines.len() + 1, "junk appended");

    let mut replayed = lines.clone();
    replayed.push(lines[lines.len() - 1].clone());
    assert_verify_fails(
        dir.path(),
        "replayed.jsonl",
        &replayed,
        lines.len() + 1,
        "the result line repeated",
    );

    let no_header = lines[1..].to_vec();
    assert_verify_fails(dir.path(), "headless.jsonl", &no_header, 1, "the header removed");

    assert_verify_fails(dir.path(), "empty.jsonl", &[], 1, "an empty file");
}

#[test]
fn verify_of_a_missing_file_is_bad_input() {
    let dir = TempDir::new().unwrap();
    let (code, stdout, stderr) = verify(&dir.path().join("no-such-record.jsonl"));
    assert_eq!(code, 2, "stdout: {stdout}\nstderr: {stderr}");
    assert!(stderr.starts_with("referee: "), "{stderr}");
    assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
}

#[test]
fn a_record_cut_short_verifies_as_unfinished() {
    let dir = TempDir::new().unwrap();
    let record = finished_record(dir.path());
    let lines = raw_lines(&record);
    let cut = dir.path().join("cut.jsonl");
    std::fs::write(&cut, lines[..lines.len() / 2].concat()).unwrap();
    let stdout = assert_verifies(&cut);
    assert!(stdout.contains("UNFINISHED"), "{stdout}");
    let header_only = dir.path().join("header.jsonl");
    std::fs::write(&header_only, &lines[0]).unwrap();
    assert!(assert_verifies(&header_only).contains("UNFINISHED"));
}

/// Plays `seeds.len()` games greedy against random with greedy on `greedy_seat`;
/// returns (greedy wins, random wins).
fn greedy_against_random(game: &str, greedy_seat: usize, seeds: &[u64]) -> (usize, usize) {
    let dir = TempDir::new().unwrap();
    let (mut greedy, mut random) = (0, 0);
    for &seed in seeds {
        let mut args = strings(&["--game", game, "--seed"]);
        args.push(seed.to_string());
        args.push("--agent".into());
        if greedy_seat == 1 {
            args.push(builtin_command("greedy", seed));
            args.push("--agent".into());
        }
        args.push(builtin_command("random", seed + 1000));
        // The seat not given an --agent is filled by the default, greedy.
        let (record, _) = play(dir.path(), &format!("{game}-{seed}.jsonl"), &args);
        let lines = record_lines(&record);
        let names: Vec<&str> = lines[0]["seats"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["name"].as_str().unwrap())
            .collect();
        let mut expected = ["random", "random"];
        expected[greedy_seat - 1] = "greedy";
        assert_eq!(names, expected);
        let places = places(&lines);
        let reason = lines.last().unwrap()["reason"].as_str().unwrap().to_string();
        assert_eq!(reason, "win", "{game} seed {seed}: {places:?} by {reason}");
        if places[greedy_seat - 1] == 1 {
            greedy += 1;
        } else {
            random += 1;
        }
    }
    (greedy, random)
}

fn greedy_beats_random(game: &str) {
    let seeds = [1, 2, 3, 4];
    let (g1, r1) = greedy_against_random(game, 1, &seeds);
    let (g2, r2) = greedy_against_random(game, 2, &seeds);
    assert!(g1 >= 3, "{game}: greedy on seat 1 won {g1} of 4");
    assert!(g2 >= 3, "{game}: greedy on seat 2 won {g2} of 4");
    assert!(g1 + g2 > r1 + r2);
}

#[test]
fn greedy_beats_random_at_telka() {
    greedy_beats_random("telka");
}

#[test]
fn greedy_beats_random_at_pegchow() {
    // Within the default limit of 1000 plies: greedy fills the target home long before.
    greedy_beats_random("pegchow");
}

/// Runs `referee match` with `args` in a fresh directory and checks that it fails
/// as bad input: exit 2, one `referee:` line on stderr, and no record.
fn assert_bad_match(args: &[&str]) {
    let dir = TempDir::new().unwrap();
    let out = referee_in(dir.path())
        .arg("match")
        .args(args)
        .args(["--record", "r.jsonl", "-q"])
        .output()
        .unwrap();
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: stderr {stderr}");
    assert!(stderr.starts_with("referee: "), "{args:?}: {stderr}");
    assert_eq!(
        stderr.trim_end().lines().count(),
        1,
        "{args:?}: one line: {stderr}"
    );
    assert!(!dir.path().join("r.jsonl").exists(), "{args:?} created a record");
    assert!(
        !dir.path().join("records").exists(),
        "{args:?} created a records directory"
    );
}

#[test]
fn bad_games_options_and_time_controls_are_refused_before_play() {
    let cases: &[&[&str]] = &[
        &["--game", "chess"],
        &["--game", "telka", "-o", "players=9"],
        &["--game", "pegchow", "-o", "players=1"],
        &["--game", "telka", "-o", "nonsense=1"],
        &["--game", "telka", "-o", "players"],
        &["--game", "telka", "-o", "players=2", "-o", "players=3"],
        &["--game", "telka", "-o", "players=3", "-o", "colors-per-player=2"],
        &["--game", "telka", "-o", "max-plies=0"],
        &["--game", "telka", "--tc", "abc"],
        &["--game", "telka", "--tc", "0"],
        &["--game", "telka", "--tc", "40/"],
        &["--game", "telka", "--st", "abc"],
        &["--game", "telka", "--st", "0"],
        &["--game", "telka", "--st=-1"],
        &["--game", "telka", "--st", "-1"],
        &["--game", "telka", "--tc", "10+0.1", "--st", "1"],
        &["-o", "players=2"],
        &["--game", "telka", "--no-such-flag"],
        &["--game", "telka", "--state", "not a state"],
        &["--game", "telka", "--startup-timeout", "0"],
        &["--game", "telka", "--setoption", "3:Hash=1"],
    ];
    for args in cases {
        assert_bad_match(args);
    }
}

#[test]
fn too_many_agents_are_refused() {
    let a = builtin_command("random", 1);
    assert_bad_match(&["--game", "telka", "--agent", &a, "--agent", &a, "--agent", &a]);
    assert_bad_match(&[
        "--game",
        "pegchow",
        "-o",
        "players=3",
        "--agent",
        &a,
        "--agent",
        &a,
        "--agent",
        &a,
        "--agent",
        &a,
    ]);
}

#[test]
fn an_agent_that_cannot_start_is_refused() {
    assert_bad_match(&["--game", "telka", "--agent", "/nonexistent/dir/no-such-bot"]);
    // The second seat's command fails after the first agent started.
    let ok = builtin_command("random", 1);
    assert_bad_match(&[
        "--game",
        "telka",
        "--agent",
        &ok,
        "--agent",
        "no-such-bot-anywhere-1234",
    ]);
    assert_bad_match(&["--game", "telka", "--agent", "bot 'unbalanced"]);
    assert_bad_match(&["--game", "telka", "--agent", ""]);
}

#[test]
fn an_agent_that_cannot_start_is_named_once() {
    let dir = TempDir::new().unwrap();
    let out = referee_in(dir.path())
        .args([
            "match",
            "--game",
            "telka",
            "--agent",
            "/nonexistent/dir/no-such-bot",
        ])
        .args(["--record", "r.jsonl", "-q"])
        .output()
        .unwrap();
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr.matches("/nonexistent/dir/no-such-bot").count(),
        1,
        "{stderr}"
    );
    assert_eq!(stderr.matches("No such file or directory").count(), 1, "{stderr}");
}

#[test]
fn an_existing_record_is_never_overwritten() {
    let dir = TempDir::new().unwrap();
    let path = dir.path().join("r.jsonl");
    let before = b"precious bytes\nnot a record\n".to_vec();
    std::fs::write(&path, &before).unwrap();
    let out = referee_in(dir.path())
        .args([
            "match", "--game", "telka", "--seed", "1", "--record", "r.jsonl", "-q",
        ])
        .output()
        .unwrap();
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.starts_with("referee: "), "{stderr}");
    assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
    assert_eq!(std::fs::read(&path).unwrap(), before);

    // A real record is not overwritten either.
    let (record, _) = play(
        dir.path(),
        "done.jsonl",
        &strings(&["--game", "telka", "--seed", "2"]),
    );
    let before = std::fs::read(&record).unwrap();
    let out = referee_in(dir.path())
        .args(["match", "--game", "telka", "--seed", "3", "-q", "--record"])
        .arg(&record)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(std::fs::read(&record).unwrap(), before);
}

/// `referee show` with `args`; returns (exit code, stdout, stderr).
fn show(dir: &Path, args: &[&str]) -> (i32, String, String) {
    let out = referee_in(dir).arg("show").args(args).output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        text(&out.stdout),
        text(&out.stderr),
    )
}

/// The answer lines of a `referee serve` session (final `ok` lines dropped).
fn serve_lines(dir: &Path, script: &str) -> Vec<String> {
    let out = referee_in(dir).arg("serve").write_stdin(script).output().unwrap();
    assert!(out.status.success());
    let stdout = text(&out.stdout);
    assert!(!stdout.contains("\nerror "), "{stdout}");
    stdout
        .lines()
        .filter(|l| *l != "ok")
        .map(str::to_string)
        .collect()
}

const FILES: &str = "a b c d e f g h i j k";

#[test]
fn show_prints_the_game_at_any_ply_and_as_any_seat() {
    let dir = TempDir::new().unwrap();
    let record = finished_record(dir.path());
    let path = record.to_str().unwrap();
    let lines = record_lines(&record);
    let plies = actions(&lines).len();

    let (code, full, stderr) = show(dir.path(), &[path]);
    assert_eq!(code, 0, "{stderr}");
    assert!(full.lines().any(|l| l.trim() == FILES), "{full}");
    assert_eq!(
        full.lines().filter(|l| l.contains(". seat ")).count(),
        plies,
        "{full}"
    );

    // Ply 0: the start position, exactly as the controller draws a new game.
    let (code, start, stderr) = show(dir.path(), &[path, "--ply", "0"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(!start.contains(". seat "), "no action at ply 0: {start}");
    let new_game = serve_lines(dir.path(), "new telka\nshow\n");
    let diagram = new_game[1..].join("\n");
    assert!(diagram.contains(FILES));
    assert!(
        start.contains(&diagram),
        "show --ply 0:\n{start}\nnew game:\n{diagram}"
    );

    // Seat 2 at ply 5: its own events and its view, which is the position after the
    // first five actions.
    let (code, seat2, stderr) = show(dir.path(), &[path, "--seat", "2", "--ply", "5"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(seat2.lines().any(|l| l.trim() == FILES), "{seat2}");
    let mut script = "new telka\n".to_string();
    for (i, a) in actions(&lines).iter().take(5).enumerate() {
        script.push_str(&format!("play {} {a}\n", i % 2 + 1));
    }
    script.push_str("view 2\n");
    let view = serve_lines(dir.path(), &script).pop().unwrap();
    assert!(
        seat2.lines().any(|l| l == format!("view {view}")),
        "show --seat 2 --ply 5 does not give the view {view}:\n{seat2}"
    );

    let (code, _, stderr) = show(dir.path(), &[path, "--ply", "99999"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.starts_with("referee: "), "{stderr}");
    let (code, _, stderr) = show(dir.path(), &[path, "--seat", "3"]);
    assert_eq!(code, 2, "{stderr}");
    let (code, _, stderr) = show(dir.path(), &["no-such-record.jsonl"]);
    assert_eq!(code, 2, "{stderr}");
}

#[test]
fn show_refuses_a_tampered_record() {
    let dir = TempDir::new().unwrap();
    let record = finished_record(dir.path());
    let mut lines = raw_lines(&record);
    let at = lines[3].iter().position(|b| b.is_ascii_digit()).unwrap();
    lines[3][at] = flipped(lines[3][at]);
    let tampered = dir.path().join("tampered.jsonl");
    std::fs::write(&tampered, lines.concat()).unwrap();
    let (code, stdout, stderr) = show(dir.path(), &[tampered.to_str().unwrap()]);
    assert_eq!(code, 1, "{stdout}{stderr}");
    assert!(stderr.contains("line 4:"), "{stderr}");
}

#[test]
fn verify_checks_every_record_given_and_reports_the_worst() {
    let dir = TempDir::new().unwrap();
    let good = finished_record(dir.path());
    let mut lines = raw_lines(&good);
    let at = lines[2].iter().position(|b| b.is_ascii_digit()).unwrap();
    lines[2][at] = flipped(lines[2][at]);
    let bad = dir.path().join("bad.jsonl");
    std::fs::write(&bad, lines.concat()).unwrap();
    let missing = dir.path().join("missing.jsonl");

    let run = |paths: &[&Path]| {
        let out = referee_in(dir.path()).arg("verify").args(paths).output().unwrap();
        (out.status.code(), text(&out.stdout), text(&out.stderr))
    };
    let (code, stdout, _) = run(&[&good, &good]);
    assert_eq!(code, Some(0));
    assert_eq!(stdout.matches(": ok,").count(), 2, "{stdout}");
    let (code, stdout, stderr) = run(&[&bad, &good]);
    assert_eq!(code, Some(1), "{stderr}");
    assert_eq!(
        stdout.matches(": ok,").count(),
        1,
        "the good one is still checked: {stdout}"
    );
    assert!(stderr.contains("line 3:"), "{stderr}");
    let (code, stdout, _) = run(&[&good, &bad, &missing]);
    assert_eq!(code, Some(2), "a record that cannot be read at all is bad input");
    assert_eq!(stdout.matches(": ok,").count(), 1, "{stdout}");
}

#[test]
fn a_match_from_a_state_records_it_and_verifies() {
    let dir = TempDir::new().unwrap();
    let state = "7rrrr/7rrr1/9rr/8rrr/11/11/11/bb9/bbb8/bbbb7/1bbb7 b 2";
    let args = strings(&["--game", "telka", "--seed", "3", "--state", state]);
    let (record, _) = play(dir.path(), "r.jsonl", &args);
    let lines = record_lines(&record);
    assert_eq!(lines[0]["state"], state);
    assert_eq!(lines[1]["ply"], 3, "plies count on from the state's");
    assert!(assert_verifies(&record).contains("finished"));
    let (code, shown, stderr) = show(
        dir.path(),
        &[record.to_str().unwrap(), "--seat", "1", "--ply", "2"],
    );
    assert_eq!(code, 0, "{stderr}");
    assert!(shown.lines().any(|l| l == format!("view {state}")), "{shown}");
}

/// The `--agent` command of a replay agent playing back `record`.
fn replay_command(record: &Path) -> String {
    format!(
        "{} agent replay {}",
        quoted_exe(),
        shell_words::quote(&record.to_string_lossy())
    )
}

/// What a record says happened, without timings, hashes and agent commands: action
/// lines (submitted, taken, events), forfeits and the result.
fn played(lines: &[serde_json::Value]) -> Vec<serde_json::Value> {
    lines[1..]
        .iter()
        .map(|l| {
            let mut l = l.clone();
            let o = l.as_object_mut().expect("a record line is an object");
            for volatile in ["hash", "think_ms", "clock_ms", "detail", "time"] {
                o.remove(volatile);
            }
            l
        })
        .collect()
}

#[test]
fn replay_agents_play_a_recorded_game_again() {
    // Hidden placements (I-Doubt-It) and moves cut short by unseen pieces
    // (multichess) come back exactly as they were played.
    for (game, option, seats) in [
        ("telka", "players=2", 2),
        ("idoubtit", "variant=9", 2),
        ("multichess", "players=3", 3),
    ] {
        let dir = TempDir::new().unwrap();
        let base = strings(&["--game", game, "-o", option, "--seed", "11"]);
        let mut args = base.clone();
        args.extend(strings(&["--fill", "random"]));
        let (original, _) = play(dir.path(), "a.jsonl", &args);
        let mut args = base.clone();
        for _ in 0..seats {
            args.extend(["--agent".to_string(), replay_command(&original)]);
        }
        let (again, _) = play(dir.path(), "b.jsonl", &args);
        let (original, again) = (record_lines(&original), record_lines(&again));
        assert!(actions(&original).len() > 4, "{game}: a real game");
        assert_eq!(played(&original), played(&again), "{game}: the same game again");
        assert_verifies(&dir.path().join("b.jsonl"));
    }
}

#[test]
fn a_replayed_illegal_action_forfeits_again() {
    let dir = TempDir::new().unwrap();
    let base = strings(&["--game", "telka", "--seed", "3"]);
    let mut args = base.clone();
    args.extend(["--agent".to_string(), builtin_command("random", 1)]);
    args.extend(["--agent".to_string(), bot_command("illegal.sh", &["a1-a2"])]);
    let (original, _) = play(dir.path(), "a.jsonl", &args);
    let mut args = base.clone();
    for _ in 0..2 {
        args.extend(["--agent".to_string(), replay_command(&original)]);
    }
    let (again, _) = play(dir.path(), "b.jsonl", &args);
    let (original, again) = (record_lines(&original), record_lines(&again));
    let forfeit = |lines: &[serde_json::Value]| {
        lines
            .iter()
            .find(|l| kind(l) == "forfeit")
            .map(|l| (l["seat"].clone(), l["reason"].clone(), l["action"].clone()))
    };
    assert_eq!(
        forfeit(&original),
        Some((2.into(), "illegal".into(), "a1-a2".into()))
    );
    assert_eq!(forfeit(&again), forfeit(&original));
    assert_eq!(played(&original), played(&again));
}

#[test]
fn a_replay_agent_without_a_readable_record_is_bad_usage() {
    let dir = TempDir::new().unwrap();
    for record in ["missing.jsonl", "broken.jsonl"] {
        std::fs::write(dir.path().join("broken.jsonl"), "{\"type\":\"header\"}\n").unwrap();
        let out = referee_in(dir.path())
            .args(["agent", "replay", record])
            .output()
            .unwrap();
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{record}: {stderr}");
        assert!(stderr.starts_with("referee: cannot replay "), "{stderr}");
        assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
    }
}

#[test]
fn a_replay_agent_in_another_game_says_so_and_plays_nothing() {
    let dir = TempDir::new().unwrap();
    let (original, _) = play(
        dir.path(),
        "a.jsonl",
        &strings(&["--game", "telka", "--seed", "4", "--fill", "random"]),
    );
    let mut args = strings(&["--game", "telka", "-o", "max-plies=50", "--seed", "4"]);
    for _ in 0..2 {
        args.extend(["--agent".to_string(), replay_command(&original)]);
    }
    args.extend([
        "--log-dir".to_string(),
        dir.path().join("logs").to_string_lossy().into_owned(),
    ]);
    let (again, _) = play(dir.path(), "b.jsonl", &args);
    let lines = record_lines(&again);
    let forfeit = lines.iter().find(|l| kind(l) == "forfeit").expect("a forfeit");
    assert_eq!(forfeit["reason"], "illegal");
    assert_eq!(forfeit["action"], "none");
    let log = std::fs::read_to_string(dir.path().join("logs/seat1.stderr")).unwrap();
    assert!(
        log.contains("replay: the record is of telka") && log.contains("max-plies=50"),
        "{log}"
    );
}

#[test]
fn verify_counts_the_lines_it_checked() {
    // `verify` checks without keeping lines; its count must still be the record's.
    for game in ["telka", "idoubtit"] {
        let dir = TempDir::new().unwrap();
        let (record, _) = play(
            dir.path(),
            "r.jsonl",
            &strings(&["--game", game, "--seed", "6", "--fill", "random"]),
        );
        let lines = record_lines(&record);
        let stdout = assert_verifies(&record);
        let want = format!("with {} lines after the header", lines.len() - 1);
        assert!(stdout.contains(&want), "{game}: {stdout} (want {want})");
    }
}

// --- forfeits that cannot happen -----------------------------------------------------

/// A record of `setup` (a `new` command) played through `serve` into `<dir>/<name>`:
/// the first legal action at every ply, `resign <seat>` after `ply` plies for each
/// `(ply, seat)` of `resigns`, until `plies` plies were played or the game is over.
fn served_record(dir: &Path, name: &str, setup: &str, resigns: &[(usize, usize)], plies: usize) -> PathBuf {
    let mut serve = Serve::start();
    serve.ask(setup);
    for ply in 0..plies {
        for (_, seat) in resigns.iter().filter(|(at, _)| *at == ply) {
            serve.ask(&format!("resign {seat}"));
        }
        let turn = serve.ask("turn");
        let Some(seat) = turn[0]
            .strip_prefix("turn ")
            .and_then(|t| t.split(' ').next())
            .filter(|s| *s != "none")
            .map(str::to_string)
        else {
            break;
        };
        let legal = serve.ask("legal");
        let action = legal[0].split(' ').next().expect("a legal action").to_string();
        serve.ask(&format!("play {seat} {action}"));
    }
    let path = dir.join(name);
    serve.ask(&format!("record {}", path.display()));
    path
}

/// Seals `lines` again into `<dir>/<name>` and asserts that verify rejects the record
/// at line `line` (1-based) with a message containing `says`, and that `show`, as
/// every seat and omniscient, refuses it too (exit 1, no panic).
fn assert_resealed_fails(dir: &Path, name: &str, lines: &[serde_json::Value], line: usize, says: &str) {
    let what = format!("{name}: {says}");
    assert_verify_fails(dir, name, &sealed(lines), line, &what);
    let path = dir.join(name);
    let (_, _, stderr) = verify(&path);
    assert!(stderr.contains(says), "{what}: {stderr}");
    let seats = lines[0]["seats"].as_array().expect("seats").len();
    let path = path.to_str().unwrap();
    for seat in 0..=seats {
        let seat = seat.to_string();
        let args: Vec<&str> = match seat.as_str() {
            "0" => vec![path],
            s => vec![path, "--seat", s],
        };
        let (code, stdout, stderr) = show(dir, &args);
        assert_eq!(code, 1, "{what}: show {args:?}\n{stdout}{stderr}");
    }
}

#[test]
fn verify_rejects_a_forfeit_of_a_seat_already_out() {
    let dir = TempDir::new().unwrap();
    // Three independent sides: seat 2 resigns, the others play on.
    for setup in [
        "new pegchow players=3",
        "new telka players=3",
        "new multichess players=3",
    ] {
        let record = served_record(dir.path(), "out.jsonl", setup, &[(2, 2)], 9);
        assert_verifies(&record);
        let lines = record_lines(&record);
        let at = lines
            .iter()
            .position(|l| kind(l) == "forfeit")
            .expect("the resignation");
        assert_eq!(lines[at]["seat"], 2);
        assert!(lines.len() > at + 3, "{setup}: play went on: {lines:?}");
        // The same forfeit again at once, and again after the others played on; and a
        // forfeit of the seat that changes nothing (the line a no-op forfeit gives).
        let mut empty = lines[at].clone();
        empty["events"] = serde_json::json!([]);
        for (again, line) in [(at + 1, &lines[at]), (lines.len(), &lines[at]), (at + 2, &empty)] {
            let mut edited = lines.clone();
            edited.insert(again, line.clone());
            assert_resealed_fails(
                dir.path(),
                "twice.jsonl",
                &edited,
                again + 1,
                "seat 2 forfeits, but it is out of the game already",
            );
        }
    }
}

#[test]
fn verify_rejects_a_forfeit_once_the_game_is_over() {
    let dir = TempDir::new().unwrap();
    // Two sides: seat 2 resigns after one ply and the game is over.
    let record = served_record(dir.path(), "over.jsonl", "new telka", &[(1, 2)], 5);
    assert_verifies(&record);
    let lines = record_lines(&record);
    let kinds: Vec<&str> = lines.iter().map(kind).collect();
    assert_eq!(kinds, ["header", "action", "forfeit", "result"]);
    for seat in [1, 2] {
        let mut forfeit = lines[2].clone();
        forfeit["seat"] = seat.into();
        forfeit["events"] = serde_json::json!([]);
        let mut edited = lines.clone();
        edited.insert(3, forfeit);
        assert_resealed_fails(
            dir.path(),
            "after.jsonl",
            &edited,
            4,
            &format!("seat {seat} forfeits, but the game is over"),
        );
    }
}

#[test]
fn show_takes_any_seat_and_ply_of_games_where_seats_went_out() {
    let dir = TempDir::new().unwrap();
    // Seat 3 resigns at the start and the others play on; then seat 1 resigns, which
    // ends a 3-seat game (seat 2 is the last standing) and not a 4-seat one.
    for setup in [
        "new pegchow players=3",
        "new telka players=3",
        "new multichess players=4",
    ] {
        let record = served_record(dir.path(), "gone.jsonl", setup, &[(0, 3), (4, 1)], 8);
        assert_verifies(&record);
        let lines = record_lines(&record);
        assert_eq!(
            lines.iter().filter(|l| kind(l) == "forfeit").count(),
            2,
            "{setup}"
        );
        let plies = actions(&lines).len();
        let seats = lines[0]["seats"].as_array().unwrap().len();
        let path = record.to_str().unwrap();
        for ply in 0..=plies {
            let ply = ply.to_string();
            for seat in 0..=seats {
                let seat = seat.to_string();
                let mut args = vec![path, "--ply", ply.as_str()];
                if seat != "0" {
                    args.extend(["--seat", seat.as_str()]);
                }
                let (code, stdout, stderr) = show(dir.path(), &args);
                assert_eq!(code, 0, "{setup}: show {args:?}\n{stdout}{stderr}");
                assert!(stderr.is_empty(), "{setup}: show {args:?}: {stderr}");
                // The picture of a seat that went out, or of an area nobody owns.
                args.extend(["--format", "svg"]);
                let (code, stdout, stderr) = show(dir.path(), &args);
                assert_eq!(code, 0, "{setup}: show {args:?}\n{stderr}");
                assert!(
                    stdout.starts_with("<svg ") && stdout.ends_with("</svg>\n"),
                    "{setup}: {args:?}"
                );
                assert!(stdout.contains("out of the game: seat 3"), "{setup}: {args:?}");
            }
        }
    }
}

// --- times and openings --------------------------------------------------------------

/// Line indexes (0-based) of the action lines of `lines` that `keep` selects.
fn action_indexes(lines: &[serde_json::Value], keep: impl Fn(&serde_json::Value) -> bool) -> Vec<usize> {
    (0..lines.len())
        .filter(|&i| kind(&lines[i]) == "action" && keep(&lines[i]))
        .collect()
}

/// Removes `member` from a record line, keeping the others in order.
fn drop_member(line: &mut serde_json::Value, member: &str) {
    line.as_object_mut().expect("an object").shift_remove(member);
}

#[test]
fn verify_checks_think_and_clock_times_against_the_time_control() {
    let dir = TempDir::new().unwrap();
    // Under the default 10+0.1 every agent's action is timed.
    let record = finished_record(dir.path());
    let lines = record_lines(&record);
    assert_eq!(lines[0]["time_control"], "10+0.1");
    let timed = action_indexes(&lines, |l| l["think_ms"].is_u64() && l["clock_ms"].is_u64());
    assert_eq!(
        timed.len(),
        actions(&lines).len(),
        "every action of this match is timed"
    );
    // Re-sealed unchanged, it verifies: what follows fails for the edit alone.
    std::fs::write(dir.path().join("same.jsonl"), sealed(&lines).concat()).unwrap();
    assert_verifies(&dir.path().join("same.jsonl"));
    // An action some way in whose think time is not the increment, so that leaving
    // it uncharged changes the clock.
    let k = *timed[4..]
        .iter()
        .find(|&&i| lines[i]["think_ms"] != 100)
        .expect("a think time other than 100 ms");
    let seat = lines[k]["seat"].clone();
    let clock = lines[k]["clock_ms"].as_u64().unwrap();
    let think = lines[k]["think_ms"].as_u64().unwrap();
    let edit = |change: &dyn Fn(&mut Vec<serde_json::Value>)| {
        let mut edited = lines.clone();
        change(&mut edited);
        edited
    };

    for (name, off) in [("clock-up.jsonl", 1i64), ("clock-down.jsonl", -250)] {
        let edited = edit(&|l| l[k]["clock_ms"] = (clock as i64 + off).into());
        assert_resealed_fails(
            dir.path(),
            name,
            &edited,
            k + 1,
            &format!("clock_ms {} recorded", clock as i64 + off),
        );
    }
    // A longer think leaves less on the clock than recorded.
    let edited = edit(&|l| l[k]["think_ms"] = (think + 7).into());
    assert_resealed_fails(
        dir.path(),
        "think.jsonl",
        &edited,
        k + 1,
        &format!("gives {}", clock - 7),
    );
    // Both changed to agree with each other: the seat's next action no longer agrees.
    let edited = edit(&|l| {
        l[k]["think_ms"] = (think + 7).into();
        l[k]["clock_ms"] = (clock - 7).into();
    });
    let next = *timed
        .iter()
        .find(|&&i| i > k && lines[i]["seat"] == seat)
        .unwrap();
    assert_resealed_fails(dir.path(), "both.jsonl", &edited, next + 1, "clock_ms");
    // One of the pair alone, a negative time, a fraction.
    let edited = edit(&|l| drop_member(&mut l[k], "think_ms"));
    assert_resealed_fails(
        dir.path(),
        "half.jsonl",
        &edited,
        k + 1,
        "clock_ms without think_ms",
    );
    let edited = edit(&|l| drop_member(&mut l[k], "clock_ms"));
    assert_resealed_fails(
        dir.path(),
        "half2.jsonl",
        &edited,
        k + 1,
        "think_ms without clock_ms",
    );
    let edited = edit(&|l| l[k]["think_ms"] = (-5).into());
    assert_resealed_fails(dir.path(), "negative.jsonl", &edited, k + 1, "not a record line");
    let edited = edit(&|l| l[k]["clock_ms"] = serde_json::json!(9870.5));
    assert_resealed_fails(dir.path(), "fraction.jsonl", &edited, k + 1, "not a record line");
    // Another control in the header: the first action's clock disagrees.
    let edited = edit(&|l| l[0]["time_control"] = "5+0.1".into());
    assert_resealed_fails(dir.path(), "control.jsonl", &edited, timed[0] + 1, "clock_ms");
    let edited = edit(&|l| l[0]["time_control"] = "fast".into());
    assert_resealed_fails(
        dir.path(),
        "garbage.jsonl",
        &edited,
        1,
        "time_control: bad time control `fast`",
    );
    // No control at all (as a controller writes): no action may be timed.
    let edited = edit(&|l| drop_member(&mut l[0], "time_control"));
    assert_resealed_fails(
        dir.path(),
        "untimed.jsonl",
        &edited,
        timed[0] + 1,
        "in a record without a time control",
    );
    // An action without times (a controller went on with the record) is no error, and
    // leaves the seat's clock as it was: the next one of that seat no longer agrees.
    let edited = edit(&|l| {
        drop_member(&mut l[k], "think_ms");
        drop_member(&mut l[k], "clock_ms");
    });
    assert_resealed_fails(dir.path(), "skipped.jsonl", &edited, next + 1, "clock_ms");
    // The last action untimed: nothing after it disagrees.
    let edited = edit(&|l| {
        let last = *timed.last().unwrap();
        drop_member(&mut l[last], "think_ms");
        drop_member(&mut l[last], "clock_ms");
    });
    std::fs::write(dir.path().join("last-untimed.jsonl"), sealed(&edited).concat()).unwrap();
    assert_verifies(&dir.path().join("last-untimed.jsonl"));
}

#[test]
fn verify_checks_per_move_times_and_forced_actions() {
    let dir = TempDir::new().unwrap();
    // Seat 1's only piece, a pawn, is blocked: its first action is a forced pass.
    let state = "......../......../......../........ ......../P2......./P1......./........ \
                 ......../......../......../....K2... 1 0 1,2 -,- -";
    let args = strings(&[
        "--game",
        "multichess",
        "-o",
        "max-plies=6",
        "--state",
        state,
        "--st",
        "2",
        "--seed",
        "1",
    ]);
    let (record, _) = play(dir.path(), "forced.jsonl", &args);
    assert_verifies(&record);
    let lines = record_lines(&record);
    assert_eq!(lines[0]["time_control"], "st=2");
    let forced = action_indexes(&lines, |l| l["forced"] == true);
    assert_eq!(forced, [1], "{lines:?}");
    assert!(lines[1].get("think_ms").is_none(), "{}", lines[1]);
    let timed = action_indexes(&lines, |l| l["think_ms"].is_u64());
    assert!(timed.len() >= 3, "{lines:?}");
    // With a fixed time per move, the clock always shows that time.
    assert!(timed.iter().all(|&i| lines[i]["clock_ms"] == 2000), "{lines:?}");
    let mut edited = lines.clone();
    edited[timed[1]]["clock_ms"] = 1990.into();
    assert_resealed_fails(
        dir.path(),
        "st.jsonl",
        &edited,
        timed[1] + 1,
        "clock_ms 1990 recorded",
    );
    // The referee's forced pass is never timed, marked forced or not.
    let mut edited = lines.clone();
    edited[1]["think_ms"] = 3.into();
    edited[1]["clock_ms"] = 2000.into();
    assert_resealed_fails(dir.path(), "timed-forced.jsonl", &edited, 2, "on a forced action");
    drop_member(&mut edited[1], "forced");
    assert_resealed_fails(
        dir.path(),
        "timed-pass.jsonl",
        &edited,
        2,
        "is the forced action, yet timed",
    );
}

#[test]
fn verify_checks_that_openings_come_first_and_untimed() {
    let dir = TempDir::new().unwrap();
    let out = referee_in(dir.path())
        .args([
            "tournament",
            "--game",
            "telka",
            "--agent",
            "builtin:greedy",
            "--agent",
            "builtin:random",
        ])
        .args(["--games", "2", "--random-plies", "3", "--seed", "8", "--out", "t"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let games: Vec<PathBuf> = std::fs::read_dir(dir.path().join("t/games"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    assert_eq!(games.len(), 2, "{games:?}");
    let record = &games[0];
    assert_verifies(record);
    let lines = record_lines(record);
    let openings = action_indexes(&lines, |l| l["opening"] == true);
    assert_eq!(openings, [1, 2, 3], "{lines:?}");
    assert!(openings.iter().all(|&i| lines[i].get("think_ms").is_none()));
    let after = openings[2] + 1;
    assert!(lines[after]["think_ms"].is_u64(), "{}", lines[after]);

    // An opening action after the opening ended.
    let mut edited = lines.clone();
    edited[after + 2]["opening"] = true.into();
    assert_resealed_fails(
        dir.path(),
        "late.jsonl",
        &edited,
        after + 3,
        "an opening action after other actions",
    );
    let mut edited = lines.clone();
    edited[2]["opening"] = false.into();
    assert_resealed_fails(
        dir.path(),
        "gap.jsonl",
        &edited,
        4,
        "an opening action after other actions",
    );
    // A timed opening action.
    let mut edited = lines.clone();
    edited[2]["think_ms"] = 0.into();
    edited[2]["clock_ms"] = 10100.into();
    assert_resealed_fails(dir.path(), "timed.jsonl", &edited, 3, "on an opening action");
    // An opening in a record without a time control, which only a controller or play
    // by mail writes: neither plays openings.
    let record = served_record(dir.path(), "served.jsonl", "new telka", &[], 4);
    let mut lines = record_lines(&record);
    lines[1]["opening"] = true.into();
    assert_resealed_fails(
        dir.path(),
        "served-opening.jsonl",
        &lines,
        2,
        "without a time control",
    );
}

#[test]
fn a_resumed_match_keeps_its_time_control_and_its_clocks() {
    let dir = TempDir::new().unwrap();
    let record = finished_record(dir.path());
    let lines = raw_lines(&record);
    let cut = lines[..lines.len() / 2].concat();
    let resume = |name: &str, extra: &[&str]| {
        let path = dir.path().join(name);
        std::fs::write(&path, &cut).unwrap();
        let out = referee_in(dir.path())
            .args(["match", "-q", "--trust-record-commands", "--resume"])
            .arg(&path)
            .args(extra)
            .output()
            .unwrap();
        (path, out.status.code(), text(&out.stderr))
    };
    // Another control would make the clocks disagree with the header's.
    for other in [&["--tc", "5+0.1"][..], &["--st", "1"]] {
        let (path, code, stderr) = resume("other.jsonl", other);
        assert_eq!(code, Some(2), "{other:?}: {stderr}");
        assert!(stderr.contains("keeps its time control"), "{stderr}");
        assert_eq!(
            std::fs::read(&path).unwrap(),
            cut,
            "{other:?}: the record changed"
        );
    }
    // The same control, given or not: the clocks go on from the record's think times,
    // and verify checks every one of them.
    for same in [&[][..], &["--tc", "10+0.1"]] {
        let (path, code, stderr) = resume("same.jsonl", same);
        assert_eq!(code, Some(0), "{same:?}: {stderr}");
        assert!(assert_verifies(&path).contains("finished"));
        let resumed = record_lines(&path);
        let untimed = action_indexes(&resumed, |l| l["forced"] != true && !l["think_ms"].is_u64());
        assert!(
            untimed.is_empty(),
            "{same:?}: agents' actions without times: {untimed:?}"
        );
    }
    // A controller's record has no time control: the resumed match times nothing.
    let served = served_record(dir.path(), "served.jsonl", "new telka", &[], 4);
    let out = referee_in(dir.path())
        .args(["match", "-q", "--resume"])
        .arg(&served)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(assert_verifies(&served).contains("finished"));
    let resumed = record_lines(&served);
    assert!(actions(&resumed).len() > 4);
    assert!(resumed
        .iter()
        .all(|l| l.get("think_ms").is_none() && l.get("clock_ms").is_none()));
}

#[test]
fn built_in_agents_play_whatever_files_the_working_directory_holds() {
    // A bot author's project often has an `agent/` folder; arguments naming files
    // there are made absolute for agents that start elsewhere, but the built-in
    // agents' own words (`referee agent random`) must stay what they are.
    let dir = TempDir::new().unwrap();
    std::fs::create_dir(dir.path().join("agent")).unwrap();
    for name in ["random", "greedy", "replay"] {
        std::fs::write(dir.path().join(name), "not a subcommand").unwrap();
    }
    // The referee's own program by a relative path, a link to it, plays as well.
    std::os::unix::fs::symlink(exe(), dir.path().join("ref")).unwrap();
    let given = ["--agent", "./ref agent greedy --seed 5"];
    for (name, extra) in [("filled.jsonl", &[][..]), ("given.jsonl", &given[..])] {
        let mut args = strings(&["--game", "telka", "--fill", "random", "--seed", "3"]);
        args.extend(strings(&["--sandbox", "none"]));
        args.extend(strings(extra));
        let (record, stdout) = play(dir.path(), name, &args);
        let lines = record_lines(&record);
        assert!(lines.iter().all(|l| kind(l) != "forfeit"), "{name}: {stdout}");
        assert!(actions(&lines).len() > 10, "{name}: {stdout}");
        assert_verifies(&record);
    }
}

/// protocol.md §1.3: after `protocolok` a fresh agent is sent its options, `newgame`
/// and one `isready`, and answers one `readyok` before its first view.
#[test]
fn a_fresh_agent_hears_its_options_newgame_and_one_isready_after_protocolok() {
    let dir = TempDir::new().unwrap();
    let args = strings(&[
        "--game",
        "telka",
        "--fill",
        "random",
        "-o",
        "max-plies=4",
        "--setoption",
        "1:Hash=1",
        "--log-dir",
        "logs",
    ]);
    play(dir.path(), "r.jsonl", &args);
    let transcript = std::fs::read_to_string(dir.path().join("logs/seat1.transcript")).unwrap();
    let start: Vec<&str> = transcript
        .lines()
        .take_while(|l| !l.starts_with("> view"))
        .collect();
    assert_eq!(
        start,
        [
            "> protocol 1",
            "< id name random",
            "< id author the referee authors",
            "< protocolok",
            "> setoption name Hash value 1",
            "> newgame game telka seat 1 seats 2 options colors-per-player=1 max-plies=4 players=2",
            "> isready",
            "< readyok",
        ]
    );
}

/// What an operating-system crash can leave of a game in progress under `--fsync
/// game` (README, Durability): an empty record, or part of its header. `--resume`
/// refuses both with one line and exit 2, and leaves the file as it was.
#[test]
fn resume_refuses_a_record_left_empty_or_cut_inside_its_header() {
    let dir = TempDir::new().unwrap();
    let (record, _) = play(
        dir.path(),
        "whole.jsonl",
        &strings(&["--game", "telka", "--fill", "random", "-o", "max-plies=4"]),
    );
    let header = std::fs::read(&record).unwrap();
    for (name, bytes) in [("empty.jsonl", &header[..0]), ("cut.jsonl", &header[..100])] {
        let path = dir.path().join(name);
        std::fs::write(&path, bytes).unwrap();
        let out = referee_in(dir.path())
            .args(["match", "--resume", name])
            .output()
            .expect("run referee match --resume");
        assert_eq!(out.status.code(), Some(2), "{name}");
        let stderr = text(&out.stderr);
        assert_eq!(stderr.lines().count(), 1, "{name}: {stderr}");
        assert!(stderr.contains("empty record"), "{name}: {stderr}");
        assert_eq!(std::fs::read(&path).unwrap(), bytes, "{name} was changed");
    }
}
