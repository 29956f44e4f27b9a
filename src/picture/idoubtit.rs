//! I-Doubt-It TelnChes as SVG: the chess or shogi board with the pieces as glyphs
//! (a neutral `?` where the viewer does not know the type), the two benches in
//! capture order with their slot numbers, the last move, and the action that may
//! still be doubted.

use std::sync::OnceLock;

use super::svg::{palette, Anchor, Svg};
use super::{last_line, Drawn, Scene, TOP};
use crate::game::idoubtit::board::{BoardKind, Kind, Piece, Side, Square};
use crate::game::idoubtit::notation::{self, Action};
use crate::game::idoubtit::rules::{Phase, Position};
use crate::game::idoubtit::{parse_options, state};
use crate::game::options::Options;

/// Side of a board square.
const SQ: f64 = 48.0;
/// Side of a bench slot.
const SLOT: f64 = 34.0;
/// Room left of and under the board for the labels.
const MARGIN: f64 = 30.0;
/// Light and dark squares of the chess board; the shogi board is one colour.
const LIGHT: &str = "#EEEEEE";
/// See [`LIGHT`].
const DARK: &str = "#BBBBBB";
/// The shogi board.
const WOOD: &str = "#F3E2B8";

/// Draws the state or view line `text` of an I-Doubt-It game.
pub(super) fn draw(svg: &mut Svg, text: &str, options: &Options, scene: &Scene) -> Result<Drawn, String> {
    let (variant, _) = parse_options(options).map_err(|e| e.to_string())?;
    let pos = state::parse(text, variant, scene.seat.is_some()).map_err(|e| e.join("; "))?;
    let board = variant.board;
    let n = board.size() as f64;
    squares(svg, board);
    for sq in board.all_squares() {
        if let Some(p) = pos.at(sq) {
            let (x, y) = corner(sq, board);
            piece(svg, &p, board, (x + SQ / 2.0, y + SQ / 2.0), SQ, "piece");
        }
    }
    if let Some(action) = last_action(&scene.last_events, board) {
        draw_last(svg, &action, board);
    }
    let width = (MARGIN + n * SQ + 16.0).max(16.0 + 12.0 * SLOT);
    let mut y = TOP + n * SQ + MARGIN + 8.0;
    // Benches exist only in the drop modes; elsewhere they would be two empty rows.
    if variant.drops > 0 {
        for side in Side::BOTH {
            y = bench(svg, &pos, side, y, width);
        }
    }
    let mut notes = vec![summary(&pos)];
    if let Some(p) = &pos.pending {
        let action = state::public_action(&p.action, p.actor, scene_side(scene, p.actor));
        notes.push(format!("may be doubted: {} {action}", p.actor.name()));
    }
    notes.extend(last_line(scene));
    Ok(Drawn {
        width,
        height: y - TOP,
        notes,
    })
}

/// The side an action is told to: the viewer's, or (omniscient) the actor's own, who
/// knows it in full.
fn scene_side(scene: &Scene, actor: Side) -> Side {
    match scene.seat {
        Some(seat) if seat.index() == 0 => Side::White,
        Some(_) => Side::Black,
        None => actor,
    }
}

/// The top-left corner of `sq` (White's first rank at the bottom).
fn corner(sq: Square, board: BoardKind) -> (f64, f64) {
    let n = board.size() as f64;
    (
        MARGIN + sq.file as f64 * SQ,
        TOP + (n - 1.0 - sq.rank as f64) * SQ,
    )
}

/// The squares with file letters under them and rank numbers to their left: the
/// same in every picture of a board, so drawn once per board (they were most of a
/// picture's elements).
fn squares(svg: &mut Svg, board: BoardKind) {
    static DRAWN: [OnceLock<Svg>; 2] = [const { OnceLock::new() }; 2];
    let slot = match board {
        BoardKind::Chess => 0,
        BoardKind::Shogi => 1,
    };
    svg.append(DRAWN[slot].get_or_init(|| Svg::drawn(|svg| draw_squares(svg, board))));
}

/// Draws what [`squares`] keeps.
fn draw_squares(svg: &mut Svg, board: BoardKind) {
    for sq in board.all_squares() {
        let (x, y) = corner(sq, board);
        let fill = match board {
            BoardKind::Shogi => WOOD,
            BoardKind::Chess if (sq.file + sq.rank) % 2 == 0 => DARK,
            BoardKind::Chess => LIGHT,
        };
        svg.rect((x, y, SQ, SQ), fill, "square");
    }
    let n = board.size();
    for k in 0..n {
        let (x, y) = corner(Square { file: k, rank: k }, board);
        let file = char::from(b'a' + k).to_string();
        let bottom = TOP + n as f64 * SQ + MARGIN / 2.0;
        svg.text(
            (x + SQ / 2.0, bottom),
            14.0,
            Anchor::Middle,
            palette::BLACK,
            &file,
        );
        svg.text(
            (MARGIN / 2.0, y + SQ / 2.0),
            14.0,
            Anchor::Middle,
            palette::BLACK,
            &(k + 1).to_string(),
        );
    }
}

/// The glyph of a piece: a Unicode chess symbol, a shogi letter (`+` before a
/// promoted one: letters render in every font, kanji do not), or `?` for a type
/// the viewer does not know.
fn glyph(p: &Piece, board: BoardKind) -> String {
    let chess = |k| match k {
        Kind::King => "♚",
        Kind::Queen => "♛",
        Kind::Rook => "♜",
        Kind::Bishop => "♝",
        Kind::Knight => "♞",
        _ => "♟",
    };
    match (board, p.kind) {
        (_, Kind::Unknown) => "?".to_string(),
        (BoardKind::Chess, k) => chess(k).to_string(),
        (BoardKind::Shogi, k) if p.promoted => format!("+{}", k.letter()),
        (BoardKind::Shogi, k) => k.letter().to_string(),
    }
}

/// One piece centred on `c` in a cell of side `size`: a disc in its owner's colour
/// (white or black) with the glyph on it, a promoted one's in vermillion.
fn piece(svg: &mut Svg, p: &Piece, board: BoardKind, c: (f64, f64), size: f64, class: &str) {
    let (disc, ink) = match p.owner {
        Side::White => (palette::PAPER, palette::BLACK),
        Side::Black => (palette::BLACK, palette::PAPER),
    };
    let ink = if p.promoted { palette::VERMILLION } else { ink };
    let class = match (p.kind, p.promoted) {
        (Kind::Unknown, _) => format!("{class} unknown"),
        (_, true) => format!("{class} promoted"),
        _ => class.to_string(),
    };
    let glyph = glyph(p, board);
    // Two characters (`+R`) need a smaller font to fit the disc.
    let font = if glyph.chars().count() > 1 { 0.42 } else { 0.55 };
    svg.open("g", &[("class", class.as_str())]);
    svg.circle(c, size * 0.42, disc, palette::BLACK);
    svg.text(c, size * font, Anchor::Middle, ink, &glyph);
    svg.close("g");
}

/// The last move, placement or drop the viewer was told of, read from its event
/// (`move white d1h8? capture h8`, `place black X@a2`, `drop white 2@e5`).
fn last_action(events: &[String], board: BoardKind) -> Option<Action> {
    events.iter().rev().find_map(|e| {
        let mut words = e.split(' ');
        let verb = words.next()?;
        let text = words.nth(1)?;
        if !matches!(verb, "move" | "place" | "drop") {
            return None;
        }
        // A placement of a type the viewer may not see reads `X@a2`, which is no
        // action; the picture only needs its square.
        if let Some((_, square)) = text.split_once('@') {
            let to = Square::parse(square, board)?;
            return Some(Action::Place {
                kind: Kind::Unknown,
                to,
            });
        }
        // A promotion whose type was hidden from the viewer reads `d1h8?`.
        notation::parse(text.strip_suffix('?').unwrap_or(text), board).ok()
    })
}

/// The last action: an arrow from where it started to where it went, or a ring on
/// the square a piece was placed or dropped on.
fn draw_last(svg: &mut Svg, action: &Action, board: BoardKind) {
    let centre = |sq: Square| {
        let (x, y) = corner(sq, board);
        (x + SQ / 2.0, y + SQ / 2.0)
    };
    svg.open("g", &[("class", "last-move"), ("opacity", "0.75")]);
    match *action {
        Action::Move { from, to, .. } | Action::EnPassant { from, to } => {
            svg.path(&[centre(from), centre(to)], palette::SKY, 7.0, "last-move-path");
            svg.circle(centre(to), 6.0, palette::SKY, palette::SKY);
        }
        Action::Place { to, .. } | Action::Drop { to, .. } => {
            svg.circle(centre(to), SQ * 0.47, "none", palette::SKY);
        }
        Action::Doubt | Action::Accept => {}
    }
    svg.close("g");
}

/// One side's bench in capture order, each piece above its slot number; returns the
/// height reached.
fn bench(svg: &mut Svg, pos: &Position, side: Side, y: f64, width: f64) -> f64 {
    let board = pos.variant.board;
    let pieces = &pos.benches[side];
    let label = format!("{} bench ({})", side.name(), pieces.len());
    svg.text((16.0, y + 8.0), 15.0, Anchor::Start, palette::BLACK, &label);
    let per_row = ((width - 32.0) / SLOT).floor().max(1.0) as usize;
    let mut bottom = y + 20.0;
    for (i, p) in pieces.iter().enumerate() {
        let (col, row) = (i % per_row, i / per_row);
        let x = 16.0 + col as f64 * SLOT;
        let top = y + 20.0 + row as f64 * (SLOT + 16.0);
        piece(
            svg,
            p,
            board,
            (x + SLOT / 2.0, top + SLOT / 2.0),
            SLOT,
            "bench-piece",
        );
        let slot = (i + 1).to_string();
        svg.text(
            (x + SLOT / 2.0, top + SLOT + 6.0),
            11.0,
            Anchor::Middle,
            palette::BLACK,
            &slot,
        );
        bottom = top + SLOT + 16.0;
    }
    bottom + 8.0
}

/// The phase, who acts, the pieces still to place and the play-phase actions made.
fn summary(pos: &Position) -> String {
    let phase = match pos.phase {
        Phase::Drawn => return format!("drawn after {} play-phase actions", pos.plies),
        Phase::Place => "to place",
        Phase::Play => "to move",
        Phase::Respond => "to answer the king capture",
        Phase::Won => "has won",
    };
    format!(
        "{} {phase}; to place: white {}, black {}; {} play-phase actions",
        pos.to_act.name(),
        pos.supply[Side::White].len(),
        pos.supply[Side::Black].len(),
        pos.plies
    )
}
