//! The Python client of `serve --json` (`examples/harness/referee_client.py`): its
//! example script plays random games of every game through it and checks every
//! `undo` against a replay from the start. Needs `python3`; without it the test
//! prints why and passes.

mod cli_support;

use cli_support::{exe, have_python, python3, text};

#[test]
fn the_python_client_plays_every_game_and_undo_matches_replays() {
    if !have_python() {
        return;
    }
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/harness/random_games.py");
    for seed in [1, 2] {
        let out = std::process::Command::new(python3().unwrap())
            .args([script, "--referee", exe(), "--seed", &seed.to_string()])
            .args(["--plies", "80", "--rounds", "2"])
            .output()
            .unwrap();
        let stdout = text(&out.stdout);
        assert!(
            out.status.success(),
            "seed {seed}: {stdout}\n{}",
            text(&out.stderr)
        );
        assert_eq!(stdout.lines().last(), Some("ok"), "{stdout}");
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
