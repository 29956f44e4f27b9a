//! The Python client of `serve --json` (`examples/harness/referee_client.py`): its
//! example scripts play random games of every game through it, checking every `undo`
//! against a replay from the start, and every seat's `events` against the transcript
//! of a real match replaying the same actions. Needs `python3`; without it the tests
//! print why and pass.

mod cli_support;

use cli_support::{exe, have_python, python3, text};

/// Runs `examples/harness/<script>` against the binary with `--seed seed` and `extra`
/// words; it must succeed and end with `ok`. Its stdout.
fn run_example(script: &str, seed: u64, extra: &[&str]) -> String {
    let path = format!("{}/examples/harness/{script}", env!("CARGO_MANIFEST_DIR"));
    let out = std::process::Command::new(python3().unwrap())
        .args([&path, "--referee", exe(), "--seed", &seed.to_string()])
        .args(extra)
        .output()
        .unwrap();
    let stdout = text(&out.stdout);
    assert!(
        out.status.success(),
        "seed {seed}: {stdout}\n{}",
        text(&out.stderr)
    );
    assert_eq!(stdout.lines().last(), Some("ok"), "{stdout}");
    stdout
}

#[test]
fn the_python_client_plays_every_game_and_undo_matches_replays() {
    if !have_python() {
        return;
    }
    for seed in [1, 2] {
        let stdout = run_example("random_games.py", seed, &["--plies", "80", "--rounds", "2"]);
        for game in ["pegchow", "telka", "idoubtit", "multichess"] {
            assert!(
                stdout.lines().any(|l| l.starts_with(game)),
                "{game} not played: {stdout}"
            );
        }
        let undos: usize = stdout
            .lines()
            .filter_map(|l| l.split(": ").nth(1)?.split(' ').next()?.parse::<usize>().ok())
            .sum();
        assert!(undos >= 10, "seed {seed}: only {undos} undos checked: {stdout}");
    }
}

#[test]
fn the_python_client_gets_from_events_what_a_match_sends_each_agent() {
    if !have_python() {
        return;
    }
    let mut forced_passes = false;
    // Seed 25's Telka game has forced passes, which a match asks no agent for.
    for seed in [1, 25] {
        let stdout = run_example("events_match_transcript.py", seed, &[]);
        for game in ["pegchow", "telka", "idoubtit", "multichess"] {
            let line = stdout
                .lines()
                .find(|l| l.starts_with(game))
                .unwrap_or_else(|| panic!("seed {seed}: {game} not checked: {stdout}"));
            let decisions: usize = line
                .split_once(": ")
                .and_then(|(_, rest)| rest.split(' ').next()?.parse().ok())
                .unwrap_or_else(|| panic!("seed {seed}: {line}"));
            assert!(decisions >= 10, "seed {seed}: {line}");
            assert!(line.contains(" seats match the transcripts"), "{line}");
            forced_passes |= line.ends_with(" forced passes)");
        }
    }
    assert!(forced_passes, "no game had a forced pass");
}
