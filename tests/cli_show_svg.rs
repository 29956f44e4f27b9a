//! `referee show --format svg` end to end: records of all four games played by the
//! built-in agents, each picture read back as XML, its pieces counted against the
//! text `show` of the same ply, what a seat's picture hides compared with the
//! omniscient one, and bad input refused with a usage error.

mod cli_support;

use std::path::Path;

use cli_support::viewer::{assert_show_refused, played, show};
use roxmltree::{Document, Node};
use tempfile::TempDir;

/// The SVG of `show --format svg` with `args`, checked to be well-formed XML whose
/// root is an `svg` with a `viewBox` and no fixed size.
fn svg(record: &Path, args: &[&str]) -> String {
    let mut all = vec!["--format", "svg"];
    all.extend_from_slice(args);
    let body = show(record, &all);
    let doc = Document::parse(&body).unwrap_or_else(|e| panic!("not XML ({e}):\n{body}"));
    let root = doc.root_element();
    assert_eq!(root.tag_name().name(), "svg");
    assert_eq!(root.tag_name().namespace(), Some("http://www.w3.org/2000/svg"));
    assert!(root.attribute("viewBox").is_some(), "no viewBox");
    assert!(root.attribute("width").is_none() && root.attribute("height").is_none());
    body
}

/// Whether `node` has `class` among its classes.
fn has_class(node: &Node, class: &str) -> bool {
    node.attribute("class")
        .is_some_and(|c| c.split_whitespace().any(|w| w == class))
}

/// The elements of class `class`.
fn of_class<'a>(doc: &'a Document, class: &str) -> Vec<Node<'a, 'a>> {
    doc.descendants().filter(|n| has_class(n, class)).collect()
}

/// All the text inside `node`, without the line breaks between elements.
fn inner_text(node: &Node) -> String {
    let all: String = node
        .descendants()
        .filter(|n| n.is_text())
        .filter_map(|n| n.text())
        .collect();
    all.trim().to_string()
}

/// The rows of the text diagram: lines that start with a rank number, without it.
fn diagram_rows(text: &str) -> Vec<Vec<String>> {
    let board = text.split("\n\n").nth(1).expect("a diagram after the actions");
    board
        .lines()
        .filter_map(|l| {
            let mut words = l.split_whitespace();
            words.next()?.parse::<u32>().ok()?;
            // I-Doubt-It pieces carry their marks (`P'^`): the piece is what is left.
            Some(
                words
                    .map(|w| w.trim_end_matches(['\'', '^', '_']).to_string())
                    .collect(),
            )
        })
        .collect()
}

/// The ply of the first action line of the omniscient text whose events contain
/// `needle`.
fn ply_with(text: &str, needle: &str) -> u32 {
    let line = text
        .lines()
        .find(|l| l.contains('[') && l.contains(needle))
        .unwrap_or_else(|| panic!("no ply with `{needle}`"));
    line.trim().split('.').next().unwrap().parse().unwrap()
}

/// Checks the title: `<title>` and a visible text, both naming the game, the ply
/// and whose view it is.
fn assert_title(body: &str, game: &str, ply: u32, whose: &str) {
    let doc = Document::parse(body).unwrap();
    let title = doc
        .descendants()
        .find(|n| n.has_tag_name("title"))
        .map(|n| inner_text(&n))
        .expect("a <title>");
    for part in [game, &format!("ply {ply}"), whose] {
        assert!(title.contains(part), "title `{title}` lacks `{part}`");
    }
    let visible = doc.descendants().filter(|n| n.has_tag_name("text"));
    assert!(
        visible.map(|n| inner_text(&n)).any(|t| t == title),
        "the title is not drawn"
    );
}

#[test]
fn telka_and_peg_chow_pictures_count_every_counter_and_draw_the_last_move() {
    let dir = TempDir::new().unwrap();
    for game in ["telka", "pegchow"] {
        let rec = played(dir.path(), game, &["players=4"], "random", 7);
        for ply in ["0", "9", "40"] {
            let body = svg(&rec, &["--ply", ply]);
            let doc = Document::parse(&body).unwrap();
            let counters: usize = diagram_rows(&show(&rec, &["--ply", ply]))
                .iter()
                .flatten()
                .filter(|w| ["B", "Y", "R", "G"].contains(&w.as_str()))
                .count();
            assert_eq!(of_class(&doc, "piece").len(), counters, "{game} ply {ply}");
            assert_eq!(of_class(&doc, "home").len(), 48, "four homes of 12 points");
            assert_eq!(of_class(&doc, "danger").len(), 73, "the Danger Territory");
            assert_eq!(of_class(&doc, "last-move-path").len(), usize::from(ply != "0"));
            let name = if game == "telka" { "Telka" } else { "Peg Chow" };
            let ply: u32 = ply.parse().unwrap();
            assert_title(&body, name, ply, "omniscient");
            let seat_body = svg(&rec, &["--ply", &ply.to_string(), "--seat", "1"]);
            assert_title(&seat_body, name, ply, "seat 1's view (Blue)");
        }
    }
}

#[test]
fn a_telka_capture_is_crossed_out_and_the_path_passes_every_landing_point() {
    let dir = TempDir::new().unwrap();
    let rec = played(dir.path(), "telka", &[], "random", 3);
    let all = show(&rec, &[]);
    let ply = ply_with(&all, " capture ");
    let line = all
        .lines()
        .find(|l| l.trim().starts_with(&format!("{ply}. ")))
        .unwrap();
    let event = line.split('[').nth(1).unwrap().trim_end_matches(']');
    let words: Vec<&str> = event.split(' ').collect();
    let landings = words[2].split('-').count();
    let captures = words.len() - 4;
    let body = svg(&rec, &["--ply", &ply.to_string()]);
    let doc = Document::parse(&body).unwrap();
    assert_eq!(of_class(&doc, "captured").len(), captures, "{event}");
    let path = &of_class(&doc, "last-move-path")[0];
    let d = path.attribute("d").unwrap();
    assert_eq!(d.matches(['M', 'L']).count(), landings, "{d} for {event}");
    assert!(body.contains(event), "the last ply's events are written out");
}

#[test]
fn idoubtit_seat_pictures_show_question_marks_where_the_omniscient_shows_types() {
    let dir = TempDir::new().unwrap();
    let rec = played(dir.path(), "idoubtit", &[], "random", 3);
    for ply in ["32", "40", "60"] {
        let omni = svg(&rec, &["--ply", ply]);
        let omni = Document::parse(&omni).unwrap();
        let omni_pieces = of_class(&omni, "piece");
        let on_board = diagram_rows(&show(&rec, &["--ply", ply]))
            .iter()
            .flatten()
            .filter(|w| *w != ".")
            .count();
        assert_eq!(omni_pieces.len(), on_board, "ply {ply}");
        assert!(
            omni_pieces.iter().all(|p| inner_text(p) != "?"),
            "the omniscient view knows every type"
        );
        for (seat, hidden_disc) in [("1", "#000000"), ("2", "#FFFFFF")] {
            let text = show(&rec, &["--ply", ply, "--seat", seat]);
            let body = svg(&rec, &["--ply", ply, "--seat", seat]);
            let doc = Document::parse(&body).unwrap();
            let pieces = of_class(&doc, "piece");
            assert_eq!(pieces.len(), omni_pieces.len(), "the same pieces, seen or not");
            let hidden_in_text = diagram_rows(&text)
                .iter()
                .flatten()
                .filter(|w| *w == "X" || *w == "x")
                .count();
            let unknown: Vec<&Node> = pieces.iter().filter(|p| inner_text(p) == "?").collect();
            assert!(!unknown.is_empty(), "seat {seat} at ply {ply} sees no `?`");
            assert_eq!(unknown.len(), hidden_in_text, "as many `?` as the text's X");
            for p in &pieces {
                let disc = p.descendants().find(|n| n.has_tag_name("circle")).unwrap();
                if disc.attribute("fill") == Some(hidden_disc) {
                    assert_eq!(inner_text(p), "?", "seat {seat} sees an opponent's type");
                    assert!(has_class(p, "unknown"));
                }
            }
            assert_same_but_position(&unknown);
            // Where the seat sees a `?`, the omniscient picture has a real type.
            let omni_at = |xy: (&str, &str)| {
                omni_pieces
                    .iter()
                    .find(|p| centre(p) == xy)
                    .map(inner_text)
                    .unwrap_or_else(|| panic!("no omniscient piece at {xy:?}"))
            };
            for p in &pieces {
                let known = omni_at(centre(p));
                if inner_text(p) == "?" {
                    assert_ne!(known, "?");
                } else {
                    assert_eq!(inner_text(p), known, "a type the seat sees is the true one");
                }
            }
        }
    }
}

/// Where a piece's disc is drawn.
fn centre<'a>(piece: &Node<'a, 'a>) -> (&'a str, &'a str) {
    let disc = piece.descendants().find(|n| n.has_tag_name("circle")).unwrap();
    (disc.attribute("cx").unwrap(), disc.attribute("cy").unwrap())
}

/// Every hidden piece is written alike but for where it stands: no attribute, id or
/// text tells one from another.
fn assert_same_but_position(pieces: &[&Node]) {
    let shape = |p: &Node| -> Vec<String> {
        p.descendants()
            .map(|n| {
                let attrs: Vec<String> = n
                    .attributes()
                    .filter(|a| !["x", "y", "cx", "cy"].contains(&a.name()))
                    .map(|a| format!("{}={}", a.name(), a.value()))
                    .collect();
                format!(
                    "{}:{}:{}",
                    n.tag_name().name(),
                    attrs.join(","),
                    n.text().unwrap_or("")
                )
            })
            .collect()
    };
    let shapes: std::collections::BTreeSet<Vec<String>> = pieces.iter().map(|p| shape(p)).collect();
    assert_eq!(shapes.len(), 1, "hidden pieces differ: {shapes:?}");
}

#[test]
fn multichess_pictures_count_pieces_fog_unseen_squares_and_mark_the_eliminated() {
    let dir = TempDir::new().unwrap();
    let rec = played(dir.path(), "multichess", &["players=3"], "greedy", 3);
    let all = show(&rec, &[]);
    let out_ply = ply_with(&all, "eliminate ");
    let gone = all
        .lines()
        .find(|l| l.trim().starts_with(&format!("{out_ply}. ")))
        .and_then(|l| l.split("eliminate ").nth(1))
        .and_then(|w| w.split(' ').next())
        .unwrap()
        .to_string();
    for ply in ["0".to_string(), "20".to_string(), out_ply.to_string()] {
        let count = |text: &str, what: &dyn Fn(&str) -> bool| {
            diagram_rows(text).iter().flatten().filter(|w| what(w)).count()
        };
        let is_piece = |w: &str| w.len() == 2 && w.as_bytes()[1].is_ascii_digit();
        let text = show(&rec, &["--ply", &ply]);
        let omni = svg(&rec, &["--ply", &ply]);
        let doc = Document::parse(&omni).unwrap();
        assert_eq!(
            of_class(&doc, "piece").len(),
            count(&text, &is_piece),
            "ply {ply}"
        );
        assert!(
            of_class(&doc, "fog").is_empty(),
            "the omniscient picture has no fog"
        );
        assert_eq!(
            of_class(&doc, "joint").len(),
            3,
            "every private area hangs off the public one"
        );
        for seat in ["1", "2", "3"] {
            let text = show(&rec, &["--ply", &ply, "--seat", seat]);
            let body = svg(&rec, &["--ply", &ply, "--seat", seat]);
            let doc = Document::parse(&body).unwrap();
            assert_eq!(
                of_class(&doc, "piece").len(),
                count(&text, &is_piece),
                "seat {seat} ply {ply}"
            );
            let fog = of_class(&doc, "fog").len();
            assert_eq!(fog, count(&text, &|w| w == "?"), "seat {seat} ply {ply}");
            assert!(fog > 0, "seat {seat} sees everything at ply {ply}");
        }
    }
    let body = svg(&rec, &["--ply", &out_ply.to_string(), "--seat", "1"]);
    assert!(body.contains(&format!("out of the game: seat {gone}")), "{body}");
    let doc = Document::parse(&body).unwrap();
    let bands: Vec<String> = doc
        .descendants()
        .filter(|n| n.has_tag_name("text"))
        .map(|n| inner_text(&n))
        .filter(|t| t.starts_with("area "))
        .collect();
    assert!(
        bands
            .iter()
            .any(|b| b.starts_with(&format!("area {gone} ")) && b.contains("OUT")),
        "{bands:?}"
    );
    assert_eq!(bands.iter().filter(|b| b.contains("OUT")).count(), 1, "{bands:?}");
}

#[test]
fn bad_input_is_a_one_line_usage_error_with_nothing_on_stdout() {
    let dir = TempDir::new().unwrap();
    let rec = played(dir.path(), "idoubtit", &["max-plies=60"], "random", 1);
    for args in [
        vec!["--format", "svg", "--ply", "100000"],
        vec!["--format", "svg", "--seat", "0"],
        vec!["--format", "svg", "--seat", "3"],
        vec!["--format", "png"],
        vec!["--format", ""],
    ] {
        assert_show_refused(&rec, &args);
    }
}

#[test]
fn text_stays_the_default_format() {
    let dir = TempDir::new().unwrap();
    let rec = played(dir.path(), "pegchow", &[], "random", 2);
    let plain = show(&rec, &["--ply", "5"]);
    assert_eq!(show(&rec, &["--ply", "5", "--format", "text"]), plain);
    assert!(!plain.contains("<svg"));
}

/// The text diagram's line of the benches (`benches: White 1 P'^, 2 P'^; Black
/// empty`).
fn benches_line(text: &str) -> &str {
    text.lines()
        .find(|l| l.starts_with("benches: "))
        .expect("a line of the benches")
}

/// The pieces on the two benches of the text diagram: one letter per piece.
fn bench_counts(text: &str) -> (usize, usize) {
    let line = benches_line(text).trim_start_matches("benches: ");
    let (white, black) = line.split_once("; ").expect("both sides");
    let count = |side: &str, slots: &str| {
        let slots = slots.strip_prefix(side).expect("the side named").trim();
        if slots == "empty" {
            0
        } else {
            slots.chars().filter(char::is_ascii_alphabetic).count()
        }
    };
    (count("White", white), count("Black", black))
}

#[test]
fn shogi_benches_hold_their_pieces_in_slots_and_hide_what_a_seat_may_not_see() {
    let dir = TempDir::new().unwrap();
    // Variant 9: the shogi board with drops, captured types revealed to the captor.
    let rec = played(dir.path(), "idoubtit", &["variant=9"], "random", 5);
    // A drop from a bench is drawn as the last move, for the seat that made it too.
    let drop = ply_with(&show(&rec, &[]), "[drop ").to_string();
    for seat in [vec![], vec!["--seat", "1"], vec!["--seat", "2"]] {
        let mut args = vec!["--ply", &drop];
        args.extend(seat);
        let doc = svg(&rec, &args);
        let doc = Document::parse(&doc).unwrap();
        assert_eq!(of_class(&doc, "last-move").len(), 1, "{args:?}");
    }
    for ply in ["60", "90"] {
        for seat in [None, Some("1"), Some("2")] {
            let mut args = vec!["--ply", ply];
            args.extend(seat.iter().flat_map(|s| ["--seat", *s]));
            let text = show(&rec, &args);
            let body = svg(&rec, &args);
            let doc = Document::parse(&body).unwrap();
            let (white, black) = bench_counts(&text);
            let bench = of_class(&doc, "bench-piece");
            assert_eq!(bench.len(), white + black, "{args:?}");
            assert!(
                ply != "90" || white + black > 0,
                "this game has captured by ply 90"
            );
            let hidden = |w: &String| w == "X" || w == "x";
            let hidden_text = diagram_rows(&text).iter().flatten().filter(|w| hidden(w)).count();
            let hidden_bench = benches_line(&text)
                .chars()
                .filter(|c| *c == 'X' || *c == 'x')
                .count();
            let unknown = of_class(&doc, "unknown").len();
            assert_eq!(unknown, hidden_text + hidden_bench, "{args:?}");
            if seat.is_none() {
                assert_eq!(unknown, 0, "the omniscient picture knows every type");
            }
            // Every bench piece has its slot number under it, 1, 2, … per bench.
            let slots: Vec<String> = doc
                .descendants()
                .filter(|n| n.has_tag_name("text") && n.attribute("font-size") == Some("11"))
                .map(|n| inner_text(&n))
                .collect();
            let expected: Vec<String> = (1..=white).chain(1..=black).map(|k| k.to_string()).collect();
            assert_eq!(slots, expected, "{args:?}");
        }
    }
}
