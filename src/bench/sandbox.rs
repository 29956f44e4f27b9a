//! (f) What the sandbox costs: the start of one agent (from spawning it to its
//! `protocolok`) and an action of a replayed game, each with and without it, timed
//! in alternation so that the machine's drift falls on both alike.

use std::path::Path;
use std::time::{Duration, Instant};

use serde::Serialize;

use super::{median_by, plain, replay_once, Pin, Placement};
use crate::agent::{AgentProcess, AgentSpec, Isolation, Received, Sandbox};
use crate::game::{GameId, Options};

/// The sandbox's figures; absent where this machine has no sandbox.
#[derive(Clone, Debug, Serialize)]
pub struct SandboxFigures {
    /// The sandbox, as a record header names it.
    pub sandbox: String,
    /// Milliseconds from spawning a built-in agent to its `protocolok`: plain,
    /// then sandboxed (medians).
    pub start_ms: [f64; 2],
    /// µs per action of the replayed game: plain, then sandboxed (medians).
    pub us_per_action: [f64; 2],
    /// The game replayed.
    pub game: String,
}

/// Measures the sandbox with `starts` agent starts and `replays` replays of
/// `record` each way; `None` when agents cannot be sandboxed here.
pub fn measure(
    exe: &str,
    dir: &Path,
    record: &Path,
    options: &Options,
    starts: usize,
    replays: usize,
) -> std::io::Result<Option<SandboxFigures>> {
    let sandboxed = match crate::agent::detect_sandbox(crate::agent::SandboxMode::Auto) {
        Ok(i @ Isolation::Sandboxed(_)) => i,
        _ => return Ok(None),
    };
    let both = [plain(), sandboxed.clone()];
    let mut start = [Vec::new(), Vec::new()];
    for _ in 0..starts.max(1) {
        for (k, isolation) in both.iter().enumerate() {
            start[k].push(start_ms(exe, isolation)?);
        }
    }
    let mut per_action = [Vec::new(), Vec::new()];
    let pin = Pin::new(None, Placement::Unpinned);
    for _ in 0..replays.max(1) {
        for (k, isolation) in both.iter().enumerate() {
            let r = replay_once(exe, dir, record, GameId::Telka, options, pin, isolation)?;
            if r.actions > 0 {
                per_action[k].push(r.wall.as_secs_f64() * 1e6 / r.actions as f64);
            }
        }
    }
    let median = |v: &[f64]| median_by(v, |x| *x).unwrap_or(0.0);
    Ok(Some(SandboxFigures {
        sandbox: sandboxed.describe(),
        start_ms: [median(&start[0]), median(&start[1])],
        us_per_action: [median(&per_action[0]), median(&per_action[1])],
        game: format!("telka {options}"),
    }))
}

/// Milliseconds from spawning `referee agent random` (isolated as `isolation` says)
/// to reading its `protocolok`.
fn start_ms(exe: &str, isolation: &Isolation) -> std::io::Result<f64> {
    let mut spec = AgentSpec::new(format!("{exe} agent random"));
    if let Isolation::Sandboxed(bubblewrap) = isolation {
        spec.sandbox = Some(Sandbox::new(bubblewrap.clone(), Default::default(), false, None));
    }
    let begun = Instant::now();
    let mut agent = AgentProcess::spawn(&spec).map_err(std::io::Error::other)?;
    agent.send("protocol 1").map_err(std::io::Error::other)?;
    let deadline = begun + Duration::from_secs(30);
    loop {
        match agent.recv(deadline) {
            Received::Line(l) if l == "protocolok" => break,
            Received::Line(_) => {}
            other => return Err(std::io::Error::other(format!("no protocolok: {other:?}"))),
        }
    }
    let ms = begun.elapsed().as_secs_f64() * 1e3;
    agent.shutdown(Duration::from_secs(1));
    Ok(ms)
}
