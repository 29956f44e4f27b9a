//! Pictures of a game as SVG: the board at one point of a record, omniscient or as
//! one seat saw it (`referee show --format svg`), and the HTML viewer made of such
//! pictures (`referee show --format html`: `frames.rs` stores them, `html.rs`
//! writes the page).
//!
//! Information hiding holds by construction: a picture is drawn from the text a
//! seat was sent, its view line parsed back by the game's own view parser into the
//! game's types, and from the events it was told. The omniscient picture is drawn
//! from the state line the same way. So a seat's picture can hold only what the
//! text `show` for that seat prints, and nothing the drawing code could reach by
//! mistake (the game's true state never enters it).

pub mod frames;
pub mod html;
mod idoubtit;
mod multichess;
mod parker;
pub mod svg;

use crate::game::{Game, GameId, Seat};
use crate::record::{self, shown, Replay};
use svg::{palette, Anchor, Svg};

/// Height of the title band across the top, in user units.
const TOP: f64 = 56.0;
/// Height of one caption line under the board.
const LINE: f64 = 22.0;

/// What a picture shows: the game, whose view, and what that viewer was told at the
/// last ply shown.
#[derive(Clone, Debug)]
pub struct Scene {
    /// The ply the picture is at (the number of plies shown).
    pub ply: u32,
    /// The seat whose view it is; `None` for the omniscient picture.
    pub seat: Option<Seat>,
    /// The events of the last ply shown, as the viewer was told them.
    pub last_events: Vec<String>,
    /// Lines to print under the board (e.g. the result), already as public as the
    /// viewer's own text `show`.
    pub notes: Vec<String>,
}

/// Why no picture could be drawn.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("cannot draw the position: {0}")]
pub struct PictureError(String);

/// What a game's drawing hands back: the size it used below the title band and the
/// lines it wants printed under the board.
struct Drawn {
    width: f64,
    height: f64,
    notes: Vec<String>,
}

/// The SVG document of `game` as `scene` says: omniscient or as `scene.seat` saw it.
pub fn draw(game: &dyn Game, scene: &Scene) -> Result<String, PictureError> {
    let board = board(game, &text(game, scene), scene)?;
    Ok(titled(game, scene, &board))
}

/// [`draw`] of every scene of one ply, for a page: views whose text and last events
/// are alike share one drawing of the board where the game's drawing reads nothing
/// else (every view of Peg Chow and Telka, which hide nothing), so a page of those
/// games draws each ply's board once instead of once per view.
pub fn draw_views(game: &dyn Game, scenes: &[Scene]) -> Result<Vec<String>, PictureError> {
    let reads_seat = !matches!(game.id(), GameId::PegChow | GameId::Telka);
    let mut boards: Vec<(String, &Scene, Board)> = Vec::new();
    let mut pictures = Vec::with_capacity(scenes.len());
    for scene in scenes {
        let text = text(game, scene);
        let alike = |(t, s, _): &&(String, &Scene, Board)| {
            *t == text && s.last_events == scene.last_events && (!reads_seat || s.seat == scene.seat)
        };
        let i = match boards.iter().position(|b| alike(&b)) {
            Some(i) => i,
            None => {
                let board = board(game, &text, scene)?;
                boards.push((text, scene, board));
                boards.len() - 1
            }
        };
        pictures.push(titled(game, scene, &boards[i].2));
    }
    Ok(pictures)
}

/// The line `scene`'s viewer was sent: the one place a picture reads the game.
fn text(game: &dyn Game, scene: &Scene) -> String {
    match scene.seat {
        Some(seat) => game.view(seat).text().to_string(),
        None => game.state(),
    }
}

/// A picture without its title and captions: the game's drawing of `text`.
struct Board {
    svg: Svg,
    drawn: Drawn,
}

/// Draws the board of `text`, the line `scene`'s viewer was sent.
fn board(game: &dyn Game, text: &str, scene: &Scene) -> Result<Board, PictureError> {
    let options = game.options();
    let mut svg = Svg::new();
    let drawn = match game.id() {
        GameId::PegChow | GameId::Telka => parker::draw(&mut svg, text, &options, scene),
        GameId::IDoubtIt => idoubtit::draw(&mut svg, text, &options, scene),
        GameId::MultiChess => multichess::draw(&mut svg, text, &options, scene),
    }
    .map_err(PictureError)?;
    Ok(Board { svg, drawn })
}

/// The finished document: `board` under the title of `scene`, with the captions.
fn titled(game: &dyn Game, scene: &Scene, board: &Board) -> String {
    let Board { svg: drawing, drawn } = board;
    let mut svg = Svg::new();
    let title = title(game, scene);
    svg.text((16.0, TOP / 2.0), 22.0, Anchor::Start, palette::BLACK, &title);
    let mut y = TOP + drawn.height + LINE / 2.0;
    let lines: Vec<&String> = drawn.notes.iter().chain(&scene.notes).collect();
    for line in &lines {
        svg.text((16.0, y), 15.0, Anchor::Start, palette::BLACK, line);
        y += LINE;
    }
    // Wide enough for the longest text: glyphs average about 0.6 of the font size.
    let text_width = lines
        .iter()
        .map(|l| l.chars().count() as f64 * 9.0)
        .chain([title.chars().count() as f64 * 13.0])
        .fold(0.0, f64::max)
        + 32.0;
    let height = TOP + drawn.height + lines.len() as f64 * LINE + 8.0;
    drawing.finish(&svg, drawn.width.max(text_width), height, &title)
}

/// The picture `referee show --format svg [--ply K] [--seat N]` prints of `replay`:
/// the game after ply `upto` (all of it when the record is shorter), omniscient or as
/// `seat` saw it. The one way to draw a record, so a mail game's attached picture is
/// that command's output byte for byte.
pub fn of_record(replay: &Replay, seat: Option<Seat>, upto: u32) -> Result<String, PictureError> {
    let header = &replay.header;
    let mut game = record::start_game(header).map_err(|e| PictureError(e.to_string()))?;
    let shown = shown::replayed_lines(replay, game.as_mut(), seat, upto);
    let ending = shown::ending(
        game.as_ref(),
        shown.result.is_some(),
        replay.result.is_none(),
        header,
    );
    let scene = Scene {
        ply: game.plies(),
        seat,
        last_events: shown.last_events,
        notes: ending.into_iter().collect(),
    };
    draw(game.as_ref(), &scene)
}

/// `Telka · ply 12 · seat 2's view (Red)`: the game, the ply and whose view it is.
fn title(game: &dyn Game, scene: &Scene) -> String {
    let name = match game.id() {
        GameId::PegChow => "Peg Chow",
        GameId::Telka => "Telka",
        GameId::IDoubtIt => "I-Doubt-It TelnChes",
        GameId::MultiChess => "Multi-player TelnChes",
    };
    let whose = match scene.seat {
        Some(seat) => format!("seat {seat}'s view ({})", game.seat_label(seat)),
        None => "omniscient".to_string(),
    };
    format!("{name} · ply {} · {whose}", scene.ply)
}

/// The events of the last ply as caption lines (`last: …`), or nothing before the
/// first ply.
fn last_line(scene: &Scene) -> Vec<String> {
    if scene.last_events.is_empty() {
        return Vec::new();
    }
    vec![format!("last: {}", scene.last_events.join("; "))]
}
