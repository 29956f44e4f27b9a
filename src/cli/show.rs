//! `referee show`: a recorded game as text or as an SVG picture, omniscient or as
//! one seat saw it.

use std::path::PathBuf;

use anyhow::anyhow;
use clap::{Args, ValueEnum};

use super::{print, Failure, EXIT_OK};
use crate::game::{Game, Played, Seat};
use crate::picture::{self, Scene};
use crate::record::{self, Line, ResultLine};

/// What `show` prints.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// The actions with their events, a text diagram and the result.
    #[default]
    Text,
    /// One SVG picture of the board at the last ply shown.
    Svg,
    /// A self-contained HTML page with the pictures of every ply.
    Html,
}

/// Arguments of `referee show`.
#[derive(Debug, Args)]
pub struct ShowArgs {
    /// The record.
    record: PathBuf,
    /// Show only what this seat could know: its view and the events it was told.
    #[arg(long)]
    seat: Option<Seat>,
    /// Stop after this many plies (0: the start position).
    #[arg(long)]
    ply: Option<u32>,
    /// Print text, one SVG picture of the board (as much as the text shows), or an
    /// HTML page of every ply's picture.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
}

/// What replaying the lines up to the ply shown found.
struct Replayed {
    /// The result line, if it was reached.
    result: Option<ResultLine>,
    /// The events of the last line shown, as the viewer was told them.
    last_events: Vec<String>,
}

/// Writes the lines of `replay` up to ply `upto` into `out`, omniscient or as
/// `seat_shown` saw them, replaying them on `game`; returns the result line if it was
/// reached and what the last line shown told the viewer.
fn replayed_lines(
    replay: &record::Replay,
    game: &mut dyn Game,
    seat_shown: Option<Seat>,
    upto: u32,
    out: &mut String,
) -> Replayed {
    let mut result = None;
    let mut last_events = Vec::new();
    for line in &replay.lines {
        if game.plies() >= upto && !matches!(line, Line::Forfeit(_) | Line::Result(_)) {
            break;
        }
        if let Line::Result(r) = line {
            result = Some(r.clone());
            continue;
        }
        if let Line::Deadline(d) = line {
            // A mail game's clock: shown to the seats `pbm tick` told of it.
            if seat_shown.is_none_or(|seat| d.told_to(seat)) {
                out.push_str(&format!("      {}\n", d.summary()));
            }
            continue;
        }
        let Some(played) = record::step(game, line) else {
            continue;
        };
        let (text, told) = told(line, &played, &*game, seat_shown);
        out.push_str(&text);
        out.push('\n');
        last_events = told;
    }
    Replayed { result, last_events }
}

/// The line `show` prints for a record `line` that `played` as it did on `game`,
/// omniscient or as `seat_shown` was told it, and the events it told that viewer.
pub(super) fn told(
    line: &Line,
    played: &Played,
    game: &dyn Game,
    seat_shown: Option<Seat>,
) -> (String, Vec<String>) {
    match seat_shown {
        // A seat saw its own events, not the omniscient ones. A line that told
        // nobody anything has no per-seat lists at all; verify refuses such lines,
        // and this reads one as telling the seat nothing rather than panicking.
        Some(seat) => {
            let seen: Vec<String> = played
                .seat_events
                .get(seat.index())
                .map_or(&[][..], Vec::as_slice)
                .iter()
                .map(|e| e.text().to_string())
                .collect();
            (format!("{:>4}. {}", game.plies(), seen.join("; ")), seen)
        }
        None => {
            let heading = match line {
                Line::Action(a) => match &played.taken {
                    Some(t) => format!("{:>4}. seat {} {t} (requested {})", a.ply, a.seat, a.action),
                    None => format!("{:>4}. seat {} {}", a.ply, a.seat, a.action),
                },
                Line::Forfeit(f) => format!("      seat {} forfeits: {}", f.seat, f.reason),
                _ => String::new(),
            };
            (
                format!("{heading}  [{}]", played.events.join("; ")),
                played.events.clone(),
            )
        }
    }
}

/// Runs `referee show`.
pub fn run(args: ShowArgs) -> Result<u8, Failure> {
    // Verify first: showing a tampered record as if it were true would mislead.
    let replay = record::replay_file(&args.record).map_err(|e| {
        let unreadable = e.is_unreadable();
        let e = anyhow!("{}: {e}", args.record.display());
        if unreadable {
            Failure::usage(e)
        } else {
            Failure::failed(e)
        }
    })?;
    let header = &replay.header;
    let mut game = record::start_game(header).map_err(|e| Failure::failed(anyhow!(e)))?;
    if let Some(seat) = args.seat {
        seat.at_table(game.seat_count())
            .map_err(|e| Failure::usage(anyhow!("--seat {seat}: the game has {} seats", e.seats)))?;
    }
    if args.format == Format::Html {
        if args.ply.is_some() {
            return Err(Failure::usage(anyhow!(
                "--ply: an HTML page holds every ply (open it at #ply=K instead)"
            )));
        }
        let page = super::show_html::page(&replay, args.seat).map_err(|e| Failure::failed(anyhow!(e)))?;
        print(&page)?;
        return Ok(EXIT_OK);
    }
    let upto = args.ply.unwrap_or(u32::MAX);
    if args.ply.is_some_and(|k| k > replay.game.plies()) {
        return Err(Failure::usage(anyhow!(
            "--ply {upto}: the record has {} plies",
            replay.game.plies()
        )));
    }
    let mut out = format!(
        "{} {} — {}\n",
        header.game,
        header.options,
        players(header).join(", ")
    );
    let Replayed { result, last_events } = replayed_lines(&replay, game.as_mut(), args.seat, upto, &mut out);
    let ending = ending(game.as_ref(), result.is_some(), replay.result.is_none(), header);
    if args.format == Format::Svg {
        let scene = Scene {
            ply: game.plies(),
            seat: args.seat,
            last_events,
            notes: ending.into_iter().collect(),
        };
        let svg = picture::draw(game.as_ref(), &scene).map_err(|e| Failure::failed(anyhow!(e)))?;
        print(&svg)?;
        return Ok(EXIT_OK);
    }
    out.push('\n');
    out.push_str(&game.diagram(args.seat));
    if let Some(seat) = args.seat {
        out.push_str(&format!("view {}\n", game.view(seat).text()));
    }
    if let Some(line) = ending {
        out.push_str(&line);
        out.push('\n');
    }
    print(&out)?;
    Ok(EXIT_OK)
}

/// Who played each seat: `seat 1 Blue (greedy)`.
pub(super) fn players(header: &record::Header) -> Vec<String> {
    header
        .seats
        .iter()
        .map(|s| format!("seat {} {} ({})", s.seat, s.label, s.name))
        .collect()
}

/// The last line of the text: the result once the shown plies reach it, `unfinished`
/// for a record without one, otherwise nothing.
pub(super) fn ending(
    game: &dyn Game,
    reached: bool,
    unfinished: bool,
    header: &record::Header,
) -> Option<String> {
    let labels: Vec<String> = header.seats.iter().map(|s| s.label.clone()).collect();
    match (reached, game.outcome()) {
        (true, Some(outcome)) => Some(format!(
            "result: {}, after {} plies",
            outcome.describe(game.id(), &labels),
            game.plies()
        )),
        _ if unfinished => Some("unfinished".to_string()),
        _ => None,
    }
}
