//! Engine reuse in `referee tournament`, through the real binary: a worker keeps each
//! entrant's agent process between games (`--restart on-failure`, the default), and
//! starts one per game with `--restart always` or an entrant's `restart=always`; a
//! crash, or an agent that does not answer `readyok` for its next game, gets a fresh
//! process; the games are the same move for move either way.
//!
//! Each entrant is `fixtures/bots/counted.sh`, which adds a token drawn at start-up to
//! its `id name`: the record headers show which games one process played. Built-in
//! agents, whose commands differ from game to game by their seed, are checked
//! through the library, where a match reports its agents' process groups.

mod cli_support;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde_json::Value;

use cli_support::{assert_verifies, bot_command, exe, record_lines, referee_in};

/// An entrant running `counted.sh SEED MODE NAME` (the name is its last word, so the
/// record header's command says which entrant sat where).
fn counted(name: &str, seed: u64, mode: &str, extra: &[&str]) -> String {
    let cmd = bot_command(
        "counted.sh",
        &[seed.to_string(), mode.to_string(), name.to_string()],
    );
    let mut words = vec![format!("name={name}"), format!("cmd={cmd}")];
    words.extend(extra.iter().map(|w| w.to_string()));
    shell_words::join(words)
}

/// Runs a Telka tournament of `agents` into `dir/out` with `extra` flags; it must
/// succeed.
fn run(dir: &Path, out: &str, agents: &[String], extra: &[&str]) {
    let mut cmd = referee_in(dir);
    cmd.args(["tournament", "--game", "telka", "--tc", "5+0.1", "--out", out])
        .args(["--env", &format!("REFEREE={}", exe())]);
    for a in agents {
        cmd.args(["--agent", a]);
    }
    let done = cmd.args(extra).output().expect("run referee");
    assert!(
        done.status.success(),
        "tournament failed: {}",
        String::from_utf8_lossy(&done.stderr)
    );
}

/// One game as the record shows it: per seat the entrant and the token of its
/// process, the forfeits (by entrant and reason) and the actions.
#[derive(Debug)]
struct Game {
    seats: Vec<(String, String)>,
    forfeits: Vec<(String, String)>,
    actions: Vec<String>,
}

/// Every game of a tournament's output, by schedule index; each record verifies.
fn games(out: &Path) -> BTreeMap<usize, Game> {
    let mut found = BTreeMap::new();
    for entry in std::fs::read_dir(out.join("games")).expect("games/").flatten() {
        let path: PathBuf = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(index) = name.strip_prefix("game-").and_then(|n| n.strip_suffix(".jsonl")) else {
            continue;
        };
        assert_verifies(&path);
        found.insert(index.parse().expect("an index"), game(&record_lines(&path)));
    }
    found
}

fn game(lines: &[Value]) -> Game {
    let seats: Vec<(String, String)> = lines[0]["seats"]
        .as_array()
        .expect("seats")
        .iter()
        .map(|s| {
            let command = s["command"].as_str().expect("command");
            let entrant = command.rsplit(' ').next().expect("a last word").to_string();
            let token = s["name"]
                .as_str()
                .expect("name")
                .rsplit(' ')
                .next()
                .expect("token");
            (entrant, token.to_string())
        })
        .collect();
    let forfeits = lines
        .iter()
        .filter(|l| l["type"] == "forfeit")
        .map(|l| {
            let seat = l["seat"].as_u64().expect("seat") as usize;
            (
                seats[seat - 1].0.clone(),
                l["reason"].as_str().expect("reason").to_string(),
            )
        })
        .collect();
    let actions = lines
        .iter()
        .filter(|l| l["type"] == "action")
        .map(|l| l["action"].as_str().expect("action").to_string())
        .collect();
    Game {
        seats,
        forfeits,
        actions,
    }
}

/// The tokens (processes) of `entrant`, in game order, one per game it played.
fn tokens(games: &BTreeMap<usize, Game>, entrant: &str) -> Vec<String> {
    games
        .values()
        .flat_map(|g| {
            g.seats
                .iter()
                .filter(|(e, _)| e == entrant)
                .map(|(_, t)| t.clone())
        })
        .collect()
}

fn distinct(tokens: &[String]) -> usize {
    tokens.iter().collect::<BTreeSet<_>>().len()
}

#[test]
fn one_process_per_entrant_per_worker_and_one_per_game_with_restart_always() {
    let tmp = tempfile::tempdir().unwrap();
    let agents = [counted("A", 1, "plain", &[]), counted("B", 2, "plain", &[])];
    run(tmp.path(), "kept", &agents, &["--games", "6"]);
    run(
        tmp.path(),
        "fresh",
        &agents,
        &["--games", "6", "--restart", "always"],
    );
    let kept = games(&tmp.path().join("kept"));
    let fresh = games(&tmp.path().join("fresh"));
    assert_eq!(kept.len(), 6);
    for entrant in ["A", "B"] {
        assert_eq!(distinct(&tokens(&kept, entrant)), 1, "{entrant} reused: {kept:?}");
        assert_eq!(
            distinct(&tokens(&fresh, entrant)),
            6,
            "{entrant} always: {fresh:?}"
        );
    }
    // The same seed gives the same games move for move, kept processes or not.
    for (index, g) in &kept {
        assert!(g.forfeits.is_empty(), "game {index}: {g:?}");
        assert!(!g.actions.is_empty());
        assert_eq!(g.actions, fresh[index].actions, "game {index}");
    }
}

#[test]
fn each_worker_keeps_its_own_processes() {
    let tmp = tempfile::tempdir().unwrap();
    let agents = [counted("A", 1, "plain", &[]), counted("B", 2, "plain", &[])];
    run(
        tmp.path(),
        "out",
        &agents,
        &["--games", "12", "--concurrency", "2"],
    );
    let all = games(&tmp.path().join("out"));
    assert_eq!(all.len(), 12);
    for entrant in ["A", "B"] {
        let n = distinct(&tokens(&all, entrant));
        assert!((1..=2).contains(&n), "{entrant}: {n} processes for 2 workers");
    }
    for g in all.values() {
        assert_ne!(g.seats[0].1, g.seats[1].1, "two seats, two processes: {g:?}");
    }
}

#[test]
fn an_agent_that_crashed_is_started_again_for_its_next_game() {
    let tmp = tempfile::tempdir().unwrap();
    let agents = [counted("A", 1, "crash-game2", &[]), counted("B", 2, "plain", &[])];
    run(tmp.path(), "out", &agents, &["--games", "4"]);
    let all = games(&tmp.path().join("out"));
    let a = tokens(&all, "A");
    // Each process of A crashes in its second game; the next game has a new one.
    assert_eq!(a[0], a[1]);
    assert_ne!(a[1], a[2]);
    assert_eq!(a[2], a[3]);
    let forfeits: Vec<_> = all.values().map(|g| g.forfeits.clone()).collect();
    let crash = vec![("A".to_string(), "crash".to_string())];
    assert_eq!(forfeits, [vec![], crash.clone(), vec![], crash]);
    // B lost no game by its own fault: one process throughout.
    assert_eq!(distinct(&tokens(&all, "B")), 1);
}

#[test]
fn an_agent_gone_or_silent_before_its_next_game_is_restarted_without_a_forfeit() {
    let tmp = tempfile::tempdir().unwrap();
    for mode in ["exit-gameover", "hang-game2"] {
        let agents = [counted("A", 1, mode, &[]), counted("B", 2, "plain", &[])];
        // Not named after the mode: an argument naming a path there would be refused.
        let out = format!("out-{mode}");
        run(
            tmp.path(),
            &out,
            &agents,
            &["--games", "4", "--startup-timeout", "2"],
        );
        let all = games(&tmp.path().join(&out));
        for (index, g) in &all {
            assert!(g.forfeits.is_empty(), "{mode}, game {index}: {g:?}");
        }
        // Every renewal fails (the exit, or the hang in each process's second game),
        // so every game has a process of its own.
        assert_eq!(distinct(&tokens(&all, "A")), 4, "{mode}: {all:?}");
        assert_eq!(distinct(&tokens(&all, "B")), 1, "{mode}: {all:?}");
    }
}

#[test]
fn an_entrants_restart_overrides_the_flag_in_specs_and_files() {
    let tmp = tempfile::tempdir().unwrap();
    let agents = [
        counted("A", 1, "plain", &["restart=on-failure"]),
        counted("B", 2, "plain", &[]),
    ];
    run(
        tmp.path(),
        "flags",
        &agents,
        &["--games", "4", "--restart", "always"],
    );
    let all = games(&tmp.path().join("flags"));
    assert_eq!(distinct(&tokens(&all, "A")), 1);
    assert_eq!(distinct(&tokens(&all, "B")), 4);
    // How processes restart changes no game: a resume may choose otherwise.
    let other = [counted("A", 1, "plain", &[]), counted("B", 2, "plain", &[])];
    run(tmp.path(), "flags", &other, &["--games", "4", "--resume"]);
    let file = tmp.path().join("agents.toml");
    let toml = format!(
        "[[agent]]\nname = \"A\"\ncmd = {:?}\n\n[[agent]]\nname = \"B\"\ncmd = {:?}\nrestart = \"always\"\n",
        bot_command("counted.sh", &["1", "plain", "A"]),
        bot_command("counted.sh", &["2", "plain", "B"]),
    );
    std::fs::write(&file, toml).unwrap();
    run(
        tmp.path(),
        "file",
        &[],
        &["--games", "4", "--agents-file", "agents.toml"],
    );
    let all = games(&tmp.path().join("file"));
    assert_eq!(distinct(&tokens(&all, "A")), 1);
    assert_eq!(distinct(&tokens(&all, "B")), 4);
}

#[test]
fn a_bad_restart_policy_is_one_line_and_exit_2() {
    let tmp = tempfile::tempdir().unwrap();
    let bad = [
        vec![
            "--agent".to_string(),
            counted("A", 1, "plain", &["restart=never"]),
        ],
        vec!["--restart".to_string(), "sometimes".to_string()],
    ];
    for extra in bad {
        let done = referee_in(tmp.path())
            .args([
                "tournament",
                "--game",
                "telka",
                "--out",
                "o",
                "--agent",
                "builtin:random",
            ])
            .args(["--agent", "builtin:greedy"])
            .args(&extra)
            .output()
            .expect("run referee");
        let stderr = String::from_utf8_lossy(&done.stderr);
        assert_eq!(done.status.code(), Some(2), "{extra:?}: {stderr}");
        let lines: Vec<&str> = stderr.lines().collect();
        assert_eq!(lines.len(), 1, "one line: {stderr}");
        assert!(lines[0].starts_with("referee: "), "{stderr}");
        assert!(
            stderr.contains("`never`") || stderr.contains("'sometimes'"),
            "{stderr}"
        );
        assert!(!tmp.path().join("o").exists(), "nothing is created");
    }
}

/// A Telka match between two built-in random agents seeded `seeds`, recorded into
/// `dir`, through the library as a tournament's worker plays it.
fn builtin_match(dir: &Path, name: &str, seeds: [u64; 2]) -> referee::referee::MatchConfig {
    use referee::agent::{AgentSpec, Isolation};
    use referee::builtin::Strategy;
    use referee::referee::{AgentCwd, MatchConfig, SeatAgent};
    let exe = shell_words::quote(exe()).into_owned();
    let agents = seeds
        .iter()
        .map(|&seed| SeatAgent {
            spec: AgentSpec::new(Strategy::Random.command_line(&exe, seed)),
            options: Vec::new(),
            entrant: None,
            control: None,
            builtin_seed: Some(seed),
        })
        .collect();
    MatchConfig {
        game: referee::game::GameId::Telka,
        options: referee::game::Options::parse(["max-plies=60"]).expect("options"),
        state: None,
        agents,
        control: referee::clock::TimeControl::PerMove(std::time::Duration::from_secs(30)),
        margin: std::time::Duration::from_millis(50),
        startup: std::time::Duration::from_secs(60),
        quit_grace: std::time::Duration::from_secs(5),
        seed: 1,
        record: dir.join(format!("{name}.jsonl")),
        log_dir: None,
        resume: false,
        durability: referee::record::Durability::Never,
        agent_cwd: AgentCwd::Inherit,
        opening: Vec::new(),
        isolation: Isolation::NotIsolated("the test looks at the processes".into()),
        network: false,
        sign: None,
        hidden: Vec::new(),
    }
}

#[test]
fn a_kept_builtin_agent_is_reseeded_and_plays_its_next_game_as_a_fresh_one_would() {
    use referee::referee::play_match_keeping;
    let tmp = tempfile::tempdir().unwrap();
    let keep = [true, true];
    let first = builtin_match(tmp.path(), "first", [11, 12]);
    let (played, kept) = play_match_keeping(&first, Vec::new(), &keep, &mut |_| {});
    let first_report = played.expect("first game");
    let first_groups = first_report.process_groups.clone();
    assert_eq!(kept.iter().flatten().count(), 2, "both agents kept");
    // The next game's seeds differ, as a tournament's do from game to game.
    let next = builtin_match(tmp.path(), "next", [21, 22]);
    let (played, kept) = play_match_keeping(&next, kept, &keep, &mut |_| {});
    let next_report = played.expect("next game");
    assert_eq!(
        next_report.process_groups, first_groups,
        "the same processes played the next game"
    );
    drop(kept);
    let fresh = builtin_match(tmp.path(), "fresh", [21, 22]);
    let (played, _) = play_match_keeping(&fresh, Vec::new(), &[false, false], &mut |_| {});
    let fresh_report = played.expect("fresh game");
    assert_ne!(fresh_report.process_groups, first_groups);
    assert_eq!(
        next_report.moves, fresh_report.moves,
        "a reseeded agent plays the game its command would play"
    );
    assert_ne!(
        first_report.moves, next_report.moves,
        "other seeds, another game: the seed reached the kept agents"
    );
    for game in ["first", "next", "fresh"] {
        assert_verifies(&tmp.path().join(format!("{game}.jsonl")));
    }
}

#[test]
fn a_seed_option_for_a_builtin_agent_is_refused_with_one_line_and_exit_2() {
    let tmp = tempfile::tempdir().unwrap();
    let runs = [
        vec![
            "match",
            "--game",
            "telka",
            "--fill",
            "random",
            "--setoption",
            "1:seed=7",
        ],
        vec![
            "tournament",
            "--game",
            "telka",
            "--agent",
            "name=a cmd=builtin:random option.Seed=5",
            "--agent",
            "builtin:greedy",
            "--out",
            "t",
        ],
    ];
    for args in runs {
        let done = referee_in(tmp.path()).args(&args).output().expect("run referee");
        let stderr = String::from_utf8_lossy(&done.stderr);
        assert_eq!(done.status.code(), Some(2), "{args:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(stderr.contains("seed is the game's"), "{stderr}");
    }
    assert!(!tmp.path().join("t").exists(), "nothing written");
}

/// The CPUs in a `Cpus_allowed_list` such as `0-3,6`.
fn cpu_list(text: &str) -> Vec<usize> {
    let mut cpus = Vec::new();
    for part in text.trim().split(',') {
        let (lo, hi) = part.split_once('-').unwrap_or((part, part));
        cpus.extend(lo.parse::<usize>().expect("a CPU")..=hi.parse::<usize>().expect("a CPU"));
    }
    cpus
}

/// `--affinity`: each worker, and the agents it starts, runs on a CPU of its own, one
/// of those the referee may use; without it an agent may run wherever the referee may.
#[test]
fn with_affinity_each_worker_and_its_agents_run_on_a_cpu_of_their_own() {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    let mine = status
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
        .expect("Cpus_allowed_list")
        .trim()
        .to_string();
    let allowed = cpu_list(&mine);
    let dir = tempfile::tempdir().unwrap();
    let agents = [counted("a", 1, "cpus", &[]), counted("b", 2, "cpus", &[])];
    let flags = ["--games", "16", "--concurrency", "2", "-o", "max-plies=20"];
    run(
        dir.path(),
        "pinned",
        &agents,
        &[&flags[..], &["--affinity"]].concat(),
    );
    let mut used = BTreeSet::new();
    for (index, game) in games(&dir.path().join("pinned")) {
        let cpus: BTreeSet<String> = game.seats.iter().map(|(_, token)| token.clone()).collect();
        assert_eq!(
            cpus.len(),
            1,
            "game {index}: both agents on their worker's CPU: {cpus:?}"
        );
        for token in cpus {
            let cpu = cpu_list(token.strip_prefix("cpus=").expect("cpus="));
            assert!(
                cpu.len() == 1 && allowed.contains(&cpu[0]),
                "game {index}: {token} of {mine}"
            );
            used.insert(cpu[0]);
        }
    }
    assert_eq!(
        used.len(),
        allowed.len().min(2),
        "two workers, two CPUs where there are two: {used:?}"
    );
    run(dir.path(), "free", &agents, &flags);
    for (index, game) in games(&dir.path().join("free")) {
        for (_, token) in &game.seats {
            assert_eq!(token, &format!("cpus={mine}"), "game {index}");
        }
    }
}
