//! The Peg Chow / Telka state string (R-B9), e.g. the 4-player start
//! `yyyy3rrrr/yyyy3rrrr/yy7rr/yy7rr/11/11/11/bb7gg/bb7gg/bbbb3gggg/bbbb3gggg b 0`.
//!
//! After the colour to move and the move count, an optional `out=S,T` field lists
//! the seats that forfeited in a game of three independent sides (R-F1), in the order
//! they went out. Parsing reports every problem at once.

use super::board::{Colour, Point, POINTS, SIZE};
use super::rules::Position;
use super::seating::Seating;
use crate::game::{parse_counter, push_decimal, Seat};

/// Prints the state string of `pos` with the seats that are `out`.
pub fn print(pos: &Position, out: &[Seat]) -> String {
    // Every view is a state string, so this is on the referee's path once per action:
    // bytes into one allocation, no temporary strings, no formatting machinery.
    let mut s: Vec<u8> = Vec::with_capacity(96);
    // A run of empty points is at most a rank long.
    let push_run = |s: &mut Vec<u8>, n: u8| match n {
        0 => {}
        1..=9 => s.push(b'0' + n),
        _ => s.extend_from_slice(&[b'1', b'0' + n - 10]),
    };
    // Ranks from the 11th down; the board is stored rank by rank from a1.
    for (k, rank) in pos.board.chunks_exact(SIZE as usize).rev().enumerate() {
        let mut empty = 0u8;
        for cell in rank {
            match cell {
                None => empty += 1,
                Some(c) => {
                    push_run(&mut s, empty);
                    empty = 0;
                    s.push(c.letter() as u8);
                }
            }
        }
        push_run(&mut s, empty);
        if k + 1 < SIZE as usize {
            s.push(b'/');
        }
    }
    let mut s = String::from_utf8(s).expect("the board prints as ASCII");
    s.push(' ');
    s.push(pos.to_move.letter());
    s.push(' ');
    push_decimal(&mut s, pos.moves);
    for (i, seat) in out.iter().enumerate() {
        s.push_str(if i == 0 { " out=" } else { "," });
        push_decimal(&mut s, seat.number() as u64);
    }
    s
}

/// Parses a state string for `seating`, listing every problem found. One block per
/// field in the grammar's order (R-B9), so the function is as long as the grammar.
pub fn parse(text: &str, seating: &Seating) -> Result<(Position, Vec<Seat>), Vec<String>> {
    let mut problems = Vec::new();
    let fields: Vec<&str> = text.split(' ').collect();
    if !(3..=4).contains(&fields.len()) {
        return Err(vec![format!(
            "expected `<ranks> <colour to move> <moves> [out=<seats>]`, got {} space-separated fields",
            fields.len()
        )]);
    }
    let mut board = [None; POINTS];
    let ranks: Vec<&str> = fields[0].split('/').collect();
    if ranks.len() != SIZE as usize {
        problems.push(format!("expected 11 ranks separated by `/`, got {}", ranks.len()));
    }
    for (row, rank_text) in ranks.iter().enumerate().take(SIZE as usize) {
        let rank = SIZE as usize - row;
        let y = (rank - 1) as i8;
        let mut x = 0usize;
        let mut digits = String::new();
        let mut bad = false;
        let flush = |digits: &mut String, x: &mut usize, bad: &mut bool| {
            if !digits.is_empty() {
                match digits.parse::<usize>() {
                    Ok(n) if n >= 1 && !digits.starts_with('0') => *x += n,
                    _ => *bad = true,
                }
                digits.clear();
            }
        };
        for ch in rank_text.chars() {
            if ch.is_ascii_digit() {
                digits.push(ch);
                continue;
            }
            flush(&mut digits, &mut x, &mut bad);
            match Colour::from_letter(ch) {
                Some(c) if x < SIZE as usize => {
                    board[Point::new(x as i8, y).expect("checked").index()] = Some(c);
                    x += 1;
                }
                Some(_) => x += 1,
                None => {
                    problems.push(format!(
                        "rank {rank}: `{ch}` is not a counter (b y r g) or a count"
                    ));
                    bad = true;
                }
            }
        }
        flush(&mut digits, &mut x, &mut bad);
        if bad {
            problems.push(format!("rank {rank}: malformed `{rank_text}`"));
        } else if x != SIZE as usize {
            problems.push(format!(
                "rank {rank}: `{rank_text}` covers {x} points, expected 11"
            ));
        }
    }
    let to_move = match fields[1].chars().collect::<Vec<_>>().as_slice() {
        [c] => Colour::from_letter(*c),
        _ => None,
    };
    match to_move {
        None => problems.push(format!("colour to move `{}`: expected one of b y r g", fields[1])),
        Some(c) if !seating.colours().contains(&c) => {
            problems.push(format!("colour to move `{}` is not in play", c.letter()))
        }
        Some(_) => {}
    }
    let moves = parse_counter(fields[2]).map_err(|e| problems.push(format!("move count {e}")));
    let mut out = Vec::new();
    if let Some(field) = fields.get(3) {
        match field.strip_prefix("out=") {
            None => problems.push(format!("`{field}`: expected `out=<seats>`")),
            Some(list) => {
                for word in list.split(',') {
                    match word.parse::<Seat>() {
                        Ok(s) if s.number() <= seating.players() && !out.contains(&s) => out.push(s),
                        _ => problems.push(format!("out=: `{word}` is not a distinct seat of this seating")),
                    }
                }
                if seating.players() != 3 {
                    problems.push("out= only exists with three independent sides (R-F1)".into());
                }
                if out.len() >= seating.players() {
                    problems.push("out=: at least one seat must still play".into());
                }
            }
        }
    }
    for c in Colour::ALL {
        let n = board.iter().filter(|&&b| b == Some(c)).count();
        let owner = seating.owner(c);
        if n > 0 && owner.is_none() {
            problems.push(format!("{n} {c} counters, but {c} is not in play"));
        } else if n > 0 && owner.is_some_and(|s| out.contains(&s)) {
            problems.push(format!("{c} counters on the board, but its seat is out"));
        }
        if n > 12 {
            problems.push(format!("{n} {c} counters, at most 12 exist"));
        }
    }
    if let Some(owner) = to_move.and_then(|c| seating.owner(c)) {
        if out.contains(&owner) {
            problems.push("the colour to move belongs to a seat that is out".into());
        }
    }
    match (problems.is_empty(), to_move, moves) {
        (true, Some(to_move), Ok(moves)) => Ok((
            Position {
                board,
                to_move,
                moves,
            },
            out,
        )),
        _ => Err(problems),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const START4: &str = "yyyy3rrrr/yyyy3rrrr/yy7rr/yy7rr/11/11/11/bb7gg/bb7gg/bbbb3gggg/bbbb3gggg b 0";

    #[test]
    fn r_b9_start_string_matches_the_spec() {
        let seating = Seating::new(4, 1).unwrap();
        assert_eq!(print(&Position::start(&seating), &[]), START4);
        let (pos, out) = parse(START4, &seating).unwrap();
        assert_eq!(pos, Position::start(&seating));
        assert!(out.is_empty());
    }

    #[test]
    fn every_problem_is_reported() {
        let seating = Seating::new(2, 1).unwrap();
        let errs = parse("yyyy3rrrr/11/11/11/11/11/11/11/11/11/12x y -1", &seating).unwrap_err();
        let all = errs.join("\n");
        assert!(all.contains("rank 1"), "{all}");
        assert!(all.contains("colour to move `y` is not in play"), "{all}");
        assert!(all.contains("move count"), "{all}");
        assert!(all.contains("yellow is not in play"), "{all}");
        assert!(parse("", &seating).is_err());
        assert!(parse("11/11/11/11/11/11/11/11/11/11/11 b 0 out=1", &seating).is_err());
    }
}
