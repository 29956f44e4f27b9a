//! What a tournament run has counted while its games are played: the results, the
//! seating cycles not yet complete (shared with other shards once complete), the
//! SPRT's decision, each entrant's first games, and `summary.json` kept current.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use super::game::GamePlayed;
use super::results::GameResult;
use super::run::Event;
use super::schedule::Scheduled;
use super::shared::SharedDir;
use super::stats::{Pentanomial, Sprt, SprtState};
use super::summary::{pentanomial, summarize_counted, write_summary};
use super::{Definition, TournamentError};

/// The games of its own an entrant must get ready in before the run goes on: one
/// that fails the handshake (or `newgame`) in every one of its first games of a
/// run, however many it plays, stops the tournament.
pub const FIRST_GAMES: usize = 2;

/// A run while its games are played: what has finished, and whether to stop
/// starting seating cycles.
pub(super) struct Tally<'r> {
    /// The results so far, resumed ones included, in the order they came.
    pub(super) results: Vec<GameResult>,
    /// The finished games of each seating cycle not yet complete.
    pub(super) partial: BTreeMap<usize, Vec<GameResult>>,
    /// The whole schedule.
    pub(super) schedule: &'r [Scheduled],
    /// Games in this run.
    pub(super) total: usize,
    /// The SPRT stopping rule, if any.
    pub(super) sprt: Option<Sprt>,
    /// The directory shared with the other shards, for a global SPRT.
    pub(super) shared: Option<SharedDir>,
    /// Set once no new seating cycle is to be started.
    pub(super) stopped: bool,
    /// Games finished in this run (resumed ones not included).
    pub(super) played: usize,
    /// Where events go.
    pub(super) report: &'r mut dyn FnMut(Event<'_>, &[GameResult]),
    /// `summary.json` as games finish.
    pub(super) live: LiveSummary<'r>,
    /// Per entrant: its games still to play in this run when it started, and of
    /// those finished so far, how many and how many it never got ready for.
    pub(super) first: Vec<FirstGames>,
    /// The games of this run in which an entrant never got ready, and which.
    pub(super) unready_games: Vec<(usize, Vec<usize>)>,
    /// The entrant that stopped the run, if one did.
    pub(super) failed: Option<TournamentError>,
    /// Whether an entrant that never gets ready is scored instead of stopping the run.
    pub(super) play_unready: bool,
}

/// `<out>/summary.json`, rewritten as games finish so that a reader (a dashboard, a
/// script deciding to stop a test) sees the current figures, not only the final ones.
pub(super) struct LiveSummary<'r> {
    /// The tournament.
    pub(super) def: &'r Definition,
    /// Its output directory.
    pub(super) out: &'r std::path::Path,
    /// Seats per game.
    pub(super) seats: usize,
    /// Games in the whole schedule.
    pub(super) scheduled: usize,
    /// When it was last written.
    pub(super) written: Option<Instant>,
}

impl LiveSummary<'_> {
    /// The most often the file is rewritten while games finish: the figures are
    /// computed over every finished game, which at hundreds of games a second would
    /// cost more than the games.
    const INTERVAL: Duration = Duration::from_secs(1);

    /// Rewrites the file now.
    pub(super) fn write(&mut self, results: &[GameResult]) -> Result<(), TournamentError> {
        let summary = summarize_counted(self.def, self.seats, self.scheduled, results)?;
        write_summary(self.out, &summary)?;
        self.written = Some(Instant::now());
        Ok(())
    }

    /// Rewrites the file unless it was rewritten less than [`Self::INTERVAL`] ago. A
    /// failure is not the run's: the run goes on and the final write reports it.
    fn game_finished(&mut self, results: &[GameResult]) {
        if self.written.is_none_or(|t| t.elapsed() >= Self::INTERVAL) {
            let _ = self.write(results);
        }
    }
}

/// How an entrant's first games of a run went.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct FirstGames {
    /// Its games in this run.
    pub(super) scheduled: usize,
    /// Those finished.
    pub(super) played: usize,
    /// Those it never got ready for.
    pub(super) unready: usize,
}

impl Tally<'_> {
    /// Whether the SPRT (of all shards, when shared) has decided; reports the
    /// decision the first time.
    pub(super) fn sprt_decided(&mut self) -> Result<bool, TournamentError> {
        let Some(sprt) = self.sprt.filter(|_| !self.stopped) else {
            return Ok(self.stopped);
        };
        let own = pentanomial(&self.results, 0, 1);
        let decision = match &mut self.shared {
            Some(shared) => {
                shared.read(self.schedule)?;
                sprt_decision(&sprt, &pentanomial(&shared.results(), 0, 1), Some(own.pairs()))
            }
            None => sprt_decision(&sprt, &own, None),
        };
        if let Some(decision) = decision {
            self.stopped = true;
            (self.report)(Event::SprtDecided(&decision), &self.results);
        }
        Ok(self.stopped)
    }

    /// Counts a finished game; once its seating cycle is complete, shares the cycle
    /// (kept apart until then, so that sharing costs nothing per game already done).
    pub(super) fn count(&mut self, result: GameResult) -> Result<(), TournamentError> {
        let cycle = self.schedule[result.index].cycle;
        let seats = self.schedule[result.index].seats.len();
        if self.shared.is_some() {
            let games = self.partial.entry(cycle).or_default();
            games.push(result.clone());
            if games.len() == seats {
                let mut games = self.partial.remove(&cycle).expect("just filled");
                games.sort_by_key(|r| r.index);
                if let Some(shared) = &mut self.shared {
                    shared.append(cycle, &games)?;
                }
            }
        }
        self.results.push(result);
        Ok(())
    }

    /// Counts a game finished in this run and reports it. The game in which an
    /// entrant is found never to get ready is not counted: the run stops on it.
    pub(super) fn finished(&mut self, def: &Definition, played: GamePlayed) -> Result<(), TournamentError> {
        self.check_entrants(def, &played);
        if self.failed.is_some() {
            return Ok(());
        }
        self.count(played.result)?;
        self.played += 1;
        die_if_told(self.played);
        let done = self.results.len();
        (self.report)(
            Event::Finished {
                result: self.results.last().expect("just pushed"),
                done,
                total: self.total,
            },
            &self.results,
        );
        self.live.game_finished(&self.results);
        Ok(())
    }

    /// Counts the game for each of its entrants' first games, and stops the run on
    /// the first entrant that got ready for none of its [`FIRST_GAMES`].
    fn check_entrants(&mut self, def: &Definition, played: &GamePlayed) {
        let unready: Vec<usize> = played.unready.iter().map(|u| u.entrant).collect();
        if !unready.is_empty() {
            self.unready_games.push((played.result.index, unready));
        }
        for &who in &played.result.seats {
            let Some(first) = self.first.get_mut(who) else {
                continue;
            };
            first.played += 1;
            let Some(u) = played.unready.iter().find(|u| u.entrant == who) else {
                continue;
            };
            first.unready += 1;
            let needed = FIRST_GAMES.min(first.scheduled);
            let stops = !self.play_unready && self.failed.is_none();
            if stops && first.unready == first.played && first.played == needed {
                self.failed = Some(TournamentError::Entrant {
                    name: def.entrants.get(who).map_or_else(String::new, |e| e.name.clone()),
                    why: format!("never got ready in its first {needed} game(s): {}", u.why),
                    stderr: u.stderr.clone(),
                });
            }
        }
    }

    /// The games this run played in which `entrant` never got ready.
    pub(super) fn unready_of(&self, entrant: usize) -> Vec<usize> {
        self.unready_games
            .iter()
            .filter(|(_, who)| who.contains(&entrant))
            .map(|&(index, _)| index)
            .collect()
    }
}

/// Fault injection for tests: with `REFEREE_TOURNAMENT_FAULT=abort-after-games=K` the
/// process aborts (as a crash or a SIGKILL would end it) once the K-th game of this
/// run is finished and counted, which puts a shard's death at an exact point, e.g.
/// between the two games of a pair.
fn die_if_told(played: usize) {
    let told = std::env::var("REFEREE_TOURNAMENT_FAULT").ok();
    let after = told.as_deref().and_then(|f| f.strip_prefix("abort-after-games="));
    if after.and_then(|k| k.parse::<usize>().ok()) == Some(played) {
        std::process::abort();
    }
}

/// The SPRT decision on the pentanomial counts `p` of the first two entrants, if it
/// has been reached; `own` is how many of the pairs this shard played, when `p`
/// counts all shards sharing a directory.
fn sprt_decision(sprt: &Sprt, p: &Pentanomial, own: Option<u32>) -> Option<String> {
    let verdict = match sprt.state(p) {
        SprtState::Continue => return None,
        SprtState::AcceptH0 => "H0",
        SprtState::AcceptH1 => "H1",
    };
    let (lo, hi) = sprt.bounds();
    let (by, mine) = match own {
        Some(n) => (" by all shards together", format!(", {n} of them this shard's")),
        None => ("", String::new()),
    };
    Some(format!(
        "{verdict} accepted{by} (LLR {:.2}, bounds {lo:.2} and {hi:.2}, {} pairs{mine})",
        sprt.llr(p),
        p.pairs()
    ))
}
