//! The JSON form of the controller's answers (`referee serve --json`, protocol.md
//! §2.3): exactly one object per line, `{"ok":true,…}` with the reply's fields typed
//! (seats and plies as numbers, lists as arrays, events as objects), or
//! `{"ok":false,"error":{"kind":…,"message":…}}`. Members come in the order written
//! here (serde_json keeps it), so a line is the same for the same answer.

use serde_json::{json, Map, Value};

use super::reply::{GameEntry, Reply};
use super::CommandError;
use crate::game::{EndReason, Options, Outcome, Turn};

/// The one line (without its newline) that answers a command.
pub fn answer_line(answer: &Result<Reply, CommandError>) -> String {
    let value = match answer {
        Ok(reply) => {
            let mut object = Map::new();
            object.insert("ok".into(), Value::Bool(true));
            object.extend(fields(reply));
            Value::Object(object)
        }
        Err(e) => error_value(e),
    };
    value.to_string()
}

/// `{"ok":false,"error":{"kind":…,"message":…}}`.
pub fn error_value(e: &CommandError) -> Value {
    json!({"ok": false, "error": {"kind": e.kind.as_str(), "message": e.message}})
}

/// The members a reply adds after `"ok":true`.
fn fields(reply: &Reply) -> Map<String, Value> {
    let value = match reply {
        Reply::New {
            name, game, options, ..
        } => {
            json!({"name": name, "game": game.as_str(), "options": options_value(options)})
        }
        Reply::Turn(Turn::Act { seat, kind }) => {
            json!({"turn": {"seat": seat.number(), "kind": kind.as_str()}})
        }
        Reply::Turn(Turn::Over) => json!({"turn": null}),
        Reply::Actions(actions) => json!({"actions": actions}),
        Reply::Events(events) => json!({"events": events.iter().map(|e| event_value(e)).collect::<Vec<_>>()}),
        Reply::Undone { count, ply } => json!({"undone": count, "ply": ply}),
        Reply::View(seat, view) => json!({"seat": seat.number(), "view": view}),
        Reply::Told(seat, lines) => json!({"seat": seat.number(), "lines": lines}),
        Reply::InformationState(seat, text) => {
            json!({"seat": seat.number(), "information_state": text})
        }
        Reply::State(state) => json!({"state": state}),
        Reply::Result(outcome) => json!({"result": outcome.as_ref().map(outcome_value)}),
        Reply::Diagram(lines) => json!({"diagram": lines}),
        Reply::Loaded { path, ply } => json!({"path": path, "ply": ply}),
        Reply::Games(games) => json!({"games": games.iter().map(game_value).collect::<Vec<_>>()}),
        Reply::Using(name) => json!({"current": name}),
        Reply::Help => json!({"commands": super::COMMANDS.split(' ').collect::<Vec<_>>()}),
        Reply::Done => json!({}),
    };
    match value {
        Value::Object(map) => map,
        _ => unreachable!("every reply is an object"),
    }
}

/// Options as an object; a value of digits only is a number (every option of every
/// game is one today), anything else stays a string.
fn options_value(options: &Options) -> Value {
    let map = options
        .iter()
        .map(|(k, v)| {
            let value = match v.parse::<u64>() {
                Ok(n) if n.to_string() == v => json!(n),
                _ => json!(v),
            };
            (k.to_string(), value)
        })
        .collect();
    Value::Object(map)
}

/// An event: its first word as `kind`, the words after it, and the whole text as the
/// text form prints it (the words' meaning is each game's, protocol.md §3).
fn event_value(text: &str) -> Value {
    let mut words = text.split(' ');
    let kind = words.next().unwrap_or("");
    json!({"kind": kind, "args": words.collect::<Vec<_>>(), "text": text})
}

/// A result: places by seat, and the reason as an object.
fn outcome_value(outcome: &Outcome) -> Value {
    let reason = match &outcome.reason {
        EndReason::Win => json!({"kind": "win"}),
        EndReason::MaxPlies => json!({"kind": "max-plies"}),
        EndReason::LastStanding => json!({"kind": "last-standing"}),
        EndReason::Forfeit { seat, kind } => {
            json!({"kind": "forfeit", "seat": seat.number(), "forfeit": kind.as_str()})
        }
    };
    json!({"places": outcome.places, "reason": reason, "text": outcome.protocol_text()})
}

fn game_value(g: &GameEntry) -> Value {
    json!({"name": g.name, "game": g.game.as_str(), "ply": g.ply, "current": g.current})
}
