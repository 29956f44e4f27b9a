//! `referee show --format html`: replays a record once and draws, at every ply, the
//! picture of each view the page is for, exactly as `show --format svg --ply K
//! [--seat N]` draws it, with the event lines the text `show` prints.
//!
//! With a seat, that seat's view is the only one drawn: the page is built from its
//! pictures and its events alone, so nothing omniscient can reach it.

use anyhow::anyhow;

use crate::game::{Game, Seat};
use crate::picture::frames::Book;
use crate::picture::html::{self, Heading};
use crate::picture::{self, Scene};
use crate::record::shown::{ending, players, told};
use crate::record::{self, Line, Replay};

/// The HTML page of `replay`: as `seat` saw it, or omniscient and as every seat saw
/// it.
pub(super) fn page(replay: &Replay, seat: Option<Seat>) -> anyhow::Result<String> {
    let header = &replay.header;
    let mut game = record::start_game(header).map_err(|e| anyhow!(e))?;
    let views: Vec<Option<Seat>> = match seat {
        Some(seat) => vec![Some(seat)],
        None => std::iter::once(None)
            .chain(Seat::all(game.seat_count()).map(Some))
            .collect(),
    };
    let mut pages = Pages {
        book: Book::new(views.iter().map(|v| label(game.as_ref(), *v)).collect()),
        last: vec![Vec::new(); views.len()],
        views,
        result_reached: false,
        unfinished: replay.result.is_none(),
    };
    let mut drawn = None;
    for line in &replay.lines {
        // `show --ply K` stops before the first action once K plies are played: the
        // picture of ply K is the game as it stands there.
        if matches!(line, Line::Action(_)) && drawn != Some(game.plies()) {
            pages.draw(game.as_ref(), header)?;
            drawn = Some(game.plies());
        }
        pages.step(game.as_mut(), line);
    }
    if drawn != Some(game.plies()) {
        pages.draw(game.as_ref(), header)?;
    }
    Ok(html::page(&heading(replay), &pages.book))
}

/// What a page says of `replay` besides its pictures: the game, the players and the
/// result (as public as any seat's view: every seat is told the result).
pub(super) fn heading(replay: &Replay) -> Heading {
    let header = &replay.header;
    let finished = replay.result.is_some();
    Heading {
        title: format!("{} {}", header.game, header.options),
        players: players(header),
        result: ending(replay.game.as_ref(), finished, !finished, header)
            .unwrap_or_else(|| "unfinished".to_string()),
    }
}

/// The page being built: its views and what each was last told.
struct Pages {
    /// The pictures and event lines so far.
    book: Book,
    /// The views: `None` omniscient, else a seat's.
    views: Vec<Option<Seat>>,
    /// The events of the last line, per view.
    last: Vec<Vec<String>>,
    /// Whether the result line has been passed (then pictures note the result).
    result_reached: bool,
    /// Whether the record has no result line at all.
    unfinished: bool,
}

impl Pages {
    /// Replays `line` on `game` and writes down what each view was told of it.
    fn step(&mut self, game: &mut dyn Game, line: &Line) {
        if let Line::Result(_) = line {
            self.result_reached = true;
            return;
        }
        let Some(played) = record::step(game, line) else {
            return;
        };
        for (v, seat) in self.views.iter().enumerate() {
            let (text, events) = told(line, &played, game, *seat);
            self.book.event(v, text);
            self.last[v] = events;
        }
    }

    /// Draws every view's picture of `game` as it stands.
    fn draw(&mut self, game: &dyn Game, header: &record::Header) -> anyhow::Result<()> {
        self.book.ply(game.plies());
        let notes: Vec<String> = ending(game, self.result_reached, self.unfinished, header)
            .into_iter()
            .collect();
        let scenes: Vec<Scene> = (self.views.iter().zip(&self.last))
            .map(|(seat, last)| Scene {
                ply: game.plies(),
                seat: *seat,
                last_events: last.clone(),
                notes: notes.clone(),
            })
            .collect();
        for (v, svg) in picture::draw_views(game, &scenes)?.iter().enumerate() {
            self.book.picture(v, svg);
        }
        Ok(())
    }
}

/// How the page names a view, and its seat number.
fn label(game: &dyn Game, view: Option<Seat>) -> (String, Option<u32>) {
    match view {
        Some(seat) => (
            format!("seat {seat} ({})", game.seat_label(seat)),
            Some(seat.number() as u32),
        ),
        None => ("omniscient".to_string(), None),
    }
}
