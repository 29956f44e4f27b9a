//! Rules of Peg Chow and Telka (RULES.md §2, R-B2…R-B9, and R-F1), checked through the
//! public `Game` trait, with hand-built positions, seeded random play and the case
//! file `fixtures/parker/cases.txt`.
//!
//! Test names start with the ruling they check. Positions are built with `layout`
//! (checked against the spec's start string); expectations that need the board, such
//! as the captures a chain makes, are computed from the state string by code
//! independent of `src/game/parker` (see `Board`), so the rules do not grade
//! themselves.

mod cli_support;

use std::collections::{BTreeSet, HashMap};

use referee::game::parker::board::{Colour, Point, POINTS};
use referee::game::parker::rules::MoveError;
use referee::game::parker::{rules, seating, state};
use referee::game::{
    EndReason, ForfeitKind, Game, GameId, IllegalReason, Options, Rejection, Seat, SetupError, Turn,
};
use referee::rng::Rng;

// ---------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------

const PEG: GameId = GameId::PegChow;
const TELKA: GameId = GameId::Telka;

/// Every table these games can be played at, as option words.
const TABLES: [&[&str]; 4] = [
    &["players=2"],
    &["players=3"],
    &["players=4"],
    &["players=2", "colors-per-player=2"],
];

fn opts(words: &[&str]) -> Options {
    Options::parse(words.iter().copied()).expect("test options are well-formed")
}

fn seat(n: usize) -> Seat {
    Seat::new(n).expect("seats start at 1")
}

fn create(id: GameId, words: &[&str], state: Option<&str>) -> Box<dyn Game> {
    id.create(&opts(words), state)
        .unwrap_or_else(|e| panic!("{id} {words:?} {state:?}: {e}"))
}

/// The seat to act; panics when the game is over.
fn to_act(g: &dyn Game) -> Seat {
    match g.turn() {
        Turn::Act { seat, .. } => seat,
        Turn::Over => panic!("game over: {:?}\n{}", g.outcome(), g.diagram(None)),
    }
}

/// Plays `action` for the seat to act and returns the omniscient events.
fn play(g: &mut dyn Game, action: &str) -> Vec<String> {
    let s = to_act(g);
    match g.play(s, action) {
        Ok(played) => played.events,
        Err(e) => panic!("`{action}` rejected: {e}\n{}", g.diagram(None)),
    }
}

/// Plays `action`, expects an `Illegal` rejection and checks nothing changed; the
/// rule it breaks.
fn assert_illegal(g: &mut dyn Game, action: &str) -> MoveError {
    let before = (g.state(), g.plies(), g.turn());
    let s = to_act(g);
    let reason = match g.play(s, action) {
        Err(Rejection::Illegal {
            action: a,
            reason: IllegalReason::Parker(reason),
        }) => {
            assert_eq!(a, action);
            reason
        }
        other => panic!("`{action}`: expected Illegal, got {other:?}\n{}", g.diagram(None)),
    };
    assert_eq!(
        (g.state(), g.plies(), g.turn()),
        before,
        "a rejection changes nothing"
    );
    assert!(
        !g.legal_actions().iter().any(|a| a == action),
        "`{action}` is rejected but listed as legal"
    );
    reason
}

/// The point named `p`.
fn point(p: &str) -> Point {
    Point::parse(p).unwrap_or_else(|| panic!("bad point {p}"))
}

/// A state string built from `(letter, "point point …")` groups.
fn layout(counters: &[(char, &str)], to_move: char, moves: u32) -> String {
    let mut board = [None; POINTS];
    for &(letter, points) in counters {
        let colour = Colour::from_letter(letter).expect("b y r g");
        for p in points.split_whitespace() {
            let p = Point::parse(p).unwrap_or_else(|| panic!("bad point {p}"));
            assert!(board[p.index()].is_none(), "{p} given twice");
            board[p.index()] = Some(colour);
        }
    }
    let pos = rules::Position {
        board,
        to_move: Colour::from_letter(to_move).expect("b y r g"),
        moves,
    };
    state::print(&pos, &[])
}

fn leaps(g: &dyn Game, from: &str) -> BTreeSet<String> {
    g.legal_actions()
        .into_iter()
        .filter(|a| a.starts_with(&format!("{from}-")) && !is_step(a))
        .collect()
}

fn path(action: &str) -> Vec<(i32, i32)> {
    action
        .split('-')
        .map(|p| {
            let x = i32::from(p.as_bytes()[0] - b'a');
            let y: i32 = p[1..].parse().expect("rank");
            (x, y - 1)
        })
        .collect()
}

fn is_step(action: &str) -> bool {
    let p = path(action);
    p.len() == 2 && (p[1].0 - p[0].0).abs() <= 1 && (p[1].1 - p[0].1).abs() <= 1
}

fn name(x: i32, y: i32) -> String {
    format!("{}{}", (b'a' + x as u8) as char, y + 1)
}

/// An independent reading of a state string (R-B9) and of the board geometry (R-B1).
#[derive(Clone, Debug)]
struct Board {
    cells: HashMap<(i32, i32), char>,
}

impl Board {
    fn parse(state: &str) -> Board {
        let ranks: Vec<&str> = state.split(' ').next().expect("ranks").split('/').collect();
        assert_eq!(ranks.len(), 11, "{state}");
        let mut cells = HashMap::new();
        for (row, rank) in ranks.iter().enumerate() {
            let y = 10 - row as i32;
            let mut x = 0;
            let mut digits = String::new();
            for ch in rank.chars().chain(std::iter::once('.')) {
                if ch.is_ascii_digit() {
                    digits.push(ch);
                    continue;
                }
                if !digits.is_empty() {
                    x += digits.parse::<i32>().expect("run");
                    digits.clear();
                }
                if ch != '.' {
                    cells.insert((x, y), ch);
                    x += 1;
                }
            }
            assert_eq!(x, 11, "rank {} of {state}", y + 1);
        }
        Board { cells }
    }

    fn at(&self, point: &str) -> Option<char> {
        let p = path(&format!("{point}-a1"))[0];
        self.cells.get(&p).copied()
    }

    fn count(&self, letter: char) -> usize {
        self.cells.values().filter(|&&c| c == letter).count()
    }

    /// Whether (x, y) is a home point: the 4×4 corner block minus its inner 2×2.
    fn is_home(x: i32, y: i32) -> bool {
        let fx = x.min(10 - x);
        let fy = y.min(10 - y);
        fx < 4 && fy < 4 && !(fx >= 2 && fy >= 2)
    }

    /// The captures R-B6 predicts for a leap chain in Telka, in chain order.
    fn predicted_captures(&self, players: usize, action: &str) -> Vec<String> {
        let side = |c: char| match (players, c) {
            (3, c) => c as u32,
            (_, 'b' | 'g') => 0,
            _ => 1,
        };
        let mut cells = self.cells.clone();
        let points = path(action);
        let mover = cells.remove(&points[0]).expect("a counter moves");
        let mut out = Vec::new();
        for leg in points.windows(2) {
            let over = ((leg[0].0 + leg[1].0) / 2, (leg[0].1 + leg[1].1) / 2);
            let c = *cells.get(&over).expect("a leap goes over a counter");
            if side(c) != side(mover) && !Board::is_home(over.0, over.1) {
                cells.remove(&over);
                out.push(name(over.0, over.1));
            }
        }
        out
    }
}

fn players_of(words: &[&str]) -> usize {
    words
        .iter()
        .find_map(|w| w.strip_prefix("players="))
        .map_or(2, |n| n.parse().expect("players"))
}

/// Positions reached by seeded random play: every position of `games` games of at
/// most `plies` moves, the start included.
fn random_positions(id: GameId, words: &[&str], seed: u64, games: usize, plies: usize) -> Vec<Box<dyn Game>> {
    let mut rng = Rng::new(seed);
    let mut out = Vec::new();
    for _ in 0..games {
        let mut g = create(id, words, None);
        out.push(g.boxed_clone());
        for _ in 0..plies {
            let Turn::Act { seat, .. } = g.turn() else {
                break;
            };
            let legal = g.legal_actions();
            let action = legal[rng.below(legal.len())].clone();
            g.play(seat, &action)
                .unwrap_or_else(|e| panic!("listed `{action}` rejected: {e}"));
            out.push(g.boxed_clone());
        }
    }
    out
}

/// Every game × table combination, with a fixed seed each.
fn all_random_positions(games: usize, plies: usize) -> Vec<(GameId, &'static [&'static str], Box<dyn Game>)> {
    let mut out = Vec::new();
    for (i, id) in [PEG, TELKA].into_iter().enumerate() {
        for (j, words) in TABLES.into_iter().enumerate() {
            let seed = 1000 + 10 * i as u64 + j as u64;
            for g in random_positions(id, words, seed, games, plies) {
                out.push((id, words, g));
            }
        }
    }
    out
}

// ---------------------------------------------------------------------------
// R-B2 tints
// ---------------------------------------------------------------------------

#[test]
fn r_b2_every_leap_chain_keeps_the_start_tint() {
    let tint = |(x, y): (i32, i32)| (x % 2, y % 2);
    let mut chains = 0;
    let mut long_chains = 0;
    let mut tint_changing_steps = 0;
    for (id, words, g) in all_random_positions(3, 120) {
        for action in g.legal_actions() {
            if action == "pass" {
                continue;
            }
            let p = path(&action);
            if is_step(&action) {
                tint_changing_steps += usize::from(tint(p[0]) != tint(p[1]));
                continue;
            }
            chains += 1;
            long_chains += usize::from(p.len() >= 3);
            for &landing in &p[1..] {
                assert_eq!(
                    tint(landing),
                    tint(p[0]),
                    "{id} {words:?} `{action}` in {}",
                    g.state()
                );
            }
        }
    }
    assert!(chains > 10_000, "random play reached only {chains} chains");
    assert!(
        long_chains > 1_000,
        "random play reached only {long_chains} multi-leap chains"
    );
    assert!(tint_changing_steps > 0);
}

#[test]
fn r_b2_a_step_can_change_the_tint() {
    // c2 is tint (0, 1); d3 is tint (1, 0).
    let mut g = create(PEG, &["players=2"], None);
    assert!(g.legal_actions().contains(&"c2-d3".to_string()));
    assert_eq!(play(g.as_mut(), "c2-d3"), ["move blue c2-d3"]);
    let b = Board::parse(&g.state());
    assert_eq!((b.at("c2"), b.at("d3")), (None, Some('b')));
}

// ---------------------------------------------------------------------------
// R-B4 moves
// ---------------------------------------------------------------------------

#[test]
fn r_b4_chain_turns_twice_and_every_prefix_is_a_move() {
    // e5 leaps NE over f6, E over h7, S over i6.
    let s = layout(&[('b', "e5"), ('r', "f6 h7 i6")], 'b', 0);
    for id in [PEG, TELKA] {
        let g = create(id, &["players=2"], Some(&s));
        let expected: BTreeSet<String> = ["e5-g7", "e5-g7-i7", "e5-g7-i7-i5"].map(String::from).into();
        assert_eq!(leaps(g.as_ref(), "e5"), expected, "{id}");
        for action in &expected {
            let mut g = g.boxed_clone();
            let events = play(g.as_mut(), action);
            assert!(
                events[0].starts_with(&format!("move blue {action}")),
                "{events:?}"
            );
            let b = Board::parse(&g.state());
            assert_eq!(b.at(action.rsplit('-').next().unwrap()), Some('b'));
            assert_eq!(b.at("e5"), None);
            assert_eq!(to_act(g.as_ref()), seat(2));
        }
    }
}

#[test]
fn r_b4_a_chain_never_returns_to_its_start() {
    // d4 can go round e5, g5, g3, e3: d4-f6-h4-f2 and back to d4 would close the loop.
    let s = layout(&[('b', "d4 e5 g5 g3 e3")], 'b', 0);
    for id in [PEG, TELKA] {
        let mut g = create(id, &["players=2"], Some(&s));
        let legal = g.legal_actions();
        for open in ["d4-f6-h4-f2", "d4-f2-h4-f6"] {
            assert!(legal.contains(&open.to_string()), "{id}: {open} missing");
        }
        assert_eq!(
            assert_illegal(g.as_mut(), "d4-f6-h4-f2-d4"),
            MoveError::LandsTwice {
                from: point("f2"),
                to: point("d4")
            }
        );
        assert_illegal(g.as_mut(), "d4-f2-h4-f6-d4");
        assert!(!legal.iter().any(|a| a.starts_with("d4-") && a.ends_with("-d4")));
    }
}

#[test]
fn r_b4_a_chain_never_returns_to_an_earlier_landing_point() {
    // b2 leaps over c3 to d4, then round the loop e5, g5, g3, e3 back to d4.
    let s = layout(&[('b', "b2 e5 g5 g3 e3"), ('r', "c3")], 'b', 0);
    for id in [PEG, TELKA] {
        let mut g = create(id, &["players=2"], Some(&s));
        let legal = g.legal_actions();
        assert!(legal.contains(&"b2-d4-f6-h4-f2".to_string()), "{id}");
        assert!(legal.contains(&"b2-d4-f2-h4-f6".to_string()), "{id}");
        assert_illegal(g.as_mut(), "b2-d4-f6-h4-f2-d4");
        assert_illegal(g.as_mut(), "b2-d4-f2-h4-f6-d4");
        // Going on past d4 a second time is no better.
        assert_illegal(g.as_mut(), "b2-d4-f6-h4-f2-d4-b2");
    }
}

#[test]
fn r_b4_malformed_shapes_are_rejected() {
    let s = layout(&[('b', "c2 d4 f6"), ('r', "e4 e5 a9")], 'b', 0);
    for id in [PEG, TELKA] {
        let mut g = create(id, &["players=2"], Some(&s));
        // Leaping over an empty point.
        assert_eq!(
            assert_illegal(g.as_mut(), "d4-f2"),
            MoveError::LeapsOverEmpty {
                from: point("d4"),
                to: point("f2"),
                over: point("e3")
            }
        );
        assert_illegal(g.as_mut(), "d4-b4");
        // A step onto an occupied point.
        assert_eq!(
            assert_illegal(g.as_mut(), "d4-e5"),
            MoveError::StepOccupied { to: point("e5") }
        );
        // A leap landing on an occupied point (d4 over e4 to f4 is fine, over e5 to
        // f6 is not).
        assert!(g.legal_actions().contains(&"d4-f4".to_string()));
        assert_eq!(
            assert_illegal(g.as_mut(), "d4-f6"),
            MoveError::LandsOnOccupied {
                from: point("d4"),
                to: point("f6")
            }
        );
        // A step and a leap combined: c2-d3 is a step, d3-f5 would leap e4.
        assert!(g.legal_actions().contains(&"c2-d3".to_string()));
        assert_illegal(g.as_mut(), "c2-d3-f5");
        // A leap then a step.
        assert_illegal(g.as_mut(), "d4-f4-f5");
        // Not along a line, and too far.
        assert_illegal(g.as_mut(), "d4-e6");
        assert_illegal(g.as_mut(), "d4-g7");
        // No move at all: from and to the same point.
        assert_eq!(
            assert_illegal(g.as_mut(), "d4-d4"),
            MoveError::NotAStepOrLeap {
                from: point("d4"),
                to: point("d4")
            }
        );
        assert_illegal(g.as_mut(), "d4-f4-f4");
        // Another colour's counter, and an empty point.
        assert_eq!(
            assert_illegal(g.as_mut(), "e5-e6"),
            MoveError::NotOwnCounter {
                from: point("e5"),
                mover: Colour::Blue
            }
        );
        assert_illegal(g.as_mut(), "a9-a10");
        assert_illegal(g.as_mut(), "g7-g8");
        assert_eq!(g.plies(), 0);
    }
}

#[test]
fn r_b4_seat_to_move_only() {
    let mut g = create(TELKA, &["players=3"], None);
    let before = g.state();
    for wrong in [2, 3] {
        match g.play(seat(wrong), "c2-d3") {
            Err(Rejection::NotYourTurn { seat: s, .. }) => assert_eq!(s, seat(wrong)),
            other => panic!("expected NotYourTurn, got {other:?}"),
        }
    }
    assert_eq!(g.state(), before);
    play(g.as_mut(), "c2-d3");
    // Yellow (seat 2) is to move now; seat 1 is not.
    assert!(matches!(
        g.play(seat(1), "d3-e4"),
        Err(Rejection::NotYourTurn { .. })
    ));
    // With two colours per player each colour is moved by its owner.
    let mut g = create(PEG, &["players=2", "colors-per-player=2"], None);
    play(g.as_mut(), "c2-d3"); // Blue, seat 1
    assert_eq!(to_act(g.as_ref()), seat(2)); // Yellow
    play(g.as_mut(), "c10-d9");
    assert_eq!(to_act(g.as_ref()), seat(2)); // Red
                                             // Seat 2 may not move Yellow on Red's turn.
    assert_illegal(g.as_mut(), "d9-e8");
    play(g.as_mut(), "h10-g9");
    assert_eq!(to_act(g.as_ref()), seat(1)); // Green
    assert!(matches!(
        g.play(seat(2), "h2-g3"),
        Err(Rejection::NotYourTurn { .. })
    ));
    assert_illegal(g.as_mut(), "d3-e4");
    play(g.as_mut(), "h2-g3");
    assert_eq!(to_act(g.as_ref()), seat(1)); // Blue again
}

#[test]
fn r_b4_malformed_actions_are_told_apart_from_illegal_ones() {
    let mut g = create(PEG, &["players=2"], None);
    for bad in [
        "",
        "c2",
        "c2-",
        "c2--d3",
        "c2 d3",
        "C2-D3",
        "l1-k1",
        "c0-c1",
        "c12-c11",
        "c02-d3",
        "pas",
        "pass pass",
    ] {
        match g.play(seat(1), bad) {
            Err(Rejection::Malformed { action, .. }) => assert_eq!(action, bad),
            other => panic!("`{bad}`: expected Malformed, got {other:?}"),
        }
    }
    assert_eq!(g.plies(), 0);
}

/// The list of legal actions and the legality check agree (a fuzz-style property):
/// random candidate paths near the movers are accepted exactly when listed.
#[test]
fn r_b4_legal_list_agrees_with_play() {
    let mut rng = Rng::new(77);
    let mut accepted = 0;
    let mut rejected = 0;
    for (id, words, g) in all_random_positions(1, 80) {
        if g.outcome().is_some() {
            continue;
        }
        let legal: BTreeSet<String> = g.legal_actions().into_iter().collect();
        let board = Board::parse(&g.state());
        let letter = g.state().split(' ').nth(1).unwrap().chars().next().unwrap();
        let movers: Vec<(i32, i32)> = board
            .cells
            .iter()
            .filter(|&(_, &c)| c == letter)
            .map(|(&p, _)| p)
            .collect();
        for _ in 0..25 {
            let mut p = if movers.is_empty() || rng.below(8) == 0 {
                (rng.below(11) as i32, rng.below(11) as i32)
            } else {
                movers[rng.below(movers.len())]
            };
            let mut action = name(p.0, p.1);
            for _ in 0..=rng.below(3) {
                p = (
                    (p.0 + rng.below(5) as i32 - 2).clamp(0, 10),
                    (p.1 + rng.below(5) as i32 - 2).clamp(0, 10),
                );
                action.push('-');
                action.push_str(&name(p.0, p.1));
            }
            let mut copy = g.boxed_clone();
            let result = copy.play(to_act(g.as_ref()), &action);
            match (&result, legal.contains(&action)) {
                (Ok(_), true) => accepted += 1,
                (Err(Rejection::Illegal { .. }), false) => rejected += 1,
                _ => panic!(
                    "{id} {words:?} {}: `{action}` listed={} but {result:?}",
                    g.state(),
                    legal.contains(&action)
                ),
            }
        }
        // Every listed action is accepted, and no action is listed twice.
        assert_eq!(
            legal.len(),
            g.legal_actions().len(),
            "duplicates in {}",
            g.state()
        );
        for action in legal.iter().step_by(7) {
            let mut copy = g.boxed_clone();
            assert!(
                copy.play(to_act(g.as_ref()), action).is_ok(),
                "{action} in {}",
                g.state()
            );
        }
    }
    assert!(
        accepted > 500 && rejected > 500,
        "accepted {accepted}, rejected {rejected}"
    );
}

// ---------------------------------------------------------------------------
// R-B5 forced pass
// ---------------------------------------------------------------------------

#[test]
fn r_b5_a_colour_without_a_move_passes() {
    // Blue's only counter, a1, is boxed in: no step, and every leap lands on a counter.
    // (moves 0: in Telka Red already has 3 counters in its target home, which would
    // be a win had Red just moved.)
    let s = layout(&[('b', "a1"), ('r', "a2 b1 b2 a3 c1 c3 f6")], 'b', 0);
    for id in [PEG, TELKA] {
        let mut g = create(id, &["players=2"], Some(&s));
        assert_eq!(g.forced_action().as_deref(), Some("pass"), "{id}");
        assert_eq!(g.legal_actions(), ["pass"]);
        assert_illegal(g.as_mut(), "a1-a2");
        assert_eq!(play(g.as_mut(), "pass"), ["pass blue"]);
        assert_eq!(g.plies(), 1);
        assert_eq!(to_act(g.as_ref()), seat(2));
        assert!(g.outcome().is_none());
        assert!(g.state().ends_with(" r 1"), "{}", g.state());
        // Red has moves: passing is not allowed.
        assert_eq!(g.forced_action(), None);
        assert!(!g.legal_actions().contains(&"pass".to_string()));
        assert_eq!(
            assert_illegal(g.as_mut(), "pass"),
            MoveError::PassWithAMove { mover: Colour::Red }
        );
    }
    // No forced action in an ordinary position.
    let g = create(TELKA, &["players=4"], None);
    assert_eq!(g.forced_action(), None);
}

#[test]
fn r_b5_pass_then_the_others_play_on() {
    // 3 players: Yellow is boxed in at a11, Blue and Red play around it.
    let s = layout(
        &[('b', "e5"), ('y', "a11"), ('r', "a10 b11 b10 a9 c11 c9")],
        'y',
        7,
    );
    let mut g = create(PEG, &["players=3"], Some(&s));
    assert_eq!(to_act(g.as_ref()), seat(2));
    assert_eq!(g.forced_action().as_deref(), Some("pass"));
    play(g.as_mut(), "pass");
    assert_eq!(to_act(g.as_ref()), seat(3));
    play(g.as_mut(), "c9-d8");
    assert_eq!(to_act(g.as_ref()), seat(1));
    play(g.as_mut(), "e5-e6");
    // c9 is free now: Yellow can leap b10 to land there.
    assert_eq!(to_act(g.as_ref()), seat(2));
    assert_eq!(g.forced_action(), None);
    assert!(g.legal_actions().contains(&"a11-c9".to_string()));
}

// ---------------------------------------------------------------------------
// R-B6 Telka captures
// ---------------------------------------------------------------------------

#[test]
fn r_b6_leaping_an_opponent_in_the_danger_territory_captures_it() {
    let s = layout(&[('b', "e5 a1"), ('r', "f6 k11")], 'b', 0);
    let mut g = create(TELKA, &["players=2"], Some(&s));
    assert_eq!(play(g.as_mut(), "e5-g7"), ["move blue e5-g7 capture f6"]);
    let b = Board::parse(&g.state());
    assert_eq!((b.at("f6"), b.at("g7"), b.count('r')), (None, Some('b'), 1));
    // Peg Chow never captures.
    let mut g = create(PEG, &["players=2"], Some(&s));
    assert_eq!(play(g.as_mut(), "e5-g7"), ["move blue e5-g7"]);
    assert_eq!(Board::parse(&g.state()).at("f6"), Some('r'));
}

#[test]
fn r_b6_own_and_partner_counters_are_never_captured() {
    // 4 players: Blue+Green against Yellow+Red. Blue at e5 can leap its own counter
    // d6, partner Green's f6, opponent Yellow's e6 and opponent Red's f4.
    let s = layout(&[('b', "e5 d6"), ('g', "f6"), ('y', "e6"), ('r', "f4")], 'b', 0);
    let cases = [
        ("e5-c7", "move blue e5-c7"),
        ("e5-g7", "move blue e5-g7"),
        ("e5-e7", "move blue e5-e7 capture e6"),
        ("e5-g3", "move blue e5-g3 capture f4"),
    ];
    for (action, event) in cases {
        let mut g = create(TELKA, &["players=4"], Some(&s));
        assert_eq!(play(g.as_mut(), action), [event]);
        let removed = Board::parse(&s).count('y') + Board::parse(&s).count('r')
            - Board::parse(&g.state()).count('y')
            - Board::parse(&g.state()).count('r');
        assert_eq!(removed, usize::from(event.contains("capture")), "{action}");
    }
    // With two colours per player, a seat's two colours are partners too.
    let s = layout(&[('b', "e5"), ('g', "f6"), ('y', "e6")], 'b', 0);
    let mut g = create(TELKA, &["players=2", "colors-per-player=2"], Some(&s));
    assert_eq!(play(g.as_mut(), "e5-g7"), ["move blue e5-g7"]);
    let mut g = create(TELKA, &["players=2", "colors-per-player=2"], Some(&s));
    assert_eq!(play(g.as_mut(), "e5-e7"), ["move blue e5-e7 capture e6"]);
    // With 3 players every other colour is an opponent.
    let s = layout(&[('y', "e5"), ('b', "f6"), ('r', "e6")], 'y', 1);
    let mut g = create(TELKA, &["players=3"], Some(&s));
    assert_eq!(play(g.as_mut(), "e5-g7"), ["move yellow e5-g7 capture f6"]);
    let mut g = create(TELKA, &["players=3"], Some(&s));
    assert_eq!(play(g.as_mut(), "e5-e7"), ["move yellow e5-e7 capture e6"]);
}

#[test]
fn r_b6_counters_on_home_points_are_never_captured() {
    // Red on d2 (Blue's home) and on h10 (its own home); Red on c3 (a notch of the
    // Danger Territory) is capturable.
    let s = layout(&[('b', "d1 g10 a3"), ('r', "d2 h10 b3")], 'b', 0);
    let mut g = create(TELKA, &["players=2"], Some(&s));
    assert_eq!(play(g.as_mut(), "d1-d3"), ["move blue d1-d3"]);
    let mut g = create(TELKA, &["players=2"], Some(&s));
    assert_eq!(play(g.as_mut(), "g10-i10"), ["move blue g10-i10"]);
    // b3 is a home point too.
    let mut g = create(TELKA, &["players=2"], Some(&s));
    assert_eq!(play(g.as_mut(), "a3-c3"), ["move blue a3-c3"]);
    let s = layout(&[('b', "b2"), ('r', "c3")], 'b', 0);
    let mut g = create(TELKA, &["players=2"], Some(&s));
    assert_eq!(play(g.as_mut(), "b2-d4"), ["move blue b2-d4 capture c3"]);
}

#[test]
fn r_b6_a_chain_captures_each_counter_at_once() {
    // Three opponents on one chain that turns twice.
    let s = layout(&[('b', "e5"), ('r', "f6 h7 i6")], 'b', 0);
    let mut g = create(TELKA, &["players=2"], Some(&s));
    assert_eq!(
        play(g.as_mut(), "e5-g7-i7-i5"),
        ["move blue e5-g7-i7-i5 capture f6 h7 i6"]
    );
    assert_eq!(Board::parse(&g.state()).count('r'), 0);
    // Captured at once, so it cannot be leaped again: d4 leaps Red e5 along one
    // diagonal, Blue f5, and then could come back over e5 along the other diagonal
    // (same tint). In Peg Chow it may; in Telka e5 is gone by then.
    let s = layout(&[('b', "d4 f5"), ('r', "e5")], 'b', 0);
    let mut peg = create(PEG, &["players=2"], Some(&s));
    assert!(peg.legal_actions().contains(&"d4-f6-f4-d6".to_string()));
    assert_eq!(play(peg.as_mut(), "d4-f6-f4-d6"), ["move blue d4-f6-f4-d6"]);
    let mut telka = create(TELKA, &["players=2"], Some(&s));
    assert!(telka.legal_actions().contains(&"d4-f6-f4".to_string()));
    assert_eq!(
        assert_illegal(telka.as_mut(), "d4-f6-f4-d6"),
        MoveError::LeapsOverEmpty {
            from: point("f4"),
            to: point("d6"),
            over: point("e5")
        }
    );
    assert_eq!(
        play(telka.as_mut(), "d4-f6-f4"),
        ["move blue d4-f6-f4 capture e5"]
    );
    // A captured point always has another tint than the chain's landing points
    // (R-B2), so no chain can ever land where it captured; see
    // `r_b6_random_chains_capture_exactly_what_the_rule_says`.
}

/// For every chain in many random Telka positions: the captures are exactly the
/// opponents on Danger Territory points leaped over, each once, each removed, and
/// never a landing point of the same chain.
#[test]
fn r_b6_random_chains_capture_exactly_what_the_rule_says() {
    let mut captures = 0;
    for (i, words) in TABLES.into_iter().enumerate() {
        let players = players_of(words);
        for g in random_positions(TELKA, words, 500 + i as u64, 2, 100) {
            if g.outcome().is_some() {
                continue;
            }
            let board = Board::parse(&g.state());
            for action in g.legal_actions() {
                if action == "pass" || is_step(&action) {
                    continue;
                }
                let predicted = board.predicted_captures(players, &action);
                let mut copy = g.boxed_clone();
                let events = play(copy.as_mut(), &action);
                let mover = events[0].split(' ').nth(1).unwrap().to_string();
                let expected = match predicted.is_empty() {
                    true => format!("move {mover} {action}"),
                    false => format!("move {mover} {action} capture {}", predicted.join(" ")),
                };
                assert_eq!(events, [expected], "{words:?} {}", g.state());
                let landings: Vec<&str> = action.split('-').skip(1).collect();
                assert!(predicted.iter().all(|c| !landings.contains(&c.as_str())));
                let distinct: BTreeSet<&String> = predicted.iter().collect();
                assert_eq!(distinct.len(), predicted.len());
                let after = Board::parse(&copy.state());
                assert_eq!(after.cells.len() + predicted.len(), board.cells.len());
                for c in &predicted {
                    assert_eq!(after.at(c), None);
                }
                captures += predicted.len();
            }
        }
    }
    assert!(captures > 200, "random play produced only {captures} captures");
}

#[test]
fn r_b6_peg_chow_never_captures() {
    for words in TABLES {
        let colours = match (players_of(words), words.len()) {
            (2, 1) => 2,
            (3, _) => 3,
            _ => 4,
        };
        for g in random_positions(PEG, words, 42, 2, 150) {
            assert_eq!(
                Board::parse(&g.state()).cells.len(),
                12 * colours,
                "{}",
                g.state()
            );
        }
        let mut rng = Rng::new(9);
        let mut g = create(PEG, words, None);
        while g.turn() != Turn::Over && g.plies() < 150 {
            let legal = g.legal_actions();
            let action = legal[rng.below(legal.len())].clone();
            for event in play(g.as_mut(), &action) {
                assert!(!event.contains("capture"), "{event}");
            }
        }
    }
}

// ---------------------------------------------------------------------------
// R-B7 winning
// ---------------------------------------------------------------------------

fn places(g: &dyn Game) -> Vec<u8> {
    let outcome = g.outcome().expect("the game is over");
    assert_eq!(g.turn(), Turn::Over);
    assert!(g.legal_actions().is_empty());
    assert_eq!(g.forced_action(), None);
    outcome.places
}

fn assert_won(g: &mut dyn Game, places_expected: &[u8]) {
    let outcome = g
        .outcome()
        .unwrap_or_else(|| panic!("no result\n{}", g.diagram(None)));
    assert_eq!(outcome.reason, EndReason::Win);
    assert_eq!(places(g), places_expected);
    let any = Seat::all(g.seat_count()).next().unwrap();
    assert_eq!(g.play(any, "a1-a2"), Err(Rejection::GameOver));
}

#[test]
fn r_b7_telka_three_counters_in_the_target_home_win() {
    // Red's home: j8 is a home point, j7 is not.
    let s = layout(&[('b', "j11 k11 j7 e5"), ('r', "a1 b1 e7")], 'b', 0);
    let mut g = create(TELKA, &["players=2"], Some(&s));
    play(g.as_mut(), "e5-e6");
    assert!(g.outcome().is_none(), "2 counters are not enough");
    play(g.as_mut(), "e7-f8");
    play(g.as_mut(), "j7-j8");
    assert_won(g.as_mut(), &[1, 2]);
    // Red wins for seat 2 the same way.
    let s = layout(&[('b', "j11 e5"), ('r', "a1 b1 c4")], 'r', 1);
    let mut g = create(TELKA, &["players=2"], Some(&s));
    play(g.as_mut(), "c4-b4");
    assert_won(g.as_mut(), &[2, 1]);
}

#[test]
fn r_b7_telka_partners_share_the_win() {
    let s = layout(
        &[('b', "j11 k11 j7"), ('y', "e9"), ('r', "e6"), ('g', "e3")],
        'b',
        0,
    );
    let mut g = create(TELKA, &["players=4"], Some(&s));
    play(g.as_mut(), "j7-j8");
    assert_won(g.as_mut(), &[1, 2, 2, 1]);
    // Green (seat 4) wins for Blue too; its target is Yellow's home.
    let s = layout(
        &[('b', "e5"), ('y', "e9"), ('r', "e6"), ('g', "a11 b11 a7")],
        'g',
        3,
    );
    let mut g = create(TELKA, &["players=4"], Some(&s));
    play(g.as_mut(), "a7-a8");
    assert_won(g.as_mut(), &[1, 2, 2, 1]);
    // Yellow (seat 2) wins for Red: its target is Green's home.
    let s = layout(
        &[('b', "e5"), ('y', "k1 k2 j5"), ('r', "e6"), ('g', "e3")],
        'y',
        1,
    );
    let mut g = create(TELKA, &["players=4"], Some(&s));
    play(g.as_mut(), "j5-j4");
    assert_won(g.as_mut(), &[2, 1, 1, 2]);
    // Two colours per player: Green's win is seat 1's.
    let s = layout(
        &[('b', "e5"), ('y', "e9"), ('r', "e6"), ('g', "a11 b11 a7")],
        'g',
        3,
    );
    let mut g = create(TELKA, &["players=2", "colors-per-player=2"], Some(&s));
    play(g.as_mut(), "a7-a8");
    assert_won(g.as_mut(), &[1, 2]);
}

const RED_HOME: &str = "j8 k8 j9 k9 h10 i10 j10 k10 h11 i11 j11 k11";

/// Red's home with `j8` left empty, the other points split as given.
fn red_home_but_j8(red: &str) -> String {
    RED_HOME
        .split(' ')
        .filter(|p| *p != "j8" && !red.split(' ').any(|r| r == *p))
        .collect::<Vec<_>>()
        .join(" ")
}

#[test]
fn r_b7_peg_chow_filling_the_target_home_wins() {
    let blue = red_home_but_j8("") + " j7";
    let s = layout(&[('b', &blue), ('r', "e5 e6")], 'b', 0);
    let mut g = create(PEG, &["players=2"], Some(&s));
    play(g.as_mut(), "j7-j8");
    assert_won(g.as_mut(), &[1, 2]);
    // One point short: no win.
    let mut g = create(PEG, &["players=2"], Some(&s));
    play(g.as_mut(), "j7-i7");
    assert!(g.outcome().is_none());
}

#[test]
fn r_b7_peg_chow_an_owner_staying_home_cannot_block() {
    let red = "h11 i11 j11 k11";
    let blue = red_home_but_j8(red) + " j7";
    let s = layout(&[('b', &blue), ('r', &format!("{red} e5"))], 'b', 0);
    let mut g = create(PEG, &["players=2"], Some(&s));
    play(g.as_mut(), "j7-j8");
    assert_won(g.as_mut(), &[1, 2]);
    // Also with 4 players (Red is Blue's opponent there too): Blue and Green win.
    let s4 = layout(
        &[
            ('b', &blue),
            ('r', &format!("{red} e5")),
            ('y', "e9"),
            ('g', "e3"),
        ],
        'b',
        0,
    );
    let mut g = create(PEG, &["players=4"], Some(&s4));
    play(g.as_mut(), "j7-j8");
    assert_won(g.as_mut(), &[1, 2, 2, 1]);
    // At least one counter must be the winner's own: a home full of Red is no win.
    let s = layout(&[('b', "e5"), ('r', RED_HOME)], 'b', 0);
    let mut g = create(PEG, &["players=2"], Some(&s));
    play(g.as_mut(), "e5-e6");
    assert!(g.outcome().is_none());
}

#[test]
fn r_b7_peg_chow_a_third_colour_blocks() {
    // Yellow (a third colour) and Green (Blue's partner) are not the home's owner.
    for blocker in ['y', 'g'] {
        let blue = red_home_but_j8("h11") + " j7";
        let mut groups = vec![('b', blue.as_str()), ('r', "e5"), (blocker, "h11")];
        let other = if blocker == 'y' { ('g', "e3") } else { ('y', "e9") };
        groups.push(other);
        let s = layout(&groups, 'b', 0);
        let mut g = create(PEG, &["players=4"], Some(&s));
        play(g.as_mut(), "j7-j8");
        assert!(g.outcome().is_none(), "blocked by {blocker}");
        assert_eq!(to_act(g.as_ref()), seat(2));
    }
}

#[test]
fn r_b7_peg_chow_three_players_yellow_needs_all_twelve() {
    // Yellow's target is the empty SE home (Green is not in play).
    let green_home = "h1 i1 j1 k1 h2 i2 j2 k2 j3 k3 j4 k4";
    let yellow: Vec<&str> = green_home.split(' ').filter(|&p| p != "j4").collect();
    let yellow = yellow.join(" ") + " j5";
    let s = layout(&[('b', "e5"), ('y', &yellow), ('r', "e7")], 'y', 1);
    let mut g = create(PEG, &["players=3"], Some(&s));
    play(g.as_mut(), "j5-j4");
    assert_won(g.as_mut(), &[2, 1, 2]);
    // Eleven Yellow and one Blue there: no win (the home has no owner to excuse it).
    let yellow: Vec<&str> = green_home
        .split(' ')
        .filter(|&p| p != "j4" && p != "k1")
        .collect();
    let yellow = yellow.join(" ") + " j5";
    let s = layout(&[('b', "k1 e5"), ('y', &yellow), ('r', "e7")], 'y', 1);
    let mut g = create(PEG, &["players=3"], Some(&s));
    play(g.as_mut(), "j5-j4");
    assert!(g.outcome().is_none());
    // Telka needs only three there.
    let s = layout(&[('b', "e5"), ('y', "k1 k2 j5"), ('r', "e7")], 'y', 1);
    let mut g = create(TELKA, &["players=3"], Some(&s));
    play(g.as_mut(), "j5-j4");
    assert_won(g.as_mut(), &[2, 1, 2]);
}

#[test]
fn r_b7_a_goal_met_by_another_colours_move_waits_for_its_own_move() {
    // Red's home: 5 Red, 6 Blue, j8 empty. Red steps in from j7 and completes
    // Blue's goal; Blue wins only at the end of its own next move.
    let red = "k8 k9 h10 h11 i11";
    let blue = red_home_but_j8(red) + " e5";
    let s = layout(&[('b', &blue), ('r', &format!("{red} j7"))], 'r', 1);
    let mut g = create(PEG, &["players=2"], Some(&s));
    assert!(g.outcome().is_none());
    play(g.as_mut(), "j7-j8");
    assert!(g.outcome().is_none(), "Red's move does not win for Blue");
    assert_eq!(to_act(g.as_ref()), seat(1));
    // A state string at this point is still an ongoing game.
    let again = create(PEG, &["players=2"], Some(&g.state()));
    assert!(again.outcome().is_none());
    play(g.as_mut(), "e5-e6");
    assert_won(g.as_mut(), &[1, 2]);
    // If Blue breaks its own goal during its move, there is no win.
    let mut g = create(PEG, &["players=2"], Some(&s));
    play(g.as_mut(), "j7-j8");
    play(g.as_mut(), "i10-h9");
    assert!(g.outcome().is_none());
}

// ---------------------------------------------------------------------------
// R-B8 draw
// ---------------------------------------------------------------------------

#[test]
fn r_b8_max_plies_draws() {
    for id in [PEG, TELKA] {
        for words in TABLES {
            let mut with_limit = words.to_vec();
            with_limit.push("max-plies=3");
            let mut g = create(id, &with_limit, None);
            for ply in 0..3 {
                assert!(g.outcome().is_none(), "{id} {words:?} ply {ply}");
                let action = g.legal_actions()[0].clone();
                play(g.as_mut(), &action);
            }
            let outcome = g.outcome().expect("drawn");
            assert_eq!(outcome.reason, EndReason::MaxPlies);
            assert_eq!(outcome.places, vec![1; g.seat_count()], "{id} {words:?}");
            assert!(outcome.winners().is_empty());
            assert_eq!(places(g.as_ref()), vec![1; g.seat_count()]);
            assert_eq!(g.options().get("max-plies"), Some("3"));
        }
    }
    // The default limit is 1000.
    let g = create(TELKA, &[], None);
    assert_eq!(g.options().get("max-plies"), Some("1000"));
    let s = g.state().replace(" b 0", " b 1000");
    assert_eq!(
        create(TELKA, &[], Some(&s)).outcome().map(|o| o.reason),
        Some(EndReason::MaxPlies)
    );
    assert!(create(TELKA, &[], Some(&g.state().replace(" b 0", " b 999")))
        .outcome()
        .is_none());
}

// ---------------------------------------------------------------------------
// R-F1 forfeits
// ---------------------------------------------------------------------------

#[test]
fn r_f1_three_players_the_forfeiting_seat_is_out() {
    for id in [PEG, TELKA] {
        let mut g = create(id, &["players=3"], None);
        play(g.as_mut(), "c2-d3");
        assert_eq!(to_act(g.as_ref()), seat(2));
        let played = g.forfeit(seat(2), ForfeitKind::Crash);
        assert_eq!(played.events, ["forfeit 2 crash", "remove yellow 12"]);
        assert!(played.seat_events.iter().all(|e| e.len() == 2));
        assert!(g.outcome().is_none(), "play goes on");
        assert_eq!(Board::parse(&g.state()).count('y'), 0);
        assert!(g.state().ends_with(" r 1 out=2"), "{}", g.state());
        assert_eq!(to_act(g.as_ref()), seat(3));
        // The state string carries who is out.
        let again = create(id, &["players=3"], Some(&g.state()));
        assert_eq!(again.state(), g.state());
        assert_eq!(again.legal_actions(), g.legal_actions());
        // Turns skip Yellow.
        play(g.as_mut(), "h10-g9");
        assert_eq!(to_act(g.as_ref()), seat(1));
        play(g.as_mut(), "d3-e4");
        assert_eq!(to_act(g.as_ref()), seat(3));
        // A second forfeit of the same seat changes nothing.
        assert!(g.forfeit(seat(2), ForfeitKind::Crash).events.is_empty());
        assert_eq!(to_act(g.as_ref()), seat(3));
        // Red goes out too: Blue is the last one standing.
        let played = g.forfeit(seat(3), ForfeitKind::Timeout);
        assert_eq!(played.events, ["forfeit 3 timeout", "remove red 12"]);
        let outcome = g.outcome().expect("over");
        assert_eq!(outcome.places, [1, 3, 2]);
        // protocol.md: `forfeit <seat> <kind>` when that forfeit ended the game.
        let ended_by = EndReason::Forfeit {
            seat: seat(3),
            kind: ForfeitKind::Timeout,
        };
        assert_eq!(outcome.reason, ended_by);
        assert_eq!(outcome.winners(), [seat(1)]);
        assert_eq!(g.turn(), Turn::Over);
        assert!(g.state().ends_with(" out=2,3"), "{}", g.state());
        // The final state string gives the same places back; read from a state
        // string, Blue is simply the last one standing.
        let again = create(id, &["players=3"], Some(&g.state()));
        let reloaded = again.outcome().expect("over");
        assert_eq!(reloaded.places, [1, 3, 2]);
        assert_eq!(reloaded.reason, EndReason::LastStanding);
    }
}

#[test]
fn r_f1_three_players_out_seats_rank_below_the_others() {
    // Seat 1 forfeits on its own turn and play passes to Yellow. When Yellow then
    // wins, the seat that is out takes the last place: Yellow 1, Red 2, Blue 3.
    let mut g = create(TELKA, &["players=3"], None);
    g.forfeit(seat(1), ForfeitKind::Illegal);
    assert_eq!(to_act(g.as_ref()), seat(2));
    assert!(g.state().ends_with(" y 0 out=1"), "{}", g.state());
    let s = layout(&[('y', "k1 k2 j5"), ('r', "e7")], 'y', 3) + " out=1";
    let mut g = create(TELKA, &["players=3"], Some(&s));
    play(g.as_mut(), "j5-j4");
    assert_eq!(places(g.as_ref()), [3, 1, 2]);
    // The ply limit with a seat out: the others share first place, and places are
    // dense (protocol.md), so the seat that is out is second.
    let mut g = create(PEG, &["players=3", "max-plies=2"], None);
    g.forfeit(seat(3), ForfeitKind::Protocol);
    play(g.as_mut(), "c2-d3");
    play(g.as_mut(), "c10-d9");
    assert_eq!(
        g.outcome().map(|o| (o.places, o.reason)),
        Some((vec![1, 1, 2], EndReason::MaxPlies))
    );
}

#[test]
fn r_f1_two_sides_a_forfeit_loses_for_the_side() {
    let mut g = create(PEG, &["players=2"], None);
    let played = g.forfeit(seat(1), ForfeitKind::Timeout);
    assert_eq!(played.events, ["forfeit 1 timeout"]);
    let outcome = g.outcome().expect("over");
    assert_eq!(outcome.places, [2, 1]);
    assert_eq!(
        outcome.reason,
        EndReason::Forfeit {
            seat: seat(1),
            kind: ForfeitKind::Timeout
        }
    );
    assert_eq!(g.turn(), Turn::Over);
    // A forfeit after the end changes nothing.
    assert!(g.forfeit(seat(2), ForfeitKind::Crash).events.is_empty());
    assert_eq!(g.outcome(), Some(outcome));

    // 4 players: Yellow's forfeit loses for Yellow+Red; nothing leaves the board.
    let mut g = create(TELKA, &["players=4"], None);
    g.forfeit(seat(2), ForfeitKind::Resign);
    let outcome = g.outcome().expect("over");
    assert_eq!(outcome.places, [1, 2, 2, 1]);
    assert_eq!(
        outcome.reason,
        EndReason::Forfeit {
            seat: seat(2),
            kind: ForfeitKind::Resign
        }
    );
    assert_eq!(Board::parse(&g.state()).count('y'), 12);
    let mut g = create(TELKA, &["players=4"], None);
    g.forfeit(seat(4), ForfeitKind::Crash);
    assert_eq!(places(g.as_ref()), [2, 1, 1, 2]);
    // Two colours per player.
    let mut g = create(PEG, &["players=2", "colors-per-player=2"], None);
    g.forfeit(seat(2), ForfeitKind::Illegal);
    assert_eq!(places(g.as_ref()), [1, 2]);
}

// ---------------------------------------------------------------------------
// R-B9 state strings
// ---------------------------------------------------------------------------

#[test]
fn r_b9_start_positions() {
    let g = create(PEG, &["players=4"], None);
    assert_eq!(
        g.state(),
        "yyyy3rrrr/yyyy3rrrr/yy7rr/yy7rr/11/11/11/bb7gg/bb7gg/bbbb3gggg/bbbb3gggg b 0"
    );
    let g = create(TELKA, &["players=2"], None);
    assert_eq!(g.state(), "7rrrr/7rrrr/9rr/9rr/11/11/11/bb9/bb9/bbbb7/bbbb7 b 0");
    let g = create(TELKA, &["players=3"], None);
    assert_eq!(
        g.state(),
        "yyyy3rrrr/yyyy3rrrr/yy7rr/yy7rr/11/11/11/bb9/bb9/bbbb7/bbbb7 b 0"
    );
    assert_eq!(g.seat_label(seat(2)), "Yellow");
    let g = create(TELKA, &["players=2", "colors-per-player=2"], None);
    assert_eq!(g.seat_label(seat(1)), "Blue+Green");
    assert_eq!(g.seat_label(seat(2)), "Yellow+Red");
    // The helper used by these tests agrees with the spec's start string.
    let homes = |c: Colour| {
        c.home_points()
            .map(|p| p.to_string())
            .collect::<Vec<_>>()
            .join(" ")
    };
    let s = layout(
        &[
            ('b', &homes(Colour::Blue)),
            ('y', &homes(Colour::Yellow)),
            ('r', &homes(Colour::Red)),
            ('g', &homes(Colour::Green)),
        ],
        'b',
        0,
    );
    assert_eq!(s, create(PEG, &["players=4"], None).state());
}

#[test]
fn r_b9_state_strings_round_trip() {
    let mut checked = 0;
    for (id, words, g) in all_random_positions(2, 100) {
        let again = create(id, words, Some(&g.state()));
        assert_eq!(again.state(), g.state(), "{id} {words:?}");
        assert_eq!(
            again.legal_actions(),
            g.legal_actions(),
            "{id} {words:?} {}",
            g.state()
        );
        assert_eq!(again.turn(), g.turn(), "{id} {words:?} {}", g.state());
        assert_eq!(again.plies(), g.plies());
        assert_eq!(again.outcome(), g.outcome());
        assert_eq!(again.view(seat(1)).text(), g.state());
        checked += 1;
    }
    // Positions after a forfeit (3 players), with the `out=` field.
    for id in [PEG, TELKA] {
        for out in 1..=3 {
            let mut rng = Rng::new(out as u64);
            let mut g = create(id, &["players=3"], None);
            for ply in 0..60 {
                if ply == 20 {
                    g.forfeit(seat(out), ForfeitKind::Crash);
                }
                let Turn::Act { seat, .. } = g.turn() else { break };
                let legal = g.legal_actions();
                g.play(seat, &legal[rng.below(legal.len())]).unwrap();
                let again = create(id, &["players=3"], Some(&g.state()));
                assert_eq!(again.state(), g.state());
                assert_eq!(again.legal_actions(), g.legal_actions());
                assert_eq!(again.turn(), g.turn());
                checked += 1;
            }
            assert!(g.state().contains(&format!(" out={out}")), "{}", g.state());
        }
    }
    assert!(checked > 1500, "{checked}");
}

fn state_problems(words: &[&str], text: &str) -> String {
    match PEG.create(&opts(words), Some(text)) {
        Err(SetupError::State(problems)) => {
            assert!(!problems.is_empty());
            problems.join("\n")
        }
        Err(other) => panic!("`{text}`: expected a state error, got {other}"),
        Ok(_) => panic!("`{text}` accepted"),
    }
}

#[test]
fn r_b9_malformed_state_strings_name_the_problem() {
    const TWO: &str = "7rrrr/7rrrr/9rr/9rr/11/11/11/bb9/bb9/bbbb7/bbbb7 b 0";
    assert!(PEG.create(&opts(&["players=2"]), Some(TWO)).is_ok());
    let cases: [(&[&str], String, &str); 22] = [
        (&["players=2"], "11/11/11 b 0".into(), "expected 11 ranks"),
        (&["players=2"], TWO.replacen("7rrrr/", "", 1), "got 10"),
        (&["players=2"], TWO.replacen("11/", "11/11/", 1), "got 12"),
        (
            &["players=2"],
            TWO.replacen("/11/", "/12/", 1),
            "covers 12 points",
        ),
        (
            &["players=2"],
            TWO.replacen("/11/", "/10/", 1),
            "covers 10 points",
        ),
        (&["players=2"], TWO.replacen("bb9", "bb9b", 1), "covers 12 points"),
        (&["players=2"], TWO.replacen("/11/", "//", 1), "covers 0 points"),
        (
            &["players=2"],
            TWO.replacen("/11/", "/5x5/", 1),
            "`x` is not a counter",
        ),
        (
            &["players=2"],
            TWO.replacen("/11/", "/5B5/", 1),
            "`B` is not a counter",
        ),
        (
            &["players=2"],
            TWO.replacen("/11/", "/011/", 1),
            "malformed `011`",
        ),
        (
            &["players=2"],
            TWO.replacen("/11/", "/5y5/", 1),
            "1 yellow counters, but yellow is not in play",
        ),
        (
            &["players=3"],
            TWO.replacen("/11/", "/5g5/", 1),
            "green is not in play",
        ),
        (
            &["players=2"],
            TWO.replacen("/11/", "/5b5/", 1),
            "13 blue counters, at most 12",
        ),
        (&["players=2"], TWO.replace(" b 0", " b -1"), "move count `-1`"),
        (&["players=2"], TWO.replace(" b 0", " b x"), "move count `x`"),
        (
            &["players=2"],
            TWO.replace(" b 0", " y 0"),
            "colour to move `y` is not in play",
        ),
        (&["players=2"], TWO.replace(" b 0", " q 0"), "colour to move `q`"),
        (&["players=2"], TWO.replace(" b 0", " b"), "fields"),
        (
            &["players=2"],
            TWO.replace(" b 0", " b 0 out=2"),
            "three independent sides",
        ),
        (
            &["players=3"],
            TWO.replace(" b 0", " b 0 out=3"),
            "red counters on the board, but its seat is out",
        ),
        (
            &["players=3"],
            TWO.replace("7rrrr", "11")
                .replace("9rr", "11")
                .replace(" b 0", " r 0 out=3"),
            "belongs to a seat that is out",
        ),
        (
            &["players=3"],
            TWO.replace(" b 0", " b 0 out=4"),
            "not a distinct seat",
        ),
    ];
    for (words, text, expected) in &cases {
        let problems = state_problems(words, text);
        assert!(
            problems.contains(expected),
            "`{text}`: expected `{expected}` in:\n{problems}"
        );
    }
    // Every problem at once.
    let text = TWO.replacen("/11/", "/5y5/", 1).replace(" b 0", " g z");
    let problems = state_problems(&["players=2"], &text);
    for expected in [
        "yellow is not in play",
        "colour to move `g` is not in play",
        "move count `z`",
    ] {
        assert!(problems.contains(expected), "{problems}");
    }
    // The table must exist too (these are option errors, not state errors).
    assert!(matches!(
        PEG.create(&opts(&["players=3", "colors-per-player=2"]), None),
        Err(SetupError::Option(_))
    ));
    assert!(matches!(
        PEG.create(&opts(&["players=5"]), None),
        Err(SetupError::Option(_))
    ));
    assert!(matches!(
        PEG.create(&opts(&["colour=red"]), None),
        Err(SetupError::Option(_))
    ));
}

#[test]
fn r_b9_state_parse_and_print_are_inverse() {
    // Through the module API as well: parse(print(p)) == p for random positions.
    for words in TABLES {
        let per = if words.len() == 2 { 2 } else { 1 };
        let t = seating::Seating::new(players_of(words), per).unwrap();
        for g in random_positions(TELKA, words, 3, 1, 60) {
            let (pos, out) = state::parse(&g.state(), &t).expect("printed states parse");
            assert!(out.is_empty());
            assert_eq!(state::print(&pos, &out), g.state());
        }
    }
}

// ---------------------------------------------------------------------------
// Data-driven cases (fixtures/parker/cases.txt)
// ---------------------------------------------------------------------------

/// One line of the case file: `game | options | state | action | expected`.
#[derive(Debug)]
struct Case<'a> {
    line: usize,
    game: GameId,
    options: Vec<&'a str>,
    state: Option<&'a str>,
    action: &'a str,
    expected: &'a str,
}

fn parse_cases(text: &str) -> Vec<Case<'_>> {
    cli_support::case_rows(text, 5)
        .into_iter()
        .map(|(line, fields)| Case {
            line,
            game: GameId::parse(fields[0]).expect("game id"),
            options: match fields[1] {
                "-" => Vec::new(),
                o => o.split_whitespace().collect(),
            },
            state: (fields[2] != "start").then_some(fields[2]),
            action: fields[3],
            expected: fields[4],
        })
        .collect()
}

/// What happened, in the case file's words.
fn run_case(case: &Case) -> String {
    let mut g = match case.game.create(&opts(&case.options), case.state) {
        Ok(g) => g,
        Err(e) => return format!("setup error: {e}"),
    };
    let before = g.state();
    let seat = to_act(g.as_ref());
    match g.play(seat, case.action) {
        Ok(played) => {
            let result = match g.outcome() {
                None => "ongoing".to_string(),
                Some(o) => o.protocol_text(),
            };
            format!("ok {} => {result}", played.events.join("; "))
        }
        Err(rejection) => {
            assert_eq!(
                g.state(),
                before,
                "cases.txt:{}: a rejection changed the state",
                case.line
            );
            match rejection {
                Rejection::Illegal { .. } => "illegal".into(),
                Rejection::Malformed { .. } => "malformed".into(),
                other => format!("{other:?}"),
            }
        }
    }
}

#[test]
fn r_b_cases_from_the_fixture_file() {
    let cases = parse_cases(include_str!("../fixtures/parker/cases.txt"));
    assert!(cases.len() >= 15, "only {} cases", cases.len());
    let mut failures = Vec::new();
    for case in &cases {
        let got = run_case(case);
        // `ok <events>` may leave out the result, which then must be `ongoing`.
        let expected = match case.expected.starts_with("ok ") && !case.expected.contains(" => ") {
            true => format!("{} => ongoing", case.expected),
            false => case.expected.to_string(),
        };
        if got != expected {
            failures.push(format!(
                "cases.txt:{}: {} {:?} `{}`\n  expected: {expected}\n  got:      {got}",
                case.line, case.game, case.options, case.action
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
