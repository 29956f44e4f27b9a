//! `referee show --format html` read back without a browser: every picture a page
//! stores is the SVG `show --format svg` draws at that ply and view, byte for byte;
//! a seat's page holds nothing omniscient (no state string, no line only the
//! omniscient pictures draw); no page names an outside address; bad input is refused.
//! tests/viewer_browser.rs opens the pages in a browser.

mod cli_support;

use std::collections::HashSet;
use std::path::Path;

use cli_support::viewer::{assert_show_refused, book, pictures, played, show, view_seats};
use referee::record::{self, Line};
use tempfile::TempDir;

/// The page `show --format html` writes, with `args`.
fn html(rec: &Path, args: &[&str]) -> String {
    let mut all = vec!["--format", "html"];
    all.extend_from_slice(args);
    show(rec, &all)
}

/// `show --format svg` at `ply`, as `seat` saw it (`None`: omniscient).
fn svg_at(rec: &Path, ply: u64, seat: Option<u64>) -> String {
    let (ply, seat) = (ply.to_string(), seat.map(|s| s.to_string()));
    let mut args = vec!["--format", "svg", "--ply", &ply];
    if let Some(seat) = &seat {
        args.extend(["--seat", seat]);
    }
    show(rec, &args)
}

/// The plies of the page's pictures.
fn plies(book: &serde_json::Value) -> Vec<u64> {
    book["plies"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.as_u64().unwrap())
        .collect()
}

/// The first, second, a middle and the last ply of `plies`.
fn samples(plies: &[u64]) -> Vec<usize> {
    let n = plies.len();
    vec![0, 1, n / 2, n - 1]
}

/// Checks that every picture of `page` parses as XML and that the sampled ones are
/// exactly what `show --format svg` draws for the same ply and view.
fn assert_pictures_are_shows(rec: &Path, page: &str) {
    let book = book(page);
    let plies = plies(&book);
    for (v, seat) in view_seats(&book).into_iter().enumerate() {
        let pictures = pictures(&book, v);
        assert_eq!(pictures.len(), plies.len(), "one picture per ply in view {v}");
        for svg in &pictures {
            roxmltree::Document::parse(svg).unwrap_or_else(|e| panic!("not XML ({e}):\n{svg}"));
        }
        for k in samples(&plies) {
            assert_eq!(
                pictures[k],
                svg_at(rec, plies[k], seat),
                "ply {} seat {seat:?}",
                plies[k]
            );
        }
    }
}

#[test]
fn every_picture_of_a_page_is_the_svg_show_draws_at_that_ply_and_view() {
    let dir = TempDir::new().unwrap();
    let games: [(&str, &[&str], &str); 3] = [
        ("idoubtit", &[], "random"),
        ("telka", &["players=3", "max-plies=150"], "random"),
        ("multichess", &["players=3"], "greedy"),
    ];
    for (game, options, fill) in games {
        let rec = played(dir.path(), game, options, fill, 3);
        let page = html(&rec, &[]);
        let book = book(&page);
        let seats = view_seats(&book);
        let count = seats.len() - 1;
        let expected: Vec<Option<u64>> = std::iter::once(None)
            .chain((1..=count as u64).map(Some))
            .collect();
        assert_eq!(seats, expected, "{game}: omniscient, then every seat");
        assert_eq!(plies(&book).first(), Some(&0));
        assert_pictures_are_shows(&rec, &page);
        // The event list is the text `show`'s, line for line.
        let text = show(&rec, &[]);
        let events: Vec<&str> = book["views"][0]["events"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e[1].as_str().unwrap())
            .collect();
        let shown: Vec<&str> = text.lines().skip(1).take(events.len()).collect();
        assert_eq!(events, shown, "{game}");
        let players = text.lines().next().unwrap().split(" — ").nth(1).unwrap();
        for player in players.split(", ") {
            assert!(page.contains(&format!("<li>{player}</li>")), "{game}: {player}");
        }
        assert!(
            page.contains("<p id=\"result\">result: "),
            "{game}: the result is given"
        );
    }
}

/// The omniscient state strings of `rec` at every ply.
fn states(rec: &Path) -> Vec<String> {
    let replay = record::replay_file(rec).unwrap();
    let mut game = record::start_game(&replay.header).unwrap();
    let mut out = vec![game.state()];
    for line in &replay.lines {
        if let Line::Action(_) = line {
            record::step(game.as_mut(), line);
            out.push(game.state());
        }
    }
    out
}

/// `s` as it would be written inside the page's JSON data.
fn as_json(s: &str) -> String {
    let quoted = serde_json::to_string(s).unwrap().replace('<', "\\u003c");
    quoted[1..quoted.len() - 1].to_string()
}

#[test]
fn an_idoubtit_seat_page_holds_no_state_string_and_no_omniscient_line() {
    let dir = TempDir::new().unwrap();
    let rec = played(dir.path(), "idoubtit", &[], "random", 3);
    let states = states(&rec);
    for seat in [1u64, 2] {
        let page = html(&rec, &["--seat", &seat.to_string()]);
        let book = book(&page);
        assert_eq!(view_seats(&book), [Some(seat)], "the seat's view alone");
        assert_pictures_are_shows(&rec, &page);
        for ply in [10, 40, 80, states.len() - 1] {
            let state = &states[ply];
            assert!(
                !page.contains(state) && !page.contains(&as_json(state)),
                "state at ply {ply}"
            );
        }
        // Lines the omniscient picture draws and the seat's does not (the types it
        // cannot see, the title) are nowhere in the seat's page.
        let stored: HashSet<&str> = book["lines"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| l.as_str().unwrap())
            .collect();
        for ply in [32, 40, 60] {
            let omni = svg_at(&rec, ply, None);
            let own = svg_at(&rec, ply, Some(seat));
            let own: HashSet<&str> = own.lines().collect();
            let only: Vec<&str> = omni.lines().filter(|l| !own.contains(l)).collect();
            assert!(only.iter().any(|l| l.contains("omniscient")));
            assert!(
                only.len() > 2,
                "ply {ply}: the seat sees as much as the omniscient"
            );
            for line in only {
                assert!(!stored.contains(line), "seat {seat} page has `{line}`");
                assert!(!page.contains(&as_json(line)), "seat {seat} page has `{line}`");
            }
        }
        assert!(
            !page.contains("omniscient"),
            "seat {seat}'s page names no omniscient view"
        );
    }
}

#[test]
fn no_page_names_an_outside_address_or_loads_anything() {
    let dir = TempDir::new().unwrap();
    let rec = played(
        dir.path(),
        "multichess",
        &["players=3", "max-plies=60"],
        "random",
        2,
    );
    for args in [vec![], vec!["--seat", "2"]] {
        let page = html(&rec, &args);
        let rest = page.replace("http://www.w3.org/2000/svg", "");
        for banned in [
            "http://", "https://", "src=", "<link", "@import", "url(", "//cdn", "fetch(",
        ] {
            assert!(!rest.contains(banned), "{args:?}: `{banned}`");
        }
        assert!(page.contains("Content-Security-Policy\" content=\"default-src 'none'"));
        assert_eq!(
            page.matches("<script").count(),
            2,
            "the data and the viewer, inline"
        );
    }
}

#[test]
fn bad_html_requests_are_one_line_usage_errors_with_nothing_on_stdout() {
    let dir = TempDir::new().unwrap();
    let rec = played(dir.path(), "pegchow", &["max-plies=30"], "random", 1);
    for args in [
        vec!["--format", "html", "--ply", "3"],
        vec!["--format", "html", "--seat", "3"],
        vec!["--format", "html", "--seat", "0"],
        vec!["--format", "htm"],
    ] {
        assert_show_refused(&rec, &args);
    }
}
