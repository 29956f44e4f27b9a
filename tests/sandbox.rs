//! Bots cannot cheat through the operating system: each attack of
//! `fixtures/bots/attack.py` runs in seat 1 of a real match, in the sandbox, while
//! its seat plays legal moves. The attacker reads nothing of the record, the logs or
//! the referee, writes into no other pipe, signals nobody, and nothing it starts
//! outlives the match, or a SIGKILLed referee; the innocent seat never forfeits.
//! Without a sandbox, a run says so once its agents may have started.
//!
//! Needs bubblewrap and python3 (`.ci/run` installs bubblewrap); without them each
//! test says why and passes.

mod cli_support;

use std::path::Path;
use std::process::{Command, Stdio};

use cli_support::*;
use serde_json::Value;
use tempfile::TempDir;

/// Whether the attack tests can run here; says why not.
fn can_attack() -> bool {
    have_python() && sandbox_available()
}

/// The `--agent` command of `attack.py MODE` with its seed and tag; where to look is
/// told through `ATTACK_DIR` (a path on an agent's command line would be refused
/// when it lies in a hidden directory, and an attacker may know it anyway).
fn attacker(mode: &str, seed: u32, tag: &str) -> String {
    shell_words::join([
        "python3".to_string(),
        fixture_bot("attack.py").to_string_lossy().into_owned(),
        mode.to_string(),
        seed.to_string(),
        tag.to_string(),
    ])
}

/// The arguments of an I-Doubt-It match (hidden placements: the most to steal) with
/// the attacker in seat 1 and the built-in random agent in seat 2, in the sandbox.
fn match_args(agent: &str, look_in: &Path) -> Vec<String> {
    [
        "match",
        "--game",
        "idoubtit",
        "--sandbox",
        "require",
        "--seed",
        "4",
        "--st",
        "30",
        "--startup-timeout",
        "60",
        "--fill",
        "random",
        "-q",
        "--log-dir",
        "logs",
        "--record",
        "records/r.jsonl",
        "--env",
    ]
    .iter()
    .map(|s| s.to_string())
    .chain([format!("REFEREE={}", exe()), "--env".into()])
    .chain([
        format!("ATTACK_DIR={}", look_in.display()),
        "--agent".into(),
        agent.into(),
    ])
    .collect()
}

/// What seat 1's attacker reported (its stderr log).
fn reports(dir: &Path) -> Vec<String> {
    std::fs::read_to_string(dir.join("logs/seat1.stderr"))
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect()
}

/// Plays the match with attack `mode` to its end and checks what every attack must
/// leave: a normal end, a verified record, no forfeit of the innocent seat 2, an
/// attack that ran, found nothing and left nothing.
fn attack(mode: &str, seed: u32) -> (TempDir, Vec<String>) {
    let dir = TempDir::new().unwrap();
    let tag = format!("sandbox-attack-{mode}");
    let arg = match mode {
        "read-transcript" => dir.path().join("logs"),
        _ => dir.path().join("records"),
    };
    let out = referee_in(dir.path())
        .args(match_args(&attacker(mode, seed, &tag), &arg))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{mode}: {}", text(&out.stderr));
    let record = dir.path().join("records/r.jsonl");
    let lines = record_lines(&record);
    assert!(lines[0]["sandbox"].as_str().unwrap().starts_with("bubblewrap"));
    let innocent: Vec<&Value> = lines
        .iter()
        .filter(|l| l["type"] == "forfeit" && l["seat"] == 2)
        .collect();
    assert!(
        innocent.is_empty(),
        "{mode}: the innocent seat forfeited: {innocent:?}"
    );
    let result = lines.last().unwrap();
    assert_eq!(result["type"], "result", "{mode}");
    let verified = referee_in(dir.path())
        .arg("verify")
        .arg(&record)
        .output()
        .unwrap();
    assert!(verified.status.success(), "{mode}: {}", text(&verified.stderr));
    let said = reports(dir.path());
    for word in ["READ", "WROTE", "SIGNALLED", "JOINED"] {
        let found: Vec<&String> = said.iter().filter(|l| l.starts_with(word)).collect();
        assert!(found.is_empty(), "{mode}: the attack succeeded: {found:?}");
    }
    assert_no_process_left(&[&tag]);
    (dir, said)
}

/// Asserts that the attack ran (it then goes on for as long as its bot plays).
fn ran_over_the_game(mode: &str, said: &[String]) {
    let tried = format!("ATTACK {mode} tried");
    assert!(said.contains(&tried), "{mode}: the attack did not run: {said:?}");
}

#[test]
fn a_bot_cannot_read_the_record_or_the_referees_files() {
    if can_attack() {
        let (_dir, said) = attack("read-record", 7_310_001);
        ran_over_the_game("read-record", &said);
    }
}

#[test]
fn a_bot_cannot_read_the_transcripts_in_the_log_directory() {
    if can_attack() {
        let (_dir, said) = attack("read-transcript", 7_310_002);
        ran_over_the_game("read-transcript", &said);
    }
}

#[test]
fn a_bot_cannot_write_into_the_other_seats_pipes() {
    if can_attack() {
        let (_dir, said) = attack("write-pipes", 7_310_003);
        ran_over_the_game("write-pipes", &said);
    }
}

#[test]
fn a_bot_cannot_stop_or_kill_the_referee() {
    if can_attack() {
        let (_dir, said) = attack("signal", 7_310_004);
        ran_over_the_game("signal", &said);
    }
}

#[test]
fn a_bot_that_joins_the_referees_process_group_dies_with_its_sandbox() {
    if can_attack() {
        let (_dir, said) = attack("join-group", 7_310_005);
        assert!(said.iter().any(|l| l == "ATTACK ready"), "{said:?}");
    }
}

#[test]
fn a_daemon_dies_with_its_sandbox() {
    if can_attack() {
        let (_dir, said) = attack("daemonize", 7_310_006);
        assert!(said.iter().any(|l| l == "ATTACK ready"), "{said:?}");
    }
}

#[test]
fn a_bot_without_a_parent_death_signal_dies_with_a_sigkilled_referee() {
    if !can_attack() {
        return;
    }
    let dir = TempDir::new().unwrap();
    let tag = "sandbox-attack-clear-pdeathsig";
    let agent = attacker("clear-pdeathsig", 7_310_007, tag);
    // Seat 2 never completes its handshake: the referee waits for it (a minute),
    // with the attacker started.
    let mut args = match_args(&agent, &dir.path().join("records"));
    args.extend(["--agent".to_string(), "sleep 7310008".to_string()]);
    let mut child = Command::new(exe())
        .current_dir(dir.path())
        .args(&args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let until = std::time::Instant::now() + HANG_BOUND;
    while !reports(dir.path()).iter().any(|l| l == "ATTACK ready") {
        assert!(std::time::Instant::now() < until, "the attack never got ready");
        assert!(
            child.try_wait().unwrap().is_none(),
            "the match ended before the attack"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    assert_no_process_left(&[tag, "sleep 7310008"]);
}

#[test]
fn resuming_a_record_from_someone_else_starts_none_of_its_commands() {
    // A record whose header names a command: resuming must not run it unless told.
    let dir = TempDir::new().unwrap();
    let out = referee_in(dir.path())
        .args([
            "match", "--game", "telka", "--seed", "2", "-q", "--record", "r.jsonl",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let whole = std::fs::read_to_string(dir.path().join("r.jsonl")).unwrap();
    let cut: String = whole.lines().take(5).map(|l| format!("{l}\n")).collect();
    std::fs::write(dir.path().join("r.jsonl"), &cut).unwrap();
    let refused = referee_in(dir.path())
        .args(["match", "--resume", "r.jsonl", "-q", "--sandbox", "none"])
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(2), "{}", text(&refused.stderr));
    assert!(text(&refused.stderr).contains("--trust-record-commands"));
    assert_eq!(std::fs::read_to_string(dir.path().join("r.jsonl")).unwrap(), cut);
    // Agents given on the command line replace the header's.
    let given = referee_in(dir.path())
        .args(["match", "--resume", "r.jsonl", "-q", "--sandbox", "none"])
        .args(["--agent", "builtin:random", "--agent", "builtin:greedy"])
        .output()
        .unwrap();
    assert_eq!(given.status.code(), Some(0), "{}", text(&given.stderr));
}

/// Runs `referee match` in `dir` with a PATH where no `bwrap` is found, so that
/// `--sandbox auto` (the default) finds no sandbox, and returns its stderr.
fn match_without_bwrap(dir: &Path, record: &str) -> String {
    let out = referee_in(dir)
        .env("PATH", dir)
        .args(["match", "--game", "telka", "--record", record])
        .args(["--agent", "no-such-bot-anywhere"])
        .timeout(HANG_BOUND)
        .output()
        .expect("run referee match");
    assert_eq!(out.status.code(), Some(2), "stderr: {}", text(&out.stderr));
    text(&out.stderr)
}

#[test]
fn a_run_without_a_sandbox_says_so_once_agents_may_have_started_even_when_it_fails() {
    let dir = TempDir::new().unwrap();
    let warning = "referee: warning: the bots are not isolated";
    // The agent cannot start: the run fails once agents are being started, and says
    // both that they were not isolated and why it failed.
    let err = match_without_bwrap(dir.path(), "r.jsonl");
    assert!(err.contains(warning), "{err}");
    assert!(err.contains("cannot start agent `no-such-bot-anywhere`"), "{err}");
    assert_eq!(err.matches(warning).count(), 1, "{err}");
    // Refused before any agent starts, it says only why, in one line.
    std::fs::write(dir.path().join("taken.jsonl"), "").unwrap();
    let err = match_without_bwrap(dir.path(), "taken.jsonl");
    assert!(!err.contains(warning), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
}
