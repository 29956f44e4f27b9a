//! The controller protocol (`referee serve`, protocol.md §2): one command per line; each
//! answer is zero or more data lines and then exactly one final line, `ok` or
//! `error <kind> <message>`. A rejected command changes nothing.

use std::fmt;
use std::path::Path;

use crate::game::{
    ForfeitKind, Game, GameId, NoSuchSeat, Options, Rejection, Seat, SetupError, Turn, Unforfeitable,
};
use crate::record::{self, write_whole, ActionLine, ForfeitLine, Header, Line, ResultLine};

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

fn err(kind: ErrorKind, message: impl Into<String>) -> CommandError {
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

/// A parsed controller command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ControlCommand {
    /// `new <game> [key=value…] [state=<rest of line>]`.
    New {
        /// Game id.
        game: String,
        /// Option words.
        options: Vec<String>,
        /// Start state.
        state: Option<String>,
    },
    /// `turn`.
    Turn,
    /// `legal`.
    Legal,
    /// `correct`: the legal actions a doubt would find correct (omniscient).
    Correct,
    /// `play <seat> <action>`.
    Play(Seat, String),
    /// `view <seat>`.
    View(Seat),
    /// `state`.
    State,
    /// `result`.
    Result,
    /// `resign <seat>`.
    Resign(Seat),
    /// `show [<seat>]`: the board diagram.
    Show(Option<Seat>),
    /// `record <path>`.
    Record(String),
    /// `load <path>`.
    Load(String),
    /// `help`.
    Help,
    /// `quit`.
    Quit,
}

/// The command words, for `help` and error messages.
pub const COMMANDS: &str = "new turn legal correct play view state result resign show record load help quit";

impl ControlCommand {
    /// Parses one line.
    pub fn parse(line: &str) -> Result<ControlCommand, CommandError> {
        let line = line.trim();
        let (word, rest) = line
            .split_once(' ')
            .map(|(w, r)| (w, r.trim()))
            .unwrap_or((line, ""));
        let args: Vec<&str> = rest.split_whitespace().collect();
        let seat = |s: &str| s.parse::<Seat>().map_err(|e| err(ErrorKind::Usage, e));
        let none = |c: ControlCommand| {
            if args.is_empty() {
                Ok(c)
            } else {
                Err(err(ErrorKind::Usage, format!("`{word}` takes no arguments")))
            }
        };
        match word {
            "new" => {
                let (head, state) = match rest.find("state=") {
                    Some(at) if at == 0 || rest.as_bytes()[at - 1] == b' ' => {
                        (&rest[..at], Some(rest[at + 6..].to_string()))
                    }
                    _ => (rest, None),
                };
                let mut words = head.split_whitespace();
                let game = words
                    .next()
                    .ok_or_else(|| err(ErrorKind::Usage, "usage: new <game> [key=value…] [state=<state>]"))?;
                Ok(ControlCommand::New {
                    game: game.to_string(),
                    options: words.map(str::to_string).collect(),
                    state,
                })
            }
            "turn" => none(ControlCommand::Turn),
            "legal" => none(ControlCommand::Legal),
            "correct" => none(ControlCommand::Correct),
            "state" => none(ControlCommand::State),
            "result" => none(ControlCommand::Result),
            "help" => none(ControlCommand::Help),
            "quit" => none(ControlCommand::Quit),
            "play" => match args.as_slice() {
                [s, action] => Ok(ControlCommand::Play(seat(s)?, action.to_string())),
                _ => Err(err(ErrorKind::Usage, "usage: play <seat> <action>")),
            },
            "view" => match args.as_slice() {
                [s] => Ok(ControlCommand::View(seat(s)?)),
                _ => Err(err(ErrorKind::Usage, "usage: view <seat>")),
            },
            "resign" => match args.as_slice() {
                [s] => Ok(ControlCommand::Resign(seat(s)?)),
                _ => Err(err(ErrorKind::Usage, "usage: resign <seat>")),
            },
            "show" => match args.as_slice() {
                [] => Ok(ControlCommand::Show(None)),
                [s] => Ok(ControlCommand::Show(Some(seat(s)?))),
                _ => Err(err(ErrorKind::Usage, "usage: show [<seat>]")),
            },
            "record" | "load" if rest.is_empty() => {
                Err(err(ErrorKind::Usage, format!("usage: {word} <path>")))
            }
            "record" => Ok(ControlCommand::Record(rest.to_string())),
            "load" => Ok(ControlCommand::Load(rest.to_string())),
            "" => Err(err(ErrorKind::Usage, "empty command")),
            other => Err(err(
                ErrorKind::Usage,
                format!(
                    "unknown command `{}` (commands: {COMMANDS})",
                    other.chars().take(40).collect::<String>()
                ),
            )),
        }
    }
}

/// A game under controller command, with the record of what was played so far.
#[derive(Debug)]
struct ControlledGame {
    game: Box<dyn Game>,
    header: Header,
    lines: Vec<Line>,
}

/// The controller: executes commands against one game at a time.
#[derive(Debug, Default)]
pub struct Controller {
    current: Option<ControlledGame>,
}

/// What executing one command produced.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Answer {
    /// Data lines before the final line.
    pub lines: Vec<String>,
    /// The final line (`ok` or `error …`).
    pub last: String,
    /// Whether the controller should stop (after `quit`).
    pub quit: bool,
}

impl Controller {
    /// A controller with no game.
    pub fn new() -> Controller {
        Controller::default()
    }

    /// Executes one command line.
    pub fn execute(&mut self, line: &str) -> Answer {
        let command = ControlCommand::parse(line);
        let quit = command == Ok(ControlCommand::Quit);
        match command.and_then(|c| self.run(c)) {
            Ok(lines) => Answer {
                lines,
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

    fn current(&mut self) -> Result<&mut ControlledGame, CommandError> {
        self.current
            .as_mut()
            .ok_or_else(|| err(ErrorKind::NoGame, "no game: use `new` or `load` first"))
    }

    /// Executes one parsed command. One arm per command of protocol.md §2, so the
    /// whole command set reads as one table; the arms are short.
    fn run(&mut self, command: ControlCommand) -> Result<Vec<String>, CommandError> {
        match command {
            ControlCommand::New { game, options, state } => {
                let id = GameId::parse(&game)?;
                let options = Options::parse(options.iter().map(String::as_str))?;
                let game = id.create(&options, state.as_deref())?;
                let header = controller_header(game.as_ref(), state);
                let summary = format!("new {} {}", id, game.options());
                self.current = Some(ControlledGame {
                    game,
                    header,
                    lines: Vec::new(),
                });
                Ok(vec![summary])
            }
            ControlCommand::Turn => Ok(vec![match self.current()?.game.turn() {
                Turn::Act { seat, kind } => format!("turn {seat} {kind}"),
                Turn::Over => "turn none".to_string(),
            }]),
            ControlCommand::Legal => Ok(vec![self.current()?.game.legal_actions().join(" ")]),
            ControlCommand::Correct => Ok(vec![self.current()?.game.correct_actions().join(" ")]),
            ControlCommand::Play(seat, action) => {
                let s = self.current()?;
                seat.at_table(s.game.seat_count())?;
                let forced = s.game.forced_action().is_some_and(|f| f == action);
                let played = s.game.play(seat, &action)?;
                s.lines.push(Line::Action(ActionLine {
                    ply: s.game.plies(),
                    seat,
                    action,
                    taken: played.taken.clone(),
                    forced,
                    opening: false,
                    events: played.events.clone(),
                    think_ms: None,
                    clock_ms: None,
                }));
                s.finish_if_over();
                Ok(played.events)
            }
            ControlCommand::Resign(seat) => {
                let s = self.current()?;
                seat.at_table(s.game.seat_count())?;
                // A forfeit that changes nothing would record a line saying nothing.
                s.game.forfeitable(seat).map_err(|why| match why {
                    Unforfeitable::Over => err(ErrorKind::Over, "the game is over"),
                    Unforfeitable::Out => {
                        err(ErrorKind::Over, format!("seat {seat} is out of the game already"))
                    }
                })?;
                let played = s.game.forfeit(seat, ForfeitKind::Resign);
                s.lines.push(Line::Forfeit(ForfeitLine {
                    seat,
                    reason: ForfeitKind::Resign,
                    detail: "resigned by the controller".into(),
                    action: None,
                    events: played.events.clone(),
                }));
                s.finish_if_over();
                Ok(played.events)
            }
            ControlCommand::View(seat) => {
                let s = self.current()?;
                seat.at_table(s.game.seat_count())?;
                Ok(vec![s.game.view(seat).text().to_string()])
            }
            ControlCommand::Show(seat) => {
                let s = self.current()?;
                if let Some(seat) = seat {
                    seat.at_table(s.game.seat_count())?;
                }
                Ok(s.game.diagram(seat).lines().map(str::to_string).collect())
            }
            ControlCommand::State => Ok(vec![self.current()?.game.state()]),
            ControlCommand::Result => Ok(vec![match self.current()?.game.outcome() {
                Some(o) => o.protocol_text(),
                None => "ongoing".to_string(),
            }]),
            ControlCommand::Record(path) => {
                let s = self.current()?;
                write_record(Path::new(&path), &s.header, &s.lines)
                    .map_err(|e| err(ErrorKind::Record, format!("cannot write {path}: {e}")))?;
                Ok(Vec::new())
            }
            ControlCommand::Load(path) => {
                let replay = record::replay_file(Path::new(&path))
                    .map_err(|e| err(ErrorKind::Record, format!("{path}: {e}")))?;
                let plies = replay.game.plies();
                self.current = Some(ControlledGame {
                    game: replay.game,
                    header: replay.header,
                    lines: replay.lines,
                });
                Ok(vec![format!("loaded {path} at ply {plies}")])
            }
            ControlCommand::Help => Ok(vec![format!("commands: {COMMANDS} (see protocol.md)")]),
            ControlCommand::Quit => Ok(Vec::new()),
        }
    }
}

impl ControlledGame {
    /// Appends the result line once the game is over.
    fn finish_if_over(&mut self) {
        // The controller's seats are not processes the referee started.
        if let Some(result) = ResultLine::of(self.game.as_ref(), None) {
            self.lines.push(Line::Result(result));
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_parse() {
        assert_eq!(
            ControlCommand::parse("new telka players=4 state=11/11 b 0"),
            Ok(ControlCommand::New {
                game: "telka".into(),
                options: vec!["players=4".into()],
                state: Some("11/11 b 0".into())
            })
        );
        assert_eq!(
            ControlCommand::parse("play 2 c2-d3"),
            Ok(ControlCommand::Play(Seat::new(2).unwrap(), "c2-d3".into()))
        );
        assert_eq!(
            ControlCommand::parse("play 0 c2-d3").unwrap_err().kind,
            ErrorKind::Usage
        );
        assert_eq!(
            ControlCommand::parse("turn x").unwrap_err().kind,
            ErrorKind::Usage
        );
        assert_eq!(
            ControlCommand::parse("frobnicate").unwrap_err().kind,
            ErrorKind::Usage
        );
    }
}
