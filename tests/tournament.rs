//! `referee tournament` and `referee merge` through the real binary: seat balance and
//! shared openings of the schedule, shards and merging, resuming after SIGKILL and
//! SIGTERM, entrants from flags and files, crashing entrants, the SPRT (also over
//! shards sharing a directory, one of them dying midway), and bad input.
//!
//! Every game uses the built-in agents (deterministic from the seed) or small sh bots
//! in `fixtures/bots/`, so two runs with the same arguments give the same JSON.

mod cli_support;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use referee::record::{Header, Line};
use referee::tournament::stats::{Pentanomial, Sprt};
use serde_json::{json, Value};

use cli_support::{error_lines, exe, have_python, record_lines, reseal, HANG_BOUND};

/// A file of the crate (fixtures, examples), by absolute path: agents run in a
/// private working directory.
fn manifest_path(relative: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(relative)
}

/// A command line running a built-in agent of the binary with a fixed seed: unlike
/// `builtin:…`, it names its entrant in every record header.
fn agent_cmd(strategy: &str, seed: u64) -> String {
    shell_words::join([exe(), "agent", strategy, "--seed", &seed.to_string()])
}

/// An `--agent` value `name=NAME cmd='…'` plus extra words.
fn spec(name: &str, cmd: &str, extra: &[&str]) -> String {
    let mut words = vec![format!("name={name}"), format!("cmd={cmd}")];
    words.extend(extra.iter().map(|w| w.to_string()));
    shell_words::join(words)
}

/// What a finished run of the binary left.
struct Outcome {
    code: i32,
    stdout: String,
    stderr: String,
}

/// Runs `referee ARGS…` in `dir`.
fn referee(dir: &Path, args: &[String]) -> Outcome {
    let out = assert_cmd::Command::new(exe())
        .current_dir(dir)
        .args(args)
        .timeout(HANG_BOUND)
        .output()
        .expect("run referee");
    Outcome {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// Owned argument words.
fn words(list: &[&str]) -> Vec<String> {
    list.iter().map(|w| w.to_string()).collect()
}

/// `tournament ARGS… --out OUT --json`, which must succeed; returns the JSON text.
fn tournament(dir: &Path, out: &str, args: &[String]) -> String {
    let mut all = words(&["tournament", "--out", out, "--json"]);
    all.extend_from_slice(args);
    let run = referee(dir, &all);
    assert_eq!(run.code, 0, "referee {all:?} failed: {}", run.stderr);
    run.stdout
}

fn parse(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
}

fn read_json(path: &Path) -> Value {
    parse(&std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display())))
}

/// The finished-or-not records in `<out>/games/`, by game index.
fn records(out: &Path) -> BTreeMap<usize, PathBuf> {
    let mut found = BTreeMap::new();
    let Ok(entries) = std::fs::read_dir(out.join("games")) else {
        return found;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if let Some(index) = name.strip_prefix("game-").and_then(|n| n.strip_suffix(".jsonl")) {
            found.insert(index.parse().expect("a game index"), entry.path());
        }
    }
    found
}

/// Whether a record ends with its result line.
/// Whether a record ends with its result line (cheap: it is polled while games run).
fn is_finished(path: &Path) -> bool {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let complete = &text[..text.rfind('\n').map_or(0, |i| i + 1)];
    complete
        .lines()
        .last()
        .is_some_and(|l| l.starts_with(r#"{"type":"result""#))
}

/// Whether a record has at least one complete line.
fn has_lines(path: &Path) -> bool {
    std::fs::read(path).is_ok_and(|b| b.contains(&b'\n'))
}

/// The agent command of each seat, from a record's header.
fn seat_commands(path: &Path) -> Vec<String> {
    let lines = record_lines(path);
    assert_eq!(lines[0]["type"], "header", "{}", path.display());
    lines[0]["seats"]
        .as_array()
        .expect("seats")
        .iter()
        .map(|s| s["command"].as_str().expect("command").to_string())
        .collect()
}

/// The action lines of a record.
fn action_lines(path: &Path) -> Vec<Value> {
    record_lines(path)
        .into_iter()
        .filter(|l| l["type"] == "action")
        .collect()
}

/// The standing of entrant `name` in a summary.
fn standing<'a>(summary: &'a Value, name: &str) -> &'a Value {
    summary["standings"]
        .as_array()
        .expect("standings")
        .iter()
        .find(|s| s["name"] == name)
        .unwrap_or_else(|| panic!("no standing for {name}: {summary}"))
}

/// Asserts exit code 2 with exactly one stderr line, starting with `referee:`.
fn assert_usage_error(run: &Outcome, what: &str, needle: &str) {
    assert_eq!(run.code, 2, "{what}: exit code; stderr: {}", run.stderr);
    let lines: Vec<&str> = run.stderr.lines().collect();
    assert_eq!(
        lines.len(),
        1,
        "{what}: one stderr line expected: {:?}",
        run.stderr
    );
    assert!(lines[0].starts_with("referee: "), "{what}: {}", lines[0]);
    assert!(
        lines[0].contains(needle),
        "{what}: `{needle}` not in {}",
        lines[0]
    );
}

// ---------------------------------------------------------------------------
// 1. Schedules

/// Runs a round robin of plain-command entrants and checks, from the record headers,
/// that every entrant sits in every seat equally often.
fn check_seat_balance(players: usize, entrants: &[(&str, u64)], games: usize) {
    let tmp = tempfile::tempdir().unwrap();
    let mut args = words(&[
        "--game",
        "telka",
        "-o",
        &format!("players={players}"),
        "-o",
        "max-plies=100",
    ]);
    args.extend(words(&[
        "--games",
        &games.to_string(),
        "--concurrency",
        "2",
        "--seed",
        "11",
    ]));
    let cmds: Vec<String> = entrants
        .iter()
        .map(|&(strategy, seed)| agent_cmd(strategy, seed))
        .collect();
    for (i, cmd) in cmds.iter().enumerate() {
        args.push("--agent".into());
        args.push(spec(&format!("e{i}"), cmd, &[]));
    }
    let summary = parse(&tournament(tmp.path(), "t", &args));
    let out = tmp.path().join("t");
    let recs = records(&out);
    // A round robin plays every table of `players` out of the entrants: C(n, players).
    let tables = (0..players).fold(1, |c, k| c * (entrants.len() - k) / (k + 1));
    assert_eq!(
        recs.len(),
        tables * games,
        "{players} seats: one record per scheduled game"
    );
    assert_eq!(summary["scheduled"], recs.len());
    assert_eq!(summary["finished"], recs.len());
    let mut counts = vec![vec![0usize; players]; entrants.len()];
    let mut seatings = BTreeMap::new();
    for (&index, path) in &recs {
        assert!(is_finished(path), "{} is unfinished", path.display());
        let who: Vec<usize> = seat_commands(path)
            .iter()
            .map(|c| {
                cmds.iter()
                    .position(|x| x == c)
                    .unwrap_or_else(|| panic!("unknown command {c}"))
            })
            .collect();
        assert_eq!(who.len(), players);
        assert_eq!(
            who.iter().collect::<BTreeSet<_>>().len(),
            players,
            "game {index}: an entrant twice: {who:?}"
        );
        for (seat, &e) in who.iter().enumerate() {
            counts[e][seat] += 1;
        }
        seatings.insert(index, who);
    }
    let per_seat = counts[0][0];
    assert!(per_seat > 0);
    for (e, row) in counts.iter().enumerate() {
        assert!(
            row.iter().all(|&c| c == per_seat),
            "{players} seats: entrant {e} sits {row:?} (all {per_seat} expected): {counts:?}"
        );
        let played = standing(&summary, &format!("e{e}"))["games"].as_u64().unwrap() as usize;
        assert_eq!(played, per_seat * players, "entrant {e}: games in the summary");
    }
    if players == 2 {
        // Colour-swapped pairs: games 2k and 2k+1 have the same two entrants, swapped.
        for k in (0..recs.len()).step_by(2) {
            let (a, b) = (&seatings[&k], &seatings[&(k + 1)]);
            assert_eq!(
                a,
                &vec![b[1], b[0]],
                "games {k} and {}: not colour-swapped",
                k + 1
            );
        }
    }
}

#[test]
fn two_seat_round_robin_is_seat_balanced_and_colour_swapped() {
    check_seat_balance(2, &[("greedy", 1), ("random", 2), ("greedy", 3)], 4);
}

#[test]
fn three_seat_round_robin_is_seat_balanced() {
    check_seat_balance(
        3,
        &[("greedy", 1), ("random", 2), ("greedy", 3), ("random", 4)],
        3,
    );
}

#[test]
fn four_seat_round_robin_is_seat_balanced() {
    check_seat_balance(
        4,
        &[
            ("greedy", 1),
            ("random", 2),
            ("greedy", 3),
            ("random", 4),
            ("greedy", 5),
        ],
        4,
    );
}

#[test]
fn colour_swapped_pairs_share_their_random_opening() {
    let tmp = tempfile::tempdir().unwrap();
    let args = words(&[
        "--game",
        "telka",
        "--agent",
        "builtin:greedy",
        "--agent",
        "builtin:random",
        "--agent",
        "builtin:greedy",
        "--games",
        "4",
        "--random-plies",
        "4",
        "--concurrency",
        "2",
    ]);
    tournament(tmp.path(), "t", &args);
    let recs = records(&tmp.path().join("t"));
    assert_eq!(recs.len(), 12);
    let mut openings = Vec::new();
    for (&index, path) in &recs {
        let actions = action_lines(path);
        assert!(actions.len() > 4, "game {index} is too short");
        for (ply, line) in actions.iter().enumerate() {
            let expected = ply < 4;
            assert_eq!(
                line["opening"].as_bool().unwrap_or(false),
                expected,
                "game {index} ply {}: {line}",
                ply + 1
            );
        }
        let opening: Vec<String> = actions[..4]
            .iter()
            .map(|l| l["action"].as_str().unwrap().to_string())
            .collect();
        if index % 2 == 1 {
            assert_eq!(
                opening,
                openings[openings.len() - 1],
                "games {} and {index} differ in their opening",
                index - 1
            );
        } else {
            openings.push(opening);
        }
    }
    let distinct: BTreeSet<&Vec<String>> = openings.iter().collect();
    assert_eq!(
        distinct.len(),
        openings.len(),
        "pairs share an opening: {openings:?}"
    );
}

// ---------------------------------------------------------------------------
// 2. Shards and merge

/// Plays the tournament once whole and as shards 1/N … N/N for N = 1..4; the shards
/// must split the schedule and merge into the whole run's JSON.
fn check_shards(args: &[String]) {
    let tmp = tempfile::tempdir().unwrap();
    let whole = tournament(tmp.path(), "whole", args);
    let all: BTreeSet<usize> = records(&tmp.path().join("whole")).into_keys().collect();
    let scheduled = parse(&whole)["scheduled"].as_u64().unwrap() as usize;
    assert_eq!(all, (0..scheduled).collect::<BTreeSet<_>>());
    for n in 1..=4 {
        let mut seen: BTreeMap<usize, usize> = BTreeMap::new();
        let mut dirs = Vec::new();
        for i in 1..=n {
            let dir = format!("shard-{i}-of-{n}");
            let mut shard_args = args.to_vec();
            shard_args.extend(words(&["--shard", &format!("{i}/{n}")]));
            let summary = parse(&tournament(tmp.path(), &dir, &shard_args));
            let mine = records(&tmp.path().join(&dir));
            assert_eq!(summary["finished"], mine.len(), "shard {i}/{n}");
            for index in mine.into_keys() {
                if let Some(other) = seen.insert(index, i) {
                    panic!("game {index} is in shards {other}/{n} and {i}/{n}");
                }
            }
            dirs.push(dir);
        }
        let covered: BTreeSet<usize> = seen.into_keys().collect();
        assert_eq!(covered, all, "shards of {n} do not cover the schedule");
        let mut merge = words(&["merge", "--json"]);
        merge.extend(dirs);
        let merged = referee(tmp.path(), &merge);
        assert_eq!(merged.code, 0, "merge of {n} shards: {}", merged.stderr);
        assert_eq!(
            merged.stdout, whole,
            "merge of {n} shards differs from the whole run"
        );
    }
    // Overlapping shards (game 0 is in both) are refused.
    let run = referee(tmp.path(), &words(&["merge", "shard-1-of-2", "shard-1-of-3"]));
    assert_usage_error(&run, "overlapping shards", "more than one directory");
    // So is a directory of another tournament.
    let mut other = args.to_vec();
    other.extend(words(&["--seed", "99", "--shard", "2/2"]));
    tournament(tmp.path(), "other", &other);
    let run = referee(tmp.path(), &words(&["merge", "--json", "shard-1-of-2", "other"]));
    assert_usage_error(&run, "different tournaments", "different tournament");
}

#[test]
fn shards_of_a_two_seat_tournament_split_and_merge_exactly() {
    check_shards(&words(&[
        "--game",
        "telka",
        "-o",
        "max-plies=200",
        "--agent",
        "builtin:greedy",
        "--agent",
        "builtin:random",
        "--agent",
        "builtin:random",
        "--games",
        "2",
        "--concurrency",
        "2",
    ]));
}

#[test]
fn shards_of_a_multi_seat_tournament_split_and_merge_exactly() {
    check_shards(&words(&[
        "--game",
        "multichess",
        "-o",
        "players=3",
        "-o",
        "max-plies=200",
        "--agent",
        "builtin:greedy",
        "--agent",
        "builtin:random",
        "--agent",
        "builtin:random",
        "--agent",
        "builtin:greedy",
        "--concurrency",
        "2",
    ]));
}

// ---------------------------------------------------------------------------
// 3. Resume

/// A tournament long enough to be stopped in the middle of a game: the two random
/// agents draw at the ply limit, 500 plies, in every one of their games.
fn resume_args() -> Vec<String> {
    words(&[
        "--game",
        "telka",
        "-o",
        "max-plies=500",
        "--agent",
        "builtin:random",
        "--agent",
        "builtin:random",
        "--agent",
        "builtin:greedy",
        "--games",
        "6",
        "--concurrency",
        "2",
        "--seed",
        "5",
    ])
}

/// The JSON of the uninterrupted run of [`resume_args`], computed once.
fn uninterrupted_json() -> &'static str {
    static JSON: OnceLock<String> = OnceLock::new();
    JSON.get_or_init(|| {
        let tmp = tempfile::tempdir().unwrap();
        tournament(tmp.path(), "t", &resume_args())
    })
}

/// Starts the resume tournament into `<dir>/t` and waits until `at_least` games have
/// finished and another one is being played.
fn start_and_wait(dir: &Path, at_least: usize) -> Child {
    let mut child = Command::new(exe())
        .current_dir(dir)
        // A killed referee cannot remove its agents' private directories: they go
        // into the test's own directory, removed with it.
        .env("TMPDIR", dir)
        .args(["tournament", "--out", "t", "--json"])
        .args(resume_args())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start referee");
    let out = dir.join("t");
    let until = Instant::now() + HANG_BOUND;
    loop {
        let recs = records(&out);
        let done = recs.values().filter(|p| is_finished(p)).count();
        // Stop it while a game is under way (its record has lines but no result).
        let playing = recs.values().any(|p| has_lines(p) && !is_finished(p));
        if done >= at_least && playing {
            return child;
        }
        if let Some(status) = child.try_wait().unwrap() {
            panic!("the tournament ended ({status}) before {at_least} games finished");
        }
        assert!(
            Instant::now() < until,
            "no {at_least} finished games in {HANG_BOUND:?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Waits for a child with a liveness bound; returns its exit code.
fn wait_bounded(child: &mut Child) -> Option<i32> {
    let until = Instant::now() + HANG_BOUND;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status.code();
        }
        if Instant::now() >= until {
            let _ = child.kill();
            panic!("the referee did not exit");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Resumes the stopped tournament in `<dir>/t` and checks that finished records are
/// untouched, unfinished ones were moved aside and replayed, and the result is that
/// of an uninterrupted run.
fn resume_and_compare(dir: &Path) {
    let out = dir.join("t");
    let before: BTreeMap<usize, (Vec<u8>, bool)> = records(&out)
        .into_iter()
        .map(|(i, p)| (i, (std::fs::read(&p).unwrap(), is_finished(&p))))
        .collect();
    let finished = before.values().filter(|(_, f)| *f).count();
    let scheduled = parse(uninterrupted_json())["scheduled"].as_u64().unwrap() as usize;
    assert!(
        finished >= 2 && finished < scheduled,
        "stopped after {finished} of {scheduled} games"
    );
    assert!(
        before.len() > finished,
        "no game was under way when the tournament stopped"
    );
    let mut args = words(&["--resume"]);
    args.extend(resume_args());
    let json = tournament(dir, "t", &args);
    assert_eq!(
        json,
        uninterrupted_json(),
        "the resumed tournament differs from an uninterrupted one"
    );
    let after = records(&out);
    assert_eq!(after.len(), scheduled);
    for (index, (bytes, was_finished)) in &before {
        let path = &after[index];
        let aside = path.with_extension("jsonl.interrupted");
        if *was_finished {
            assert_eq!(
                &std::fs::read(path).unwrap(),
                bytes,
                "finished game {index} was touched"
            );
            assert!(!aside.exists(), "finished game {index} was moved aside");
        } else {
            assert_eq!(
                &std::fs::read(&aside).unwrap(),
                bytes,
                "unfinished game {index} not kept aside as it was"
            );
        }
        assert!(is_finished(path), "game {index} is unfinished after the resume");
    }
}

#[test]
fn resume_after_sigkill_replays_only_unfinished_games() {
    let tmp = tempfile::tempdir().unwrap();
    let mut child = start_and_wait(tmp.path(), 2);
    child.kill().expect("SIGKILL");
    child.wait().unwrap();
    resume_and_compare(tmp.path());
}

#[test]
fn sigterm_exits_130_and_the_tournament_resumes() {
    let tmp = tempfile::tempdir().unwrap();
    let mut child = start_and_wait(tmp.path(), 2);
    let pid = nix::unistd::Pid::from_raw(child.id() as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).expect("SIGTERM");
    assert_eq!(wait_bounded(&mut child), Some(130));
    let mut stderr = String::new();
    std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut stderr).unwrap();
    let errors = error_lines(&stderr);
    assert_eq!(errors.len(), 1, "{stderr}");
    assert!(errors[0].contains("--resume"), "{}", errors[0]);
    resume_and_compare(tmp.path());
}

/// What an operating-system crash can leave of a game in progress under `--fsync
/// game`, which syncs a record once its game is decided: an empty file, or part of
/// its header. Such records are set aside and their games played again.
#[test]
fn records_left_empty_or_headless_by_a_crash_are_played_again() {
    let tmp = tempfile::tempdir().unwrap();
    assert_eq!(tournament(tmp.path(), "t", &resume_args()), uninterrupted_json());
    let out = tmp.path().join("t");
    let all = records(&out);
    let cut = |index: usize, len: usize| {
        let bytes = std::fs::read(&all[&index]).unwrap();
        assert!(
            bytes[..len].iter().all(|&b| b != b'\n'),
            "the cut keeps no whole line"
        );
        std::fs::write(&all[&index], &bytes[..len]).unwrap();
        bytes[..len].to_vec()
    };
    let left = [(0, cut(0, 0)), (3, cut(3, 100))];
    let mut args = words(&["--resume"]);
    args.extend(resume_args());
    assert_eq!(tournament(tmp.path(), "t", &args), uninterrupted_json());
    for (index, bytes) in left {
        let path = &records(&out)[&index];
        let aside = path.with_extension("jsonl.interrupted");
        assert_eq!(
            std::fs::read(&aside).unwrap(),
            bytes,
            "game {index} not kept aside as it was"
        );
        assert!(is_finished(path), "game {index} was not played again");
    }
}

#[test]
fn an_existing_out_needs_resume_with_the_same_arguments() {
    let tmp = tempfile::tempdir().unwrap();
    // Options given out of name order (stored sorted) must not stop a resume.
    let a = spec("A", "builtin:random", &["option.b=1", "option.a=2"]);
    let args = words(&[
        "--game",
        "telka",
        "--agent",
        &a,
        "--agent",
        "builtin:greedy",
        "--games",
        "2",
    ]);
    let first = tournament(tmp.path(), "t", &args);
    let bytes: Vec<Vec<u8>> = records(&tmp.path().join("t"))
        .values()
        .map(|p| std::fs::read(p).unwrap())
        .collect();

    let mut again = words(&["tournament", "--out", "t"]);
    again.extend_from_slice(&args);
    assert_usage_error(
        &referee(tmp.path(), &again),
        "second run without --resume",
        "--resume",
    );

    let mut other = again.clone();
    other.extend(words(&["--resume", "--seed", "2"]));
    assert_usage_error(
        &referee(tmp.path(), &other),
        "--resume with another seed",
        "--seed disagrees",
    );

    // The same arguments (the concurrency is not part of the tournament) resume a
    // finished tournament without playing anything.
    let mut same = args.clone();
    same.extend(words(&["--resume", "--concurrency", "3"]));
    assert_eq!(tournament(tmp.path(), "t", &same), first);
    let now: Vec<Vec<u8>> = records(&tmp.path().join("t"))
        .values()
        .map(|p| std::fs::read(p).unwrap())
        .collect();
    assert_eq!(
        now, bytes,
        "a resume of a finished tournament changed its records"
    );
}

// ---------------------------------------------------------------------------
// 4. Strength

#[test]
fn greedy_tops_a_table_of_three_bots() {
    let tmp = tempfile::tempdir().unwrap();
    // Greedy wins its games in well under 300 plies; the limit only shortens the
    // draws between the random agents.
    let mut args = words(&["--game", "telka", "-o", "max-plies=300"]);
    args.extend(words(&["--concurrency", "2", "--games", "4"]));
    args.extend(words(&["--agent", "builtin:random", "--agent", "builtin:greedy"]));
    let python = have_python();
    if python {
        let script = manifest_path("examples/agents/random_agent.py");
        args.extend(words(&[
            "--agent",
            &shell_words::join(["python3", &script.to_string_lossy(), "--seed", "3"]),
        ]));
    } else {
        eprintln!("python3 not found: the table has only the two built-in agents");
    }
    let summary = parse(&tournament(tmp.path(), "t", &args));
    let entrants = if python { 3 } else { 2 };
    assert_eq!(summary["finished"], 4 * entrants * (entrants - 1) / 2);
    let table = summary["standings"].as_array().unwrap();
    assert_eq!(table.len(), entrants);
    assert_eq!(table[0]["name"], "greedy", "{summary}");
    for s in table {
        let forfeits = ["timeouts", "crashes", "illegal", "protocol"]
            .iter()
            .map(|k| s[k].as_u64().unwrap())
            .sum::<u64>();
        assert_eq!(forfeits, 0, "{}: forfeits in {summary}", s["name"]);
    }
    if python {
        assert_eq!(standing(&summary, "random_agent")["games"], 8);
    }
}

// ---------------------------------------------------------------------------
// 5. Entrants

#[test]
fn agents_files_and_agent_flags_give_the_same_tournament() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("workdir");
    std::fs::create_dir(&dir).unwrap();
    let dir_text = dir.to_string_lossy().into_owned();
    let seeded = agent_cmd("random", 7);
    let entrants = json!([
        {"name": "alpha", "cmd": "builtin:greedy"},
        {"name": "beta", "cmd": seeded, "options": {"Hash": "16", "Style": "solid"}},
        {"name": "gamma", "cmd": "builtin:random", "dir": dir_text},
    ]);
    std::fs::write(tmp.path().join("agents.json"), entrants.to_string()).unwrap();
    let toml_text = toml::to_string(&json!({ "agent": entrants })).expect("TOML");
    std::fs::write(tmp.path().join("agents.toml"), toml_text).unwrap();
    let common = words(&["--game", "telka", "-o", "max-plies=100", "--games", "2"]);
    let common = [common, words(&["--concurrency", "2"])].concat();
    let flags = [
        spec("alpha", "builtin:greedy", &[]),
        spec("beta", &seeded, &["option.Hash=16", "option.Style=solid"]),
        spec("gamma", "builtin:random", &[&format!("dir={dir_text}")]),
    ];
    let mut by_flags = common.clone();
    for f in &flags {
        by_flags.extend(["--agent".to_string(), f.clone()]);
    }
    let mut by_json = common.clone();
    by_json.extend(words(&["--agents-file", "agents.json"]));
    let mut by_toml = common.clone();
    by_toml.extend(words(&["--agents-file", "agents.toml"]));
    let outputs: Vec<(String, Value)> = [("flags", by_flags), ("json", by_json), ("toml", by_toml)]
        .iter()
        .map(|(out, args)| {
            (
                tournament(tmp.path(), out, args),
                read_json(&tmp.path().join(out).join("tournament.json")),
            )
        })
        .collect();
    assert_eq!(outputs[0].1["entrants"], entrants, "entrants from --agent flags");
    for (i, name) in [(1, "json"), (2, "toml")] {
        assert_eq!(
            outputs[i].1, outputs[0].1,
            "tournament.json from the {name} file differs from the flags'"
        );
        assert_eq!(
            outputs[i].0, outputs[0].0,
            "results from the {name} file differ from the flags'"
        );
    }
}

#[test]
fn entrant_options_reach_the_agent_as_setoption() {
    let tmp = tempfile::tempdir().unwrap();
    let log = tmp.path().join("options.log");
    let bot = manifest_path("fixtures/bots/log_options.sh");
    let cmd = shell_words::join(["sh", &bot.to_string_lossy(), &log.to_string_lossy(), exe()]);
    let agent = spec("logger", &cmd, &["option.Skill Level=3", "option.Hash=16"]);
    let args = words(&[
        "--game",
        "telka",
        "--agent",
        &agent,
        "--agent",
        "builtin:greedy",
        "--games",
        "2",
        // The bot writes its log outside: a sandbox would (rightly) not let it.
        "--sandbox",
        "none",
    ]);
    let summary = parse(&tournament(tmp.path(), "t", &args));
    assert_eq!(standing(&summary, "logger")["games"], 2);
    let got = std::fs::read_to_string(&log).expect("the bot logged its options");
    let one = "setoption name Skill Level value 3\nsetoption name Hash value 16\n";
    // Kept between games, the process is told its options once.
    assert_eq!(got, one, "the options, in order, once per process");
    std::fs::remove_file(&log).unwrap();
    let mut fresh = args.clone();
    fresh.extend(words(&["--restart", "always"]));
    tournament(tmp.path(), "t2", &fresh);
    let got = std::fs::read_to_string(&log).expect("the bot logged its options");
    assert_eq!(got, one.repeat(2), "the options, in order, once per game");
}

/// The command of `fixtures/bots/crash_on_go.sh`, an entrant that crashes at its
/// first `go`.
fn crasher_cmd() -> String {
    shell_words::join([
        "sh".to_string(),
        manifest_path("fixtures/bots/crash_on_go.sh")
            .to_string_lossy()
            .into_owned(),
    ])
}

#[test]
fn a_crashing_entrant_forfeits_each_game_and_the_rest_go_on() {
    let tmp = tempfile::tempdir().unwrap();
    let crasher = crasher_cmd();
    let args = words(&[
        "--game",
        "telka",
        "--agent",
        &spec("crasher", &crasher, &[]),
        "--agent",
        "builtin:random",
        "--agent",
        "builtin:greedy",
        "--games",
        "2",
        "--concurrency",
        "2",
    ]);
    let summary = parse(&tournament(tmp.path(), "t", &args));
    assert_eq!(summary["finished"], 6);
    assert_eq!(summary["scheduled"], 6);
    let c = standing(&summary, "crasher");
    assert_eq!(c["games"], 4);
    assert_eq!(c["crashes"], 4, "{summary}");
    assert_eq!(c["losses"], 4);
    for name in ["random", "greedy"] {
        assert_eq!(standing(&summary, name)["games"], 4);
        assert_eq!(standing(&summary, name)["crashes"], 0);
    }
    // The game between the other two was played out without a forfeit.
    let others = summary["pairings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["first"] == "random" && p["second"] == "greedy");
    let wdl = &others.expect("random vs greedy")["wdl"];
    assert_eq!(
        wdl.as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_u64().unwrap())
            .sum::<u64>(),
        2
    );
    let mut crashes = 0;
    for path in records(&tmp.path().join("t")).values() {
        let forfeits: Vec<Value> = record_lines(path)
            .into_iter()
            .filter(|l| l["type"] == "forfeit")
            .collect();
        let crasher_in = seat_commands(path).iter().position(|c| c == &crasher);
        match crasher_in {
            Some(seat) => {
                assert_eq!(forfeits.len(), 1, "{}", path.display());
                assert_eq!(forfeits[0]["seat"], seat + 1);
                assert_eq!(forfeits[0]["reason"], "crash");
                crashes += 1;
            }
            None => assert!(forfeits.is_empty(), "{}: {forfeits:?}", path.display()),
        }
    }
    assert_eq!(crashes, 4);
}

// ---------------------------------------------------------------------------
// 6. SPRT

#[test]
fn sprt_stops_early_and_reports_the_llr_of_its_pentanomial() {
    let tmp = tempfile::tempdir().unwrap();
    let args = words(&[
        "--game",
        "telka",
        "--agent",
        "builtin:greedy",
        "--agent",
        "builtin:random",
        "--games",
        "200",
        "--concurrency",
        "2",
        "--sprt",
        "elo0=0",
        "elo1=200",
        "alpha=0.05",
        "beta=0.05",
    ]);
    let mut all = words(&["tournament", "--out", "t", "--json"]);
    all.extend(args);
    let run = referee(tmp.path(), &all);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stderr.contains("SPRT: H1 accepted"), "{}", run.stderr);
    let summary = parse(&run.stdout);
    let finished = summary["finished"].as_u64().unwrap();
    assert_eq!(summary["scheduled"], 200);
    assert!(finished < 200, "the SPRT did not stop early: {finished} games");
    assert_eq!(records(&tmp.path().join("t")).len() as u64, finished);
    let sprt = summary["sprt"].as_array().expect("an SPRT in the summary");
    assert_eq!(sprt[2], "H1 accepted");
    let pairing = &summary["pairings"][0];
    assert_eq!(
        (pairing["first"].as_str(), pairing["second"].as_str()),
        (Some("greedy"), Some("random"))
    );
    let counts: Vec<u32> = pairing["pentanomial"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap() as u32)
        .collect();
    let test = Sprt {
        elo0: 0.0,
        elo1: 200.0,
        alpha: 0.05,
        beta: 0.05,
    };
    let llr = test.llr(&Pentanomial(counts.clone().try_into().unwrap()));
    let printed = sprt[0].as_f64().unwrap();
    assert!(
        (printed - llr).abs() <= 1e-9 * llr.abs().max(1.0),
        "printed LLR {printed}, recomputed {llr} from {counts:?}"
    );
    let (lo, hi) = test.bounds();
    assert_eq!(sprt[1], json!([lo, hi]));
    assert!(llr >= hi);
}

// ---------------------------------------------------------------------------
// 7. Bad input

#[test]
fn bad_input_is_refused_with_one_line_and_exit_2() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(
        tmp.path().join("broken.toml"),
        "[[agent]]\nname = \"x\"\ncmd = \n",
    )
    .unwrap();
    let two = ["--agent", "builtin:random", "--agent", "builtin:greedy"];
    let with = |extra: &[&str]| {
        let mut a = words(&["tournament", "--out", "never"]);
        a.extend(words(extra));
        a
    };
    let cases: Vec<(&str, Vec<String>, &str)> = vec![
        (
            "unknown game",
            with(&[
                "--game",
                "chess",
                "--agent",
                "builtin:random",
                "--agent",
                "builtin:random",
            ]),
            "chess",
        ),
        (
            "unbalanced --games",
            with(&[&["--game", "telka", "--games", "3"][..], &two].concat()),
            "--games 3",
        ),
        (
            "fewer entrants than seats",
            with(&[&["--game", "telka", "-o", "players=3"][..], &two].concat()),
            "cannot fill a table of 3 seats",
        ),
        (
            "one entrant",
            with(&["--game", "telka", "--agent", "builtin:random"]),
            "at least two entrants",
        ),
        (
            "--shard 0/2",
            with(&[&["--game", "telka", "--shard", "0/2"][..], &two].concat()),
            "--shard",
        ),
        (
            "--shard 3/2",
            with(&[&["--game", "telka", "--shard", "3/2"][..], &two].concat()),
            "--shard",
        ),
        (
            "--shard x",
            with(&[&["--game", "telka", "--shard", "x"][..], &two].concat()),
            "--shard",
        ),
        (
            "--sprt elo0 > elo1",
            with(
                &[
                    &["--game", "telka"][..],
                    &two,
                    &["--sprt", "elo0=5", "elo1=0", "alpha=0.05", "beta=0.05"],
                ]
                .concat(),
            ),
            "elo0 < elo1",
        ),
        (
            // JSON holds no infinity: tournament.json would not read back, and a
            // --resume given it panicked comparing definitions.
            "--sprt with an infinite bound",
            with(
                &[
                    &["--game", "telka"][..],
                    &two,
                    &["--sprt", "elo0=-inf", "elo1=5", "alpha=0.05", "beta=0.05"],
                ]
                .concat(),
            ),
            "--sprt elo0=-inf: not a finite number",
        ),
        (
            "--sprt incomplete",
            with(&[&["--game", "telka"][..], &two, &["--sprt", "elo0=0"]].concat()),
            "--sprt",
        ),
        (
            "--sprt on three seats",
            with(
                &[
                    &["--game", "telka", "-o", "players=3", "--agent", "builtin:random"][..],
                    &two,
                    &["--sprt", "elo0=0", "elo1=5", "alpha=0.05", "beta=0.05"],
                ]
                .concat(),
            ),
            "two-seat",
        ),
        (
            "missing agents file",
            with(&["--game", "telka", "--agents-file", "missing.json"]),
            "missing.json",
        ),
        (
            "broken agents file",
            with(&["--game", "telka", "--agents-file", "broken.toml"]),
            "broken.toml",
        ),
        ("merge of nothing there", words(&["merge", "nowhere"]), "nowhere"),
    ];
    for (what, args, needle) in &cases {
        let run = referee(tmp.path(), args);
        assert_usage_error(&run, what, needle);
        assert!(
            !tmp.path().join("never").exists(),
            "{what}: the output directory was created"
        );
    }
    // An entrant that cannot be started stops the tournament as bad input, as in `match`.
    let run = referee(
        tmp.path(),
        &with(&[
            "--game",
            "telka",
            "--agent",
            "./no-such-bot",
            "--agent",
            "builtin:random",
        ]),
    );
    assert_usage_error(&run, "an entrant that cannot start", "no-such-bot");
}

// ---------------------------------------------------------------------------
// 8. Records that do not belong

/// A short finished tournament to tamper with: three seats, so that a record of a
/// two-seat game (fewer places than seats) is among the foreign ones, and a random
/// opening, so that one can be forged.
fn small_args() -> Vec<String> {
    words(&[
        "--game",
        "pegchow",
        "-o",
        "players=3",
        "-o",
        "max-plies=30",
        "--agent",
        "builtin:random",
        "--agent",
        "builtin:greedy",
        "--agent",
        "builtin:random",
        "--random-plies",
        "2",
        "--seed",
        "3",
    ])
}

fn header_of(lines: &mut [Line]) -> &mut Header {
    match lines.first_mut() {
        Some(Line::Header(h)) => h,
        other => panic!("not a header: {other:?}"),
    }
}

/// A copy of the tournament directory `from` as `to` (tournament.json and games/).
fn copy_out(from: &Path, to: &Path) {
    std::fs::create_dir_all(to.join("games")).unwrap();
    std::fs::copy(from.join("tournament.json"), to.join("tournament.json")).unwrap();
    for entry in std::fs::read_dir(from.join("games")).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), to.join("games").join(entry.file_name())).unwrap();
    }
}

/// Every file in `<out>/games/` with its bytes.
fn games_files(out: &Path) -> BTreeMap<String, Vec<u8>> {
    std::fs::read_dir(out.join("games"))
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            (
                e.file_name().to_string_lossy().into_owned(),
                std::fs::read(e.path()).unwrap(),
            )
        })
        .collect()
}

/// `referee match` with random agents into `<dir>/<record>`: a record of another
/// game or other options.
fn foreign_record(dir: &Path, record: &str, args: &[&str]) -> PathBuf {
    let mut all = words(&[
        "match", "--fill", "random", "--seed", "3", "-q", "--record", record,
    ]);
    all.extend(words(args));
    let run = referee(dir, &all);
    assert_eq!(run.code, 0, "match {args:?}: {}", run.stderr);
    dir.join(record)
}

#[test]
fn merge_and_resume_refuse_records_that_are_not_of_the_tournament() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let whole = tournament(dir, "t", &small_args());
    assert_eq!(parse(&whole)["scheduled"], 3);
    let t = dir.join("t");
    let game = |i: usize| t.join("games").join(format!("game-{i:05}.jsonl"));
    let two_seats = foreign_record(dir, "telka2.jsonl", &["--game", "telka", "-o", "max-plies=20"]);
    let three_seats = foreign_record(
        dir,
        "telka3.jsonl",
        &["--game", "telka", "-o", "players=3", "-o", "max-plies=20"],
    );
    let other_options = foreign_record(
        dir,
        "pegchow.jsonl",
        &["--game", "pegchow", "-o", "players=3", "-o", "max-plies=20"],
    );

    type Tamper = Box<dyn Fn(&Path)>;
    let copy_over = |from: PathBuf| -> Tamper {
        Box::new(move |to: &Path| {
            std::fs::copy(&from, to).unwrap();
        })
    };
    // (what, the file tampered with, how, what the error says)
    let cases: Vec<(&str, &str, Tamper, &str)> = vec![
        (
            "a record of a two-seat game of another kind",
            "game-00001.jsonl",
            copy_over(two_seats),
            "a record of telka, not of this tournament's pegchow",
        ),
        (
            "a record of another game with as many seats",
            "game-00001.jsonl",
            copy_over(three_seats),
            "a record of telka, not of this tournament's pegchow",
        ),
        (
            "a record of the game with other options",
            "game-00002.jsonl",
            copy_over(other_options),
            "a record with options colors-per-player=1 max-plies=20 players=3, not this tournament's colors-per-player=1 max-plies=30 players=3",
        ),
        (
            "another game of the schedule under this one's name",
            "game-00001.jsonl",
            copy_over(game(0)),
            "the record of game 0 of the schedule, not of game 1",
        ),
        (
            "a record of no game of the schedule",
            "game-00003.jsonl",
            copy_over(game(0)),
            "not the record of a game of this tournament's schedule, which has 3 games",
        ),
        (
            "a seed no game has",
            "game-00001.jsonl",
            Box::new(|p| reseal(p, p, |l| header_of(l).seed = 12345)),
            "seed 12345, not game 1's seed",
        ),
        (
            "another entrant in a seat",
            "game-00002.jsonl",
            Box::new(|p| reseal(p, p, |l| header_of(l).seats[1].command = Some("sh bot.sh".into()))),
            "seat 2 was played by `sh bot.sh`, not by",
        ),
        (
            "a built-in entrant with another seed",
            "game-00000.jsonl",
            Box::new(|p| {
                reseal(p, p, |l| {
                    let seat = &mut header_of(l).seats[0];
                    let command = seat.command.take().unwrap();
                    let cut = command.rfind(' ').unwrap();
                    seat.command = Some(format!("{} 1", &command[..cut]));
                })
            }),
            "seat 1 was played by",
        ),
        (
            "another time control",
            "game-00000.jsonl",
            // Consistent in itself (every clock reads 9 s), so that only the
            // tournament's own check can refuse it.
            Box::new(|p| {
                reseal(p, p, |l| {
                    header_of(l).time_control = Some("st=9".into());
                    for line in l.iter_mut() {
                        if let Line::Action(a) = line {
                            if a.clock_ms.is_some() {
                                a.clock_ms = Some(9000);
                            }
                        }
                    }
                })
            }),
            "time control st=9, not this tournament's",
        ),
        (
            "an opening cut short",
            "game-00001.jsonl",
            Box::new(|p| {
                reseal(p, p, |l| match &mut l[2] {
                    Line::Action(a) => a.opening = false,
                    other => panic!("not an action: {other:?}"),
                })
            }),
            "the random opening stops before ply 2, where this tournament's opening makes another",
        ),
        (
            "an opening action after the agents began",
            "game-00001.jsonl",
            Box::new(|p| {
                reseal(p, p, |l| match &mut l[3] {
                    Line::Action(a) => a.opening = true,
                    other => panic!("not an action: {other:?}"),
                })
            }),
            // verify itself refuses an opening action among the agents' ones.
            "does not verify: line 4: think_ms and clock_ms on an opening action",
        ),
        (
            "a byte changed",
            "game-00002.jsonl",
            Box::new(|p| {
                let text = std::fs::read_to_string(p).unwrap();
                std::fs::write(p, text.replacen("\"ply\":4,", "\"ply\":5,", 1)).unwrap();
            }),
            "does not verify: line 5: hash mismatch",
        ),
        (
            "a forged result that keeps the chain",
            "game-00002.jsonl",
            Box::new(|p| {
                reseal(p, p, |l| match l.last_mut() {
                    Some(Line::Result(r)) => r.plies += 1,
                    other => panic!("not a result: {other:?}"),
                })
            }),
            "does not verify: line",
        ),
    ];
    for (n, (what, file, tamper, needle)) in cases.iter().enumerate() {
        let name = format!("case{n}");
        let out = dir.join(&name);
        copy_out(&t, &out);
        tamper(&out.join("games").join(file));
        let before = games_files(&out);
        let path = format!("{name}/games/{file}: ");

        let run = referee(dir, &words(&["merge", &name]));
        assert_usage_error(&run, what, &format!("{path}{needle}"));

        let mut resume = words(&["tournament", "--out", &name, "--resume"]);
        resume.extend(small_args());
        let run = referee(dir, &resume);
        assert_usage_error(&run, what, &format!("{path}{needle}"));
        assert!(
            games_files(&out) == before,
            "{what}: the refused resume changed {name}/games"
        );
    }
    // The untouched directory still merges and resumes to the same figures.
    let run = referee(dir, &words(&["merge", "--json", "t"]));
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stdout, whole);
    let mut resume = small_args();
    resume.push("--resume".into());
    assert_eq!(tournament(dir, "t", &resume), whole);
}

/// Whatever a record or tournament.json holds, `merge` ends with its figures (exit 0)
/// or one error line (exit 2), never a panic: records cut at and around every line
/// end, a byte of every line changed, and definitions edited by hand.
#[test]
fn no_damaged_file_makes_merge_panic() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    tournament(dir, "t", &small_args());
    let t = dir.join("t");
    let original = std::fs::read(t.join("games/game-00001.jsonl")).unwrap();
    let mut variants: Vec<(String, Vec<u8>)> = Vec::new();
    let ends: Vec<usize> = (0..original.len()).filter(|&i| original[i] == b'\n').collect();
    let mut start = 0;
    for &end in &ends {
        for cut in [start, (start + end) / 2, end, end + 1] {
            variants.push((format!("cut at byte {cut}"), original[..cut].to_vec()));
        }
        for (byte, what) in [(b'x', "an x"), (0xff, "a non-UTF-8 byte"), (b'\n', "a newline")] {
            let mut bytes = original.clone();
            bytes[(start + end) / 2] = byte;
            variants.push((format!("{what} at byte {}", (start + end) / 2), bytes));
        }
        start = end + 1;
    }
    let m = dir.join("m");
    copy_out(&t, &m);
    let check = |what: &str| {
        let run = referee(dir, &words(&["merge", "m"]));
        assert!(
            !run.stderr.contains("panicked"),
            "{what}: merge panicked: {}",
            run.stderr
        );
        assert!(
            run.code == 0 || run.code == 2,
            "{what}: exit {}: {}",
            run.code,
            run.stderr
        );
        if run.code == 2 {
            assert_usage_error(&run, what, "m/");
        }
    };
    for (what, bytes) in &variants {
        std::fs::write(m.join("games/game-00001.jsonl"), bytes).unwrap();
        check(what);
    }
    // A pipe under a record's name would hang any reader that opened it; a directory
    // cannot be read at all.
    let record = m.join("games/game-00001.jsonl");
    std::fs::remove_file(&record).unwrap();
    nix::unistd::mkfifo(&record, nix::sys::stat::Mode::S_IRWXU).unwrap();
    let run = referee(dir, &words(&["merge", "m"]));
    assert_usage_error(&run, "a FIFO", "not a regular file");
    std::fs::remove_file(&record).unwrap();
    std::fs::create_dir(&record).unwrap();
    let run = referee(dir, &words(&["merge", "m"]));
    assert_usage_error(&run, "a directory", "not a regular file");
    std::fs::remove_dir(&record).unwrap();
    std::fs::write(&record, &original).unwrap();
    let definition = read_json(&t.join("tournament.json"));
    type Edit = Box<dyn Fn(&mut Value)>;
    let edits: Vec<(&str, Edit)> = vec![
        (
            "a huge opening",
            Box::new(|d| d["random_plies"] = json!(1u64 << 60)),
        ),
        ("more games", Box::new(|d| d["games"] = json!(6))),
        ("no rounds", Box::new(|d| d["rounds"] = json!(0))),
        ("a gauntlet", Box::new(|d| d["format"] = json!("gauntlet"))),
        ("another game", Box::new(|d| d["game"] = json!("telka"))),
        ("two seats", Box::new(|d| d["options"]["players"] = json!("2"))),
        ("no options", Box::new(|d| d["options"] = json!({}))),
        ("another seed", Box::new(|d| d["seed"] = json!(4))),
        (
            "an entrant fewer",
            Box::new(|d| {
                d["entrants"].as_array_mut().unwrap().pop();
            }),
        ),
        (
            "an entrant more",
            Box::new(|d| {
                let first = d["entrants"][0].clone();
                d["entrants"].as_array_mut().unwrap().push(first);
            }),
        ),
        (
            "an unknown built-in agent",
            Box::new(|d| d["entrants"][0]["cmd"] = json!("builtin:nope")),
        ),
        (
            "an SPRT on three seats",
            Box::new(|d| d["sprt"] = json!({"elo0": 0.0, "elo1": 5.0, "alpha": 0.0, "beta": 1.0})),
        ),
    ];
    for (what, edit) in &edits {
        let mut d = definition.clone();
        edit(&mut d);
        std::fs::write(m.join("tournament.json"), d.to_string()).unwrap();
        check(what);
    }
}

#[test]
fn an_entrant_starts_in_its_dir() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("bot-home");
    std::fs::create_dir(&home).unwrap();
    std::fs::write(home.join("book.txt"), "e4\n").unwrap();
    let bot = manifest_path("fixtures/bots/needs_its_dir.sh");
    let cmd = shell_words::join(["sh", &bot.to_string_lossy(), exe()]);
    let dir = format!("dir={}", home.display());
    let run = |extra: &[&str], out: &str| {
        let args = words(&[
            "--game",
            "telka",
            "--agent",
            &spec("booked", &cmd, extra),
            "--agent",
            "builtin:random",
            "--games",
            "2",
        ]);
        parse(&tournament(tmp.path(), out, &args))
    };
    let with_dir = run(&[&dir], "with");
    assert_eq!(standing(&with_dir, "booked")["crashes"], 0, "{with_dir}");
    // Elsewhere (a private directory) it finds no book and never gets ready, which
    // stops the tournament naming it: the key is what made it work.
    let mut args = words(&["tournament", "--out", "without", "--game", "telka", "--agent"]);
    args.extend([
        spec("booked", &cmd, &[]),
        "--agent".into(),
        "builtin:random".into(),
    ]);
    let without = referee(tmp.path(), &args);
    assert_eq!(without.code, 2, "{}", without.stderr);
    let errors = error_lines(&without.stderr);
    assert_eq!(errors.len(), 1, "{}", without.stderr);
    assert!(errors[0].contains("entrant `booked`"), "{}", errors[0]);
}

// ---------------------------------------------------------------------------
// 8. A global SPRT over shards sharing a directory

/// Greedy against random with an SPRT that needs about two dozen pairs (greedy
/// wins every game): more than any one of four shards plays before all of them
/// together decide.
fn shared_args() -> Vec<String> {
    words(&[
        "--game",
        "telka",
        "--agent",
        "builtin:greedy",
        "--agent",
        "builtin:random",
        "--games",
        "400",
        "--sprt",
        "elo0=0",
        "elo1=50",
        "alpha=0.05",
        "beta=0.05",
        "--json",
    ])
}

/// The SPRT of [`shared_args`].
const SHARED_SPRT: Sprt = Sprt {
    elo0: 0.0,
    elo1: 50.0,
    alpha: 0.05,
    beta: 0.05,
};

/// Starts shard `i` of 4 into `<dir>/s<i>` sharing `<dir>/shared`, its output in
/// `<dir>/s<i>.out` and `.err`; `fault` is the `REFEREE_TOURNAMENT_FAULT` to inject.
fn start_shard(dir: &Path, i: usize, extra: &[&str], fault: Option<&str>) -> Child {
    let file = |ext: &str| std::fs::File::create(dir.join(format!("s{i}.{ext}"))).unwrap();
    let mut cmd = Command::new(exe());
    cmd.current_dir(dir)
        .env("TMPDIR", dir)
        .env_remove("REFEREE_TOURNAMENT_FAULT")
        .args([
            "tournament",
            "--out",
            &format!("s{i}"),
            "--shard",
            &format!("{i}/4"),
        ])
        .args(["--shared", "shared"])
        .args(shared_args())
        .args(extra)
        .stdin(Stdio::null())
        .stdout(file("out"))
        .stderr(file("err"));
    if let Some(fault) = fault {
        cmd.env("REFEREE_TOURNAMENT_FAULT", fault);
    }
    cmd.spawn().expect("start a shard")
}

/// The lines of a shard's file in the shared directory, as JSON.
fn shared_lines(dir: &Path, i: usize) -> Vec<Value> {
    let text = std::fs::read_to_string(dir.join(format!("shared/shard-{i}-of-4.jsonl"))).unwrap_or_default();
    text.lines().map(parse).collect()
}

/// The pentanomial counts of the first pairing of a summary.
fn pentanomial_of(summary: &Value) -> Pentanomial {
    let cells: Vec<u32> = summary["pairings"][0]["pentanomial"]
        .as_array()
        .map(|a| a.iter().map(|v| v.as_u64().unwrap() as u32).collect())
        .unwrap_or_else(|| vec![0; 5]);
    Pentanomial(cells.try_into().unwrap())
}

/// Every cycle in the shared directory exactly once, each line the shard's own
/// finished games as its records say (nothing lost, nothing doubled); returns the
/// number of cycles shared.
fn check_shared_against_records(dir: &Path) -> usize {
    let mut cycles = BTreeSet::new();
    for i in 1..=4 {
        let finished: BTreeSet<usize> = records(&dir.join(format!("s{i}")))
            .into_iter()
            .filter(|(_, p)| is_finished(p))
            .map(|(k, _)| k)
            .collect();
        for line in shared_lines(dir, i) {
            let cycle = line["cycle"].as_u64().unwrap() as usize;
            assert!(cycles.insert(cycle), "cycle {cycle} shared twice");
            assert_eq!(cycle % 4, i - 1, "cycle {cycle} is not shard {i}'s");
            let games: Vec<usize> = line["games"]
                .as_array()
                .unwrap()
                .iter()
                .map(|g| g["index"].as_u64().unwrap() as usize)
                .collect();
            assert_eq!(games, [2 * cycle, 2 * cycle + 1], "shard {i}: {line}");
            assert!(games.iter().all(|g| finished.contains(g)), "shard {i}: {line}");
        }
        // Every complete pair a shard finished is shared.
        let pairs = finished
            .iter()
            .filter(|&&g| g % 2 == 0 && finished.contains(&(g + 1)))
            .count();
        assert_eq!(pairs, shared_lines(dir, i).len(), "shard {i}");
    }
    cycles.len()
}

/// `referee merge` of the four shards: its SPRT decided H1, over exactly the pairs
/// the shards shared.
fn check_merge(dir: &Path, shared_pairs: usize) {
    let run = referee(dir, &words(&["merge", "--json", "s1", "s2", "s3", "s4"]));
    assert_eq!(run.code, 0, "{}", run.stderr);
    let merged = parse(&run.stdout);
    assert_eq!(merged["sprt"][2], "H1 accepted", "{merged}");
    let p = pentanomial_of(&merged);
    assert_eq!(p.pairs() as usize, shared_pairs);
    assert!(SHARED_SPRT.llr(&p) >= SHARED_SPRT.bounds().1);
}

#[test]
fn four_shards_sharing_a_directory_stop_together_on_their_combined_sprt() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let mut children: Vec<Child> = (1..=4).map(|i| start_shard(dir, i, &[], None)).collect();
    for (i, child) in children.iter_mut().enumerate() {
        assert_eq!(wait_bounded(child), Some(0), "shard {}", i + 1);
    }
    for i in 1..=4 {
        let err = std::fs::read_to_string(dir.join(format!("s{i}.err"))).unwrap();
        let line = err
            .lines()
            .find(|l| l.starts_with("SPRT: H1 accepted by all shards together"))
            .unwrap_or_else(|| panic!("shard {i} did not stop on the combined SPRT: {err}"));
        // `… N pairs, M of them this shard's`: the decision used the others' pairs.
        let numbers: Vec<usize> = line
            .split(|c: char| !c.is_ascii_digit())
            .filter_map(|w| w.parse().ok())
            .collect();
        let (all, mine) = (numbers[numbers.len() - 2], numbers[numbers.len() - 1]);
        assert!(all > mine, "shard {i}: {line}");
        // Alone, no shard's own pairs decide: only their combination does.
        let own = parse(&std::fs::read_to_string(dir.join(format!("s{i}.out"))).unwrap());
        assert_eq!(own["sprt"][2], "continue", "shard {i} decided alone");
        assert!(
            (own["finished"].as_u64().unwrap()) < 100,
            "shard {i} did not stop early"
        );
    }
    let shared = check_shared_against_records(dir);
    check_merge(dir, shared);
}

#[test]
fn a_shard_that_dies_midway_counts_its_finished_pairs_and_never_its_half_pair() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    // Shard 4 dies after its third game: one pair shared, one half pair on disk.
    let mut dying = start_shard(dir, 4, &[], Some("abort-after-games=3"));
    assert_ne!(
        wait_bounded(&mut dying),
        Some(0),
        "the injected death did not happen"
    );
    let finished = |i: usize| {
        records(&dir.join(format!("s{i}")))
            .values()
            .filter(|p| is_finished(p))
            .count()
    };
    assert_eq!(finished(4), 3);
    assert_eq!(shared_lines(dir, 4).len(), 1, "only the whole pair is shared");
    // As if it had also died writing its next line: a torn last line.
    let own = dir.join("shared/shard-4-of-4.jsonl");
    let mut file = std::fs::OpenOptions::new().append(true).open(&own).unwrap();
    std::io::Write::write_all(&mut file, b"{\"cycle\":7,\"ga").unwrap();
    drop(file);
    let mut others: Vec<Child> = (1..=3).map(|i| start_shard(dir, i, &[], None)).collect();
    for (i, child) in others.iter_mut().enumerate() {
        assert_eq!(wait_bounded(child), Some(0), "shard {}", i + 1);
        let err = std::fs::read_to_string(dir.join(format!("s{}.err", i + 1))).unwrap();
        assert!(err.contains("SPRT: H1 accepted by all shards together"), "{err}");
    }
    // Resumed, the dead shard cuts its torn line, keeps its half pair unplayed and
    // uncounted, and starts nothing: the combined SPRT has decided.
    let mut resumed = start_shard(dir, 4, &["--resume"], None);
    assert_eq!(wait_bounded(&mut resumed), Some(0));
    let err = std::fs::read_to_string(dir.join("s4.err")).unwrap();
    assert!(err.contains("SPRT: H1 accepted by all shards together"), "{err}");
    assert_eq!(finished(4), 3, "the resumed shard played on: {err}");
    let text = std::fs::read_to_string(&own).unwrap();
    assert!(text.ends_with('\n') && text.lines().count() == 1, "{text:?}");
    let shared = check_shared_against_records(dir);
    check_merge(dir, shared);
    // The half pair is in the table's games but not in the pentanomial.
    let run = referee(dir, &words(&["merge", "--json", "s1", "s2", "s3", "s4"]));
    let merged = parse(&run.stdout);
    let games: u64 = (1..=4).map(|i| finished(i) as u64).sum();
    assert_eq!(merged["finished"], games);
    assert_eq!(2 * pentanomial_of(&merged).pairs() as u64 + 1, games);
}

#[test]
fn the_same_seed_at_concurrency_1_stops_after_the_same_game() {
    let tmp = tempfile::tempdir().unwrap();
    let mut args = shared_args();
    args.retain(|a| a != "--json");
    let runs: Vec<Vec<usize>> = (0..2)
        .map(|k| {
            let out = format!("t{k}");
            tournament(tmp.path(), &out, &args);
            records(&tmp.path().join(&out)).into_keys().collect()
        })
        .collect();
    assert!(runs[0].len() < 400 && runs[0].len() % 2 == 0, "{:?}", runs[0]);
    assert_eq!(runs[0], (0..runs[0].len()).collect::<Vec<_>>());
    assert!(runs.iter().all(|r| *r == runs[0]), "{runs:?}");
}

#[test]
fn a_shared_directory_of_another_tournament_is_refused_and_nothing_changes() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let mut first = start_shard(dir, 1, &[], None);
    assert_eq!(wait_bounded(&mut first), Some(0));
    let before = std::fs::read(dir.join("shared/shard-1-of-4.jsonl")).unwrap();
    let mut other = words(&[
        "tournament",
        "--out",
        "other",
        "--shared",
        "shared",
        "--seed",
        "9",
    ]);
    other.extend(shared_args());
    let run = referee(dir, &other);
    assert_usage_error(
        &run,
        "another tournament's shared directory",
        "different tournament",
    );
    assert!(!dir.join("other").exists());
    assert_eq!(
        std::fs::read(dir.join("shared/shard-1-of-4.jsonl")).unwrap(),
        before
    );
    let mut no_sprt = words(&["tournament", "--out", "x", "--shared", "shared"]);
    no_sprt.extend(words(&[
        "--game",
        "telka",
        "--agent",
        "builtin:greedy",
        "--agent",
        "builtin:random",
    ]));
    assert_usage_error(&referee(dir, &no_sprt), "--shared without --sprt", "--sprt");
    // A damaged whole line in a shard's file is named, not skipped.
    std::fs::write(
        dir.join("shared/shard-2-of-4.jsonl"),
        "{\"cycle\":1,\"games\":[]}\n",
    )
    .unwrap();
    let mut again = start_shard(dir, 3, &[], None);
    assert_eq!(wait_bounded(&mut again), Some(2));
    let err = std::fs::read_to_string(dir.join("s3.err")).unwrap();
    assert!(
        err.contains("shard-2-of-4.jsonl") && err.contains("line 1"),
        "{err}"
    );
}

/// A tournament counts each game from the match that played it, not from reading its
/// record back; what it counts must still be exactly what the records say. `merge` of
/// the directory reads every record (as a resume does), so its summary must equal the
/// run's own: forfeits, plies, places and repeated games (from the fingerprints).
#[test]
fn the_results_counted_from_the_matches_are_what_the_records_say() {
    let tmp = tempfile::tempdir().unwrap();
    let crasher = crasher_cmd();
    let args = words(&[
        "--game",
        "telka",
        "-o",
        "max-plies=40",
        "--agent",
        &spec("one", &agent_cmd("random", 1), &[]),
        "--agent",
        &spec("two", &agent_cmd("random", 2), &[]),
        "--agent",
        &spec("crasher", &crasher, &[]),
        "--games",
        "4",
        "--concurrency",
        "2",
    ]);
    let live = tournament(tmp.path(), "t", &args);
    let summary = parse(&live);
    assert_eq!(summary["finished"], 12, "{summary}");
    assert_eq!(standing(&summary, "crasher")["crashes"], 8, "{summary}");
    // Fixed seeds and no opening: each seating of one and two is played twice alike.
    assert!(summary["repeated"].as_u64().unwrap() >= 2, "{summary}");
    let merged = referee(tmp.path(), &words(&["merge", "--json", "t"]));
    assert_eq!(merged.code, 0, "{}", merged.stderr);
    assert_eq!(
        merged.stdout, live,
        "the records say otherwise than the run counted"
    );
}
