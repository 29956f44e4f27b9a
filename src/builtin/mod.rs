//! The built-in agents (`referee agent random|greedy|replay`). They speak the agent
//! protocol over stdin/stdout like any third-party bot, so a default match exercises
//! the real process path. `random` and `greedy` decide from their seat's view only, as
//! any bot must; `replay` plays back what its seat did in a record.

mod idoubtit;
mod multichess;
mod parker;
mod strong;
mod strong_idoubtit;
mod strong_multichess;

pub use strong::DEFAULT_NODES;

use std::collections::VecDeque;
use std::io::{self, BufRead, Write};
use std::time::{Duration, Instant};

use crate::game::{Game, GameId, Options};
use crate::protocol::agent::AgentInput;
use crate::record::{ForfeitLine, Line};
use crate::rng::Rng;

/// Which built-in strategy to play.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Strategy {
    /// Uniform over the legal actions, seeded.
    Random,
    /// One-ply heuristic: best immediate gain, ties broken at random.
    Greedy,
    /// Search within a node budget, from its seat's view, in every game.
    Strong,
}

impl Strategy {
    /// Every built-in strategy.
    pub const ALL: [Strategy; 3] = [Strategy::Random, Strategy::Greedy, Strategy::Strong];

    /// The strategy an agent command `builtin:NAME` names (`None` for any other
    /// command); an unknown name is an error that lists the known ones.
    pub fn from_agent_command(command: &str) -> Option<Result<Strategy, String>> {
        let name = command.trim().strip_prefix("builtin:")?;
        Some(
            Strategy::ALL
                .into_iter()
                .find(|s| s.name() == name)
                .ok_or_else(|| {
                    let known = Strategy::ALL.map(|s| format!("builtin:{}", s.name()));
                    format!(
                        "unknown built-in agent `builtin:{name}` (built-in agents: {}){}",
                        known.join(", "),
                        crate::text::did_you_mean(
                            &format!("builtin:{name}"),
                            known.iter().map(String::as_str)
                        )
                    )
                }),
        )
    }

    /// The command line that runs this agent with `seed`, through the referee
    /// executable `exe` (already quoted for a shell-like split).
    pub fn command_line(self, exe: &str, seed: u64) -> String {
        format!("{exe} agent {} --seed {seed}", self.name())
    }

    /// `command` without the seed [`Strategy::command_line`] gave it (`None` if it
    /// does not end with that seed): two built-in agents' commands that differ only
    /// in their seed run the same program, which `setoption name Seed` reseeds.
    pub(crate) fn unseeded(command: &str, seed: u64) -> Option<&str> {
        command.strip_suffix(&format!(" --seed {seed}"))
    }

    /// The strategy the simple play of the games of hidden information takes:
    /// `None` for `strong`, which plays them by its own modules.
    fn hidden_play(self) -> Option<Strategy> {
        (self != Strategy::Strong).then_some(self)
    }

    /// The name given in `id name`.
    pub fn name(self) -> &'static str {
        match self {
            Strategy::Random => "random",
            Strategy::Greedy => "greedy",
            Strategy::Strong => "strong",
        }
    }
}

/// The option a kept built-in agent is reseeded with, which only the referee sends.
pub const SEED_OPTION: &str = "Seed";

/// Refuses options a user gives a built-in agent that are the referee's to send: a
/// `Seed` would make the game another than the one its record's command names.
pub fn check_user_options(options: &[(String, String)]) -> Result<(), String> {
    match options.iter().find(|(name, _)| name.eq_ignore_ascii_case(SEED_OPTION)) {
        Some((name, _)) => Err(format!(
            "option `{name}`: a built-in agent's seed is the game's (the referee sends it); give the game's --seed instead"
        )),
        None => Ok(()),
    }
}

/// What a bot knows about the game it is playing.
struct Assignment {
    game: GameId,
    options: Options,
    /// Its own seat number (1-based).
    seat: usize,
    /// Which `newgame` of this process it is (from 1): a process the referee keeps
    /// between games plays each as if it had just started.
    number: u64,
    /// The seed the game is played from when `setoption name Seed` gave one before
    /// its `newgame` (a kept process, reseeded for its next game); else the one the
    /// process was started with.
    seed: Option<u64>,
}

/// Runs a built-in agent on `input`/`output` until `quit` or end of input.
pub fn run(
    strategy: Strategy,
    seed: u64,
    nodes: u64,
    input: impl BufRead,
    output: impl Write,
) -> io::Result<()> {
    let mut rng = Rng::new(seed);
    let mut memory = multichess::Memory::default();
    let mut doubting = strong_idoubtit::Memory::default();
    let mut playing = 0;
    converse(
        strategy.name(),
        true,
        input,
        output,
        |assignment, view, events, budget_ms| {
            // Every game from the seed, so that a kept process plays it as a fresh one.
            if assignment.number != playing {
                playing = assignment.number;
                rng = Rng::new(assignment.seed.unwrap_or(seed));
                memory = multichess::Memory::default();
                doubting = strong_idoubtit::Memory::default();
            }
            // Half of what the referee allows, so that the answer is in well before.
            let deadline = budget_ms.map(|ms| Instant::now() + Duration::from_millis(ms / 2));
            let budget = strong::Budget { nodes, deadline };
            choose(
                strategy,
                assignment,
                view,
                events,
                budget,
                (&mut memory, &mut doubting),
                &mut rng,
            )
        },
    )
}

/// The actions each seat's agent submitted in a record, in order, for
/// [`run_replay`]: accepted actions (not the referee's forced or opening ones) and
/// the illegal action of a forfeit, so that the replay ends the same way.
pub fn replay_script(lines: &[Line], seats: usize) -> Vec<VecDeque<String>> {
    let mut script = vec![VecDeque::new(); seats];
    for line in lines {
        let (seat, action) = match line {
            Line::Action(a) if !a.forced && !a.opening => (a.seat, &a.action),
            Line::Forfeit(ForfeitLine {
                seat,
                action: Some(action),
                ..
            }) => (*seat, action),
            _ => continue,
        };
        if let Some(queue) = script.get_mut(seat.index()) {
            queue.push_back(action.clone());
        }
    }
    script
}

/// Runs the replay agent: it answers each `go` with its seat's next action from
/// `script` (see [`replay_script`]), from its start in every game, and `none` once the
/// script is used up, or at once
/// when the game is not the recorded one (`game` with `options`), which it also says on
/// stderr.
///
/// It decides nothing, so it is as close to an instant bot as a process can be: the
/// referee's own cost per action is measured with it (`referee bench`), and a game
/// can be replayed against a bot under test in another seat.
pub fn run_replay(
    game: GameId,
    options: &Options,
    script: Vec<VecDeque<String>>,
    input: impl BufRead,
    output: impl Write,
) -> io::Result<()> {
    let mut warned = false;
    // Each game replays the record from its start: a kept agent (protocol.md §1.3)
    // plays it again at every `newgame`.
    let mut playing = (0, Vec::new());
    converse("replay", false, input, output, |assignment, _, _, _| {
        if assignment.game != game || assignment.options != *options {
            if !warned {
                eprintln!(
                    "replay: the record is of {game} {options}, this game is {} {}",
                    assignment.game, assignment.options
                );
                warned = true;
            }
            return None;
        }
        if playing.0 != assignment.number {
            playing = (assignment.number, script.clone());
        }
        playing.1.get_mut(assignment.seat.wrapping_sub(1))?.pop_front()
    })
}

/// The protocol loop every built-in agent shares: `decide` is asked for an action
/// at each `go`, with the assignment, the last view and the events since the last `go`
/// (kept only when `reads_views`: the replay agent skips them, to cost as little as
/// the `cat` it is compared with).
fn converse(
    name: &str,
    reads_views: bool,
    mut input: impl BufRead,
    mut output: impl Write,
    mut decide: impl FnMut(&Assignment, &str, &[String], Option<u64>) -> Option<String>,
) -> io::Result<()> {
    let mut assignment: Option<Assignment> = None;
    let mut games = 0;
    let mut seed = None;
    let mut view = String::new();
    // Events since the last decision: a stateful bot's memory of what happened.
    let mut events: Vec<String> = Vec::new();
    let mut bytes = Vec::new();
    loop {
        bytes.clear();
        if input.read_until(b'\n', &mut bytes)? == 0 {
            break;
        }
        // Skipped before any other work: for the replay agent these are most lines.
        if !reads_views && (bytes.starts_with(b"event ") || bytes.starts_with(b"view ")) {
            continue;
        }
        let line = std::str::from_utf8(&bytes)
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?
            .trim_end_matches(['\n', '\r']);
        match AgentInput::parse(line) {
            AgentInput::Hello(_) => {
                writeln!(output, "id name {name}")?;
                writeln!(output, "id author the referee authors")?;
                writeln!(output, "protocolok")?;
            }
            AgentInput::IsReady => writeln!(output, "readyok")?,
            AgentInput::NewGame {
                game, options, seat, ..
            } => {
                let pairs = options
                    .iter()
                    .map(|(k, v)| format!("{k}={v}"))
                    .collect::<Vec<_>>();
                // Nothing of the last game is carried into this one.
                games += 1;
                view.clear();
                events.clear();
                assignment = match (
                    GameId::parse(&game),
                    Options::parse(pairs.iter().map(String::as_str)),
                ) {
                    (Ok(game), Ok(options)) => Some(Assignment {
                        game,
                        options,
                        seat,
                        number: games,
                        seed,
                    }),
                    _ => None,
                };
            }
            AgentInput::SetOption(name, value) if name == SEED_OPTION => {
                seed = value.parse().ok();
                if seed.is_none() {
                    eprintln!("setoption {name} `{value}` is not a seed; playing from the seed the process started with");
                }
            }
            AgentInput::View(text) => view = text,
            AgentInput::Event(text) => events.push(text),
            AgentInput::Go { budget_ms, .. } => {
                let action = assignment
                    .as_ref()
                    .and_then(|t| decide(t, &view, &events, budget_ms))
                    .unwrap_or_else(|| "none".to_string());
                // Pieces, not `writeln!`: this is the whole of the replay agent's work.
                output.write_all(b"bestmove ")?;
                output.write_all(action.as_bytes())?;
                output.write_all(b"\n")?;
                events.clear();
            }
            AgentInput::Quit => break,
            _ => {}
        }
        output.flush()?;
    }
    Ok(())
}

/// The model a bot reconstructs from its view: in games without hidden information
/// the view is the state string itself.
fn model(assignment: &Assignment, view: &str) -> Option<Box<dyn Game>> {
    match assignment.game {
        GameId::PegChow | GameId::Telka => assignment.game.create(&assignment.options, Some(view)).ok(),
        // Games with hidden information are played from the view by their own module.
        GameId::IDoubtIt | GameId::MultiChess => None,
    }
}

/// Picks an action for the seat, or `None` if the view makes no sense.
fn choose(
    strategy: Strategy,
    assignment: &Assignment,
    view: &str,
    events: &[String],
    budget: strong::Budget,
    (memory, doubting): (&mut multichess::Memory, &mut strong_idoubtit::Memory),
    rng: &mut Rng,
) -> Option<String> {
    match assignment.game {
        GameId::IDoubtIt => {
            let (variant, _) = crate::game::idoubtit::parse_options(&assignment.options).ok()?;
            if strategy == Strategy::Strong {
                return strong_idoubtit::choose(variant, view, events, budget, doubting, rng);
            }
            return idoubtit::choose(strategy.hidden_play()?, variant, view, events, rng);
        }
        GameId::MultiChess => {
            let seats = assignment.options.int("players", 2, 2..=8).ok()? as usize;
            if strategy == Strategy::Strong {
                return strong_multichess::choose(seats, view, events, &mut memory.belief, budget, rng);
            }
            return multichess::choose(strategy.hidden_play()?, seats, view, memory, rng);
        }
        GameId::PegChow | GameId::Telka => {}
    }
    let game = model(assignment, view)?;
    let legal = game.legal_actions();
    if legal.is_empty() {
        return None;
    }
    match strategy {
        Strategy::Random => Some(legal[rng.below(legal.len())].clone()),
        Strategy::Greedy => parker::choose(assignment, view, &legal, rng),
        Strategy::Strong => parker::choose_strong(assignment, view, budget, rng),
    }
}
