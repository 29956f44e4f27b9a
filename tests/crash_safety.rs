//! Crash safety (README, Durability): the referee is killed with SIGKILL at random moments of
//! many games, from before the record exists to the last plies. After each kill, the
//! record left behind (if any) verifies up to its last complete line, the agents have
//! died with the referee (parent-death signal), and `match --resume` plays the game to
//! its end without changing a byte of what was there. A hand-made torn record (cut in
//! the middle of a line) is resumed too.
//!
//! Kill moments are drawn from a fixed seed, so a failure replays. Each game's agents
//! have their own seven-digit seeds, by which the test finds their processes.

mod cli_support;

use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use cli_support::*;
use tempfile::TempDir;

/// The games: a title, `--game` with its options, and the number of seats.
const GAMES: [(&str, &[&str], usize); 5] = [
    ("pegchow", &["--game", "pegchow"], 2),
    ("telka", &["--game", "telka"], 2),
    ("idoubtit v0", &["--game", "idoubtit", "-o", "variant=0"], 2),
    ("idoubtit v9", &["--game", "idoubtit", "-o", "variant=9"], 2),
    ("multichess 3p", &["--game", "multichess", "-o", "players=3"], 3),
];

/// Kills per game (30 in all).
const KILLS_PER_GAME: usize = 6;

/// The seed of the kill moments.
const SEED: u64 = 0x5eed_0c4a_5e00_0001;

/// Longest wait after a kill for the agents to be gone.
const AGENT_GRACE: Duration = Duration::from_secs(60);

/// Seeds of the agents of the kill test and of the torn-record test: seven digits
/// each, unique to this file, and apart so that the tests can run at the same time.
const KILL_SEEDS: usize = 9_450_000;
const TORN_SEEDS: usize = 9_460_000;

/// The agents' seeds of game `g`, from `base`.
fn agent_seeds(base: usize, g: usize, seats: usize) -> Vec<String> {
    (1..=seats).map(|s| format!("{}", base + g * 10 + s)).collect()
}

/// The arguments of a fresh match of game `g` writing `record`, with random agents.
fn match_args(base: usize, g: usize, record: &Path, logs: &Path) -> Vec<String> {
    let (_, game, seats) = GAMES[g];
    let mut args: Vec<String> = vec!["match".into()];
    args.extend(game.iter().map(|s| s.to_string()));
    for seed in agent_seeds(base, g, seats) {
        args.push("--agent".into());
        args.push(builtin_command("random", seed.parse().unwrap()));
    }
    args.extend(["--st", "1", "--seed", "1", "-q"].map(String::from));
    args.extend(["--record".into(), record.to_string_lossy().into_owned()]);
    // Keeps the agents' private directories in the test's own directory: a killed
    // referee cannot remove them.
    args.extend(["--log-dir".into(), logs.to_string_lossy().into_owned()]);
    args
}

/// Agents of game `g` (seeds from `base`) still alive after a short grace; they are
/// killed, being this test's own.
fn agents_left(base: usize, g: usize) -> Vec<String> {
    let patterns: Vec<String> = agent_seeds(base, g, GAMES[g].2)
        .into_iter()
        .map(|s| format!("--seed {s}"))
        .collect();
    let patterns: Vec<&str> = patterns.iter().map(String::as_str).collect();
    kill_leftovers(&patterns, AGENT_GRACE)
}

/// Runs the referee with `args` in `dir` to its end (killing it at the hang bound);
/// returns the exit code and stdout.
fn run_to_end(dir: &Path, args: &[String]) -> (Option<i32>, String, String) {
    let out = referee_in(dir).args(args).output().expect("run the referee");
    (out.status.code(), text(&out.stdout), text(&out.stderr))
}

/// When to kill.
#[derive(Clone, Copy, Debug)]
enum Moment {
    /// This long after the start: during start-up or the handshakes.
    Early(Duration),
    /// As soon as the record holds this many bytes.
    AtBytes(u64),
}

/// How one kill went.
#[derive(Debug, Default)]
struct Tally {
    kills: usize,
    ended_before_kill: usize,
    no_record: usize,
    unfinished: usize,
    finished: usize,
    verify_failed: usize,
    resumed: usize,
    resume_failed: usize,
    leaked: usize,
    problems: Vec<String>,
}

/// Starts game `g`, kills the referee at `moment`, then checks and resumes what is left.
fn kill_and_resume(g: usize, case: usize, moment: Moment, tally: &mut Tally) {
    let title = GAMES[g].0;
    let dir = TempDir::new().unwrap();
    let record = dir.path().join("r.jsonl");
    let args = match_args(KILL_SEEDS, g, &record, &dir.path().join("logs"));
    let mut child = Command::new(exe())
        .current_dir(dir.path())
        .args(&args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start the referee");
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        let due = match moment {
            Moment::Early(after) => start.elapsed() >= after,
            Moment::AtBytes(bytes) => std::fs::metadata(&record).is_ok_and(|m| m.len() >= bytes),
        };
        if due || start.elapsed() > HANG_BOUND {
            let _ = child.kill();
            break child.wait().unwrap();
        }
        std::thread::sleep(Duration::from_micros(500));
    };
    let label = format!("{title} #{case} ({moment:?})");
    if status.signal() == Some(9) {
        tally.kills += 1;
    } else {
        tally.ended_before_kill += 1;
        if status.code() != Some(0) {
            tally
                .problems
                .push(format!("{label}: the referee ended with {status}"));
        }
    }
    let left = agents_left(KILL_SEEDS, g);
    if !left.is_empty() {
        tally.leaked += left.len();
        tally
            .problems
            .push(format!("{label}: agents outlived the referee: {left:?}"));
    }

    let Ok(before) = std::fs::read(&record) else {
        tally.no_record += 1;
        return;
    };
    let (code, stdout, stderr) = verify(&record);
    if code != 0 || !stdout.contains(": ok,") {
        tally.verify_failed += 1;
        tally
            .problems
            .push(format!("{label}: verify exit {code}: {stdout}{stderr}"));
        return;
    }
    if stdout.contains("finished:") {
        tally.finished += 1;
        return;
    }
    tally.unfinished += 1;
    // What resuming must keep: every complete line; a torn last line is cut.
    let kept = before.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    let resume: Vec<String> = vec![
        "match".into(),
        "--resume".into(),
        record.to_string_lossy().into_owned(),
        "--trust-record-commands".into(),
        "-q".into(),
        "--log-dir".into(),
        dir.path().join("logs-resumed").to_string_lossy().into_owned(),
    ];
    let (code, out, err) = run_to_end(dir.path(), &resume);
    let after = std::fs::read(&record).unwrap_or_default();
    let (vcode, vout, verr) = verify(&record);
    let mut wrong = Vec::new();
    if code != Some(0) || !out.contains("result:") {
        wrong.push(format!("resume exit {code:?}: {out}{err}"));
    }
    if vcode != 0 || !vout.contains("finished:") {
        wrong.push(format!("verify after resume exit {vcode}: {vout}{verr}"));
    }
    if !after.starts_with(&before[..kept]) {
        wrong.push(format!("the first {kept} bytes changed when resuming"));
    }
    let left = agents_left(KILL_SEEDS, g);
    if !left.is_empty() {
        tally.leaked += left.len();
        wrong.push(format!("agents left after resuming: {left:?}"));
    }
    if wrong.is_empty() {
        tally.resumed += 1;
    } else {
        tally.resume_failed += 1;
        tally.problems.push(format!("{label}: {}", wrong.join("; ")));
    }
}

/// Plays game `g` to its end once and returns the size of its record: the game is the
/// same in every run (seeded agents, no timeouts), so kill points are drawn within it.
fn full_record_size(g: usize) -> u64 {
    let dir = TempDir::new().unwrap();
    let record = dir.path().join("r.jsonl");
    let (code, _, err) = run_to_end(
        dir.path(),
        &match_args(KILL_SEEDS, g, &record, &dir.path().join("logs")),
    );
    assert_eq!(code, Some(0), "{}: {err}", GAMES[g].0);
    assert!(agents_left(KILL_SEEDS, g).is_empty());
    std::fs::metadata(&record).unwrap().len()
}

#[test]
fn sigkill_at_random_moments_loses_nothing_and_resume_finishes_every_game() {
    let tallies: Vec<Tally> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..GAMES.len())
            .map(|g| {
                scope.spawn(move || {
                    let mut rng = SplitMix64::new(SEED ^ (g as u64 + 1).wrapping_mul(0x1234_5678_9abc_def1));
                    let size = full_record_size(g);
                    let mut tally = Tally::default();
                    for case in 0..KILLS_PER_GAME {
                        // One in five kills comes early (always the first), the others
                        // anywhere in the game, the last plies included.
                        let x = rng.unit();
                        let moment = if case == 0 || x < 0.2 {
                            Moment::Early(Duration::from_micros((rng.unit() * 60_000.0) as u64))
                        } else {
                            Moment::AtBytes(1 + (rng.unit() * size as f64) as u64)
                        };
                        kill_and_resume(g, case, moment, &mut tally);
                    }
                    tally
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });

    let mut all = Tally::default();
    println!(
        "\n{:<14} {:>5} {:>7} {:>9} {:>10} {:>8} {:>13} {:>7} {:>13} {:>6}",
        "game",
        "kills",
        "ended",
        "no record",
        "unfinished",
        "finished",
        "verify failed",
        "resumed",
        "resume failed",
        "leaked"
    );
    for (g, t) in tallies.into_iter().enumerate() {
        println!(
            "{:<14} {:>5} {:>7} {:>9} {:>10} {:>8} {:>13} {:>7} {:>13} {:>6}",
            GAMES[g].0,
            t.kills,
            t.ended_before_kill,
            t.no_record,
            t.unfinished,
            t.finished,
            t.verify_failed,
            t.resumed,
            t.resume_failed,
            t.leaked
        );
        all.kills += t.kills;
        all.ended_before_kill += t.ended_before_kill;
        all.no_record += t.no_record;
        all.unfinished += t.unfinished;
        all.finished += t.finished;
        all.verify_failed += t.verify_failed;
        all.resumed += t.resumed;
        all.resume_failed += t.resume_failed;
        all.leaked += t.leaked;
        all.problems.extend(t.problems);
    }
    println!(
        "total: {} SIGKILLs ({} games ended first), {} left no record, {} unfinished records, {} finished; \
         {} failed to verify; {} resumed to the end, {} resumes failed; {} agents outlived the referee",
        all.kills,
        all.ended_before_kill,
        all.no_record,
        all.unfinished,
        all.finished,
        all.verify_failed,
        all.resumed,
        all.resume_failed,
        all.leaked
    );
    assert!(all.problems.is_empty(), "{}", all.problems.join("\n"));
    assert!(
        all.kills >= GAMES.len() * KILLS_PER_GAME * 2 / 3,
        "too few kills landed: {all:?}"
    );
    assert!(all.unfinished > 0, "no kill left an unfinished record");
}

#[test]
fn a_record_torn_in_the_middle_of_a_line_verifies_unfinished_and_resumes() {
    let g = 1; // Telka
    let dir = TempDir::new().unwrap();
    let record = dir.path().join("r.jsonl");
    let (code, _, err) = run_to_end(
        dir.path(),
        &match_args(TORN_SEEDS, g, &record, &dir.path().join("logs")),
    );
    assert_eq!(code, Some(0), "{err}");
    let whole = std::fs::read(&record).unwrap();
    // Cut line 10 in its middle, as a crash during its write would.
    let starts: Vec<usize> = std::iter::once(0)
        .chain(
            whole
                .iter()
                .enumerate()
                .filter(|(_, &b)| b == b'\n')
                .map(|(i, _)| i + 1),
        )
        .collect();
    assert!(starts.len() > 12, "the game is long enough");
    let (line10, line11) = (starts[9], starts[10]);
    std::fs::write(&record, &whole[..line10 + (line11 - line10) / 2]).unwrap();

    let stdout = assert_verifies(&record);
    assert!(stdout.contains("UNFINISHED"), "{stdout}");
    assert!(stdout.contains("line 10 was cut short"), "{stdout}");

    let resume = [
        "match",
        "--resume",
        "r.jsonl",
        "--trust-record-commands",
        "-q",
        "--log-dir",
        "logs-resumed",
    ]
    .map(String::from);
    let (code, out, err) = run_to_end(dir.path(), &resume);
    assert_eq!(code, Some(0), "{out}{err}");
    let stdout = assert_verifies(&record);
    assert!(stdout.contains("finished:"), "{stdout}");
    let after = std::fs::read(&record).unwrap();
    assert_eq!(
        after[..line10],
        whole[..line10],
        "the nine complete lines are kept as they were"
    );
    let lines = record_lines(&record);
    assert_eq!(
        kind(&lines[9]),
        "action",
        "line 10 is a whole new line: {}",
        lines[9]
    );
    assert_eq!(kind(lines.last().unwrap()), "result");
    assert!(agents_left(TORN_SEEDS, g).is_empty());
}
