//! (a) The floor: a bare line ping-pong with `cat` over pipes, and (a') the same
//! round trip through the referee's own I/O path (agent processes, the record append,
//! the check for unasked lines, the wait). Its own room because it is what every
//! per-action figure is divided by: the physical cost of a round trip, without the
//! referee's work on the game.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::cpus::{thread_cpu_time, Pin};
use super::median_by;
use crate::agent::{AgentProcess, AgentSpec, Received};

/// A view line of about the usual length, for the round trips.
const PING: &str = "view 7rrrr/7rrrr/9rr/9rr/11/11/11/bb9/bb9/bbbb7/bbbb7 b 0";

/// Batches each round-trip figure is the median of.
pub(super) const BATCHES: usize = 5;

/// `cat` at the other end of two pipes: the peer of the floor's ping-pong. It lives
/// for a whole placement, so that a batch of the floor can be taken just before each
/// replay of a game: the machine's speed drifts over seconds, and a ratio of two
/// figures taken far apart measures the drift as much as the referee.
pub(super) struct Cat {
    child: std::process::Child,
    input: Option<std::process::ChildStdin>,
    output: BufReader<std::process::ChildStdout>,
    back: String,
}

impl Cat {
    /// Starts `cat` where `pin` puts agents, and moves this thread where it puts the
    /// referee.
    pub(super) fn start(pin: Pin<'_>) -> std::io::Result<Cat> {
        pin.for_agents()?;
        let mut child = Command::new("cat")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()?;
        pin.for_referee()?;
        let input = child.stdin.take();
        let output = BufReader::new(child.stdout.take().expect("piped"));
        Ok(Cat {
            child,
            input,
            output,
            back: String::new(),
        })
    }

    /// (a) One batch of `n` line round trips: µs per round trip, and the CPU time this
    /// side spent per round trip.
    pub(super) fn batch(&mut self, n: usize) -> std::io::Result<RoundTrip> {
        let line = format!("{PING}\n");
        let input = self.input.as_mut().expect("open until dropped");
        let batch = Batch::start();
        for _ in 0..n {
            input.write_all(line.as_bytes())?;
            input.flush()?;
            self.back.clear();
            self.output.read_line(&mut self.back)?;
        }
        Ok(batch.per_trip(n))
    }
}

impl Drop for Cat {
    fn drop(&mut self) {
        // End of input ends `cat`.
        self.input = None;
        let _ = self.child.wait();
    }
}

/// A round trip's wall time and this side's CPU time, µs.
#[derive(Clone, Copy, Debug)]
pub(super) struct RoundTrip {
    pub(super) wall: f64,
    pub(super) cpu: f64,
}

/// The clocks at the start of a batch of round trips.
struct Batch {
    wall: Instant,
    cpu: Duration,
}

impl Batch {
    fn start() -> Batch {
        Batch {
            wall: Instant::now(),
            cpu: thread_cpu_time(),
        }
    }

    /// Per round trip since the start, over `n` round trips.
    fn per_trip(&self, n: usize) -> RoundTrip {
        let n = n.max(1) as f64;
        RoundTrip {
            wall: self.wall.elapsed().as_secs_f64() * 1e6 / n,
            cpu: thread_cpu_time().saturating_sub(self.cpu).as_secs_f64() * 1e6 / n,
        }
    }
}

/// (a') The same round trip through the referee's own I/O path, with the system calls
/// an action needs whatever the game. With `whole`, as in a two-seat game: two `cat`
/// agents take turns, the record line is appended to a file before each message, the
/// seat about to be asked is read for lines it printed unasked, and then its line is
/// awaited (poll, read). What the referee costs above this is its work on the game itself. Without `whole`, one agent and only
/// the write and the wait: the agent I/O alone.
pub(super) fn io_path_round_trip(
    n: usize,
    dir: &Path,
    pin: Pin<'_>,
    whole: bool,
) -> std::io::Result<RoundTrip> {
    pin.for_agents()?;
    let spawn = || AgentProcess::spawn(&AgentSpec::new("cat")).map_err(std::io::Error::other);
    let mut agents = if whole {
        vec![spawn()?, spawn()?]
    } else {
        vec![spawn()?]
    };
    let seats = agents.len();
    pin.for_referee()?;
    let path = dir.join("io-path.jsonl");
    let mut record = std::fs::File::create(&path)?;
    let line = format!(
        "{{\"type\":\"action\",\"ply\":1,\"seat\":1,\"action\":\"{PING}\",\"events\":[],\"hash\":\"{:064}\"}}\n",
        0
    );
    let mut batches = Vec::with_capacity(BATCHES);
    for _ in 0..BATCHES {
        let batch = Batch::start();
        for k in 0..n / BATCHES {
            // The two agents take turns, as seats do; one agent answers every time.
            let asked = &mut agents[k % seats];
            if whole {
                record.write_all(line.as_bytes())?;
                if asked.try_recv().is_some() {
                    return Err(std::io::Error::other("cat answered nothing it was asked"));
                }
            }
            asked.send_lines([PING]).map_err(std::io::Error::other)?;
            match asked.recv(Instant::now() + Duration::from_secs(10)) {
                Received::Line(_) => {}
                other => return Err(std::io::Error::other(format!("cat: {other:?}"))),
            }
        }
        batches.push(batch.per_trip(n / BATCHES));
    }
    for agent in &mut agents {
        agent.shutdown(Duration::from_secs(1));
    }
    let _ = std::fs::remove_file(path);
    Ok(median_by(&batches, |b| b.wall).expect("BATCHES > 0"))
}
