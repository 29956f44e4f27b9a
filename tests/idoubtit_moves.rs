//! Moves of I-Doubt-It TelnChes (RULES.md §3: R-D4 well-formed, R-D5 correct, R-D6a
//! effects as declared): perft against the product owner's table (`fixtures/idoubtit/perft.txt`),
//! agreement with the `shogi_legality_lite` move generator on random shogi positions,
//! every piece's pattern from every square, drops, en passant, promotions and benches
//! (hand-built cases in `fixtures/idoubtit/cases.txt`).
//!
//! Expectations never come from the code under test: piece patterns are drawn below as
//! diagrams and turned into moves by this file's own little generator (`Reference`).

mod cli_support;

use std::collections::BTreeSet;
use std::time::Instant;

use referee::game::idoubtit::board::{BoardKind, Kind, Piece, Side, Square};
use referee::game::idoubtit::notation::{Action, Promotion};
use referee::game::idoubtit::rules::{Phase, Position, Variant};
use referee::game::idoubtit::state;
use referee::game::{Game, GameId, Options, Rejection, Seat, Turn};
use referee::rng::Rng;

// ---------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------

const CHESS_START: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR play w - - - - 0 -";
const SHOGI_START: &str = "lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL play w - - - - 0 -";

fn variant(n: u32) -> Variant {
    Variant::from_number(n).expect("variants 0..=15")
}

/// A position from a state string (omniscient).
fn position(n: u32, text: &str) -> Position {
    state::parse(text, variant(n), false).unwrap_or_else(|e| panic!("variant {n} `{text}`: {e:?}"))
}

/// A game of variant `n` from a state string, through the public game API.
fn create(n: u32, text: &str) -> Box<dyn Game> {
    let options = Options::parse([format!("variant={n}").as_str()]).expect("options");
    GameId::IDoubtIt
        .create(&options, Some(text))
        .unwrap_or_else(|e| panic!("variant {n} `{text}`: {e}"))
}

/// The seat to act; panics when the game is over.
fn to_act(g: &dyn Game) -> Seat {
    match g.turn() {
        Turn::Act { seat, .. } => seat,
        Turn::Over => panic!("game over: {:?}\n{}", g.diagram(None), g.state()),
    }
}

/// Plays `action` for the seat to act; returns the omniscient events.
fn play(g: &mut dyn Game, action: &str) -> Vec<String> {
    let seat = to_act(g);
    match g.play(seat, action) {
        Ok(played) => played.events,
        Err(e) => panic!("`{action}` rejected: {e}\n{}", g.diagram(None)),
    }
}

/// The board, White's bench and Black's bench of a state string.
fn board_and_benches(state: &str) -> String {
    let fields: Vec<&str> = state.split(" | ").next().unwrap_or("").split(' ').collect();
    format!("{} {} {}", fields[0], fields[3], fields[4])
}

fn square(text: &str, board: BoardKind) -> Square {
    Square::parse(text, board).unwrap_or_else(|| panic!("square `{text}`"))
}

/// An empty play-phase board of variant `n`, `side` to act.
fn empty(n: u32, side: Side) -> Position {
    let mut pos = Position::new(variant(n));
    pos.supply = Default::default();
    pos.phase = Phase::Play;
    pos.to_act = side;
    pos
}

fn piece(side: Side, kind: Kind, promoted: bool) -> Piece {
    Piece {
        promoted,
        ..Piece::new(side, kind)
    }
}

fn put(pos: &mut Position, at: Square, piece: Piece) {
    let board = pos.board();
    pos.squares[at.index(board)] = Some(piece);
}

fn names(squares: &BTreeSet<Square>) -> String {
    squares
        .iter()
        .map(Square::to_string)
        .collect::<Vec<_>>()
        .join(" ")
}

// ---------------------------------------------------------------------------
// Perft (the product owner's table; fixtures/idoubtit/perft.txt)
// ---------------------------------------------------------------------------

/// One line of the perft file.
struct PerftCase {
    line: usize,
    variant: u32,
    state: String,
    counts: Vec<u64>,
}

fn perft_cases() -> Vec<PerftCase> {
    let text = include_str!("../fixtures/idoubtit/perft.txt");
    let mut cases = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let fields: Vec<&str> = line.split(" | ").map(str::trim).collect();
        assert_eq!(fields.len(), 3, "perft.txt:{}: expected 3 fields: {raw}", i + 1);
        cases.push(PerftCase {
            line: i + 1,
            variant: fields[0].parse().expect("variant number"),
            state: fields[1].to_string(),
            counts: fields[2]
                .split_whitespace()
                .map(|c| c.parse().expect("count"))
                .collect(),
        });
    }
    cases
}

/// Checks every count of the perft file up to `max_depth`.
fn check_perft(max_depth: usize) {
    let cases = perft_cases();
    assert!(cases.len() >= 3, "perft.txt lists {} positions", cases.len());
    for case in &cases {
        let pos = position(case.variant, &case.state);
        for (d, &expected) in case.counts.iter().enumerate().take(max_depth) {
            let depth = d as u32 + 1;
            assert_eq!(
                pos.perft(depth),
                expected,
                "perft.txt:{}: variant {} depth {depth}",
                case.line,
                case.variant
            );
        }
    }
}

#[test]
fn r_d5_appendix_perft_to_depth_4() {
    check_perft(4);
}

/// Runs the depth-5 count of the perft file's position of `variant`, with timing.
fn perft_5(variant: u32) {
    let case = perft_cases()
        .into_iter()
        .find(|c| c.variant == variant && c.counts.len() >= 5)
        .expect("a depth-5 count");
    let pos = position(case.variant, &case.state);
    let start = Instant::now();
    let nodes = pos.perft(5);
    let took = start.elapsed();
    println!("variant {variant} perft(5) = {nodes} in {took:.2?}");
    assert_eq!(nodes, case.counts[4], "perft.txt:{}", case.line);
}

#[test]
#[ignore = "slow in debug builds: cargo test --release --test idoubtit_moves -- --ignored"]
fn r_d5_appendix_perft_5_chess() {
    perft_5(0);
}

#[test]
#[ignore = "slow in debug builds: cargo test --release --test idoubtit_moves -- --ignored"]
fn r_d5_appendix_perft_5_chess_drops() {
    perft_5(1);
}

#[test]
#[ignore = "slow in debug builds: cargo test --release --test idoubtit_moves -- --ignored"]
fn r_d5_appendix_perft_5_shogi_drops() {
    perft_5(9);
}

/// Perft's first two plies agree with what the game itself lists and plays: each
/// correct action played through `Game::play` (undoubted) leaves the opponent as many
/// correct actions as perft counts below it.
#[test]
fn r_d5_perft_agrees_with_the_game_api() {
    for (n, start) in [(0, CHESS_START), (1, CHESS_START), (9, SHOGI_START)] {
        let g = create(n, start);
        let pos = position(n, start);
        let first = g.correct_actions();
        assert_eq!(first.len() as u64, pos.perft(1), "variant {n}");
        let mut two = 0;
        for action in &first {
            let mut next = g.boxed_clone();
            play(next.as_mut(), action);
            let replies = next.correct_actions();
            let legal: BTreeSet<String> = next.legal_actions().into_iter().collect();
            for reply in &replies {
                assert!(
                    legal.contains(reply),
                    "variant {n}: {action} {reply} is correct but not legal"
                );
            }
            two += replies.len() as u64;
        }
        assert_eq!(two, pos.perft(2), "variant {n}");
    }
}

// ---------------------------------------------------------------------------
// Agreement with shogi_legality_lite (shogi board, drops)
// ---------------------------------------------------------------------------

mod oracle {
    //! Our position in `shogi_core` terms. Shogi numbers files 9..1 from sente's left
    //! and ranks 1..9 from gote's side: our file a is shogi file 9, our rank 1 (sente's
    //! back rank) is shogi rank 9 (`i`). Our White is sente, `Color::Black`.

    use super::*;
    use shogi_core::{Color, Move, PartialPosition, PieceKind, ToUsi};

    pub fn color(side: Side) -> Color {
        match side {
            Side::White => Color::Black,
            Side::Black => Color::White,
        }
    }

    pub fn square(sq: Square) -> shogi_core::Square {
        shogi_core::Square::new(9 - sq.file, 9 - sq.rank).expect("on the 9×9 board")
    }

    pub fn kind(kind: Kind, promoted: bool) -> PieceKind {
        let base = match kind {
            Kind::King => PieceKind::King,
            Kind::Rook => PieceKind::Rook,
            Kind::Bishop => PieceKind::Bishop,
            Kind::Gold => PieceKind::Gold,
            Kind::Silver => PieceKind::Silver,
            Kind::Knight => PieceKind::Knight,
            Kind::Lance => PieceKind::Lance,
            Kind::Pawn => PieceKind::Pawn,
            other => panic!("{other:?} is not a shogi piece"),
        };
        if promoted {
            base.promote().expect("a promotable kind")
        } else {
            base
        }
    }

    pub fn piece(p: Piece) -> shogi_core::Piece {
        shogi_core::Piece::new(kind(p.kind, p.promoted), color(p.owner))
    }

    /// The board, both hands and the side to move.
    pub fn partial(pos: &Position) -> PartialPosition {
        let mut pp = PartialPosition::empty();
        for sq in BoardKind::Shogi.all_squares() {
            if let Some(p) = pos.at(sq) {
                pp.piece_set(square(sq), Some(piece(p)));
            }
        }
        for side in Side::BOTH {
            for p in &pos.benches[side] {
                assert!(!p.promoted, "benches hold unpromoted pieces (R-D5)");
                let hand = pp.hand_of_a_player_mut(color(side));
                *hand = hand.added(kind(p.kind, false)).expect("a hand piece");
            }
        }
        pp.side_to_move_set(color(pos.to_act));
        pp
    }

    /// One of our moves or drops as a `shogi_core` move.
    pub fn action(pos: &Position, a: &Action) -> Move {
        match *a {
            Action::Move { from, to, promotion } => Move::Normal {
                from: square(from),
                to: square(to),
                promote: promotion != Promotion::None,
            },
            Action::Drop { slot, to } => Move::Drop {
                piece: piece(pos.benches[pos.to_act][slot as usize - 1]),
                to: square(to),
            },
            other => panic!("{other} has no shogi counterpart"),
        }
    }

    pub fn usi(m: Move) -> String {
        m.to_usi_owned()
    }
}

/// Our start string is the standard shogi start position.
#[test]
fn r_d2_shogi_start_matches_the_oracle() {
    let ours = oracle::partial(&position(9, SHOGI_START));
    let theirs = shogi_core::PartialPosition::startpos();
    for sq in shogi_core::Square::all() {
        assert_eq!(ours.piece_at(sq), theirs.piece_at(sq), "{sq:?}");
    }
    assert_eq!(ours.side_to_move(), theirs.side_to_move());
}

/// Tallies of what the random-play comparison saw.
#[derive(Debug, Default)]
struct Seen {
    positions: usize,
    moves: usize,
    drops: usize,
    promotions: usize,
    king_captures: usize,
    pawn_drop_mates: usize,
}

/// Compares our correct actions in `pos` with the oracle's moves that ignore king
/// safety, modulo the two documented differences: the oracle never captures a king,
/// and it forbids pawn-drop mate (R-D5 has no such rule).
fn compare_with_oracle(pos: &Position, seen: &mut Seen) {
    use shogi_legality_lite::prelegality;
    let pp = oracle::partial(pos);
    let theirs: BTreeSet<String> = prelegality::all_valid_moves(&pp).map(oracle::usi).collect();
    let mut ours = BTreeSet::new();
    for a in pos.correct_actions() {
        let m = oracle::action(pos, &a);
        if let Action::Move { to, .. } = a {
            if pos.at(to).is_some_and(|p| p.kind == Kind::King) {
                seen.king_captures += 1;
                assert!(
                    !theirs.contains(&oracle::usi(m)),
                    "the oracle captures a king: {a}"
                );
                continue;
            }
        }
        ours.insert(oracle::usi(m));
    }
    let diagram = || format!("{}\n{}", state::print(pos, state::Lens::All), pp.to_sfen_owned());
    let missing: Vec<&String> = theirs.difference(&ours).collect();
    assert!(
        missing.is_empty(),
        "the oracle has {missing:?}, we do not\n{}",
        diagram()
    );
    for extra in ours.difference(&theirs) {
        // Only a pawn drop that mates may be ours alone.
        let m = pos
            .correct_actions()
            .into_iter()
            .map(|a| oracle::action(pos, &a))
            .find(|m| &oracle::usi(*m) == extra)
            .expect("ours");
        let pawn_drop = match m {
            shogi_core::Move::Drop { piece, .. } => piece.piece_kind() == shogi_core::PieceKind::Pawn,
            shogi_core::Move::Normal { .. } => false,
        };
        let mut after = pp.clone();
        after.make_move(m).expect("a drop on an empty square");
        assert!(
            pawn_drop && prelegality::is_mate(&after) == Some(true),
            "we have {extra}, the oracle does not\n{}",
            diagram()
        );
        seen.pawn_drop_mates += 1;
    }
    seen.positions += 1;
    seen.moves += ours.len();
    seen.drops += ours.iter().filter(|m| m.contains('*')).count();
    seen.promotions += ours.iter().filter(|m| m.ends_with('+')).count();
}

/// Random correct play from the shogi start (variant 9), through the game API; every
/// position reached is compared with the oracle. A game that reaches a king capture
/// (R-D7) or 120 actions starts over.
#[test]
fn r_d5_shogi_moves_agree_with_shogi_legality_lite() {
    let mut rng = Rng::new(0x1d0b_7170);
    let mut seen = Seen::default();
    let mut games = 0;
    while seen.positions < 1000 {
        games += 1;
        let mut g = create(9, SHOGI_START);
        for _ in 0..120 {
            let pos = position(9, &g.state());
            if pos.phase != Phase::Play {
                break; // a king was captured
            }
            compare_with_oracle(&pos, &mut seen);
            let correct = g.correct_actions();
            if correct.is_empty() {
                break;
            }
            let pick = correct[rng.below(correct.len())].clone();
            play(g.as_mut(), &pick);
        }
    }
    println!("{games} games: {seen:?}");
    assert!(
        seen.drops > 1000 && seen.promotions > 100 && seen.king_captures > 0,
        "{seen:?}"
    );
}

/// The documented differences, shown on purpose-built positions.
#[test]
fn r_d5_oracle_differences_are_king_captures_and_pawn_drop_mate() {
    use shogi_legality_lite::prelegality;
    // A pawn dropped on a8 mates the king on a9: the oracle forbids it, R-D5 does not.
    let pos = position(9, "kl7/9/1G7/9/9/9/9/9/9 play w P - - - 0 -");
    let drop = Action::Drop {
        slot: 1,
        to: square("a8", BoardKind::Shogi),
    };
    assert!(pos.correct_actions().contains(&drop));
    let m = oracle::action(&pos, &drop);
    assert_eq!(oracle::usi(m), "P*9b");
    assert!(!prelegality::is_valid(&oracle::partial(&pos), m));
    let mut seen = Seen::default();
    compare_with_oracle(&pos, &mut seen);
    assert_eq!(seen.pawn_drop_mates, 1);
    // Taking the king: ours, not the oracle's.
    let pos = position(9, "kl7/P8/1G7/9/9/9/9/9/9 play w - - - - 0 -");
    let take = Action::Move {
        from: square("a8", BoardKind::Shogi),
        to: square("a9", BoardKind::Shogi),
        promotion: Promotion::Promote,
    };
    assert!(pos.correct_actions().contains(&take));
    let mut seen = Seen::default();
    compare_with_oracle(&pos, &mut seen);
    assert_eq!(seen.king_captures, 1);
}

// ---------------------------------------------------------------------------
// Every piece's pattern from every square (independent reference)
// ---------------------------------------------------------------------------

/// Movement diagrams seen from White (forward = up), 5×5 around the piece `X`: `o` a
/// square it steps or leaps to, `*` the first square of a line it slides along until
/// blocked. Black's patterns are these upside down.
#[rustfmt::skip]
const PATTERNS: &[(BoardKind, Kind, bool, [&str; 5])] = {
    use BoardKind::{Chess, Shogi};
    use Kind::*;
    const KING: [&str; 5] = [
        ".....",
        ".ooo.",
        ".oXo.",
        ".ooo.",
        ".....",
    ];
    const QUEEN: [&str; 5] = [
        ".....",
        ".***.",
        ".*X*.",
        ".***.",
        ".....",
    ];
    const ROOK: [&str; 5] = [
        ".....",
        "..*..",
        ".*X*.",
        "..*..",
        ".....",
    ];
    const BISHOP: [&str; 5] = [
        ".....",
        ".*.*.",
        "..X..",
        ".*.*.",
        ".....",
    ];
    const KNIGHT: [&str; 5] = [
        ".o.o.",
        "o...o",
        "..X..",
        "o...o",
        ".o.o.",
    ];
    const DRAGON: [&str; 5] = [
        ".....",
        ".o*o.",
        ".*X*.",
        ".o*o.",
        ".....",
    ];
    const HORSE: [&str; 5] = [
        ".....",
        ".*o*.",
        ".oXo.",
        ".*o*.",
        ".....",
    ];
    const GOLD: [&str; 5] = [
        ".....",
        ".ooo.",
        ".oXo.",
        "..o..",
        ".....",
    ];
    const SILVER: [&str; 5] = [
        ".....",
        ".ooo.",
        "..X..",
        ".o.o.",
        ".....",
    ];
    const SHOGI_KNIGHT: [&str; 5] = [
        ".o.o.",
        ".....",
        "..X..",
        ".....",
        ".....",
    ];
    const LANCE: [&str; 5] = [
        ".....",
        "..*..",
        "..X..",
        ".....",
        ".....",
    ];
    const PAWN: [&str; 5] = [
        ".....",
        "..o..",
        "..X..",
        ".....",
        ".....",
    ];
    &[
        (Chess, King, false, KING),
        (Chess, Queen, false, QUEEN),
        (Chess, Rook, false, ROOK),
        (Chess, Bishop, false, BISHOP),
        (Chess, Knight, false, KNIGHT),
        (Shogi, King, false, KING),
        (Shogi, Rook, false, ROOK),
        (Shogi, Rook, true, DRAGON),
        (Shogi, Bishop, false, BISHOP),
        (Shogi, Bishop, true, HORSE),
        (Shogi, Gold, false, GOLD),
        (Shogi, Silver, false, SILVER),
        (Shogi, Silver, true, GOLD),
        (Shogi, Knight, false, SHOGI_KNIGHT),
        (Shogi, Knight, true, GOLD),
        (Shogi, Lance, false, LANCE),
        (Shogi, Lance, true, GOLD),
        (Shogi, Pawn, false, PAWN),
        (Shogi, Pawn, true, GOLD),
    ]
};

/// A board as this file's reference sees it: who stands where.
struct Reference {
    board: BoardKind,
    cells: Vec<Option<Piece>>,
}

impl Reference {
    fn of(pos: &Position) -> Reference {
        Reference {
            board: pos.board(),
            cells: pos.board().all_squares().map(|sq| pos.at(sq)).collect(),
        }
    }

    fn n(&self) -> i32 {
        match self.board {
            BoardKind::Chess => 8,
            BoardKind::Shogi => 9,
        }
    }

    fn get(&self, file: i32, rank: i32) -> Option<Option<Piece>> {
        let n = self.n();
        ((0..n).contains(&file) && (0..n).contains(&rank)).then(|| self.cells[(rank * n + file) as usize])
    }

    fn sq(file: i32, rank: i32) -> Square {
        Square {
            file: file as u8,
            rank: rank as u8,
        }
    }

    /// Where the piece on (`file`, `rank`) may go, computed from the diagrams (and the
    /// chess pawn's own rules).
    fn targets(&self, file: i32, rank: i32) -> BTreeSet<Square> {
        let me = self.get(file, rank).flatten().expect("a piece");
        let up = if me.owner == Side::White { 1 } else { -1 };
        let mut out = BTreeSet::new();
        if self.board == BoardKind::Chess && me.kind == Kind::Pawn {
            // One step to an empty square; two from the second rank over two empty
            // squares; a diagonal step forward onto an enemy.
            let home = if me.owner == Side::White { 1 } else { self.n() - 2 };
            if self.get(file, rank + up) == Some(None) {
                out.insert(Self::sq(file, rank + up));
                if rank == home && self.get(file, rank + 2 * up) == Some(None) {
                    out.insert(Self::sq(file, rank + 2 * up));
                }
            }
            for df in [-1, 1] {
                if let Some(Some(p)) = self.get(file + df, rank + up) {
                    if p.owner != me.owner {
                        out.insert(Self::sq(file + df, rank + up));
                    }
                }
            }
            return out;
        }
        let (_, _, _, diagram) = PATTERNS
            .iter()
            .find(|(b, k, promoted, _)| *b == self.board && *k == me.kind && *promoted == me.promoted)
            .unwrap_or_else(|| panic!("no diagram for {me:?}"));
        for (row, line) in diagram.iter().enumerate() {
            for (col, mark) in line.chars().enumerate() {
                let (df, dr) = (col as i32 - 2, (2 - row as i32) * up);
                let mut k = 1;
                loop {
                    let (f, r) = (file + k * df, rank + k * dr);
                    match (mark, self.get(f, r)) {
                        ('o' | '*', Some(None)) => {
                            out.insert(Self::sq(f, r));
                        }
                        ('o' | '*', Some(Some(p))) => {
                            if p.owner != me.owner {
                                out.insert(Self::sq(f, r));
                            }
                            break;
                        }
                        _ => break,
                    }
                    if mark == 'o' {
                        break;
                    }
                    k += 1;
                }
            }
        }
        out
    }
}

/// Checks `targets`, and the destinations `correct_actions` lists, for the piece on
/// `from` against the reference.
fn check_targets(pos: &Position, from: Square) {
    let expected = Reference::of(pos).targets(from.file as i32, from.rank as i32);
    let got: BTreeSet<Square> = pos.targets(from).into_iter().collect();
    let what = || {
        format!(
            "{:?} on {from}\n{}",
            pos.at(from),
            state::print(pos, state::Lens::All)
        )
    };
    assert_eq!(names(&got), names(&expected), "targets of {}", what());
    let mut pos = pos.clone();
    pos.to_act = pos.at(from).expect("a piece").owner;
    let listed: BTreeSet<Square> = pos
        .correct_actions()
        .into_iter()
        .filter_map(|a| match a {
            Action::Move { from: f, to, .. } if f == from => Some(to),
            _ => None,
        })
        .collect();
    assert_eq!(names(&listed), names(&expected), "correct moves of {}", what());
}

#[test]
fn r_d5_every_piece_from_every_square_on_an_empty_board() {
    let mut checked = 0;
    let chess_pawn = [(BoardKind::Chess, Kind::Pawn, false, [""; 5])];
    for &(board, kind, promoted, _) in PATTERNS.iter().chain(&chess_pawn) {
        let n = if board == BoardKind::Chess { 0 } else { 8 };
        for side in Side::BOTH {
            for from in board.all_squares() {
                let mut pos = empty(n, side);
                put(&mut pos, from, piece(side, kind, promoted));
                check_targets(&pos, from);
                checked += 1;
            }
        }
    }
    assert_eq!(checked, 2 * (64 * 6 + 81 * 14));
}

/// A few patterns written out square by square, so the diagrams are checked too.
#[test]
fn r_d5_patterns_spelled_out() {
    let cases: &[(u32, &str, &str, &str)] = &[
        (0, "N", "a1", "b3 c2"),
        (0, "n", "e4", "c3 c5 d2 d6 f2 f6 g3 g5"),
        (0, "K", "h8", "g7 g8 h7"),
        (0, "B", "c1", "a3 b2 d2 e3 f4 g5 h6"),
        (0, "R", "d4", "a4 b4 c4 d1 d2 d3 d5 d6 d7 d8 e4 f4 g4 h4"),
        (8, "G", "e5", "d5 d6 e4 e6 f5 f6"),
        (8, "g", "e5", "d4 d5 e4 e6 f4 f5"),
        (8, "S", "e5", "d4 d6 e6 f4 f6"),
        (8, "s", "e5", "d4 d6 e4 f4 f6"),
        (8, "N", "e5", "d7 f7"),
        (8, "n", "e5", "d3 f3"),
        (8, "N", "e8", ""),
        (8, "L", "e5", "e6 e7 e8 e9"),
        (8, "l", "e5", "e1 e2 e3 e4"),
        (8, "P", "e5", "e6"),
        (8, "p", "e5", "e4"),
        (8, "P", "e9", ""),
        (8, "+P", "e5", "d5 d6 e4 e6 f5 f6"),
        (8, "+l", "a1", "a2 b1"),
        (
            8,
            "+R",
            "a1",
            "a2 a3 a4 a5 a6 a7 a8 a9 b1 b2 c1 d1 e1 f1 g1 h1 i1",
        ),
        (8, "+B", "a1", "a2 b1 b2 c3 d4 e5 f6 g7 h8 i9"),
        (8, "K", "i9", "h8 h9 i8"),
    ];
    for &(n, token, at, expected) in cases {
        let board = variant(n).board;
        let side = if token
            .trim_start_matches('+')
            .starts_with(|c: char| c.is_uppercase())
        {
            Side::White
        } else {
            Side::Black
        };
        let letter = token
            .trim_start_matches('+')
            .chars()
            .next()
            .unwrap()
            .to_ascii_uppercase();
        let kind = Kind::from_letter(letter, board).expect("a kind");
        let mut pos = empty(n, side);
        let from = square(at, board);
        put(&mut pos, from, piece(side, kind, token.starts_with('+')));
        let got: BTreeSet<Square> = pos.targets(from).into_iter().collect();
        assert_eq!(names(&got), expected, "{token} on {at}");
        check_targets(&pos, from);
    }
}

#[test]
fn r_d5_sliders_stop_at_own_pieces_and_take_the_first_enemy() {
    let board = BoardKind::Chess;
    // Rook a1, own pawn a4, enemy knight f1 and enemy pawn h1 behind it.
    let mut pos = empty(0, Side::White);
    put(
        &mut pos,
        square("a1", board),
        piece(Side::White, Kind::Rook, false),
    );
    put(
        &mut pos,
        square("a4", board),
        piece(Side::White, Kind::Pawn, false),
    );
    put(
        &mut pos,
        square("f1", board),
        piece(Side::Black, Kind::Knight, false),
    );
    put(
        &mut pos,
        square("h1", board),
        piece(Side::Black, Kind::Pawn, false),
    );
    let got: BTreeSet<Square> = pos.targets(square("a1", board)).into_iter().collect();
    assert_eq!(names(&got), "a2 a3 b1 c1 d1 e1 f1");
    // Queen d4 boxed in by own pieces except one enemy on f6 and a free line to a1.
    let mut pos = empty(0, Side::White);
    put(
        &mut pos,
        square("d4", board),
        piece(Side::White, Kind::Queen, false),
    );
    for at in ["c4", "e4", "d3", "d5", "c5", "e3"] {
        put(&mut pos, square(at, board), piece(Side::White, Kind::Pawn, false));
    }
    put(
        &mut pos,
        square("f6", board),
        piece(Side::Black, Kind::Pawn, false),
    );
    let got: BTreeSet<Square> = pos.targets(square("d4", board)).into_iter().collect();
    assert_eq!(names(&got), "a1 b2 c3 e5 f6");
    // Shogi lance stops before its own piece; knight leaps over everything.
    let board = BoardKind::Shogi;
    let mut pos = empty(8, Side::White);
    put(
        &mut pos,
        square("e1", board),
        piece(Side::White, Kind::Lance, false),
    );
    put(
        &mut pos,
        square("e5", board),
        piece(Side::White, Kind::Gold, false),
    );
    put(
        &mut pos,
        square("b1", board),
        piece(Side::White, Kind::Knight, false),
    );
    for at in ["a2", "b2", "c2"] {
        put(&mut pos, square(at, board), piece(Side::Black, Kind::Pawn, false));
    }
    put(
        &mut pos,
        square("a3", board),
        piece(Side::White, Kind::Pawn, false),
    );
    put(
        &mut pos,
        square("c3", board),
        piece(Side::Black, Kind::Pawn, false),
    );
    let got: BTreeSet<Square> = pos.targets(square("e1", board)).into_iter().collect();
    assert_eq!(names(&got), "e2 e3 e4");
    let got: BTreeSet<Square> = pos.targets(square("b1", board)).into_iter().collect();
    assert_eq!(names(&got), "c3");
}

/// Random crowded boards: every piece of either side against the reference.
#[test]
fn r_d5_random_crowded_boards_agree_with_the_reference() {
    let mut rng = Rng::new(0x5eed_b10c);
    for (n, board) in [(0, BoardKind::Chess), (8, BoardKind::Shogi)] {
        let kinds = board.kinds();
        for _ in 0..300 {
            let mut pos = empty(n, Side::White);
            let count = 4 + rng.below(30);
            for _ in 0..count {
                let at = board.all_squares().nth(rng.below(board.squares())).unwrap();
                let side = Side::BOTH[rng.below(2)];
                let kind = kinds[rng.below(kinds.len())];
                let promoted = board == BoardKind::Shogi && kind.promotable_in_shogi() && rng.below(3) == 0;
                put(&mut pos, at, piece(side, kind, promoted));
            }
            for from in board.all_squares() {
                if pos.at(from).is_some() {
                    check_targets(&pos, from);
                }
            }
        }
    }
}

#[test]
fn r_d5_chess_pawns() {
    let board = BoardKind::Chess;
    let targets = |pieces: &[(&str, Side, Kind)], from: &str| -> String {
        let mut pos = empty(0, Side::White);
        for &(at, side, kind) in pieces {
            put(&mut pos, square(at, board), piece(side, kind, false));
        }
        let got: BTreeSet<Square> = pos.targets(square(from, board)).into_iter().collect();
        names(&got)
    };
    use Kind::{Knight, Pawn};
    use Side::{Black, White};
    // Single and double steps; the double only from the second rank.
    assert_eq!(targets(&[("e2", White, Pawn)], "e2"), "e3 e4");
    assert_eq!(targets(&[("e7", Black, Pawn)], "e7"), "e5 e6");
    assert_eq!(targets(&[("e3", White, Pawn)], "e3"), "e4");
    assert_eq!(targets(&[("e6", Black, Pawn)], "e6"), "e5");
    // Blocked straight ahead, by either side; a blocked first step blocks the second.
    assert_eq!(targets(&[("e2", White, Pawn), ("e3", Black, Knight)], "e2"), "");
    assert_eq!(targets(&[("e2", White, Pawn), ("e4", White, Knight)], "e2"), "e3");
    assert_eq!(targets(&[("e2", White, Pawn), ("e4", Black, Knight)], "e2"), "e3");
    // Diagonal steps only onto enemies.
    assert_eq!(
        targets(
            &[("e4", White, Pawn), ("d5", Black, Knight), ("f5", White, Knight)],
            "e4"
        ),
        "d5 e5"
    );
    assert_eq!(
        targets(
            &[("e5", Black, Pawn), ("d4", White, Pawn), ("f4", Black, Pawn)],
            "e5"
        ),
        "d4 e4"
    );
    assert_eq!(
        targets(
            &[("e4", White, Pawn), ("d5", Black, Knight), ("e5", Black, Pawn)],
            "e4"
        ),
        "d5"
    );
    // A pawn on its first rank (a drop) moves one step; on its last rank it is stuck.
    assert_eq!(targets(&[("e1", White, Pawn)], "e1"), "e2");
    assert_eq!(targets(&[("e8", Black, Pawn)], "e8"), "e7");
    assert_eq!(targets(&[("e8", White, Pawn)], "e8"), "");
    assert_eq!(targets(&[("e1", Black, Pawn)], "e1"), "");
    assert_eq!(targets(&[("a8", White, Pawn), ("b8", Black, Knight)], "a8"), "");
}

#[test]
fn r_d5_shogi_knight_lance_pawn_move_forward_only() {
    let board = BoardKind::Shogi;
    for (side, forward) in [(Side::White, 1i32), (Side::Black, -1)] {
        for kind in [Kind::Knight, Kind::Lance, Kind::Pawn] {
            let from = square("e5", board);
            let mut pos = empty(8, side);
            put(&mut pos, from, piece(side, kind, false));
            for to in pos.targets(from) {
                let ahead = (to.rank as i32 - from.rank as i32) * forward;
                assert!(ahead > 0, "{side:?} {kind:?} e5 reaches {to}");
            }
            assert!(!pos.targets(from).is_empty());
        }
    }
}

// ---------------------------------------------------------------------------
// Well-formed versus correct (R-D4, R-D5) through the game API
// ---------------------------------------------------------------------------

/// `legal` lists a move onto a square where a suffix is allowed both with and without
/// it (R-D4); `correct` lists only what the rules allow.
#[test]
fn r_d4_legal_lists_both_forms_of_a_possible_promotion() {
    let g = create(0, "8/4P3/8/8/8/8/8/8 play w - - - - 0 -");
    let legal: BTreeSet<String> = g.legal_actions().into_iter().collect();
    for a in ["e7e8", "e7e8q", "e7e8r", "e7e8b", "e7e8n", "e7a8q", "e7a8"] {
        assert!(legal.contains(a), "{a}");
    }
    assert!(!legal.contains("e7e6q"));
    let correct: BTreeSet<String> = g.correct_actions().into_iter().collect();
    assert_eq!(
        correct.into_iter().collect::<Vec<_>>(),
        ["e7e8b", "e7e8n", "e7e8q", "e7e8r"]
    );

    let g = create(8, "9/9/9/4S4/9/9/9/9/9 play w - - - - 0 -");
    let legal: BTreeSet<String> = g.legal_actions().into_iter().collect();
    for a in ["e6e7", "e6e7+", "e6a9+", "e6a1", "e6e5"] {
        assert!(legal.contains(a), "{a}");
    }
    assert!(!legal.contains("e6e5+"));
    let correct: BTreeSet<String> = g.correct_actions().into_iter().collect();
    assert_eq!(
        correct.into_iter().collect::<Vec<_>>(),
        ["d5", "d7", "d7+", "e7", "e7+", "f5", "f7", "f7+"].map(|t| format!("e6{t}"))
    );
}

/// An en-passant claim is well-formed only right after the two-square advance.
#[test]
fn r_d4_en_passant_only_right_after_the_advance() {
    let mut g = create(0, "8/3p3p/8/4P3/8/8/8/8 play b - - - - 0 -");
    play(g.as_mut(), "d7d5");
    assert!(g.legal_actions().contains(&"e5d6ep".to_string()));
    assert!(g.correct_actions().contains(&"e5d6ep".to_string()));
    assert!(!g.correct_actions().contains(&"e5d6".to_string()));
    play(g.as_mut(), "e5e6");
    play(g.as_mut(), "h7h6");
    assert!(!g.legal_actions().iter().any(|a| a.ends_with("ep")));
    let seat = to_act(g.as_ref());
    assert!(matches!(g.play(seat, "e6d7ep"), Err(Rejection::Illegal { .. })));
}

/// Chess drops are always correct: a pawn may go to any empty square, its first and
/// last ranks included.
#[test]
fn r_d5_chess_drops_are_always_correct() {
    let text = "8/8/8/3k4/8/8/8/8 play w P - - - 0 -";
    let g = create(1, text);
    let drops: BTreeSet<String> = g
        .correct_actions()
        .into_iter()
        .filter(|a| a.contains('@'))
        .collect();
    assert_eq!(drops.len(), 63);
    assert!(drops.contains("1@a1") && drops.contains("1@h8") && !drops.contains("1@d5"));
    let legal: BTreeSet<String> = g
        .legal_actions()
        .into_iter()
        .filter(|a| a.contains('@'))
        .collect();
    assert_eq!(legal, drops);
}

/// Shogi drops: the squares `correct` lists for each kind, from the rules written out.
#[test]
fn r_d5_shogi_drop_squares() {
    let board = BoardKind::Shogi;
    // Each side: its own unpromoted pawn on file c, its promoted pawn on d, an enemy
    // pawn on e; a bench of one piece of each kind.
    for (side, text) in [
        (Side::White, "9/9/9/9/9/9/2P1p4/3+P5/9 play w PLNGSRB - - - 0 -"),
        (Side::Black, "9/3+p5/2p1P4/9/9/9/9/9/9 play b - plngsrb - - 0 -"),
    ] {
        let pos = position(9, text);
        let occupied: BTreeSet<Square> = board.all_squares().filter(|&sq| pos.at(sq).is_some()).collect();
        for (slot, dropped) in pos.benches[side].iter().enumerate() {
            let got: BTreeSet<Square> = pos
                .correct_actions()
                .into_iter()
                .filter_map(|a| match a {
                    Action::Drop { slot: s, to } if s as usize == slot + 1 => Some(to),
                    _ => None,
                })
                .collect();
            let expected: BTreeSet<Square> = board
                .all_squares()
                .filter(|sq| !occupied.contains(sq))
                .filter(|sq| {
                    // Ranks counted from the dropper's side, 1..=9.
                    let rank = if side == Side::White {
                        sq.rank + 1
                    } else {
                        9 - sq.rank
                    };
                    match dropped.kind {
                        Kind::Pawn => rank <= 8 && sq.file != 2,
                        Kind::Lance => rank <= 8,
                        Kind::Knight => rank <= 7,
                        _ => true,
                    }
                })
                .collect();
            assert_eq!(names(&got), names(&expected), "{side:?} drops {:?}", dropped.kind);
        }
    }
}

/// A doubted incorrect drop or capture is undone with the benches exactly as before
/// (R-D4, R-D6).
#[test]
fn r_d6_undone_drop_and_capture_restore_the_benches() {
    for (text, action) in [
        ("9/9/9/9/9/9/9/9/8k play w PNL - - - 0 -", "3@e9"),
        ("9/9/9/9/9/9/9/9/4k4 play w PNL p - - 0 -", "2@e8"),
        ("4s4/9/9/9/4P4/9/9/9/4R4 play w PN l - - 0 -", "e1e9"),
    ] {
        let mut g = create(9, text);
        let before = g.state();
        play(g.as_mut(), action);
        assert_ne!(board_and_benches(&g.state()), board_and_benches(&before));
        let events = play(g.as_mut(), "doubt");
        assert!(
            events.contains(&"verdict incorrect".to_string()),
            "{action}: {events:?}"
        );
        assert_eq!(
            board_and_benches(&g.state()),
            board_and_benches(&before),
            "{action}"
        );
    }
}

// ---------------------------------------------------------------------------
// Hand-built cases (fixtures/idoubtit/cases.txt)
// ---------------------------------------------------------------------------

/// One line of the case file: `variant | state | actions | expected`.
struct Case<'a> {
    line: usize,
    variant: u32,
    state: &'a str,
    actions: Vec<&'a str>,
    expected: &'a str,
}

fn parse_cases(text: &str) -> Vec<Case<'_>> {
    cli_support::case_rows(text, 4)
        .into_iter()
        .map(|(line, fields)| Case {
            line,
            variant: fields[0].parse().expect("variant number"),
            state: fields[1],
            actions: fields[2].split_whitespace().collect(),
            expected: fields[3],
        })
        .collect()
}

/// What happened to the case's last action, in the case file's words.
fn run_case(case: &Case) -> String {
    let mut g = create(case.variant, case.state);
    let (last, prefix) = case.actions.split_last().expect("an action");
    for action in prefix {
        play(g.as_mut(), action);
    }
    let before = g.state();
    let listed = g.correct_actions().iter().any(|a| a == last);
    let seat = to_act(g.as_ref());
    match g.play(seat, last) {
        Err(rejection) => {
            assert_eq!(
                g.state(),
                before,
                "cases.txt:{}: a rejection changed the state",
                case.line
            );
            match rejection {
                Rejection::Illegal { .. } => "ill-formed".into(),
                Rejection::Malformed { .. } => "malformed".into(),
                other => format!("{other:?}"),
            }
        }
        Ok(_) => {
            let after = board_and_benches(&g.state());
            let events = play(g.as_mut(), "doubt");
            let verdict = if events.contains(&"verdict correct".to_string()) {
                "correct"
            } else if events.contains(&"verdict incorrect".to_string()) {
                "incorrect"
            } else {
                panic!("cases.txt:{}: no verdict in {events:?}", case.line)
            };
            let listing = match (verdict, listed) {
                ("correct", false) => " (but `correct` does not list it)",
                ("incorrect", true) => " (but `correct` lists it)",
                _ => "",
            };
            format!("{verdict}{listing} => {after}")
        }
    }
}

#[test]
fn r_d4_r_d5_r_d6a_cases_from_the_fixture_file() {
    let cases = parse_cases(include_str!("../fixtures/idoubtit/cases.txt"));
    assert!(cases.len() >= 100, "only {} cases", cases.len());
    let mut failures = Vec::new();
    for case in &cases {
        let got = run_case(case);
        // `correct`/`incorrect` may leave out the position after the action.
        let matches = match case.expected.contains(" => ") {
            true => got == case.expected,
            false => got.split(" => ").next() == Some(case.expected),
        };
        if !matches {
            failures.push(format!(
                "cases.txt:{}: variant {} `{}` {}\n  expected: {}\n  got:      {got}",
                case.line,
                case.variant,
                case.state,
                case.actions.join(" "),
                case.expected
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases failed:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}
