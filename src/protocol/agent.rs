//! The agent protocol v1 (referee ↔ bot), as `protocol.md` describes it: what the
//! referee sends, typed and printed here, and what an agent sends, parsed here.
//!
//! Only [`ToAgent`] values go to a bot, and the game-dependent ones carry a
//! [`View`] or [`SeatEvent`]s, which only the games build, each for one seat.

use std::fmt::{self, Write as _};

use crate::game::{push_decimal, ActionKind, GameId, Options, Outcome, Seat, SeatEvent, View};

/// The protocol version this referee speaks.
pub const VERSION: u32 = 1;

/// Time information in a `go` line: the seat's own clock only (protocol.md §1.4, §1.6).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GoClock {
    /// A clock with `time_ms` left, `inc_ms` added after each move, and optionally the
    /// number of this seat's moves until the next time control.
    Clock {
        /// Milliseconds left on the seat's clock.
        time_ms: u64,
        /// Increment per move, in milliseconds.
        inc_ms: u64,
        /// Moves until the next control, for `moves/seconds` controls.
        moves_to_go: Option<u32>,
    },
    /// A fixed time for this decision (`--st`).
    MoveTime(u64),
}

/// Checks `setoption` pairs before any agent starts: a name or value holding a
/// control character (a line break would end the line and start another command)
/// or a name holding ` value ` could not be sent as one unambiguous line.
pub fn check_setoptions(pairs: &[(String, String)]) -> Result<(), String> {
    for (name, value) in pairs {
        let bad = |t: &str| t.chars().any(char::is_control);
        if name.trim().is_empty() || bad(name) || bad(value) || name.contains(" value ") {
            return Err(format!(
                "option `{}`: names must be non-empty, and names and values one line of printable text",
                crate::text::printable(name)
            ));
        }
    }
    Ok(())
}

/// A line the referee sends to an agent.
#[derive(Clone, Debug, PartialEq)]
pub enum ToAgent<'a> {
    /// Opens the handshake: `protocol 1`.
    Hello,
    /// `setoption name <name> value <value>`.
    SetOption {
        /// Option name as the agent declared it.
        name: &'a str,
        /// Value to set.
        value: &'a str,
    },
    /// `isready`: the agent answers `readyok` when it is ready.
    IsReady,
    /// `newgame game <id> seat <n> seats <count> [options <k=v>…]`.
    NewGame {
        /// The game.
        game: GameId,
        /// The agent's seat.
        seat: Seat,
        /// Number of seats.
        seats: usize,
        /// The game's options in force.
        options: &'a Options,
    },
    /// `event <text>`: something the seat saw happen.
    Event(&'a SeatEvent),
    /// `view <text>`: the seat's complete current view.
    View(&'a View),
    /// `go <kind> …`: decide now.
    Go {
        /// What is expected.
        kind: ActionKind,
        /// The clock.
        clock: GoClock,
    },
    /// `gameover <result>`.
    GameOver(&'a Outcome),
    /// `quit`: exit now.
    Quit,
}

impl ToAgent<'_> {
    /// Appends the line (without its newline) to `out`. The lines every action sends
    /// (`event`, `view`, `go`) are copied and their numbers printed digit by digit,
    /// without the formatting machinery: this is on the referee's path once per action.
    pub fn push_to(&self, out: &mut String) {
        match self {
            ToAgent::Event(e) => {
                out.push_str("event ");
                out.push_str(e.text());
            }
            ToAgent::View(v) => {
                out.push_str("view ");
                out.push_str(v.text());
            }
            ToAgent::Go { kind, clock } => {
                out.push_str("go ");
                out.push_str(kind.as_str());
                match *clock {
                    GoClock::MoveTime(ms) => {
                        out.push_str(" movetime ");
                        push_decimal(out, ms);
                    }
                    GoClock::Clock {
                        time_ms,
                        inc_ms,
                        moves_to_go,
                    } => {
                        out.push_str(" time ");
                        push_decimal(out, time_ms);
                        out.push_str(" inc ");
                        push_decimal(out, inc_ms);
                        if let Some(n) = moves_to_go {
                            out.push_str(" movestogo ");
                            push_decimal(out, n);
                        }
                    }
                }
            }
            ToAgent::Hello => {
                let _ = write!(out, "protocol {VERSION}");
            }
            ToAgent::SetOption { name, value } => {
                let _ = write!(out, "setoption name {name} value {value}");
            }
            ToAgent::IsReady => out.push_str("isready"),
            ToAgent::NewGame {
                game,
                seat,
                seats,
                options,
            } => {
                let _ = write!(
                    out,
                    "newgame game {game} seat {seat} seats {seats} options {options}"
                );
            }
            ToAgent::GameOver(o) => {
                out.push_str("gameover ");
                out.push_str(&o.protocol_text());
            }
            ToAgent::Quit => out.push_str("quit"),
        }
    }
}

impl fmt::Display for ToAgent<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut line = String::new();
        self.push_to(&mut line);
        f.write_str(&line)
    }
}

/// A line an agent sent, recognised or not.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FromAgent {
    /// `id name <name>`.
    IdName(String),
    /// `id author <author>`.
    IdAuthor(String),
    /// `option name <name> …` (declared options are logged; `setoption` may set them).
    Option(String),
    /// `protocolok`: the handshake is done.
    ProtocolOk,
    /// `readyok`.
    ReadyOk,
    /// `info …`: logged, otherwise ignored.
    Info(String),
    /// `bestmove <action>`; the action text may be empty (a protocol error).
    BestMove(String),
    /// Anything else (ignored, as in UCI, up to a limit).
    Unknown(String),
}

impl FromAgent {
    /// Classifies one line (without its newline). Tokens are separated by runs of
    /// spaces or tabs, as UCI allows.
    pub fn parse(line: &str) -> FromAgent {
        let (make, text) = FromAgent::classify(line);
        make(line[text].to_string())
    }

    /// [`FromAgent::parse`], keeping the text it carries in `line`'s own buffer: an
    /// answer costs no allocation of its own.
    pub fn from_line(mut line: String) -> FromAgent {
        let (make, text) = FromAgent::classify(&line);
        line.truncate(text.end);
        line.drain(..text.start);
        make(line)
    }

    /// What kind of line `line` is, and where in it the text that kind carries is.
    fn classify(line: &str) -> (fn(String) -> FromAgent, std::ops::Range<usize>) {
        // Byte range of `part`, a piece of `line`.
        let range = |part: &str| {
            let start = part.as_ptr() as usize - line.as_ptr() as usize;
            start..start + part.len()
        };
        let trimmed = line.trim_matches([' ', '\t']);
        // Every piece is a slice of `line` (an empty one at its end, not a literal `""`),
        // so that `range` can place it.
        let (word, rest) = match trimmed.split_once([' ', '\t']) {
            Some((w, r)) => (w, r.trim_matches([' ', '\t'])),
            None => (trimmed, &trimmed[trimmed.len()..]),
        };
        let unknown: (fn(String) -> FromAgent, _) = (FromAgent::Unknown, range(trimmed));
        match word {
            "bestmove" => (
                FromAgent::BestMove,
                range(rest.split_whitespace().next().unwrap_or(&rest[..0])),
            ),
            "info" => (FromAgent::Info, range(rest)),
            "readyok" if rest.is_empty() => (|_| FromAgent::ReadyOk, 0..0),
            "protocolok" if rest.is_empty() => (|_| FromAgent::ProtocolOk, 0..0),
            "option" => (FromAgent::Option, range(rest)),
            "id" => match rest.split_once([' ', '\t']) {
                Some(("name", v)) => (FromAgent::IdName, range(v.trim())),
                Some(("author", v)) => (FromAgent::IdAuthor, range(v.trim())),
                _ => unknown,
            },
            _ => unknown,
        }
    }
}

/// A line a bot receives, parsed: the other side of [`ToAgent`], used by the
/// built-in agents (and by tests that play the bot's part).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AgentInput {
    /// `protocol <version>`.
    Hello(u32),
    /// `setoption name <name> value <value>`.
    SetOption(String, String),
    /// `isready`.
    IsReady,
    /// `newgame …`.
    NewGame {
        /// Game id as sent.
        game: String,
        /// Own seat.
        seat: usize,
        /// Number of seats.
        seats: usize,
        /// `key=value` option words.
        options: Vec<(String, String)>,
    },
    /// `event <text>`.
    Event(String),
    /// `view <text>`.
    View(String),
    /// `go <kind> …` with the kind word and the time fields.
    Go {
        /// `place`, `move` or `respond`.
        kind: String,
        /// Milliseconds the agent may use for this decision, at most (derived from the
        /// clock fields; a bot that wants more nuance reads `fields`).
        budget_ms: Option<u64>,
    },
    /// `gameover <result>`.
    GameOver(String),
    /// `quit`.
    Quit,
    /// Anything else: ignored by convention.
    Unknown(String),
}

impl AgentInput {
    /// Parses one line from the referee.
    pub fn parse(line: &str) -> AgentInput {
        let line = line.trim_end_matches(['\r', '\n']);
        let (word, rest) = line.split_once(' ').unwrap_or((line, ""));
        // The word after `name`; looked up without collecting the words, since a bot
        // parses a `go` line for every decision.
        let after = |name: &str| {
            let mut words = rest.split_whitespace();
            words.by_ref().find(|w| *w == name)?;
            words.next()
        };
        let field = |name: &str| after(name).and_then(|v| v.parse::<u64>().ok());
        match word {
            "protocol" => rest
                .trim()
                .parse()
                .map(AgentInput::Hello)
                .unwrap_or_else(|_| AgentInput::Unknown(line.to_string())),
            "isready" => AgentInput::IsReady,
            "setoption" => match (rest.strip_prefix("name "), rest.find(" value ")) {
                (Some(_), Some(at)) if at > 5 => {
                    AgentInput::SetOption(rest[5..at].to_string(), rest[at + 7..].to_string())
                }
                _ => AgentInput::Unknown(line.to_string()),
            },
            "newgame" => {
                let text = |name: &str| after(name).map(str::to_string);
                let options = rest
                    .split_whitespace()
                    .skip_while(|w| *w != "options")
                    .skip(1)
                    .filter_map(|w| w.split_once('='))
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect();
                match (text("game"), field("seat"), field("seats")) {
                    (Some(game), Some(seat), Some(seats)) => AgentInput::NewGame {
                        game,
                        seat: seat as usize,
                        seats: seats as usize,
                        options,
                    },
                    _ => AgentInput::Unknown(line.to_string()),
                }
            }
            "event" => AgentInput::Event(rest.to_string()),
            "view" => AgentInput::View(rest.to_string()),
            "go" => {
                let budget_ms = field("movetime").or_else(|| {
                    let time = field("time")?;
                    let inc = field("inc").unwrap_or(0);
                    let to_go = field("movestogo").unwrap_or(30).max(1);
                    Some((time / to_go).saturating_add(inc))
                });
                AgentInput::Go {
                    kind: rest.split_whitespace().next().unwrap_or("").to_string(),
                    budget_ms,
                }
            }
            "gameover" => AgentInput::GameOver(rest.to_string()),
            "quit" => AgentInput::Quit,
            _ => AgentInput::Unknown(line.to_string()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agent_lines_are_classified() {
        assert_eq!(
            FromAgent::parse("bestmove c2-d3"),
            FromAgent::BestMove("c2-d3".into())
        );
        assert_eq!(
            FromAgent::parse("bestmove  c2-d3  ponder x"),
            FromAgent::BestMove("c2-d3".into())
        );
        assert_eq!(FromAgent::parse("bestmove"), FromAgent::BestMove(String::new()));
        assert_eq!(
            FromAgent::parse("id name Foo Bar"),
            FromAgent::IdName("Foo Bar".into())
        );
        assert_eq!(FromAgent::parse("protocolok"), FromAgent::ProtocolOk);
        assert_eq!(FromAgent::parse("  readyok "), FromAgent::ReadyOk);
        assert_eq!(
            FromAgent::parse("info depth 3"),
            FromAgent::Info("depth 3".into())
        );
        assert!(matches!(FromAgent::parse("readyokay"), FromAgent::Unknown(_)));
        assert!(matches!(FromAgent::parse(""), FromAgent::Unknown(_)));
    }

    #[test]
    fn referee_lines_print_and_parse_back() {
        let options = Options::parse(["players=3"]).unwrap();
        let seat = Seat::new(2).unwrap();
        let line = ToAgent::NewGame {
            game: GameId::Telka,
            seat,
            seats: 3,
            options: &options,
        }
        .to_string();
        assert_eq!(line, "newgame game telka seat 2 seats 3 options players=3");
        assert_eq!(
            AgentInput::parse(&line),
            AgentInput::NewGame {
                game: "telka".into(),
                seat: 2,
                seats: 3,
                options: vec![("players".into(), "3".into())]
            }
        );
        let go = ToAgent::Go {
            kind: ActionKind::Move,
            clock: GoClock::Clock {
                time_ms: 60000,
                inc_ms: 100,
                moves_to_go: Some(40),
            },
        }
        .to_string();
        assert_eq!(go, "go move time 60000 inc 100 movestogo 40");
        assert_eq!(
            AgentInput::parse(&go),
            AgentInput::Go {
                kind: "move".into(),
                budget_ms: Some(1600)
            }
        );
        assert_eq!(
            AgentInput::parse("setoption name Skill Level value 3"),
            AgentInput::SetOption("Skill Level".into(), "3".into())
        );
    }
}
