//! One game of a tournament: its seats' agents and logs, the match on the worker's
//! kept agents, and its result taken from the match.

use std::path::{Path, PathBuf};

use super::definition::seat_command;
use super::engines::Engines;
use super::results::{record_path, result_of_match, GameResult};
use super::run::RunOptions;
use super::schedule::Scheduled;
use super::{io_err, Definition, TournamentError};
use crate::agent::{AgentSpec, HiddenPath};
use crate::clock::TimeControl;
use crate::referee::{play_match_keeping, AgentCwd, MatchConfig, MatchError, SeatAgent};

/// A game played in this run: its result, and the entrants (by index) whose agent
/// never got ready for it, with why and the end of its stderr.
pub(super) struct GamePlayed {
    /// The result, read back from the record.
    pub(super) result: GameResult,
    /// Entrants that failed the handshake or `newgame`.
    pub(super) unready: Vec<Unready>,
}

/// An entrant that did not get ready for a game.
#[derive(Clone, Debug)]
pub(super) struct Unready {
    /// The entrant's index.
    pub(super) entrant: usize,
    /// What the referee saw.
    pub(super) why: String,
    /// The last lines of its stderr, one line.
    pub(super) stderr: String,
}

/// The seat agents of `game`: each entrant's command, directory, options, name and
/// time control; each seat's stderr goes to the file `stderr[seat]`.
fn seat_agents(
    def: &Definition,
    opts: &RunOptions,
    game: &Scheduled,
    stderr: &[PathBuf],
) -> Result<Vec<SeatAgent>, TournamentError> {
    game.seats
        .iter()
        .enumerate()
        .map(|(seat, &who)| {
            let entrant = def
                .entrants
                .get(who)
                .ok_or_else(|| TournamentError::Setup(format!("game {}: no entrant {who}", game.index)))?;
            let (command, builtin_seed) =
                seat_command(def, game, seat, &opts.exe).map_err(TournamentError::Setup)?;
            let mut spec = AgentSpec::new(command);
            spec.env = opts.env.clone();
            spec.limits = opts.limits;
            spec.working_dir = entrant.dir.clone();
            spec.stderr_log = stderr.get(seat).cloned();
            Ok(SeatAgent {
                spec,
                options: entrant.options.clone(),
                entrant: Some(entrant.name.clone()),
                control: entrant.control().map_err(TournamentError::Setup)?,
                builtin_seed,
            })
        })
        .collect()
}

/// Where each seat's stderr goes: with `--log-dir`, the game's own directory
/// (`seatN.stderr`, the name `match --log-dir` gives it), so a process serves only
/// one game there; without, the worker's file for the entrant, which a kept process
/// goes on writing from game to game and which is read when an entrant does not get
/// ready.
fn stderr_logs(
    opts: &RunOptions,
    game: &Scheduled,
    engines: &mut Engines,
) -> Result<Vec<PathBuf>, TournamentError> {
    match &opts.log_dir {
        Some(dir) => {
            let logs = game_log_dir(dir, game);
            std::fs::create_dir_all(&logs).map_err(io_err(&logs))?;
            Ok((1..=game.seats.len())
                .map(|n| logs.join(format!("seat{n}.stderr")))
                .collect())
        }
        None => (0..game.seats.len())
            .map(|seat| {
                let who = game.seats[seat];
                let nth = game.seats[..seat].iter().filter(|&&w| w == who).count();
                engines.stderr_log(who, nth)
            })
            .collect(),
    }
}

/// A game's directory of logs under `--log-dir`.
fn game_log_dir(dir: &Path, game: &Scheduled) -> PathBuf {
    dir.join(format!("game-{:05}", game.index))
}

/// Plays one scheduled game, on the worker's kept agents where they serve, and takes
/// its result from the match.
pub(super) fn play_one(
    def: &Definition,
    opts: &RunOptions,
    game: &Scheduled,
    engines: &mut Engines,
) -> Result<GamePlayed, TournamentError> {
    let stderr = stderr_logs(opts, game, engines)?;
    let id = def.game_id()?;
    let control =
        TimeControl::parse_recorded(&def.time_control).map_err(|e| TournamentError::Setup(e.to_string()))?;
    let config = MatchConfig {
        game: id,
        options: def.options.clone(),
        state: def.start_state(game).map(str::to_string),
        agents: seat_agents(def, opts, game, &stderr)?,
        control,
        margin: opts.margin,
        startup: opts.startup,
        quit_grace: opts.quit_grace,
        seed: game.seed,
        record: record_path(&opts.out, game.index),
        log_dir: opts.log_dir.as_deref().map(|d| game_log_dir(d, game)),
        resume: false,
        durability: opts.durability,
        agent_cwd: AgentCwd::Private,
        opening: def.opening(game)?,
        isolation: opts.isolation.clone(),
        network: opts.network,
        // The worker's stderr files of other entrants are theirs alone.
        hidden: [Some(opts.out.clone()), engines.scratch().map(Path::to_path_buf)]
            .into_iter()
            .flatten()
            .map(HiddenPath::dir)
            .chain(opts.hidden.iter().cloned())
            .collect(),
        sign: opts.sign.clone(),
    };
    let (kept, keep) = engines.seat(def, game, opts.restart);
    let (played, kept) = play_match_keeping(&config, kept, &keep, &mut |_| {});
    engines.put_back(game, kept);
    let report = played.map_err(|source| match source {
        MatchError::Agent { seat, source } => TournamentError::Entrant {
            name: entrant_name(def, game, seat.index()),
            why: source.to_string(),
            stderr: String::new(),
        },
        source => TournamentError::Game {
            index: game.index,
            source,
        },
    })?;
    // From the match itself: the record it wrote is not read back (a resumed
    // tournament reads the records already there, see `resume`).
    let result = result_of_match(game, &report);
    let unready = report
        .unready
        .into_iter()
        .map(|(seat, why)| Unready {
            entrant: game.seats[seat.index()],
            why,
            stderr: stderr_tail(&stderr[seat.index()]),
        })
        .collect();
    Ok(GamePlayed { result, unready })
}

/// The name of the entrant in seat index `seat` of `game`.
fn entrant_name(def: &Definition, game: &Scheduled, seat: usize) -> String {
    game.seats
        .get(seat)
        .and_then(|&who| def.entrants.get(who))
        .map_or_else(|| format!("seat {}", seat + 1), |e| e.name.clone())
}

/// The last few lines of a stderr log as one printable line, or `(nothing)`.
fn stderr_tail(path: &Path) -> String {
    const LINES: usize = 3;
    const CHARS: usize = 400;
    let text = std::fs::read(path).unwrap_or_default();
    let text = String::from_utf8_lossy(&text);
    let lines: Vec<&str> = text.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
    let tail = lines[lines.len().saturating_sub(LINES)..].join(" | ");
    if tail.is_empty() {
        return "(nothing)".into();
    }
    let tail = crate::text::printable(&tail).to_string();
    match tail.char_indices().rev().nth(CHARS - 1) {
        Some((cut, _)) => format!("…{}", &tail[cut..]),
        None => tail,
    }
}
