//! Hostile bots (README, Security): every hostile bot of `fixtures/bots/` plays seat 1 of every game
//! (Peg Chow, Telka, I-Doubt-It variants 0 and 9, Multi-player TelnChes with 3 seats)
//! against built-in random agents. Whatever the bot does, the referee exits 0 promptly,
//! the record verifies, the forfeit line gives the precise reason (none at all for a
//! fault after the game is over), the opponent wins or, with three independent sides,
//! play goes on (R-F1), no process the bot started is left, and the referee's own
//! memory stays bounded. The table test prints a summary (fault kinds × games).
//!
//! Then least privilege: what a bot sees of the referee's environment, working
//! directory and descriptors, and the `--max-memory` / `--max-cpu` limits.
//!
//! Every case marks its bot with its own tag and its own seven-digit numbers (the seed
//! of a wrapped built-in agent, the seconds of a sleeping child), so that cases running
//! in parallel never take each other's processes for leftovers.

mod cli_support;

use std::fmt::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use cli_support::*;
use referee::agent::STDERR_LOG_LIMIT;
use serde_json::Value;
use tempfile::TempDir;

/// Short limits for the bots whose fault is to miss a deadline, so that each costs a
/// couple of seconds. The honest seats play under them too, for the rest of the game
/// (a three-seat game goes on without the faulty seat): 0.3 s a decision lost one
/// on time while a flooding bot, other cases and two busy loops shared two cores.
const SHORT_LIMITS: [&str; 6] = ["--st", "2", "--startup-timeout", "3", "--quit-grace", "0.3"];

/// Limits for the other bots: no honest answer comes near them, even on a loaded
/// machine, so their fault is the only thing that can end their seat.
const ROOMY_LIMITS: [&str; 6] = ["--st", "30", "--startup-timeout", "30", "--quit-grace", "0.3"];

/// The referee's peak resident memory must stay below this, whatever a bot sends.
const MEMORY_BOUND_KIB: u64 = 64 * 1024;

/// How long a bot's processes may take to go once its match is over.
const LEFTOVER_GRACE: Duration = Duration::from_secs(60);

/// Cases run at once; most of their time is spent waiting for deadlines.
const WORKERS: usize = 4;

/// A game configuration of the table.
struct GameCase {
    /// Column title.
    title: &'static str,
    /// `--game` and its options.
    args: &'static [&'static str],
    /// Seats (2: the opponent wins a forfeit; 3: the seat is out and play goes on).
    seats: usize,
    /// An action of another seat, which seat 1 may not make at its first turn.
    other_seats_action: &'static str,
}

const GAMES: [GameCase; 5] = [
    GameCase {
        title: "pegchow",
        args: &["--game", "pegchow"],
        seats: 2,
        // Red's counter: seat 1 plays Blue.
        other_seats_action: "j9-i8",
    },
    GameCase {
        title: "telka",
        args: &["--game", "telka"],
        seats: 2,
        other_seats_action: "j9-i8",
    },
    GameCase {
        title: "idoubtit v0",
        args: &["--game", "idoubtit", "-o", "variant=0"],
        seats: 2,
        // A placement on Black's home rows: White places only on its own.
        other_seats_action: "K@e8",
    },
    GameCase {
        title: "idoubtit v9",
        args: &["--game", "idoubtit", "-o", "variant=9"],
        seats: 2,
        other_seats_action: "K@e9",
    },
    GameCase {
        title: "multichess 3p",
        args: &["--game", "multichess", "-o", "players=3"],
        seats: 3,
        // A pawn of seat 2, in seat 2's private area.
        other_seats_action: "2:a2-2:a3",
    },
];

/// What seat 1's fault must lead to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Expect {
    /// A forfeit of seat 1 with this reason.
    Forfeit(&'static str),
    /// A forfeit of seat 1 whose reason depends on whether agents are sandboxed.
    ForfeitSandboxed {
        /// Without a sandbox.
        plain: &'static str,
        /// In a sandbox.
        sandboxed: &'static str,
    },
    /// No forfeit: the fault comes after the game is over.
    NoForfeit,
}

impl Expect {
    /// The forfeit reason expected here and now (`None`: no forfeit). The tests run
    /// with `--sandbox auto`: sandboxed wherever bubblewrap works.
    fn reason(&self) -> Option<&'static str> {
        match *self {
            Expect::Forfeit(r) => Some(r),
            Expect::ForfeitSandboxed { plain, sandboxed } => {
                Some(if sandbox_available() { sandboxed } else { plain })
            }
            Expect::NoForfeit => None,
        }
    }
}

/// The numbers that make one case's processes its own.
struct Marks {
    /// Seed of a wrapped built-in agent (`--seed N` on its command line).
    seed: String,
    /// Seconds of a sleeping child (`sleep N` on its command line).
    sleep: String,
    /// The other seats' action of the game.
    other_seats_action: &'static str,
}

/// A bot of the gallery: its script, its arguments and what its fault must cause.
struct Bot {
    /// Row title: the fault.
    fault: &'static str,
    /// Script in `fixtures/bots/`.
    script: &'static str,
    /// Its arguments before the tag.
    args: fn(&Marks) -> Vec<String>,
    expect: Expect,
    /// The fault is to miss a deadline: play with the short limits.
    deadline_fault: bool,
}

fn no_args(_: &Marks) -> Vec<String> {
    Vec::new()
}

fn sleep_arg(m: &Marks) -> Vec<String> {
    vec![m.sleep.clone()]
}

fn seed_arg(m: &Marks) -> Vec<String> {
    vec![m.seed.clone()]
}

const BOTS: [Bot; 17] = [
    Bot {
        fault: "crash at start",
        script: "crash_start.sh",
        args: no_args,
        expect: Expect::Forfeit("crash"),
        deadline_fault: false,
    },
    Bot {
        fault: "crash mid-game",
        script: "crash_midgame.sh",
        args: |m| vec!["3".to_string(), m.seed.clone()],
        expect: Expect::Forfeit("crash"),
        deadline_fault: false,
    },
    Bot {
        fault: "crash on quit",
        script: "crash_on_quit.sh",
        args: seed_arg,
        expect: Expect::NoForfeit,
        deadline_fault: false,
    },
    Bot {
        fault: "no handshake",
        script: "silent.sh",
        args: no_args,
        expect: Expect::Forfeit("timeout"),
        deadline_fault: true,
    },
    Bot {
        fault: "silent on go",
        script: "hang.sh",
        args: no_args,
        expect: Expect::Forfeit("timeout"),
        deadline_fault: true,
    },
    Bot {
        fault: "info forever",
        script: "info_forever.sh",
        args: no_args,
        expect: Expect::Forfeit("timeout"),
        deadline_fault: true,
    },
    Bot {
        fault: "garbage",
        script: "garbage.sh",
        args: no_args,
        expect: Expect::Forfeit("protocol"),
        deadline_fault: false,
    },
    Bot {
        fault: "100 MB line",
        script: "long_line.sh",
        args: no_args,
        expect: Expect::Forfeit("protocol"),
        deadline_fault: false,
    },
    Bot {
        fault: "flood out+err",
        script: "flood.sh",
        args: no_args,
        expect: Expect::Forfeit("timeout"),
        deadline_fault: true,
    },
    Bot {
        fault: "closes stdout",
        script: "close_stdout.sh",
        args: sleep_arg,
        // In a sandbox, bubblewrap holds the pipe open too: the bot is silent until
        // its time runs out (protocol.md §1.5).
        expect: Expect::ForfeitSandboxed {
            plain: "crash",
            sandboxed: "timeout",
        },
        deadline_fault: true,
    },
    Bot {
        fault: "closes stdin",
        script: "close_stdin.sh",
        args: sleep_arg,
        // As for stdout: in a sandbox the pipe stays open, the bot silent.
        expect: Expect::ForfeitSandboxed {
            plain: "crash",
            sandboxed: "timeout",
        },
        deadline_fault: true,
    },
    Bot {
        fault: "ignores quit+TERM",
        script: "ignore_quit.sh",
        args: |m| vec![m.seed.clone(), m.sleep.clone()],
        expect: Expect::NoForfeit,
        deadline_fault: false,
    },
    Bot {
        fault: "grandchild",
        script: "grandchild.sh",
        args: sleep_arg,
        expect: Expect::Forfeit("timeout"),
        deadline_fault: true,
    },
    Bot {
        fault: "setsid grandchild",
        script: "setsid_grandchild.sh",
        args: sleep_arg,
        expect: Expect::Forfeit("timeout"),
        deadline_fault: true,
    },
    Bot {
        fault: "other seat's action",
        script: "illegal.sh",
        args: |m| vec![m.other_seats_action.to_string()],
        expect: Expect::Forfeit("illegal"),
        deadline_fault: false,
    },
    Bot {
        fault: "answers twice",
        script: "answer_twice.sh",
        args: seed_arg,
        expect: Expect::Forfeit("protocol"),
        deadline_fault: false,
    },
    Bot {
        fault: "not UTF-8",
        script: "not_utf8.sh",
        args: no_args,
        expect: Expect::Forfeit("protocol"),
        deadline_fault: false,
    },
];

/// How one run of the referee went.
struct Run {
    /// Exit code, or `None` when it had to be killed (a hang) or died of a signal.
    code: Option<i32>,
    /// Wall time.
    elapsed: Duration,
    /// Peak resident memory (VmHWM) last seen while it ran, in KiB.
    peak_kib: u64,
    stdout: String,
    stderr: String,
}

/// Runs the referee with `args` in `dir`, watching its peak memory; kills it at
/// [`HANG_BOUND`] (which only a hang reaches).
fn run_referee(dir: &Path, args: &[String]) -> Run {
    let out = dir.join("referee.stdout");
    let err = dir.join("referee.stderr");
    let start = Instant::now();
    let mut child = Command::new(exe())
        .current_dir(dir)
        .args(args)
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out).unwrap())
        .stderr(std::fs::File::create(&err).unwrap())
        .spawn()
        .expect("start the referee");
    let mut peak = 0;
    let code = loop {
        // Read before reaping: a reaped process has no status to read.
        if let Some(kib) = peak_rss_kib(child.id()) {
            peak = peak.max(kib);
        }
        if let Some(status) = child.try_wait().unwrap() {
            break status.code();
        }
        if start.elapsed() > HANG_BOUND {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    Run {
        code,
        elapsed: start.elapsed(),
        peak_kib: peak,
        stdout: std::fs::read_to_string(out).unwrap_or_default(),
        stderr: std::fs::read_to_string(err).unwrap_or_default(),
    }
}

/// What one case showed.
struct Outcome {
    /// The forfeit reason of seat 1 (`-` for none), as the table shows it.
    seen: String,
    /// The run ended only because it was killed at the hang bound.
    hung: bool,
    /// Processes of the bot left behind.
    leaked: usize,
    /// Referee peak memory, KiB.
    peak_kib: u64,
    /// Wall time.
    elapsed: Duration,
    /// Everything that was wrong (empty when the case passed).
    problems: Vec<String>,
}

/// Plays bot `b` in seat 1 of game `g`; case number `n` makes its marks unique.
fn play_case(b: &Bot, g: &GameCase, n: usize) -> Outcome {
    let dir = TempDir::new().unwrap();
    let tag = format!("hostile-tag-{n:03}");
    let marks = Marks {
        seed: format!("{}", 8_310_000 + n),
        sleep: format!("{}", 1_830_000 + n),
        other_seats_action: g.other_seats_action,
    };
    let mut bot_args = (b.args)(&marks);
    bot_args.push(tag.clone());
    let record = dir.path().join("r.jsonl");
    let mut args: Vec<String> = vec!["match".into()];
    args.extend(g.args.iter().map(|s| s.to_string()));
    let limits = if b.deadline_fault {
        SHORT_LIMITS
    } else {
        ROOMY_LIMITS
    };
    args.extend(limits.iter().map(|s| s.to_string()));
    args.extend(["--fill", "random", "--seed", "5", "-q"].map(String::from));
    args.extend(["--env".to_string(), format!("REFEREE={}", exe())]);
    args.extend(["--agent".to_string(), bot_command(b.script, &bot_args)]);
    args.extend(["--record".to_string(), record.to_string_lossy().into_owned()]);
    let run = run_referee(dir.path(), &args);

    let mut problems = Vec::new();
    let hung = run.code.is_none() && run.elapsed >= HANG_BOUND;
    if run.code != Some(0) {
        problems.push(format!(
            "exit {:?} after {:.1?}\nstdout: {}\nstderr: {}",
            run.code, run.elapsed, run.stdout, run.stderr
        ));
    }
    if run.peak_kib >= MEMORY_BOUND_KIB {
        problems.push(format!("referee peak memory {} KiB", run.peak_kib));
    }
    let seen = if record.exists() {
        check_record(&record, b.expect, g, &mut problems)
    } else {
        problems.push("no record".into());
        "?".into()
    };
    let left = kill_leftovers(
        &[
            &tag,
            &format!("sleep {}", marks.sleep),
            &format!("--seed {}", marks.seed),
        ],
        LEFTOVER_GRACE,
    );
    if !left.is_empty() {
        problems.push(format!("processes left behind: {left:?}"));
    }
    Outcome {
        seen,
        hung,
        leaked: left.len(),
        peak_kib: run.peak_kib,
        elapsed: run.elapsed,
        problems,
    }
}

/// Checks the record of one case against what the fault must cause; returns seat 1's
/// forfeit reason (`-` for none).
fn check_record(record: &Path, expect: Expect, g: &GameCase, problems: &mut Vec<String>) -> String {
    let (code, stdout, stderr) = verify(record);
    if code != 0 || !stdout.contains("finished") {
        problems.push(format!("verify: exit {code}: {stdout}{stderr}"));
    }
    let lines = record_lines(record);
    let forfeits: Vec<(usize, &Value)> = lines
        .iter()
        .enumerate()
        .filter(|(_, l)| kind(l) == "forfeit")
        .collect();
    let seen = match forfeits.first() {
        Some((_, f)) => f["reason"].as_str().unwrap_or("?").to_string(),
        None => "-".to_string(),
    };
    let Some(result) = lines.last().filter(|l| kind(l) == "result") else {
        problems.push("the record has no result line".into());
        return seen;
    };
    match expect.reason() {
        None => {
            if !forfeits.is_empty() {
                problems.push(format!("unexpected forfeit: {:?}", forfeits[0].1));
            }
        }
        Some(reason) => {
            if forfeits.len() != 1 || forfeits[0].1["seat"] != 1 || seen != reason {
                problems.push(format!(
                    "want one forfeit of seat 1 for {reason}, got {forfeits:?}"
                ));
                return seen;
            }
            let places: Vec<u64> = result["places"]
                .as_array()
                .unwrap()
                .iter()
                .filter_map(Value::as_u64)
                .collect();
            if g.seats == 2 {
                if places != [2, 1] || result["reason"] != format!("forfeit 1 {reason}") {
                    problems.push(format!("seat 2 must win by the forfeit: {result}"));
                }
            } else {
                // R-F1: seat 1 is out and last; the others play on.
                let after = &lines[forfeits[0].0 + 1..];
                let moves = after.iter().filter(|l| kind(l) == "action").count();
                let by_seat1 = after.iter().any(|l| kind(l) == "action" && l["seat"] == 1);
                if moves == 0 || by_seat1 || places[0] as usize != g.seats {
                    problems.push(format!(
                        "play must go on without seat 1 ({moves} moves after, seat 1 moved: {by_seat1}): {result}"
                    ));
                }
            }
        }
    }
    seen
}

#[test]
fn every_hostile_bot_in_every_game_forfeits_cleanly() {
    let cases: Vec<(usize, usize)> = (0..BOTS.len())
        .flat_map(|b| (0..GAMES.len()).map(move |g| (b, g)))
        .collect();
    let next = AtomicUsize::new(0);
    let outcomes: Mutex<Vec<Option<Outcome>>> = Mutex::new((0..cases.len()).map(|_| None).collect());
    let started = Instant::now();
    std::thread::scope(|scope| {
        for _ in 0..WORKERS {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::SeqCst);
                let Some(&(b, g)) = cases.get(i) else { return };
                let outcome = play_case(&BOTS[b], &GAMES[g], i);
                outcomes.lock().unwrap()[i] = Some(outcome);
            });
        }
    });
    let wall = started.elapsed();
    let outcomes: Vec<Outcome> = outcomes
        .into_inner()
        .unwrap()
        .into_iter()
        .map(Option::unwrap)
        .collect();

    // The summary: expected reason per row, what each game showed, and the figures.
    let mut table = String::new();
    let _ = write!(table, "\n{:<20} {:<9}", "fault", "expected");
    for g in &GAMES {
        let _ = write!(table, " {:<14}", g.title);
    }
    table.push('\n');
    for (b, bot) in BOTS.iter().enumerate() {
        let want = bot.expect.reason().unwrap_or("-");
        let _ = write!(table, "{:<20} {want:<9}", bot.fault);
        for g in 0..GAMES.len() {
            let o = &outcomes[b * GAMES.len() + g];
            let mark = if o.problems.is_empty() { "" } else { " FAIL" };
            let cell = format!("{} {:.1}s{mark}", o.seen, o.elapsed.as_secs_f64());
            let _ = write!(table, " {cell:<14}");
        }
        table.push('\n');
    }
    let failed: Vec<(usize, &Outcome)> = outcomes
        .iter()
        .enumerate()
        .filter(|(_, o)| !o.problems.is_empty())
        .collect();
    let hangs = outcomes.iter().filter(|o| o.hung).count();
    let leaked: usize = outcomes.iter().map(|o| o.leaked).sum();
    let peak = outcomes.iter().map(|o| o.peak_kib).max().unwrap_or(0);
    let slowest = outcomes.iter().map(|o| o.elapsed).max().unwrap_or_default();
    let _ = writeln!(
        table,
        "{} fault kinds x {} games = {} cases in {:.1?}: {} failed, {hangs} hangs, {leaked} processes \
         left behind, referee peak RSS {:.1} MiB (bound {} MiB), slowest case {:.1?}",
        BOTS.len(),
        GAMES.len(),
        outcomes.len(),
        wall,
        failed.len(),
        peak as f64 / 1024.0,
        MEMORY_BOUND_KIB / 1024,
        slowest
    );
    println!("{table}");
    if !failed.is_empty() {
        let mut report = String::new();
        for (i, o) in failed {
            let (b, g) = cases[i];
            let _ = writeln!(
                report,
                "[{} / {}]\n  {}",
                BOTS[b].fault,
                GAMES[g].title,
                o.problems.join("\n  ")
            );
        }
        panic!("{report}");
    }
}

/// The referee's arguments for a Telka match with `agent` in seat 1 and greedy in
/// seat 2.
fn telka_against_greedy(dir: &Path, agent: &str, extra: &[&str]) -> Vec<String> {
    let mut args: Vec<String> = ["match", "--game", "telka", "--seed", "3", "-q", "--agent"]
        .map(String::from)
        .into();
    args.push(agent.to_string());
    args.extend([
        "--record".to_string(),
        dir.join("r.jsonl").to_string_lossy().into_owned(),
    ]);
    args.extend(extra.iter().map(|s| s.to_string()));
    args
}

/// Seat 1's forfeit line of the record in `dir`, after checking that the run ended well.
fn seat1_forfeit(dir: &Path, run: &Run) -> Value {
    assert_eq!(
        run.code,
        Some(0),
        "stdout: {}\nstderr: {}",
        run.stdout,
        run.stderr
    );
    let record = dir.join("r.jsonl");
    assert!(assert_verifies(&record).contains("finished"));
    let lines = record_lines(&record);
    let forfeit = lines
        .iter()
        .find(|l| kind(l) == "forfeit")
        .expect("a forfeit line")
        .clone();
    assert_eq!(forfeit["seat"], 1, "{forfeit}");
    forfeit
}

/// The lines seat 1's agent wrote to its stderr (kept with `--log-dir`).
fn seat1_stderr(dir: &Path) -> Vec<String> {
    let log = dir.join("logs/seat1.stderr");
    std::fs::read_to_string(&log)
        .unwrap_or_else(|e| panic!("read {}: {e}", log.display()))
        .lines()
        .map(str::to_string)
        .collect()
}

/// Runs `inspect_env.sh` as seat 1 with `--env GREETING=…` and `extra`, from a
/// referee whose own environment holds a secret; returns what the bot wrote.
fn inspect_env(dir: &Path, tag: &str, extra: &[&str]) -> Vec<String> {
    let agent = bot_command("inspect_env.sh", &[tag]);
    let mut flags = vec!["--log-dir", "logs", "--env", "GREETING=hello there"];
    flags.extend(extra);
    let args = telka_against_greedy(dir, &agent, &flags);
    let mut cmd = Command::new(exe());
    cmd.current_dir(dir)
        .args(&args)
        .env("HOME", "/home/nobody-here")
        .env("REFEREE_ONLY_SECRET", "must-not-leak")
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    let out = cmd.output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_no_process_left(&[tag]);
    seat1_stderr(dir)
}

/// The `env` lines of [`inspect_env`], sorted.
fn env_of(lines: &[String]) -> Vec<&str> {
    let mut env: Vec<&str> = lines.iter().filter_map(|l| l.strip_prefix("env ")).collect();
    env.sort_unstable();
    env
}

/// The `cwd` line of [`inspect_env`].
fn cwd_of(lines: &[String]) -> &str {
    lines
        .iter()
        .find_map(|l| l.strip_prefix("cwd "))
        .expect("a cwd line")
}

#[test]
fn a_bot_sees_only_path_and_the_variables_it_is_given() {
    let dir = TempDir::new().unwrap();
    let lines = inspect_env(dir.path(), "hostile-tag-env", &["--sandbox", "none"]);
    let path = std::env::var("PATH").unwrap();
    assert_eq!(
        env_of(&lines),
        ["GREETING=hello there".to_string(), format!("PATH={path}")],
        "{lines:?}"
    );
    // It started in a private directory of its own: not the referee's, and not in the
    // log directory beside every seat's transcript; it is gone after the match.
    let cwd = Path::new(cwd_of(&lines));
    assert_ne!(cwd, dir.path().canonicalize().unwrap());
    assert!(
        !cwd.starts_with(dir.path().canonicalize().unwrap()),
        "{}",
        cwd.display()
    );
    assert!(
        !cwd.exists(),
        "the private directory is removed: {}",
        cwd.display()
    );
}

#[test]
fn a_sandboxed_bot_sees_only_path_its_variables_and_a_private_directory() {
    if !sandbox_available() {
        return;
    }
    let dir = TempDir::new().unwrap();
    let lines = inspect_env(dir.path(), "hostile-tag-env-sandbox", &["--sandbox", "require"]);
    let path = std::env::var("PATH").unwrap();
    // bubblewrap also says where the agent starts (PWD), and nothing else.
    assert_eq!(
        env_of(&lines),
        [
            "GREETING=hello there".to_string(),
            format!("PATH={path}"),
            "PWD=/agent".to_string()
        ],
        "{lines:?}"
    );
    assert_eq!(cwd_of(&lines), "/agent");
    let header = &record_lines(&dir.path().join("r.jsonl"))[0];
    assert!(
        header["sandbox"].as_str().unwrap().starts_with("bubblewrap"),
        "{header}"
    );
}

#[test]
fn a_bot_starts_in_the_referees_directory_only_with_agent_cwd_inherit() {
    let dir = TempDir::new().unwrap();
    let agent = bot_command("inspect_env.sh", &["hostile-tag-inherit"]);
    let args = telka_against_greedy(
        dir.path(),
        &agent,
        &["--log-dir", "logs", "--agent-cwd", "inherit", "--sandbox", "none"],
    );
    let run = run_referee(dir.path(), &args);
    seat1_forfeit(dir.path(), &run);
    let lines = seat1_stderr(dir.path());
    let cwd = lines
        .iter()
        .find_map(|l| l.strip_prefix("cwd "))
        .expect("a cwd line");
    assert_eq!(Path::new(cwd), dir.path().canonicalize().unwrap());
}

/// Plays `setsid_grandchild.sh` (marked with `seconds`) as seat 1 of Telka with
/// `sandbox` (`none` or `require`); returns the result line, after checking that the
/// bot timed out and that nothing it started is left.
fn play_setsid_grandchild(seconds: &str, sandbox: &str) -> Value {
    let dir = TempDir::new().unwrap();
    let agent = bot_command("setsid_grandchild.sh", &[seconds.to_string()]);
    let mut extra = SHORT_LIMITS.to_vec();
    extra.extend(["--sandbox", sandbox]);
    let run = run_referee(dir.path(), &telka_against_greedy(dir.path(), &agent, &extra));
    let forfeit = seat1_forfeit(dir.path(), &run);
    assert_eq!(forfeit["reason"], "timeout", "{forfeit}");
    assert_no_process_left(&[seconds]);
    let lines = record_lines(&dir.path().join("r.jsonl"));
    let result = lines.last().expect("a record").clone();
    assert_eq!(kind(&result), "result", "{result}");
    result
}

#[test]
fn a_descendant_that_escaped_with_setsid_is_killed_and_recorded() {
    let result = play_setsid_grandchild("1839011", "none");
    assert_eq!(result["escaped"], serde_json::json!([1, 0]), "{result}");
}

#[test]
fn in_a_sandbox_no_descendant_escapes_to_be_recorded() {
    if !sandbox_available() {
        return;
    }
    // The sandbox's PID namespace takes the `setsid` child with the bot.
    let result = play_setsid_grandchild("1839012", "require");
    assert!(result.get("escaped").is_none(), "{result}");
}

#[test]
fn a_bot_holds_no_descriptor_but_its_three_pipes() {
    let Some(python) = python3() else {
        eprintln!("skipped: no python3");
        return;
    };
    let dir = TempDir::new().unwrap();
    let tag = "hostile-tag-fds";
    let agent = shell_words::join([
        python,
        fixture_bot("inspect_fds.py").to_string_lossy().into_owned(),
        tag.into(),
    ]);
    let mut args = telka_against_greedy(dir.path(), &agent, &["--log-dir", "logs"]);
    // The referee itself inherits descriptors 7 and 8 without close-on-exec, as from a
    // careless parent; the bot must not get them.
    let mut sh_args = vec![
        "-c".to_string(),
        "exec 7</dev/null 8>/dev/null; exec \"$@\"".into(),
        "sh".into(),
    ];
    sh_args.push(exe().to_string());
    sh_args.append(&mut args);
    let out = Command::new("sh")
        .current_dir(dir.path())
        .args(&sh_args)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let lines = seat1_stderr(dir.path());
    assert!(lines.iter().any(|l| l == "fds 0 1 2"), "{lines:?}");
    assert_no_process_left(&[tag]);
}

#[test]
fn max_memory_makes_a_bot_that_allocates_200_mb_crash() {
    let limited = TempDir::new().unwrap();
    let free = TempDir::new().unwrap();
    let agent = |tag: &str| bot_command("alloc.sh", &[tag]);
    let limits = ["--st", "20", "--startup-timeout", "5", "--quit-grace", "0.3"];
    let (with, without) = std::thread::scope(|scope| {
        let with = scope.spawn(|| {
            let mut extra = limits.to_vec();
            extra.extend(["--max-memory", "64"]);
            run_referee(
                limited.path(),
                &telka_against_greedy(limited.path(), &agent("hostile-tag-mem64"), &extra),
            )
        });
        // The same bot without the limit gets its memory and answers (illegally).
        let without = run_referee(
            free.path(),
            &telka_against_greedy(free.path(), &agent("hostile-tag-memfree"), &limits),
        );
        (with.join().unwrap(), without)
    });
    let forfeit = seat1_forfeit(limited.path(), &with);
    assert_eq!(forfeit["reason"], "crash", "{forfeit}");
    let forfeit = seat1_forfeit(free.path(), &without);
    assert_eq!(forfeit["reason"], "illegal", "{forfeit}");
    assert_eq!(forfeit["action"], "allocated", "{forfeit}");
    assert_no_process_left(&["hostile-tag-mem"]);
}

#[test]
fn a_flood_of_info_lines_leaves_a_transcript_of_bounded_size() {
    let dir = TempDir::new().unwrap();
    let tag = "hostile-tag-info-burst";
    let agent = bot_command("info_burst.sh", &[tag]);
    let run = run_referee(
        dir.path(),
        &telka_against_greedy(dir.path(), &agent, &["--st", "300", "--log-dir", "logs"]),
    );
    let forfeit = seat1_forfeit(dir.path(), &run);
    assert_eq!(forfeit["reason"], "crash", "{forfeit}");
    let transcript = std::fs::read(dir.path().join("logs/seat1.transcript")).unwrap();
    // 20 MB came; the first 15 MiB and the last 1 MiB are kept around a marker.
    assert!(
        transcript.len() as u64 <= STDERR_LOG_LIMIT + 200,
        "{} bytes",
        transcript.len()
    );
    let text = String::from_utf8_lossy(&transcript);
    assert!(text.starts_with("> protocol 1\n"), "the head is kept");
    assert!(text.contains("bytes left out here; the last"), "no marker");
    let last = text.trim_end().lines().last().unwrap_or("");
    assert!(
        last.starts_with("< info x") && last.ends_with('x'),
        "the tail is kept: {last}"
    );
    assert_no_process_left(&[tag]);
}

#[test]
fn max_cpu_stops_a_busy_looping_bot() {
    let dir = TempDir::new().unwrap();
    let tag = "hostile-tag-busy";
    let agent = bot_command("busy.sh", &[tag]);
    // A long --st: only the CPU limit can end the decision early.
    let run = run_referee(
        dir.path(),
        &telka_against_greedy(dir.path(), &agent, &["--st", "60", "--max-cpu", "1"]),
    );
    let forfeit = seat1_forfeit(dir.path(), &run);
    assert_eq!(forfeit["reason"], "crash", "{forfeit}");
    assert_no_process_left(&[tag]);
}

/// The whole gallery in one tournament: every hostile bot plays a colour-swapped pair
/// of Telka games against the built-in random agent (a gauntlet led by it). The
/// tournament ends, every game is recorded and finished, each bot's faults are
/// counted by kind in the summary, and no process is left behind.
#[test]
fn every_hostile_bot_forfeits_cleanly_in_a_tournament() {
    let dir = TempDir::new().unwrap();
    let out = dir.path().join("t");
    let mut args: Vec<String> = [
        "tournament",
        "--game",
        "telka",
        "--format",
        "gauntlet",
        "--games",
        "2",
    ]
    .map(String::from)
    .to_vec();
    args.extend(
        [
            "--st",
            "0.5",
            "--startup-timeout",
            "3",
            "--concurrency",
            "4",
            "--play-unready",
            "--json",
        ]
        .map(String::from),
    );
    args.extend(["--env".to_string(), format!("REFEREE={}", exe())]);
    args.extend(["--out".to_string(), out.to_string_lossy().into_owned()]);
    args.extend([
        "--agent".to_string(),
        "name=random cmd=builtin:random".to_string(),
    ]);
    let mut tags = Vec::new();
    for (n, b) in BOTS.iter().enumerate() {
        let tag = format!("hostile-tournament-tag-{n:03}");
        let marks = Marks {
            seed: format!("{}", 8_410_000 + n),
            sleep: format!("{}", 1_840_000 + n),
            other_seats_action: "j9-i8",
        };
        let mut bot_args = (b.args)(&marks);
        bot_args.push(tag.clone());
        let cmd = bot_command(b.script, &bot_args);
        args.push("--agent".to_string());
        args.push(shell_words::join([
            format!("name=bot{n:02}"),
            format!("cmd={cmd}"),
        ]));
        tags.push((tag, marks));
    }
    let run = run_referee(dir.path(), &args);
    assert_eq!(
        run.code,
        Some(0),
        "stdout: {}\nstderr: {}",
        run.stdout,
        run.stderr
    );
    let summary: Value = serde_json::from_str(&run.stdout).expect("--json summary");
    assert_eq!(summary["finished"], summary["scheduled"], "{summary}");
    assert_eq!(summary["scheduled"], 2 * BOTS.len());
    let standings = summary["standings"].as_array().unwrap();
    for (n, b) in BOTS.iter().enumerate() {
        let name = format!("bot{n:02}");
        let s = standings
            .iter()
            .find(|s| s["name"] == name.as_str())
            .expect("every entrant is in the table");
        let count = |key: &str| s[key].as_u64().unwrap();
        let forfeits = count("timeouts") + count("crashes") + count("illegal") + count("protocol");
        match b.expect.reason() {
            None => assert_eq!(forfeits, 0, "{}: {s}", b.fault),
            // Seated second, the other seat's action may be its own: at least the
            // game where it is seat 1 is forfeited.
            Some("illegal") => assert!(count("illegal") >= 1, "{}: {s}", b.fault),
            Some(kind) => {
                let key = match kind {
                    "timeout" => "timeouts",
                    "crash" => "crashes",
                    other => other,
                };
                assert_eq!(count(key), 2, "{}: both games forfeited for {kind}: {s}", b.fault);
            }
        }
    }
    let patterns: Vec<String> = tags
        .iter()
        .flat_map(|(tag, m)| {
            [
                tag.clone(),
                format!("sleep {}", m.sleep),
                format!("--seed {}", m.seed),
            ]
        })
        .collect();
    let patterns: Vec<&str> = patterns.iter().map(String::as_str).collect();
    assert!(
        kill_leftovers(&patterns, LEFTOVER_GRACE).is_empty(),
        "processes left behind"
    );
    assert!(
        run.peak_kib < MEMORY_BOUND_KIB,
        "referee peak memory {} KiB",
        run.peak_kib
    );
}

/// At the end of a game every seat is told `quit` before any is waited for (so the
/// seats exit side by side): four bots that each wait, after their `quit`, until all
/// four have had theirs all get there, though the grace would let the referee wait
/// for each in turn. Told one after another, the first would wait alone.
#[test]
fn every_seat_is_told_quit_before_any_is_waited_for() {
    let dir = TempDir::new().unwrap();
    let meet = dir.path().join("meet");
    std::fs::create_dir(&meet).unwrap();
    let bot = bot_command::<&str>("quit_together.sh", &[]);
    let mut args: Vec<String> = [
        "match",
        "--game",
        "telka",
        "-o",
        "players=4",
        "-o",
        "max-plies=8",
        "-q",
    ]
    .map(String::from)
    .into();
    for _ in 0..4 {
        args.extend(["--agent".to_string(), bot.clone()]);
    }
    args.extend(
        [
            "--sandbox",
            "none",
            "--quit-grace",
            "120",
            "--env",
            &format!("REFEREE={}", exe()),
            "--env",
            &format!("MEET={}", meet.display()),
            "--env",
            "SEATS=4",
            "--record",
        ]
        .map(String::from),
    );
    args.push(dir.path().join("r.jsonl").to_string_lossy().into_owned());
    let run = run_referee(dir.path(), &args);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let met = std::fs::read_dir(&meet)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("met."))
        .count();
    assert_eq!(met, 4, "seats that saw all four told quit");
}
