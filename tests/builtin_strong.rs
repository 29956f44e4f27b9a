//! `referee agent strong` through the real binary: it beats `greedy` in the Parker
//! games, plays every I-Doubt-It variant and every multichess table size to its
//! end and beats `random` there, plays the same game again from the same seed and
//! node budget, and refuses a budget of no nodes.

mod cli_support;

use cli_support::{
    actions, builtin_command, kind, places, quoted_exe, record_lines, referee_in, text, HANG_BOUND,
};
use tempfile::TempDir;

/// The strong agent with a small node budget, so that a debug build answers fast.
fn strong(seed: u64) -> String {
    strong_with(seed, 2000)
}

/// The strong agent with `nodes` to search per decision.
fn strong_with(seed: u64, nodes: u64) -> String {
    format!("{} agent strong --seed {seed} --nodes {nodes}", quoted_exe())
}

/// Nodes per decision of the strong agent in the Parker strength tests: few enough
/// that a debug build on a busy machine plays their games well inside the hang
/// bound with a minute a move, so the budget, never the clock, decides the games.
const PARKER_TEST_NODES: u64 = 800;

/// Plays a tournament of `games` games of `game` with `options` between the strong
/// agent (with [`PARKER_TEST_NODES`] and a minute a move, so that how busy the
/// machine is does not change the games) and greedy ones, and returns the summary.
fn against_greedy(game: &str, options: &[&str], seats: usize, games: usize) -> serde_json::Value {
    let dir = TempDir::new().unwrap();
    let mut run = referee_in(dir.path());
    run.args([
        "tournament",
        "--game",
        game,
        "--sandbox",
        "none",
        "--json",
        "--report-every",
        "0",
        "--st",
        "60",
    ]);
    for o in options {
        run.args(["-o", o]);
    }
    run.args([
        "--agent",
        &format!("name=strong cmd='{}'", strong_with(1, PARKER_TEST_NODES)),
    ]);
    for i in 1..seats {
        run.args([
            "--agent",
            &format!("name=greedy{i} cmd='{}'", builtin_command("greedy", i as u64)),
        ]);
    }
    let out = run
        .args(["--games", &games.to_string(), "--out", "t"])
        .timeout(HANG_BOUND)
        .output()
        .expect("run referee tournament");
    assert_eq!(out.status.code(), Some(0), "stderr: {}", text(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("a JSON summary")
}

/// The standing of the entrant called `name`.
fn standing<'a>(summary: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    summary["standings"]
        .as_array()
        .expect("standings")
        .iter()
        .find(|s| s["name"] == name)
        .expect("the entrant's standing")
}

#[test]
fn strong_beats_greedy_at_two_seats_in_both_parker_games() {
    for game in ["telka", "pegchow"] {
        let summary = against_greedy(game, &["max-plies=600"], 2, 4);
        let s = standing(&summary, "strong");
        assert!(s["wins"].as_u64().unwrap() >= 3, "{game}: {s}");
        assert_eq!(s["timeouts"], 0, "{game}: {s}");
    }
}

#[test]
fn strong_takes_the_best_place_on_average_against_two_greedy_agents() {
    let summary = against_greedy("telka", &["players=3", "max-plies=600"], 3, 3);
    let strong = standing(&summary, "strong")["average_place"].as_f64().unwrap();
    for name in ["greedy1", "greedy2"] {
        let greedy = standing(&summary, name)["average_place"].as_f64().unwrap();
        assert!(strong < greedy, "strong {strong}, {name} {greedy}: {summary}");
    }
}

#[test]
fn a_seed_and_a_node_budget_give_the_same_game() {
    let dir = TempDir::new().unwrap();
    let play = |name: &str| {
        let out = referee_in(dir.path())
            .args([
                "match",
                "--game",
                "telka",
                "-o",
                "max-plies=60",
                "--sandbox",
                "none",
            ])
            // Time enough that the clock never stops a search: the budget decides.
            .args(["--st", "60", "--record", name])
            .args(["--agent", &strong(7), "--agent", &strong(8)])
            .timeout(HANG_BOUND)
            .output()
            .expect("run referee match");
        assert_eq!(out.status.code(), Some(0), "stderr: {}", text(&out.stderr));
        actions(&record_lines(&dir.path().join(name)))
    };
    let first = play("a.jsonl");
    assert!(first.len() >= 10, "{first:?}");
    assert_eq!(first, play("b.jsonl"));
}

#[test]
fn strong_refuses_a_budget_of_no_nodes() {
    let dir = TempDir::new().unwrap();
    let out = referee_in(dir.path())
        .args(["agent", "strong", "--nodes", "0"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

/// The strong agent of I-Doubt-It with a budget small enough for a debug build.
fn strong_idt(seed: u64) -> String {
    format!("{} agent strong --seed {seed} --nodes 150", quoted_exe())
}

/// Plays one I-Doubt-It match of `variant` between `first` and `second` (seat 1,
/// seat 2) with `max-plies`, a fixed and ample time per decision (the node budget
/// decides, never the clock), and returns the record's lines.
fn idt_match(
    dir: &std::path::Path,
    variant: u32,
    plies: u32,
    first: &str,
    second: &str,
    name: &str,
) -> Vec<serde_json::Value> {
    let out = referee_in(dir)
        .args(["match", "--game", "idoubtit", "--sandbox", "none", "--seed", "5"])
        .args([
            "-o",
            &format!("variant={variant}"),
            "-o",
            &format!("max-plies={plies}"),
        ])
        .args([
            "--st", "60", "--record", name, "--agent", first, "--agent", second,
        ])
        .timeout(HANG_BOUND)
        .output()
        .expect("run referee match");
    assert_eq!(
        out.status.code(),
        Some(0),
        "variant {variant}: {}",
        text(&out.stderr)
    );
    record_lines(&dir.join(name))
}

/// The reason the record's result gives.
fn reason(lines: &[serde_json::Value]) -> String {
    let result = lines.last().expect("a result line");
    result["reason"].as_str().unwrap_or_default().to_string()
}

#[test]
fn strong_plays_every_idoubtit_variant_to_its_end() {
    let dir = TempDir::new().unwrap();
    for variant in 0..16 {
        let name = format!("v{variant}.jsonl");
        let (first, second) = if variant % 2 == 0 {
            (strong_idt(variant.into()), builtin_command("greedy", 1))
        } else {
            (builtin_command("random", 1), strong_idt(variant.into()))
        };
        let lines = idt_match(dir.path(), variant, 16, &first, &second, &name);
        let why = reason(&lines);
        assert!(why == "win" || why == "max-plies", "variant {variant}: {why}");
        assert!(
            actions(&lines).len() >= 32,
            "variant {variant}: placed and played"
        );
    }
}

/// Plays one multichess match of `players` seats, the strong agent (seed `seed`) in
/// seat 1 and `other` agents (seeds 1, 2, …) in the rest, and returns the record.
fn multichess_match(
    dir: &TempDir,
    players: usize,
    max_plies: u32,
    seed: u64,
    other: &str,
    name: &str,
) -> Vec<serde_json::Value> {
    let mut run = referee_in(dir.path());
    run.args(["match", "--game", "multichess", "--sandbox", "none"])
        .args([
            "-o",
            &format!("players={players}"),
            "-o",
            &format!("max-plies={max_plies}"),
        ])
        // Time enough that the clock never stops a search: the budget decides.
        .args(["--st", "60", "--record", name])
        .args(["--agent", &strong(seed)]);
    for i in 1..players {
        run.args(["--agent", &builtin_command(other, i as u64)]);
    }
    let out = run.timeout(HANG_BOUND).output().expect("run referee match");
    assert_eq!(out.status.code(), Some(0), "stderr: {}", text(&out.stderr));
    record_lines(&dir.path().join(name))
}

#[test]
fn strong_plays_two_three_and_eight_seat_multichess_to_the_end() {
    let dir = TempDir::new().unwrap();
    for players in [2, 3, 8] {
        let lines = multichess_match(&dir, players, 40, 3, "greedy", &format!("m{players}.jsonl"));
        let result = lines.iter().find(|l| kind(l) == "result").expect("a result line");
        assert!(
            ["win", "max-plies"].contains(&result["reason"].as_str().unwrap_or("")),
            "{players} seats: {result}"
        );
        assert!(
            !lines.iter().any(|l| kind(l) == "forfeit"),
            "{players} seats: a forfeit"
        );
    }
}

#[test]
fn a_seed_and_a_node_budget_give_the_same_idoubtit_game() {
    let dir = TempDir::new().unwrap();
    // Shogi with drops (d = 1) and swapped placement (s = 1): the belief is busiest.
    let play = |name: &str| {
        actions(&idt_match(
            dir.path(),
            13,
            24,
            &strong_idt(3),
            &strong_idt(4),
            name,
        ))
    };
    let first = play("a.jsonl");
    assert!(first.len() >= 40, "{first:?}");
    assert_eq!(first, play("b.jsonl"));
}

#[test]
fn strong_beats_random_in_seeded_idoubtit_games() {
    // Seeded and bounded by nodes, not the clock: the same games every run.
    let dir = TempDir::new().unwrap();
    for (variant, seat) in [(0, 1), (8, 2), (5, 1)] {
        let name = format!("r{variant}.jsonl");
        let random = builtin_command("random", 2);
        let (first, second) = if seat == 1 {
            (strong_idt(1), random)
        } else {
            (random, strong_idt(1))
        };
        let lines = idt_match(dir.path(), variant, 200, &first, &second, &name);
        let places = cli_support::places(&lines);
        assert_eq!(
            places[seat - 1],
            1,
            "variant {variant}: strong in seat {seat}, places {places:?}"
        );
        assert_eq!(reason(&lines), "win", "variant {variant}");
    }
}

#[test]
fn a_seed_and_a_node_budget_give_the_same_multichess_game() {
    let dir = TempDir::new().unwrap();
    let first = actions(&multichess_match(&dir, 3, 45, 5, "greedy", "a.jsonl"));
    assert!(first.len() >= 30, "{first:?}");
    assert_eq!(
        first,
        actions(&multichess_match(&dir, 3, 45, 5, "greedy", "b.jsonl"))
    );
}

#[test]
fn strong_beats_random_in_seeded_two_seat_multichess_games() {
    let dir = TempDir::new().unwrap();
    for seed in [1, 2, 3] {
        let lines = multichess_match(&dir, 2, 400, seed, "random", &format!("r{seed}.jsonl"));
        assert_eq!(places(&lines), [1, 2], "seed {seed}");
    }
}
