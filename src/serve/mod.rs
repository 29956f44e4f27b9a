//! The controller protocol (`referee serve`, protocol.md §2): one command per line; each
//! answer is zero or more data lines and then exactly one final line, `ok` or
//! `error <kind> <message>` (or, with `--json`, one JSON object). A rejected command
//! changes nothing. Commands are parsed in `command.rs`, answers typed in `reply.rs`
//! and printed as JSON in `json.rs`; one game with its history is `games.rs`.

mod command;
mod games;
pub mod json;
mod reply;

use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;

pub use command::{ControlCommand, GameName, COMMANDS, MAX_NAME};
pub use reply::{GameEntry, Reply};

use crate::game::{Game, GameId, NoSuchSeat, Options, Rejection, SetupError};
use crate::record::{self, write_whole, Header, Line};
use games::ControlledGame;

/// The kinds of `error` answers; harnesses branch on them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// Unknown command or wrong arguments.
    Usage,
    /// Unknown game, bad option or bad state string.
    Setup,
    /// A game command before `new` or `load`.
    NoGame,
    /// The action text is not an action of this game.
    Malformed,
    /// The action breaks the rules.
    Illegal,
    /// Not that seat's turn.
    Turn,
    /// The game is over.
    Over,
    /// A record could not be read, written or verified.
    Record,
    /// `undo` of more actions than were played.
    Undo,
    /// A game name that is malformed, unknown, or (for `clone`) taken.
    Name,
}

impl ErrorKind {
    /// The word on the `error` line.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::Usage => "usage",
            ErrorKind::Setup => "setup",
            ErrorKind::NoGame => "no-game",
            ErrorKind::Malformed => "malformed",
            ErrorKind::Illegal => "illegal",
            ErrorKind::Turn => "turn",
            ErrorKind::Over => "over",
            ErrorKind::Record => "record",
            ErrorKind::Undo => "undo",
            ErrorKind::Name => "name",
        }
    }
}

/// A failed command: its kind and a one-line message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CommandError {
    /// The kind.
    pub kind: ErrorKind,
    /// What went wrong, on one line.
    pub message: String,
}

impl fmt::Display for CommandError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "error {} {}",
            self.kind.as_str(),
            self.message.replace('\n', " ")
        )
    }
}

pub(crate) fn err(kind: ErrorKind, message: impl Into<String>) -> CommandError {
    CommandError {
        kind,
        message: message.into(),
    }
}

impl From<SetupError> for CommandError {
    fn from(e: SetupError) -> CommandError {
        err(ErrorKind::Setup, e.to_string())
    }
}

impl From<NoSuchSeat> for CommandError {
    fn from(e: NoSuchSeat) -> CommandError {
        err(ErrorKind::Usage, e.to_string())
    }
}

impl From<Rejection> for CommandError {
    fn from(r: Rejection) -> CommandError {
        let kind = match r {
            Rejection::Malformed { .. } => ErrorKind::Malformed,
            Rejection::NotYourTurn { .. } => ErrorKind::Turn,
            Rejection::Illegal { .. } => ErrorKind::Illegal,
            Rejection::GameOver => ErrorKind::Over,
        };
        err(kind, r.to_string())
    }
}

/// The controller: named games, one of them current, which the game commands act on.
#[derive(Debug, Default)]
pub struct Controller {
    games: BTreeMap<GameName, ControlledGame>,
    current: Option<GameName>,
}

/// What executing one command produced, in the text form.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Answer {
    /// Data lines before the final line.
    pub lines: Vec<String>,
    /// The final line (`ok` or `error …`).
    pub last: String,
    /// Whether the controller should stop (after `quit`).
    pub quit: bool,
}

impl Answer {
    /// The text form of a typed answer.
    pub fn of(answer: &Result<Reply, CommandError>, quit: bool) -> Answer {
        match answer {
            Ok(reply) => Answer {
                lines: reply.text_lines(),
                last: "ok".to_string(),
                quit,
            },
            Err(e) => Answer {
                lines: Vec::new(),
                last: e.to_string(),
                quit,
            },
        }
    }
}

impl Controller {
    /// A controller with no game.
    pub fn new() -> Controller {
        Controller::default()
    }

    /// Executes one command line; answers in the text form.
    pub fn execute(&mut self, line: &str) -> Answer {
        let (answer, quit) = self.execute_typed(line);
        Answer::of(&answer, quit)
    }

    /// Executes one command line; returns the typed answer and whether to stop.
    pub fn execute_typed(&mut self, line: &str) -> (Result<Reply, CommandError>, bool) {
        let command = ControlCommand::parse(line);
        let quit = command == Ok(ControlCommand::Quit);
        (command.and_then(|c| self.run(c)), quit)
    }

    fn current(&mut self) -> Result<&mut ControlledGame, CommandError> {
        self.current
            .as_ref()
            .and_then(|name| self.games.get_mut(name))
            .ok_or_else(|| err(ErrorKind::NoGame, "no game: use `new` or `load` first"))
    }

    /// The name a new game takes when the command gives none: the current game's.
    fn slot(&self, name: Option<GameName>) -> (GameName, bool) {
        match name {
            Some(name) => (name, true),
            None => (self.current.clone().unwrap_or_else(GameName::main), false),
        }
    }

    /// Puts `game` under `name` (replacing a game of that name) and makes it current.
    fn install(&mut self, name: GameName, game: ControlledGame) {
        self.games.insert(name.clone(), game);
        self.current = Some(name);
    }

    fn named(&self, name: &GameName) -> Result<&ControlledGame, CommandError> {
        self.games
            .get(name)
            .ok_or_else(|| err(ErrorKind::Name, format!("no game named `{name}` (see `games`)")))
    }

    /// Executes one parsed command. One arm per command of protocol.md §2, so the
    /// whole command set reads as one table; the arms are short.
    fn run(&mut self, command: ControlCommand) -> Result<Reply, CommandError> {
        match command {
            ControlCommand::New {
                name,
                game,
                options,
                state,
            } => {
                let id = GameId::parse(&game)?;
                let options = Options::parse(options.iter().map(String::as_str))?;
                let game = id.create(&options, state.as_deref())?;
                let header = controller_header(game.as_ref(), state);
                let options = game.options();
                let (name, named) = self.slot(name);
                self.install(name.clone(), ControlledGame::fresh(game, header));
                Ok(Reply::New {
                    name: name.to_string(),
                    named,
                    game: id,
                    options,
                })
            }
            ControlCommand::Turn => Ok(Reply::Turn(self.current()?.game.turn())),
            ControlCommand::Legal => Ok(Reply::Actions(self.current()?.game.legal_actions())),
            ControlCommand::Correct => Ok(Reply::Actions(self.current()?.game.correct_actions())),
            ControlCommand::Play(seat, action) => Ok(Reply::Events(self.current()?.play(seat, action)?)),
            ControlCommand::Resign(seat) => Ok(Reply::Events(self.current()?.resign(seat)?)),
            ControlCommand::Undo(n) => {
                let s = self.current()?;
                s.undo(n.get())?;
                Ok(Reply::Undone {
                    count: n.get(),
                    ply: s.game.plies(),
                })
            }
            ControlCommand::View(seat) => {
                let s = self.current()?;
                seat.at_table(s.game.seat_count())?;
                Ok(Reply::View(seat, s.game.view(seat).text().to_string()))
            }
            ControlCommand::Events(seat) => Ok(Reply::Told(seat, self.current()?.events(seat)?)),
            ControlCommand::InformationState(seat) => Ok(Reply::InformationState(
                seat,
                self.current()?.information_state(seat)?,
            )),
            ControlCommand::Show(seat) => {
                let s = self.current()?;
                if let Some(seat) = seat {
                    seat.at_table(s.game.seat_count())?;
                }
                Ok(Reply::Diagram(
                    s.game.diagram(seat).lines().map(str::to_string).collect(),
                ))
            }
            ControlCommand::State => Ok(Reply::State(self.current()?.game.state())),
            ControlCommand::Result => Ok(Reply::Result(self.current()?.game.outcome())),
            ControlCommand::Record(path) => {
                let s = self.current()?;
                write_record(Path::new(&path), &s.header, &s.lines)
                    .map_err(|e| err(ErrorKind::Record, format!("cannot write {path}: {e}")))?;
                Ok(Reply::Done)
            }
            ControlCommand::Load(path) => {
                let replay = record::replay_file(Path::new(&path))
                    .map_err(|e| err(ErrorKind::Record, format!("{path}: {e}")))?;
                // Lines played from here on come after the loaded ones in time too.
                if let Some(t) = replay.last_time {
                    crate::wall_clock::not_before(t);
                }
                let game = ControlledGame::of_record(replay.header, replay.lines)
                    .map_err(|e| err(ErrorKind::Record, format!("{path}: {e}")))?;
                let ply = game.game.plies();
                let (name, _) = self.slot(None);
                self.install(name, game);
                Ok(Reply::Loaded { path, ply })
            }
            ControlCommand::Games => Ok(Reply::Games(self.entries())),
            ControlCommand::Use(name) => {
                self.named(&name)?;
                self.current = Some(name.clone());
                Ok(Reply::Using(name.to_string()))
            }
            ControlCommand::Drop(name) => {
                self.named(&name)?;
                self.games.remove(&name);
                if self.current.as_ref() == Some(&name) {
                    self.current = None;
                }
                Ok(Reply::Done)
            }
            ControlCommand::Clone(from, to) => {
                let copy = self.named(&from)?.clone();
                if self.games.contains_key(&to) {
                    return Err(err(
                        ErrorKind::Name,
                        format!("a game named `{to}` exists already"),
                    ));
                }
                self.games.insert(to, copy);
                Ok(Reply::Done)
            }
            ControlCommand::Help => Ok(Reply::Help),
            ControlCommand::Quit => Ok(Reply::Done),
        }
    }

    /// The games in name order, for `games`.
    fn entries(&self) -> Vec<GameEntry> {
        self.games
            .iter()
            .map(|(name, g)| GameEntry {
                name: name.to_string(),
                game: g.game.id(),
                ply: g.game.plies(),
                current: self.current.as_ref() == Some(name),
            })
            .collect()
    }
}

/// The header of a game driven by the controller: no agents, no clock.
fn controller_header(game: &dyn Game, state: Option<String>) -> Header {
    Header::new(game, state, 0, |_| ("controller".to_string(), None))
}

/// Writes a whole record through a temporary file beside `path`, so a crash never
/// leaves a half-written record there.
fn write_record(path: &Path, header: &Header, lines: &[Line]) -> std::io::Result<()> {
    let name = path
        .file_name()
        .ok_or_else(|| std::io::Error::other("not a file name"))?;
    let tmp = path.with_file_name(format!(".{}.tmp{}", name.to_string_lossy(), std::process::id()));
    write_whole(path, &tmp, header, lines, None, || {})
}
