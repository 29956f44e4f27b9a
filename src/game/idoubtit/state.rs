//! State and view strings of I-Doubt-It TelnChes (grammar in protocol.md §3.2).
//!
//! `<board> <phase> <side> <bench-w> <bench-b> <supply-w> <supply-b> <plies> <ep>`,
//! then, while the last action may be doubted, `| <actor> <action>` and (in the
//! omniscient state only) `| <the state before that action>`. A view is the same
//! line with every type the seat may not see written `X`/`x`, hidden supplies as a
//! count `#n`, and no snapshot.

use super::board::{BoardKind, Kind, Piece, Side, Square};
use super::notation::{self, Action, Promotion};
use super::rules::{Pending, Phase, Position, Variant};
use crate::game::{parse_counter, push_decimal};

/// How to print types: all of them, or as one seat may see them.
#[derive(Clone, Copy)]
pub enum Lens<'a> {
    /// The omniscient state.
    All,
    /// The view of a seat: `sees(piece, pending_capture)` says which types it sees.
    Seat(Side, &'a dyn Fn(&Piece, bool) -> bool),
}

impl Lens<'_> {
    fn shows(&self, piece: &Piece, pending_capture: bool) -> bool {
        match self {
            Lens::All => true,
            Lens::Seat(_, sees) => sees(piece, pending_capture),
        }
    }
}

/// Prints one piece token: `[+]<letter>[']['^']['_']`, upper case for White.
fn token(out: &mut String, piece: &Piece, shown: bool) {
    if shown && piece.promoted {
        out.push('+');
    }
    let letter = if shown {
        piece.kind.letter()
    } else {
        Kind::Unknown.letter()
    };
    out.push(match piece.owner {
        Side::White => letter,
        Side::Black => letter.to_ascii_lowercase(),
    });
    if piece.origin != piece.owner {
        out.push('\'');
    }
    if piece.revealed.white {
        out.push('^');
    }
    if piece.revealed.black {
        out.push('_');
    }
}

/// The bench slot holding a capture that has not stood yet, if any.
pub fn pending_capture(pos: &Position) -> Option<(Side, usize)> {
    let p = pos.pending.as_ref()?;
    if pos.variant.drops == 0 {
        return None;
    }
    let captured = p.before.captures(p.actor, &p.action);
    let bench = &pos.benches[p.actor];
    (captured && !bench.is_empty()).then(|| (p.actor, bench.len() - 1))
}

/// Prints a position through `lens`, field by field in the grammar's order; as long
/// as the grammar, like [`parse_main`].
pub fn print(pos: &Position, lens: Lens<'_>) -> String {
    let board = pos.board();
    let n = board.size();
    // Room for a view with a pending action, so that printing never reallocates.
    let mut s = String::with_capacity(192);
    // A run of empty squares is at most a rank long: one digit on these boards.
    debug_assert!(n <= 9);
    let push_run = |s: &mut String, run: u8| {
        if run > 0 {
            s.push(char::from(b'0' + run));
        }
    };
    for rank in (0..n).rev() {
        let mut empty = 0u8;
        for file in 0..n {
            match pos.at(Square { file, rank }) {
                None => empty += 1,
                Some(p) => {
                    push_run(&mut s, empty);
                    empty = 0;
                    token(&mut s, &p, lens.shows(&p, false));
                }
            }
        }
        push_run(&mut s, empty);
        if rank > 0 {
            s.push('/');
        }
    }
    let phase = match pos.phase {
        Phase::Place => "place",
        Phase::Play => "play",
        Phase::Respond => "respond",
        Phase::Won => "won",
        Phase::Drawn => "drawn",
    };
    s.push(' ');
    s.push_str(phase);
    s.push(' ');
    s.push(if pos.phase == Phase::Drawn {
        '-'
    } else {
        pos.to_act.letter()
    });
    let held = pending_capture(pos);
    for side in Side::BOTH {
        s.push(' ');
        let bench = &pos.benches[side];
        if bench.is_empty() {
            s.push('-');
        }
        for (i, p) in bench.iter().enumerate() {
            token(&mut s, p, lens.shows(p, held == Some((side, i))));
        }
    }
    for side in Side::BOTH {
        s.push(' ');
        let supply = &pos.supply[side];
        let shown = lens.shows(&Piece::new(side, Kind::Pawn), false);
        if supply.is_empty() {
            s.push('-');
        } else if shown {
            supply.iter().for_each(|k| s.push(k.letter()));
        } else {
            s.push('#');
            push_decimal(&mut s, supply.len() as u32);
        }
    }
    s.push(' ');
    push_decimal(&mut s, pos.plies);
    s.push(' ');
    match pos.ep {
        Some(sq) => sq.push_to(&mut s),
        None => s.push('-'),
    }
    if let Some(p) = &pos.pending {
        s.push_str(" | ");
        s.push(p.actor.letter());
        s.push(' ');
        match lens {
            Lens::All => {
                p.action.push_to(&mut s);
                s.push_str(" | ");
                s.push_str(&print(&p.before, Lens::All));
            }
            Lens::Seat(viewer, _) => {
                push_public_action(&mut s, &p.action, p.actor, viewer);
                // The board after the action no longer shows what it took, and a
                // seat deciding whether to doubt needs to know (a pawn's diagonal
                // step is correct only as a capture): the capture is public.
                if let Some(sq) = p.before.captured_square(p.actor, &p.action) {
                    s.push_str(" capture ");
                    sq.push_to(&mut s);
                }
            }
        }
    }
    s
}

/// An action as `viewer` is told it: the type of a chess promotion claimed by the
/// other side is hidden as `?` (R-D10).
pub fn public_action(action: &Action, actor: Side, viewer: Side) -> String {
    let mut text = String::with_capacity(8);
    push_public_action(&mut text, action, actor, viewer);
    text
}

/// Appends [`public_action`].
pub fn push_public_action(out: &mut String, action: &Action, actor: Side, viewer: Side) {
    match action {
        Action::Move {
            from,
            to,
            promotion: Promotion::To(_),
        } if actor != viewer => {
            from.push_to(out);
            to.push_to(out);
            out.push('?');
        }
        _ => action.push_to(out),
    }
}

/// Parses a state string (or, with `view` set, a view string) for `variant`,
/// reporting every problem found. Hidden types come back as [`Kind::Unknown`]. The
/// main part, the pending part and the checks across fields follow one another.
pub fn parse(text: &str, variant: Variant, view: bool) -> Result<Position, Vec<String>> {
    let mut parts = text.splitn(3, " | ");
    let main = parts.next().unwrap_or("");
    let pending = parts.next();
    let snapshot = parts.next();
    let mut problems = Vec::new();
    let mut pos = parse_main(main, variant, view, &mut problems);
    match (pending, snapshot, view) {
        (None, None, _) => {}
        (Some(p), snapshot, _) => {
            let (actor, action) = match p.split_once(' ') {
                Some((a, act)) => (a, act),
                None => (p, ""),
            };
            let actor = actor
                .chars()
                .next()
                .filter(|_| actor.len() == 1)
                .and_then(Side::from_letter);
            // A view tells the square the pending action captured on.
            let (action, taken) = match action.split_once(" capture ") {
                Some((action, square)) if view => {
                    let taken = Square::parse(square, variant.board)
                        .ok_or_else(|| format!("`{square}` is not a square"));
                    match (parse_public_action(action, variant.board), taken) {
                        (Ok(a), Ok(sq)) => (Ok(a), Some(sq)),
                        (Err(e), _) | (_, Err(e)) => (Err(e), None),
                    }
                }
                _ => (parse_public_action(action, variant.board), None),
            };
            let before = match (snapshot, view) {
                (Some(s), false) => parse_main(s, variant, false, &mut problems),
                (None, true) => pos.clone(),
                (Some(_), true) => {
                    problems.push("a view carries no snapshot".into());
                    None
                }
                (None, false) => {
                    problems.push("a pending action needs `| <state before it>`".into());
                    None
                }
            };
            match (actor, action, before, pos.as_mut()) {
                (Some(actor), Ok(action), Some(mut before), Some(pos)) => {
                    // A view has no state before the action: what it knows of it is
                    // that an opponent's piece of unknown type stood where it took.
                    if let Some(sq) = taken {
                        before.put(sq, Some(Piece::new(actor.opponent(), Kind::Unknown)));
                    }
                    // A won game has no pending action: the answer to it decided the game.
                    if matches!(pos.phase, Phase::Place | Phase::Won)
                        || (!view && before.phase != Phase::Play)
                    {
                        problems.push("a pending action belongs to the play phase".into());
                    }
                    // The side to act (or to answer a king capture) is the actor's opponent.
                    if actor == pos.to_act && matches!(pos.phase, Phase::Play | Phase::Respond) {
                        problems.push("the pending action must be the opponent's".into());
                    }
                    pos.pending = Some(Box::new(Pending {
                        actor,
                        action,
                        before,
                    }));
                }
                (actor, action, _, _) => {
                    if actor.is_none() {
                        problems.push("pending actor: expected w or b".into());
                    }
                    if let Err(e) = action {
                        problems.push(format!("pending action: {e}"));
                    }
                }
            }
        }
        (None, Some(_), _) => unreachable!("splitn yields in order"),
    }
    if let Some(pos) = &pos {
        if pos.phase == Phase::Respond && pos.pending.is_none() {
            problems.push("phase respond needs the pending king capture".into());
        }
    }
    match pos {
        Some(pos) if problems.is_empty() => Ok(pos),
        _ => Err(problems),
    }
}

/// A pending action in public form: a chess promotion may read `e7e8?`.
fn parse_public_action(text: &str, board: BoardKind) -> Result<Action, String> {
    match text.strip_suffix('?') {
        Some(base) => match notation::parse(base, board).map_err(|e| e.to_string())? {
            Action::Move { from, to, .. } => Ok(Action::Move {
                from,
                to,
                promotion: Promotion::To(Kind::Unknown),
            }),
            _ => Err(format!("`{text}`: only a promotion hides its type")),
        },
        None => notation::parse(text, board).map_err(|e| e.to_string()),
    }
}

/// Parses the 9 fields of a position without its pending part. The fields are read
/// in the grammar's order (protocol.md §3.2), one block each, so the function is as
/// long as the grammar.
fn parse_main(text: &str, variant: Variant, view: bool, problems: &mut Vec<String>) -> Option<Position> {
    let board = variant.board;
    let n = board.size() as usize;
    let fields: Vec<&str> = text.split(' ').collect();
    if fields.len() != 9 {
        problems.push(format!(
            "expected 9 fields `<board> <phase> <side> <bench-w> <bench-b> <supply-w> <supply-b> <plies> <ep>`, got {}",
            fields.len()
        ));
        return None;
    }
    let before = problems.len();
    let mut pos = Position::new(variant);
    let ranks: Vec<&str> = fields[0].split('/').collect();
    if ranks.len() != n {
        problems.push(format!("expected {n} ranks, got {}", ranks.len()));
    }
    for (row, rank_text) in ranks.iter().enumerate().take(n) {
        let rank = (n - 1 - row) as u8;
        let mut file = 0usize;
        match tokens(rank_text, board, view, true) {
            Err(e) => problems.push(format!("rank {}: {e}", rank + 1)),
            Ok(items) => {
                for item in items {
                    match item {
                        Item::Empty(k) => file += k,
                        Item::Piece(p) => {
                            if file < n {
                                pos.squares[Square {
                                    file: file as u8,
                                    rank,
                                }
                                .index(board)] = Some(p);
                            }
                            file += 1;
                        }
                    }
                }
                if file != n {
                    problems.push(format!(
                        "rank {}: `{rank_text}` covers {file} squares, expected {n}",
                        rank + 1
                    ));
                }
            }
        }
    }
    pos.phase = match fields[1] {
        "place" => Phase::Place,
        "play" => Phase::Play,
        "respond" => Phase::Respond,
        "won" => Phase::Won,
        "drawn" => Phase::Drawn,
        other => {
            problems.push(format!(
                "phase `{other}`: expected place, play, respond, won or drawn"
            ));
            Phase::Play
        }
    };
    match (fields[2], pos.phase) {
        ("-", Phase::Drawn) => {}
        (s, _) => match s
            .chars()
            .next()
            .filter(|_| s.len() == 1)
            .and_then(Side::from_letter)
        {
            Some(side) => pos.to_act = side,
            None => problems.push(format!("side `{s}`: expected w or b (`-` when drawn)")),
        },
    }
    for side in Side::BOTH {
        let text = fields[3 + side.index()];
        if text == "-" {
            continue;
        }
        match tokens(text, board, view, false) {
            Ok(items) => {
                for item in items {
                    if let Item::Piece(p) = item {
                        if p.owner != side {
                            problems.push(format!("{side}'s bench holds a piece of the other side"));
                        }
                        // R-D5: on the shogi board a captured piece unpromotes.
                        if p.promoted {
                            problems.push(format!("{side}'s bench holds a promoted piece (R-D5)"));
                        }
                        pos.benches[side].push(p);
                    }
                }
            }
            Err(e) => problems.push(format!("{side}'s bench: {e}")),
        }
        if variant.drops == 0 {
            problems.push("benches exist only in drop variants (d ≥ 1)".into());
        }
    }
    for side in Side::BOTH {
        let text = fields[5 + side.index()];
        pos.supply[side] = match text {
            "-" => Vec::new(),
            t if view && t.starts_with('#') => match t[1..].parse::<usize>() {
                Ok(k) => vec![Kind::Unknown; k],
                Err(_) => {
                    problems.push(format!("{side}'s supply `{t}`: expected #<count>"));
                    Vec::new()
                }
            },
            t => {
                let kinds: Vec<Option<Kind>> = t.chars().map(|c| Kind::from_letter(c, board)).collect();
                if kinds.iter().any(Option::is_none) {
                    problems.push(format!("{side}'s supply `{t}`: expected piece letters or `-`"));
                }
                let mut kinds: Vec<Kind> = kinds.into_iter().flatten().collect();
                let army = board.army();
                kinds.sort_by_key(|k| army.iter().position(|a| a == k));
                kinds
            }
        };
    }
    match parse_counter(fields[7]) {
        Ok(p) => pos.plies = p,
        Err(e) => problems.push(format!("plies {e}")),
    }
    pos.ep = match fields[8] {
        "-" => None,
        t => match Square::parse(t, board) {
            Some(sq) if board == BoardKind::Chess && (sq.rank == 2 || sq.rank == 5) => Some(sq),
            _ => {
                problems.push(format!(
                    "ep `{t}`: expected `-` or a square on rank 3 or 6 of the chess board"
                ));
                None
            }
        },
    };
    // The square an enemy two-square advance passed over is on the enemy's third rank.
    if let Some(sq) = pos
        .ep
        .filter(|_| matches!(pos.phase, Phase::Play | Phase::Respond))
    {
        if pos.to_act.opponent().relative_rank(sq.rank, board) != 2 {
            problems.push(format!(
                "ep `{sq}`: {} is to act, so no enemy advance passed over it",
                pos.to_act
            ));
        }
    }
    // Consistency: how many pieces exist of each side, and the phase.
    let army = board.army().len();
    for side in Side::BOTH {
        // What remains to place is part of the army; before play no piece has
        // changed type, so the pieces placed are part of it too.
        let placing = pos.phase == Phase::Place;
        for &kind in board.kinds() {
            let have = board.army().iter().filter(|&&k| k == kind).count();
            let supplied = pos.supply[side].iter().filter(|&&k| k == kind).count();
            let placed = pos
                .squares
                .iter()
                .flatten()
                .filter(|p| p.origin == side && p.kind == kind)
                .count();
            let used = supplied + if placing { placed } else { 0 };
            if used > have {
                problems.push(format!(
                    "{used} {} for {side}, the army has {have}",
                    kind.letter()
                ));
            }
        }
        let on_board = pos.squares.iter().flatten().filter(|p| p.origin == side).count();
        let benched = pos.benches.iter().flatten().filter(|p| p.origin == side).count();
        let total = on_board + benched + pos.supply[side].len();
        if total > army {
            problems.push(format!("{total} pieces placed for {side}, the army has {army}"));
        }
        // Nothing is taken before play, so placement holds the whole army (R-D3).
        if placing && total < army {
            problems.push(format!(
                "{total} pieces placed or to place for {side}, the army has {army}"
            ));
        }
    }
    let unplaced = pos.supply.iter().any(|s| !s.is_empty());
    if unplaced != (pos.phase == Phase::Place) {
        problems.push("pieces remain to be placed exactly in the placement phase".into());
    }
    (problems.len() == before).then_some(pos)
}

/// A parsed board or bench item.
enum Item {
    Empty(usize),
    Piece(Piece),
}

/// Splits a rank or bench text into tokens.
fn tokens(text: &str, board: BoardKind, view: bool, digits: bool) -> Result<Vec<Item>, String> {
    let mut out = Vec::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if digits && c.is_ascii_digit() && c != '0' {
            out.push(Item::Empty(c as usize - '0' as usize));
            continue;
        }
        let promoted = c == '+';
        let letter = if promoted {
            chars.next().ok_or("`+` at the end")?
        } else {
            c
        };
        let owner = if letter.is_ascii_uppercase() {
            Side::White
        } else {
            Side::Black
        };
        let kind = match letter.to_ascii_uppercase() {
            'X' if view => Kind::Unknown,
            u => Kind::from_letter(u, board)
                .ok_or_else(|| format!("`{letter}` is not a piece of this board"))?,
        };
        if promoted && (board == BoardKind::Chess || !kind.promotable_in_shogi()) {
            return Err(format!("`+{letter}`: only shogi R B S N L P promote"));
        }
        let mut piece = Piece::new(owner, kind);
        piece.promoted = promoted;
        while let Some(&m) = chars.peek() {
            match m {
                '\'' => piece.origin = owner.opponent(),
                '^' => piece.revealed.white = true,
                '_' => piece.revealed.black = true,
                _ => break,
            }
            chars.next();
        }
        out.push(Item::Piece(piece));
    }
    Ok(out)
}
