//! Many games at once lose nothing: a tournament of 64 games, all played at once on
//! this machine's few cores under `--tc 1+0.01`, plain and in the sandbox, finishes
//! every game, and every record verifies and shows no forfeit: no bot lost on time
//! because the referee kept it waiting.
//!
//! The games are short (40 plies): that keeps each seat's average time per move
//! above 50 ms, so that a test run beside other work stays about the referee, not
//! the machine. How fast full-length games go is `referee bench --throughput`'s to
//! say, not a test's.

mod cli_support;

use std::path::Path;

use cli_support::{assert_verifies, kind, record_lines, referee_in, sandbox_available, text, HANG_BOUND};
use tempfile::TempDir;

/// Games in each tournament, all played at once.
const GAMES: usize = 64;

/// Plays the tournament with agents isolated by `sandbox` and checks every record.
fn sixty_four_games_at_once(sandbox: &str) {
    let dir = TempDir::new().unwrap();
    let out = dir.path().join("t");
    let games = GAMES.to_string();
    let run = referee_in(dir.path())
        .args(["tournament", "--game", "telka", "-o", "max-plies=40"])
        .args(["--agent", "builtin:random", "--agent", "builtin:random"])
        .args(["--games", &games, "--concurrency", &games, "--tc", "1+0.01"])
        .args(["--sandbox", sandbox, "--report-every", "0", "--json", "--out"])
        .arg(&out)
        .timeout(HANG_BOUND)
        .output()
        .expect("run referee tournament");
    assert_eq!(run.status.code(), Some(0), "stderr: {}", text(&run.stderr));
    let summary: serde_json::Value = serde_json::from_slice(&run.stdout).expect("a JSON summary");
    assert_eq!(summary["finished"], GAMES, "{summary}");
    for standing in summary["standings"].as_array().expect("standings") {
        assert_eq!(standing["timeouts"], 0, "{standing}");
    }
    let records = records_in(&out.join("games"));
    assert_eq!(records.len(), GAMES, "one record per game");
    for record in &records {
        assert_verifies(record);
        let lines = record_lines(record);
        let forfeits: Vec<_> = lines.iter().filter(|l| kind(l) == "forfeit").collect();
        assert!(forfeits.is_empty(), "{}: {forfeits:?}", record.display());
        let result = lines.last().expect("a record has lines");
        assert_eq!(kind(result), "result", "{}: {result}", record.display());
        let reason = result["reason"].as_str().unwrap_or_default();
        assert!(!reason.starts_with("forfeit"), "{}: {result}", record.display());
        let isolated = lines[0]["sandbox"].as_str().unwrap_or_default();
        assert_eq!(
            isolated.starts_with("none"),
            sandbox == "none",
            "header says {isolated}"
        );
    }
}

/// The records a tournament wrote, by path.
fn records_in(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut found: Vec<_> = std::fs::read_dir(dir)
        .expect("the games directory")
        .map(|e| e.expect("a directory entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    found.sort();
    found
}

#[test]
fn sixty_four_games_at_once_lose_none_on_time_plain_and_sandboxed() {
    // One after the other, not as two tests side by side: each is 192 processes on
    // the machine's few CPUs already, and the clocks are short.
    sixty_four_games_at_once("none");
    if sandbox_available() {
        sixty_four_games_at_once("require");
    }
}
