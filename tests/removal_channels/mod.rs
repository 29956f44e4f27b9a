//! The channels through which a seat learns a game, each run as a user runs it: a
//! match of scripted bots (their transcripts), a resumed match, `serve`, `show --seat`
//! and play by mail. Each puts what every viewer got into a [`Got`].

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use tempfile::TempDir;

use super::{Got, Plays, Side};
use crate::cli_support::{bot_command, referee_in, text, Serve};

/// The channels whose bytes hold the forfeit itself (the second `events` answer
/// holds only what came after it).
pub(super) const TELL_THE_FORFEIT: [&str; 9] = [
    "match transcript",
    "resumed match transcript",
    "show --seat (finished match)",
    "show --seat --format html (finished match)",
    "show --seat (record after the forfeit)",
    "show --seat --format svg (record after the forfeit)",
    "serve events after the forfeit",
    "serve information_state",
    "pbm messages",
];

/// The scripted bot of `fixtures/bots` playing seat `s`'s actions of `plays` (forced
/// passes are played by the referee, not asked for), then an action no game accepts.
fn script(plays: &[(usize, String)], s: usize) -> String {
    let actions: Vec<&str> = plays
        .iter()
        .filter(|(p, a)| *p == s && a != "pass")
        .map(|(_, a)| a.as_str())
        .collect();
    bot_command("scripted.sh", &actions)
}

/// Runs `referee` with `args` in `dir`; it must succeed. Returns its stdout.
fn run(dir: &Path, args: &[String]) -> String {
    let out = referee_in(dir).args(args).output().expect("run referee");
    assert!(
        out.status.success(),
        "referee {args:?} failed: {}",
        text(&out.stderr)
    );
    text(&out.stdout)
}

fn words(list: &[&str]) -> Vec<String> {
    list.iter().map(|w| w.to_string()).collect()
}

/// A match of scripted bots (a fixed time per decision, so every `go` line reads
/// the same): seat `forfeit` forfeits when its moves run out, the others after theirs.
/// Returns the record; the viewers' transcripts go into `got`.
fn wire(side: &Side, dir: &Path, viewers: &[usize], got: &mut Got) -> PathBuf {
    let n = side.players;
    let mut args = words(&["match", "--game", "multichess", "-o"]);
    args.push(format!("players={n}"));
    if let Some(state) = &side.state {
        args.extend(["--state".to_string(), state.clone()]);
    }
    let plays: Plays = side.before.iter().chain(&side.after).cloned().collect();
    for s in 1..=n {
        args.extend(["--agent".to_string(), script(&plays, s)]);
    }
    args.extend(words(&[
        "--st",
        "5",
        "-q",
        "--log-dir",
        "logs",
        "--record",
        "match.jsonl",
    ]));
    run(dir, &args);
    transcripts(dir, "logs", "match transcript", viewers, got);
    dir.join("match.jsonl")
}

fn transcripts(dir: &Path, logs: &str, channel: &'static str, viewers: &[usize], got: &mut Got) {
    for &j in viewers {
        let path = dir.join(logs).join(format!("seat{j}.transcript"));
        got.insert(
            (channel, j),
            std::fs::read_to_string(&path).expect("a transcript"),
        );
    }
}

/// `serve`: the game to the forfeit (`resign`), whose record it writes and returns,
/// then the round after it; each viewer's `events` right after the forfeit and at the
/// end, and its `information_state`.
fn served(side: &Side, dir: &Path, viewers: &[usize], got: &mut Got) -> PathBuf {
    let mut s = Serve::start();
    let state = side.state.as_ref().map(|st| format!(" state={st}"));
    s.ask(&format!(
        "new multichess players={}{}",
        side.players,
        state.unwrap_or_default()
    ));
    let play = |s: &mut Serve, plays: &Plays| {
        for (p, a) in plays {
            s.ask(&format!("play {p} {a}"));
        }
    };
    play(&mut s, &side.before);
    s.ask(&format!("resign {}", side.forfeit));
    let record = dir.join("served.jsonl");
    s.ask(&format!("record {}", record.display()));
    for &j in viewers {
        got.insert(
            ("serve events after the forfeit", j),
            s.ask(&format!("events {j}")).join("\n"),
        );
    }
    play(&mut s, &side.after);
    for &j in viewers {
        got.insert(("serve events", j), s.ask(&format!("events {j}")).join("\n"));
        let info = s.ask(&format!("information_state {j}")).join("\n");
        got.insert(("serve information_state", j), info);
    }
    s.ask("quit");
    record
}

/// The record `serve` wrote at the forfeit, resumed as a match of scripted bots playing
/// the round after it: each restarted bot is first sent the game so far.
fn resumed(side: &Side, dir: &Path, record: &Path, viewers: &[usize], got: &mut Got) {
    std::fs::copy(record, dir.join("resumed.jsonl")).expect("copy the record");
    let mut args = words(&["match", "--resume", "resumed.jsonl"]);
    for s in 1..=side.players {
        args.extend(["--agent".to_string(), script(&side.after, s)]);
    }
    args.extend(words(&["--st", "5", "-q", "--log-dir", "logs-resumed"]));
    run(dir, &args);
    transcripts(dir, "logs-resumed", "resumed match transcript", viewers, got);
}

/// `show --seat` of both records: text and the HTML viewer of the finished match,
/// text and SVG of the record that ends with the forfeit.
fn shown(dir: &Path, finished: &Path, at_forfeit: &Path, viewers: &[usize], got: &mut Got) {
    let runs: [(&'static str, &Path, &str); 4] = [
        ("show --seat (finished match)", finished, "text"),
        ("show --seat --format html (finished match)", finished, "html"),
        ("show --seat (record after the forfeit)", at_forfeit, "text"),
        (
            "show --seat --format svg (record after the forfeit)",
            at_forfeit,
            "svg",
        ),
    ];
    for &j in viewers {
        for (channel, record, format) in runs {
            let mut args = words(&["show", "--seat", &j.to_string(), "--format", format]);
            args.push(record.to_string_lossy().into_owned());
            got.insert((channel, j), run(dir, &args));
        }
    }
}

/// Play by mail (from the start only: `pbm new` takes no state): every message each
/// viewer is sent, through the forfeit (`resign`) and the round after it, and the one
/// `pbm view` gives it at the end. The salted chain hash each message names differs
/// between any two games, as it must (R-S1), and is masked.
fn mailed(side: &Side, dir: &Path, viewers: &[usize], got: &mut Got) {
    let mut args = words(&["pbm", "new", "--game", "multichess", "-o"]);
    args.push(format!("players={}", side.players));
    for s in 1..=side.players {
        args.extend(["--seat".to_string(), format!("p{s}")]);
    }
    args.push("game.jsonl".to_string());
    let mut out = run(dir, &args);
    let pbm = |verb: &str, s: usize, action: Option<&str>| {
        let mut a = words(&["pbm", verb, "game.jsonl", "--seat", &s.to_string()]);
        a.extend(action.map(str::to_string));
        run(dir, &a)
    };
    for (s, a) in &side.before {
        out.push_str(&pbm("play", *s, Some(a)));
    }
    out.push_str(&pbm("resign", side.forfeit, None));
    for (s, a) in &side.after {
        out.push_str(&pbm("play", *s, Some(a)));
    }
    for &j in viewers {
        out.push_str(&pbm("view", j, None));
    }
    let mut inbox: BTreeMap<usize, String> = BTreeMap::new();
    let mut to = None;
    for line in out.lines() {
        if let Some(rest) = line.strip_prefix("=== referee play-by-mail message to seat ") {
            to = rest.split(' ').next().and_then(|w| w.parse::<usize>().ok());
        }
        let line = match line.split_once(", hash ") {
            Some((head, _)) if head.starts_with("record: line ") => format!("{head}, hash (salted)"),
            _ => line.to_string(),
        };
        if let Some(seat) = to {
            let text = inbox.entry(seat).or_default();
            text.push_str(&line);
            text.push('\n');
        }
        if line == "=== end of message ===" {
            to = None;
        }
    }
    for &j in viewers {
        got.insert(
            ("pbm messages", j),
            inbox.remove(&j).expect("messages to the viewer"),
        );
    }
}

/// Every channel for one game of a pair, in a directory of its own.
pub(super) fn channels(side: &Side, viewers: &[usize]) -> Got {
    let dir = TempDir::new().unwrap();
    let mut got = Got::new();
    let finished = wire(side, dir.path(), viewers, &mut got);
    let at_forfeit = served(side, dir.path(), viewers, &mut got);
    resumed(side, dir.path(), &at_forfeit, viewers, &mut got);
    shown(dir.path(), &finished, &at_forfeit, viewers, &mut got);
    if side.state.is_none() {
        mailed(side, dir.path(), viewers, &mut got);
    }
    got
}
