//! Helpers for the tests of `show`'s pictures and the HTML viewer (`cli_show_svg`,
//! `cli_show_html`, `viewer_browser`): playing a game into a record, running `show`
//! (and seeing it refuse bad input), and reading back the pictures a page stores
//! (src/picture/frames.rs says how).

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::Value;

use super::{referee_in, text};

/// Plays a match of `game` with `options` between built-in `fill` agents into
/// `<dir>/<game>.jsonl` and returns the record's path.
pub fn played(dir: &Path, game: &str, options: &[&str], fill: &str, seed: u64) -> PathBuf {
    let path = dir.join(format!("{game}.jsonl"));
    let mut cmd = referee_in(dir);
    cmd.args(["match", "--game", game, "--fill", fill, "-q"]);
    cmd.args(["--seed", &seed.to_string()]);
    for o in options {
        cmd.args(["-o", o]);
    }
    let out = cmd.arg("--record").arg(&path).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    path
}

/// `referee show RECORD` with `args`, run in the record's directory.
fn run_show(record: &Path, args: &[&str]) -> Output {
    referee_in(record.parent().unwrap())
        .arg("show")
        .arg(record)
        .args(args)
        .output()
        .unwrap()
}

/// `referee show RECORD` with `args`, which must succeed; its stdout.
pub fn show(record: &Path, args: &[&str]) -> String {
    let out = run_show(record, args);
    assert_eq!(out.status.code(), Some(0), "show {args:?}: {}", text(&out.stderr));
    text(&out.stdout)
}

/// `referee show RECORD` with `args`, which must be refused as a usage error: exit 2,
/// nothing on stdout, one line on stderr.
pub fn assert_show_refused(record: &Path, args: &[&str]) {
    let out = run_show(record, args);
    assert_eq!(out.status.code(), Some(2), "{args:?}");
    assert!(out.stdout.is_empty(), "{args:?} printed {}", text(&out.stdout));
    let err = text(&out.stderr);
    assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
}

/// The book of pictures inside a page: the JSON of its `data` script element.
pub fn book(html: &str) -> Value {
    let start = html
        .find("<script type=\"application/json\" id=\"data\">")
        .expect("a data element");
    let body = &html[start..];
    let body = &body[body.find('>').unwrap() + 1..body.find("</script>").unwrap()];
    serde_json::from_str(body).expect("the data element holds JSON")
}

/// Every picture of view `view` of `book`, rebuilt from its edits as the page does.
pub fn pictures(book: &Value, view: usize) -> Vec<String> {
    let lines: Vec<&str> = book["lines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l.as_str().unwrap())
        .collect();
    let mut prev: Vec<usize> = Vec::new();
    let mut out = Vec::new();
    for edits in book["views"][view]["frames"].as_array().unwrap() {
        let mut cur = Vec::new();
        for e in edits.as_array().unwrap() {
            match e {
                Value::Number(n) => cur.push(n.as_u64().unwrap() as usize),
                Value::Array(run) => {
                    let (start, len) = (
                        run[0].as_u64().unwrap() as usize,
                        run[1].as_u64().unwrap() as usize,
                    );
                    cur.extend_from_slice(&prev[start..start + len]);
                }
                other => panic!("not an edit: {other}"),
            }
        }
        let svg: Vec<&str> = cur.iter().map(|&n| lines[n]).collect();
        out.push(svg.join("\n") + "\n");
        prev = cur;
    }
    out
}

/// The seat of each view of `book` (`None`: omniscient).
pub fn view_seats(book: &Value) -> Vec<Option<u64>> {
    book["views"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["seat"].as_u64())
        .collect()
}
