//! Peg Chow and Telka as SVG: the 11 × 11 points joined in 8 directions (R-B1), the
//! four homes tinted in their colours, the Danger Territory shaded, the counters,
//! and the last move as a path through every landing point with its captures
//! crossed out.

use std::sync::OnceLock;

use super::svg::{palette, Anchor, Svg};
use super::{last_line, Drawn, Scene, TOP};
use crate::game::options::Options;
use crate::game::parker::board::{Colour, Point, POINTS, SIZE};
use crate::game::parker::rules::{Action, Position};
use crate::game::parker::seating::Seating;
use crate::game::parker::state;

/// Distance between two neighbouring points.
const STEP: f64 = 40.0;
/// Room around the points for the file and rank labels.
const MARGIN: f64 = 36.0;
/// The Danger Territory's shade.
const DANGER: &str = "#E4E4E4";

/// The palette colour of a counter colour.
fn fill(c: Colour) -> &'static str {
    match c {
        Colour::Blue => palette::BLUE,
        Colour::Yellow => palette::YELLOW,
        Colour::Red => palette::VERMILLION,
        Colour::Green => palette::GREEN,
    }
}

/// Where point `p` is drawn (north up).
fn at(p: Point) -> (f64, f64) {
    let top = (SIZE - 1) as f64;
    (
        MARGIN + p.x() as f64 * STEP,
        TOP + MARGIN + (top - p.y() as f64) * STEP,
    )
}

/// Draws the state or view line `text` of a Peg Chow or Telka game.
///
/// Of `scene` it reads the last events alone, never whose view it is: the views of
/// a ply with the same text then have the same board, which a page draws once
/// (`picture::draw_views`). A drawing that came to read the seat would have to be
/// taken off that list.
pub(super) fn draw(svg: &mut Svg, text: &str, options: &Options, scene: &Scene) -> Result<Drawn, String> {
    let int = |key, default, range| options.int(key, default, range).map_err(|e| e.to_string());
    let seating = Seating::new(
        int("players", 2, 2..=4)? as usize,
        int("colors-per-player", 1, 1..=2)? as usize,
    )
    .map_err(|e| e.to_string())?;
    let (pos, out) = state::parse(text, &seating).map_err(|e| e.join("; "))?;
    svg.append(board());
    counters(svg, &pos);
    let last = last_move(&scene.last_events);
    if let Some((path, captured)) = &last {
        draw_last(svg, path, captured);
    }
    let side = 2.0 * MARGIN + (SIZE - 1) as f64 * STEP;
    let mut notes = vec![format!(
        "{} to move, {} moves made; shaded: Danger Territory",
        pos.to_move, pos.moves
    )];
    if !out.is_empty() {
        let out: Vec<String> = out.iter().map(|s| s.to_string()).collect();
        notes.push(format!("out of the game: seat {}", out.join(", seat ")));
    }
    notes.extend(last_line(scene));
    Ok(Drawn {
        width: side,
        height: side,
        notes,
    })
}

/// The board without its counters, the same in every picture: drawn once, as it
/// was most of each picture's elements.
fn board() -> &'static Svg {
    static BOARD: OnceLock<Svg> = OnceLock::new();
    BOARD.get_or_init(|| {
        Svg::drawn(|svg| {
            areas(svg);
            lines(svg);
            labels(svg);
        })
    })
}

/// One square cell per point: a home point tinted in its colour, a point of the
/// Danger Territory shaded grey.
fn areas(svg: &mut Svg) {
    for p in Point::all() {
        let (x, y) = at(p);
        let cell = (x - STEP / 2.0, y - STEP / 2.0, STEP, STEP);
        match p.home() {
            Some(c) => {
                svg.open("g", &[("opacity", "0.35")]);
                svg.rect(cell, fill(c), "home");
                svg.close("g");
            }
            None => svg.rect(cell, DANGER, "danger"),
        }
    }
}

/// The lines joining every point to its 8 neighbours: ranks, files and both
/// diagonal families, each drawn once end to end.
fn lines(svg: &mut Svg) {
    let last = (SIZE - 1) as i8;
    let pt = |x: i8, y: i8| at(Point::new(x, y).expect("on the board"));
    svg.open("g", &[("class", "lines")]);
    for k in 0..=last {
        svg.line(pt(0, k), pt(last, k), palette::GREY, 1.5);
        svg.line(pt(k, 0), pt(k, last), palette::GREY, 1.5);
    }
    // A diagonal starts on the west or the south edge and runs until it leaves.
    for start in 1..=2 * last - 1 {
        let (x0, y0) = if start <= last {
            (0, last - start)
        } else {
            (start - last, 0)
        };
        let len = last - x0.max(y0);
        svg.line(pt(x0, y0), pt(x0 + len, y0 + len), palette::GREY, 1.0);
        let (x1, y1) = (last - x0, y0);
        svg.line(pt(x1, y1), pt(x1 - len, y1 + len), palette::GREY, 1.0);
    }
    svg.close("g");
}

/// Files `a`…`k` under the board and ranks `1`…`11` to its left.
fn labels(svg: &mut Svg) {
    for k in 0..SIZE as i8 {
        let (x, _) = at(Point::new(k, 0).expect("on the board"));
        let bottom = TOP + 2.0 * MARGIN + (SIZE - 1) as f64 * STEP - 10.0;
        let file = char::from(b'a' + k as u8).to_string();
        svg.text((x, bottom), 14.0, Anchor::Middle, palette::BLACK, &file);
        let (_, y) = at(Point::new(0, k).expect("on the board"));
        svg.text(
            (12.0, y),
            14.0,
            Anchor::Middle,
            palette::BLACK,
            &(k + 1).to_string(),
        );
    }
}

/// Every counter as a disc in its colour with its initial, so the colour is never
/// the only cue.
fn counters(svg: &mut Svg, pos: &Position) {
    // A counter of one colour on one point is drawn alike in every picture: each of
    // the 121 × 4 is drawn once, as counters were most of a picture's elements.
    static DRAWN: OnceLock<Vec<Svg>> = OnceLock::new();
    let slot = |p: Point, c: Colour| p.index() * Colour::ALL.len() + c.index();
    let drawn = DRAWN.get_or_init(|| {
        let mut all: Vec<Svg> = (0..POINTS * Colour::ALL.len()).map(|_| Svg::new()).collect();
        for p in Point::all() {
            for c in Colour::ALL {
                all[slot(p, c)] = Svg::drawn(|svg| counter(svg, p, c));
            }
        }
        all
    });
    for p in Point::all() {
        if let Some(c) = pos.at(p) {
            svg.append(&drawn[slot(p, c)]);
        }
    }
}

/// A counter of colour `c` on point `p`.
fn counter(svg: &mut Svg, p: Point, c: Colour) {
    let (x, y) = at(p);
    svg.open("g", &[("class", "piece")]);
    svg.circle((x, y), STEP * 0.36, fill(c), palette::BLACK);
    let letter = c.letter().to_ascii_uppercase().to_string();
    svg.text((x, y), 16.0, Anchor::Middle, palette::ink_on(fill(c)), &letter);
    svg.close("g");
}

/// The path and the captured points of the last move, read from the event the
/// viewer was told (`move blue a1-c3-e5 capture b2 d4`); `None` for a pass.
fn last_move(events: &[String]) -> Option<(Vec<Point>, Vec<Point>)> {
    let event = events.iter().find(|e| e.starts_with("move "))?;
    let mut words = event.split(' ').skip(2);
    let Ok(Action::Path(path)) = Action::parse(words.next()?) else {
        return None;
    };
    let captured = words.filter_map(Point::parse).collect();
    Some((path, captured))
}

/// The last move as a line through every landing point, a ring where it started,
/// and a cross on every captured point.
fn draw_last(svg: &mut Svg, path: &[Point], captured: &[Point]) {
    let points: Vec<(f64, f64)> = path.iter().map(|&p| at(p)).collect();
    svg.open("g", &[("class", "last-move"), ("opacity", "0.8")]);
    svg.path(&points, palette::BLACK, 4.0, "last-move-path");
    if let Some(&start) = points.first() {
        svg.circle(start, STEP * 0.45, "none", palette::BLACK);
    }
    for &p in &points[1..] {
        svg.circle(p, 4.0, palette::BLACK, palette::BLACK);
    }
    svg.close("g");
    for &p in captured {
        let (x, y) = at(p);
        let d = STEP * 0.3;
        svg.open("g", &[("class", "captured")]);
        svg.line((x - d, y - d), (x + d, y + d), palette::VERMILLION, 5.0);
        svg.line((x - d, y + d), (x + d, y - d), palette::VERMILLION, 5.0);
        svg.close("g");
    }
}
