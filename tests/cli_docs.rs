//! The command line as documented: the README's command reference lists exactly the
//! commands and flags `--help` lists, and the CLI behaves the same way in every
//! command (usage errors, suggestions, printable bot text, exit codes).

mod cli_support;

use std::collections::{BTreeMap, BTreeSet};

use cli_support::*;

/// The README's command reference: for each command (`match`, `pbm new` …), every
/// flag its usage lines name, long (`--seed`) or short (`-o`).
fn readme_usage() -> BTreeMap<String, BTreeSet<String>> {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    let section = readme
        .split("## Command reference")
        .nth(1)
        .expect("a command reference section");
    let block = section.split("```").nth(1).expect("a usage block");
    let mut usage: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut current: Vec<String> = Vec::new();
    for line in block.lines().filter(|l| !l.trim().is_empty()) {
        let mut words = line.split_whitespace().peekable();
        if let Some(rest) = line.strip_prefix("referee ") {
            words = rest.split_whitespace().peekable();
            // The command is the leading lower-case words; `a|b` names two.
            let mut names = vec![String::new()];
            while let Some(w) = words.next_if(|w| w.chars().all(|c| c.is_ascii_lowercase() || c == '|')) {
                names = names
                    .iter()
                    .flat_map(|n| {
                        w.split('|')
                            .map(move |alt| format!("{n} {alt}").trim().to_string())
                    })
                    .collect();
            }
            current = names;
            for name in &current {
                usage.entry(name.clone()).or_default();
            }
        }
        for word in words {
            for flag in word
                .split(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
                .filter(|t| t.starts_with('-') && t.len() > 1 && t != &"--")
            {
                for name in &current {
                    usage.get_mut(name).unwrap().insert(flag.to_string());
                }
            }
        }
    }
    usage
}

/// The flags `referee <command> --help` lists, as (long, short) pairs, without
/// `--help` and `--version`.
fn help_flags(command: &str) -> Vec<(String, Option<String>)> {
    let out = referee_in(std::path::Path::new("."))
        .args(command.split(' '))
        .arg("--help")
        .output()
        .unwrap();
    assert!(out.status.success(), "{command} --help");
    text(&out.stdout)
        .lines()
        .filter_map(|l| {
            let l = l.trim_start();
            let (short, rest) = match l.strip_prefix('-').filter(|r| !r.starts_with('-')) {
                Some(r) => (Some(format!("-{}", &r[..1])), r[1..].trim_start_matches(", ")),
                None => (None, l),
            };
            let long = rest.strip_prefix("--")?.split([' ', '<', '=']).next()?;
            Some((format!("--{long}"), short))
        })
        .filter(|(long, _)| long != "--help" && long != "--version")
        .collect()
}

/// The subcommands `referee [group] --help` lists.
fn subcommands(group: &str) -> Vec<String> {
    let mut cmd = referee_in(std::path::Path::new("."));
    if !group.is_empty() {
        cmd.arg(group);
    }
    let out = cmd.arg("--help").output().unwrap();
    let help = text(&out.stdout);
    let commands = help.split("Commands:").nth(1).expect("a command list");
    commands
        .lines()
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help")
        .map(|c| format!("{group} {c}").trim().to_string())
        .collect()
}

#[test]
fn the_readme_lists_every_command_and_flag_help_lists_and_no_other() {
    let usage = readme_usage();
    let mut commands = Vec::new();
    for top in subcommands("") {
        if top == "pbm" || top == "agent" {
            commands.extend(subcommands(&top));
        } else {
            commands.push(top);
        }
    }
    let documented: BTreeSet<&String> = usage.keys().collect();
    let listed: BTreeSet<&String> = commands.iter().collect();
    assert_eq!(documented, listed, "README commands vs --help commands");
    for command in &commands {
        let in_readme = &usage[command];
        let flags = help_flags(command);
        for (long, short) in &flags {
            assert!(
                in_readme.contains(long) || short.as_ref().is_some_and(|s| in_readme.contains(s)),
                "`referee {command}`: {long} is in --help but not in the README"
            );
        }
        for flag in in_readme {
            assert!(
                flags.iter().any(|(l, s)| l == flag || s.as_ref() == Some(flag)),
                "`referee {command}`: {flag} is in the README but not in --help"
            );
        }
    }
}

#[test]
fn bare_referee_prints_the_help_and_exits_2() {
    for args in [&[][..], &["pbm"], &["agent"]] {
        let out = referee_in(std::path::Path::new(".")).args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(
            text(&out.stdout).contains("Usage: referee"),
            "{args:?}: {}",
            text(&out.stdout)
        );
    }
}

/// Runs `referee args` and asserts a one-line usage error (exit 2) containing `needle`.
fn usage_error(args: &[&str], needle: &str) {
    let dir = tempfile::tempdir().unwrap();
    let out = referee_in(dir.path()).args(args).output().unwrap();
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert_eq!(err.lines().count(), 1, "{args:?}: one line: {err}");
    assert!(err.starts_with("referee: "), "{err}");
    assert!(err.contains(needle), "{args:?}: no {needle:?} in {err}");
    // Nothing was started or written.
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        0,
        "{args:?} wrote files"
    );
}

#[test]
fn bad_values_are_usage_errors_in_every_command_that_takes_them() {
    let two = ["--agent", "builtin:random", "--agent", "builtin:random"];
    for command in [
        &["match", "--game", "telka"][..],
        &["tournament", "--game", "telka"],
    ] {
        let with = |extra: &[&str]| -> Vec<String> {
            command
                .iter()
                .chain(two.iter())
                .chain(extra)
                .map(|s| s.to_string())
                .collect()
        };
        for (extra, needle) in [
            (&["--startup-timeout", "NaN"][..], "positive number of seconds"),
            (&["--startup-timeout", "inf"], "positive number of seconds"),
            (&["--quit-grace", "0"], "positive number of seconds"),
            (&["--quit-grace", "1e9"], "at most 1000000"),
            (&["--max-memory", "0"], "at least 1"),
            (&["--max-cpu", "0"], "at least 1"),
            (&["--st", "NaN"], "--st"),
            (&["--tc", "0"], "no time at all"),
            (&["--env", "=x"], "KEY=VALUE"),
        ] {
            let args = with(extra);
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            usage_error(&args, needle);
        }
    }
    let rr = [
        "tournament",
        "--game",
        "telka",
        "--agent",
        "builtin:random",
        "--agent",
        "builtin:greedy",
    ];
    for (extra, needle) in [
        (&["--concurrency", "0"][..], "at least 1"),
        (&["--rounds", "0"], "at least 1"),
        (&["--games", "0"], "at least 1"),
        (&["--games", "100000000000"], "more than the 1000000"),
        (
            &["--games", "2", "--rounds", "18446744073709551615"],
            "more than the 1000000",
        ),
    ] {
        let args: Vec<&str> = rr.iter().chain(extra).copied().collect();
        usage_error(&args, needle);
    }
}

#[test]
fn unknown_names_get_a_suggestion() {
    usage_error(&["match", "--game", "telk"], "did you mean `telka`?");
    usage_error(
        &[
            "tournament",
            "--game",
            "multichss",
            "--agent",
            "a",
            "--agent",
            "b",
        ],
        "did you mean `multichess`?",
    );
    usage_error(&["bench", "--game", "pegchw"], "did you mean `pegchow`?");
    usage_error(
        &["match", "--game", "telka", "-o", "player=4"],
        "did you mean `players`?",
    );
    usage_error(
        &["match", "--game", "idoubtit", "-o", "varaint=3"],
        "did you mean `variant`?",
    );
    usage_error(
        &["match", "--game", "telka", "--agent", "builtin:gredy"],
        "did you mean `builtin:greedy`?",
    );
    usage_error(
        &[
            "tournament",
            "--game",
            "telka",
            "--agent",
            "builtin:nonesuch",
            "--agent",
            "builtin:random",
        ],
        "unknown built-in agent `builtin:nonesuch`",
    );
    usage_error(
        &[
            "tournament",
            "--game",
            "telka",
            "--agent",
            "name=x cmd=builtin:randm",
            "--agent",
            "builtin:random",
        ],
        "did you mean `builtin:random`?",
    );
}

#[test]
fn option_text_with_a_line_break_is_a_usage_error() {
    usage_error(
        &["match", "--game", "telka", "--setoption", "1:Hash=1\nquit"],
        "one line of printable text",
    );
    usage_error(
        &[
            "tournament",
            "--game",
            "telka",
            "--agent",
            "name=x cmd=builtin:random 'option.Hash=1\nquit'",
            "--agent",
            "builtin:random",
        ],
        "one line of printable text",
    );
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("agents.json");
    std::fs::write(&file, r#"[{"name":"x","cmd":"builtin:random","options":{"Hash":"1\nquit"}},{"name":"y","cmd":"builtin:random"}]"#).unwrap();
    let out = referee_in(dir.path())
        .args(["tournament", "--game", "telka", "--agents-file"])
        .arg(&file)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("one line of printable text"));
}

#[test]
fn builtin_agents_play_in_match_as_in_tournament() {
    let dir = tempfile::tempdir().unwrap();
    let out = referee_in(dir.path())
        .args([
            "match",
            "--game",
            "telka",
            "--agent",
            "builtin:random",
            "--agent",
            "builtin:greedy",
        ])
        .args(["--seed", "3", "-q", "--record", "r.jsonl"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let header = &record_lines(&dir.path().join("r.jsonl"))[0];
    let names: Vec<&str> = header["seats"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["random", "greedy"]);
}

#[test]
fn results_are_said_in_words_naming_the_team() {
    let dir = tempfile::tempdir().unwrap();
    let out = referee_in(dir.path())
        .args([
            "match",
            "--game",
            "telka",
            "-o",
            "players=4",
            "--seed",
            "1",
            "-q",
            "--record",
            "r.jsonl",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    let record = record_lines(&dir.path().join("r.jsonl"));
    let result = record.last().unwrap();
    assert_eq!(result["reason"], "win");
    // Whichever team won, the line names both of its colours and seats.
    let team = if result["places"][0] == 1 {
        "Blue+Green (seats 1 and 4) win by bringing three counters into the target home"
    } else {
        "Yellow+Red (seats 2 and 3) win by bringing three counters into the target home"
    };
    assert!(stdout.starts_with(&format!("result: {team}")), "{stdout}");
    let shown = referee_in(dir.path()).args(["show", "r.jsonl"]).output().unwrap();
    assert!(
        text(&shown.stdout).contains(&format!("result: {team}")),
        "{}",
        text(&shown.stdout)
    );
    assert!(
        !text(&shown.stdout).contains("places ["),
        "no Rust debug formatting"
    );
    let verified = referee_in(dir.path())
        .args(["verify", "r.jsonl"])
        .output()
        .unwrap();
    assert!(
        text(&verified.stdout).contains(&format!("finished: {team}")),
        "{}",
        text(&verified.stdout)
    );
}

#[test]
fn a_bots_name_cannot_steer_the_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let bot = dir.path().join("evil.sh");
    // A bot named with escape sequences and a carriage return, which then plays an
    // illegal action that is itself an escape sequence.
    std::fs::write(
        &bot,
        "#!/bin/sh\nwhile read -r line; do case \"$line\" in\n\
         protocol*) printf 'id name \\033[2J\\033]0;pwned\\007evil\\r\\n'; echo protocolok;;\n\
         isready) echo readyok;;\n\
         go*) printf 'bestmove \\033[31mx\\n';;\n\
         quit) exit 0;;\nesac; done\n",
    )
    .unwrap();
    let out = referee_in(dir.path())
        .args(["match", "--game", "telka", "--agent"])
        .arg(format!("sh {}", bot.display()))
        .args(["--seed", "1", "-v", "--record", "r.jsonl"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let shown = referee_in(dir.path()).args(["show", "r.jsonl"]).output().unwrap();
    for bytes in [&out.stdout, &out.stderr, &shown.stdout, &shown.stderr] {
        assert!(
            !bytes.iter().any(|&b| b == 0x1b || b == b'\r' || b == 0x07),
            "a control byte reached the terminal: {}",
            text(bytes)
        );
    }
    assert!(
        text(&out.stdout).contains("\\x1b[2J"),
        "escaped, not dropped: {}",
        text(&out.stdout)
    );
    // The record keeps the name as the bot sent it.
    let header = &record_lines(&dir.path().join("r.jsonl"))[0];
    assert!(header["seats"][0]["name"].as_str().unwrap().contains('\u{1b}'));
}

#[test]
fn a_missing_or_foreign_record_is_bad_input_for_pbm_and_audit() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("none.jsonl");
    let missing = missing.to_str().unwrap();
    for args in [
        vec!["pbm", "status", missing],
        vec!["pbm", "view", missing, "--seat", "1"],
        vec!["pbm", "play", missing, "--seat", "1", "c2-d3"],
        vec!["pbm", "resign", missing, "--seat", "1"],
        vec!["audit", missing, "--seat", "1", "--transcript", missing],
    ] {
        let out = referee_in(dir.path()).args(&args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", text(&out.stderr));
    }
    assert!(
        !dir.path().join("none.jsonl.lock").exists(),
        "no lock file for a missing record"
    );
    // A finished match record is not a play-by-mail game.
    let out = referee_in(dir.path())
        .args([
            "match", "--game", "telka", "--seed", "2", "-q", "--record", "m.jsonl",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    std::fs::write(dir.path().join("t.txt"), "").unwrap();
    for args in [
        vec!["pbm", "view", "m.jsonl", "--seat", "1"],
        vec!["pbm", "play", "m.jsonl", "--seat", "1", "c2-d3"],
        vec!["audit", "m.jsonl", "--seat", "1", "--transcript", "t.txt"],
    ] {
        let out = referee_in(dir.path()).args(&args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", text(&out.stderr));
        assert_eq!(text(&out.stderr).lines().count(), 1);
    }
}
