//! The example bot `examples/agents/random_agent.py` against the real binary: it plays
//! whole Peg Chow and Telka matches (2, 3 and 4 players, either seat) without ever
//! forfeiting, its records verify, and its move generator lists exactly the moves the
//! referee's `legal` lists (protocol.md §1, §2; R-B4…R-B6).
//!
//! Needs `python3` on PATH; without it every test prints a note and passes.

mod cli_support;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::Duration;

use assert_cmd::Command;
use cli_support::{have_python, Rng, Serve};
use serde_json::Value;

const REFEREE: &str = env!("CARGO_BIN_EXE_referee");
/// Generous: a match of 200 plies takes well under a second.
const TIMEOUT: Duration = Duration::from_secs(300);

fn bot() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/agents/random_agent.py")
}

/// The `--agent` command line of the Python bot.
fn bot_command(seed: u64) -> String {
    format!(
        "python3 {} --seed {seed}",
        shell_words::quote(&bot().to_string_lossy())
    )
}

/// Plays one match with the Python bot in `python_seats` (the other seats get the
/// built-in random agent) and checks the match, its record and `referee verify`.
fn python_match(game: &str, options: &[&str], seats: usize, python_seats: &[usize]) {
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("r.jsonl");
    let mut cmd = Command::new(REFEREE);
    cmd.args(["match", "--game", game]);
    for option in options.iter().chain(&["max-plies=200"]) {
        cmd.args(["-o", option]);
    }
    for seat in 1..=seats {
        let agent = if python_seats.contains(&seat) {
            bot_command(seat as u64)
        } else {
            format!("{} agent random --seed {seat}", shell_words::quote(REFEREE))
        };
        cmd.args(["--agent", &agent]);
    }
    cmd.args(["--fill", "random", "--seed", "7", "--st", "5", "--record"])
        .arg(&record)
        .arg("-q")
        .timeout(TIMEOUT)
        .assert()
        .success();

    let text = std::fs::read_to_string(&record).unwrap();
    let lines: Vec<Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let context = format!("{game} {options:?}, Python bot in seats {python_seats:?}");
    for line in &lines {
        assert_ne!(line["type"], "forfeit", "{context}: {line}");
    }
    let header = &lines[0];
    assert_eq!(header["type"], "header", "{context}");
    for &seat in python_seats {
        assert_eq!(
            header["seats"][seat - 1]["name"],
            "random_agent.py",
            "{context}: {header}"
        );
        let decided = lines
            .iter()
            .filter(|l| l["type"] == "action" && l["seat"] == seat && l.get("forced").is_none())
            .count();
        assert!(decided > 0, "{context}: seat {seat} never decided a move");
    }
    let result = lines.last().unwrap();
    assert_eq!(result["type"], "result", "{context}: the match has a result");

    Command::new(REFEREE)
        .arg("verify")
        .arg(&record)
        .timeout(TIMEOUT)
        .assert()
        .success();
}

#[test]
fn python_bot_plays_telka_in_seat_1() {
    if have_python() {
        python_match("telka", &[], 2, &[1]);
    }
}

#[test]
fn python_bot_plays_telka_in_seat_2() {
    if have_python() {
        python_match("telka", &[], 2, &[2]);
    }
}

#[test]
fn python_bot_plays_pegchow_in_seat_1() {
    if have_python() {
        python_match("pegchow", &[], 2, &[1]);
    }
}

#[test]
fn python_bot_plays_pegchow_in_seat_2() {
    if have_python() {
        python_match("pegchow", &[], 2, &[2]);
    }
}

#[test]
fn python_bot_plays_telka_with_3_players() {
    if have_python() {
        python_match("telka", &["players=3"], 3, &[1]);
        python_match("telka", &["players=3"], 3, &[2]);
    }
}

#[test]
fn python_bot_plays_telka_with_4_players() {
    if have_python() {
        python_match("telka", &["players=4"], 4, &[1]);
        python_match("telka", &["players=4"], 4, &[2]);
        python_match("telka", &["players=4"], 4, &[1, 2, 3, 4]);
    }
}

#[test]
fn python_bot_plays_telka_with_two_colours_per_seat() {
    if have_python() {
        python_match("telka", &["colors-per-player=2"], 2, &[1]);
        python_match("telka", &["colors-per-player=2"], 2, &[2]);
    }
}

/// Asks the bot's hidden `--legal` mode for the moves of every state (one Python run
/// for the lot) and compares each, as sorted lists (so duplicates count too), with the
/// referee's `legal` answer for that state.
fn compare(game: &str, options: &[&str], positions: &[(String, String)]) {
    let out = Command::new("python3")
        .arg(bot())
        .arg("--legal")
        .arg(game)
        .args(options)
        .arg("--")
        .args(positions.iter().map(|(state, _)| state))
        .timeout(TIMEOUT)
        .output()
        .unwrap();
    assert!(out.status.success(), "bot --legal failed: {out:?}");
    let stdout = String::from_utf8(out.stdout).unwrap();
    let answers: Vec<&str> = stdout.lines().collect();
    assert_eq!(answers.len(), positions.len(), "one line per state:\n{stdout}");
    for ((state, referee_legal), answer) in positions.iter().zip(answers) {
        let mine: Vec<&str> = answer.split_whitespace().collect();
        let mut theirs: Vec<&str> = referee_legal.split_whitespace().collect();
        theirs.sort_unstable();
        if mine != theirs {
            let (a, b): (BTreeSet<_>, BTreeSet<_>) = (mine.iter().collect(), theirs.iter().collect());
            panic!(
                "{game} {options:?} state {state}:\n  only the bot: {:?}\n  only the referee: {:?}\n  \
                 counts: bot {}, referee {}",
                a.difference(&b).collect::<Vec<_>>(),
                b.difference(&a).collect::<Vec<_>>(),
                mine.len(),
                theirs.len()
            );
        }
    }
}

/// The colour letters in play with these options (R-B3).
fn colours(options: &[&str]) -> &'static [char] {
    if options.contains(&"players=3") {
        &['b', 'y', 'r']
    } else if options.contains(&"players=4") || options.contains(&"colors-per-player=2") {
        &['b', 'y', 'r', 'g']
    } else {
        &['b', 'r']
    }
}

/// A random crowded position: every colour in play has 1 to 12 counters anywhere.
fn random_state(rng: &mut Rng, options: &[&str]) -> String {
    let colours = colours(options);
    let mut board = [None; 121];
    for &c in colours {
        for _ in 0..1 + rng.below(12) {
            let empty: Vec<usize> = (0..121).filter(|&i| board[i].is_none()).collect();
            board[empty[rng.below(empty.len())]] = Some(c);
        }
    }
    let to_move = colours[rng.below(colours.len())];
    state_string(&board, to_move, rng.below(100))
}

/// The R-B9 state string of a board indexed `y * 11 + x`.
fn state_string(board: &[Option<char>; 121], to_move: char, moves: usize) -> String {
    let ranks: Vec<String> = (0..11)
        .rev()
        .map(|y| {
            let (mut rank, mut run) = (String::new(), 0);
            for x in 0..11 {
                match board[y * 11 + x] {
                    None => run += 1,
                    Some(c) => {
                        if run > 0 {
                            rank += &run.to_string();
                            run = 0;
                        }
                        rank.push(c);
                    }
                }
            }
            if run > 0 {
                rank += &run.to_string();
            }
            rank
        })
        .collect();
    format!("{} {to_move} {moves}", ranks.join("/"))
}

/// A state with `to_move` to move from counters written `b:e5 r:f6 …`.
fn position(to_move: char, counters: &str) -> String {
    let mut board = [None; 121];
    for counter in counters.split_whitespace() {
        let (colour, point) = counter.split_once(':').unwrap();
        let x = usize::from(point.as_bytes()[0] - b'a');
        let y: usize = point[1..].parse::<usize>().unwrap() - 1;
        board[y * 11 + x] = colour.chars().next();
    }
    state_string(&board, to_move, 9)
}

/// Compares the move lists on positions of random play from the start, and on random
/// crowded positions set up with `new … state=`.
fn legal_moves_agree(game: &str, options: &[&str], seed: u64) {
    let mut rng = Rng(seed);
    let mut serve = Serve::start();
    let mut positions = Vec::new();
    let setup = format!("new {game} {}", options.join(" "));
    serve.ask(&setup);
    for ply in 0..160 {
        let turn = serve.ask("turn").join(" ");
        let Some(seat) = turn.split(' ').nth(1).filter(|&s| s != "none") else {
            break;
        };
        let seat = seat.to_string();
        let legal = serve.ask("legal").join(" ");
        if ply % 2 == 0 {
            positions.push((serve.ask("state").join(" "), legal.clone()));
        }
        let moves: Vec<&str> = legal.split(' ').collect();
        let action = moves[rng.below(moves.len())];
        serve.ask(&format!("play {seat} {action}"));
    }
    let mut checked = 0;
    while checked < 40 {
        let state = random_state(&mut rng, options);
        serve.ask(&format!("{setup} state={state}"));
        // A position where the colour that moved last has already won is over.
        if serve.ask("turn") == ["turn none"] {
            continue;
        }
        checked += 1;
        positions.push((state, serve.ask("legal").join(" ")));
    }
    compare(game, options, &positions);
}

#[test]
fn legal_moves_agree_with_the_referee_in_telka() {
    if have_python() {
        legal_moves_agree("telka", &["players=2"], 1);
        legal_moves_agree("telka", &["players=3"], 2);
        legal_moves_agree("telka", &["players=4"], 3);
        legal_moves_agree("telka", &["players=2", "colors-per-player=2"], 4);
    }
}

#[test]
fn legal_moves_agree_with_the_referee_in_pegchow() {
    if have_python() {
        legal_moves_agree("pegchow", &["players=2"], 5);
        legal_moves_agree("pegchow", &["players=3"], 6);
        legal_moves_agree("pegchow", &["players=4"], 7);
    }
}

/// Hand-made corner cases, each with a move the rules require (`+`) or forbid (`-`), so
/// that the test also says what is right and not only that both sides agree.
#[test]
fn legal_moves_agree_on_corner_cases() {
    if !have_python() {
        return;
    }
    // Blue on a1 boxed in: a2 b2 b1 taken, and so are a3 c3 c1 beyond them.
    const BOXED_IN: &str = "b:a1 r:a2 r:b2 r:b1 r:a3 r:c3 r:c1";
    let cases: [(&str, &[&str], String, &str); 9] = [
        ("pegchow", &["players=2"], position('b', BOXED_IN), "+pass"),
        (
            "telka",
            &["players=4"],
            position('b', &format!("{BOXED_IN} y:a11 g:k1")),
            "+pass",
        ),
        // Green on f6 is Blue's partner: e5-g7 leaves it, so after capturing Red on g6
        // Blue can leap it again.
        (
            "telka",
            &["players=4"],
            position('b', "b:e5 g:f6 r:g6 y:a11"),
            "+e5-g7-g5-e7",
        ),
        // With three players Yellow on f6 is an opponent and is captured by e5-g7.
        (
            "telka",
            &["players=3"],
            position('b', "b:e5 y:f6 r:g6"),
            "-e5-g7-g5-e7",
        ),
        // ... and so is Red for Yellow: there are no teams with three players.
        (
            "telka",
            &["players=3"],
            position('y', "y:e5 r:f6 b:g6"),
            "-e5-g7-g5-e7",
        ),
        // i9 is an inner notch of Red's corner, Danger Territory: Red there is captured...
        (
            "telka",
            &["players=2"],
            position('b', "b:h8 r:i9 r:j9"),
            "-h8-j10-j8-h10",
        ),
        // ... except in Peg Chow, which captures nothing.
        (
            "pegchow",
            &["players=2"],
            position('b', "b:h8 r:i9 r:j9"),
            "+h8-j10-j8-h10",
        ),
        // i10 belongs to Red's home: Red there is safe and can be leaped twice.
        (
            "telka",
            &["players=2"],
            position('b', "b:h9 r:i10 r:j10"),
            "+h9-j11-j9-h11",
        ),
        // With two colours per seat Green is Blue's partner as with 4 players.
        (
            "telka",
            &["players=2", "colors-per-player=2"],
            position('b', "b:e5 g:f6 r:g6 y:a11"),
            "+e5-g7-g5-e7",
        ),
    ];
    let mut serve = Serve::start();
    for (game, options, state, expect) in cases {
        serve.ask(&format!("new {game} {} state={state}", options.join(" ")));
        let legal = serve.ask("legal").join(" ");
        let (sign, action) = expect.split_at(1);
        let listed = legal.split(' ').any(|a| a == action);
        assert_eq!(
            listed,
            sign == "+",
            "{game} {options:?} {state}: {expect} but legal is {legal}"
        );
        compare(game, options, &[(state, legal)]);
    }
}
