//! The pages a finished tournament leaves in its `--out` directory: `index.html`
//! (the standings and every game with its players and result) and, beside each
//! record, `games/game-NNNNN.html`, the viewer of that game (as `show --format html`
//! writes it: omniscient and every seat's view).
//!
//! The game pages are written when the tournament ends rather than made on demand:
//! the directory then stands alone (it can be copied, zipped or served by any static
//! file server, and opened without a referee), and the cost is paid once, after the
//! last game, not while games are timed. A page already newer than its record is
//! kept, so a resumed tournament draws only its new games.
//!
//! A game's page holds every ply's pictures (some 1.5 MB for a 1,000-ply Telka game),
//! so a run of many thousand games can choose `--pages index` (the index alone,
//! linking the records) or `--pages none`.

use std::fmt::Write as _;
use std::path::Path;

use anyhow::{anyhow, Context};

use super::show_html;
use crate::picture::svg::escape;
use crate::record;
use crate::tournament::{self, Definition, GameResult, Summary};

/// Which pages a finished tournament writes (`--pages`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Pages {
    /// `index.html` and the viewer of every game beside its record.
    All,
    /// `index.html` alone, linking every game's record.
    Index,
    /// No pages: the records and `summary.json` only.
    None,
}

/// Writes every finished game's page (if `pages` is `All`) and then `index.html`
/// into `out`, drawing the pages on `threads` threads (the run's `--concurrency`:
/// the cores it may use).
pub(super) fn write(
    out: &Path,
    def: &Definition,
    results: &[GameResult],
    threads: usize,
    pages: Pages,
) -> anyhow::Result<()> {
    if pages == Pages::None {
        return Ok(());
    }
    let viewers = pages == Pages::All;
    let summary = tournament::summarize(def, results)?;
    let mut results = results.to_vec();
    results.sort_by_key(|r| r.index);
    let chunk = results.len().div_ceil(threads.max(1)).max(1);
    let rows: Vec<anyhow::Result<String>> = std::thread::scope(|scope| {
        let workers: Vec<_> = results
            .chunks(chunk)
            .map(|games| {
                scope.spawn(move || {
                    games
                        .iter()
                        .map(|r| game_row(out, r, viewers))
                        .collect::<anyhow::Result<String>>()
                })
            })
            .collect();
        workers
            .into_iter()
            .map(|w| {
                w.join()
                    .unwrap_or_else(|_| Err(anyhow!("drawing a game page panicked")))
            })
            .collect()
    });
    let rows = rows.into_iter().collect::<anyhow::Result<String>>()?;
    let index = index_page(&summary, &rows);
    atomic_write(&out.join("index.html"), &index)
}

/// Writes the viewer page of game `r` if `viewer` (unless it is newer than the
/// record) and returns its row of the index, linking the page only if it is written.
fn game_row(out: &Path, r: &GameResult, viewer: bool) -> anyhow::Result<String> {
    let rec = tournament::record_path(out, r.index);
    let page = rec.with_extension("html");
    let replay = record::replay_file(&rec).map_err(|e| anyhow!("{}: {e}", rec.display()))?;
    if viewer && !is_newer(&page, &rec) {
        let html = show_html::page(&replay, None)?;
        atomic_write(&page, &html)?;
    }
    let heading = show_html::heading(&replay);
    let players: Vec<String> = replay
        .header
        .seats
        .iter()
        .map(|s| {
            format!(
                "{} {}: {}",
                s.seat,
                s.label,
                s.entrant.as_ref().unwrap_or(&s.name)
            )
        })
        .collect();
    let name = |p: &Path| {
        p.file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    };
    let view = if viewer {
        format!("<a href=\"games/{}\">view</a> ", escape(&name(&page)))
    } else {
        String::new()
    };
    Ok(format!(
        "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td>\
         <td>{view}<a href=\"games/{}\">record</a></td></tr>\n",
        r.index,
        escape(&players.join(", ")),
        escape(heading.result.trim_start_matches("result: ")),
        r.plies,
        escape(&name(&rec)),
    ))
}

/// Whether `page` exists and was written after `rec` last changed.
fn is_newer(page: &Path, rec: &Path) -> bool {
    let modified = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    matches!((modified(page), modified(rec)), (Some(p), Some(r)) if p > r)
}

/// Writes `text` to `path` through a temporary file renamed over it, so a reader
/// never sees half a page; the temporary file is removed if that fails.
fn atomic_write(path: &Path, text: &str) -> anyhow::Result<()> {
    let temp = path.with_extension(format!("html.new{}", std::process::id()));
    let written = std::fs::write(&temp, text)
        .with_context(|| format!("cannot write {}", temp.display()))
        .and_then(|()| {
            std::fs::rename(&temp, path).with_context(|| format!("cannot write {}", path.display()))
        });
    if written.is_err() {
        let _ = std::fs::remove_file(&temp);
    }
    written
}

/// The index page: the title, the standings, the head-to-head lines and the games.
fn index_page(summary: &Summary, rows: &str) -> String {
    let title = escape(&format!(
        "{}: {} of {} games",
        summary.game, summary.finished, summary.scheduled
    ));
    let lines: String = summary
        .table()
        .lines()
        .skip(summary.standings.len() + 2)
        .map(|l| format!("{}\n", escape(l)))
        .collect();
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">\n\
         <title>{title}</title>\n<style>\n{STYLE}</style>\n</head>\n<body>\n<h1>{title}</h1>\n\
         <h2>Standings</h2>\n{}<pre id=\"pairings\">{lines}</pre>\n<h2>Games</h2>\n\
         <table id=\"games\">\n<tr><th>game</th><th>players</th><th>result</th><th>plies</th><th></th></tr>\n\
         {rows}</table>\n</body>\n</html>\n",
        standings(summary)
    )
}

/// The index's style.
const STYLE: &str = "body { font-family: \"DejaVu Sans\", \"Noto Sans\", Arial, sans-serif; margin: 1em; }\n\
    table { border-collapse: collapse; }\n\
    td, th { border: 1px solid #999999; padding: 2px 6px; text-align: left; }\n\
    td.n { text-align: right; }\n";

/// The standings as a table, best first, with the columns of the printed table.
fn standings(summary: &Summary) -> String {
    let two = summary.seats == 2;
    let mut t = String::from("<table id=\"standings\">\n<tr>");
    for h in summary.columns() {
        let _ = write!(t, "<th>{}</th>", escape(h));
    }
    t.push_str("</tr>\n");
    for (i, s) in summary.standings.iter().enumerate() {
        let cells: Vec<String> = if two {
            vec![
                s.games.to_string(),
                s.wins.to_string(),
                s.draws.to_string(),
                s.losses.to_string(),
                format!("{:.1}", s.points),
                format!("{:.1}%", s.score * 100.0),
                s.elo.map_or("-".to_string(), |(e, h)| tournament::fmt_elo(e, h)),
                s.los.map_or("-".to_string(), |l| format!("{:.1}%", l * 100.0)),
                s.timeouts.to_string(),
                s.crashes.to_string(),
            ]
        } else {
            vec![
                s.games.to_string(),
                format!("{:.2}", s.average_place),
                s.rating
                    .map_or("-".to_string(), |(r, u)| format!("{r:.1} ± {u:.1}")),
                s.timeouts.to_string(),
                s.crashes.to_string(),
            ]
        };
        let _ = write!(
            t,
            "<tr><td class=\"n\">{}</td><td>{}</td>",
            i + 1,
            escape(&s.name)
        );
        for c in cells {
            let _ = write!(t, "<td class=\"n\">{}</td>", escape(&c));
        }
        t.push_str("</tr>\n");
    }
    t.push_str("</table>\n");
    t
}
