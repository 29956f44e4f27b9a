//! Controller commands as types: each line is parsed here, at the edge, so that the
//! controller only ever runs commands whose words already mean something.

use std::fmt;
use std::num::NonZeroUsize;

use super::{err, CommandError, ErrorKind};
use crate::game::{GameId, Seat};

/// The name of one of the controller's games (`new <name> <game> …`, `use <name>`).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct GameName(String);

/// Longest game name: names are for people typing scripts, not for data.
pub const MAX_NAME: usize = 32;

impl GameName {
    /// The name a game gets from an unnamed `new` or a `load` when no game is current.
    pub fn main() -> GameName {
        GameName("main".to_string())
    }

    /// Parses a name: 1 to [`MAX_NAME`] letters, digits, `-` or `_`, starting with a
    /// letter, and not a game id (so that `new telka …` can only mean the game).
    pub fn parse(s: &str) -> Result<GameName, CommandError> {
        let shaped = s.len() <= MAX_NAME
            && s.starts_with(|c: char| c.is_ascii_alphabetic())
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
        if !shaped {
            let shown: String = s.chars().take(40).collect();
            return Err(err(
                ErrorKind::Name,
                format!("bad game name `{shown}`: 1 to {MAX_NAME} letters, digits, - or _, starting with a letter"),
            ));
        }
        if GameId::parse(s).is_ok() {
            return Err(err(
                ErrorKind::Name,
                format!("`{s}` is a game id and cannot name a game"),
            ));
        }
        Ok(GameName(s.to_string()))
    }

    /// The name as typed.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for GameName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A parsed controller command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ControlCommand {
    /// `new [<name>] <game> [key=value…] [state=<rest of line>]`.
    New {
        /// The game's name; `None` replaces the current game.
        name: Option<GameName>,
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
    /// `undo [n]`: takes back the last `n` actions and forfeits (default 1).
    Undo(NonZeroUsize),
    /// `view <seat>`.
    View(Seat),
    /// `events <seat>`: what the seat's agent would have been told since the last one.
    Events(Seat),
    /// `information_state <seat>`: everything the seat was told, as one string.
    InformationState(Seat),
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
    /// `games`: the games and which is current.
    Games,
    /// `use <name>`: makes a game current.
    Use(GameName),
    /// `drop <name>`: forgets a game.
    Drop(GameName),
    /// `clone <from> <to>`: a copy of a game under a new name.
    Clone(GameName, GameName),
    /// `help`.
    Help,
    /// `quit`.
    Quit,
}

/// The command words, for `help` and error messages.
pub const COMMANDS: &str = "new turn legal correct play undo view events information_state state result resign show record load games use drop clone help quit";

impl ControlCommand {
    /// Parses one line.
    pub fn parse(line: &str) -> Result<ControlCommand, CommandError> {
        let line = line.trim();
        let (word, rest) = line
            .split_once(' ')
            .map(|(w, r)| (w, r.trim()))
            .unwrap_or((line, ""));
        let args: Vec<&str> = rest.split_whitespace().collect();
        let usage = |text: &str| Err(err(ErrorKind::Usage, format!("usage: {text}")));
        let none = |c: ControlCommand| {
            if args.is_empty() {
                Ok(c)
            } else {
                Err(err(ErrorKind::Usage, format!("`{word}` takes no arguments")))
            }
        };
        match word {
            "new" => parse_new(rest),
            "turn" => none(ControlCommand::Turn),
            "legal" => none(ControlCommand::Legal),
            "correct" => none(ControlCommand::Correct),
            "state" => none(ControlCommand::State),
            "result" => none(ControlCommand::Result),
            "games" => none(ControlCommand::Games),
            "help" => none(ControlCommand::Help),
            "quit" => none(ControlCommand::Quit),
            "play" => match args.as_slice() {
                [s, action] => Ok(ControlCommand::Play(seat(s)?, action.to_string())),
                _ => usage("play <seat> <action>"),
            },
            "undo" => match args.as_slice() {
                [] => Ok(ControlCommand::Undo(NonZeroUsize::MIN)),
                [n] => Ok(ControlCommand::Undo(count(n)?)),
                _ => usage("undo [<n>]"),
            },
            "view" | "events" | "information_state" | "resign" => match args.as_slice() {
                [s] => Ok(seat_command(word, seat(s)?)),
                _ => usage(&format!("{word} <seat>")),
            },
            "show" => match args.as_slice() {
                [] => Ok(ControlCommand::Show(None)),
                [s] => Ok(ControlCommand::Show(Some(seat(s)?))),
                _ => usage("show [<seat>]"),
            },
            "use" | "drop" => match args.as_slice() {
                [name] if word == "use" => Ok(ControlCommand::Use(GameName::parse(name)?)),
                [name] => Ok(ControlCommand::Drop(GameName::parse(name)?)),
                _ => usage(&format!("{word} <name>")),
            },
            "clone" => match args.as_slice() {
                [from, to] => Ok(ControlCommand::Clone(
                    GameName::parse(from)?,
                    GameName::parse(to)?,
                )),
                _ => usage("clone <from> <to>"),
            },
            "record" | "load" if rest.is_empty() => usage(&format!("{word} <path>")),
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

/// The commands that take exactly one seat.
fn seat_command(word: &str, seat: Seat) -> ControlCommand {
    match word {
        "view" => ControlCommand::View(seat),
        "events" => ControlCommand::Events(seat),
        "information_state" => ControlCommand::InformationState(seat),
        _ => ControlCommand::Resign(seat),
    }
}

fn seat(s: &str) -> Result<Seat, CommandError> {
    s.parse::<Seat>().map_err(|e| err(ErrorKind::Usage, e))
}

/// The `n` of `undo n`: digits only, at least 1 (taking back nothing is a mistake in
/// the script, not a command).
fn count(s: &str) -> Result<NonZeroUsize, CommandError> {
    let digits = !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    digits
        .then(|| s.parse::<NonZeroUsize>().ok())
        .flatten()
        .ok_or_else(|| {
            let shown: String = s.chars().take(40).collect();
            err(
                ErrorKind::Usage,
                format!("bad count `{shown}`: expected a number from 1"),
            )
        })
}

/// `new [<name>] <game> [key=value…] [state=<state>]`: the first word names a game
/// when it is not a game id and a second word follows that is not `key=value`.
fn parse_new(rest: &str) -> Result<ControlCommand, CommandError> {
    let (head, state) = match rest.find("state=") {
        Some(at) if at == 0 || rest.as_bytes()[at - 1] == b' ' => {
            (&rest[..at], Some(rest[at + 6..].to_string()))
        }
        _ => (rest, None),
    };
    let mut words: Vec<&str> = head.split_whitespace().collect();
    if words.is_empty() {
        return Err(err(
            ErrorKind::Usage,
            "usage: new [<name>] <game> [key=value…] [state=<state>]",
        ));
    }
    let named = GameId::parse(words[0]).is_err() && words.get(1).is_some_and(|w| !w.contains('='));
    let name = if named {
        Some(GameName::parse(words.remove(0))?)
    } else {
        None
    };
    Ok(ControlCommand::New {
        name,
        game: words[0].to_string(),
        options: words[1..].iter().map(|w| w.to_string()).collect(),
        state,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::num::NonZeroUsize as N;

    #[test]
    fn commands_parse() {
        assert_eq!(
            ControlCommand::parse("new telka players=4 state=11/11 b 0"),
            Ok(ControlCommand::New {
                name: None,
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

    #[test]
    fn named_games_and_counts_parse() {
        let name = |s: &str| GameName::parse(s).unwrap();
        assert_eq!(
            ControlCommand::parse("new left telka players=3"),
            Ok(ControlCommand::New {
                name: Some(name("left")),
                game: "telka".into(),
                options: vec!["players=3".into()],
                state: None
            })
        );
        // A game id first is the unnamed form, however many words follow.
        assert!(matches!(
            ControlCommand::parse("new telka players=3"),
            Ok(ControlCommand::New { name: None, .. })
        ));
        assert_eq!(ControlCommand::parse("undo"), Ok(ControlCommand::Undo(N::MIN)));
        assert_eq!(
            ControlCommand::parse("undo 3"),
            Ok(ControlCommand::Undo(N::new(3).unwrap()))
        );
        for bad in [
            "undo 0",
            "undo -1",
            "undo +2",
            "undo x",
            "undo 1 2",
            "undo 99999999999999999999999",
        ] {
            assert_eq!(
                ControlCommand::parse(bad).unwrap_err().kind,
                ErrorKind::Usage,
                "{bad}"
            );
        }
        for bad in ["use telka", "use 1x", "clone a", "drop a-b c"] {
            assert!(ControlCommand::parse(bad).is_err(), "{bad}");
        }
        assert_eq!(
            ControlCommand::parse("use telka").unwrap_err().kind,
            ErrorKind::Name
        );
        assert_eq!(
            ControlCommand::parse("clone a b_2"),
            Ok(ControlCommand::Clone(name("a"), name("b_2")))
        );
    }
}
