//! The example bots `examples/agents/idoubtit_agent.py` and
//! `examples/agents/multichess_agent.py` against the real binary: they play whole
//! matches against the built-in agents — I-Doubt-It in every variant 0..15 from either
//! seat, Multi-player TelnChes with 2 to 8 seats from the first and the last seat —
//! without ever forfeiting, their records verify, the I-Doubt-It bot doubts only what
//! is incorrect, and each bot's move generator lists exactly what the referee's `legal`
//! lists (for I-Doubt-It also: its correct moves are the referee's `correct`).
//!
//! Needs `python3` on PATH; without it every test prints a note and passes.

mod cli_support;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command as StdCommand, Stdio};
use std::time::Duration;

use cli_support::{assert_verifies, builtin_command, exe, have_python, kind, record_lines, Rng, Serve};
use serde_json::Value;

/// Only a hang gets near it: a match here takes about a second on an idle machine.
const HANG_BOUND: Duration = Duration::from_secs(600);

/// A bot script of `examples/agents/`.
fn bot(script: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("examples/agents")
        .join(script)
}

/// The `--agent` command line of a Python bot.
fn bot_command(script: &str, seed: u64) -> String {
    shell_words::join([
        "python3",
        &bot(script).to_string_lossy(),
        "--seed",
        &seed.to_string(),
    ])
}

/// One match: `seats[i]` is seat i+1's agent, `Some(seed)` for the Python bot and
/// `None` for `opponent` (a built-in agent). Checks that nobody forfeited, that the bot
/// decided and that the record verifies; returns the record.
fn play_match(
    game: &str,
    options: &[&str],
    script: &str,
    opponent: &str,
    seats: &[Option<u64>],
) -> Vec<Value> {
    let context = format!("{game} {options:?}, seats {seats:?} ({script} vs {opponent})");
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("r.jsonl");
    let mut cmd = assert_cmd::Command::new(exe());
    cmd.args(["match", "--game", game]);
    for option in options {
        cmd.args(["-o", option]);
    }
    for (i, seat) in seats.iter().enumerate() {
        let agent = match seat {
            Some(seed) => bot_command(script, *seed),
            None => builtin_command(opponent, 100 + i as u64),
        };
        cmd.args(["--agent", &agent]);
    }
    // Clocks no busy machine can exhaust: the test is about rules, not speed.
    cmd.args([
        "--tc",
        "600+1",
        "--startup-timeout",
        "120",
        "--seed",
        "1",
        "-q",
        "--record",
    ])
    .arg(&record)
    .timeout(HANG_BOUND)
    .assert()
    .success();
    let lines = record_lines(&record);
    for line in &lines {
        assert_ne!(kind(line), "forfeit", "{context}: {line}");
    }
    let result = lines.last().unwrap();
    assert_eq!(kind(result), "result", "{context}: the match has a result");
    let reason = result["reason"].as_str().unwrap();
    assert!(!reason.contains("forfeit"), "{context}: {result}");
    for (i, _) in seats.iter().enumerate().filter(|(_, s)| s.is_some()) {
        let seat = i + 1;
        assert_eq!(lines[0]["seats"][i]["name"], script, "{context}: {}", lines[0]);
        let decided = lines
            .iter()
            .filter(|l| kind(l) == "action" && l["seat"] == seat && l.get("forced").is_none())
            .count();
        assert!(decided > 0, "{context}: seat {seat} never decided");
    }
    assert_verifies(&record);
    lines
}

/// Every doubt of the I-Doubt-It bot in seat `seat` outside a king-capture answer found
/// the doubted action incorrect: the bot doubts only what it can prove wrong (R-D6).
fn doubts_were_right(lines: &[Value], seat: usize, context: &str) -> usize {
    let actions: Vec<&Value> = lines.iter().filter(|l| kind(l) == "action").collect();
    let mut doubts = 0;
    for pair in actions.windows(2) {
        let (before, doubt) = (pair[0], pair[1]);
        let answers_king_capture = before["events"].to_string().contains("king-captured");
        if doubt["seat"] == seat && doubt["action"] == "doubt" && !answers_king_capture {
            assert!(
                doubt["events"].to_string().contains("verdict incorrect"),
                "{context}: a doubt found a correct action: {before} then {doubt}"
            );
            doubts += 1;
        }
    }
    doubts
}

/// The I-Doubt-It bot in `variant`, as White against `greedy` and as Black against
/// `random`. Returns how many doubts it made (all of them right).
fn idoubtit_matches(variant: u32) -> usize {
    let options = [format!("variant={variant}"), "max-plies=150".to_string()];
    let options: Vec<&str> = options.iter().map(String::as_str).collect();
    let script = "idoubtit_agent.py";
    let seed = u64::from(variant);
    let white = play_match("idoubtit", &options, script, "greedy", &[Some(seed), None]);
    let black = play_match("idoubtit", &options, script, "random", &[None, Some(seed)]);
    doubts_were_right(&white, 1, &format!("variant {variant}, bot White"))
        + doubts_were_right(&black, 2, &format!("variant {variant}, bot Black"))
}

#[test]
fn idoubtit_bot_plays_every_chess_variant_from_both_seats() {
    if have_python() {
        let doubts: usize = (0..8).map(idoubtit_matches).sum();
        // With s = 1 the bot sees the opponent's types, so it has had things to doubt.
        assert!(doubts > 0, "the bot never doubted in variants 0..7");
    }
}

#[test]
fn idoubtit_bot_plays_every_shogi_variant_from_both_seats() {
    if have_python() {
        let doubts: usize = (8..16).map(idoubtit_matches).sum();
        assert!(doubts > 0, "the bot never doubted in variants 8..15");
    }
}

/// The Multi-player TelnChes bot with `players` seats: in seat 1 against `greedy`, and
/// in the last seat against `random`.
fn multichess_matches(players: usize) {
    let options = [format!("players={players}"), "max-plies=300".to_string()];
    let options: Vec<&str> = options.iter().map(String::as_str).collect();
    let script = "multichess_agent.py";
    let mut seats = vec![None; players];
    seats[0] = Some(players as u64);
    play_match("multichess", &options, script, "greedy", &seats);
    seats[0] = None;
    seats[players - 1] = Some(10 + players as u64);
    play_match("multichess", &options, script, "random", &seats);
}

#[test]
fn multichess_bot_plays_with_2_to_4_seats() {
    if have_python() {
        (2..=4).for_each(multichess_matches);
    }
}

#[test]
fn multichess_bot_plays_with_5_to_8_seats() {
    if have_python() {
        (5..=8).for_each(multichess_matches);
    }
}

#[test]
fn multichess_bots_fill_a_table_of_six() {
    if have_python() {
        let seats: Vec<Option<u64>> = (1..=6).map(Some).collect();
        play_match(
            "multichess",
            &["players=6", "max-plies=300"],
            "multichess_agent.py",
            "greedy",
            &seats,
        );
    }
}

// ---------------------------------------------------------------------------
// The bots' move generators against the referee's

/// Runs `script --list <args>` on `inputs` (one line each) and returns its output, `per`
/// lines for each input.
fn bot_lists(script: &str, args: &[&str], inputs: &[String], per: usize) -> Vec<Vec<String>> {
    let mut child = StdCommand::new("python3")
        .arg(bot(script))
        .arg("--list")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let text: String = inputs.iter().map(|l| format!("{l}\n")).collect();
    // Written from a thread: the bot may fill its stdout before it has read everything.
    let writer = std::thread::spawn(move || stdin.write_all(text.as_bytes()));
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    assert!(out.status.success(), "{script} --list failed: {out:?}");
    let lines: Vec<String> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect();
    assert_eq!(lines.len(), per * inputs.len(), "{script}: {per} lines per input");
    lines.chunks(per).map(<[String]>::to_vec).collect()
}

/// Asserts that two space-separated lists hold the same actions, as sorted lists (so
/// duplicates count too).
fn same_actions(bot: &str, referee: &str, context: &str) {
    let mine: Vec<&str> = bot.split_whitespace().collect();
    let mut theirs: Vec<&str> = referee.split_whitespace().collect();
    theirs.sort_unstable();
    if mine != theirs {
        let only_bot: Vec<&&str> = mine.iter().filter(|a| !theirs.contains(a)).collect();
        let only_referee: Vec<&&str> = theirs.iter().filter(|a| !mine.contains(a)).collect();
        panic!(
            "{context}:\n  only the bot: {only_bot:?}\n  only the referee: {only_referee:?}\n  \
             counts: bot {}, referee {}",
            mine.len(),
            theirs.len()
        );
    }
}

/// Plays a game of `setup` at random in a `serve` session (a correct action two times in
/// three where there is one, else any well-formed one, doubts included) and collects,
/// for every decision, the view of the seat to act with `legal`, and the state with
/// `correct` (only in the play phase when `with_correct`).
fn random_game(setup: &str, seed: u64, plies: usize, with_correct: bool) -> Positions {
    let mut rng = Rng(seed);
    let mut serve = Serve::start();
    serve.ask(setup);
    let mut found = Positions::default();
    for _ in 0..plies {
        let turn = serve.ask("turn").join(" ");
        let words: Vec<&str> = turn.split(' ').collect();
        if words[1] == "none" {
            break;
        }
        let (seat, what) = (words[1], words[2]);
        let legal = serve.ask("legal").join(" ");
        found
            .views
            .push((serve.ask(&format!("view {seat}")).join(" "), legal.clone()));
        let mut pool: Vec<String> = legal.split(' ').map(str::to_string).collect();
        if with_correct && what == "move" {
            let correct = serve.ask("correct").join(" ");
            found.states.push((serve.ask("state").join(" "), correct.clone()));
            if !correct.is_empty() && rng.below(3) > 0 {
                pool = correct.split(' ').map(str::to_string).collect();
            }
        }
        let action = &pool[rng.below(pool.len())];
        serve.ask(&format!("play {seat} {action}"));
    }
    found
}

/// Views with the referee's `legal`, states with its `correct`.
#[derive(Default)]
struct Positions {
    views: Vec<(String, String)>,
    states: Vec<(String, String)>,
}

#[test]
fn idoubtit_bot_lists_the_referees_actions() {
    if !have_python() {
        return;
    }
    let script = "idoubtit_agent.py";
    for variant in 0..16u32 {
        let found = random_game(
            &format!("new idoubtit variant={variant}"),
            u64::from(variant) + 1,
            160,
            true,
        );
        let arg = variant.to_string();
        let views: Vec<String> = found.views.iter().map(|(v, _)| v.clone()).collect();
        for ((view, legal), lists) in found.views.iter().zip(bot_lists(script, &[&arg], &views, 2)) {
            same_actions(
                &lists[0],
                legal,
                &format!("variant {variant}, view {view}: legal"),
            );
        }
        let states: Vec<String> = found.states.iter().map(|(s, _)| s.clone()).collect();
        assert!(!states.is_empty(), "variant {variant}: no play-phase position");
        for ((state, correct), lists) in found.states.iter().zip(bot_lists(script, &[&arg], &states, 2)) {
            same_actions(
                &lists[1],
                correct,
                &format!("variant {variant}, state {state}: correct"),
            );
        }
    }
}

#[test]
fn multichess_bot_lists_the_referees_moves() {
    if !have_python() {
        return;
    }
    for players in 2..=8usize {
        let found = random_game(
            &format!("new multichess players={players}"),
            players as u64,
            300,
            false,
        );
        let views: Vec<String> = found.views.iter().map(|(v, _)| v.clone()).collect();
        let lists = bot_lists("multichess_agent.py", &[], &views, 1);
        for ((view, legal), list) in found.views.iter().zip(lists) {
            same_actions(&list[0], legal, &format!("{players} seats, view {view}"));
        }
    }
}

/// Hand-made corner cases, each with an action the rules require (`+`) or forbid (`-`)
/// in a list (`legal` or `correct`), so that the test also says what is right and not
/// only that both sides agree. Each list is compared whole, too.
#[test]
fn the_bots_agree_with_the_referee_on_corner_cases() {
    if !have_python() {
        return;
    }
    // I-Doubt-It, chess with drops: Black's d7-d5 has just passed d6; a pawn on a7.
    const CHESS: &str = "4k3/P7/8/3pP3/8/8/8/4K1N1 play w - - - - 2 d6";
    // Shogi with drops: White holds a captured pawn and has a pawn on the e file.
    const SHOGI: &str = "4k4/9/9/2N6/9/9/4P4/9/4K4 play w P' - - - 2 -";
    // Multi-player TelnChes: seat 1 may castle short, has a pawn in seat 2's area, a
    // rook above it and a pawn about to promote. Seat 2's pawn on 2:e3 is unseen by
    // seat 1, so `e5-2:e1` is legal on its view (R-M4).
    const MULTI: &str = "......../.P1....../......../....R1... ......../......../......../....K1..R1 \
                         ......../....P2.../..P1...../K2....... 1 10 1,2 K,- -";
    let idoubtit: [(u32, &str, &str, &str); 11] = [
        // Any piece may claim en passant (R-D4); only the pawn's claim is correct.
        (1, CHESS, "legal", "+g1d6ep"),
        (1, CHESS, "correct", "-g1d6ep"),
        (1, CHESS, "correct", "+e5d6ep"),
        // A pawn reaching the last rank must promote (R-D5).
        (1, CHESS, "legal", "+a7a8"),
        (1, CHESS, "correct", "-a7a8"),
        (1, CHESS, "correct", "+a7a8q"),
        // Nifu and a dead square are well-formed, not correct; a knight must promote
        // on the last two ranks.
        (9, SHOGI, "legal", "+1@e5"),
        (9, SHOGI, "correct", "-1@e5"),
        (9, SHOGI, "correct", "-1@d9"),
        (9, SHOGI, "correct", "+1@d5"),
        (9, SHOGI, "correct", "-c6d8"),
    ];
    let mut serve = Serve::start();
    for (variant, state, list, expect) in idoubtit {
        serve.ask(&format!("new idoubtit variant={variant} state={state}"));
        let answer = serve.ask(list).join(" ");
        let (sign, action) = expect.split_at(1);
        let listed = answer.split(' ').any(|a| a == action);
        let context = format!("variant {variant}, {state}: {list}");
        assert_eq!(listed, sign == "+", "{context}: {expect} but it is {answer}");
        let line = if list == "legal" { 0 } else { 1 };
        let bot = bot_lists(
            "idoubtit_agent.py",
            &[&variant.to_string()],
            &[state.to_string()],
            2,
        );
        same_actions(&bot[0][line], &answer, &context);
    }
    for (state, expect) in [
        (MULTI.to_string(), "+1:e1-1:g1"),
        (MULTI.replace(" K,- ", " -,- "), "-1:e1-1:g1"),
        (MULTI.to_string(), "+2:c2-2:c4"),
        (MULTI.to_string(), "+e5-2:e1"),
        (MULTI.to_string(), "+b7-b8=Q"),
        (MULTI.to_string(), "-b7-b8"),
    ] {
        serve.ask(&format!("new multichess players=2 state={state}"));
        let legal = serve.ask("legal").join(" ");
        let (sign, action) = expect.split_at(1);
        let listed = legal.split(' ').any(|a| a == action);
        assert_eq!(listed, sign == "+", "{state}: {expect} but legal is {legal}");
        let view = serve.ask("view 1").join(" ");
        let bot = bot_lists("multichess_agent.py", &[], &[view], 1);
        same_actions(&bot[0][0], &legal, &format!("{state}: legal"));
    }
}
