//! `referee tournament --openings` through the real binary: every seating cycle
//! starts from its line of the suite (both colours play it), the records say so and
//! verify, random order is reproducible and agrees between one run, shards and a
//! resume, bad suites are refused before anything is played, games replayed move
//! for move are counted and warned about once, and an opening reaches each bot on
//! the wire as its own view, never as the whole state.

mod cli_support;

use std::path::{Path, PathBuf};

use serde_json::Value;

use cli_support::{assert_verifies, builtin_command, record_lines, referee_in, text, Serve};

/// What a finished run of the binary left.
struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

/// Runs `referee ARGS…` in `dir`.
fn referee(dir: &Path, args: &[String]) -> Run {
    let out = referee_in(dir).args(args).output().expect("run referee");
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: text(&out.stdout),
        stderr: text(&out.stderr),
    }
}

/// `tournament ARGS… --out OUT --json`, which must succeed; returns its run.
fn tournament(dir: &Path, out: &str, args: &[&str]) -> Run {
    let mut all: Vec<String> = ["tournament", "--out", out, "--json"].map(String::from).to_vec();
    all.extend(args.iter().map(|a| a.to_string()));
    let run = referee(dir, &all);
    assert_eq!(run.code, 0, "referee {all:?} failed: {}", run.stderr);
    run
}

/// The record of game `index` in `<dir>/<out>/games/`.
fn record(dir: &Path, out: &str, index: usize) -> PathBuf {
    dir.join(out).join("games").join(format!("game-{index:05}.jsonl"))
}

/// The records' headers' start states of games `0..games`, with the actions the
/// referee made as the random opening.
fn starts(dir: &Path, out: &str, games: usize) -> Vec<(Option<String>, Vec<String>)> {
    (0..games).map(|i| start_of(dir, out, i)).collect()
}

/// The start state and random opening of game `index`'s record.
fn start_of(dir: &Path, out: &str, index: usize) -> (Option<String>, Vec<String>) {
    let lines = record_lines(&record(dir, out, index));
    let state = lines[0]["state"].as_str().map(str::to_string);
    let opening = lines
        .iter()
        .filter(|l| l["type"] == "action" && l["opening"] == true)
        .map(|l| l["action"].as_str().unwrap_or("").to_string())
        .collect();
    (state, opening)
}

/// States of `game` reached by `serve` after playing, from the start, the first (or
/// last) legal action until the `turn` no longer starts with `until` or `max` plies
/// were made: one state per ply, the start included.
fn states(new: &str, until: &str, max: usize, last: bool) -> Vec<String> {
    let mut serve = Serve::start();
    serve.ask(new);
    let mut out = vec![serve.ask("state")[0].clone()];
    for _ in 0..max {
        let turn = serve.ask("turn")[0].clone();
        let Some(seat) = turn.strip_prefix(until).and_then(|t| t.split_whitespace().next()) else {
            break;
        };
        let legal = serve.ask("legal")[0].clone();
        let words: Vec<&str> = legal.split_whitespace().collect();
        let action = if last { words[words.len() - 1] } else { words[0] };
        serve.ask(&format!("play {seat} {action}"));
        out.push(serve.ask("state")[0].clone());
    }
    out
}

/// Writes a suite file: a comment, a blank line, then the states.
fn suite(dir: &Path, name: &str, states: &[String]) -> String {
    let body = format!("# {name}\n\n{}\n", states.join("\n"));
    std::fs::write(dir.join(name), body).expect("write the suite");
    name.to_string()
}

/// Two built-in entrants.
fn builtins() -> Vec<String> {
    ["--agent", "builtin:greedy", "--agent", "builtin:random"]
        .map(String::from)
        .to_vec()
}

#[test]
fn each_seating_cycle_starts_from_its_line_and_the_records_verify() {
    let dir = tempfile::tempdir().expect("temp dir");
    let lines = &states("new pegchow players=2", "turn ", 3, false)[1..];
    let file = suite(dir.path(), "suite.txt", lines);
    let mut args: Vec<&str> = vec!["--game", "pegchow", "--games", "2", "--rounds", "4"];
    args.extend(["--openings", &file, "--random-plies", "2"]);
    let b = builtins();
    args.extend(b.iter().map(String::as_str));
    tournament(dir.path(), "out", &args);
    let got = starts(dir.path(), "out", 8);
    for (cycle, pair) in got.chunks(2).enumerate() {
        let line = &lines[cycle % lines.len()];
        assert_eq!(
            pair[0].0.as_ref(),
            Some(line),
            "cycle {cycle} starts from line {}",
            cycle % 3
        );
        assert_eq!(
            pair[0], pair[1],
            "both colours of cycle {cycle} play the same opening"
        );
        assert_eq!(pair[0].1.len(), 2, "the random plies follow the suite's state");
    }
    assert_ne!(got[0].1, got[6].1, "a line used again gets other random plies");
    for i in 0..8 {
        assert_verifies(&record(dir.path(), "out", i));
    }
    let seats: Vec<Value> = (0..2)
        .map(|i| record_lines(&record(dir.path(), "out", i))[0]["seats"].clone())
        .collect();
    assert_ne!(seats[0][0]["name"], seats[1][0]["name"], "the pair swaps colours");
}

#[test]
fn every_game_starts_from_a_suite_of_its_own_states() {
    let dir = tempfile::tempdir().expect("temp dir");
    // I-Doubt-It: positions after placement, the natural opening of the game.
    let first = states("new idoubtit", "turn ", 32, false);
    let last = states("new idoubtit", "turn ", 32, true);
    let placed = [first[32].clone(), last[32].clone()];
    assert!(
        placed.iter().all(|s| s.contains(" play ")),
        "placement is over: {placed:?}"
    );
    let multi = states("new multichess players=3", "turn ", 3, false);
    let cases: [(&str, &[&str], Vec<String>, &str); 3] = [
        ("idoubtit", &[], placed.to_vec(), "2"),
        ("multichess", &["-o", "players=3"], multi[..2].to_vec(), "3"),
        (
            "telka",
            &["-o", "players=4"],
            states("new telka players=4", "turn ", 2, false),
            "4",
        ),
    ];
    for (game, options, lines, seats) in cases {
        let file = suite(dir.path(), &format!("{game}.txt"), &lines);
        let out = format!("out-{game}");
        let mut args = vec!["--game", game, "--openings", &file, "--seed", "3"];
        // The random agents' games would run to the default limit of 1,000 or
        // 2,000 plies; only their starts are checked.
        args.extend_from_slice(&["-o", "max-plies=100"]);
        args.extend_from_slice(options);
        let agents: Vec<String> = (0..seats.parse().unwrap())
            .flat_map(|i| ["--agent".to_string(), format!("name=b{i} cmd=builtin:random")])
            .collect();
        args.extend(agents.iter().map(String::as_str));
        let run = tournament(dir.path(), &out, &args);
        let games: usize = seats.parse().unwrap();
        let summary: Value = serde_json::from_str(&run.stdout).expect("JSON");
        assert_eq!(summary["finished"], games, "{game}: {}", run.stderr);
        for (i, (state, _)) in starts(dir.path(), &out, games).iter().enumerate() {
            assert_eq!(
                state.as_ref(),
                Some(&lines[0]),
                "{game} game {i}: one cycle, the first line"
            );
            assert_verifies(&record(dir.path(), &out, i));
        }
    }
}

#[test]
fn random_order_is_reproducible_and_shards_and_resume_agree_with_one_run() {
    let dir = tempfile::tempdir().expect("temp dir");
    let lines = &states("new pegchow players=2", "turn ", 5, false)[1..];
    let file = suite(dir.path(), "suite.txt", lines);
    let g = builtin_command("greedy", 7);
    let r = builtin_command("random", 8);
    let (ga, ra) = (
        format!("name=g cmd={}", shell_words::quote(&g)),
        format!("name=r cmd={}", shell_words::quote(&r)),
    );
    let base = [
        "--game",
        "pegchow",
        "-o",
        "max-plies=100",
        "--games",
        "2",
        "--rounds",
        "10",
        "--seed",
        "11",
    ];
    let mut args: Vec<&str> = base.to_vec();
    args.extend([
        "--openings",
        &file,
        "--openings-order",
        "random",
        "--agent",
        &ga,
        "--agent",
        &ra,
    ]);
    let one = tournament(dir.path(), "one", &args);
    tournament(dir.path(), "again", &args);
    let whole = starts(dir.path(), "one", 20);
    assert_eq!(
        whole,
        starts(dir.path(), "again", 20),
        "the same seed, the same openings"
    );
    let per_cycle: Vec<&String> = whole
        .iter()
        .step_by(2)
        .map(|(s, _)| s.as_ref().unwrap())
        .collect();
    for pass in per_cycle.chunks(5) {
        let mut pass: Vec<&String> = pass.to_vec();
        pass.sort();
        let mut all: Vec<&String> = lines.iter().collect();
        all.sort();
        assert_eq!(pass, all, "every line once in each pass");
    }
    assert_ne!(
        per_cycle[..5],
        lines.iter().collect::<Vec<_>>()[..],
        "random is not file order here"
    );
    for shard in ["1/3", "2/3", "3/3"] {
        let mut sharded = args.clone();
        sharded.extend(["--shard", shard]);
        tournament(dir.path(), &format!("shard{}", &shard[..1]), &sharded);
    }
    for (i, expected) in whole.iter().enumerate() {
        // Whichever shard played the game (how the schedule is cut is not this test's).
        let shards: Vec<String> = (1..=3)
            .map(|k| format!("shard{k}"))
            .filter(|s| record(dir.path(), s, i).exists())
            .collect();
        assert_eq!(shards.len(), 1, "game {i} is played by one shard: {shards:?}");
        assert_eq!(
            &start_of(dir.path(), &shards[0], i),
            expected,
            "game {i} in {}",
            shards[0]
        );
    }
    let merged = referee(
        dir.path(),
        &["merge", "--json", "shard1", "shard2", "shard3"].map(String::from),
    );
    assert_eq!(merged.code, 0, "{}", merged.stderr);
    let (a, b): (Value, Value) = (
        serde_json::from_str(&merged.stdout).unwrap(),
        serde_json::from_str(&one.stdout).unwrap(),
    );
    assert_eq!(a, b, "the shards merge into the single run");
    // A resume of a run cut short plays the rest from the same lines.
    std::fs::create_dir_all(dir.path().join("cut/games")).unwrap();
    std::fs::copy(
        dir.path().join("one/tournament.json"),
        dir.path().join("cut/tournament.json"),
    )
    .unwrap();
    for i in 0..7 {
        std::fs::copy(record(dir.path(), "one", i), record(dir.path(), "cut", i)).unwrap();
    }
    let mut resumed = args.clone();
    resumed.push("--resume");
    let rerun = tournament(dir.path(), "cut", &resumed);
    assert_eq!(starts(dir.path(), "cut", 20), whole);
    assert_eq!(serde_json::from_str::<Value>(&rerun.stdout).unwrap(), b);
}

/// Asserts a one-line usage error naming `needle`, and that `out` was not created.
fn assert_refused(dir: &Path, args: &[&str], needle: &str) {
    let mut all: Vec<String> = ["tournament", "--game", "pegchow", "--out", "never"]
        .map(String::from)
        .to_vec();
    all.extend(args.iter().map(|a| a.to_string()));
    all.extend(builtins());
    let run = referee(dir, &all);
    assert_eq!(run.code, 2, "{args:?}: {}", run.stderr);
    assert_eq!(
        run.stderr.lines().count(),
        1,
        "{args:?}: one line: {}",
        run.stderr
    );
    assert!(
        run.stderr.contains(needle),
        "{args:?}: `{needle}` in {}",
        run.stderr
    );
    assert!(!run.stderr.contains("panicked"), "{}", run.stderr);
    assert!(!dir.join("never").exists(), "{args:?}: nothing is created");
}

#[test]
fn a_bad_suite_is_refused_naming_its_line_before_anything_is_played() {
    let dir = tempfile::tempdir().expect("temp dir");
    let good = states("new pegchow players=2", "turn ", 1, false);
    std::fs::write(
        dir.path().join("bad.txt"),
        format!("# ok\n{}\n\n  # indented comment\nnot a state\n", good[1]),
    )
    .unwrap();
    assert_refused(
        dir.path(),
        &["--openings", "bad.txt"],
        "bad.txt:5: bad state string",
    );
    // A position in which Red has already filled its target home: the game is over.
    let over = "7bbbb/7bbbb/9bb/9bb/11/11/11/rr9/rr9/rrrr7/rrrr7 b 40";
    std::fs::write(dir.path().join("over.txt"), format!("{}\n{over}\n", good[1])).unwrap();
    assert_refused(
        dir.path(),
        &["--openings", "over.txt"],
        "over.txt:2: the game is already over",
    );
    std::fs::write(dir.path().join("empty.txt"), "# nothing\n\n").unwrap();
    assert_refused(dir.path(), &["--openings", "empty.txt"], "empty.txt: no openings");
    assert_refused(dir.path(), &["--openings", "missing.txt"], "missing.txt");
    assert_refused(dir.path(), &["--openings-order", "random"], "--openings");
    assert_refused(
        dir.path(),
        &["--openings", "bad.txt", "--openings-order", "shuffled"],
        "shuffled",
    );
    // A telka state is not a multichess state: each game's own parser decides.
    std::fs::write(dir.path().join("start.txt"), format!("{}\n", good[0])).unwrap();
    let run = referee(
        dir.path(),
        &[
            "tournament",
            "--game",
            "multichess",
            "--openings",
            "start.txt",
            "--out",
            "never",
        ]
        .map(String::from)
        .into_iter()
        .chain(builtins())
        .collect::<Vec<_>>(),
    );
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("start.txt:1:"), "{}", run.stderr);
}

#[test]
fn a_resume_with_an_edited_suite_is_another_tournament() {
    let dir = tempfile::tempdir().expect("temp dir");
    let lines = &states("new pegchow players=2", "turn ", 2, false)[1..];
    let file = suite(dir.path(), "suite.txt", lines);
    let mut args = vec!["--game", "pegchow", "--openings", &file];
    let b = builtins();
    args.extend(b.iter().map(String::as_str));
    tournament(dir.path(), "out", &args);
    let before = std::fs::read(record(dir.path(), "out", 0)).unwrap();
    suite(dir.path(), "suite.txt", &[lines[1].clone(), lines[0].clone()]);
    let mut all: Vec<String> = ["tournament", "--out", "out", "--resume"]
        .map(String::from)
        .to_vec();
    all.extend(args.iter().map(|a| a.to_string()));
    let run = referee(dir.path(), &all);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("--openings disagrees with the tournament stored in out"),
        "{}",
        run.stderr
    );
    assert_eq!(
        std::fs::read(record(dir.path(), "out", 0)).unwrap(),
        before,
        "nothing played is touched"
    );
    // A record of the same game played from the start position is not this game.
    let plain: Vec<&str> = args
        .iter()
        .copied()
        .filter(|a| *a != "--openings" && *a != file)
        .collect();
    tournament(dir.path(), "plain", &plain);
    std::fs::copy(record(dir.path(), "plain", 0), record(dir.path(), "out", 0)).unwrap();
    let merged = referee(dir.path(), &["merge".to_string(), "out".to_string()]);
    assert_eq!(merged.code, 2, "{}", merged.stderr);
    assert!(
        merged
            .stderr
            .contains("a game from the start position, not from the state `"),
        "{}",
        merged.stderr
    );
}

#[test]
fn games_replayed_move_for_move_are_counted_and_warned_about_once() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (g, r) = (builtin_command("greedy", 3), builtin_command("random", 4));
    let (ga, ra) = (
        format!("name=g cmd={}", shell_words::quote(&g)),
        format!("name=r cmd={}", shell_words::quote(&r)),
    );
    let args = [
        "--game", "pegchow", "--rounds", "3", "--agent", &ga, "--agent", &ra,
    ];
    let run = tournament(dir.path(), "same", &args);
    let summary: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(summary["finished"], 6);
    assert_eq!(summary["repeated"], 4, "rounds 2 and 3 replay round 1");
    let warnings: Vec<&str> = run.stderr.lines().filter(|l| l.starts_with("warning:")).collect();
    assert_eq!(warnings.len(), 1, "warned once: {}", run.stderr);
    assert!(warnings[0].contains("4 of 6 games repeat"), "{}", warnings[0]);
    assert!(
        warnings[0].contains("--openings"),
        "says what helps: {}",
        warnings[0]
    );
    let stored: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("same/summary.json")).unwrap())
            .unwrap();
    assert_eq!(stored["repeated"], 4);
    let table = referee(dir.path(), &["merge", "same"].map(String::from));
    assert!(table.stdout.contains("repeats: 4 of 6 games"), "{}", table.stdout);
    // The same bots from three different lines play three different pairs of games.
    let lines = &states("new pegchow players=2", "turn ", 3, false)[1..];
    let file = suite(dir.path(), "suite.txt", lines);
    let mut varied = args.to_vec();
    varied.extend(["--openings", &file]);
    let run = tournament(dir.path(), "varied", &varied);
    let summary: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(summary["repeated"], 0, "{}", run.stderr);
    assert!(!run.stderr.contains("warning:"), "{}", run.stderr);
}

#[test]
fn a_seat_is_sent_its_own_view_of_the_opening_and_never_the_whole_state() {
    // After placement every piece of the other side is hidden from a seat: an
    // opening given as the whole state must reach each bot as that seat's view only,
    // on the wire (the transcripts), in both colours of the cycle.
    let dir = tempfile::tempdir().expect("temp dir");
    let opening = states("new idoubtit", "turn ", 32, false)[32].clone();
    assert!(opening.contains(" play w "), "white to play: {opening}");
    let file = suite(dir.path(), "placed.txt", std::slice::from_ref(&opening));
    let mut serve = Serve::start();
    serve.ask(&format!("new idoubtit state={opening}"));
    let views: Vec<String> = (1..=2)
        .map(|s| serve.ask(&format!("view {s}"))[0].clone())
        .collect();
    assert!(
        views.iter().all(|v| v != &opening),
        "a view hides something: {views:?}"
    );
    let board = |s: &str| s.split_whitespace().next().unwrap_or_default().to_string();
    let agents = builtins();
    let mut args = vec!["--game", "idoubtit", "--openings", &file, "--log-dir", "logs"];
    args.extend(agents.iter().map(String::as_str));
    tournament(dir.path(), "out", &args);
    for game in 0..2 {
        for seat in 1..=2 {
            let path = dir
                .path()
                .join(format!("logs/game-{game:05}/seat{seat}.transcript"));
            let transcript = std::fs::read_to_string(&path).expect("a transcript per seat");
            let sent: Vec<&str> = transcript.lines().filter_map(|l| l.strip_prefix("> ")).collect();
            let first_view = sent
                .iter()
                .find(|l| l.starts_with("view "))
                .expect("a view is sent");
            // White moves first from the opening: its first view is of the opening
            // itself; black's comes after white's move.
            if seat == 1 {
                assert_eq!(first_view, &format!("view {}", views[0]), "game {game}");
            }
            assert!(
                !transcript.contains(&board(&opening)),
                "game {game} seat {seat} was sent the whole board of the opening"
            );
        }
    }
}
