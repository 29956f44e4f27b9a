//! Helpers shared by the integration tests (`cli_match`, `cli_serve`, `hostile`,
//! `misbehaving_agents`, `pbm`, `tournament`, the Python bot tests …): running the
//! binary, the bots of `fixtures/bots/`, driving a `serve` session, reading and
//! re-sealing records, seeded generators, and looking for processes left behind.
//! Each helper exists here once; a test file keeps only what is its own.
//!
//! Each test file uses only some of them.
#![allow(dead_code)]

pub mod mail;
pub mod smtp;
pub mod viewer;

#[allow(unused_imports)]
pub use smtp::Smtp;

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command as StdCommand, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use referee::record::{Line, RecordWriter};
use serde_json::Value;

/// Far above what any command here needs; only a hang gets near it.
pub const HANG_BOUND: Duration = Duration::from_secs(300);

/// The `referee` binary under test.
pub fn exe() -> &'static str {
    env!("CARGO_BIN_EXE_referee")
}

/// The binary's path quoted for an `--agent` command line.
pub fn quoted_exe() -> String {
    shell_words::quote(exe()).into_owned()
}

/// A command running the binary in `dir`, with a timeout that only a hang reaches.
pub fn referee_in(dir: &Path) -> assert_cmd::Command {
    let mut cmd = assert_cmd::Command::new(exe());
    cmd.current_dir(dir).timeout(HANG_BOUND);
    cmd
}

/// A bot of `fixtures/bots/` (its README lists them), by absolute path: agents start
/// in a directory of their own.
pub fn fixture_bot(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/bots")
        .join(name)
}

/// An `--agent` command line: `sh <fixture bot> <args…>`, every word quoted.
pub fn bot_command<S: AsRef<str>>(name: &str, args: &[S]) -> String {
    let script = fixture_bot(name);
    let mut words = vec!["sh".to_string(), script.to_string_lossy().into_owned()];
    words.extend(args.iter().map(|a| a.as_ref().to_string()));
    shell_words::join(words)
}

/// An `--agent` command line for a built-in agent of the binary under test.
pub fn builtin_command(strategy: &str, seed: u64) -> String {
    format!("{} agent {strategy} --seed {seed}", quoted_exe())
}

/// The absolute path of a working `python3`, or `None` (the caller skips what needs it).
pub fn python3() -> Option<String> {
    let out = StdCommand::new("python3")
        .args(["-c", "import sys; print(sys.executable)"])
        .output()
        .ok()?;
    let path = text(&out.stdout).trim().to_string();
    (out.status.success() && !path.is_empty()).then_some(path)
}

/// Whether `python3` can be run (for the example bots and the bots of `fixtures/bots/`
/// in Python); prints why the Python part of a test is skipped when not.
pub fn have_python() -> bool {
    let ok = python3().is_some();
    if !ok {
        eprintln!("note: python3 cannot be run (not on PATH?): skipping the Python part of this test");
    }
    ok
}

/// How long a [`Serve`] session may live: far above what any test needs, so that only
/// a hang reaches it.
pub const SERVE_BOUND: Duration = Duration::from_secs(300);

/// A `referee serve` session (protocol.md §2), killed if it outlives [`SERVE_BOUND`].
pub struct Serve {
    child: Child,
    input: ChildStdin,
    output: BufReader<ChildStdout>,
    _watchdog: mpsc::Sender<()>,
}

impl Serve {
    /// Starts a session of the binary under test.
    pub fn start() -> Serve {
        Serve::start_with(&[])
    }

    /// Starts a session with `flags` after `serve` (`--json`).
    pub fn start_with(flags: &[&str]) -> Serve {
        let mut child = StdCommand::new(exe())
            .arg("serve")
            .args(flags)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let (tx, rx) = mpsc::channel::<()>();
        let pid = nix::unistd::Pid::from_raw(child.id() as i32);
        // Dropping the session drops `tx`, which ends the watchdog without a kill.
        std::thread::spawn(move || {
            if rx.recv_timeout(SERVE_BOUND) == Err(mpsc::RecvTimeoutError::Timeout) {
                let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGKILL);
            }
        });
        Serve {
            input: child.stdin.take().unwrap(),
            output: BufReader::new(child.stdout.take().unwrap()),
            child,
            _watchdog: tx,
        }
    }

    /// Sends one command and returns its data lines; panics unless it ends in `ok`.
    pub fn ask(&mut self, command: &str) -> Vec<String> {
        self.send(format!("{command}\n").as_bytes());
        let (data, last) = self.answer();
        assert_eq!(last, "ok", "`{command}` -> {last}");
        data
    }

    /// Writes `bytes` to the session's input as they are.
    pub fn send(&mut self, bytes: &[u8]) {
        self.input.write_all(bytes).unwrap();
        self.input.flush().unwrap();
    }

    /// Reads one answer: its data lines and its final line (`ok` or `error …`).
    pub fn answer(&mut self) -> (Vec<String>, String) {
        let mut data = Vec::new();
        loop {
            let mut line = String::new();
            let n = self.output.read_line(&mut line).unwrap();
            assert!(n > 0, "serve ended while answering (data so far: {data:?})");
            let line = line.trim_end().to_string();
            if line == "ok" || line.starts_with("error ") {
                return (data, line);
            }
            data.push(line);
        }
    }

    /// Sends one command and reads the one line that answers it (`serve --json`).
    pub fn line(&mut self, command: &str) -> String {
        self.line_of(format!("{command}\n").as_bytes())
    }

    /// Sends `bytes` as they are and reads one line of answer (`serve --json`).
    pub fn line_of(&mut self, bytes: &[u8]) -> String {
        let command = String::from_utf8_lossy(bytes).into_owned();
        self.send(bytes);
        let mut line = String::new();
        let n = self.output.read_line(&mut line).unwrap();
        assert!(
            n > 0 && line.ends_with('\n'),
            "serve ended while answering `{command}`"
        );
        line.pop();
        line
    }

    /// The process id of the session.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The crate's SplitMix64 generator (`referee::rng::Rng`), drawn from by plain modulo:
/// the streams of the tests that use it (kill moments, games by mail) stay as they were.
pub struct SplitMix64(referee::rng::Rng);

impl SplitMix64 {
    /// A generator seeded with `seed`.
    pub fn new(seed: u64) -> SplitMix64 {
        SplitMix64(referee::rng::Rng::new(seed))
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0.next_u64()
    }

    /// A number below `n`.
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }

    /// One of `items`.
    pub fn pick<'a>(&mut self, items: &'a [String]) -> &'a String {
        &items[self.below(items.len())]
    }

    /// Uniform in [0, 1).
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// A small deterministic generator (xorshift64*), so that failures reproduce.
pub struct Rng(pub u64);

impl Rng {
    /// A number below `n`.
    pub fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 33) as usize % n
    }
}

/// The words of `pbm new` for a two-seat Telka game between seats `alice` and `bob`,
/// who take mail at `addresses`; the caller adds any other flags and the record.
pub fn mail_game_args(addresses: [&str; 2]) -> Vec<&str> {
    let [alice, bob] = addresses;
    vec![
        "pbm",
        "new",
        "--game",
        "telka",
        "--seat",
        "alice",
        "--seat",
        "bob",
        "--address",
        alice,
        "--address",
        bob,
    ]
}

/// The error lines of a run's stderr: those of the referee (`referee: `), but not its
/// warnings (a run that played games without bubblewrap says so once).
pub fn error_lines(stderr: &str) -> Vec<&str> {
    stderr
        .lines()
        .filter(|l| l.starts_with("referee:") && !l.starts_with("referee: warning:"))
        .collect()
}

/// Output as text.
pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The lines of a record, each parsed as JSON.
pub fn record_lines(path: &Path) -> Vec<Value> {
    let body = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("cannot read record {}: {e}", path.display()));
    body.lines()
        .enumerate()
        .map(|(i, l)| {
            serde_json::from_str(l).unwrap_or_else(|e| panic!("record line {} is not JSON ({e}): {l}", i + 1))
        })
        .collect()
}

/// The rows of a case file (`fixtures/*/cases.txt`): each line that is neither blank
/// nor a `#` comment, split at ` | ` into `fields` trimmed fields, with its line number.
pub fn case_rows(text: &str, fields: usize) -> Vec<(usize, Vec<&str>)> {
    let mut rows = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let row: Vec<&str> = line.split(" | ").map(str::trim).collect();
        assert_eq!(
            row.len(),
            fields,
            "cases.txt:{}: expected {fields} fields: {raw}",
            i + 1
        );
        rows.push((i + 1, row));
    }
    rows
}

/// The `type` member of a record line.
pub fn kind(line: &Value) -> &str {
    line["type"].as_str().unwrap_or("")
}

/// The `action` members of the action lines, in order.
pub fn actions(lines: &[Value]) -> Vec<String> {
    lines
        .iter()
        .filter(|l| kind(l) == "action")
        .map(|l| {
            l["action"]
                .as_str()
                .expect("an action line has an action")
                .to_string()
        })
        .collect()
}

/// The places of the result line (the record's last line, which must be a result).
pub fn places(lines: &[Value]) -> Vec<u64> {
    let last = lines.last().expect("a record has lines");
    assert_eq!(kind(last), "result", "the last line is not a result: {last}");
    last["places"]
        .as_array()
        .expect("places is an array")
        .iter()
        .map(|p| p.as_u64().expect("a place is a number"))
        .collect()
}

/// Seals record lines (JSON objects; a `hash` member is dropped) into a fresh hash
/// chain by the rule of protocol.md §4, as raw lines with their newlines: a record
/// edited behind its hashes, so that the edit reaches the checks of the rules.
pub fn sealed(lines: &[Value]) -> Vec<Vec<u8>> {
    let mut prev = referee::record::GENESIS.to_string();
    lines
        .iter()
        .map(|line| {
            let mut line = line.clone();
            line.as_object_mut()
                .expect("a record line is an object")
                .shift_remove("hash");
            let body = serde_json::to_string(&line).expect("JSON");
            let hash = referee::record::chain_hash(&prev, body.as_bytes());
            let open = body.strip_suffix('}').expect("an object ends with `}`");
            prev = hash;
            format!("{open},\"hash\":\"{prev}\"}}\n").into_bytes()
        })
        .collect()
}

/// The lines of a record's text, typed, header first (their hashes are left to
/// `verify`: here only the bodies are read).
pub fn typed_lines(body: &str) -> Vec<Line> {
    body.lines()
        .map(|l| {
            let (json, _) = referee::record::unseal(l).expect("a sealed line");
            serde_json::from_str(&json).expect("a record line")
        })
        .collect()
}

/// Writes the record at `from` to `to` (which may be `from`) with `edit` applied to its
/// typed lines, every line sealed again by the crate's own writer so that the hash
/// chain is intact: what a forger, or a copy from elsewhere, leaves.
pub fn reseal(from: &Path, to: &Path, edit: impl FnOnce(&mut Vec<Line>)) {
    let body = std::fs::read_to_string(from).unwrap_or_else(|e| panic!("{}: {e}", from.display()));
    let mut lines = typed_lines(&body);
    edit(&mut lines);
    let mut w = RecordWriter::new(Vec::new());
    for line in &lines {
        w.write(line).expect("written to memory");
    }
    std::fs::write(to, w.into_inner()).unwrap_or_else(|e| panic!("{}: {e}", to.display()));
}

/// Runs `referee verify` on `path`; returns (exit code, stdout, stderr).
pub fn verify(path: &Path) -> (i32, String, String) {
    let dir = path.parent().unwrap_or(Path::new("."));
    let out = referee_in(dir)
        .arg("verify")
        .arg(path)
        .output()
        .expect("run referee verify");
    (
        out.status.code().unwrap_or(-1),
        text(&out.stdout),
        text(&out.stderr),
    )
}

/// Asserts that `referee verify` accepts the record and returns its stdout.
pub fn assert_verifies(path: &Path) -> String {
    let (code, stdout, stderr) = verify(path);
    assert_eq!(code, 0, "verify {} failed: {stderr}", path.display());
    assert!(stdout.contains(": ok,"), "verify did not say ok: {stdout}");
    stdout
}

/// The VmHWM (peak resident set) of a running process, in KiB; `None` once it has
/// been reaped (or where there is no `/proc`).
pub fn peak_rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Command lines (arguments joined by spaces) of the processes, other than this one,
/// whose command line contains any of `patterns`.
pub fn processes_matching(patterns: &[&str]) -> Vec<String> {
    let me = std::process::id().to_string();
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return found;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if !name.bytes().all(|b| b.is_ascii_digit()) || name == me {
            continue;
        }
        // A process may exit while we look; a zombie has an empty command line.
        let Ok(raw) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let cmdline = text(&raw).replace('\0', " ");
        if patterns.iter().any(|p| cmdline.contains(p)) {
            found.push(format!("pid {name}: {}", cmdline.trim_end()));
        }
    }
    found
}

/// The processes matching `patterns` still there after up to `grace`; each is
/// SIGKILLed (they are the caller's own), so that a failure leaves nothing running.
pub fn kill_leftovers(patterns: &[&str], grace: Duration) -> Vec<String> {
    let until = Instant::now() + grace;
    loop {
        let left = processes_matching(patterns);
        if left.is_empty() || Instant::now() >= until {
            for entry in &left {
                let pid = entry.trim_start_matches("pid ").split(':').next().unwrap_or("");
                if let Ok(pid) = pid.parse::<i32>() {
                    let _ =
                        nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), nix::sys::signal::SIGKILL);
                }
            }
            return left;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Asserts that no process matching `patterns` is left. Killed processes may take a
/// moment to disappear, so this waits (up to a bound only a survivor reaches).
pub fn assert_no_process_left(patterns: &[&str]) {
    let until = Instant::now() + HANG_BOUND;
    loop {
        let left = processes_matching(patterns);
        if left.is_empty() {
            return;
        }
        if Instant::now() >= until {
            panic!("processes left behind: {left:#?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Whether agents are sandboxed on this machine (bubblewrap works here); prints why a
/// test of the sandbox is skipped when not. `.ci/run` installs bubblewrap, so in CI
/// these tests run.
pub fn sandbox_available() -> bool {
    static AVAILABLE: std::sync::OnceLock<Result<(), String>> = std::sync::OnceLock::new();
    let result = AVAILABLE.get_or_init(|| {
        let out = StdCommand::new("bwrap")
            .args(["--ro-bind", "/", "/", "--unshare-all", "--", "true"])
            .output()
            .map_err(|e| format!("bwrap cannot be run: {e}"))?;
        if out.status.success() {
            Ok(())
        } else {
            Err(format!("bwrap fails here: {}", text(&out.stderr).trim()))
        }
    });
    match result {
        Ok(()) => true,
        Err(why) => {
            eprintln!("note: skipping a sandbox test: {why} (install bubblewrap)");
            false
        }
    }
}

/// The actions of a `legal:` line, whether grouped (`a1[-c3 -c3-a5] e2[e3 e4]`:
/// each group is a head followed by the tails it takes) or plain.
pub fn expand_legal(line: &str) -> Vec<String> {
    let mut actions = Vec::new();
    let mut rest = line.trim();
    while !rest.is_empty() {
        let word_end = rest.find([' ', '[']).unwrap_or(rest.len());
        if rest[word_end..].starts_with('[') {
            let head = &rest[..word_end];
            let close = word_end + rest[word_end..].find(']').expect("a group is closed");
            actions.extend(
                rest[word_end + 1..close]
                    .split(' ')
                    .map(|tail| format!("{head}{tail}")),
            );
            rest = rest[close + 1..].trim_start();
        } else {
            actions.push(rest[..word_end].to_string());
            rest = rest[word_end..].trim_start();
        }
    }
    actions
}

/// The legal actions a message offers its seat.
pub fn legal_of(message: &str) -> Vec<String> {
    let line = message
        .lines()
        .find_map(|l| l.strip_prefix("legal: "))
        .unwrap_or_else(|| panic!("no legal: line in a message to the seat to act:\n{message}"));
    expand_legal(line)
}

/// A small base64 encoder, so the test writes its mail without a crate.
pub fn base64_encode(bytes: &[u8]) -> String {
    const A: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let b = [chunk[0], *chunk.get(1).unwrap_or(&0), *chunk.get(2).unwrap_or(&0)];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(A[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}
