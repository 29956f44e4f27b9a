//! `referee show`: a recorded game as text, omniscient or as one seat saw it.

use std::path::PathBuf;

use anyhow::anyhow;
use clap::Args;

use super::{print, Failure, EXIT_OK};
use crate::game::{Game, Seat};
use crate::record::{self, Line, ResultLine};

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
}

/// Writes the lines of `replay` up to ply `upto` into `out`, omniscient or as
/// `seat_shown` saw them, replaying them on `game`; returns the result line if it was
/// reached.
fn replayed_lines(
    replay: &record::Replay,
    game: &mut dyn Game,
    seat_shown: Option<Seat>,
    upto: u32,
    out: &mut String,
) -> Option<ResultLine> {
    let mut result = None;
    for line in &replay.lines {
        if game.plies() >= upto && !matches!(line, Line::Forfeit(_) | Line::Result(_)) {
            break;
        }
        if let Line::Result(r) = line {
            result = Some(r.clone());
            continue;
        }
        let Some(played) = record::step(game, line) else {
            continue;
        };
        let heading = match line {
            Line::Action(a) => match &played.taken {
                Some(t) => format!("{:>4}. seat {} {t} (requested {})", a.ply, a.seat, a.action),
                None => format!("{:>4}. seat {} {}", a.ply, a.seat, a.action),
            },
            Line::Forfeit(f) => format!("      seat {} forfeits: {}", f.seat, f.reason),
            _ => continue,
        };
        match seat_shown {
            // A seat saw its own events, not the omniscient ones. A line that told
            // nobody anything has no per-seat lists at all; verify refuses such lines,
            // and this reads one as telling the seat nothing rather than panicking.
            Some(seat) => {
                let seen: Vec<&str> = played
                    .seat_events
                    .get(seat.index())
                    .map_or(&[][..], Vec::as_slice)
                    .iter()
                    .map(|e| e.text())
                    .collect();
                out.push_str(&format!("{:>4}. {}\n", game.plies(), seen.join("; ")));
            }
            None => out.push_str(&format!("{heading}  [{}]\n", played.events.join("; "))),
        }
    }
    result
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
    let upto = args.ply.unwrap_or(u32::MAX);
    if args.ply.is_some_and(|k| k > replay.game.plies()) {
        return Err(Failure::usage(anyhow!(
            "--ply {upto}: the record has {} plies",
            replay.game.plies()
        )));
    }
    let mut out = String::new();
    let seats: Vec<String> = header
        .seats
        .iter()
        .map(|s| format!("seat {} {} ({})", s.seat, s.label, s.name))
        .collect();
    out.push_str(&format!(
        "{} {} — {}\n",
        header.game,
        header.options,
        seats.join(", ")
    ));
    let result = replayed_lines(&replay, game.as_mut(), args.seat, upto, &mut out);
    out.push('\n');
    out.push_str(&game.diagram(args.seat));
    if let Some(seat) = args.seat {
        out.push_str(&format!("view {}\n", game.view(seat).text()));
    }
    let labels: Vec<String> = header.seats.iter().map(|s| s.label.clone()).collect();
    match (result, game.outcome()) {
        (Some(_), Some(outcome)) => out.push_str(&format!(
            "result: {}, after {} plies\n",
            outcome.describe(game.id(), &labels),
            game.plies()
        )),
        _ if replay.result.is_none() => out.push_str("unfinished\n"),
        _ => {}
    }
    print(&out)?;
    Ok(EXIT_OK)
}
