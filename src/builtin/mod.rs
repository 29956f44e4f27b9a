//! The built-in agents (`referee agent random|greedy`). They speak the agent protocol
//! over stdin/stdout like any third-party bot, so a default match exercises the real
//! process path. They decide from their seat's view only, as any bot must.

mod greedy;
mod idoubtit;
mod multichess;

use std::io::{self, BufRead, Write};

use crate::game::{Game, GameId, Options};
use crate::protocol::agent::AgentInput;
use crate::rng::Rng;

/// Which built-in strategy to play.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Strategy {
    /// Uniform over the legal actions, seeded.
    Random,
    /// One-ply heuristic: best immediate gain, ties broken at random.
    Greedy,
}

impl Strategy {
    /// The name given in `id name`.
    pub fn name(self) -> &'static str {
        match self {
            Strategy::Random => "random",
            Strategy::Greedy => "greedy",
        }
    }
}

/// What a bot knows about the game it is playing.
struct Table {
    game: GameId,
    options: Options,
}

/// Runs a built-in agent on `input`/`output` until `quit` or end of input.
pub fn run(strategy: Strategy, seed: u64, input: impl BufRead, mut output: impl Write) -> io::Result<()> {
    let mut rng = Rng::new(seed);
    let mut table: Option<Table> = None;
    let mut view = String::new();
    // Events since the last decision: a stateful bot's memory of what happened.
    let mut events: Vec<String> = Vec::new();
    let mut memory = multichess::Memory::default();
    for line in input.lines() {
        let line = line?;
        match AgentInput::parse(&line) {
            AgentInput::Hello(_) => {
                writeln!(output, "id name {}", strategy.name())?;
                writeln!(output, "id author the referee authors")?;
                writeln!(output, "protocolok")?;
            }
            AgentInput::IsReady => writeln!(output, "readyok")?,
            AgentInput::NewGame { game, options, .. } => {
                let pairs = options
                    .iter()
                    .map(|(k, v)| format!("{k}={v}"))
                    .collect::<Vec<_>>();
                table = match (
                    GameId::parse(&game),
                    Options::parse(pairs.iter().map(String::as_str)),
                ) {
                    (Ok(game), Ok(options)) => Some(Table { game, options }),
                    _ => None,
                };
            }
            AgentInput::View(text) => view = text,
            AgentInput::Event(text) => events.push(text),
            AgentInput::Go { .. } => {
                let action = table
                    .as_ref()
                    .and_then(|t| choose(strategy, t, &view, &events, &mut memory, &mut rng))
                    .unwrap_or_else(|| "none".to_string());
                writeln!(output, "bestmove {action}")?;
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
fn model(table: &Table, view: &str) -> Option<Box<dyn Game>> {
    match table.game {
        GameId::PegChow | GameId::Telka => table.game.create(&table.options, Some(view)).ok(),
        // Games with hidden information are played from the view by their own module.
        GameId::IDoubtIt | GameId::MultiChess => None,
    }
}

/// Picks an action for the seat, or `None` if the view makes no sense.
fn choose(
    strategy: Strategy,
    table: &Table,
    view: &str,
    events: &[String],
    memory: &mut multichess::Memory,
    rng: &mut Rng,
) -> Option<String> {
    match table.game {
        GameId::IDoubtIt => {
            let (variant, _) = crate::game::idoubtit::parse_options(&table.options).ok()?;
            return idoubtit::choose(strategy, variant, view, events, rng);
        }
        GameId::MultiChess => {
            let seats = table.options.int("players", 2, 2..=8).ok()? as usize;
            return multichess::choose(strategy, seats, view, memory, rng);
        }
        GameId::PegChow | GameId::Telka => {}
    }
    let game = model(table, view)?;
    let legal = game.legal_actions();
    if legal.is_empty() {
        return None;
    }
    match strategy {
        Strategy::Random => Some(legal[rng.below(legal.len())].clone()),
        Strategy::Greedy => greedy::choose(table, view, &legal, rng),
    }
}
