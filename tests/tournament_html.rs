//! The pages a finished tournament leaves in `--out`: `index.html` with the
//! standings and every game (players, result, a link to its viewer and its record),
//! each `games/game-NNNNN.html` a viewer of that game, every text escaped, and the
//! game pages kept, not redrawn, when a resumed run has nothing new.

mod cli_support;

use std::path::Path;

use cli_support::viewer::{book, pictures, view_seats};
use cli_support::*;
use tempfile::TempDir;

/// An entrant name that would be markup if it were not escaped.
const NAME: &str = "<b>&x";

/// Runs `referee tournament` in `dir` with `args`, which must succeed.
fn tournament(dir: &Path, args: &[&str]) -> String {
    let out = referee_in(dir).arg("tournament").args(args).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{args:?}: {}", text(&out.stderr));
    text(&out.stdout)
}

/// `s` as the page writes text.
fn escaped(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

/// Finds the `<tr>…</tr>` rows of the table with `id`.
fn rows<'a>(page: &'a str, id: &str) -> Vec<&'a str> {
    let table = page
        .split(&format!("<table id=\"{id}\">"))
        .nth(1)
        .expect("the table");
    let table = table.split("</table>").next().unwrap();
    table.lines().filter(|l| l.starts_with("<tr><td")).collect()
}

#[test]
fn a_finished_tournament_indexes_its_standings_and_games_each_with_a_viewer() {
    let dir = TempDir::new().unwrap();
    let entrant = shell_words::join([format!("name={NAME}"), "cmd=builtin:random".to_string()]);
    let args = [
        "--game",
        "telka",
        "-o",
        "max-plies=60",
        "--agent",
        &entrant,
        "--agent",
        "builtin:greedy",
        "--games",
        "4",
        "--out",
        "t",
    ];
    let stdout = tournament(dir.path(), &args);
    assert!(stdout.contains("pages: t/index.html"), "{stdout}");
    let out = dir.path().join("t");
    let index = std::fs::read_to_string(out.join("index.html")).unwrap();
    assert!(!index.contains(NAME), "the entrant name is escaped");
    assert!(index.contains("&lt;b&gt;&amp;x"));
    let rest = index.replace("http://www.w3.org/2000/svg", "");
    assert!(!rest.contains("http://") && !rest.contains("https://"));
    let standings = rows(&index, "standings");
    assert_eq!(standings.len(), 2, "one row per entrant");
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    let best = summary["standings"][0]["name"].as_str().unwrap();
    assert!(
        standings[0].contains(&format!("<td>{}</td>", escaped(best))),
        "best first"
    );
    let games = rows(&index, "games");
    assert_eq!(games.len(), 4, "one row per game");
    for (i, row) in games.iter().enumerate() {
        let page = format!("game-{i:05}.html");
        assert!(row.contains(&format!("href=\"games/{page}\"")), "{row}");
        assert!(
            row.contains(&format!("href=\"games/game-{i:05}.jsonl\"")),
            "{row}"
        );
        assert!(row.contains("1 Blue: ") && row.contains("2 Red: "), "{row}");
        let rec = out.join("games").join(format!("game-{i:05}.jsonl"));
        let result = cli_support::viewer::show(&rec, &[]);
        let result = result.lines().last().unwrap().trim_start_matches("result: ");
        assert!(row.contains(&escaped(result)), "{row} lacks {result}");
        let viewer = std::fs::read_to_string(out.join("games").join(&page)).unwrap();
        let book = book(&viewer);
        assert_eq!(view_seats(&book), [None, Some(1), Some(2)]);
        let last = pictures(&book, 0).pop().unwrap();
        let plies = book["plies"]
            .as_array()
            .unwrap()
            .last()
            .unwrap()
            .as_u64()
            .unwrap();
        assert_eq!(
            last,
            cli_support::viewer::show(&rec, &["--format", "svg", "--ply", &plies.to_string()])
        );
    }
    // Resumed with nothing left to play: the index is written again, the game pages
    // (newer than their records) are kept as they are.
    let page = out.join("games/game-00000.html");
    let before = std::fs::metadata(&page).unwrap().modified().unwrap();
    tournament(dir.path(), &["--resume", "--out", "t"]);
    assert_eq!(std::fs::metadata(&page).unwrap().modified().unwrap(), before);
    assert!(out.join("index.html").exists());
}

#[test]
fn pages_that_cannot_be_written_fail_the_run_after_the_table_is_printed() {
    let dir = TempDir::new().unwrap();
    let args = [
        "--game",
        "pegchow",
        "-o",
        "max-plies=30",
        "--agent",
        "builtin:random",
        "--agent",
        "builtin:greedy",
        "--games",
        "2",
        "--out",
        "t",
    ];
    tournament(dir.path(), &args);
    let out = dir.path().join("t");
    std::fs::remove_file(out.join("index.html")).unwrap();
    std::fs::create_dir(out.join("index.html")).unwrap();
    let run = referee_in(dir.path())
        .args(["tournament", "--resume", "--out", "t"])
        .output()
        .unwrap();
    assert_eq!(run.status.code(), Some(1));
    let (stdout, stderr) = (text(&run.stdout), text(&run.stderr));
    assert!(
        stdout.contains("records: ") && !stdout.contains("pages: "),
        "{stdout}"
    );
    assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
    assert!(stderr.contains("index.html"), "{stderr}");
    let left: Vec<String> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".new"))
        .collect();
    assert!(left.is_empty(), "temporary files left: {left:?}");
}

#[test]
fn pages_index_writes_the_index_alone_and_pages_none_writes_no_page() {
    let dir = TempDir::new().unwrap();
    let run = |out: &str, pages: &str| {
        let args = [
            "--game",
            "telka",
            "-o",
            "max-plies=20",
            "--agent",
            "builtin:random",
            "--agent",
            "builtin:greedy",
            "--games",
            "2",
            "--sandbox",
            "none",
            "--pages",
            pages,
            "--out",
            out,
        ];
        tournament(dir.path(), &args)
    };
    let html_games = |out: &str| -> Vec<String> {
        std::fs::read_dir(dir.path().join(out).join("games"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".html"))
            .collect()
    };

    let stdout = run("i", "index");
    assert!(stdout.contains("pages: i/index.html"), "{stdout}");
    assert!(html_games("i").is_empty(), "no game page: {:?}", html_games("i"));
    let index = std::fs::read_to_string(dir.path().join("i/index.html")).unwrap();
    let games = rows(&index, "games");
    assert_eq!(games.len(), 2, "one row per game");
    for (i, row) in games.iter().enumerate() {
        assert!(
            row.contains(&format!("href=\"games/game-{i:05}.jsonl\"")),
            "{row}"
        );
        assert!(
            !row.contains(".html") && !row.contains(">view<"),
            "no viewer linked: {row}"
        );
    }

    // Resumed with nothing left to play but with every page: the viewers are drawn
    // and linked.
    tournament(dir.path(), &["--resume", "--out", "i", "--pages", "all"]);
    assert_eq!(html_games("i").len(), 2, "{:?}", html_games("i"));
    let index = std::fs::read_to_string(dir.path().join("i/index.html")).unwrap();
    assert!(
        rows(&index, "games").iter().all(|r| r.contains(">view<")),
        "{index}"
    );

    let stdout = run("n", "none");
    assert!(!stdout.contains("pages:"), "{stdout}");
    assert!(stdout.contains("records: n/games"), "{stdout}");
    assert!(!dir.path().join("n/index.html").exists());
    assert!(html_games("n").is_empty());
    assert!(dir.path().join("n/summary.json").exists());
    // No page is written, so a place where the index cannot be written is no failure.
    std::fs::create_dir(dir.path().join("n/index.html")).unwrap();
    tournament(dir.path(), &["--resume", "--out", "n", "--pages", "none"]);

    let out = referee_in(dir.path())
        .args([
            "tournament",
            "--game",
            "telka",
            "--agent",
            "builtin:random",
            "--pages",
            "some",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert_eq!(text(&out.stderr).lines().count(), 1, "{}", text(&out.stderr));
}
