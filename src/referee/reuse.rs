//! Agents kept between matches (a tournament's engine reuse): what a kept agent
//! carries from the match it was started for, whether it may serve a seat of the next
//! one, and its renewal there (`newgame` again, `isready` → `readyok`). Its own room
//! because it is the only way an agent process outlives a match; protocol.md §1.3
//! says what such an agent is told.

use std::time::{Duration, Instant};

use super::config::place_agent;
use super::scratch::PrivateDir;
use super::session::{AgentSession, Forfeit};
use super::{MatchConfig, MatchError, SeatAgent};
use crate::agent::{AgentSpec, Hidden, Isolation, Stopped};
use crate::game::{GameId, Options, Seat};

/// Where an agent runs, as decided when it was started: what a later match must
/// agree with to reuse it.
#[derive(Debug)]
pub(super) struct Place {
    /// The spec as the match was given it, before it was placed (sandbox, cwd).
    spec: AgentSpec,
    /// The options it was last sent.
    options: Vec<(String, String)>,
    /// The seed a built-in agent plays its next game from (its command's).
    seed: Option<u64>,
    /// A seed to tell the built-in agent before its next `newgame`.
    reseed: Option<u64>,
    /// What its sandbox hides; `None` when it is not sandboxed.
    hidden: Option<Hidden>,
    /// Whether its sandbox keeps the network.
    network: bool,
    /// Its private working directory outside a sandbox, given back when it goes, and
    /// the seat it was made for.
    scratch: Option<(Seat, PrivateDir)>,
}

impl Drop for Place {
    fn drop(&mut self) {
        // The agent is stopped first: `KeptAgent` and the match drop sessions first.
        if let Some((seat, dir)) = self.scratch.take() {
            super::scratch::give_back(seat, dir);
        }
    }
}

/// An agent process kept alive after a match, for another (see [`super::play_match_keeping`]).
/// Dropping it kills its process group and gives its private directory back (for
/// the next agent this thread starts for that seat, see `scratch`).
#[derive(Debug)]
pub struct KeptAgent {
    // Declared first so that it is dropped (its process killed) before its directory.
    session: AgentSession,
    place: Place,
}

impl KeptAgent {
    /// The command of the game it last served: the command it was started with, or
    /// for a reseeded built-in agent the same one with that game's seed.
    pub fn command(&self) -> &str {
        &self.place.spec.command
    }

    /// Sends `quit`, gives the agent `grace` to exit, then stops it; its private
    /// directory goes with it (no later agent of this thread is to come).
    pub fn retire(mut self, grace: Duration) -> Stopped {
        let stopped = self.session.quit(grace);
        if let Some((_, dir)) = self.place.scratch.take() {
            dir.remove();
        }
        stopped
    }
}

/// Starts seat `seat`'s agent afresh: its place (sandbox or private directory), its
/// logs, its process.
pub(super) fn start_fresh(
    config: &MatchConfig,
    agent: &SeatAgent,
    seat: Seat,
) -> Result<(AgentSession, Place), MatchError> {
    let mut spec = agent.spec.clone();
    let agent_err = |source| MatchError::Agent { seat, source };
    let scratch = place_agent(&mut spec, config, seat)
        .map_err(agent_err)?
        .map(|dir| (seat, dir));
    let hidden = spec.sandbox.as_ref().map(|s| s.hidden().clone());
    // Made now so that the directory goes whatever happens next.
    let place = Place {
        spec: agent.spec.clone(),
        options: agent.options.clone(),
        seed: agent.builtin_seed,
        reseed: None,
        hidden,
        network: config.network,
        scratch,
    };
    let transcript = config
        .log_dir
        .as_ref()
        .map(|d| d.join(format!("seat{seat}.transcript")));
    if let Some(dir) = &config.log_dir {
        spec.stderr_log
            .get_or_insert_with(|| dir.join(format!("seat{seat}.stderr")));
    }
    let session = AgentSession::start(seat, &spec, transcript.as_deref()).map_err(agent_err)?;
    Ok((session, place))
}

/// The agent `kept` ready to serve `seat` of this match, or `None` (and it is
/// stopped) when it may not: another command (but a built-in agent's seed, see
/// [`reseeding`]), spec or place, a match that keeps logs or resumes, or a sandbox
/// that does not hide all this match hides.
pub(super) fn fitting(
    kept: KeptAgent,
    agent: &SeatAgent,
    config: &MatchConfig,
    seat: Seat,
) -> Option<(AgentSession, Place)> {
    let KeptAgent {
        mut session,
        mut place,
    } = kept;
    let reseed = reseeding(&place, agent);
    // A log directory is one game's: a kept agent's stderr would go to another's.
    let fits = config.log_dir.is_none()
        && !config.resume
        && (place.spec == agent.spec || reseed.is_some())
        && place.network == config.network
        && covers(place.hidden.as_ref(), config);
    if !fits {
        // The process first, then its directory.
        drop(session);
        return None;
    }
    if reseed.is_some() {
        (place.spec, place.seed, place.reseed) = (agent.spec.clone(), reseed, reseed);
    }
    session.reseat(seat);
    Some((session, place))
}

/// The seed to tell the built-in agent of `place` so that it plays `agent`'s game:
/// `Some` when the two are the same built-in agent (the same spec but for the seed
/// its command ends with) started with different seeds. Without it a built-in agent,
/// whose command carries each game's seed, would be started again for every game.
fn reseeding(place: &Place, agent: &SeatAgent) -> Option<u64> {
    let (old, new) = (place.seed?, agent.builtin_seed?);
    let unseeded = |spec: &AgentSpec, seed| {
        let command = crate::builtin::Strategy::unseeded(&spec.command, seed)?;
        Some(AgentSpec {
            command: command.to_string(),
            ..spec.clone()
        })
    };
    (old != new && unseeded(&place.spec, old)? == unseeded(&agent.spec, new)?).then_some(new)
}

/// Whether a sandbox that hides `kept` hides everything this match hides, so that a
/// kept agent sees nothing a fresh one would not (`None`: no sandbox then, and none
/// may be wanted now).
fn covers(kept: Option<&Hidden>, config: &MatchConfig) -> bool {
    let now = match (&config.isolation, kept) {
        (Isolation::NotIsolated(_), None) => return true,
        (Isolation::Sandboxed(_), Some(_)) => match config.prepare_hidden() {
            Ok(h) => h,
            Err(_) => return false,
        },
        _ => return false,
    };
    kept.expect("matched above").includes(&now)
}

/// The renewal of the kept agents (`reused` marks their seats): each is sent its
/// options again if they changed, `newgame` and `isready`, all before any `readyok`
/// is awaited, within the start-up time. Returns the seats that failed it.
pub(super) fn renew(
    config: &MatchConfig,
    sessions: &mut [Option<AgentSession>],
    places: &mut [Option<Place>],
    reused: &[bool],
    game: (GameId, usize, &Options),
) -> Vec<(Seat, Forfeit)> {
    let (id, seats, options) = game;
    let mut forfeits = Vec::new();
    let live =
        |i: usize, forfeits: &[(Seat, Forfeit)]| reused[i] && !forfeits.iter().any(|(s, _)| s.index() == i);
    for i in 0..sessions.len() {
        let (Some(s), Some(p)) = (&mut sessions[i], &mut places[i]) else {
            continue;
        };
        if !reused[i] {
            continue;
        }
        let wanted = &config.agents[i].options;
        let mut told: Vec<(String, String)> = if p.options == *wanted {
            Vec::new()
        } else {
            wanted.clone()
        };
        p.options.clone_from(wanted);
        if let Some(seed) = p.reseed.take() {
            told.push((crate::builtin::SEED_OPTION.to_string(), seed.to_string()));
        }
        if let Err(f) = s.send_new_game(&told, id, seats, options) {
            forfeits.push((s.seat(), f));
        }
    }
    let deadline = Instant::now() + config.startup;
    for (i, slot) in sessions.iter_mut().enumerate() {
        if !live(i, &forfeits) {
            continue;
        }
        let Some(s) = slot else { continue };
        if let Err(f) = s.await_readyok(deadline) {
            forfeits.push((s.seat(), f));
        }
    }
    forfeits
}

/// The agent of a seat handed back after its match.
pub(super) fn keep(session: AgentSession, place: Place) -> KeptAgent {
    KeptAgent { session, place }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builtin::Strategy;

    /// The place of a built-in agent started with `strategy` and `seed`.
    fn place(strategy: Strategy, seed: u64) -> Place {
        Place {
            spec: AgentSpec::new(strategy.command_line("referee", seed)),
            options: Vec::new(),
            seed: Some(seed),
            reseed: None,
            hidden: None,
            network: false,
            scratch: None,
        }
    }

    /// A seat wanting the built-in agent `strategy` with `seed`.
    fn wanted(strategy: Strategy, seed: u64) -> SeatAgent {
        SeatAgent {
            spec: AgentSpec::new(strategy.command_line("referee", seed)),
            options: Vec::new(),
            entrant: None,
            control: None,
            builtin_seed: Some(seed),
        }
    }

    #[test]
    fn only_the_same_builtin_agent_with_another_seed_is_reseeded() {
        let kept = place(Strategy::Random, 1);
        assert_eq!(reseeding(&kept, &wanted(Strategy::Random, 2)), Some(2));
        assert_eq!(
            reseeding(&kept, &wanted(Strategy::Random, 1)),
            None,
            "the same spec: kept as it is"
        );
        assert_eq!(
            reseeding(&kept, &wanted(Strategy::Greedy, 2)),
            None,
            "another program"
        );
        let mut elsewhere = wanted(Strategy::Random, 2);
        elsewhere.spec.env.push(("HOME".into(), "/".into()));
        assert_eq!(reseeding(&kept, &elsewhere), None, "another environment");
        let mut plain = wanted(Strategy::Random, 2);
        plain.builtin_seed = None;
        assert_eq!(reseeding(&kept, &plain), None, "not a built-in agent's seat");
    }

    #[test]
    fn a_builtin_command_without_its_seed_is_the_same_for_every_seed() {
        let (a, b) = (
            Strategy::Greedy.command_line("x", 5),
            Strategy::Greedy.command_line("x", 77),
        );
        assert_eq!(Strategy::unseeded(&a, 5), Strategy::unseeded(&b, 77));
        assert!(Strategy::unseeded(&a, 5).is_some());
        assert_eq!(Strategy::unseeded(&a, 77), None, "not the seed it carries");
    }
}
