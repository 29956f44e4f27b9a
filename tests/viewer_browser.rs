//! The HTML viewer in a real browser: headless Chromium opens a page at a ply and a
//! seat (`#ply=K&seat=N`), and the DOM it ends with is checked against `show
//! --format svg` at the same ply and seat (the same pieces, the same `?` where the
//! seat does not know a type, the event of that ply highlighted); a screenshot is
//! checked to be a real picture. Skips, saying so, where no Chromium is installed
//! (`.ci/run` installs it).

mod cli_support;

use std::path::{Path, PathBuf};
use std::time::Duration;

use cli_support::viewer::{book, played, show};
use roxmltree::{Document, Node};
use tempfile::TempDir;

/// The browser's name on the command line, by distribution.
const BROWSERS: [&str; 3] = ["chromium", "chromium-browser", "google-chrome"];

/// The browser to run, or `None` (and a printed reason) where there is none.
fn browser() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    let found = BROWSERS
        .iter()
        .flat_map(|b| std::env::split_paths(&path).map(move |d| d.join(b)))
        .find(|p| p.is_file());
    if found.is_none() {
        eprintln!(
            "note: skipping a browser test: no {} on PATH (install chromium)",
            BROWSERS.join(" or ")
        );
    }
    found
}

/// Runs headless `browser` on `page` opened at `fragment` with `args`; its stdout.
fn run(browser: &Path, profile: &Path, page: &Path, fragment: &str, args: &[&str]) -> String {
    let url = format!("file://{}#{fragment}", page.display());
    let out = assert_cmd::Command::new(browser)
        .args(["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run"])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(args)
        .arg(url)
        .timeout(Duration::from_secs(120))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The `<svg>` the page put into `#board`, from the DOM the browser dumped.
fn board(dom: &str) -> String {
    let start = dom.find("<div id=\"board\">").expect("a board") + "<div id=\"board\">".len();
    let end = start + dom[start..].find("</svg>").expect("a picture on the board") + "</svg>".len();
    dom[start..end].replace("&nbsp;", "\u{a0}")
}

/// Each piece of `svg` (on the board or a bench) as its class, text and disc colour.
fn pieces(svg: &str) -> Vec<(String, String, String)> {
    let doc = Document::parse(svg).unwrap_or_else(|e| panic!("not XML ({e}):\n{svg}"));
    let is_piece = |n: &Node| {
        n.attribute("class")
            .is_some_and(|c| c.split_whitespace().any(|w| w == "piece" || w == "bench-piece"))
    };
    doc.descendants()
        .filter(is_piece)
        .map(|n| {
            let text: String = n
                .descendants()
                .filter(|d| d.is_text())
                .filter_map(|d| d.text())
                .collect();
            let disc = n.descendants().find(|d| d.has_tag_name("circle"));
            let fill = disc.and_then(|d| d.attribute("fill")).unwrap_or("");
            (
                n.attribute("class").unwrap().to_string(),
                text.trim().to_string(),
                fill.to_string(),
            )
        })
        .collect()
}

/// The `data-frame` of every highlighted event line.
fn highlighted(dom: &str) -> Vec<usize> {
    dom.split("<li ")
        .skip(1)
        .filter(|li| li.split('>').next().unwrap().contains("class=\"current\""))
        .map(|li| {
            li.split("data-frame=\"")
                .nth(1)
                .unwrap()
                .split('"')
                .next()
                .unwrap()
                .parse()
                .unwrap()
        })
        .collect()
}

#[test]
fn the_browser_shows_each_ply_and_seat_as_show_draws_it_and_hides_what_the_seat_did_not_see() {
    let Some(chromium) = browser() else { return };
    let dir = TempDir::new().unwrap();
    let rec = played(dir.path(), "idoubtit", &[], "random", 3);
    let full = dir.path().join("game.html");
    std::fs::write(&full, show(&rec, &["--format", "html"])).unwrap();
    let mine = dir.path().join("seat2.html");
    std::fs::write(&mine, show(&rec, &["--format", "html", "--seat", "2"])).unwrap();
    let last = book(&std::fs::read_to_string(&full).unwrap())["plies"]
        .as_array()
        .unwrap()
        .len()
        - 1;
    let profile = dir.path().join("profile");
    let cases = [
        (&full, 0, None),
        (&full, 40, None),
        (&full, 40, Some(1)),
        (&full, 60, Some(2)),
        (&full, last, Some(1)),
        (&mine, 60, Some(2)),
        (&mine, last, Some(2)),
    ];
    for (page, ply, seat) in cases {
        let fragment = match seat {
            Some(s) => format!("ply={ply}&seat={s}"),
            None => format!("ply={ply}"),
        };
        let dom = run(&chromium, &profile, page, &fragment, &["--dump-dom"]);
        assert!(
            dom.contains(&format!("<span id=\"plyno\">ply {ply}</span>")),
            "{fragment}"
        );
        let mut args = vec![
            "--format".to_string(),
            "svg".into(),
            "--ply".into(),
            ply.to_string(),
        ];
        args.extend(seat.iter().flat_map(|s| ["--seat".to_string(), s.to_string()]));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let drawn = show(&rec, &args);
        let shown = pieces(&board(&dom));
        assert_eq!(
            shown,
            pieces(&drawn),
            "{fragment}: the pieces show --format svg draws"
        );
        assert_eq!(
            board(&dom).matches("class=\"piece").count(),
            drawn.matches("class=\"piece").count(),
            "{fragment}"
        );
        // Seat 1 plays White: Black's discs are black; seat 2's opponent is White.
        let theirs = match seat {
            Some(1) => Some("#000000"),
            Some(_) => Some("#FFFFFF"),
            None => None,
        };
        if let Some(theirs) = theirs {
            let hidden: Vec<_> = shown.iter().filter(|p| p.2 == theirs).collect();
            assert!(!hidden.is_empty(), "{fragment}: the opponent has pieces");
            for (class, text, _) in hidden {
                assert_eq!(text, "?", "{fragment}: an opponent's type is shown ({class})");
            }
        } else {
            assert!(
                shown.iter().all(|p| p.1 != "?"),
                "the omniscient view knows every type"
            );
        }
        let lit = highlighted(&dom);
        assert_eq!(lit.is_empty(), ply == 0, "{fragment}: {lit:?}");
        assert!(lit.iter().all(|&f| f == ply), "{fragment}: {lit:?}");
    }
}

#[test]
fn a_screenshot_of_the_viewer_is_a_picture_of_the_asked_size_and_not_blank() {
    let Some(chromium) = browser() else { return };
    let dir = TempDir::new().unwrap();
    let rec = played(dir.path(), "telka", &["max-plies=60"], "random", 2);
    let page = dir.path().join("game.html");
    std::fs::write(&page, show(&rec, &["--format", "html"])).unwrap();
    let shot = dir.path().join("shot.png");
    let profile = dir.path().join("profile");
    let shot_arg = format!("--screenshot={}", shot.display());
    run(
        &chromium,
        &profile,
        &page,
        "ply=30&seat=1",
        &[&shot_arg, "--window-size=1200,900"],
    );
    let bytes = std::fs::read(&shot).unwrap();
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "a PNG file");
    let decoder = png::Decoder::new(std::io::Cursor::new(bytes));
    let mut reader = decoder.read_info().unwrap();
    let mut pixels = vec![0; reader.output_buffer_size().unwrap()];
    let frame = reader.next_frame(&mut pixels).unwrap();
    assert_eq!((frame.width, frame.height), (1200, 900));
    let channels = frame.color_type.samples();
    let pixels = &pixels[..frame.buffer_size()];
    let mut counts = std::collections::HashMap::new();
    for px in pixels.chunks(channels) {
        *counts.entry(px.to_vec()).or_insert(0usize) += 1;
    }
    let total = pixels.len() / channels;
    let commonest = counts.values().max().copied().unwrap_or(0);
    assert!(counts.len() > 16, "only {} colours", counts.len());
    assert!(
        commonest < total * 95 / 100,
        "one colour covers {commonest} of {total} pixels"
    );
}

/// What the script added to a page does: keys pressed, the slider moved and the
/// view changed, each result written down on `<body>` for the dumped DOM to show.
const STEPS: &str = r#"<script>
(function () {
  var seen = [];
  function key(k) { document.dispatchEvent(new KeyboardEvent("keydown", { key: k, bubbles: true })); }
  function note() { seen.push(document.getElementById("plyno").textContent); }
  key("ArrowRight"); key("ArrowRight"); key("ArrowRight"); note();
  key("ArrowLeft"); note();
  key("End"); note();
  key("Home"); note();
  var slider = document.getElementById("slider");
  slider.value = "7"; slider.dispatchEvent(new Event("input")); note();
  var view = document.getElementById("view");
  view.value = "0"; view.dispatchEvent(new Event("change")); note();
  document.body.dataset.steps = seen.join(",");
})();
</script>
"#;

#[test]
fn arrow_keys_home_end_the_slider_and_the_view_list_step_through_the_game() {
    let Some(chromium) = browser() else { return };
    let dir = TempDir::new().unwrap();
    let rec = played(dir.path(), "idoubtit", &["max-plies=60"], "random", 4);
    let html = show(&rec, &["--format", "html"]);
    let last = book(&html)["plies"].as_array().unwrap().len() - 1;
    // The page's policy allows inline scripts, so one added at the end runs after
    // the viewer's, as a reader's key presses would.
    let page = dir.path().join("steps.html");
    std::fs::write(&page, html.replace("</body>", &format!("{STEPS}</body>"))).unwrap();
    let profile = dir.path().join("profile");
    let dom = run(&chromium, &profile, &page, "ply=10&seat=2", &["--dump-dom"]);
    let steps = dom
        .split("data-steps=\"")
        .nth(1)
        .expect("the steps ran")
        .split('"')
        .next()
        .unwrap();
    assert_eq!(steps, format!("ply 13,ply 12,ply {last},ply 0,ply 7,ply 7"));
    // The last step chose the first view, the omniscient one, at the same ply.
    assert!(board(&dom).contains("ply 7 · omniscient"), "{}", board(&dom));
}

#[test]
fn a_multichess_seat_page_in_the_browser_has_fog_where_show_draws_it() {
    let Some(chromium) = browser() else { return };
    let dir = TempDir::new().unwrap();
    let rec = played(
        dir.path(),
        "multichess",
        &["players=3", "max-plies=60"],
        "greedy",
        3,
    );
    let page = dir.path().join("seat3.html");
    std::fs::write(&page, show(&rec, &["--format", "html", "--seat", "3"])).unwrap();
    let profile = dir.path().join("profile");
    for ply in [0, 20, 45] {
        let dom = run(
            &chromium,
            &profile,
            &page,
            &format!("ply={ply}&seat=3"),
            &["--dump-dom"],
        );
        let drawn = show(
            &rec,
            &["--format", "svg", "--ply", &ply.to_string(), "--seat", "3"],
        );
        let shown = board(&dom);
        assert_eq!(pieces(&shown), pieces(&drawn), "ply {ply}");
        let fog = |svg: &str| svg.matches("class=\"fog\"").count();
        assert!(fog(&shown) > 0, "ply {ply}: seat 3 sees everything");
        assert_eq!(fog(&shown), fog(&drawn), "ply {ply}: fog where show draws it");
    }
}
