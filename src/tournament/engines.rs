//! Engine reuse: each worker keeps, per entrant, the agent processes its last games
//! ended with in good standing, and seats them again in its next games (two for an
//! entrant playing itself), as fastchess's engine cache does. Its own room because it
//! is the one state a worker carries from game to game; the match side of it (what a
//! kept agent is told, when it may serve) is `referee::reuse`.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::definition::Definition;
use super::schedule::Scheduled;
use super::{io_err, TournamentError};
use crate::referee::KeptAgent;

/// When an entrant's agent process is started again (`--restart`, `restart=`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Restart {
    /// Before every game: fresh processes each time.
    Always,
    /// Only after a game the agent forfeited (crash, time, protocol, illegal action),
    /// or when it does not answer `readyok` for the next one.
    #[default]
    OnFailure,
}

impl Restart {
    /// The word used on the command line and in files.
    pub fn as_str(self) -> &'static str {
        match self {
            Restart::Always => "always",
            Restart::OnFailure => "on-failure",
        }
    }

    /// Parses `always` or `on-failure`.
    pub fn parse(word: &str) -> Result<Restart, String> {
        match word {
            "always" => Ok(Restart::Always),
            "on-failure" => Ok(Restart::OnFailure),
            other => Err(format!("unknown restart policy `{other}` (always, on-failure)")),
        }
    }
}

/// One worker's kept agents, each with the entrant it plays for.
#[derive(Debug, Default)]
pub(super) struct Engines {
    kept: Vec<(usize, KeptAgent)>,
    /// The worker's own temporary directory of stderr files, once one is needed.
    scratch: Option<PathBuf>,
}

/// Tells apart the temporary directories of the workers of one process.
static WORKERS: AtomicUsize = AtomicUsize::new(0);

impl Engines {
    /// Where the stderr of the `nth` agent of entrant `who` in a game goes (`nth` is 1
    /// only where an entrant holds two seats): one file per entrant and worker, so a
    /// kept agent, whose command line must not change, writes to the same file from
    /// game to game, and a fresh one appends to it.
    pub(super) fn stderr_log(&mut self, who: usize, nth: usize) -> Result<PathBuf, TournamentError> {
        let dir = match &self.scratch {
            Some(dir) => dir.clone(),
            None => {
                let n = WORKERS.fetch_add(1, Ordering::Relaxed);
                let dir = std::env::temp_dir().join(format!("referee-{}-worker-{n}", std::process::id()));
                std::fs::create_dir_all(&dir).map_err(io_err(&dir))?;
                self.scratch.insert(dir).clone()
            }
        };
        Ok(dir.join(format!("entrant{who}-{nth}.stderr")))
    }

    /// The worker's directory of stderr files, if it has one.
    pub(super) fn scratch(&self) -> Option<&Path> {
        self.scratch.as_deref()
    }

    /// The kept agents for the seats of `game` (by seat; `None` where there is none),
    /// and which seats' agents are to be kept after it (their entrant's policy, or
    /// `default`, is `on-failure`).
    pub(super) fn seat(
        &mut self,
        def: &Definition,
        game: &Scheduled,
        default: Restart,
    ) -> (Vec<Option<KeptAgent>>, Vec<bool>) {
        let mut agents = Vec::with_capacity(game.seats.len());
        let mut keep = Vec::with_capacity(game.seats.len());
        for &who in &game.seats {
            let policy = def.entrants.get(who).and_then(|e| e.restart).unwrap_or(default);
            let reuse = policy == Restart::OnFailure;
            let found = self.kept.iter().position(|(e, _)| *e == who).filter(|_| reuse);
            agents.push(found.map(|i| self.kept.swap_remove(i).1));
            keep.push(reuse);
        }
        (agents, keep)
    }

    /// Takes back the agents a game handed back, by seat.
    pub(super) fn put_back(&mut self, game: &Scheduled, agents: Vec<Option<KeptAgent>>) {
        for (&who, agent) in game.seats.iter().zip(agents) {
            if let Some(agent) = agent {
                self.kept.push((who, agent));
            }
        }
    }

    /// Tells every kept agent `quit` and stops it (each has `grace` to exit, all at
    /// once), when the worker has no more games.
    pub(super) fn retire(self, grace: Duration) {
        std::thread::scope(|scope| {
            for (_, agent) in self.kept {
                scope.spawn(move || agent.retire(grace));
            }
        });
        if let Some(dir) = self.scratch {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}
