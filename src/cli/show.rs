//! `referee show`: a recorded game as text or as an SVG picture, omniscient or as
//! one seat saw it.

use std::path::PathBuf;

use anyhow::anyhow;
use clap::{Args, ValueEnum};

use super::{print, Failure, EXIT_OK};
use crate::game::Seat;
use crate::picture;
use crate::record;
use crate::record::shown::{ending, players, replayed_lines};

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
    if args.format == Format::Svg {
        let svg = picture::of_record(&replay, args.seat, upto).map_err(|e| Failure::failed(anyhow!(e)))?;
        print(&svg)?;
        return Ok(EXIT_OK);
    }
    let mut out = format!(
        "{} {} — {}\n",
        header.game,
        header.options,
        players(header).join(", ")
    );
    let shown = replayed_lines(&replay, game.as_mut(), args.seat, upto);
    out.push_str(&shown.text);
    let ending = ending(
        game.as_ref(),
        shown.result.is_some(),
        replay.result.is_none(),
        header,
    );
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
