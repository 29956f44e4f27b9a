//! Misbehaving agents at the match level: a misbehaving bot of `fixtures/bots/` plays
//! seat 1 of a Telka match against a built-in agent. Whatever it does, the match ends
//! normally, the offending seat forfeits with the right reason, the record verifies,
//! and no process it started outlives the referee. (The process layer on its own is
//! tested in `agent_process.rs`.)
//!
//! Every test marks its bot's command line with its own tag (and, for sleeping
//! children, its own number of seconds), so that tests running in parallel never
//! mistake each other's processes for leftovers.

mod cli_support;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use cli_support::*;
use serde_json::Value;
use tempfile::TempDir;

/// The short limits the brief asks for: a misbehaving seat costs at most seconds.
const LIMITS: [&str; 6] = ["--st", "0.5", "--startup-timeout", "5", "--quit-grace", "0.5"];

/// Plays a 2-player Telka match with `seat1` as seat 1's agent and the built-in
/// greedy agent on seat 2; asserts a normal end, and returns the record's lines.
fn match_against_builtin(dir: &Path, seat1: &str, extra: &[&str]) -> (PathBuf, Vec<Value>) {
    let record = dir.join("r.jsonl");
    let out = referee_in(dir)
        .args(["match", "--game", "telka", "--seed", "9", "--agent", seat1])
        .args(LIMITS)
        .args(extra)
        .arg("--record")
        .arg(&record)
        .output()
        .unwrap();
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(
        out.status.code(),
        Some(0),
        "the match must end normally\nstdout: {stdout}\nstderr: {stderr}"
    );
    assert!(stdout.contains("result:"), "{stdout}");
    let lines = record_lines(&record);
    (record, lines)
}

/// The forfeit lines of a record.
fn forfeits(lines: &[Value]) -> Vec<&Value> {
    lines.iter().filter(|l| kind(l) == "forfeit").collect()
}

/// `--env REFEREE=<the binary>`: how a bot wrapping the built-in agent finds it.
fn referee_env() -> [String; 2] {
    ["--env".to_string(), format!("REFEREE={}", exe())]
}

/// Seat 1 misbehaves and forfeits for `reason`; seat 2 wins; the record verifies; no
/// process matching `leftovers` remains. `extra` goes to the referee.
fn assert_seat1_forfeits(
    bot: &str,
    args: &[&str],
    extra: &[&str],
    reason: &str,
    leftovers: &[&str],
) -> Vec<Value> {
    let dir = TempDir::new().unwrap();
    let (record, lines) = match_against_builtin(dir.path(), &bot_command(bot, args), extra);
    let all = forfeits(&lines);
    assert_eq!(all.len(), 1, "{bot}: only seat 1 forfeits: {all:?}");
    let forfeit = all[0];
    assert_eq!(forfeit["seat"], 1, "{forfeit}");
    assert_eq!(forfeit["reason"], reason, "{bot}: {forfeit}");
    assert_eq!(places(&lines), [2, 1], "{bot}: seat 2 wins");
    let result = lines.last().unwrap();
    assert_eq!(result["reason"], format!("forfeit 1 {reason}"), "{result}");
    assert!(assert_verifies(&record).contains("finished"));
    assert_no_process_left(leftovers);
    lines
}

#[test]
fn an_agent_that_crashes_midgame_forfeits_for_crash() {
    let tag = "mbtag-crash-midgame-2p";
    let seed = "7700001";
    let inner = format!("--seed {seed}");
    let env = referee_env();
    let lines = assert_seat1_forfeits(
        "crash_midgame.sh",
        &["3", seed, tag],
        &[&env[0], &env[1]],
        "crash",
        &[tag, &inner],
    );
    // It played three legal moves through the built-in agent before crashing.
    let moves = lines
        .iter()
        .filter(|l| kind(l) == "action" && l["seat"] == 1)
        .count();
    assert_eq!(moves, 3);
    assert_eq!(kind(&lines[lines.len() - 2]), "forfeit");
}

#[test]
fn an_agent_that_never_answers_go_forfeits_for_timeout() {
    let tag = "mbtag-hang";
    assert_seat1_forfeits("hang.sh", &[tag], &[], "timeout", &[tag]);
}

#[test]
fn an_agent_that_answers_go_with_garbage_forfeits_for_protocol() {
    let tag = "mbtag-garbage";
    assert_seat1_forfeits("garbage.sh", &[tag], &[], "protocol", &[tag]);
}

#[test]
fn an_agent_that_floods_info_lines_still_times_out() {
    let tag = "mbtag-info-flood";
    assert_seat1_forfeits("info_forever.sh", &[tag], &[], "timeout", &[tag]);
}

#[test]
fn an_agent_that_plays_an_illegal_move_forfeits_for_illegal() {
    let tag = "mbtag-illegal";
    // a1-a2: Blue's counter onto Blue's own counter.
    let lines = assert_seat1_forfeits("illegal.sh", &["a1-a2", tag], &[], "illegal", &[tag]);
    assert_eq!(
        forfeits(&lines)[0]["action"],
        "a1-a2",
        "the rejected action is recorded"
    );
}

#[test]
fn an_agent_that_offers_a_null_step_forfeits_for_illegal() {
    // `a1-a1` leaves everything as it was: a pass in disguise, which R-B5 forbids.
    let tag = "mbtag-illegal-null";
    let lines = assert_seat1_forfeits("illegal.sh", &["a1-a1", tag], &[], "illegal", &[tag]);
    assert_eq!(forfeits(&lines)[0]["action"], "a1-a1");
}

#[test]
fn an_agent_that_never_completes_the_handshake_forfeits_for_timeout() {
    let dir = TempDir::new().unwrap();
    let tag = "mbtag-silent";
    let (record, lines) = match_against_builtin(dir.path(), &bot_command("silent.sh", &[tag]), &[]);
    // The first forfeit is the silent seat's (see the ignored test below for the rest).
    let forfeit = forfeits(&lines)[0];
    assert_eq!(forfeit["seat"], 1, "{forfeit}");
    assert_eq!(forfeit["reason"], "timeout", "{forfeit}");
    assert_eq!(places(&lines), [2, 1]);
    assert_eq!(lines.last().unwrap()["reason"], "forfeit 1 timeout");
    assert!(assert_verifies(&record).contains("finished"));
    assert_no_process_left(&[tag]);
}

#[test]
fn a_silent_agent_does_not_make_the_others_forfeit() {
    let dir = TempDir::new().unwrap();
    let tag = "mbtag-silent-opponent";
    let (_, lines) = match_against_builtin(dir.path(), &bot_command("silent.sh", &[tag]), &[]);
    let out = forfeits(&lines);
    assert_eq!(out.len(), 1, "only the silent seat forfeits: {out:?}");
    assert_eq!(out[0]["seat"], 1);
    assert_eq!(
        lines[0]["seats"][1]["name"], "greedy",
        "seat 2 completed its handshake"
    );

    // With three sides the silent seat is out and the other two play on (R-F1).
    let dir = TempDir::new().unwrap();
    let (_, lines) = match_against_builtin(
        dir.path(),
        &bot_command("silent.sh", &[tag]),
        &["-o", "players=3"],
    );
    let out = forfeits(&lines);
    assert_eq!(out.len(), 1, "only the silent seat forfeits: {out:?}");
    assert!(actions(&lines).len() > 1, "seats 2 and 3 play the game");
    assert_eq!(places(&lines)[0], 3);
    assert_no_process_left(&[tag]);
}

#[test]
fn an_agent_whose_child_lives_on_is_stopped_with_it() {
    let tag = "mbtag-grandchild";
    assert_seat1_forfeits(
        "grandchild.sh",
        &["100001", tag],
        &[],
        "timeout",
        &[tag, "sleep 100001"],
    );
}

#[test]
fn a_crash_in_a_three_sided_game_leaves_the_others_playing() {
    let dir = TempDir::new().unwrap();
    let tag = "mbtag-crash-midgame-3p";
    let record = dir.path().join("r.jsonl");
    let out = referee_in(dir.path())
        .args(["match", "--game", "telka", "-o", "players=3", "--seed", "4"])
        .arg("--agent")
        .arg(builtin_command("greedy", 1))
        .arg("--agent")
        .arg(bot_command("crash_midgame.sh", &["2", "7700002", tag]))
        .args(referee_env())
        .args(["--st", "5", "--startup-timeout", "5", "--quit-grace", "0.5"])
        .arg("--record")
        .arg(&record)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let lines = record_lines(&record);
    let at = lines
        .iter()
        .position(|l| kind(l) == "forfeit")
        .expect("a forfeit line");
    assert_eq!(lines[at]["seat"], 2);
    assert_eq!(lines[at]["reason"], "crash");
    let after: Vec<&Value> = lines[at + 1..].iter().filter(|l| kind(l) == "action").collect();
    assert!(!after.is_empty(), "play goes on after the forfeit (R-F1)");
    assert!(after.iter().all(|l| l["seat"] != 2), "seat 2 is out");
    let result = lines.last().unwrap();
    assert_ne!(
        result["reason"], "forfeit 2 crash",
        "the forfeit did not end the game"
    );
    assert_eq!(places(&lines)[1], 3, "the seat that went out is last");
    assert_verifies(&record);
    assert_no_process_left(&[tag, "--seed 7700002"]);
}

#[test]
fn a_referee_stopped_by_sigterm_leaves_no_agent_and_an_unfinished_record() {
    let dir = TempDir::new().unwrap();
    let tag = "mbtag-sigterm";
    let seat2_seed = "909090909";
    let record = dir.path().join("r.jsonl");
    let mut child = Command::new(exe())
        .current_dir(dir.path())
        .args(["match", "--game", "telka", "--st", "30", "-q"])
        .arg("--agent")
        .arg(bot_command("hang.sh", &[tag]))
        .arg("--agent")
        .arg(format!("{} agent greedy --seed {seat2_seed}", quoted_exe()))
        .arg("--record")
        .arg(&record)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Once the header is written the handshakes are done and seat 1 stalls the game.
    let until = Instant::now() + HANG_BOUND;
    while !std::fs::read(&record).is_ok_and(|b| b.contains(&b'\n')) {
        assert!(Instant::now() < until, "the match never wrote its header");
        assert!(child.try_wait().unwrap().is_none(), "the referee ended early");
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(200));
    let pid = nix::unistd::Pid::from_raw(child.id() as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).unwrap();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() >= until + HANG_BOUND {
            let _ = child.kill();
            panic!("the referee did not exit after SIGTERM");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    assert_eq!(status.code(), Some(130), "{stderr}");
    assert_no_process_left(&[tag, &format!("--seed {seat2_seed}")]);
    let stdout = assert_verifies(&record);
    assert!(stdout.contains("UNFINISHED"), "{stdout}");
    let lines = record_lines(&record);
    assert!(lines.iter().all(|l| kind(l) != "result"));
}

#[test]
fn a_second_answer_sent_while_the_other_seat_decides_forfeits_for_protocol() {
    // Seat 1 answers in time and again 0.1 s later; seat 2 takes 1.5 s to answer, so
    // the second `bestmove` arrives while the referee waits for seat 2. It answers no
    // question: seat 1 forfeits before its next `go`, and seat 2's move stands.
    let dir = TempDir::new().unwrap();
    let tag = "mbtag-late-answer";
    let exe = exe();
    let record = dir.path().join("r.jsonl");
    let out = referee_in(dir.path())
        .args(["match", "--game", "telka", "--seed", "9", "--st", "3"])
        .args(["--startup-timeout", "5", "--quit-grace", "0.5"])
        .args([
            "--agent",
            &bot_command("late_answer.sh", &[exe, "0.1", "7700011", tag]),
        ])
        .args(["--agent", &bot_command("slow.sh", &[exe, "1.5", "7700012", tag])])
        .arg("--record")
        .arg(&record)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let lines = record_lines(&record);
    let all = forfeits(&lines);
    assert_eq!(all.len(), 1, "{all:?}");
    assert_eq!(all[0]["seat"], 1, "{}", all[0]);
    assert_eq!(all[0]["reason"], "protocol", "{}", all[0]);
    assert_eq!(
        all[0]["detail"], "bestmove sent when none was asked for",
        "{}",
        all[0]
    );
    let moved: Vec<u64> = lines
        .iter()
        .filter(|l| kind(l) == "action")
        .map(|l| l["seat"].as_u64().unwrap())
        .collect();
    assert_eq!(moved, [1, 2], "each seat moved once before the forfeit");
    assert!(assert_verifies(&record).contains("finished"));
    assert_no_process_left(&[tag]);
}
