//! Multi-player TelnChes as SVG: the public area on top and every private area hung
//! off its lower edge (R-M1: rank 4 of every area lies under rank 5, file by file),
//! pieces in their owners' colours, fog over what the viewer cannot see, and the
//! seats that are out marked.

use std::sync::OnceLock;

use super::svg::{palette, Anchor, Svg};
use super::{last_line, Drawn, Scene, TOP};
use crate::game::multichess::board::{Area, Kind, Piece, Square, AREA};
use crate::game::multichess::rules::{Move, Position};
use crate::game::multichess::state;
use crate::game::options::Options;
use crate::game::Seat;

/// Side of a square.
const SQ: f64 = 40.0;
/// Room left of every area for rank numbers, and around the drawing.
const MARGIN: f64 = 30.0;
/// Space between two private areas side by side.
const GAP: f64 = 48.0;
/// Height of an area's name band above it.
const BAND: f64 = 24.0;
/// Height of the file letters under an area.
const FILES: f64 = 20.0;
/// Height of the joint drawn between the public area and the first row of areas.
const JOINT: f64 = 56.0;
/// Light and dark squares, and the fog over squares the viewer cannot see.
const LIGHT: &str = "#EEEEEE";
/// See [`LIGHT`].
const DARK: &str = "#C8C8C8";
/// See [`LIGHT`].
const FOG: &str = "#6E6E6E";

/// Where the areas go: private areas in rows of at most two under the public area.
///
/// Two abreast keep the picture about two areas wide whatever the seats, so that at
/// 300 px a square is still some 16 px; more seats make it taller, not smaller.
struct Layout {
    seats: usize,
    per_row: usize,
}

impl Layout {
    /// Private areas per row at most.
    const PER_ROW: usize = 2;

    /// A layout for `seats` areas.
    fn new(seats: usize) -> Layout {
        Layout {
            seats,
            per_row: seats.min(Self::PER_ROW),
        }
    }

    /// The width of the widest row.
    fn width(&self) -> f64 {
        let n = self.per_row as f64;
        2.0 * MARGIN + n * 8.0 * SQ + (n - 1.0) * GAP
    }

    /// Top-left corner of the top rank of `area`.
    fn origin(&self, area: Area) -> (f64, f64) {
        match area {
            Area::Public => ((self.width() - 8.0 * SQ) / 2.0, TOP + BAND),
            Area::Private(k) => {
                let (row, col) = (k as usize / self.per_row, k as usize % self.per_row);
                let in_row = (self.seats - row * self.per_row).min(self.per_row) as f64;
                let row_width = in_row * 8.0 * SQ + (in_row - 1.0) * GAP;
                let left = (self.width() - row_width) / 2.0;
                let top =
                    TOP + BAND + 4.0 * SQ + JOINT + BAND + row as f64 * (4.0 * SQ + FILES + BAND + 16.0);
                (left + col as f64 * (8.0 * SQ + GAP), top)
            }
        }
    }

    /// The height of the whole drawing below the title band.
    fn height(&self) -> f64 {
        let (_, top) = self.origin(Area::Private(self.seats as u8 - 1));
        top + 4.0 * SQ + FILES - TOP
    }

    /// Top-left corner of square `sq`.
    fn cell(&self, sq: Square) -> (f64, f64) {
        let (x, y) = self.origin(sq.area);
        let top_rank = if sq.area == Area::Public { 7.0 } else { 3.0 };
        (x + sq.file as f64 * SQ, y + (top_rank - sq.rank as f64) * SQ)
    }

    /// The centre of square `sq`.
    fn centre(&self, sq: Square) -> (f64, f64) {
        let (x, y) = self.cell(sq);
        (x + SQ / 2.0, y + SQ / 2.0)
    }
}

/// Draws the state or view line `text` of a Multi-player TelnChes game.
pub(super) fn draw(svg: &mut Svg, text: &str, options: &Options, scene: &Scene) -> Result<Drawn, String> {
    let seats = options.int("players", 2, 2..=8).map_err(|e| e.to_string())? as usize;
    let (pos, seen) = state::parse(text, seats, scene.seat.is_some()).map_err(|e| e.join("; "))?;
    let fixed = Fixed::of(seats);
    let layout = &fixed.layout;
    svg.append(&fixed.joints);
    let areas = std::iter::once(Area::Public).chain((0..seats as u8).map(Area::Private));
    for (a, area) in areas.enumerate() {
        area_band(svg, layout, &pos, area);
        for (i, &seen) in seen.iter().enumerate().skip(a * AREA).take(AREA) {
            svg.append(if seen { &fixed.squares[i] } else { &fixed.fog[i] });
            if let Some(p) = pos.at(Square::from_index(i)).filter(|_| seen) {
                svg.append(fixed.piece(i, p));
            }
        }
        svg.append(&fixed.labels[a]);
    }
    if let Some(mv) = last_move(&scene.last_events, seats) {
        let (from, to) = (layout.centre(mv.from), layout.centre(mv.to));
        svg.open("g", &[("class", "last-move"), ("opacity", "0.75")]);
        svg.path(&[from, to], palette::SKY, 7.0, "last-move-path");
        svg.circle(to, 6.0, palette::SKY, palette::SKY);
        svg.close("g");
    }
    Ok(Drawn {
        width: layout.width(),
        height: layout.height(),
        notes: notes(&pos, &seen, scene),
    })
}

/// The shaded joints from the public area's lower edge to the upper edge of every
/// private area: each file of rank 5 goes on into rank 4 of each of them.
fn joints(svg: &mut Svg, layout: &Layout) {
    let (px, py) = layout.origin(Area::Public);
    let bottom = py + 4.0 * SQ;
    svg.open("g", &[("class", "joints"), ("opacity", "0.3")]);
    for k in 0..layout.seats as u8 {
        let (ax, ay) = layout.origin(Area::Private(k));
        let quad = [
            (px, bottom),
            (px + 8.0 * SQ, bottom),
            (ax + 8.0 * SQ, ay),
            (ax, ay),
        ];
        svg.polygon(&quad, palette::SKY, "joint");
    }
    svg.close("g");
}

/// The name band above an area: `public area`, or the area's number with its
/// owner's colour, and `OUT` for a seat that is out of the game.
fn area_band(svg: &mut Svg, layout: &Layout, pos: &Position, area: Area) {
    let (x, y) = layout.origin(area);
    let band = (x, y - BAND, 8.0 * SQ, BAND - 2.0);
    let (fill, label) = match area {
        Area::Public => (palette::PAPER, "public area (ranks 5-8), shared".to_string()),
        Area::Private(k) => {
            let seat = Seat::from_index(k as usize);
            let owner = pos.owners[k as usize];
            let out = if pos.out.contains(&seat) {
                format!(", seat {seat} OUT")
            } else {
                String::new()
            };
            let whose = owner.map_or("nobody's".to_string(), |s| format!("owned by seat {s}"));
            let fill = owner.map_or(palette::PAPER, |s| palette::seat(s.index()));
            (fill, format!("area {} ({whose}{out})", k + 1))
        }
    };
    svg.rect(band, fill, "area-band");
    let ink = palette::ink_on(fill);
    svg.text((x + 6.0, y - BAND / 2.0), 14.0, Anchor::Start, ink, &label);
    if label.contains("OUT") {
        // Struck through as well as said, so it shows at a glance.
        svg.line((x, y - BAND / 2.0), (x + 8.0 * SQ, y - BAND / 2.0), ink, 2.0);
    }
}

/// What every picture of a game with the same number of seats draws alike: the
/// joints, the squares (bare and fogged) and the labels, drawn once per seat count.
/// A page draws thousands of pictures, and these were most of each one's elements.
struct Fixed {
    /// Where the areas of these pictures go.
    layout: Layout,
    /// The joints between the public area and the private ones.
    joints: Svg,
    /// Each square, by [`Square::index`], as drawn when seen, without its piece.
    squares: Vec<Svg>,
    /// Each square, by [`Square::index`], as drawn under fog.
    fog: Vec<Svg>,
    /// Each area's file and rank labels, the public area's first.
    labels: Vec<Svg>,
    /// Each piece a seat may have on each square, drawn the first time a picture
    /// needs it: [`Fixed::piece`].
    pieces: Vec<OnceLock<Svg>>,
}

impl Fixed {
    /// The fixed parts of pictures with `seats` seats (2–8).
    fn of(seats: usize) -> &'static Fixed {
        static FIXED: [OnceLock<Fixed>; 9] = [const { OnceLock::new() }; 9];
        FIXED[seats].get_or_init(|| Fixed::draw(Layout::new(seats)))
    }

    /// Draws them for `layout`.
    fn draw(layout: Layout) -> Fixed {
        let at = &layout;
        let squares = (0..AREA * (at.seats + 1)).map(Square::from_index);
        let areas = std::iter::once(Area::Public).chain((0..at.seats as u8).map(Area::Private));
        let joints = Svg::drawn(|svg| joints(svg, at));
        let bare = squares
            .clone()
            .map(|sq| Svg::drawn(|svg| square(svg, at, sq, true)));
        let fog = squares.map(|sq| Svg::drawn(|svg| square(svg, at, sq, false)));
        let labels = areas.map(|area| Svg::drawn(|svg| labels(svg, at, area)));
        let pieces = AREA * (at.seats + 1) * at.seats * Kind::ALL.len();
        Fixed {
            joints,
            squares: bare.collect(),
            fog: fog.collect(),
            labels: labels.collect(),
            pieces: (0..pieces).map(|_| OnceLock::new()).collect(),
            layout,
        }
    }

    /// Piece `p` on the square with index `i`.
    fn piece(&self, i: usize, p: Piece) -> &Svg {
        let at = (i * self.layout.seats + p.owner.index()) * Kind::ALL.len() + p.kind.index();
        self.pieces[at].get_or_init(|| {
            let centre = self.layout.centre(Square::from_index(i));
            Svg::drawn(|svg| draw_piece(svg, centre, p))
        })
    }
}

/// One square without its piece: fogged when the viewer cannot see it, otherwise
/// in its colour.
fn square(svg: &mut Svg, layout: &Layout, sq: Square, seen: bool) {
    let (x, y) = layout.cell(sq);
    if !seen {
        svg.rect((x, y, SQ, SQ), FOG, "fog");
        return;
    }
    let fill = if (sq.file + sq.rank) % 2 == 0 { DARK } else { LIGHT };
    svg.rect((x, y, SQ, SQ), fill, "square");
}

/// A piece: a disc in its owner's colour with the chess glyph and the owner's
/// number, so colour is never the only cue.
fn draw_piece(svg: &mut Svg, (cx, cy): (f64, f64), p: Piece) {
    let fill = palette::seat(p.owner.index());
    let ink = palette::ink_on(fill);
    let glyph = match p.kind {
        Kind::King => "♚",
        Kind::Queen => "♛",
        Kind::Rook => "♜",
        Kind::Bishop => "♝",
        Kind::Knight => "♞",
        Kind::Pawn => "♟",
    };
    svg.open("g", &[("class", "piece")]);
    svg.circle((cx, cy), SQ * 0.43, fill, palette::BLACK);
    svg.text((cx - 3.0, cy), SQ * 0.5, Anchor::Middle, ink, glyph);
    svg.text(
        (cx + SQ * 0.26, cy + SQ * 0.2),
        SQ * 0.26,
        Anchor::Middle,
        ink,
        &p.owner.to_string(),
    );
    svg.close("g");
}

/// File letters under an area and its rank numbers to its left.
fn labels(svg: &mut Svg, layout: &Layout, area: Area) {
    let (x, y) = layout.origin(area);
    for file in 0..8u8 {
        let letter = char::from(b'a' + file).to_string();
        let at = (x + file as f64 * SQ + SQ / 2.0, y + 4.0 * SQ + FILES / 2.0);
        svg.text(at, 12.0, Anchor::Middle, palette::BLACK, &letter);
    }
    let top = if area == Area::Public { 8 } else { 4 };
    for k in 0..4u8 {
        let at = (x - 10.0, y + k as f64 * SQ + SQ / 2.0);
        svg.text(at, 12.0, Anchor::Middle, palette::BLACK, &(top - k).to_string());
    }
}

/// The last move the viewer was told of: `move 2 a5-1:a4 …` (omniscient) or
/// `move 2:g4-g5` (a seat that saw it); the first word after `move` that is a move.
fn last_move(events: &[String], seats: usize) -> Option<Move> {
    let event = events.iter().find(|e| e.starts_with("move "))?;
    event.split(' ').skip(1).find_map(|w| Move::parse(w, seats).ok())
}

/// Who moves, the seats out, what the fog means, and the last ply.
fn notes(pos: &Position, seen: &[bool], scene: &Scene) -> Vec<String> {
    let mut notes = vec![format!("seat {} to move, {} plies", pos.to_move, pos.plies)];
    if !pos.out.is_empty() {
        let out: Vec<String> = pos.out.iter().map(Seat::to_string).collect();
        notes.push(format!("out of the game: seat {}", out.join(", seat ")));
    }
    if let Some(seat) = scene.seat {
        let fog = seen.iter().filter(|s| !**s).count();
        notes.push(format!("dark grey: {fog} squares seat {seat} cannot see"));
    }
    notes.extend(last_line(scene));
    notes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_hold_two_areas_so_more_seats_make_the_picture_taller_not_smaller() {
        assert_eq!(Layout::new(2).per_row, 2);
        assert_eq!(Layout::new(3).per_row, 2);
        assert_eq!(Layout::new(8).per_row, 2);
        assert_eq!(Layout::new(8).width(), Layout::new(2).width());
        assert!(Layout::new(8).height() > Layout::new(2).height());
        // Areas of one row do not overlap.
        let layout = Layout::new(3);
        let (a, _) = layout.origin(Area::Private(0));
        let (b, _) = layout.origin(Area::Private(1));
        assert!(b - a >= 8.0 * SQ, "{}", b - a);
    }

    #[test]
    fn each_seat_count_has_its_own_fixed_parts_and_each_square_is_drawn_where_it_lies() {
        for seats in [8, 3, 2, 3] {
            let (fixed, layout) = (Fixed::of(seats), Layout::new(seats));
            assert_eq!(fixed.squares.len(), AREA * (seats + 1));
            assert_eq!(fixed.labels.len(), seats + 1);
            for (i, (bare, fog)) in fixed.squares.iter().zip(&fixed.fog).enumerate() {
                let (bare, fog) = (bare.as_str(), fog.as_str());
                let (x, y) = layout.cell(Square::from_index(i));
                let at = format!("x=\"{}\" y=\"{}\"", x, y);
                assert!(bare.contains(&at) && bare.contains("square"), "{bare} at {at}");
                assert!(fog.contains(&at) && fog.contains(FOG), "{fog} at {at}");
            }
        }
    }

    #[test]
    fn every_piece_on_every_square_has_a_drawing_of_its_own() {
        let (fixed, layout) = (Fixed::of(3), Layout::new(3));
        // Twice over: the second pass reads what the first stored, so two pieces
        // sharing a slot would show as the wrong drawing.
        for _ in 0..2 {
            for i in 0..AREA * 4 {
                for (owner, kind) in (0..3).flat_map(|s| Kind::ALL.map(|k| (s, k))) {
                    let p = Piece {
                        kind,
                        owner: Seat::from_index(owner),
                    };
                    let centre = layout.centre(Square::from_index(i));
                    let fresh = Svg::drawn(|svg| draw_piece(svg, centre, p));
                    assert_eq!(fixed.piece(i, p).as_str(), fresh.as_str(), "{p:?} on {i}");
                }
            }
        }
    }
}
