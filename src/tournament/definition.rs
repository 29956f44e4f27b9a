//! What defines a tournament: the game, the entrants, the schedule's shape, the seed,
//! the opening and the time control, as stored in `<out>/tournament.json`, and what
//! follows from it alone (the seats, the schedule, each game's opening and each
//! seat's command). Its own room because runs, shards, resumes and merges all agree
//! on a tournament through it.

use serde::{Deserialize, Serialize};

use super::entrants::Entrant;
use super::openings::{self, OpeningOrder};
use super::schedule::{self, Format, Scheduled};
use super::stats::Sprt;
use super::TournamentError;
use crate::game::{GameId, Options, Turn};
use crate::rng::Rng;

/// What defines a tournament; stored as `<out>/tournament.json`. Runs and shards
/// with the same definition share one schedule.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Definition {
    /// Game id.
    pub game: String,
    /// Game options.
    pub options: Options,
    /// The bots.
    pub entrants: Vec<Entrant>,
    /// Round robin or gauntlet.
    pub format: Format,
    /// Games per table (a multiple of the seat count).
    pub games: usize,
    /// Times the whole schedule is repeated.
    pub rounds: usize,
    /// Seed of the schedule, the openings and the built-in agents.
    pub seed: u64,
    /// Random opening actions per game.
    pub random_plies: usize,
    /// The opening suite's start states (`--openings`), stored whole so that a resume
    /// or a shard cannot silently start from an edited file.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub openings: Vec<String>,
    /// The order the suite's lines are used in.
    #[serde(default, skip_serializing_if = "OpeningOrder::is_sequential")]
    pub openings_order: OpeningOrder,
    /// Time control, as `--tc`/`--st` give it.
    pub time_control: String,
    /// The SPRT stopping rule, if any (two-seat games, first two entrants).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sprt: Option<SprtDef>,
}

/// The SPRT parameters as stored.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct SprtDef {
    /// Elo under H0.
    pub elo0: f64,
    /// Elo under H1.
    pub elo1: f64,
    /// False-positive rate.
    pub alpha: f64,
    /// False-negative rate.
    pub beta: f64,
}

impl From<SprtDef> for Sprt {
    fn from(d: SprtDef) -> Sprt {
        Sprt {
            elo0: d.elo0,
            elo1: d.elo1,
            alpha: d.alpha,
            beta: d.beta,
        }
    }
}

impl Definition {
    /// The game, checked.
    pub(super) fn game_id(&self) -> Result<GameId, TournamentError> {
        GameId::parse(&self.game).map_err(|e| TournamentError::Setup(e.to_string()))
    }

    /// The definition as `tournament.json` holds it once read back: the file keeps
    /// entrant options sorted by name, so a definition as given is compared with a
    /// stored one only after the same round trip. A definition that does not survive
    /// the trip (a value JSON cannot hold) is refused, not a panic.
    pub(super) fn stored_form(&self) -> Result<Definition, TournamentError> {
        serde_json::to_string(self)
            .and_then(|text| serde_json::from_str(&text))
            .map_err(|e| TournamentError::Setup(format!("the tournament cannot be stored as JSON: {e}")))
    }

    /// Whether `other` plays the same games as this: everything but how entrants'
    /// processes are restarted (`restart=`), which changes no game and so may differ
    /// between the runs of a resumed tournament and between its shards.
    pub(super) fn plays_same_games(&self, other: &Definition) -> bool {
        let games = |d: &Definition| {
            let mut d = d.clone();
            for e in &mut d.entrants {
                e.restart = None;
            }
            d
        };
        games(self) == games(other)
    }

    /// Seats per game.
    pub fn seats(&self) -> Result<usize, TournamentError> {
        let game = self
            .game_id()?
            .create(&self.options, None)
            .map_err(|e| TournamentError::Setup(e.to_string()))?;
        Ok(game.seat_count())
    }

    /// The whole schedule, each game with the line of the opening suite it starts
    /// from.
    pub fn schedule(&self) -> Result<Vec<Scheduled>, TournamentError> {
        let mut games = schedule::build(
            self.format,
            self.entrants.len(),
            self.seats()?,
            self.games,
            self.rounds,
            self.seed,
        )
        .map_err(TournamentError::Setup)?;
        openings::assign(self.openings_order, self.openings.len(), self.seed, &mut games);
        Ok(games)
    }

    /// The start state of a game: its line of the opening suite, if there is one.
    pub fn start_state(&self, game: &Scheduled) -> Option<&str> {
        game.opening
            .and_then(|i| self.openings.get(i))
            .map(String::as_str)
    }

    /// The random opening of a game: `random_plies` correct actions from its seed,
    /// played from its start state.
    pub(super) fn opening(&self, game: &Scheduled) -> Result<Vec<String>, TournamentError> {
        self.opening_upto(game, self.random_plies)
    }

    /// The first `limit` actions (at most) of the random opening of `scheduled`.
    pub(super) fn opening_upto(
        &self,
        scheduled: &Scheduled,
        limit: usize,
    ) -> Result<Vec<String>, TournamentError> {
        let mut game = self
            .game_id()?
            .create(&self.options, self.start_state(scheduled))
            .map_err(|e| TournamentError::Setup(e.to_string()))?;
        let mut rng = Rng::new(scheduled.opening_seed);
        let mut out = Vec::new();
        for _ in 0..limit.min(self.random_plies) {
            let Turn::Act { seat, .. } = game.turn() else {
                break;
            };
            let choices = game.correct_actions();
            if choices.is_empty() {
                break;
            }
            let action = choices[rng.below(choices.len())].clone();
            game.play(seat, &action)
                .map_err(|e| TournamentError::Setup(format!("opening: {e}")))?;
            out.push(action);
        }
        Ok(out)
    }
}

/// The command seat `seat` (0-based) of `game` runs: the entrant's own, or for a
/// built-in agent the referee's `agent` subcommand through `exe` with a seed of the
/// game and seat, which is returned too (`None` for an entrant's own command).
pub(super) fn seat_command(
    def: &Definition,
    game: &Scheduled,
    seat: usize,
    exe: &str,
) -> Result<(String, Option<u64>), String> {
    let entrant = game
        .seats
        .get(seat)
        .and_then(|&who| def.entrants.get(who))
        .ok_or_else(|| format!("game {}: no entrant for seat {}", game.index, seat + 1))?;
    // A seed of the game and seat: a game is the same whichever worker plays it and
    // whatever its kept agent played before.
    let seed = Rng::derive(game.seed, seat as u64 + 1);
    Ok(match crate::builtin::Strategy::from_agent_command(&entrant.cmd) {
        Some(strategy) => (strategy?.command_line(exe, seed), Some(seed)),
        None => (entrant.cmd.clone(), None),
    })
}
