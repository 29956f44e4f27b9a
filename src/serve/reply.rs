//! What a successful command answers, as a type: the text form (data lines before
//! `ok`) and the JSON form (`serve --json`, in `json.rs`) are two printings of it, so
//! the two cannot say different things.

use crate::game::{GameId, Options, Outcome, Seat, Turn};

/// One game as `games` lists it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GameEntry {
    /// Its name.
    pub name: String,
    /// Which game it is.
    pub game: GameId,
    /// Its ply counter.
    pub ply: u32,
    /// Whether the commands act on it.
    pub current: bool,
}

/// The answer to a command that succeeded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reply {
    /// `new`: the game, its name and the options in force.
    New {
        /// The name it goes by.
        name: String,
        /// Whether the command named it (the text form then says the name).
        named: bool,
        /// The game.
        game: GameId,
        /// Every option in force, defaults included.
        options: Options,
    },
    /// `turn`.
    Turn(Turn),
    /// `legal`, `correct`: actions in the game's stable order.
    Actions(Vec<String>),
    /// `play`, `resign`: the omniscient events.
    Events(Vec<String>),
    /// `undo`: how many were taken back, and the ply the game is at now.
    Undone {
        /// Actions and forfeits taken back.
        count: usize,
        /// The game's ply counter after it.
        ply: u32,
    },
    /// `view`: a seat's view.
    View(Seat, String),
    /// `events`: the agent protocol lines the seat would have been sent.
    Told(Seat, Vec<String>),
    /// `information_state`: the seat's whole history as one string.
    InformationState(Seat, String),
    /// `state`.
    State(String),
    /// `result`: `None` while the game goes on.
    Result(Option<Outcome>),
    /// `show`: the diagram's lines.
    Diagram(Vec<String>),
    /// `load`.
    Loaded {
        /// The file read.
        path: String,
        /// The ply the game is at.
        ply: u32,
    },
    /// `games`.
    Games(Vec<GameEntry>),
    /// `use`: the game now current.
    Using(String),
    /// `help`.
    Help,
    /// Commands with nothing to say (`record`, `drop`, `clone`, `quit`).
    Done,
}

impl Reply {
    /// The data lines of the text form, before its `ok`.
    pub fn text_lines(&self) -> Vec<String> {
        match self {
            Reply::New {
                name,
                named: true,
                game,
                options,
            } => vec![format!("new {name} {game} {options}")],
            Reply::New { game, options, .. } => vec![format!("new {game} {options}")],
            Reply::Turn(Turn::Act { seat, kind }) => vec![format!("turn {seat} {kind}")],
            Reply::Turn(Turn::Over) => vec!["turn none".to_string()],
            Reply::Actions(actions) => vec![actions.join(" ")],
            Reply::Events(lines) | Reply::Told(_, lines) | Reply::Diagram(lines) => lines.clone(),
            Reply::Undone { count, ply } => vec![format!("undone {count} at ply {ply}")],
            Reply::View(_, text) | Reply::InformationState(_, text) | Reply::State(text) => {
                vec![text.clone()]
            }
            Reply::Result(Some(outcome)) => vec![outcome.protocol_text()],
            Reply::Result(None) => vec!["ongoing".to_string()],
            Reply::Loaded { path, ply } => vec![format!("loaded {path} at ply {ply}")],
            Reply::Games(games) => games.iter().map(game_line).collect(),
            Reply::Using(name) => vec![format!("using {name}")],
            Reply::Help => vec![format!("commands: {} (see protocol.md)", super::COMMANDS)],
            Reply::Done => Vec::new(),
        }
    }
}

/// `game <name> <id> at ply <n>`, and ` current` for the current one.
fn game_line(g: &GameEntry) -> String {
    let current = if g.current { " current" } else { "" };
    format!("game {} {} at ply {}{current}", g.name, g.game, g.ply)
}
