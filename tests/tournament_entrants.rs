//! `referee tournament` entrants through the real binary: an entrant that cannot
//! start or never gets ready stops the run naming it, `--log-dir` keeps each game's
//! logs, records name each seat's entrant and its own time control (and verify),
//! and `--resume --out DIR` alone continues what `tournament.json` defines.

mod cli_support;

use std::path::{Path, PathBuf};

use serde_json::Value;

use cli_support::{assert_verifies, error_lines, exe, record_lines, referee_in};

/// What a finished run of the binary left.
struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

/// Runs `referee ARGS…` in `dir`.
fn referee(dir: &Path, args: &[&str]) -> Run {
    let out = referee_in(dir).args(args).output().expect("run referee");
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// The one `referee:` line of a failed run, which must exit 2.
fn usage_error(run: &Run) -> String {
    assert_eq!(run.code, 2, "exit code; stderr: {}", run.stderr);
    let lines = error_lines(&run.stderr);
    assert_eq!(lines.len(), 1, "one error line expected: {}", run.stderr);
    assert!(!run.stderr.contains("panicked"), "{}", run.stderr);
    lines[0].to_string()
}

/// The record files in `<out>/games/` with a name ending in `suffix`, sorted.
fn files(out: &Path, suffix: &str) -> Vec<PathBuf> {
    let mut list: Vec<PathBuf> = std::fs::read_dir(out.join("games"))
        .map(|d| d.map(|e| e.unwrap().path()).collect())
        .unwrap_or_default();
    list.retain(|p| p.to_string_lossy().ends_with(suffix));
    list.sort();
    list
}

/// A built-in agent of the binary with a fixed seed, as an entrant's command.
fn agent_cmd(strategy: &str, seed: u64) -> String {
    shell_words::join([exe(), "agent", strategy, "--seed", &seed.to_string()])
}

fn parse(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
}

#[test]
fn an_entrant_that_never_gets_ready_stops_the_run_and_resumes_once_fixed() {
    let tmp = tempfile::tempdir().unwrap();
    let script = tmp.path().join("bot.sh");
    let ghost = format!("name=ghost cmd='sh {}'", script.display());
    let args = [
        "tournament",
        "--game",
        "telka",
        "-o",
        "max-plies=100",
        "--agent",
        &ghost,
        "--agent",
        "builtin:random",
        "--games",
        "10",
        "--out",
        "t",
        "--json",
    ];
    let line = usage_error(&referee(tmp.path(), &args));
    assert!(line.contains("entrant `ghost`"), "{line}");
    assert!(line.contains("first 2 game"), "{line}");
    // The tail of its stderr: the shell saying what it could not open.
    assert!(
        line.contains("its stderr ends:") && line.contains("bot.sh"),
        "{line}"
    );
    let out = tmp.path().join("t");
    assert!(files(&out, ".jsonl").is_empty(), "its games are no results");
    let aside = files(&out, ".jsonl.unready");
    assert!((2..=3).contains(&aside.len()), "{aside:?}");

    // Once the bot exists, the same command line given as a resume plays every game.
    let bot = shell_words::join([exe(), "agent", "random", "--seed", "5"]);
    std::fs::write(&script, format!("exec {bot}\n")).unwrap();
    let run = referee(tmp.path(), &["tournament", "--resume", "--out", "t", "--json"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let summary = parse(&run.stdout);
    assert_eq!(summary["finished"], 10, "{summary}");
    let ghost_row = summary["standings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "ghost")
        .expect("ghost's row")
        .clone();
    assert_eq!(ghost_row["crashes"], 0, "{ghost_row}");
    assert_eq!(
        files(&out, ".jsonl.unready").len(),
        aside.len(),
        "copies are kept"
    );
}

#[test]
fn an_entrant_whose_program_does_not_exist_is_named_and_nothing_is_written() {
    let tmp = tempfile::tempdir().unwrap();
    let line = usage_error(&referee(
        tmp.path(),
        &[
            "tournament",
            "--game",
            "pegchow",
            "--agent",
            "name=nobin cmd=/nonexistent/bot",
            "--agent",
            "builtin:random",
            "--out",
            "t",
        ],
    ));
    assert!(
        line.contains("entrant `nobin`") && line.contains("cannot start"),
        "{line}"
    );
    assert!(files(&tmp.path().join("t"), ".jsonl").is_empty());
}

#[test]
fn log_dir_keeps_each_games_transcripts_and_stderr_per_seat() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = (agent_cmd("random", 1), agent_cmd("greedy", 2));
    let run = referee(
        tmp.path(),
        &[
            "tournament",
            "--game",
            "telka",
            "--agent",
            &a,
            "--agent",
            &b,
            "--games",
            "2",
            "--out",
            "t",
            "--log-dir",
            "logs",
            "--json",
        ],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    for game in ["game-00000", "game-00001"] {
        for seat in [1, 2] {
            let dir = tmp.path().join("logs").join(game);
            let transcript = std::fs::read_to_string(dir.join(format!("seat{seat}.transcript")))
                .unwrap_or_else(|e| panic!("{game} seat {seat}: {e}"));
            assert!(
                transcript.contains("protocol"),
                "{game} seat {seat}: {transcript}"
            );
            assert!(
                transcript.contains("bestmove"),
                "{game} seat {seat}: {transcript}"
            );
            assert!(
                dir.join(format!("seat{seat}.stderr")).exists(),
                "{game} seat {seat}"
            );
        }
    }
}

#[test]
fn records_name_each_seats_entrant_and_its_own_time_control() {
    let tmp = tempfile::tempdir().unwrap();
    let same = agent_cmd("random", 3);
    let fast = format!("name=fast cmd='{same}' st=0.25 restart=always");
    let slow = format!("name=slow cmd='{same}'");
    let args = [
        "tournament",
        "--game",
        "telka",
        "--agent",
        &fast,
        "--agent",
        &slow,
        "--games",
        "2",
        "--tc",
        "7+0.1",
        "--out",
        "t",
        "--json",
    ];
    let run = referee(tmp.path(), &args);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let out = tmp.path().join("t");
    let stored = parse(&std::fs::read_to_string(out.join("tournament.json")).unwrap());
    assert_eq!(stored["entrants"][0]["restart"], "always", "{stored}");
    assert_eq!(stored["entrants"][0]["st"], "0.25", "{stored}");
    let records = files(&out, ".jsonl");
    assert_eq!(records.len(), 2);
    for path in &records {
        assert_verifies(path);
        let lines = record_lines(path);
        let header = &lines[0];
        assert_eq!(header["time_control"], "7+0.1");
        for seat in header["seats"].as_array().unwrap() {
            // The same program in both seats: only the entrant tells them apart.
            assert_eq!(seat["command"].as_str(), Some(same.as_str()));
            match seat["entrant"].as_str() {
                Some("fast") => assert_eq!(seat["time_control"], "st=0.25", "{seat}"),
                Some("slow") => assert!(seat.get("time_control").is_none(), "{seat}"),
                other => panic!("seat entrant {other:?}"),
            }
        }
        // Each seat's clock ran under its own control: st gives 250 ms every move.
        let fast_seat = header["seats"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["entrant"] == "fast")
            .unwrap()["seat"]
            .clone();
        let timed: Vec<&Value> = lines
            .iter()
            .filter(|l| l["type"] == "action" && l["seat"] == fast_seat && l.get("clock_ms").is_some())
            .collect();
        assert!(!timed.is_empty());
        assert!(timed.iter().all(|l| l["clock_ms"] == 250), "{timed:?}");
    }
    // Resumed without retyping, the finished tournament gives the same summary.
    let again = referee(tmp.path(), &["tournament", "--resume", "--out", "t", "--json"]);
    assert_eq!(again.code, 0, "{}", again.stderr);
    assert_eq!(again.stdout, run.stdout);
}

#[test]
fn resume_alone_continues_and_disagreeing_arguments_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = (agent_cmd("random", 1), agent_cmd("greedy", 2));
    let args = [
        "tournament",
        "--game",
        "pegchow",
        "--agent",
        &a,
        "--agent",
        &b,
        "--games",
        "4",
        "--seed",
        "9",
        "--random-plies",
        "2",
        "--out",
        "t",
        "--json",
    ];
    let first = referee(tmp.path(), &args);
    assert_eq!(first.code, 0, "{}", first.stderr);
    let out = tmp.path().join("t");
    // Two games lost, as if the run had been killed before them.
    let records = files(&out, ".jsonl");
    for path in &records[2..] {
        std::fs::remove_file(path).unwrap();
    }
    let before = std::fs::read(&records[0]).unwrap();
    for (extra, flag) in [
        (vec!["--seed", "2"], "--seed"),
        (vec!["--game", "telka"], "--game"),
        (vec!["--games", "2"], "--games"),
        (vec!["--random-plies", "0"], "--random-plies"),
        (vec!["--tc", "3"], "--tc/--st"),
        (
            vec!["--agent", "builtin:random", "--agent", "builtin:greedy"],
            "--agent/--agents-file",
        ),
    ] {
        let mut words = vec!["tournament", "--resume", "--out", "t"];
        words.extend(extra);
        let line = usage_error(&referee(tmp.path(), &words));
        assert!(line.contains(&format!("{flag} disagrees")), "{flag}: {line}");
        assert_eq!(files(&out, ".jsonl").len(), 2, "{flag}: nothing is played");
    }
    // The same values given again agree; nothing at all given continues as well.
    let mut same = vec![
        "tournament",
        "--resume",
        "--out",
        "t",
        "--seed",
        "9",
        "--game",
        "pegchow",
    ];
    same.extend(["--json", "--concurrency", "2"]);
    let resumed = referee(tmp.path(), &same);
    assert_eq!(resumed.code, 0, "{}", resumed.stderr);
    assert_eq!(
        resumed.stdout, first.stdout,
        "the resumed run is the same tournament"
    );
    assert_eq!(
        std::fs::read(&records[0]).unwrap(),
        before,
        "a finished game is kept as it was"
    );
    let line = usage_error(&referee(tmp.path(), &["tournament", "--resume", "--out", "none"]));
    assert!(line.contains("no tournament to resume"), "{line}");
}
