//! The controller protocol through `referee serve`, driven by stdin scripts: every
//! command gets exactly one final line (`ok…` or `error <kind> <message>`), a
//! rejected command changes nothing, states round-trip, and records written by
//! `record` verify and load back.

mod cli_support;

use std::path::Path;

use cli_support::*;
use tempfile::TempDir;

/// The answer to one command: its data lines and its final line.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Answer {
    lines: Vec<String>,
    last: String,
}

impl Answer {
    fn ok(&self) -> bool {
        self.last == "ok" || self.last.starts_with("ok ")
    }

    /// The error kind, for an `error` answer.
    fn error(&self) -> Option<&str> {
        self.last.strip_prefix("error ")?.split(' ').next()
    }

    /// The only data line.
    fn line(&self) -> &str {
        assert_eq!(self.lines.len(), 1, "one data line expected: {self:?}");
        &self.lines[0]
    }
}

fn is_final(line: &str) -> bool {
    line == "ok" || line.starts_with("ok ") || line.starts_with("error ")
}

/// Runs `script` through `referee serve` in `dir` and splits the output into one
/// answer per command, checking that every command got exactly one final line.
fn serve(dir: &Path, script: &str) -> Vec<Answer> {
    let out = referee_in(dir).arg("serve").write_stdin(script).output().unwrap();
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "stderr: {}", text(&out.stderr));
    let mut answers = Vec::new();
    let mut lines = Vec::new();
    for line in stdout.lines() {
        if is_final(line) {
            if let Some(error) = line.strip_prefix("error ") {
                // `error <kind> <message>`: a kind word and a message.
                let (kind, message) = error.split_once(' ').unwrap_or((error, ""));
                assert!(!kind.is_empty() && !message.trim().is_empty(), "{line}");
                assert!(lines.is_empty(), "an error answer has no data lines: {lines:?}");
            }
            answers.push(Answer {
                lines: std::mem::take(&mut lines),
                last: line.to_string(),
            });
        } else {
            lines.push(line.to_string());
        }
    }
    assert!(lines.is_empty(), "output ends without a final line: {lines:?}");
    // Commands answered: the non-blank, non-comment lines, up to and including `quit`.
    let mut commands = 0;
    for line in script.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        commands += 1;
        if line == "quit" {
            break;
        }
    }
    assert_eq!(answers.len(), commands, "one answer per command:\n{stdout}");
    answers
}

const START_2P: &str = "7rrrr/7rrrr/9rr/9rr/11/11/11/bb9/bb9/bbbb7/bbbb7 b 0";
const FILES: &str = "a b c d e f g h i j k";

#[test]
fn a_scripted_session_answers_every_command() {
    let dir = TempDir::new().unwrap();
    let record = dir.path().join("session.jsonl");
    // First find the first legal move, then play it in a full session.
    let first = serve(dir.path(), "new telka\nlegal\n")[1].line().to_string();
    let first = first.split(' ').next().unwrap().to_string();
    let script = format!(
        "new telka\nturn\nlegal\nplay 1 {first}\nview 2\nstate\nresult\nshow\nrecord {}\nquit\nstate\n",
        record.display()
    );
    let a = serve(dir.path(), &script);
    assert!(a.iter().all(Answer::ok), "{a:#?}");
    assert_eq!(
        a[0].line(),
        "new telka colors-per-player=1 max-plies=1000 players=2"
    );
    assert_eq!(a[1].line(), "turn 1 move");
    let legal: Vec<&str> = a[2].line().split(' ').collect();
    assert_eq!(legal[0], first);
    for expected in ["a2-c4", "c2-d3", "b4-c5", "a1-c3-e1"] {
        assert!(legal.contains(&expected), "{expected} missing from {legal:?}");
    }
    assert!(
        !legal.contains(&"pass") && !legal.contains(&"k11-k10"),
        "{legal:?}"
    );
    assert_eq!(a[3].lines, [format!("move blue {first}")]);
    // Everything is public in Telka: a seat's view is the state.
    assert_eq!(a[4].line(), a[5].line());
    assert!(a[5].line().ends_with(" r 1"), "{}", a[5].line());
    assert_eq!(a[6].line(), "ongoing");
    let diagram = &a[7].lines;
    assert_eq!(
        diagram.iter().filter(|l| l.trim() == FILES).count(),
        1,
        "{diagram:?}"
    );
    assert!(diagram.len() >= 12, "11 ranks and the files: {diagram:?}");
    assert!(a[8].lines.is_empty());
    assert!(a[9].lines.is_empty(), "quit");
    let verified = assert_verifies(&record);
    assert!(
        verified.contains("1 plies") && verified.contains("UNFINISHED"),
        "{verified}"
    );
}

#[test]
fn states_are_exact() {
    let dir = TempDir::new().unwrap();
    let a = serve(
        dir.path(),
        "new telka\nstate\nview 1\nplay 1 a1-c3\nstate\nplay 2 k11-k10\nplay 2 k10-i8\nstate\n",
    );
    assert_eq!(a[1].line(), START_2P);
    assert_eq!(a[2].line(), START_2P);
    assert_eq!(
        a[4].line(),
        "7rrrr/7rrrr/9rr/9rr/11/11/11/bb9/bbb8/bbbb7/1bbb7 r 1"
    );
    assert_eq!(a[5].error(), Some("illegal"), "k10 is occupied: {:?}", a[5]);
    assert_eq!(a[6].lines, ["move red k10-i8"]);
    assert_eq!(
        a[7].line(),
        "7rrrr/7rrr1/9rr/8rrr/11/11/11/bb9/bbb8/bbbb7/1bbb7 b 2"
    );
}

#[test]
fn a_rejected_play_changes_nothing() {
    let dir = TempDir::new().unwrap();
    let rejected = [
        ("play 1 a1-a2", "illegal"),    // onto an own counter
        ("play 1 a1-e5", "illegal"),    // neither a step nor a leap
        ("play 1 f6-f7", "illegal"),    // no counter there
        ("play 1 k11-k10", "illegal"),  // not Blue's counter
        ("play 1 pass", "illegal"),     // Blue has moves (R-B5)
        ("play 1 a3-a5-a3", "illegal"), // lands twice on one point
        ("play 2 k10-i8", "turn"),      // not seat 2's turn
        ("play 1 zz", "malformed"),
        ("play 1 a1-", "malformed"),
        ("play 1 l1-k1", "malformed"),
        ("play 1 a0-a1", "malformed"),
        ("play 1 a1-a12", "malformed"),
        ("play 3 a2-c4", "usage"), // no seat 3 in a 2-player game
        ("play 0 a2-c4", "usage"),
        ("play x a2-c4", "usage"),
        ("play 1", "usage"),
        ("play 1 a2-c4 c4-d5", "usage"),
    ];
    let mut script = "new telka\nstate\nturn\nlegal\n".to_string();
    for (command, _) in rejected {
        script.push_str(command);
        script.push_str("\nstate\nturn\nlegal\n");
    }
    let a = serve(dir.path(), &script);
    let before = (&a[1], &a[2], &a[3]);
    assert_eq!(a[2].line(), "turn 1 move");
    for (i, (command, kind)) in rejected.iter().enumerate() {
        let at = 4 + 4 * i;
        assert_eq!(a[at].error(), Some(*kind), "{command}: {:?}", a[at]);
        assert!(a[at].lines.is_empty(), "{command}: one error line only");
        assert_eq!(
            (&a[at + 1], &a[at + 2], &a[at + 3]),
            before,
            "{command} changed the game"
        );
    }
}

#[test]
fn a_null_step_is_not_a_move() {
    // `a1-a1` leaves the board as it was: a pass, which R-B5 forbids while moves exist.
    let dir = TempDir::new().unwrap();
    let a = serve(dir.path(), "new telka\nstate\nplay 1 a1-a1\nstate\nturn\n");
    assert!(a[2].error().is_some(), "a1-a1 accepted: {:?}", a[2]);
    assert_eq!(a[3].line(), a[1].line());
    assert_eq!(a[4].line(), "turn 1 move");
}

#[test]
fn game_commands_before_new_are_refused() {
    let dir = TempDir::new().unwrap();
    let record = dir.path().join("none.jsonl");
    let commands = [
        "turn".to_string(),
        "legal".into(),
        "play 1 a2-c4".into(),
        "view 1".into(),
        "state".into(),
        "result".into(),
        "show".into(),
        "resign 1".into(),
        format!("record {}", record.display()),
    ];
    let a = serve(dir.path(), &(commands.join("\n") + "\n"));
    for (command, answer) in commands.iter().zip(&a) {
        assert_eq!(answer.error(), Some("no-game"), "{command}: {answer:?}");
    }
    assert!(!record.exists());
}

#[test]
fn unknown_and_malformed_commands_are_usage_errors() {
    let dir = TempDir::new().unwrap();
    let commands = [
        "frobnicate",
        "NEW telka",
        "turn 1",
        "state now",
        "view",
        "view 1 2",
        "new",
        "record",
        "load",
        "show 1 2",
    ];
    let a = serve(dir.path(), &(commands.join("\n") + "\n"));
    for (command, answer) in commands.iter().zip(&a) {
        assert_eq!(answer.error(), Some("usage"), "{command}: {answer:?}");
    }
    // And after a game has started, too; the game is unharmed.
    let a = serve(dir.path(), "new telka\nstate\nfrobnicate\nplay\nstate\n");
    assert_eq!(a[2].error(), Some("usage"));
    assert_eq!(a[3].error(), Some("usage"));
    assert_eq!(a[4], a[1]);
}

#[test]
fn bad_setups_are_refused() {
    let dir = TempDir::new().unwrap();
    for command in [
        "new pegchow players=9",
        "new telka players=1",
        "new telka nonsense=1",
        "new telka players",
        "new telka players=3 colors-per-player=2",
        "new chess",
        "new telka state=",
        "new telka state=not a state",
        "new telka state=11/11/11 b 0",
    ] {
        let a = serve(dir.path(), &format!("{command}\nstate\n"));
        assert_eq!(a[0].error(), Some("setup"), "{command}: {:?}", a[0]);
        assert_eq!(a[1].error(), Some("no-game"), "{command} started a game");
    }
    // A failed `new` leaves the game before it in place.
    let a = serve(
        dir.path(),
        "new telka\nplay 1 a2-c4\nstate\nnew pegchow players=9\nstate\n",
    );
    assert_eq!(a[3].error(), Some("setup"));
    assert_eq!(a[4], a[2]);
}

#[test]
fn a_state_answer_starts_the_same_game_again() {
    let dir = TempDir::new().unwrap();
    let a = serve(
        dir.path(),
        "new telka players=3\nplay 1 a2-c4\nplay 2 a10-c8\nplay 3 k10-i8\nplay 1 c4-d5\nstate\nlegal\nturn\n",
    );
    assert!(a[..5].iter().all(Answer::ok), "{a:#?}");
    let (state, legal, turn) = (a[5].line(), a[6].line(), a[7].line());
    let b = serve(
        dir.path(),
        &format!("new telka players=3 state={state}\nstate\nlegal\nturn\n"),
    );
    assert!(b[0].ok(), "{:?}", b[0]);
    assert_eq!(b[1].line(), state);
    assert_eq!(b[2].line(), legal);
    assert_eq!(b[3].line(), turn);
    // The start state round-trips too, for every table.
    for options in ["", " players=3", " players=4", " colors-per-player=2"] {
        let a = serve(dir.path(), &format!("new pegchow{options}\nstate\n"));
        let state = a[1].line();
        let b = serve(
            dir.path(),
            &format!("new pegchow{options} state={state}\nstate\n"),
        );
        assert_eq!(b[1].line(), state, "{options}");
    }
}

#[test]
fn a_recorded_game_loads_and_goes_on() {
    let dir = TempDir::new().unwrap();
    let first = dir.path().join("first.jsonl");
    let second = dir.path().join("second.jsonl");
    let a = serve(
        dir.path(),
        &format!(
            "new telka\nplay 1 a2-c4\nplay 2 k10-i8\nplay 1 a1-c3-c5\nstate\nturn\nlegal\nrecord {}\n",
            first.display()
        ),
    );
    assert!(a.iter().all(Answer::ok), "{a:#?}");
    let (state, turn, legal) = (a[4].line(), a[5].line(), a[6].line());
    assert!(assert_verifies(&first).contains("3 plies"));

    let next = legal.split(' ').next().unwrap();
    let b = serve(
        dir.path(),
        &format!(
            "load {}\nstate\nturn\nlegal\nplay 2 {next}\nstate\nrecord {}\n",
            first.display(),
            second.display()
        ),
    );
    assert!(b.iter().all(Answer::ok), "{b:#?}");
    assert_eq!(b[1].line(), state);
    assert_eq!(b[2].line(), turn);
    assert_eq!(b[3].line(), legal);
    assert_eq!(b[4].lines, [format!("move red {next}")]);
    assert!(b[5].line().ends_with(" b 4"), "{}", b[5].line());
    let verified = assert_verifies(&second);
    assert!(verified.contains("4 plies"), "{verified}");
    // The continued record begins with the loaded one's lines.
    let (old, new) = (record_lines(&first), record_lines(&second));
    assert_eq!(actions(&new)[..3], actions(&old)[..]);
}

#[test]
fn a_finished_game_records_its_result() {
    let dir = TempDir::new().unwrap();
    let path = dir.path().join("resigned.jsonl");
    let a = serve(
        dir.path(),
        &format!(
            "new telka\nplay 1 a2-c4\nresign 2\nresult\nturn\nplay 1 c4-d5\nrecord {}\n",
            path.display()
        ),
    );
    assert_eq!(a[2].lines[0], "forfeit 2 resign");
    assert_eq!(a[3].line(), "places 1 2 reason forfeit 2 resign");
    assert_eq!(a[4].line(), "turn none");
    assert_eq!(a[5].error(), Some("over"));
    assert!(a[6].ok());
    let lines = record_lines(&path);
    assert_eq!(places(&lines), [1, 2]);
    assert!(assert_verifies(&path).contains("finished"));
}

#[test]
fn loading_a_bad_record_is_an_error_and_keeps_the_game() {
    let dir = TempDir::new().unwrap();
    let junk = dir.path().join("junk.jsonl");
    std::fs::write(&junk, "not a record\n").unwrap();
    let missing = dir.path().join("missing.jsonl");
    let a = serve(
        dir.path(),
        &format!(
            "new telka\nplay 1 a2-c4\nstate\nload {}\nload {}\nstate\n",
            junk.display(),
            missing.display()
        ),
    );
    assert_eq!(a[3].error(), Some("record"), "{:?}", a[3]);
    assert_eq!(a[4].error(), Some("record"), "{:?}", a[4]);
    assert_eq!(a[5], a[2]);
}

/// A command line far over the cap (protocol.md §2) is answered with one `error
/// usage` line and read past without being held: the referee's peak memory stays far
/// below the line's size, nothing changes, and the next commands are answered as usual.
#[test]
fn an_over_long_line_is_refused_without_being_held() {
    const LINE_MIB: usize = 64;
    const BOUND_KIB: u64 = 32 * 1024;
    let mut serve = Serve::start();
    serve.ask("new telka");
    let before = serve.ask("state");
    let chunk = vec![b'x'; 1 << 20];
    // The line starts like a command, so that it would change the game if it were run.
    serve.send(b"play 1 a2-c4 ");
    for _ in 0..LINE_MIB {
        serve.send(&chunk);
    }
    serve.send(b"\n");
    let (data, last) = serve.answer();
    assert!(data.is_empty(), "{data:?}");
    assert!(
        last.starts_with("error usage ") && last.contains("long"),
        "{last}"
    );
    assert_eq!(serve.ask("state"), before, "the over-long line changed the game");
    assert_eq!(serve.ask("turn"), ["turn 1 move"]);
    // The session is alive and has read the whole line: its high-water mark is final.
    let peak = peak_rss_kib(serve.pid()).expect("VmHWM of the running session");
    assert!(
        peak < BOUND_KIB,
        "serve peaked at {peak} KiB on a {LINE_MIB} MiB line (bound {BOUND_KIB} KiB)"
    );
}
/// The first of the legal actions of the seat to act in a new game of `setup`.
fn first_legal(dir: &Path, setup: &str) -> String {
    let a = serve(dir, &format!("{setup}\nlegal\n"));
    a[1].line().split(' ').next().unwrap().to_string()
}

/// A seat that is out (three independent sides: it resigned, the others play on) or a
/// game that is over cannot resign again: the second `resign` is an error, and the
/// record holds one forfeit line, which verifies.
#[test]
fn a_seat_out_or_a_game_over_cannot_resign_again() {
    let dir = TempDir::new().unwrap();
    for setup in [
        "new pegchow players=3",
        "new telka players=3",
        "new multichess players=3",
    ] {
        let path = dir.path().join("resigned.jsonl");
        let first = first_legal(dir.path(), setup);
        let a = serve(
            dir.path(),
            &format!(
                "{setup}\nplay 1 {first}\nresign 2\nstate\nresign 2\nstate\nresult\nrecord {}\n",
                path.display()
            ),
        );
        assert!(a[2].ok() && a[2].lines[0] == "forfeit 2 resign", "{setup}: {a:?}");
        assert_eq!(a[4].error(), Some("over"), "{setup}: {:?}", a[4]);
        assert!(a[4].last.contains("seat 2"), "{setup}: {:?}", a[4]);
        assert_eq!(a[5], a[3], "{setup}: the refused resign changed the game");
        assert_eq!(a[6].line(), "ongoing", "{setup}");
        let lines = record_lines(&path);
        let forfeits = lines.iter().filter(|l| kind(l) == "forfeit").count();
        assert_eq!(forfeits, 1, "{setup}: {lines:?}");
        assert_verifies(&path);
    }
    // Two sides: the first resign ends the game; a second one, of either seat, is
    // refused as the game is over.
    let path = dir.path().join("over.jsonl");
    let a = serve(
        dir.path(),
        &format!(
            "new telka\nresign 1\nresign 1\nresign 2\nrecord {}\n",
            path.display()
        ),
    );
    assert_eq!(a[1].lines, ["forfeit 1 resign"]);
    assert_eq!(a[2].error(), Some("over"), "{:?}", a[2]);
    assert_eq!(a[3].error(), Some("over"), "{:?}", a[3]);
    let lines = record_lines(&path);
    assert_eq!(lines.iter().filter(|l| kind(l) == "forfeit").count(), 1);
    assert_verifies(&path);
}
