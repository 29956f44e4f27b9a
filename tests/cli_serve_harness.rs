//! The controller commands for harnesses, through `referee serve`: `--json` answers,
//! `undo`, several named games, `events` (checked against what a real match sent its
//! agents) and `information_state`.

mod cli_support;

use cli_support::*;
use serde_json::Value;
use tempfile::TempDir;

/// One JSON answer, checked to be a single object with a boolean `ok`.
fn json(serve: &mut Serve, command: &str) -> Value {
    let line = serve.line(command);
    let value: Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("`{command}` -> {line}: {e}"));
    assert!(value["ok"].is_boolean(), "`{command}` -> {line}");
    value
}

/// A JSON error answer's kind, checking the shape of the error object.
fn error_kind(value: &Value) -> &str {
    assert_eq!(value["ok"], false, "{value}");
    assert!(!value["error"]["message"].as_str().unwrap().is_empty(), "{value}");
    value["error"]["kind"].as_str().unwrap()
}

#[test]
fn json_answers_are_one_typed_object_per_line() {
    let mut s = Serve::start_with(&["--json"]);
    let new = json(&mut s, "new telka players=3");
    assert_eq!(new["game"], "telka");
    assert_eq!(new["name"], "main");
    assert_eq!(new["options"]["players"], 3);
    let turn = json(&mut s, "turn");
    assert_eq!(turn["turn"], serde_json::json!({"seat": 1, "kind": "move"}));
    let legal = json(&mut s, "legal");
    let first = legal["actions"][0].as_str().unwrap().to_string();
    assert!(legal["actions"].as_array().unwrap().len() > 10);
    let played = json(&mut s, &format!("play 1 {first}"));
    assert_eq!(played["events"][0]["kind"], "move");
    assert_eq!(played["events"][0]["args"][1], first);
    assert_eq!(played["events"][0]["text"], format!("move blue {first}"));
    assert_eq!(json(&mut s, "view 2")["seat"], 2);
    assert!(json(&mut s, "state")["state"].as_str().unwrap().ends_with(" 1"));
    assert_eq!(json(&mut s, "result")["result"], Value::Null);
    assert!(json(&mut s, "show")["diagram"].as_array().unwrap().len() >= 12);
    let told = json(&mut s, "events 2");
    assert_eq!(told["seat"], 2);
    assert_eq!(told["lines"][0], format!("event move blue {first}"));
    assert!(told["lines"][1].as_str().unwrap().starts_with("view "), "{told}");
    let known = json(&mut s, "information_state 2");
    assert!(
        known["information_state"]
            .as_str()
            .unwrap()
            .starts_with("newgame "),
        "{known}"
    );
    let games = json(&mut s, "games");
    assert_eq!(
        games["games"],
        serde_json::json!([{"name": "main", "game": "telka", "ply": 1, "current": true}])
    );
    let undone = json(&mut s, "undo");
    assert_eq!(
        (&undone["undone"], &undone["ply"]),
        (&serde_json::json!(1), &serde_json::json!(0))
    );
    assert_eq!(error_kind(&json(&mut s, "undo")), "undo");
    assert_eq!(error_kind(&json(&mut s, "play 2 a1-c3")), "turn");
    assert_eq!(error_kind(&json(&mut s, "frobnicate")), "usage");
    assert_eq!(error_kind(&json(&mut s, "use nowhere")), "name");
    let resigned = json(&mut s, "resign 2");
    assert_eq!(resigned["events"][0]["text"], "forfeit 2 resign");
    json(&mut s, "resign 3");
    let result = json(&mut s, "result")["result"].clone();
    assert_eq!(result["places"], serde_json::json!([1, 3, 2]));
    assert_eq!(
        result["reason"],
        serde_json::json!({"kind": "forfeit", "seat": 3, "forfeit": "resign"})
    );
    assert_eq!(json(&mut s, "turn")["turn"], Value::Null);
    let help = json(&mut s, "help");
    assert!(help["commands"].as_array().unwrap().iter().any(|c| c == "undo"));
    // The errors found before the controller sees a line are JSON too.
    let not_utf8: Value = serde_json::from_str(&s.line_of(b"\xff\n")).unwrap();
    assert_eq!(error_kind(&not_utf8), "usage");
    assert_eq!(json(&mut s, "quit"), serde_json::json!({"ok": true}));
}

/// The setups every test here plays, with hidden information and several seats.
const SETUPS: [&str; 5] = [
    "pegchow players=4",
    "telka players=3",
    "idoubtit",
    "idoubtit variant=9",
    "multichess players=3",
];

/// Plays up to `plies` random legal actions (and, now and then in games of three or
/// more seats, a resignation); returns the state before each and after the last.
fn play_randomly(s: &mut Serve, rng: &mut SplitMix64, plies: usize) -> Vec<String> {
    let mut states = vec![s.ask("state")[0].clone()];
    for _ in 0..plies {
        let turn = s.ask("turn")[0].clone();
        let Some(seat) = turn.split(' ').nth(1).filter(|w| *w != "none") else {
            break;
        };
        let legal: Vec<String> = s.ask("legal")[0].split(' ').map(str::to_string).collect();
        if rng.below(40) == 0 {
            s.send(format!("resign {seat}\n").as_bytes());
            assert_eq!(s.answer().1, "ok", "resign {seat}");
            states.push(s.ask("state")[0].clone());
            continue;
        }
        s.ask(&format!("play {seat} {}", rng.pick(&legal)));
        states.push(s.ask("state")[0].clone());
    }
    states
}

#[test]
fn undo_takes_back_exactly_what_was_played_in_every_game() {
    let dir = TempDir::new().unwrap();
    for (i, setup) in SETUPS.iter().enumerate() {
        let mut rng = SplitMix64::new(i as u64 + 7);
        let mut s = Serve::start();
        s.ask(&format!("new {setup}"));
        let mut states = play_randomly(&mut s, &mut rng, 60);
        while states.len() > 1 {
            let n = 1 + rng.below(states.len().min(6) - 1);
            let played = states.len() - 1;
            // Too many to take back: refused, nothing changes.
            s.send(format!("undo {}\n", played + 1).as_bytes());
            assert!(s.answer().1.starts_with("error undo "), "{setup}");
            assert_eq!(
                s.ask("state")[0],
                states[played],
                "{setup}: a refused undo changed the game"
            );
            let undone = s.ask(&format!("undo {n}"));
            states.truncate(states.len() - n);
            assert!(
                undone[0].starts_with(&format!("undone {n} at ply ")),
                "{undone:?}"
            );
            assert_eq!(&s.ask("state")[0], states.last().unwrap(), "{setup}: undo {n}");
            // The record says the same: it verifies, and loads back to this state.
            let path = dir.path().join(format!("undo-{i}.jsonl"));
            s.ask(&format!("record {}", path.display()));
            assert_verifies(&path);
            s.ask(&format!("load {}", path.display()));
            assert_eq!(
                &s.ask("state")[0],
                states.last().unwrap(),
                "{setup}: the record after undo"
            );
            // Play on a little, so that undo is tried on histories that branched.
            if rng.below(3) == 0 {
                let more = play_randomly(&mut s, &mut rng, 2);
                states.extend(more.into_iter().skip(1));
            }
        }
        s.send(b"undo\n");
        assert!(
            s.answer().1.starts_with("error undo "),
            "{setup}: undo at the start"
        );
        s.send(b"undo 0\n");
        assert!(s.answer().1.starts_with("error usage "), "{setup}: undo 0");
        assert_eq!(s.ask("state")[0], states[0]);
    }
}

#[test]
fn named_games_are_separate_and_commands_act_on_the_current_one() {
    let mut s = Serve::start();
    assert_eq!(
        s.ask("new left telka"),
        ["new left telka colors-per-player=1 max-plies=1000 players=2"]
    );
    s.ask("play 1 a1-c3");
    s.ask("new right pegchow players=3");
    assert_eq!(s.ask("turn"), ["turn 1 move"]);
    s.ask("clone left copy");
    s.ask("use copy");
    assert_eq!(s.ask("turn"), ["turn 2 move"], "the copy is where left was");
    s.ask("play 2 k11-i9");
    s.ask("use left");
    assert_eq!(
        s.ask("turn"),
        ["turn 2 move"],
        "playing in the copy left the original alone"
    );
    assert_eq!(
        s.ask("games"),
        [
            "game copy telka at ply 2",
            "game left telka at ply 1 current",
            "game right pegchow at ply 0"
        ]
    );
    // An unnamed `new` replaces the current game and keeps its name.
    s.ask("new telka players=3");
    assert_eq!(s.ask("games")[1], "game left telka at ply 0 current");
    for (command, kind) in [
        ("clone left right", "name"),
        ("use gone", "name"),
        ("drop gone", "name"),
        ("new telka x", "setup"),
        ("use telka", "name"),
        ("new 9lives telka", "name"),
    ] {
        s.send(format!("{command}\n").as_bytes());
        let (_, last) = s.answer();
        assert!(last.starts_with(&format!("error {kind} ")), "{command}: {last}");
    }
    s.ask("drop left");
    s.send(b"turn\n");
    assert!(
        s.answer().1.starts_with("error no-game "),
        "the current game was dropped"
    );
    assert_eq!(
        s.ask("games"),
        ["game copy telka at ply 2", "game right pegchow at ply 0"]
    );
}

/// The `event`, `view` and `gameover` lines a transcript shows sent before each `go`
/// and before `gameover`, one group per decision.
fn told_before_each_decision(transcript: &str) -> Vec<Vec<String>> {
    let mut groups = vec![Vec::new()];
    for line in transcript.lines().filter_map(|l| l.strip_prefix("> ")) {
        if line.starts_with("event ") || line.starts_with("view ") || line.starts_with("gameover ") {
            groups.last_mut().unwrap().push(line.to_string());
        }
        if line.starts_with("go ") || line.starts_with("gameover ") {
            groups.push(Vec::new());
        }
    }
    groups.pop();
    groups
}

#[test]
fn events_are_what_a_match_sent_each_agent() {
    for (i, (game, options)) in [
        ("idoubtit", vec!["max-plies=80"]),
        ("idoubtit", vec!["variant=9", "max-plies=80"]),
        ("multichess", vec!["players=3", "max-plies=60"]),
        ("pegchow", vec!["players=4", "max-plies=40"]),
    ]
    .into_iter()
    .enumerate()
    {
        let dir = TempDir::new().unwrap();
        let record = dir.path().join("game.jsonl");
        let mut args = vec!["match", "--game", game, "--st", "1", "--seed", "5", "-q"];
        for o in &options {
            args.extend(["-o", o]);
        }
        let logs = dir.path().join("logs");
        let (record_arg, logs_arg) = (record.display().to_string(), logs.display().to_string());
        args.extend([
            "--record",
            &record_arg,
            "--log-dir",
            &logs_arg,
            "--sandbox",
            "none",
        ]);
        let out = referee_in(dir.path()).args(&args).output().unwrap();
        assert!(out.status.success(), "{game}: {}", text(&out.stderr));
        let lines = record_lines(&record);
        let seats = lines[0]["seats"].as_array().unwrap().len();
        let mut told: Vec<std::collections::VecDeque<Vec<String>>> = (1..=seats)
            .map(|n| {
                let path = logs.join(format!("seat{n}.transcript"));
                told_before_each_decision(&std::fs::read_to_string(path).unwrap()).into()
            })
            .collect();
        let mut s = Serve::start();
        s.ask(&format!("new {game} {}", options.join(" ")));
        for line in lines.iter().filter(|l| kind(l) == "action") {
            let seat = line["seat"].as_u64().unwrap() as usize;
            if line["forced"] != true {
                let expected = told[seat - 1].pop_front().expect("a decision of the transcript");
                assert_eq!(
                    s.ask(&format!("events {seat}")),
                    expected,
                    "{i} {game}: seat {seat}"
                );
            }
            s.ask(&format!("play {seat} {}", line["action"].as_str().unwrap()));
        }
        for (n, groups) in told.iter_mut().enumerate() {
            let last = groups.pop_front().expect("the gameover group");
            assert!(groups.is_empty(), "{game}: seat {}: decisions left over", n + 1);
            assert_eq!(
                s.ask(&format!("events {}", n + 1)),
                last,
                "{game}: seat {} at the end",
                n + 1
            );
        }
    }
}

#[test]
fn information_states_differ_exactly_where_the_seat_saw_a_difference() {
    let mut s = Serve::start();
    let state_after = |s: &mut Serve, placement: &str, seat: usize| {
        s.ask("new idoubtit");
        s.ask(&format!("play 1 {placement}"));
        s.ask("play 2 P@a8");
        s.ask(&format!("information_state {seat}"))[0].clone()
    };
    // Seat 2 sees that a piece was placed on a1, not which: the two histories are one
    // to it; seat 1 placed it and tells them apart.
    let king = state_after(&mut s, "K@a1", 2);
    let queen = state_after(&mut s, "Q@a1", 2);
    assert_eq!(king, queen);
    assert!(
        king.starts_with("newgame game idoubtit seat 2 seats 2 "),
        "{king}"
    );
    assert!(!king.contains('\n'));
    assert_ne!(state_after(&mut s, "K@a1", 1), state_after(&mut s, "Q@a1", 1));
    // Another square is seen by both.
    assert_ne!(state_after(&mut s, "K@b1", 2), king);
    // Multi-player TelnChes: seat 2's moves in its own area are out of seat 1's sight.
    let fog = |s: &mut Serve, action: &str, seat: usize| {
        s.ask("new multichess");
        s.ask("play 1 1:a2-1:a3");
        s.ask(&format!("play 2 {action}"));
        (
            s.ask(&format!("information_state {seat}"))[0].clone(),
            s.ask("state")[0].clone(),
        )
    };
    let (a, state_a) = fog(&mut s, "2:a2-2:a3", 1);
    let (b, state_b) = fog(&mut s, "2:b2-2:b3", 1);
    assert_ne!(state_a, state_b);
    assert_eq!(a, b, "seat 1 cannot tell the two moves apart");
    assert_ne!(fog(&mut s, "2:a2-2:a3", 2).0, fog(&mut s, "2:b2-2:b3", 2).0);
    // Telka hides nothing: different moves are different to every seat.
    let telka = |s: &mut Serve, action: &str, seat: usize| {
        s.ask("new telka");
        s.ask(&format!("play 1 {action}"));
        s.ask(&format!("information_state {seat}"))[0].clone()
    };
    assert_ne!(telka(&mut s, "a1-c3", 2), telka(&mut s, "c2-d3", 2));
    assert_eq!(telka(&mut s, "a1-c3", 2), telka(&mut s, "a1-c3", 2));
}

#[test]
fn a_seat_that_resigned_is_told_nothing_after_it() {
    // As in a match, where a forfeiting seat's agent is stopped before anyone is told.
    let mut s = Serve::start();
    s.ask("new telka players=3");
    s.ask("play 1 a1-c3");
    let before = s.ask("information_state 2")[0].clone();
    s.ask("resign 2");
    s.ask("play 3 k10-i8");
    assert_eq!(s.ask("events 2"), ["event move blue a1-c3"]);
    assert_eq!(s.ask("events 2"), Vec::<String>::new());
    let after = s.ask("information_state 2")[0].clone();
    let (known, _view) = before.rsplit_once(" | ").unwrap();
    assert_eq!(after, known, "only what came before the resignation");
    // The others are told of it and play on.
    let told = s.ask("events 3");
    assert!(told.contains(&"event forfeit 2 resign".to_string()), "{told:?}");
    assert!(told.last().unwrap().starts_with("view "), "{told:?}");
    // Taking the resignation back gives the seat its agent again.
    s.ask("undo 2");
    assert!(s.ask("events 2")[0].starts_with("view "));
}

#[test]
fn undo_reaches_into_the_history_of_a_loaded_match_record() {
    let dir = TempDir::new().unwrap();
    let record = dir.path().join("match.jsonl");
    let record_arg = record.display().to_string();
    let args = [
        "match",
        "--game",
        "multichess",
        "-o",
        "players=3",
        "-o",
        "max-plies=40",
    ];
    let out = referee_in(dir.path())
        .args(args)
        .args([
            "--st",
            "1",
            "--seed",
            "9",
            "-q",
            "--sandbox",
            "none",
            "--record",
            &record_arg,
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let lines = record_lines(&record);
    let played: Vec<(u64, String)> = lines
        .iter()
        .filter(|l| kind(l) == "action")
        .map(|l| {
            (
                l["seat"].as_u64().unwrap(),
                l["action"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let mut s = Serve::start();
    s.ask(&format!("load {record_arg}"));
    s.ask("undo 15");
    let at = s.ask("state")[0].clone();
    let mut fresh = Serve::start();
    fresh.ask("new multichess players=3 max-plies=40");
    for (seat, action) in &played[..played.len() - 15] {
        fresh.ask(&format!("play {seat} {action}"));
    }
    assert_eq!(at, fresh.ask("state")[0]);
    for seat in 1..=3 {
        let command = format!("information_state {seat}");
        assert_eq!(s.ask(&command), fresh.ask(&command), "seat {seat}");
    }
    let after = dir.path().join("after.jsonl");
    s.ask(&format!("record {}", after.display()));
    assert_verifies(&after);
    assert_eq!(
        actions(&record_lines(&after)),
        actions(&lines)[..played.len() - 15]
    );
}
