//! Supervision of misbehaving agents: each test runs one of the `raw_*` scripts of
//! `fixtures/bots/` (they speak no protocol) and checks that the referee side stays
//! in control.
//!
//! Deadlines are short (500 ms) and assertions are on outcomes; the only timing
//! assertions are very generous upper bounds that catch a hang.

mod cli_support;

use std::os::unix::process::ExitStatusExt;
use std::path::PathBuf;
use std::sync::{RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::time::{Duration, Instant};

use referee::agent::{
    kill_all_agents, process_group_alive, AgentError, AgentProcess, AgentSpec, Ending, Received, LOG_HEAD,
    STDERR_LOG_LIMIT,
};

/// `kill_all_agents` kills every agent in this process, so the test that calls it
/// must run alone; all others share this lock.
static AGENTS: RwLock<()> = RwLock::new(());

fn shared() -> RwLockReadGuard<'static, ()> {
    AGENTS.read().unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn exclusive() -> RwLockWriteGuard<'static, ()> {
    AGENTS.write().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Far above any honest duration here; only a hang gets near it.
const HANG_BOUND: Duration = Duration::from_secs(120);

/// The short deadline used where an agent is expected not to answer.
const SHORT: Duration = Duration::from_millis(500);

fn crate_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A spec running the script `NAME` of `fixtures/bots/` from the crate directory.
fn bot(name: &str) -> AgentSpec {
    let script = cli_support::fixture_bot(name);
    AgentSpec {
        working_dir: Some(crate_dir()),
        ..AgentSpec::new(shell_words::join(["sh", &*script.to_string_lossy()]))
    }
}

fn start(spec: &AgentSpec) -> AgentProcess {
    AgentProcess::spawn(spec).unwrap_or_else(|err| panic!("spawn {}: {err}", spec.command))
}

fn pgid(agent: &AgentProcess) -> i32 {
    i32::try_from(agent.pid()).unwrap()
}

fn line(text: &str) -> Received {
    Received::Line(text.to_string())
}

/// Polls `check` until it holds or [`HANG_BOUND`] passes.
fn eventually(mut check: impl FnMut() -> bool) -> bool {
    let until = Instant::now() + HANG_BOUND;
    while Instant::now() < until {
        if check() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    check()
}

#[test]
fn echo_round_trip() {
    let _lock = shared();
    let mut agent = start(&bot("raw_echo.sh"));
    for text in ["uci", "position startpos moves e2e4", "", "  spaced  out  "] {
        agent.send(text).unwrap();
        assert_eq!(agent.recv(Instant::now() + HANG_BOUND), line(text));
    }
    agent.shutdown(Duration::from_secs(1));
    assert!(!process_group_alive(pgid(&agent)));
}

#[test]
fn send_refuses_a_message_that_is_not_one_line() {
    let _lock = shared();
    let mut agent = start(&bot("raw_echo.sh"));
    assert!(matches!(agent.send("a\nb"), Err(AgentError::NotOneLine)));
    assert!(matches!(agent.send("a\r"), Err(AgentError::NotOneLine)));
    agent.send("still fine").unwrap();
    assert_eq!(agent.recv(Instant::now() + HANG_BOUND), line("still fine"));
}

#[test]
fn what_a_dead_agent_said_in_time_is_heard_after_the_deadline() {
    // Deadlines can pass while the referee serves other agents (the handshake steps
    // share one); an agent that answered and then exited is not a crash for that.
    let _lock = shared();
    let mut agent = start(&bot("raw_crash.sh"));
    assert!(eventually(|| agent.exit_status().is_some()));
    let past = Instant::now();
    assert_eq!(agent.recv(past), line("id name crash"));
    assert_eq!(agent.recv(past), Received::Closed);
}

#[test]
fn crash_reports_closed_and_a_failing_status() {
    let _lock = shared();
    let mut agent = start(&bot("raw_crash.sh"));
    assert_eq!(agent.recv(Instant::now() + HANG_BOUND), line("id name crash"));
    assert_eq!(agent.recv(Instant::now() + HANG_BOUND), Received::Closed);
    assert!(eventually(|| agent.exit_status().is_some()));
    let status = agent.exit_status().unwrap();
    assert!(!status.success());
    assert_eq!(status.code(), Some(3));
    assert!(matches!(agent.send("isready"), Err(AgentError::Closed)));
    assert_eq!(agent.recv(Instant::now() + SHORT), Received::Closed);
}

#[test]
fn hang_times_out_and_shutdown_kills_the_group() {
    let _lock = shared();
    let mut agent = start(&bot("raw_hang.sh"));
    let group = pgid(&agent);
    agent.send("go").unwrap();
    let started = Instant::now();
    assert_eq!(agent.recv(Instant::now() + SHORT), Received::Timeout);
    assert!(started.elapsed() < HANG_BOUND);
    assert!(process_group_alive(group));
    agent.shutdown(Duration::from_millis(200));
    assert!(!process_group_alive(group));
    assert!(agent.exit_status().is_some());
    // Shutting down twice is harmless.
    agent.shutdown(Duration::from_millis(200));
}

#[test]
fn dropping_an_agent_kills_its_group() {
    let _lock = shared();
    let agent = start(&bot("raw_hang.sh"));
    let group = pgid(&agent);
    drop(agent);
    assert!(!process_group_alive(group));
}

#[test]
fn info_flood_cannot_postpone_the_deadline() {
    let _lock = shared();
    let mut agent = start(&bot("raw_info_flood.sh"));
    let started = Instant::now();
    let deadline = started + SHORT;
    let mut infos = 0;
    loop {
        match agent.recv(deadline) {
            Received::Line(text) => {
                assert!(text.starts_with("info string"), "{text:?}");
                infos += 1;
            }
            Received::Timeout => break,
            other => panic!("unexpected {other:?}"),
        }
        assert!(started.elapsed() < HANG_BOUND, "flood postponed the deadline");
    }
    assert!(infos > 0);
    agent.shutdown(Duration::from_millis(200));
    assert!(!process_group_alive(pgid(&agent)));
}

#[test]
fn long_line_is_skipped_and_the_next_line_arrives() {
    let _lock = shared();
    let mut agent = start(&bot("raw_long_line.sh"));
    assert_eq!(agent.recv(Instant::now() + HANG_BOUND), Received::TooLong);
    assert_eq!(agent.recv(Instant::now() + HANG_BOUND), line("ok"));
}

#[test]
fn stderr_flood_is_drained_when_discarded() {
    let _lock = shared();
    let mut agent = start(&bot("raw_stderr_flood.sh"));
    // Each echo comes only after 4 MB more of stderr: an undrained pipe blocks it.
    for text in ["ping", "pong"] {
        agent.send(text).unwrap();
        assert_eq!(agent.recv(Instant::now() + HANG_BOUND), line(text));
    }
}

#[test]
fn stderr_flood_is_logged_and_the_log_is_capped() {
    let _lock = shared();
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("agent.stderr");
    let mut agent = start(&AgentSpec {
        stderr_log: Some(log.clone()),
        ..bot("raw_stderr_flood.sh")
    });
    agent.send("ping").unwrap();
    assert_eq!(agent.recv(Instant::now() + HANG_BOUND), line("ping"));
    let size = || std::fs::metadata(&log).map(|m| m.len()).unwrap_or(0);
    assert!(size() >= 3 * 1024 * 1024, "log has {} bytes", size());
    // The agent never stops; the log stops growing at its head's size.
    // (What the log holds in its buffer is written at the end.)
    assert!(
        eventually(|| size() >= LOG_HEAD - 64 * 1024),
        "log has {} bytes",
        size()
    );
    agent.send("pong").unwrap();
    assert_eq!(agent.recv(Instant::now() + HANG_BOUND), line("pong"));
    agent.shutdown(Duration::from_millis(200));
    assert!(!process_group_alive(pgid(&agent)));
    // Once the agent is gone the log is complete: head, marker, the last bytes.
    assert!(eventually(|| size() > LOG_HEAD), "no tail written");
    assert!(size() <= STDERR_LOG_LIMIT + 200, "{} bytes", size());
    let text = std::fs::read(&log).unwrap();
    let marker = String::from_utf8_lossy(&text[LOG_HEAD as usize..][..100]).into_owned();
    assert!(marker.contains("bytes left out here"), "{marker}");
}

#[test]
fn grandchild_dies_with_the_agent() {
    let _lock = shared();
    let mut agent = start(&bot("raw_grandchild.sh"));
    let group = pgid(&agent);
    let Received::Line(text) = agent.recv(Instant::now() + HANG_BOUND) else {
        panic!("no pid line from grandchild.sh");
    };
    let grandchild: i32 = text.strip_prefix("started ").unwrap().parse().unwrap();
    let grandchild = nix::unistd::Pid::from_raw(grandchild);
    assert!(nix::sys::signal::kill(grandchild, None).is_ok());
    assert_eq!(agent.recv(Instant::now() + SHORT), Received::Timeout);
    agent.shutdown(Duration::from_millis(200));
    assert!(!process_group_alive(group));
    assert_eq!(
        nix::sys::signal::kill(grandchild, None),
        Err(nix::errno::Errno::ESRCH)
    );
}

/// An agent running `script` under `sh -c`.
fn sh(script: &str) -> AgentProcess {
    start(&AgentSpec::new(shell_words::join(["sh", "-c", script])))
}

#[test]
fn stopping_says_whether_the_agent_exited_or_was_killed() {
    let _lock = shared();
    // `cat` ends with its input (or on the TERM sent with it), well within the grace.
    let mut agent = start(&AgentSpec::new("cat"));
    let stopped = agent.shutdown(HANG_BOUND);
    assert!(matches!(stopped.ending, Ending::Exited(_)), "{stopped:?}");
    assert!(stopped.escaped.is_empty(), "{stopped:?}");
    // Ignoring TERM and its input, it outlasts the grace and is killed.
    let mut agent = sh("trap '' TERM; echo ready; while :; do sleep 1; done");
    // Not before the trap is set, or the TERM would end it.
    assert_eq!(agent.recv(Instant::now() + HANG_BOUND), line("ready"));
    let stopped = agent.shutdown(Duration::from_millis(200));
    assert_eq!(stopped.ending, Ending::Killed, "{stopped:?}");
    assert!(!process_group_alive(pgid(&agent)));
    // Stopping again stops nothing more and says the same.
    assert_eq!(agent.shutdown(Duration::ZERO), stopped);
}

#[test]
fn stopping_kills_and_reports_a_descendant_that_escaped_with_setsid() {
    // The search for escaped descendants takes every orphan of this process that no
    // live agent's group holds: no other test may be stopping agents meanwhile.
    let _lock = exclusive();
    // TERM is ignored (and stays so across the exec), so that the agent is still
    // running when the grace of zero runs out, however slow the machine: killed.
    let mut agent = sh("trap '' TERM; setsid sleep 1839002 & echo \"started $!\"; exec sleep 1839003");
    let Received::Line(text) = agent.recv(Instant::now() + HANG_BOUND) else {
        panic!("no pid line");
    };
    let escapee: i32 = text.strip_prefix("started ").unwrap().parse().unwrap();
    // `setsid` has made its own session once the process no longer runs it.
    assert!(eventually(|| std::fs::read_to_string(format!(
        "/proc/{escapee}/cmdline"
    ))
    .is_ok_and(|c| c.starts_with("sleep"))));
    let stopped = agent.shutdown(Duration::ZERO);
    assert_eq!(stopped.ending, Ending::Killed, "{stopped:?}");
    assert_eq!(stopped.escaped, [escapee], "{stopped:?}");
    assert_eq!(
        nix::sys::signal::kill(nix::unistd::Pid::from_raw(escapee), None),
        Err(nix::errno::Errno::ESRCH)
    );
}

#[test]
fn garbage_arrives_as_lines() {
    let _lock = shared();
    let mut agent = start(&bot("raw_garbage.sh"));
    agent.send("uci").unwrap();
    agent.send("isready").unwrap();
    let (mut text, mut binary) = (0, 0);
    let deadline = Instant::now() + HANG_BOUND;
    while text < 4 || binary < 2 {
        match agent.recv(deadline) {
            Received::Line(_) => text += 1,
            Received::NotUtf8(bytes) => {
                assert!(bytes.starts_with(b"\xff\xfe"));
                binary += 1;
            }
            other => panic!("unexpected {other:?} after {text} lines, {binary} binary"),
        }
    }
    // Junk does not stop the agent from being heard afterwards.
    agent.send("again").unwrap();
    assert!(matches!(
        agent.recv(Instant::now() + HANG_BOUND),
        Received::Line(_)
    ));
}

#[test]
fn kill_all_agents_kills_live_agents() {
    let _lock = exclusive();
    let mut agents = [start(&bot("raw_hang.sh")), start(&bot("raw_grandchild.sh"))];
    let groups: Vec<i32> = agents.iter().map(pgid).collect();
    assert!(groups.iter().all(|&g| process_group_alive(g)));
    kill_all_agents();
    for agent in &mut agents {
        assert!(eventually(|| agent.exit_status().is_some()));
        assert_eq!(agent.exit_status().unwrap().signal(), Some(9));
        // Lines printed before the kill may still be queued; then the end.
        let deadline = Instant::now() + HANG_BOUND;
        let mut last = agent.recv(deadline);
        while matches!(last, Received::Line(_)) {
            last = agent.recv(deadline);
        }
        assert_eq!(last, Received::Closed);
    }
    for agent in &mut agents {
        agent.shutdown(Duration::from_millis(200));
    }
    assert!(groups.iter().all(|&g| !process_group_alive(g)));
}

#[test]
fn agent_that_never_reads_stalls_send_instead_of_blocking() {
    let _lock = shared();
    let mut agent = start(&AgentSpec::new("sleep 100000"));
    let chunk = "x".repeat(1024);
    let started = Instant::now();
    let mut outcome = Ok(());
    // 16 MB: more than any pipe buffer holds.
    for _ in 0..16 * 1024 {
        outcome = agent.send_until(&chunk, Instant::now() + Duration::from_millis(300));
        if outcome.is_err() {
            break;
        }
    }
    assert!(matches!(outcome, Err(AgentError::Stalled)), "{outcome:?}");
    assert!(started.elapsed() < HANG_BOUND);
    // The torn line cannot be continued: later sends fail at once.
    assert!(matches!(agent.send("more"), Err(AgentError::Stalled)));
}

#[test]
fn working_dir_is_applied() {
    let _lock = shared();
    let dir = tempfile::tempdir().unwrap();
    let mut agent = start(&AgentSpec {
        working_dir: Some(dir.path().to_path_buf()),
        ..AgentSpec::new("sh -c pwd")
    });
    let Received::Line(text) = agent.recv(Instant::now() + HANG_BOUND) else {
        panic!("pwd printed nothing");
    };
    assert_eq!(
        std::fs::canonicalize(text).unwrap(),
        std::fs::canonicalize(dir.path()).unwrap()
    );
}

#[test]
fn missing_working_dir_is_named() {
    let _lock = shared();
    let spec = AgentSpec {
        working_dir: Some(crate_dir().join("no-such-dir")),
        ..bot("raw_echo.sh")
    };
    let err = AgentProcess::spawn(&spec).unwrap_err();
    assert!(matches!(err, AgentError::WorkingDir { .. }), "{err:?}");
    assert!(err.to_string().contains("no-such-dir"), "{err}");
}

#[test]
fn missing_program_is_a_spawn_error_naming_the_command() {
    let _lock = shared();
    let err = AgentProcess::spawn(&AgentSpec::new("no-such-referee-bot-xyz --fast")).unwrap_err();
    assert!(matches!(err, AgentError::Spawn { .. }), "{err:?}");
    assert!(err.to_string().contains("no-such-referee-bot-xyz"), "{err}");
}

#[test]
fn unbalanced_quote_is_a_bad_command() {
    let _lock = shared();
    let err = AgentProcess::spawn(&AgentSpec::new("sh 'fixtures/bots/raw_echo.sh")).unwrap_err();
    assert!(matches!(err, AgentError::BadCommand(_)), "{err:?}");
    let err = AgentProcess::spawn(&AgentSpec::new("   ")).unwrap_err();
    assert!(matches!(err, AgentError::BadCommand(_)), "{err:?}");
}

#[test]
fn quoted_arguments_reach_the_agent_intact() {
    let _lock = shared();
    let mut agent = start(&AgentSpec::new(
        r#"sh -c 'printf "%s|%s\n" "$1" "$2"' sh "a b" 'c"d'"#,
    ));
    assert_eq!(agent.recv(Instant::now() + HANG_BOUND), line(r#"a b|c"d"#));
}
