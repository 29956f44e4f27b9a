//! `referee bench` end to end: it runs, measures every game it claims to, and its
//! JSON and table agree. No figure is compared with a time limit: speed is proven by
//! running the bench, not by tests.

mod cli_support;

use cli_support::*;
use serde_json::Value;
use tempfile::TempDir;

/// One quick bench run as JSON.
fn quick_json() -> Value {
    let dir = TempDir::new().unwrap();
    let out = referee_in(dir.path())
        .args(["bench", "--quick", "--json"])
        .output()
        .expect("run referee bench");
    assert_eq!(out.status.code(), Some(0), "stderr: {}", text(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("bench --json prints JSON")
}

fn positive(v: &Value, what: &str) -> f64 {
    let x = v
        .as_f64()
        .unwrap_or_else(|| panic!("{what} is not a number: {v}"));
    assert!(x.is_finite() && x > 0.0, "{what} = {x}");
    x
}

#[test]
fn bench_measures_every_game_under_every_placement() {
    let figures = quick_json();
    let games: Vec<&str> = figures["games"]
        .as_array()
        .expect("games")
        .iter()
        .map(|g| g["game"].as_str().expect("a game name"))
        .collect();
    for game in ["telka", "pegchow", "idoubtit", "multichess"] {
        assert!(
            games.iter().any(|g| g.starts_with(game)),
            "{game} is not measured: {games:?}"
        );
    }
    for g in figures["games"].as_array().unwrap() {
        let name = g["game"].as_str().unwrap();
        positive(&g["legal_us_per_position"], &format!("{name} legal"));
        positive(&g["verify_actions_per_s"], &format!("{name} verify"));
        // The binary installs the counting allocator, so the count is known, and
        // every action allocates at least the line it reads.
        assert!(
            g["allocations_per_action"].as_f64().is_some_and(|n| n >= 1.0),
            "{name}: {}",
            g["allocations_per_action"]
        );
    }
    let timings = figures["timings"].as_array().expect("timings");
    assert!(!timings.is_empty());
    for t in timings {
        let placement = t["placement"].as_str().expect("a placement");
        let pipe = positive(&t["pipe_round_trip_us"], placement);
        let io = positive(&t["io_path_round_trip_us"], placement);
        positive(&t["agent_io_round_trip_us"], placement);
        assert_eq!(t["games"].as_array().unwrap().len(), games.len());
        for g in t["games"].as_array().unwrap() {
            let name = g["game"].as_str().unwrap();
            assert!(
                g["actions"].as_u64().unwrap() > 0,
                "{placement} {name}: no actions timed"
            );
            let us = positive(&g["us_per_action"], name);
            positive(&g["referee_cpu_us_per_action"], name);
            positive(&g["floor_us"], name);
            // Each replay is paired with the floor batch taken just before it; the
            // figures are the medians the documentation says, from those pairs.
            let pairs: Vec<[f64; 2]> = g["pairs"]
                .as_array()
                .expect("pairs")
                .iter()
                .map(|p| [positive(&p[0], name), positive(&p[1], name)])
                .collect();
            assert!(!pairs.is_empty(), "{placement} {name}: no pairs");
            let median = |f: &dyn Fn(&[f64; 2]) -> f64| {
                let mut v: Vec<f64> = pairs.iter().map(f).collect();
                v.sort_by(f64::total_cmp);
                v[v.len() / 2]
            };
            // (JSON numbers read back may differ in the last bit.)
            let same = |a: f64, b: f64| (a - b).abs() <= 1e-12 * a.abs().max(b.abs());
            assert!(same(us, median(&|p| p[0])), "{name}");
            assert!(same(g["floor_us"].as_f64().unwrap(), median(&|p| p[1])), "{name}");
            let ratio = positive(&g["ratio_to_pipe"], name);
            assert!(same(ratio, median(&|p| p[0] / p[1])), "{name}: {ratio}");
            assert!(pipe > 0.0);
            let ratio = positive(&g["ratio_to_io_path"], name);
            assert!((ratio - us / io).abs() < 1e-9 * ratio.max(1.0));
        }
    }
    positive(&figures["kib_per_concurrent_game"], "memory");
    // Where agents can be sandboxed, what the sandbox costs is measured too.
    if let Some(s) = figures.get("sandbox").filter(|s| !s.is_null()) {
        for k in 0..2 {
            positive(&s["start_ms"][k], "agent start");
            positive(&s["us_per_action"][k], "sandboxed action");
        }
        assert!(s["sandbox"].as_str().unwrap().starts_with("bubblewrap"), "{s}");
    }
    assert!(figures["cpus"].as_u64().unwrap() >= 1);
    check_fixed_costs(&figures["fixed_costs"]);
}

/// What the referee adds, on a line of fresh agents (measured alone too, started and
/// told `quit`, and taken off each match) or of kept ones (not started: nothing is
/// taken off, so the referee's own is the whole).
fn check_own(line: &Value, fresh: bool) {
    let alone = line["alone_wall_ms"].as_f64().expect("alone_wall_ms");
    let points: Vec<Vec<f64>> = line["points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            p.as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_f64().unwrap())
                .collect()
        })
        .collect();
    for p in &points {
        assert_eq!(p.len(), 5, "{line}");
        if !fresh {
            assert_eq!((p[3], p[4]), (0.0, 0.0), "{line}");
        }
    }
    // A quick run has two lengths: whatever the weights, the line goes through both
    // points (through their mean where the two games had as many plies).
    let intercept = |y: usize| match points.as_slice() {
        [a, b] if a[0] != b[0] => a[y] - (b[y] - a[y]) / (b[0] - a[0]) * a[0],
        [a, b] => (a[y] + b[y]) / 2.0,
        _ => panic!("not two points: {line}"),
    };
    let near = |key: &str, us: f64| {
        let ms = line[key].as_f64().unwrap();
        assert!(
            (ms * 1e3 - us).abs() <= 1e-6 * us.abs().max(1.0),
            "{key}: {ms} ms, not {us} µs: {line}"
        );
    };
    near("wall_ms_per_game", intercept(1));
    near("cpu_ms_per_game", intercept(2));
    if fresh {
        assert!(alone > 0.0, "no agents alone: {line}");
        near("own_wall_ms", intercept(3));
        near("own_cpu_ms", intercept(4));
    } else {
        assert_eq!(alone, 0.0, "{line}");
        near("own_wall_ms", intercept(1));
        near("own_cpu_ms", intercept(2));
    }
}

/// The fixed costs: a fitted line per configuration with fresh and with kept agents
/// (and, with two seats, fresh with no sync of the record), each through one point
/// per game length, and the cost of a seat per game.
fn check_fixed_costs(fixed: &Value) {
    let lines = fixed["lines"].as_array().expect("fixed-cost lines");
    for game in [
        "telka players=2",
        "telka players=4",
        "multichess players=2",
        "multichess players=8",
    ] {
        // With two seats, fresh agents again with no sync of the record, so that
        // what the sync costs a game shows.
        let no_sync = game.ends_with("players=2").then_some("fresh, no sync");
        for agents in ["fresh", "kept"].into_iter().chain(no_sync) {
            let line = lines
                .iter()
                .find(|l| l["game"] == game && l["agents"] == agents)
                .unwrap_or_else(|| panic!("no {game} {agents} line in {fixed}"));
            let points = line["points"].as_array().unwrap();
            assert_eq!(points.len(), 2, "{line}");
            for p in points {
                assert!(p[0].as_f64().unwrap() >= 1.0, "a game of no plies: {line}");
                positive(&p[1], "a match's wall time");
            }
            for key in [
                "wall_ms_per_game",
                "wall_us_per_ply",
                "cpu_ms_per_game",
                "cpu_us_per_ply",
                "own_wall_ms",
                "own_cpu_ms",
            ] {
                assert!(line[key].as_f64().is_some_and(f64::is_finite), "{key}: {line}");
            }
            check_own(line, agents != "kept");
        }
    }
    // Sandboxed, where the machine has a sandbox: fresh agents, measured alone too.
    for line in lines.iter().filter(|l| l["agents"] == "fresh, sandboxed") {
        check_own(line, true);
    }
    // The line with no sync of the record is of two seats only.
    for line in lines.iter().filter(|l| l["agents"] == "fresh, no sync") {
        assert_eq!(line["seats"], 2, "{line}");
    }
    let seats = fixed["seats"].as_array().expect("seat costs");
    assert!(
        !seats.iter().any(|s| s["agents"] == "fresh, no sync"),
        "a seat cost of one seat count: {fixed}"
    );
    for (game, from, to) in [("telka", 2, 4), ("multichess", 2, 8)] {
        for agents in ["fresh", "kept"] {
            assert!(
                seats.iter().any(|s| s["game"] == game
                    && s["agents"] == agents
                    && s["seats"][0] == from
                    && s["seats"][1] == to),
                "no seat cost of {game} {agents} in {fixed}"
            );
        }
    }
}

#[test]
fn bench_table_names_the_machine_and_the_floors() {
    let dir = TempDir::new().unwrap();
    let tmp = TempDir::new().unwrap();
    let out = referee_in(dir.path())
        .env("TMPDIR", tmp.path())
        .args(["bench", "--quick"])
        .output()
        .expect("run referee bench");
    assert_eq!(out.status.code(), Some(0), "stderr: {}", text(&out.stderr));
    let table = text(&out.stdout);
    assert_says(
        &table,
        &[
            "CPU",
            "compare the ratios",
            "pipe ping-pong with cat (the floor)",
            "the referee's agent I/O (write, wait, read)",
            "the I/O path",
            "telka players=2",
            "idoubtit variant=9",
            "multichess players=8",
            "verify actions/s",
            "memory per concurrent match",
            "per game (fitted)",
            "per extra seat, telka 2→4 seats, fresh",
            "alone: the same fresh agents started and told quit, no game",
            "fresh, no sync",
        ],
    );
    assert_empty(tmp.path());
}

/// Every one of `needles` is in `table`.
fn assert_says(table: &str, needles: &[&str]) {
    for needle in needles {
        assert!(table.contains(needle), "no {needle:?} in:\n{table}");
    }
}

/// Nothing is left behind in the temporary directory `dir`.
fn assert_empty(dir: &std::path::Path) {
    let left: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    assert!(left.is_empty(), "left behind: {left:?}");
}

#[test]
fn bench_throughput_plays_whole_tournaments_and_reads_their_records() {
    let dir = TempDir::new().unwrap();
    let tmp = TempDir::new().unwrap();
    let run = |extra: &[&str]| {
        referee_in(dir.path())
            .env("TMPDIR", tmp.path())
            .args(["bench", "--throughput", "--quick", "--sandbox", "none"])
            .args(extra)
            .output()
            .expect("run referee bench --throughput")
    };
    let out = run(&["--json"]);
    assert_eq!(out.status.code(), Some(0), "stderr: {}", text(&out.stderr));
    let figures: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(figures["time_control"], "1+0.01");
    assert!(
        figures["isolation"].as_str().unwrap().starts_with("none"),
        "{figures}"
    );
    let rows = figures["rows"].as_array().expect("rows");
    let runs: Vec<(u64, bool)> = rows
        .iter()
        .map(|r| (r["concurrency"].as_u64().unwrap(), r["pinned"].as_bool().unwrap()))
        .collect();
    // Each concurrency unpinned, then pinned as `tournament --affinity` pins.
    if referee::agent::affinity::can_pin() {
        assert_eq!(runs, [(1, false), (1, true), (2, false), (2, true)]);
    } else {
        assert_eq!(runs, [(1, false), (2, false)]);
    }
    for r in rows {
        let games = r["games"].as_u64().unwrap();
        let actions = r["actions"].as_u64().unwrap();
        assert!(games > 0 && actions >= games, "{r}");
        positive(&r["wall_s"], "wall");
        positive(&r["actions_per_s"], "actions/s");
        positive(&r["referee_cpu_us_per_action"], "referee CPU");
        positive(&r["agents_cpu_us_per_action"], "agents CPU");
        assert_eq!(r["forfeits"], 0, "{r}");
        assert_eq!(r["time_losses"], 0, "{r}");
    }
    assert_eq!(figures["bots"], "replay");
    // A concurrency given twice is measured once, each worker with a game of its own
    // (one more, for an even number of games).
    let args = [
        "--json",
        "--concurrency",
        "5",
        "--concurrency",
        "5",
        "--bots",
        "random",
    ];
    let chosen = run(&args);
    assert_eq!(chosen.status.code(), Some(0), "stderr: {}", text(&chosen.stderr));
    let chosen: Value = serde_json::from_slice(&chosen.stdout).expect("JSON");
    assert_eq!(chosen["bots"], "random");
    let rows = chosen["rows"].as_array().expect("rows");
    let runs: Vec<bool> = rows.iter().map(|r| r["pinned"].as_bool().unwrap()).collect();
    assert!(runs == [false, true] || runs == [false], "{chosen}");
    for r in rows {
        assert_eq!(
            (&r["concurrency"], &r["games"]),
            (&Value::from(5), &Value::from(6)),
            "{r}"
        );
        assert_eq!(r["forfeits"], 0, "{r}");
        assert_eq!(r["time_losses"], 0, "{r}");
    }
    // `--games` sets the games of every row, whatever the concurrency.
    let given = run(&["--json", "--concurrency", "3", "--games", "4"]);
    assert_eq!(given.status.code(), Some(0), "stderr: {}", text(&given.stderr));
    let given: Value = serde_json::from_slice(&given.stdout).expect("JSON");
    for r in given["rows"].as_array().expect("rows") {
        assert_eq!(
            (&r["concurrency"], &r["games"]),
            (&Value::from(3), &Value::from(4)),
            "{r}"
        );
    }
    let table = run(&[]);
    assert_eq!(table.status.code(), Some(0), "stderr: {}", text(&table.stderr));
    let table = text(&table.stdout);
    assert_says(
        &table,
        &[
            "tournament throughput",
            "--tc 1+0.01",
            "actions/s",
            "referee µs/a",
            "pinned",
            "two replay agents of one recorded game",
        ],
    );
    assert_empty(tmp.path());
}

#[test]
fn bench_throughput_refuses_what_it_does_not_measure() {
    let dir = TempDir::new().unwrap();
    let out = referee_in(dir.path())
        .args(["bench", "--throughput", "--game", "pegchow"])
        .output()
        .expect("run referee bench");
    assert_eq!(out.status.code(), Some(2), "stderr: {}", text(&out.stderr));
    for wrong in [
        &["bench", "--sandbox", "none"][..],
        &["bench", "--concurrency", "2"],
        &["bench", "--throughput", "--concurrency", "0"],
        &["bench", "--games", "4"],
        &["bench", "--throughput", "--games", "3"],
        &["bench", "--throughput", "--games", "0"],
    ] {
        let out = referee_in(dir.path())
            .args(wrong)
            .output()
            .expect("run referee bench");
        assert_eq!(out.status.code(), Some(2), "{wrong:?}: {}", text(&out.stderr));
        assert_eq!(
            text(&out.stderr).lines().count(),
            1,
            "{wrong:?}: one line: {}",
            text(&out.stderr)
        );
    }
}
