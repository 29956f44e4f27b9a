//! What `referee tournament` says while it runs, through the real binary in a pipe
//! (what tests see): a line per game with the time gone and to go and the places
//! named as places, the current table every `--report-every` games (W/D/L, points,
//! Elo, LOS, pentanomial counts, the SPRT's LLR and bounds; average place and
//! rating for more seats), and `summary.json` rewritten whole while games go on.

mod cli_support;

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Instant;

use serde_json::Value;

use cli_support::{exe, referee_in, text, HANG_BOUND};

/// `referee tournament ARGS…` in `dir`, which must succeed; returns its stderr.
fn tournament_stderr(dir: &Path, args: &[&str]) -> String {
    let out = referee_in(dir)
        .arg("tournament")
        .args(args)
        .output()
        .expect("run referee");
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{args:?}: {stderr}");
    stderr
}

/// The lines of `stderr` that start with `prefix`.
fn lines_starting<'a>(stderr: &'a str, prefix: &str) -> Vec<&'a str> {
    stderr.lines().filter(|l| l.starts_with(prefix)).collect()
}

#[test]
fn a_pipe_gets_a_line_per_game_and_the_table_every_n_games() {
    let dir = tempfile::tempdir().expect("temp dir");
    let args = [
        "--game",
        "pegchow",
        "--agent",
        "builtin:greedy",
        "--agent",
        "builtin:random",
        "--games",
        "6",
        "--report-every",
        "2",
        "--out",
        "out",
    ];
    let stderr = tournament_stderr(dir.path(), &args);
    let games = lines_starting(&stderr, "game ");
    assert_eq!(games.len(), 6, "{stderr}");
    for (i, line) in games.iter().enumerate() {
        assert!(line.starts_with(&format!("game {}/6 (#", i + 1)), "{line}");
        assert!(line.contains(" elapsed, ETA "), "time gone and to go: {line}");
        let named = line.contains("1st greedy, 2nd random") || line.contains("1st random, 2nd greedy");
        assert!(named, "places are named as places, best first: {line}");
    }
    let tables = lines_starting(&stderr, "standings after ");
    assert_eq!(tables.len(), 3, "{stderr}");
    for (n, line) in [2, 4, 6].iter().zip(&tables) {
        assert!(
            line.starts_with(&format!("standings after {n} games (")),
            "{line}"
        );
    }
    for header in ["wins", "draws", "losses", "points", "elo (95%)", "los"] {
        assert_eq!(
            lines_starting(&stderr, "rank ")
                .iter()
                .filter(|l| l.contains(header))
                .count(),
            3,
            "{header}"
        );
    }
    assert_eq!(lines_starting(&stderr, "greedy vs random: ").len(), 3, "{stderr}");
    assert!(lines_starting(&stderr, "greedy vs random: ")
        .iter()
        .all(|l| l.contains("pentanomial [")));
    // The table after 4 games says 4, with the W/D/L of 4 games.
    let after4 = stderr
        .split("standings after 4 games")
        .nth(1)
        .expect("the second table");
    assert!(
        after4
            .lines()
            .nth(1)
            .is_some_and(|l| l.contains(": 4 of 6 games")),
        "{after4}"
    );
    let quiet = tournament_stderr(
        dir.path(),
        &[&args[..8], &["--report-every", "0", "--out", "quiet"]].concat(),
    );
    assert!(
        lines_starting(&quiet, "standings after").is_empty(),
        "0: only the final table: {quiet}"
    );
    assert_eq!(lines_starting(&quiet, "game ").len(), 6);
    // With an SPRT, every table has its LLR and bounds (one pair, one table: the test
    // may decide at once, after the table is printed).
    let sprt = [
        &args[..6],
        &["--sprt", "elo0=0", "elo1=10", "alpha=0.05", "beta=0.05"],
    ]
    .concat();
    let sprt = [
        &sprt[..],
        &["--games", "2", "--report-every", "2", "--out", "sprt"],
    ]
    .concat();
    let stderr = tournament_stderr(dir.path(), &sprt);
    let table = stderr.split("standings after 2 games").nth(1).expect("a table");
    let llr = lines_starting(table, "SPRT: LLR ");
    assert!(!llr.is_empty(), "{stderr}");
    assert!(
        llr[0].contains(" (-") && llr[0].contains(", "),
        "the bounds: {}",
        llr[0]
    );
}

#[test]
fn more_seats_show_average_place_and_rating() {
    let dir = tempfile::tempdir().expect("temp dir");
    let args = [
        "--game",
        "pegchow",
        "-o",
        "players=3",
        "--agent",
        "builtin:greedy",
        "--agent",
        "builtin:random",
        "--agent",
        "name=r2 cmd=builtin:random",
        "--report-every",
        "3",
        "--out",
        "out",
    ];
    let stderr = tournament_stderr(dir.path(), &args);
    assert_eq!(
        lines_starting(&stderr, "standings after 3 games").len(),
        1,
        "{stderr}"
    );
    let header = lines_starting(&stderr, "rank ");
    assert!(
        header[0].contains("avg place") && header[0].contains("rating"),
        "{stderr}"
    );
    for line in lines_starting(&stderr, "game ") {
        let places = line.split(": ").nth(1).unwrap_or("");
        assert!(places.starts_with("1st "), "best first: {line}");
        for name in ["greedy", "random", "r2"] {
            assert!(places.contains(&format!(" {name}")), "{name} has a place: {line}");
        }
    }
    // Head to head, from the places of each game: ahead wins, a shared place draws.
    let mut expected = (0, 0, 0);
    for line in lines_starting(&stderr, "game ") {
        // `1st greedy, 2nd random, 2nd r2 (max-plies); …`: a place is one digit here.
        let places = line.split(": ").nth(1).unwrap_or("");
        let place_of = |name: &str| -> u32 {
            let entry = places.split(", ").find(|e| e.split(' ').nth(1) == Some(name));
            entry.unwrap_or_else(|| panic!("{name} in {line}"))[..1]
                .parse()
                .unwrap()
        };
        match place_of("greedy").cmp(&place_of("random")) {
            std::cmp::Ordering::Less => expected.0 += 1,
            std::cmp::Ordering::Equal => expected.1 += 1,
            std::cmp::Ordering::Greater => expected.2 += 1,
        }
    }
    let head = lines_starting(&stderr, "greedy vs random: ");
    let want = format!(
        "greedy vs random: +{} ={} -{}  score ",
        expected.0, expected.1, expected.2
    );
    assert!(
        head.last().is_some_and(|l| l.starts_with(&want)),
        "{want}: {stderr}"
    );
    assert!(!head.iter().any(|l| l.contains("pentanomial")), "{stderr}");
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("out/summary.json")).unwrap()).unwrap();
    let pairings = summary["pairings"].as_array().expect("pairings");
    assert_eq!(pairings.len(), 3, "every pair of three entrants: {summary}");
    let p = &pairings[0];
    assert_eq!(
        (p["first"].as_str(), p["second"].as_str()),
        (Some("greedy"), Some("random"))
    );
    assert_eq!(p["pentanomial"], serde_json::Value::Null);
    let score = p["score"].as_f64().unwrap();
    let games = f64::from(expected.0 + expected.1 + expected.2);
    assert!((score - (f64::from(expected.0) + f64::from(expected.1) / 2.0) / games).abs() < 1e-9);
    let (lo, hi) = (
        p["score_interval"][0].as_f64().unwrap(),
        p["score_interval"][1].as_f64().unwrap(),
    );
    assert!(lo <= score && score <= hi && lo < hi, "{p}");
}

/// The tournament held at the gate: on any way out of the test the gate opens and the
/// tournament is killed, so a failing test leaves nothing running.
struct Held(Child, std::path::PathBuf);

impl Drop for Held {
    fn drop(&mut self) {
        let _ = std::fs::write(&self.1, "");
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn summary_json_is_rewritten_while_games_go_on() {
    let dir = tempfile::tempdir().expect("temp dir");
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/bots/gate.sh");
    let gate = shell_words::join([
        "sh",
        &fixture.to_string_lossy(),
        &dir.path().to_string_lossy(),
        exe(),
    ]);
    let entrant = format!("name=gated cmd={}", shell_words::quote(&gate));
    // The gate needs the test's directory: no sandbox; a clock no wait comes near.
    let child = Command::new(exe())
        .current_dir(dir.path())
        .args([
            "tournament",
            "--game",
            "pegchow",
            "--agent",
            &entrant,
            "--agent",
            "builtin:random",
        ])
        .args([
            "--games",
            "4",
            "--sandbox",
            "none",
            "--tc",
            "100000",
            "--out",
            "out",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start the tournament");
    let mut held = Held(child, dir.path().join("open"));
    let summary = dir.path().join("out/summary.json");
    let started = Instant::now();
    let first = loop {
        assert!(
            started.elapsed() < HANG_BOUND,
            "no summary.json after the first game"
        );
        // Read whole or not at all: every version that exists parses.
        if let Ok(body) = std::fs::read_to_string(&summary) {
            let json: Value =
                serde_json::from_str(&body).unwrap_or_else(|e| panic!("half a file ({e}): {body}"));
            break json;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    assert_eq!(
        first["finished"], 1,
        "written after the first game, while the second waits"
    );
    assert_eq!(first["scheduled"], 4);
    let second = std::fs::read_to_string(dir.path().join("out/games/game-00001.jsonl")).unwrap_or_default();
    assert!(
        !second.contains(r#""type":"result""#),
        "the second game is still being played"
    );
    std::fs::write(dir.path().join("open"), "").expect("open the gate");
    let status = held.0.wait().expect("wait for the tournament");
    assert!(status.success(), "{status:?}");
    let last: Value = serde_json::from_str(&std::fs::read_to_string(&summary).unwrap()).unwrap();
    assert_eq!(last["finished"], 4, "the final figures");
    let leftovers: Vec<_> = std::fs::read_dir(dir.path().join("out"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".summary"))
        .collect();
    assert!(leftovers.is_empty(), "no temporary file is left: {leftovers:?}");
}
