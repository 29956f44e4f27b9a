//! State and view strings of Multi-player TelnChes (grammar in protocol.md §3.4):
//! `<public> <area 1> … <area N> <to-move> <plies> <owners> <castling> <out>`.
//! Each area is its ranks from the top, `/`-separated, 8 cells per rank: `.` empty,
//! `<Type><seat>` a piece (`R1`), and in views `?` for a square the seat cannot see.

use super::board::{Area, Kind, Piece, Square};
use super::rules::Position;
use crate::game::{parse_counter, push_decimal, Seat};

/// Prints the position; with `seen`, unseen squares print `?` and the castling rights
/// of areas the seat does not fully see print `?`.
pub fn print(pos: &Position, seen: Option<(Seat, &[bool])>) -> String {
    let mut s = String::with_capacity(64 * (pos.seats + 1));
    let areas = std::iter::once(Area::Public).chain((0..pos.seats as u8).map(Area::Private));
    for (k, area) in areas.enumerate() {
        if k > 0 {
            s.push(' ');
        }
        let ranks: Vec<u8> = match area {
            Area::Public => (4..8).rev().collect(),
            Area::Private(_) => (0..4).rev().collect(),
        };
        for (r, rank) in ranks.into_iter().enumerate() {
            if r > 0 {
                s.push('/');
            }
            for file in 0..8 {
                let sq = Square { area, file, rank };
                match (seen.map(|(_, v)| v[sq.index()]), pos.at(sq)) {
                    (Some(false), _) => s.push('?'),
                    (_, None) => s.push('.'),
                    // Every view prints the whole board: no string per piece.
                    (_, Some(p)) => {
                        s.push(p.kind.letter());
                        push_decimal(&mut s, p.owner.number() as u32);
                    }
                }
            }
        }
    }
    s.push_str(&format!(" {} {} ", pos.to_move, pos.plies));
    let owners: Vec<String> = pos
        .owners
        .iter()
        .map(|o| o.map_or("-".into(), |s| s.to_string()))
        .collect();
    s.push_str(&owners.join(","));
    s.push(' ');
    let castling: Vec<String> = pos
        .castling
        .iter()
        .enumerate()
        .map(|(a, r)| match seen {
            Some((seat, _)) if !pos.sees_area(seat, a) => "?".to_string(),
            _ => match r {
                [true, true] => "KQ".into(),
                [true, false] => "K".into(),
                [false, true] => "Q".into(),
                [false, false] => "-".into(),
            },
        })
        .collect();
    s.push_str(&castling.join(","));
    s.push(' ');
    if pos.out.is_empty() {
        s.push('-');
    } else {
        let out: Vec<String> = pos.out.iter().map(Seat::to_string).collect();
        s.push_str(&out.join(","));
    }
    s
}

/// Parses a state string (or a view string, where `?` marks unseen squares, which
/// come back empty and unseen) for `seats` seats, reporting every problem found.
/// One block per field in the grammar's order (protocol.md §3.4), so the function is
/// as long as the grammar.
pub fn parse(text: &str, seats: usize, view: bool) -> Result<(Position, Vec<bool>), Vec<String>> {
    let mut problems = Vec::new();
    let fields: Vec<&str> = text.split(' ').collect();
    let want = seats + 6;
    if fields.len() != want {
        return Err(vec![format!(
            "expected {want} fields (public area, {seats} private areas, to-move, plies, owners, castling, out), got {}",
            fields.len()
        )]);
    }
    let mut pos = Position::start(seats);
    let mut seen = vec![true; pos.squares.len()];
    let areas = std::iter::once(Area::Public).chain((0..seats as u8).map(Area::Private));
    for (k, area) in areas.enumerate() {
        let name = match area {
            Area::Public => "public area".to_string(),
            Area::Private(a) => format!("area {}", a + 1),
        };
        let ranks: Vec<&str> = fields[k].split('/').collect();
        if ranks.len() != 4 {
            problems.push(format!(
                "{name}: expected 4 ranks separated by `/`, got {}",
                ranks.len()
            ));
            continue;
        }
        for (r, text) in ranks.iter().enumerate() {
            let rank = match area {
                Area::Public => 7 - r as u8,
                Area::Private(_) => 3 - r as u8,
            };
            match cells(text, seats, view) {
                Ok(cells) if cells.len() == 8 => {
                    for (file, (cell, visible)) in cells.into_iter().enumerate() {
                        let sq = Square {
                            area,
                            file: file as u8,
                            rank,
                        };
                        pos.squares[sq.index()] = cell;
                        seen[sq.index()] = visible;
                    }
                }
                Ok(cells) => problems.push(format!(
                    "{name} rank {}: {} cells, expected 8",
                    rank + 1,
                    cells.len()
                )),
                Err(e) => problems.push(format!("{name} rank {}: {e}", rank + 1)),
            }
        }
    }
    let seat = |t: &str| t.parse::<Seat>().ok().filter(|s| s.number() <= seats);
    match seat(fields[seats + 1]) {
        Some(s) => pos.to_move = s,
        None => problems.push(format!(
            "to-move `{}`: expected a seat from 1 to {seats}",
            fields[seats + 1]
        )),
    }
    match parse_counter(fields[seats + 2]) {
        Ok(p) => pos.plies = p,
        Err(e) => problems.push(format!("plies {e}")),
    }
    let owners: Vec<&str> = fields[seats + 3].split(',').collect();
    if owners.len() != seats {
        problems.push(format!("owners: expected {seats} comma-separated entries"));
    } else {
        for (a, o) in owners.iter().enumerate() {
            pos.owners[a] = match *o {
                "-" => None,
                t => match seat(t) {
                    Some(s) => Some(s),
                    None => {
                        problems.push(format!("owner of area {}: `{t}` is not a seat", a + 1));
                        None
                    }
                },
            };
        }
    }
    let castling: Vec<&str> = fields[seats + 4].split(',').collect();
    if castling.len() != seats {
        problems.push(format!("castling: expected {seats} comma-separated entries"));
    } else {
        for (a, c) in castling.iter().enumerate() {
            pos.castling[a] = match *c {
                "KQ" => [true, true],
                "K" => [true, false],
                "Q" => [false, true],
                "-" => [false, false],
                "?" if view => [false, false],
                t => {
                    problems.push(format!(
                        "castling of area {}: `{t}`: expected KQ, K, Q or -",
                        a + 1
                    ));
                    [false, false]
                }
            };
        }
    }
    pos.out = match fields[seats + 5] {
        "-" => Vec::new(),
        t => t
            .split(',')
            .filter_map(|w| match seat(w) {
                Some(s) => Some(s),
                None => {
                    problems.push(format!("out: `{w}` is not a seat"));
                    None
                }
            })
            .collect(),
    };
    for (k, s) in pos.out.iter().enumerate() {
        if pos.out[..k].contains(s) {
            problems.push(format!("out: seat {s} is listed twice"));
            continue;
        }
        if pos.squares.iter().flatten().any(|p| p.owner == *s) {
            problems.push(format!("seat {s} is out but still owns pieces"));
        }
        if pos.owners.contains(&Some(*s)) {
            problems.push(format!(
                "seat {s} is out but still owns a private area (R-M5, R-F1)"
            ));
        }
        if pos.to_move == *s {
            problems.push(format!("seat {s} is out but is to move"));
        }
    }
    if pos.out.len() >= seats {
        problems.push("at least one seat must still play".into());
    }
    // No seat has two kings: capturing its king is how a seat goes out (R-M5), and
    // nothing makes a second one. (Hand-built positions without kings are allowed for
    // studying moves; such a seat can only end by the ply limit.)
    for seat in Seat::all(seats) {
        let kings = pos
            .squares
            .iter()
            .flatten()
            .filter(|p| p.owner == seat && p.kind == Kind::King)
            .count();
        if kings > 1 {
            problems.push(format!("seat {seat} has {kings} kings; a seat has at most one"));
        }
    }
    if problems.is_empty() {
        Ok((pos, seen))
    } else {
        Err(problems)
    }
}

/// The 8 cells of a rank: piece (or empty) and whether it is seen.
fn cells(text: &str, seats: usize, view: bool) -> Result<Vec<(Option<Piece>, bool)>, String> {
    let mut out = Vec::new();
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match c {
            '.' => out.push((None, true)),
            '?' if view => out.push((None, false)),
            c => {
                let kind =
                    Kind::from_letter(c).ok_or_else(|| format!("`{c}` is not a piece letter, `.` or `?`"))?;
                let owner = chars
                    .next()
                    .and_then(|d| d.to_digit(10))
                    .and_then(|d| Seat::new(d as usize))
                    .filter(|s| s.number() <= seats)
                    .ok_or_else(|| format!("`{c}` must be followed by its owner's seat (1–{seats})"))?;
                out.push((Some(Piece { kind, owner }), true));
            }
        }
    }
    Ok(out)
}
