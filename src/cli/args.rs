//! Argument groups and value parsers that several commands share. Each argument is
//! checked once, here, while clap parses: a bad value is a one-line usage error
//! (exit 2) before anything starts, whichever command it was given to.

use std::path::PathBuf;
use std::str::FromStr;
use std::time::Duration;

use clap::Args;

use super::Failure;
use crate::agent::{Isolation, Limits, SandboxMode};
use crate::builtin::Strategy;
use crate::clock::TimeControl;
use crate::game::GameId;

/// `--game`: a game id (a misspelt one gets a suggestion).
pub fn game_id(text: &str) -> Result<GameId, String> {
    GameId::parse(text).map_err(|e| e.to_string())
}

/// An agent command: any command line, or `builtin:NAME` naming a built-in agent.
pub fn agent_command(text: &str) -> Result<String, String> {
    if text.trim().is_empty() {
        return Err("an agent command cannot be empty".into());
    }
    match Strategy::from_agent_command(text) {
        Some(Err(e)) => Err(e),
        _ => Ok(text.to_string()),
    }
}

/// A `--state` as given: the state string, and the file it was read from (which
/// agents then may not see).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StateArg {
    /// The state string.
    pub text: String,
    /// The file of `@FILE`.
    pub file: Option<PathBuf>,
}

/// `--state`: a state string, or `@FILE` for the one in FILE (its first line).
pub fn state_text(text: &str) -> Result<StateArg, String> {
    match text.strip_prefix('@') {
        Some(path) => std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read {path}: {e}"))
            .map(|s| StateArg {
                text: s.lines().next().unwrap_or("").trim().to_string(),
                file: Some(PathBuf::from(path)),
            }),
        None => Ok(StateArg {
            text: text.to_string(),
            file: None,
        }),
    }
}

/// A path that exists (`--hide`).
pub fn existing_path(text: &str) -> Result<PathBuf, String> {
    let path = PathBuf::from(text);
    match path.symlink_metadata() {
        Ok(_) => Ok(path),
        Err(e) => Err(format!("cannot hide {text}: {e}")),
    }
}

/// A count that must be at least 1 (games, rounds, concurrency, limits).
pub fn positive<T>(text: &str) -> Result<T, String>
where
    T: FromStr + PartialOrd + From<u8>,
{
    match text.parse::<T>() {
        Ok(n) if n >= T::from(1) => Ok(n),
        _ => Err("expected a whole number of at least 1".to_string()),
    }
}

/// A positive, finite number of seconds, at most a million (11 days), e.g. `0.5`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Seconds(pub Duration);

impl FromStr for Seconds {
    type Err = String;

    fn from_str(text: &str) -> Result<Seconds, String> {
        match text.parse::<f64>() {
            // The parse accepts `NaN`, `inf` and `1e400`; none is a duration.
            Ok(s) if s.is_finite() && s > 0.0 && s <= 1e6 => Ok(Seconds(Duration::from_secs_f64(s))),
            _ => Err("expected a positive number of seconds, at most 1000000".to_string()),
        }
    }
}

/// `--env KEY=VALUE` or `--env KEY` (the referee's own value).
fn env_var(word: &str) -> Result<(String, String), String> {
    let (key, value) = match word.split_once('=') {
        Some((k, v)) => (k.to_string(), v.to_string()),
        None => (word.to_string(), std::env::var(word).unwrap_or_default()),
    };
    if key.is_empty() || key.contains('\0') || value.contains('\0') {
        return Err(format!("`{word}`: expected KEY=VALUE or KEY"));
    }
    Ok((key, value))
}

/// The clock of a game: `--tc`, `--st`, `--margin`.
#[derive(Debug, Args)]
pub struct ClockArgs {
    /// Time control [moves/]seconds[+increment], per seat, as in cutechess-cli
    /// (default 10+0.1; a resumed game keeps its own).
    #[arg(long, value_name = "TC", conflicts_with = "st", value_parser = |s: &str| TimeControl::parse_tc(s).map_err(|e| e.to_string()))]
    tc: Option<TimeControl>,
    /// Fixed seconds per decision instead of a clock.
    #[arg(long, value_name = "SECONDS", value_parser = |s: &str| TimeControl::parse_st(s).map_err(|e| e.to_string()))]
    st: Option<TimeControl>,
    /// Milliseconds granted past the clock before the flag falls.
    #[arg(long, value_name = "MS", default_value_t = 50)]
    margin: u64,
}

impl ClockArgs {
    /// The one `recorded` in a resumed game's header, else the control given, else
    /// 10+0.1. A resumed game keeps its control, because `verify` checks every
    /// recorded clock against the header's: a different one given is refused.
    pub fn control(&self, recorded: Option<&str>) -> Result<TimeControl, Failure> {
        match (self.st.or(self.tc), recorded) {
            (given, Some(recorded)) => {
                let control = TimeControl::parse_recorded(recorded).map_err(Failure::usage)?;
                match given {
                    Some(given) if given != control => Err(Failure::usage(anyhow::anyhow!(
                        "the record's game is played under {recorded}, and a resumed game keeps its \
                         time control (given: {given})"
                    ))),
                    _ => Ok(control),
                }
            }
            (Some(given), None) => Ok(given),
            (None, None) => Ok(TimeControl::Clock {
                moves: None,
                base: Duration::from_secs(10),
                increment: Duration::from_millis(100),
            }),
        }
    }

    /// The control `--tc` or `--st` gave, if either was given.
    pub fn given(&self) -> Option<TimeControl> {
        self.st.or(self.tc)
    }

    /// The grace past the clock.
    pub fn margin(&self) -> Duration {
        Duration::from_millis(self.margin)
    }
}

/// How agent processes are started and bounded: time to start and to quit, resource
/// limits, environment.
#[derive(Debug, Args)]
pub struct AgentArgs {
    /// Seconds an agent has for the handshake, and again to be ready for the game.
    #[arg(long, value_name = "SECONDS", default_value = "10")]
    startup_timeout: Seconds,
    /// Seconds an agent has to exit after `quit` before it is killed.
    #[arg(long, value_name = "SECONDS", default_value = "1")]
    quit_grace: Seconds,
    /// Address-space limit per agent process, in MiB.
    #[arg(long, value_name = "MIB", value_parser = positive::<u64>)]
    max_memory: Option<u64>,
    /// CPU-time limit per agent process, in seconds (for the whole game).
    #[arg(long, value_name = "SECONDS", value_parser = positive::<u64>)]
    max_cpu: Option<u64>,
    /// Hide this file or directory from every sandboxed agent, by whatever path a
    /// bound directory would show it (repeatable). Records, logs, keys, state files
    /// and a tournament's files are hidden without it.
    #[arg(long, value_name = "PATH", value_parser = existing_path)]
    hide: Vec<PathBuf>,
    /// Environment variable for every agent: KEY=VALUE, or KEY to pass the referee's
    /// value; repeatable. Agents get nothing else but PATH.
    #[arg(long = "env", value_name = "KEY[=VALUE]", value_parser = env_var)]
    env: Vec<(String, String)>,
    /// Isolate every agent in a sandbox (bubblewrap): auto uses it where the machine
    /// supports it and says so when it does not; require refuses to start without it.
    #[arg(long, value_enum, default_value = "auto")]
    sandbox: SandboxMode,
    /// Let sandboxed agents use the network (by default they have none).
    #[arg(long)]
    allow_network: bool,
}

/// The warning that the bots run without a sandbox, said at most once: when the
/// first game is under way, so that a run refused before it starts says only why,
/// in one line; or, once [`arm`](Self::arm)ed, when it is dropped, so that a run
/// that fails or is interrupted after its agents may have started still says it.
#[derive(Debug)]
pub struct UnisolatedWarning {
    /// The text, until it is said.
    text: Option<String>,
    /// Whether agents may have started, so that dropping it says it.
    armed: bool,
}

impl UnisolatedWarning {
    /// Prints the warning on stderr, the first time only.
    pub fn say(&mut self) {
        if let Some(warning) = self.text.take() {
            eprintln!("{warning}");
        }
    }

    /// Marks the point past which agents may start: from there on, the warning is
    /// said however the run ends.
    pub fn arm(&mut self) {
        self.armed = true;
    }
}

impl Drop for UnisolatedWarning {
    fn drop(&mut self) {
        if self.armed {
            self.say();
        }
    }
}

impl AgentArgs {
    /// The time an agent has for each step of the start-up.
    pub fn startup(&self) -> Duration {
        self.startup_timeout.0
    }

    /// The time an agent has to exit after `quit`.
    pub fn quit_grace(&self) -> Duration {
        self.quit_grace.0
    }

    /// The resource limits of every agent process.
    pub fn limits(&self) -> Limits {
        Limits {
            memory_bytes: self.max_memory.map(|mib| mib.saturating_mul(1 << 20)),
            cpu_seconds: self.max_cpu,
        }
    }

    /// How agents are isolated under `--sandbox`, and the warning to give once a
    /// game is under way when `auto` found no sandbox on this machine.
    pub fn isolation(&self) -> Result<(Isolation, UnisolatedWarning), Failure> {
        let isolation = crate::agent::detect_sandbox(self.sandbox).map_err(Failure::usage)?;
        let warning = match (&isolation, self.sandbox) {
            (Isolation::NotIsolated(why), SandboxMode::Auto) => Some(format!(
                "referee: warning: the bots are not isolated from the referee, its files or each other: {why} (--sandbox none silences this)"
            )),
            _ => None,
        };
        Ok((
            isolation,
            UnisolatedWarning {
                text: warning,
                armed: false,
            },
        ))
    }

    /// What `--hide` adds to what no agent may see.
    pub fn hidden(&self) -> Vec<crate::agent::HiddenPath> {
        self.hide.iter().map(crate::agent::HiddenPath::existing).collect()
    }

    /// Whether sandboxed agents keep the network.
    pub fn network(&self) -> bool {
        self.allow_network
    }

    /// The environment agents get: `PATH`, then every `--env` in order (a later one
    /// replaces an earlier one of the same key).
    pub fn env(&self) -> Vec<(String, String)> {
        let mut env = crate::agent::AgentSpec::new("").env;
        for (key, value) in &self.env {
            env.retain(|(k, _)| k != key);
            env.push((key.clone(), value.clone()));
        }
        env
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_are_positive_finite_and_bounded() {
        assert_eq!("0.5".parse::<Seconds>(), Ok(Seconds(Duration::from_millis(500))));
        for bad in ["0", "-1", "NaN", "nan", "inf", "-inf", "1e400", "1e7", "", "x"] {
            assert!(bad.parse::<Seconds>().is_err(), "{bad}");
        }
    }

    #[test]
    fn counts_start_at_one() {
        assert_eq!(positive::<usize>("3"), Ok(3));
        for bad in ["0", "-1", "x", ""] {
            assert!(positive::<usize>(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn agent_commands_name_known_built_ins() {
        assert!(agent_command("builtin:greedy").is_ok());
        assert!(agent_command("python3 bot.py").is_ok());
        let e = agent_command("builtin:gredy").unwrap_err();
        assert!(e.contains("did you mean `builtin:greedy`"), "{e}");
        assert!(agent_command(" ").is_err());
    }
}
