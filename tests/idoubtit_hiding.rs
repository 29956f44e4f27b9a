//! Information hiding in I-Doubt-It TelnChes (R-D9, R-D10, protocol.md §1.6), two ways.
//!
//! (a) Through the `Game` trait: on thousands of random positions of every variant, a
//! seat's view is exactly what an independent re-statement of R-D9 (written here, from
//! the state string alone) allows; changing anything the seat may not see leaves its
//! view and the legal actions byte-identical; changing a type it sees changes its view.
//!
//! (b) On the wire: two matches that differ only in hidden types of seat 1's pieces
//! send seat 2 the same lines, up to the first public fact that differs.

use std::path::Path;
use std::process::Command;

use referee::game::idoubtit::{self, rules::Variant};
use referee::game::{ActionKind, Game, GameId, Options, Seat, Turn};
use referee::rng::Rng;

fn seat(n: usize) -> Seat {
    Seat::new(n).unwrap()
}

fn options(variant: u32) -> Options {
    Options::parse([format!("variant={variant}").as_str()]).unwrap()
}

fn create(variant: u32, state: Option<&str>) -> Box<dyn Game> {
    GameId::IDoubtIt
        .create(&options(variant), state)
        .unwrap_or_else(|e| panic!("variant {variant}: cannot create from {state:?}: {e}"))
}

// ---- state strings, read independently of the crate's parser ----

/// One piece token: `[+]<letter><marks>`, the letter's case giving the owner.
#[derive(Clone, Debug, PartialEq)]
struct Token {
    promoted: bool,
    letter: char,
    marks: String,
}

impl Token {
    fn white(&self) -> bool {
        self.letter.is_ascii_uppercase()
    }
    fn hidden(&self) -> bool {
        self.letter.eq_ignore_ascii_case(&'x')
    }
    /// Owned by the other side than the one it was placed for (`'`).
    fn foreign(&self) -> bool {
        self.marks.contains('\'')
    }
    fn revealed_to(&self, white: bool) -> bool {
        self.marks.contains(if white { '^' } else { '_' })
    }
    /// The same piece with another type.
    fn with_kind(&self, promoted: bool, upper: char) -> Token {
        let letter = if self.white() {
            upper
        } else {
            upper.to_ascii_lowercase()
        };
        Token {
            promoted,
            letter,
            marks: self.marks.clone(),
        }
    }
    /// As a seat that may not see the type is shown it.
    fn masked(&self) -> Token {
        self.with_kind(false, 'X')
    }
    fn text(&self) -> String {
        format!(
            "{}{}{}",
            if self.promoted { "+" } else { "" },
            self.letter,
            self.marks
        )
    }
}

#[derive(Clone, Debug, PartialEq)]
enum Cell {
    Empty(char),
    Piece(Token),
}

fn tokenize(text: &str) -> Vec<Cell> {
    if text == "-" {
        return Vec::new();
    }
    let mut out = Vec::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c.is_ascii_digit() {
            out.push(Cell::Empty(c));
            continue;
        }
        let promoted = c == '+';
        let letter = if promoted {
            chars.next().expect("a letter after +")
        } else {
            c
        };
        assert!(letter.is_ascii_alphabetic(), "token in `{text}`");
        let mut marks = String::new();
        while let Some(&m) = chars.peek().filter(|m| "'^_".contains(**m)) {
            marks.push(m);
            chars.next();
        }
        out.push(Cell::Piece(Token {
            promoted,
            letter,
            marks,
        }));
    }
    out
}

fn render(cells: &[Cell]) -> String {
    if cells.is_empty() {
        return "-".into();
    }
    cells
        .iter()
        .map(|c| match c {
            Cell::Empty(d) => d.to_string(),
            Cell::Piece(t) => t.text(),
        })
        .collect()
}

/// The nine fields of a position: board ranks and benches as cells, the rest as text.
#[derive(Clone, Debug)]
struct Main {
    ranks: Vec<Vec<Cell>>,
    phase: String,
    side: String,
    benches: [Vec<Cell>; 2],
    supplies: [String; 2],
    plies: String,
    ep: String,
}

impl Main {
    fn parse(text: &str) -> Main {
        let f: Vec<&str> = text.split(' ').collect();
        assert_eq!(f.len(), 9, "`{text}`");
        Main {
            ranks: f[0].split('/').map(tokenize).collect(),
            phase: f[1].into(),
            side: f[2].into(),
            benches: [tokenize(f[3]), tokenize(f[4])],
            supplies: [f[5].into(), f[6].into()],
            plies: f[7].into(),
            ep: f[8].into(),
        }
    }

    fn render(&self) -> String {
        let board: Vec<String> = self.ranks.iter().map(|r| render(r)).collect();
        format!(
            "{} {} {} {} {} {} {} {} {}",
            board.join("/"),
            self.phase,
            self.side,
            render(&self.benches[0]),
            render(&self.benches[1]),
            self.supplies[0],
            self.supplies[1],
            self.plies,
            self.ep
        )
    }

    /// Every piece token, board first (rank by rank), then White's and Black's bench.
    fn tokens_mut(&mut self) -> Vec<&mut Token> {
        self.ranks
            .iter_mut()
            .chain(self.benches.iter_mut())
            .flatten()
            .filter_map(|c| match c {
                Cell::Piece(t) => Some(t),
                Cell::Empty(_) => None,
            })
            .collect()
    }

    fn tokens(&self) -> Vec<Token> {
        self.clone().tokens_mut().into_iter().map(|t| t.clone()).collect()
    }

    /// How many of [`Main::tokens`] stand on the board (the rest are on benches).
    fn board_token_count(&self) -> usize {
        self.ranks
            .iter()
            .flatten()
            .filter(|c| matches!(c, Cell::Piece(_)))
            .count()
    }

    /// The piece on `square` (`e4`), if any.
    fn at(&self, square: &str) -> Option<Token> {
        let (file, rank) = square.split_at(1);
        let x = usize::from(file.as_bytes()[0] - b'a');
        let row = self.ranks.len() - rank.parse::<usize>().unwrap();
        let mut cells = self.ranks[row].iter().flat_map(|c| match c {
            Cell::Empty(d) => vec![None; d.to_digit(10).unwrap() as usize],
            Cell::Piece(t) => vec![Some(t.clone())],
        });
        cells.nth(x).flatten()
    }
}

/// The square where `actor`'s pending `action` took an opponent's piece, read off the
/// snapshot of the state before it: a move's target, or for `ep` the square just
/// past the claimed one, where the piece that advanced two squares over it stands.
/// Drops take nothing.
fn pending_capture_square(before: &Main, actor: &str, action: &str) -> Option<String> {
    if action.contains('@') {
        return None;
    }
    let to = &action[2..4];
    let square = if action.ends_with("ep") {
        let rank: i32 = to[1..].parse().unwrap();
        format!("{}{}", &to[..1], if actor == "w" { rank - 1 } else { rank + 1 })
    } else {
        to.to_string()
    };
    let piece = before.at(&square)?;
    let white_owned = piece.letter.is_ascii_uppercase();
    (white_owned != (actor == "w")).then_some(square)
}

/// A state string split into its position, its pending action and its snapshot.
struct StateText {
    main: Main,
    pending: Option<(String, String)>,
    snapshot: Option<String>,
}

impl StateText {
    fn parse(text: &str) -> StateText {
        let mut parts = text.splitn(3, " | ");
        let main = Main::parse(parts.next().unwrap());
        let pending = parts.next().map(|p| {
            let (actor, action) = p.split_once(' ').expect("`<actor> <action>`");
            (actor.to_string(), action.to_string())
        });
        let snapshot = parts.next().map(str::to_string);
        StateText {
            main,
            pending,
            snapshot,
        }
    }

    fn render(&self) -> String {
        let mut s = self.main.render();
        if let Some((actor, action)) = &self.pending {
            s.push_str(&format!(" | {actor} {action}"));
        }
        if let Some(snap) = &self.snapshot {
            s.push_str(&format!(" | {snap}"));
        }
        s
    }
}

// ---- R-D9, re-stated ----

/// Whether seat `viewer_white` sees the type of `t` under `variant`, straight from the
/// ruling: with s = 1 a seat sees what its opponent would see with s = 0; d = 0 own
/// pieces; d = 1 pieces currently owned, plus those whose capture by the seat stood;
/// d = 2 pieces placed as its own, wherever they are; d = 3 as d = 1 plus every piece
/// whose capture stood. A capture not yet stood reveals nothing (`pending`).
fn may_see(variant: u32, viewer_white: bool, t: &Token, pending: bool) -> bool {
    let d = variant % 4;
    let q = if variant & 4 != 0 {
        !viewer_white
    } else {
        viewer_white
    };
    let owned = t.white() == q && !pending;
    let placed_for_white = t.white() != t.foreign();
    let placed_for_q = placed_for_white == q;
    match d {
        0 => owned,
        1 => owned || t.revealed_to(q),
        2 => placed_for_q,
        _ => owned || t.revealed_to(true) || t.revealed_to(false),
    }
}

/// The bench slot (side, index) holding a capture whose doubt window is still open:
/// the actor's bench grew by one over the snapshot.
fn pending_capture(state: &StateText) -> Option<(usize, usize)> {
    let (actor, _) = state.pending.as_ref()?;
    let side = if actor == "w" { 0 } else { 1 };
    let before = Main::parse(state.snapshot.as_ref().expect("a state has a snapshot"));
    let now = state.main.benches[side]
        .iter()
        .filter(|c| matches!(c, Cell::Piece(_)))
        .count();
    let then = before.benches[side]
        .iter()
        .filter(|c| matches!(c, Cell::Piece(_)))
        .count();
    (now == then + 1).then(|| (side, now - 1))
}

/// The view of `viewer_white` written from the omniscient state string alone.
fn expected_view(variant: u32, viewer_white: bool, state: &str) -> String {
    let st = StateText::parse(state);
    let held = pending_capture(&st);
    let mut main = st.main.clone();
    let mask = |t: &mut Token, pending: bool| {
        if !may_see(variant, viewer_white, t, pending) {
            *t = t.masked();
        }
    };
    for rank in &mut main.ranks {
        for cell in rank.iter_mut() {
            if let Cell::Piece(t) = cell {
                mask(t, false);
            }
        }
    }
    for (side, bench) in main.benches.iter_mut().enumerate() {
        for (i, cell) in bench.iter_mut().enumerate() {
            if let Cell::Piece(t) = cell {
                mask(t, held == Some((side, i)));
            }
        }
    }
    // A supply holds fresh pieces of its side: seen exactly by the seat that places them.
    let q = if variant & 4 != 0 {
        !viewer_white
    } else {
        viewer_white
    };
    for (side, supply) in main.supplies.iter_mut().enumerate() {
        if (side == 0) != q && supply != "-" {
            *supply = format!("#{}", supply.len());
        }
    }
    let mut view = main.render();
    if let Some((actor, action)) = &st.pending {
        // R-D10: a chess promotion by the other side is told without its type.
        let theirs = (actor == "w") != viewer_white;
        let chess_promotion = variant < 8 && action.len() == 5 && "qrbn".contains(&action[4..]);
        let shown = if theirs && chess_promotion {
            format!("{}?", &action[..4])
        } else {
            action.clone()
        };
        view.push_str(&format!(" | {actor} {shown}"));
        // R-D10: what the action took is public.
        let before = Main::parse(st.snapshot.as_deref().expect("a pending action has a snapshot"));
        if let Some(square) = pending_capture_square(&before, actor, action) {
            view.push_str(&format!(" capture {square}"));
        }
    }
    view
}

// ---- random positions ----

fn acts(g: &dyn Game) -> Option<(Seat, ActionKind)> {
    match g.turn() {
        Turn::Act { seat, kind } => Some((seat, kind)),
        Turn::Over => None,
    }
}

/// A random well-formed action (placements, moves, drops, doubts, answers to king
/// captures): often a correct one, sometimes a doubt.
fn random_action(g: &dyn Game, kind: ActionKind, rng: &mut Rng) -> String {
    let legal = g.legal_actions();
    if kind == ActionKind::Move {
        if legal.iter().any(|a| a == "doubt") && rng.below(5) == 0 {
            return "doubt".into();
        }
        let correct = g.correct_actions();
        if !correct.is_empty() && rng.below(3) != 0 {
            return correct[rng.below(correct.len())].clone();
        }
    }
    legal[rng.below(legal.len())].clone()
}

/// A random piece type of the variant's board (promoted only where shogi allows it).
fn random_kind(variant: u32, rng: &mut Rng) -> (bool, char) {
    let kinds: &[char] = if variant >= 8 {
        &['K', 'R', 'B', 'G', 'S', 'N', 'L', 'P']
    } else {
        &['K', 'Q', 'R', 'B', 'N', 'P']
    };
    let k = kinds[rng.below(kinds.len())];
    let promoted = variant >= 8 && "RBSNLP".contains(k) && rng.below(3) == 0;
    (promoted, k)
}

/// Changes the types of the tokens of `main` that `view` shows as `X`: a shuffle of their
/// types, or (with `anything`) arbitrary types. Returns how many tokens were hidden.
fn scramble_hidden(variant: u32, main: &mut Main, view: &Main, anything: bool, rng: &mut Rng) -> usize {
    let shown = view.tokens();
    let on_board = main.board_token_count();
    let mut tokens = main.tokens_mut();
    assert_eq!(tokens.len(), shown.len(), "the view shows every piece");
    let hidden: Vec<usize> = (0..shown.len()).filter(|&i| shown[i].hidden()).collect();
    let mut kinds: Vec<(bool, char)> = hidden
        .iter()
        .map(|&i| (tokens[i].promoted, tokens[i].letter.to_ascii_uppercase()))
        .collect();
    // Types are swapped among the board's hidden pieces, and among the benches': a
    // promoted piece never reaches a shogi bench (R-D5), which the parser refuses.
    let split = hidden.iter().filter(|&&i| i < on_board).count();
    for range in [0..split, split..kinds.len()] {
        for i in range.clone().skip(1).rev() {
            kinds.swap(i, range.start + rng.below(i - range.start + 1));
        }
    }
    for (n, &i) in hidden.iter().enumerate() {
        let (promoted, upper) = if anything {
            random_kind(variant, rng)
        } else {
            kinds[n]
        };
        *tokens[i] = tokens[i].with_kind(promoted, upper);
    }
    hidden.len()
}

/// Arbitrary types for a supply the seat sees only as a count.
fn scramble_supply(variant: u32, supply: &mut String, shown: &str, anything: bool, rng: &mut Rng) {
    // Only with arbitrary types: the parser keeps supplies in army order, so a
    // permutation would change nothing.
    if anything && shown.starts_with('#') {
        let n = supply.len();
        *supply = (0..n).map(|_| random_kind(variant, rng).1).collect();
    }
}

/// (a) For one position and one seat: the view is R-D9's; hidden changes are invisible;
/// a visible change is not. Returns (hidden tokens changed, controls run).
fn check_seat(variant: u32, g: &dyn Game, s: Seat, rng: &mut Rng) -> (usize, usize) {
    let white = s.number() == 1;
    let state = g.state();
    let view = g.view(s).text().to_string();
    assert_eq!(
        view,
        expected_view(variant, white, &state),
        "variant {variant} seat {s} of\n{state}"
    );
    // Views never carry the snapshot, and never a type letter of a piece the seat may
    // not see (the equality above implies it; this states it directly).
    assert_eq!(view.matches(" | ").count(), state.matches(" | ").count().min(1));
    let st = StateText::parse(&state);
    let held = pending_capture(&st);
    let board_pieces = st
        .main
        .ranks
        .iter()
        .flatten()
        .filter(|c| matches!(c, Cell::Piece(_)))
        .count();
    let white_bench = st.main.benches[0].len();
    let held_index = held.map(|(side, i)| board_pieces + side * white_bench + i);
    let seen = Main::parse(view.split(" | ").next().unwrap()).tokens();
    for (i, t) in st.main.tokens().iter().enumerate() {
        if !may_see(variant, white, t, held_index == Some(i)) {
            assert!(
                seen[i].hidden() && !seen[i].promoted,
                "variant {variant} seat {s}: {t:?} in {view}"
            );
        }
    }
    let legal = g.legal_actions();
    // The view is complete: a stateless bot can read it back and find from it alone
    // every action it may submit (protocol.md §1.6).
    let parsed = idoubtit::state::parse(&view, Variant::from_number(variant).unwrap(), true)
        .unwrap_or_else(|e| panic!("variant {variant}: view refused: {e:?}\n{view}"));
    if acts(g).map(|(to_act, _)| to_act) == Some(s) {
        let from_view: Vec<String> = parsed
            .well_formed_actions()
            .iter()
            .map(|a| a.to_string())
            .collect();
        assert_eq!(from_view, legal, "variant {variant} seat {s}: {view}");
    }
    // In the placement phase the placer's options name its own supply, which the other
    // seat does not see; in play, well-formedness rests on public facts only.
    let compare_legal = g.turn() != Turn::Over
        && (acts(g).map(|(to_act, _)| to_act) == Some(s) || !state.contains(" place "));
    let view_main = Main::parse(view.split(" | ").next().unwrap());
    let mut changed = 0;
    for anything in [false, true] {
        let mut st = StateText::parse(&state);
        changed += scramble_hidden(variant, &mut st.main, &view_main, anything, rng);
        for side in 0..2 {
            scramble_supply(
                variant,
                &mut st.main.supplies[side],
                &view_main.supplies[side],
                anything,
                rng,
            );
        }
        if let Some(snap) = st.snapshot.clone() {
            // What the seat could not see of the position before the pending action.
            let before = create(variant, Some(&snap));
            let before_view = Main::parse(before.view(s).text());
            let mut snap_main = Main::parse(&snap);
            changed += scramble_hidden(variant, &mut snap_main, &before_view, anything, rng);
            st.snapshot = Some(snap_main.render());
        }
        let text = st.render();
        let h = match GameId::IDoubtIt.create(&options(variant), Some(&text)) {
            Ok(h) => h,
            // Arbitrary types can make an army no game has (the state parser refuses
            // it); swapping hidden types among themselves never does.
            Err(_) if anything => continue,
            Err(e) => panic!("scrambled state refused: {e}\n{text}"),
        };
        assert_eq!(
            h.view(s).text(),
            view,
            "variant {variant} seat {s}:\n{state}\n{text}"
        );
        assert_eq!(h.turn(), g.turn());
        if compare_legal {
            assert_eq!(
                h.legal_actions(),
                legal,
                "variant {variant} seat {s}:\n{state}\n{text}"
            );
        }
    }
    // Control: a type the seat sees, changed, changes its view.
    let mut controls = 0;
    let shown = view_main.tokens();
    let visible: Vec<usize> = (0..shown.len()).filter(|&i| !shown[i].hidden()).collect();
    if !visible.is_empty() {
        let i = visible[rng.below(visible.len())];
        let mut st = StateText::parse(&state);
        let mut tokens = st.main.tokens_mut();
        let old = tokens[i].letter.to_ascii_uppercase();
        // Swap with another visible piece of another type (the army stays one a game
        // can have); change it outright only when there is none.
        let other = visible.iter().copied().find(|&j| {
            tokens[j].letter.to_ascii_uppercase() != old && tokens[j].white() == tokens[i].white()
        });
        match other {
            Some(j) => {
                let theirs = tokens[j].letter.to_ascii_uppercase();
                *tokens[j] = tokens[j].with_kind(false, old);
                *tokens[i] = tokens[i].with_kind(false, theirs);
            }
            None => {
                let new = if old == 'P' { 'K' } else { 'P' };
                *tokens[i] = tokens[i].with_kind(false, new);
            }
        }
        let text = st.render();
        let Ok(h) = GameId::IDoubtIt.create(&options(variant), Some(&text)) else {
            // Changed outright into an army no game has: nothing to compare.
            return (changed, controls);
        };
        assert_ne!(
            h.view(s).text(),
            view,
            "variant {variant} seat {s}: a visible type changed\n{text}"
        );
        controls += 1;
    }
    (changed, controls)
}

/// Random games of one variant from the empty board, looked at in random positions:
/// during the placement, early in play and deep into it, and at the end. Returns the
/// number of positions checked.
fn hiding_variant(variant: u32) -> usize {
    let mut rng = Rng::new(20240917 + u64::from(variant));
    let (mut checked, mut changed, mut controls) = (0, 0, 0);
    while checked < 250 {
        let mut g = create(variant, None);
        for _ in 0..300 {
            if rng.below(6) == 0 || g.turn() == Turn::Over {
                for s in [seat(1), seat(2)] {
                    let (c, k) = check_seat(variant, &*g, s, &mut rng);
                    changed += c;
                    controls += k;
                }
                checked += 1;
            }
            let Some((s, kind)) = acts(&*g) else { break };
            let action = random_action(&*g, kind, &mut rng);
            g.play(s, &action)
                .unwrap_or_else(|e| panic!("legal `{action}` rejected: {e}"));
        }
    }
    assert!(
        changed > 5000,
        "variant {variant}: only {changed} hidden types changed"
    );
    assert!(controls > 200, "variant {variant}: only {controls} controls");
    checked
}

#[test]
fn r_d9_r_d9a_views_show_exactly_what_the_rule_allows_and_depend_on_nothing_hidden() {
    let threads: Vec<_> = (0..16)
        .map(|v| std::thread::spawn(move || hiding_variant(v)))
        .collect();
    let positions: usize = threads
        .into_iter()
        .map(|t| t.join().expect("a variant failed"))
        .sum();
    assert!(positions >= 4000, "{positions} positions");
}

/// The view texts of both seats.
fn views(g: &dyn Game) -> [String; 2] {
    [
        g.view(seat(1)).text().to_string(),
        g.view(seat(2)).text().to_string(),
    ]
}

#[test]
fn r_d9_a_capture_reveals_its_type_only_once_it_stands() {
    let start = "rnbqkbnr/pppp1ppp/8/4p3/3P4/8/PPP1PPPP/RNBQKBNR play w - - - - 2 -";
    let black_sees = "rnbqkbnr/pppp1ppp/8/4X3/8/8/XXX1XXXX/XXXXXXXX";
    let white_sees = "xxxxxxxx/xxxx1xxx/8/4P3/8/8/PPP1PPPP/RNBQKBNR";
    // d = 1: while the capture may be doubted, nobody sees the pawn on White's bench.
    let mut g = create(1, Some(start));
    g.play(seat(1), "d4e5").unwrap();
    assert_eq!(
        views(&*g),
        [
            format!("{white_sees} play b X' - - - 3 - | w d4e5 capture e5"),
            format!("{black_sees} play b X' - - - 3 - | w d4e5 capture e5")
        ]
    );
    // A doubt that finds it correct makes it stand: White (only) sees it now.
    g.play(seat(2), "doubt").unwrap();
    assert_eq!(
        views(&*g),
        [
            format!("{white_sees} play w P'^ - - - 4 -"),
            format!("{black_sees} play w X'^ - - - 4 -")
        ]
    );
    // A doubt that finds it incorrect undoes it: nothing was revealed.
    let mut g = create(1, Some(start));
    g.play(seat(1), "d1d7").unwrap();
    assert!(views(&*g)[0].contains(" play b X' - "), "{}", views(&*g)[0]);
    g.play(seat(2), "doubt").unwrap();
    assert!(views(&*g)[0].starts_with("xxxxxxxx/xxxx1xxx/8/4x3/3P4/8/PPP1PPPP/RNBQKBNR play b - - "));
    // Black acting without doubting makes it stand as well.
    let mut g = create(1, Some(start));
    g.play(seat(1), "d4e5").unwrap();
    g.play(seat(2), "f8b4").unwrap();
    assert!(
        views(&*g)[0].contains(" play w P'^ - - - 4 - | b f8b4"),
        "{}",
        views(&*g)[0]
    );
    // d = 3: once it stands, both seats see it; d = 2: Black, who placed it, always did.
    let mut g = create(3, Some(start));
    g.play(seat(1), "d4e5").unwrap();
    assert!(views(&*g).iter().all(|v| v.contains(" X' - ")));
    g.play(seat(2), "f8b4").unwrap();
    assert!(
        views(&*g).iter().all(|v| v.contains(" P'^ - ")),
        "{:?}",
        views(&*g)
    );
    let mut g = create(2, Some(start));
    g.play(seat(1), "d4e5").unwrap();
    assert_eq!(views(&*g).map(|v| v.contains(" P' - ")), [false, true]);
    // s = 1 swaps it all: with d = 1 Black sees White's capture, White does not.
    let mut g = create(5, Some(start));
    g.play(seat(1), "d4e5").unwrap();
    g.play(seat(2), "f8b4").unwrap();
    assert_eq!(views(&*g).map(|v| v.contains(" P'^ - ")), [false, true]);
}

#[test]
fn r_d9_r_d10_a_king_capture_and_its_answer_reveal_nothing_else() {
    // Black's king is taken; its type is announced (R-D7), the capturing piece's is not.
    let mut g = create(1, Some("4k3/8/8/8/8/8/8/4Q1K1 play w - - - - 0 -"));
    let played = g.play(seat(1), "e1e8").unwrap();
    let to_black: Vec<&str> = played.seat_events[1].iter().map(|e| e.text()).collect();
    assert_eq!(to_black, ["move white e1e8 capture e8", "king-captured black"]);
    assert_eq!(
        g.view(seat(2)).text(),
        "4X3/8/8/8/8/8/8/6X1 respond b X' - - - 1 - | w e1e8 capture e8"
    );
    g.play(seat(2), "accept").unwrap();
    assert_eq!(g.view(seat(2)).text(), "4X3/8/8/8/8/8/8/6X1 won w X'^ - - - 2 -");
}

// ---- (b) on the wire ----

/// The scripted agent `fixtures/bots/scripted_on_view.sh`.
fn spy_command(actions: &[&str]) -> String {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/bots/scripted_on_view.sh");
    let mut words = vec!["sh".to_string(), script.to_string_lossy().into_owned()];
    words.extend(actions.iter().map(|a| a.to_string()));
    shell_words::join(words)
}

/// Plays a match from `state`: seat 1 the scripted agent playing `actions`, seat 2 the
/// built-in `fill` agent with `seed`. Returns both seats' transcripts (every line
/// exchanged, `>` sent, `<` received).
fn wire_match(
    dir: &Path,
    variant: u32,
    state: &str,
    actions: &[&str],
    fill: &str,
    seed: u64,
) -> [Vec<String>; 2] {
    std::fs::create_dir_all(dir).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_referee"))
        .args(["match", "--game", "idoubtit", "-o", &format!("variant={variant}")])
        .args(["--state", state, "--agent", &spy_command(actions), "--fill", fill])
        // A fixed time per decision, so that `go` lines do not depend on think times;
        // generous, so that a loaded machine does not make anybody forfeit.
        .args([
            "--seed",
            &seed.to_string(),
            "--st",
            "20",
            "--startup-timeout",
            "60",
            "-q",
        ])
        .arg("--log-dir")
        .arg(dir)
        .arg("--record")
        .arg(dir.join("record.jsonl"))
        .output()
        .expect("run referee match");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let read = |n: usize| -> Vec<String> {
        let text = std::fs::read_to_string(dir.join(format!("seat{n}.transcript"))).expect("transcript");
        text.lines().map(str::to_string).collect()
    };
    [read(1), read(2)]
}

/// Lines that carry a public fact which may differ between the two games: a verdict on
/// a doubt, a king-capture announcement, the end of the game.
fn public_difference(line: &str) -> bool {
    ["> event verdict ", "> event king-captured ", "> gameover "]
        .iter()
        .any(|p| line.starts_with(p))
}

/// Plays the same script against the same seeded agent from two states that differ
/// only in types seat 2 cannot see, and compares what seat 2 was sent. Returns (lines
/// identical before the first difference, seat-2 decisions among them, whether the
/// transcripts differ at all).
fn compare(variant: u32, states: [&str; 2], actions: &[&str], fill: &str, seed: u64) -> (usize, usize, bool) {
    let dir = tempfile::TempDir::new().unwrap();
    let [a1, a2] = wire_match(&dir.path().join("a"), variant, states[0], actions, fill, seed);
    let [b1, b2] = wire_match(&dir.path().join("b"), variant, states[1], actions, fill, seed);
    // Control: seat 1 does see its own types, so its transcripts differ from the start.
    assert_ne!(a1, b1, "variant {variant}: the two games look the same to seat 1");
    let same = a2.iter().zip(&b2).take_while(|(x, y)| x == y).count();
    // The script ends a game by submitting `none` (seat 1 forfeits as illegal); any
    // other forfeit (a timeout on a loaded machine) would end it for reasons outside it.
    for t in [&a2, &b2] {
        let other = t
            .iter()
            .find(|l| l.contains("forfeit ") && !l.contains("forfeit 1 illegal"));
        assert_eq!(other, None, "variant {variant} {fill} seed {seed}");
    }
    let decisions = a2[..same].iter().filter(|l| l.starts_with("< bestmove ")).count();
    let differ = a2 != b2;
    if differ {
        let (x, y) = (
            a2.get(same).map_or("", String::as_str),
            b2.get(same).map_or("", String::as_str),
        );
        assert!(
            public_difference(x) && public_difference(y),
            "variant {variant} {fill} seed {seed}: seat 2 was told something hidden apart at line {}:\n  {x}\n  {y}",
            same + 1
        );
    }
    (same, decisions, differ)
}

#[test]
fn r_d9_r_d10_seat_2_is_sent_the_same_lines_when_only_seat_1s_hidden_types_differ() {
    // Chess without drops: White's knight b1 and bishop c1 swapped. White's script
    // makes moves that are correct in both games, then knight moves from b1, which are
    // incorrect in the second game: only a doubt of one of those can tell them apart.
    let chess = [
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR play w - - - - 0 -",
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RBNQKBNR play w - - - - 0 -",
    ];
    const CHESS_SCRIPT: [&str; 17] = [
        "a2a3", "h2h3", "g1f3", "f3g1", "g1f3", "f3g1", "a3a4", "h3h4", "b1c3", "c3e4", "e4c3", "c3e4",
        "e4c3", "c3e4", "e4c3", "g1f3", "f3g1",
    ];
    // Shogi without drops: White's silver c1 and gold d1 swapped; d2d1 (straight back)
    // is correct for the gold only.
    let shogi = [
        "lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL play w - - - - 0 -",
        "lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNGSKGSNL play w - - - - 0 -",
    ];
    const SHOGI_SCRIPT: [&str; 12] = [
        "a3a4", "i3i4", "a4a5", "i4i5", "d1d2", "d2d1", "d1d2", "d2d1", "d1d2", "d2d1", "d1d2", "d2d1",
    ];
    let mut runs = Vec::new();
    for (variant, states, script) in [(0, chess, &CHESS_SCRIPT[..]), (8, shogi, &SHOGI_SCRIPT[..])] {
        for (fill, seeds) in [("random", 1..=5u64), ("greedy", 1..=3)] {
            for seed in seeds {
                let t = std::thread::spawn(move || compare(variant, states, script, fill, seed));
                runs.push((variant, fill, seed, t));
            }
        }
    }
    let (mut diverged, mut decisions_total) = (0, 0);
    for (variant, fill, seed, t) in runs {
        let (same, decisions, differ) = t.join().expect("a comparison failed");
        // Handshake, game start and at least five decisions of seat 2 in identical
        // circumstances before anything public can differ.
        assert!(
            same >= 40 && decisions >= 5,
            "variant {variant} {fill} seed {seed}: {same} lines, {decisions} decisions"
        );
        decisions_total += decisions;
        diverged += usize::from(differ);
    }
    // Some games do come apart, at a verdict: the comparison can see a difference.
    assert!(diverged >= 3, "only {diverged} pairs of games came apart");
    assert!(decisions_total >= 120, "{decisions_total} decisions compared");
}
