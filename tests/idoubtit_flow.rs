//! I-Doubt-It TelnChes through the `Game` trait: the doubt flow (R-D6, R-D6a), king
//! captures (R-D7), the ply limit (R-D8), the placement phase (R-D3), what each seat is
//! told (R-D10), bad input (R-D4), state strings that round-trip on thousands of
//! positions of every variant, and full matches between the built-in agents.

use std::path::Path;
use std::process::Command;

use referee::game::{ActionKind, EndReason, Game, GameId, Options, Played, Rejection, Seat, Turn};
use referee::rng::Rng;

const CHESS_START: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR play w - - - - 0 -";
const SHOGI_START: &str = "lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL play w - - - - 0 -";

/// Seat 1, White.
fn white() -> Seat {
    Seat::new(1).unwrap()
}

/// Seat 2, Black.
fn black() -> Seat {
    Seat::new(2).unwrap()
}

fn options(variant: u32, extra: &[&str]) -> Options {
    let mut words = vec![format!("variant={variant}")];
    words.extend(extra.iter().map(|w| w.to_string()));
    Options::parse(words.iter().map(String::as_str)).expect("options")
}

/// A game of `variant` from `state` (or from the empty board of the placement phase).
fn game(variant: u32, state: Option<&str>) -> Box<dyn Game> {
    game_with(&options(variant, &[]), state)
}

fn game_with(opts: &Options, state: Option<&str>) -> Box<dyn Game> {
    GameId::IDoubtIt
        .create(opts, state)
        .unwrap_or_else(|e| panic!("cannot create from {state:?}: {e}"))
}

/// Plays an action that must be accepted.
fn play(g: &mut dyn Game, seat: Seat, action: &str) -> Played {
    let before = g.state();
    g.play(seat, action)
        .unwrap_or_else(|e| panic!("seat {seat} `{action}` rejected in `{before}`: {e}"))
}

/// What `seat` was told, as text.
fn told(p: &Played, seat: Seat) -> Vec<String> {
    p.seat_events[seat.index()]
        .iter()
        .map(|e| e.text().to_string())
        .collect()
}

/// Asserts the omniscient events and what each seat was told.
fn assert_events(p: &Played, all: &[&str], to_white: &[&str], to_black: &[&str]) {
    assert_eq!(p.seat_events.len(), 2, "one list of events per seat");
    assert_eq!(p.events, all, "omniscient events");
    assert_eq!(told(p, white()), to_white, "White's events");
    assert_eq!(told(p, black()), to_black, "Black's events");
}

/// Asserts the same events for the record and for both seats.
fn assert_public(p: &Played, all: &[&str]) {
    assert_events(p, all, all, all);
}

fn acts(g: &dyn Game) -> (Seat, ActionKind) {
    match g.turn() {
        Turn::Act { seat, kind } => (seat, kind),
        Turn::Over => panic!("the game is over: {}", g.state()),
    }
}

/// A state string with its play-phase ply counter replaced.
fn with_plies(state: &str, plies: u32) -> String {
    let mut fields: Vec<String> = state.split(' ').map(str::to_string).collect();
    fields[7] = plies.to_string();
    fields.join(" ")
}

// ---- R-D6: doubts ----

#[test]
fn r_d6_an_incorrect_capture_doubted_is_undone_entirely_and_the_doubter_acts() {
    // Benches of both sides already hold pieces, so a restored bench is visible.
    let start = "rnbqkbnr/ppp1pppp/8/8/8/8/PPPPPPP1/RNBQKBNR play w P'^ p'_ - - 10 -";
    let mut g = game(1, Some(start));
    // The rook on a1 "jumps" over its own pawn and takes on a7: well-formed, incorrect.
    let p = play(&mut *g, white(), "a1a7");
    assert_public(&p, &["move white a1a7 capture a7"]);
    assert!(g
        .state()
        .starts_with("rnbqkbnr/Rpp1pppp/8/8/8/8/PPPPPPP1/1NBQKBNR play b P'^P' p'_ - - 11 - | w a1a7 | "));
    assert_eq!(acts(&*g), (black(), ActionKind::Move));
    assert!(g.legal_actions().contains(&"doubt".to_string()));

    let p = play(&mut *g, black(), "doubt");
    assert_public(&p, &["doubt black", "verdict incorrect", "undo white a1a7"]);
    // Everything is as before the move (the captured pawn back on a7, White's bench as it
    // was), except the ply counter: the move and the doubt both count (R-D8).
    assert_eq!(g.state(), with_plies(start, 12).replace(" w ", " b "));
    assert_eq!(
        acts(&*g),
        (black(), ActionKind::Move),
        "the doubter takes its turn"
    );
    // It cannot doubt again: the doubted action is gone.
    assert!(!g.legal_actions().contains(&"doubt".to_string()));
    let before = g.state();
    assert!(matches!(g.play(black(), "doubt"), Err(Rejection::Illegal { .. })));
    assert_eq!(g.state(), before);
    let p = play(&mut *g, black(), "e7e5");
    assert_public(&p, &["move black e7e5"]);
    assert_eq!(acts(&*g), (white(), ActionKind::Move));
}

#[test]
fn r_d6_an_incorrect_drop_doubted_restores_the_bench_order() {
    // Shogi with drops (d = 1): White holds a black pawn, then a black knight. Dropping
    // the pawn on a file with White's own unpromoted pawn is incorrect (nifu, R-D5).
    let start = "lnsgkgs1l/1r5b1/pppp1pppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL play w P'^N'^ - - - 3 -";
    let mut g = game(9, Some(start));
    let p = play(&mut *g, white(), "1@e5");
    assert_public(&p, &["drop white 1@e5"]);
    assert!(g
        .state()
        .starts_with("lnsgkgs1l/1r5b1/pppp1pppp/9/4P'^4/9/PPPPPPPPP/1B5R1/LNSGKGSNL play b N'^ - "));
    let p = play(&mut *g, black(), "doubt");
    assert_public(&p, &["doubt black", "verdict incorrect", "undo white 1@e5"]);
    assert_eq!(
        g.state(),
        with_plies(start, 5).replace(" w ", " b "),
        "the bench is P then N again"
    );
    // The knight dropped (slot 2) is correct: the doubter loses its turn.
    play(&mut *g, black(), "a7a6");
    let p = play(&mut *g, white(), "2@e5");
    assert_public(&p, &["drop white 2@e5"]);
    let p = play(&mut *g, black(), "doubt");
    assert_public(&p, &["doubt black", "verdict correct"]);
    assert_eq!(acts(&*g), (white(), ActionKind::Move));
    assert!(g.state().contains(" P'^ - - - 8 -"), "{}", g.state());
}

#[test]
fn r_d6_a_correct_action_doubted_costs_the_doubter_its_turn() {
    let mut g = game(0, Some(CHESS_START));
    let p = play(&mut *g, white(), "e2e4");
    assert_public(&p, &["move white e2e4"]);
    let p = play(&mut *g, black(), "doubt");
    assert_public(&p, &["doubt black", "verdict correct"]);
    // Black missed its turn; White acts again, and nothing is pending for White.
    assert_eq!(acts(&*g), (white(), ActionKind::Move));
    assert_eq!(
        g.state(),
        "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR play w - - - - 2 -"
    );
    assert!(!g.legal_actions().contains(&"doubt".to_string()));
    assert!(matches!(g.play(white(), "doubt"), Err(Rejection::Illegal { .. })));
    // Black may doubt White's next action, and loses its turn again.
    play(&mut *g, white(), "d2d4");
    assert!(g.legal_actions().contains(&"doubt".to_string()));
    let p = play(&mut *g, black(), "doubt");
    assert_public(&p, &["doubt black", "verdict correct"]);
    assert_eq!(acts(&*g), (white(), ActionKind::Move));
    // A third time, the action is incorrect (a bishop through its own pawn).
    play(&mut *g, white(), "f1f3");
    let p = play(&mut *g, black(), "doubt");
    assert_public(&p, &["doubt black", "verdict incorrect", "undo white f1f3"]);
    assert_eq!(
        g.state(),
        "rnbqkbnr/pppppppp/8/8/3PP3/8/PPP2PPP/RNBQKBNR play b - - - - 6 -"
    );
    assert_eq!(acts(&*g), (black(), ActionKind::Move));
}

#[test]
fn r_d6b_an_undoubted_move_stands_forever() {
    let mut g = game(0, Some(CHESS_START));
    // An incorrect rook move that Black lets pass by moving.
    play(&mut *g, white(), "a1a5");
    let p = play(&mut *g, black(), "e7e5");
    assert_public(&p, &["move black e7e5"]);
    // The pending action is now Black's only; White's move is no longer doubtable.
    assert!(g.state().contains(" | b e7e5 | "), "{}", g.state());
    assert!(g
        .state()
        .starts_with("rnbqkbnr/pppp1ppp/8/R3p3/8/8/PPPPPPPP/1NBQKBNR play w "));
    play(&mut *g, white(), "h2h3");
    // Black's doubt now judges h2h3 (correct), not a1a5: Black loses its turn.
    let p = play(&mut *g, black(), "doubt");
    assert_public(&p, &["doubt black", "verdict correct"]);
    assert_eq!(acts(&*g), (white(), ActionKind::Move));
    assert!(g
        .state()
        .starts_with("rnbqkbnr/pppp1ppp/8/R3p3/8/7P/PPPPPPP1/1NBQKBNR play w "));
    // And White, to act again, has nothing to doubt: Black's e7e5 stood too.
    assert!(matches!(g.play(white(), "doubt"), Err(Rejection::Illegal { .. })));
}

// ---- R-D7: king captures ----

const KINGS: &str = "4k3/8/8/8/8/8/8/4Q1K1 play w - - - - 0 -";

#[test]
fn r_d7_a_king_capture_is_announced_and_the_victim_may_only_doubt_or_accept() {
    let mut g = game(0, Some(KINGS));
    let p = play(&mut *g, white(), "e1e8");
    assert_public(&p, &["move white e1e8 capture e8", "king-captured black"]);
    assert_eq!(acts(&*g), (black(), ActionKind::Respond));
    assert_eq!(g.legal_actions(), ["doubt", "accept"]);
    for bad in ["e8e7", "g1g2", "1@e4"] {
        let before = g.state();
        assert!(
            g.play(black(), bad).is_err(),
            "{bad} while answering a king capture"
        );
        assert_eq!(g.state(), before);
    }
    assert!(
        g.view(black()).text().contains(" respond b "),
        "{}",
        g.view(black()).text()
    );
    let p = play(&mut *g, black(), "accept");
    assert_public(&p, &["accept black"]);
    assert_eq!(g.turn(), Turn::Over);
    let outcome = g.outcome().expect("over");
    assert_eq!(outcome.places, [1, 2]);
    assert_eq!(outcome.reason, EndReason::Win);
    assert!(g.legal_actions().is_empty());
    assert_eq!(g.play(black(), "doubt"), Err(Rejection::GameOver));
}

#[test]
fn r_d7_doubting_a_correct_king_capture_loses() {
    let mut g = game(1, Some(KINGS));
    play(&mut *g, white(), "e1e8");
    let p = play(&mut *g, black(), "doubt");
    assert_public(&p, &["doubt black", "verdict correct"]);
    let outcome = g.outcome().expect("over");
    assert_eq!(outcome.places, [1, 2]);
    assert_eq!(outcome.reason, EndReason::Win);
    assert_eq!(g.turn(), Turn::Over);
}

#[test]
fn r_d7_doubting_an_incorrect_king_capture_undoes_it_and_the_game_goes_on() {
    let mut g = game(1, Some(KINGS));
    // The king on g1 cannot reach e8.
    let p = play(&mut *g, white(), "g1e8");
    assert_public(&p, &["move white g1e8 capture e8", "king-captured black"]);
    let p = play(&mut *g, black(), "doubt");
    assert_public(&p, &["doubt black", "verdict incorrect", "undo white g1e8"]);
    assert_eq!(g.outcome(), None);
    assert_eq!(acts(&*g), (black(), ActionKind::Move));
    assert_eq!(g.state(), with_plies(KINGS, 2).replace(" w ", " b "));
    // Black's own king capture, answered by White.
    play(&mut *g, black(), "e8g1");
    assert_eq!(acts(&*g), (white(), ActionKind::Respond));
    play(&mut *g, white(), "accept");
    assert_eq!(g.outcome().expect("over").places, [2, 1]);
}

#[test]
fn r_d7_black_wins_when_its_king_capture_stands() {
    let mut g = game(0, Some("4k3/8/8/8/8/8/3q4/4K3 play b - - - - 0 -"));
    let p = play(&mut *g, black(), "d2e1");
    assert_public(&p, &["move black d2e1 capture e1", "king-captured white"]);
    assert_eq!(acts(&*g), (white(), ActionKind::Respond));
    play(&mut *g, white(), "doubt");
    assert_eq!(g.outcome().expect("over").places, [2, 1]);
}

// ---- R-D8: the ply limit ----

#[test]
fn r_d8_r_d8a_max_plies_draws_the_game_counting_doubts() {
    let mut g = game_with(&options(0, &["max-plies=4"]), Some(CHESS_START));
    play(&mut *g, white(), "e2e4");
    play(&mut *g, black(), "doubt");
    play(&mut *g, white(), "d2d4");
    assert_eq!(g.outcome(), None);
    play(&mut *g, black(), "e7e5");
    let outcome = g.outcome().expect("drawn after 4 play-phase actions");
    assert_eq!(outcome.places, [1, 1]);
    assert_eq!(outcome.reason, EndReason::MaxPlies);
    assert_eq!(g.turn(), Turn::Over);
    assert!(g.legal_actions().is_empty());
    let before = g.state();
    assert!(before.contains(" drawn - "), "{before}");
    assert_eq!(g.play(white(), "doubt"), Err(Rejection::GameOver));
    assert_eq!(g.play(white(), "a2a3"), Err(Rejection::GameOver));
    assert_eq!(g.state(), before);
}

#[test]
fn r_d8a_a_king_capture_on_the_last_ply_is_answered_first() {
    let opts = options(0, &["max-plies=1"]);
    let mut g = game_with(&opts, Some(KINGS));
    play(&mut *g, white(), "e1e8");
    assert_eq!(acts(&*g), (black(), ActionKind::Respond));
    play(&mut *g, black(), "accept");
    assert_eq!(g.outcome().expect("over").reason, EndReason::Win);

    let mut g = game_with(&opts, Some(KINGS));
    play(&mut *g, white(), "g1e8");
    play(&mut *g, black(), "doubt");
    let outcome = g.outcome().expect("undone, then drawn");
    assert_eq!(outcome.reason, EndReason::MaxPlies);
}

// ---- R-D3: placement ----

/// Plays the whole placement phase with the first legal placement each time, checking
/// turn order and home rows; returns the seats in the order they placed.
fn place_all(variant: u32) -> (Box<dyn Game>, Vec<Seat>) {
    let mut g = game(variant, None);
    let shogi = variant >= 8;
    let (size, rows) = if shogi { (9u8, 3u8) } else { (8, 2) };
    let swapped = variant & 4 != 0;
    let mut order = Vec::new();
    let mut rng = Rng::new(u64::from(variant));
    loop {
        let (seat, kind) = acts(&*g);
        if kind != ActionKind::Place {
            assert_eq!(
                (seat, kind),
                (white(), ActionKind::Move),
                "play starts with White"
            );
            break;
        }
        order.push(seat);
        let legal = g.legal_actions();
        assert!(!legal.is_empty());
        // Every placement goes onto the home rows of the side owning the piece.
        let owner_is_white = (seat == white()) != swapped;
        for a in &legal {
            let (_, sq) = a.split_once('@').expect("placement");
            let rank = sq[1..].parse::<u8>().unwrap();
            let home = if owner_is_white {
                rank <= rows
            } else {
                rank > size - rows
            };
            assert!(home, "variant {variant}: seat {seat} may place {a}");
        }
        // Off the home rows, or by the other seat, a placement is rejected.
        let letter = &legal[0][..1];
        let middle = format!("{letter}@e5");
        let before = g.state();
        assert!(
            matches!(g.play(seat, &middle), Err(Rejection::Illegal { .. })),
            "{middle}"
        );
        let other = if seat == white() { black() } else { white() };
        assert!(matches!(
            g.play(other, &legal[0]),
            Err(Rejection::NotYourTurn { .. })
        ));
        assert_eq!(g.state(), before);
        let action = legal[rng.below(legal.len())].clone();
        let p = play(&mut *g, seat, &action);
        // Whoever places a piece knows its type: its own (s = 0) or its opponent's
        // (s = 1); the other seat is told only the square (R-D10).
        let (_, sq) = action.split_once('@').unwrap();
        let side = if seat == white() { "white" } else { "black" };
        let seen = format!("place {side} {action}");
        let unseen = format!("place {side} X@{sq}");
        let (w, b) = if seat == white() {
            (&seen, &unseen)
        } else {
            (&unseen, &seen)
        };
        assert_events(&p, &[&seen], &[w], &[b]);
    }
    (g, order)
}

#[test]
fn r_d3_placement_alternates_white_first_on_the_home_rows_then_white_plays() {
    for variant in [0, 3, 8, 11] {
        let (g, order) = place_all(variant);
        let army = if variant >= 8 { 20 } else { 16 };
        assert_eq!(order.len(), 2 * army);
        for (i, s) in order.iter().enumerate() {
            assert_eq!(
                *s,
                if i % 2 == 0 { white() } else { black() },
                "variant {variant} placement {i}"
            );
        }
        let state = g.state();
        assert!(state.contains(" play w - - - - 0 -"), "{state}");
        // Each side's pieces stand on its own home rows.
        let ranks: Vec<&str> = state.split(' ').next().unwrap().split('/').collect();
        let rows = if variant >= 8 { 3 } else { 2 };
        for (i, rank) in ranks.iter().enumerate() {
            let white = rank.chars().filter(char::is_ascii_uppercase).count();
            let black = rank.chars().filter(char::is_ascii_lowercase).count();
            if i < rows {
                assert_eq!(white, 0, "{state}");
            } else if i >= ranks.len() - rows {
                assert_eq!(black, 0, "{state}");
            } else {
                assert_eq!(white + black, 0, "{state}");
            }
        }
    }
}

#[test]
fn r_d3_with_s_1_each_seat_places_the_opponents_pieces_on_the_opponents_rows() {
    for variant in [4, 7, 12, 15] {
        let (g, order) = place_all(variant);
        assert!(order.iter().step_by(2).all(|&s| s == white()));
        let state = g.state();
        assert!(state.contains(" play w - - - - 0 -"), "{state}");
    }
    let mut g = game(4, None);
    let legal = g.legal_actions();
    assert!(legal.contains(&"K@e8".to_string()) && !legal.contains(&"K@e1".to_string()));
    let p = play(&mut *g, white(), "K@e8");
    assert_events(
        &p,
        &["place white K@e8"],
        &["place white K@e8"],
        &["place white X@e8"],
    );
    assert!(g
        .state()
        .starts_with("4k3/8/8/8/8/8/8/8 place b - - KQRRBBNNPPPPPPPP QRRBBNNPPPPPPPP 0 -"));
    // White knows Black's supply (it places it), not its own; Black the reverse.
    assert_eq!(
        g.view(white()).text(),
        "4k3/8/8/8/8/8/8/8 place b - - #16 QRRBBNNPPPPPPPP 0 -"
    );
    assert_eq!(
        g.view(black()).text(),
        "4x3/8/8/8/8/8/8/8 place b - - KQRRBBNNPPPPPPPP #15 0 -"
    );
    let p = play(&mut *g, black(), "Q@d1");
    assert_events(
        &p,
        &["place black Q@d1"],
        &["place black X@d1"],
        &["place black Q@d1"],
    );
    // A second king for Black does not exist.
    assert!(matches!(g.play(white(), "K@d8"), Err(Rejection::Illegal { .. })));
}

#[test]
fn r_d3_r_d10_placements_with_s_0_show_the_type_to_the_placer_only() {
    let mut g = game(0, None);
    let p = play(&mut *g, white(), "N@b1");
    assert_events(
        &p,
        &["place white N@b1"],
        &["place white N@b1"],
        &["place white X@b1"],
    );
    let p = play(&mut *g, black(), "K@e8");
    assert_events(
        &p,
        &["place black K@e8"],
        &["place black X@e8"],
        &["place black K@e8"],
    );
    assert_eq!(
        g.view(white()).text(),
        "4x3/8/8/8/8/8/8/1N6 place w - - KQRRBBNPPPPPPPP #15 0 -"
    );
    // Placement is not doubtable, and only placements are accepted.
    assert!(matches!(g.play(white(), "doubt"), Err(Rejection::Illegal { .. })));
    assert!(matches!(g.play(white(), "b1c3"), Err(Rejection::Illegal { .. })));
    assert!(
        matches!(g.play(white(), "K@e8"), Err(Rejection::Illegal { .. })),
        "occupied"
    );
    assert!(
        matches!(g.play(white(), "K@e3"), Err(Rejection::Illegal { .. })),
        "not a home row"
    );
    assert!(
        matches!(g.play(white(), "G@e1"), Err(Rejection::Malformed { .. })),
        "no gold in chess"
    );
}

// ---- R-D10: what each seat is told ----

#[test]
fn r_d10_a_chess_promotion_hides_its_type_from_the_opponent_only() {
    let start = "k2r4/4P3/8/8/8/8/8/K7 play w - - - - 0 -";
    let mut g = game(0, Some(start));
    let p = play(&mut *g, white(), "e7e8q");
    assert_events(
        &p,
        &["move white e7e8q"],
        &["move white e7e8q"],
        &["move white e7e8?"],
    );
    assert_eq!(
        g.view(white()).text(),
        "x2xQ3/8/8/8/8/8/8/K7 play b - - - - 1 - | w e7e8q"
    );
    assert_eq!(
        g.view(black()).text(),
        "k2rX3/8/8/8/8/8/8/X7 play b - - - - 1 - | w e7e8?"
    );
    let p = play(&mut *g, black(), "doubt");
    assert_public(&p, &["doubt black", "verdict correct"]);

    // With a capture, and undone: the undo hides the type the same way.
    let mut g = game(0, Some(start));
    let p = play(&mut *g, white(), "e7d8n");
    assert_events(
        &p,
        &["move white e7d8n capture d8"],
        &["move white e7d8n capture d8"],
        &["move white e7d8? capture d8"],
    );
    play(&mut *g, black(), "a8b8");
    let mut g = game(0, Some(start));
    play(&mut *g, white(), "e7e8r");
    play(&mut *g, black(), "d8d1");
    // White doubts Black's rook move: correct.
    let p = play(&mut *g, white(), "doubt");
    assert_public(&p, &["doubt white", "verdict correct"]);
    // An incorrect promotion (from two squares away), doubted and undone.
    let mut g = game(0, Some("k7/8/4P3/8/8/8/8/K7 play w - - - - 0 -"));
    play(&mut *g, white(), "e6e8q");
    let p = play(&mut *g, black(), "doubt");
    assert_events(
        &p,
        &["doubt black", "verdict incorrect", "undo white e6e8q"],
        &["doubt black", "verdict incorrect", "undo white e6e8q"],
        &["doubt black", "verdict incorrect", "undo white e6e8?"],
    );
    // Black promotes the other way round.
    let mut g = game(0, Some("k7/8/8/8/8/8/3p4/K7 play b - - - - 0 -"));
    let p = play(&mut *g, black(), "d2d1q");
    assert_events(
        &p,
        &["move black d2d1q"],
        &["move black d2d1?"],
        &["move black d2d1q"],
    );
}

#[test]
fn r_d10_shogi_promotions_en_passant_and_drops_are_told_as_played() {
    let mut g = game(9, Some(SHOGI_START));
    let p = play(&mut *g, white(), "b2h8+");
    assert_public(&p, &["move white b2h8+ capture h8"]);
    let mut g = game(1, Some("k7/3p4/8/4P3/8/8/8/K7 play b - - - - 0 -"));
    play(&mut *g, black(), "d7d5");
    assert!(g.legal_actions().contains(&"e5d6ep".to_string()));
    let p = play(&mut *g, white(), "e5d6ep");
    assert_public(&p, &["move white e5d6ep capture d5"]);
    let p = play(&mut *g, black(), "a8a7");
    assert_public(&p, &["move black a8a7"]);
    let p = play(&mut *g, white(), "1@c3");
    assert_public(&p, &["drop white 1@c3"]);
}

#[test]
fn r_d6_r_d10_a_doubt_is_told_only_as_its_verdict() {
    let mut g = game(0, Some(CHESS_START));
    play(&mut *g, white(), "b1b3");
    let p = play(&mut *g, black(), "doubt");
    // No reason ("a knight cannot …") reaches anyone, not even the record's events.
    assert_public(&p, &["doubt black", "verdict incorrect", "undo white b1b3"]);
}

// ---- R-D4 and bad input: rejected with the right kind, nothing changed ----

fn assert_rejected(g: &mut dyn Game, seat: Seat, action: &str, want: fn(&Rejection) -> bool) {
    let state = g.state();
    let views: Vec<String> = [white(), black()]
        .iter()
        .map(|&s| g.view(s).text().to_string())
        .collect();
    let legal = g.legal_actions();
    let err = g.play(seat, action).expect_err(action);
    assert!(want(&err), "`{action}` in `{state}`: wrong kind {err:?}");
    let message = err.to_string();
    assert!(!message.is_empty() && !message.contains('\n'), "{message:?}");
    assert_eq!(g.state(), state, "`{action}` changed the state");
    assert_eq!(g.legal_actions(), legal);
    for (i, s) in [white(), black()].iter().enumerate() {
        assert_eq!(g.view(*s).text(), views[i]);
    }
}

fn malformed(r: &Rejection) -> bool {
    matches!(r, Rejection::Malformed { .. })
}
fn illegal(r: &Rejection) -> bool {
    matches!(r, Rejection::Illegal { .. })
}
fn not_your_turn(r: &Rejection) -> bool {
    matches!(r, Rejection::NotYourTurn { .. })
}

#[test]
fn r_d4_bad_input_is_rejected_with_its_kind_and_changes_nothing() {
    let mut g = game(1, Some(CHESS_START));
    assert_rejected(&mut *g, black(), "e7e5", not_your_turn);
    assert_rejected(&mut *g, black(), "doubt", not_your_turn);
    for bad in [
        "e2e9", "i2i3", "e2", "e2e4e5", "E2E4", "e2-e4", "", " e2e4", "e2e4x", "0@e4", "Z@e4",
    ] {
        assert_rejected(&mut *g, white(), bad, malformed);
    }
    for bad in [
        "1@e4",   // empty bench slot
        "doubt",  // nothing to doubt
        "accept", // no king capture
        "N@e4",   // placement in the play phase
        "e3e4",   // no piece on e3
        "e7e5",   // Black's piece
        "a1a2",   // onto an own piece
        "e2e2",   // nowhere
        "e2e3q",  // promotion suffix off the last rank
        "e2d3ep", // no two-square advance just made
    ] {
        assert_rejected(&mut *g, white(), bad, illegal);
    }
    play(&mut *g, white(), "e2e4");
    assert_rejected(&mut *g, black(), "d7d6ep", illegal); // not onto the passed-over square
    assert_rejected(&mut *g, black(), "1@e5", illegal);
    assert_rejected(&mut *g, black(), "accept", illegal);
    play(&mut *g, black(), "d7d5");
    play(&mut *g, white(), "e4d5");
    // Black holds a white pawn now: slot 1 exists, slot 2 does not.
    play(&mut *g, black(), "d8d5");
    play(&mut *g, white(), "a2a3");
    assert_rejected(&mut *g, black(), "2@e5", illegal);
    assert_rejected(&mut *g, black(), "1@d5", illegal); // occupied
    play(&mut *g, black(), "1@e5");

    // No drops at all with d = 0; no promotion suffix `+` on the chess board.
    let mut g = game(0, Some(CHESS_START));
    assert_rejected(&mut *g, white(), "1@e4", illegal);
    assert_rejected(&mut *g, white(), "a2a3+", malformed);
    // Shogi: no chess suffixes, `+` only in or out of the zone.
    let mut g = game(8, Some(SHOGI_START));
    assert_rejected(&mut *g, white(), "a3a4q", malformed);
    assert_rejected(&mut *g, white(), "a3a4+", illegal);
    assert_rejected(&mut *g, white(), "a3a4ep", illegal);
    assert_rejected(&mut *g, white(), "j1j2", malformed);
    // Respond: only doubt or accept.
    let mut g = game(0, Some(KINGS));
    play(&mut *g, white(), "e1e8");
    assert_rejected(&mut *g, black(), "a1a2", illegal);
    assert_rejected(&mut *g, white(), "accept", not_your_turn);
    // Placement phase.
    let mut g = game(0, None);
    assert_rejected(&mut *g, white(), "e2e4", illegal);
    assert_rejected(&mut *g, white(), "accept", illegal);
    assert_rejected(&mut *g, black(), "K@e8", not_your_turn);
    assert_rejected(&mut *g, white(), "P@e3", illegal);
}

#[test]
fn bad_state_strings_are_refused_with_every_problem() {
    for (variant, bad) in [
        (0, "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR play w - - - - 0"),
        (0, "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBN play w - - - - 0 -"),
        (
            0,
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR play x - - - - 0 -",
        ),
        (
            0,
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR play w P - - - 0 -",
        ),
        (
            0,
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR play w - - K - 0 -",
        ),
        (
            0,
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNX play w - - - - 0 -",
        ),
        (
            0,
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR play w - - - - 0 e4",
        ),
        (
            0,
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR respond b - - - - 0 -",
        ),
        (8, CHESS_START),
        (
            0,
            "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR play b - - - - 1 e3 | w e2e4",
        ),
        (
            1,
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR play w QQ - - - 0 -",
        ),
        // The capturer cannot be the one to answer its own king capture, and a won
        // game has nothing left to doubt.
        (
            0,
            "4Q3/8/8/8/8/8/8/6K1 respond w - - - - 1 - | w e1e8 | 4k3/8/8/8/8/8/8/4Q1K1 play w - - - - 0 -",
        ),
        (
            0,
            "4Q3/8/8/8/8/8/8/6K1 won w - - - - 1 - | w e1e8 | 4k3/8/8/8/8/8/8/4Q1K1 play w - - - - 0 -",
        ),
        // The en-passant square lies behind an enemy advance, not one's own.
        (
            0,
            "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR play w - - - - 1 e3",
        ),
        (
            0,
            "rnbqkbnr/pppp1ppp/8/4p3/8/8/PPPPPPPP/RNBQKBNR play b - - - - 1 e6",
        ),
        // R-D5: on the shogi board a captured piece unpromotes, so no bench holds a
        // promoted one (dropping it would skip the pawn-drop checks).
        (9, "4k4/9/9/9/9/9/2P6/9/4K4 play w +P' - - - 0 -"),
    ] {
        let err = GameId::IDoubtIt
            .create(&options(variant, &[]), Some(bad))
            .expect_err(bad);
        let message = err.to_string();
        assert!(
            message.starts_with("bad state string") && !message.contains('\n'),
            "{message}"
        );
    }
}

// ---- state strings round-trip ----

/// A random well-formed action: often a correct one, sometimes a doubt, otherwise any.
fn random_action(g: &dyn Game, rng: &mut Rng) -> String {
    let (_, kind) = acts(g);
    let legal = g.legal_actions();
    assert!(!legal.is_empty(), "no action in {}", g.state());
    if kind == ActionKind::Move {
        let doubt = "doubt".to_string();
        if legal.contains(&doubt) && rng.below(5) == 0 {
            return doubt;
        }
        if rng.below(2) == 0 {
            let correct = g.correct_actions();
            if !correct.is_empty() {
                return correct[rng.below(correct.len())].clone();
            }
        }
    }
    legal[rng.below(legal.len())].clone()
}

/// Re-creating the game from its state string gives the same game.
fn assert_round_trip(g: &dyn Game, opts: &Options) -> Box<dyn Game> {
    let state = g.state();
    let h = GameId::IDoubtIt
        .create(opts, Some(&state))
        .unwrap_or_else(|e| panic!("{opts}: own state refused: {e}\n{state}"));
    assert_eq!(h.state(), state);
    assert_eq!(h.turn(), g.turn(), "{state}");
    assert_eq!(h.outcome(), g.outcome(), "{state}");
    assert_eq!(h.plies(), g.plies(), "{state}");
    assert_eq!(h.legal_actions(), g.legal_actions(), "{state}");
    assert_eq!(h.correct_actions(), g.correct_actions(), "{state}");
    for s in [white(), black()] {
        assert_eq!(h.view(s), g.view(s), "{state}");
    }
    h
}

/// The verdict a doubt must give: whether the pending action is among the correct
/// actions of the position it was made from (the snapshot after ` | `).
fn expected_verdict(g: &dyn Game, opts: &Options) -> &'static str {
    let state = g.state();
    let mut parts = state.splitn(3, " | ");
    let (_, pending, snapshot) = (
        parts.next(),
        parts.next().expect("pending"),
        parts.next().expect("snapshot"),
    );
    let action = pending.split_once(' ').expect("`<actor> <action>`").1;
    let before = game_with(opts, Some(snapshot));
    if before.correct_actions().iter().any(|a| a == action) {
        "verdict correct"
    } else {
        "verdict incorrect"
    }
}

/// Random games of one variant: every position round-trips, the re-created game plays
/// on exactly as the original, correct actions are well-formed, and each doubt's
/// verdict agrees with the correct actions of the position the doubted action left.
fn round_trip_variant(variant: u32) -> usize {
    let mut rng = Rng::new(1000 + u64::from(variant));
    let mut positions = 0;
    for game_no in 0..4 {
        // Half of the games start from a placed army, half place it at random.
        let limit = ["max-plies=500", "max-plies=40"][game_no % 2];
        let opts = options(variant, &[limit]);
        let start = match (game_no % 3, variant >= 8) {
            (0, false) => Some(CHESS_START),
            (0, true) => Some(SHOGI_START),
            _ => None,
        };
        let mut g = game_with(&opts, start);
        let mut steps = 0;
        while g.outcome().is_none() && steps < 120 {
            let mut h = assert_round_trip(&*g, &opts);
            positions += 1;
            let legal = g.legal_actions();
            for a in g.correct_actions() {
                assert!(
                    legal.contains(&a),
                    "correct `{a}` is not well-formed in {}",
                    g.state()
                );
            }
            let (seat, _) = acts(&*g);
            let action = random_action(&*g, &mut rng);
            let verdict = (action == "doubt").then(|| expected_verdict(&*g, &opts));
            let a = play(&mut *g, seat, &action);
            if let Some(verdict) = verdict {
                assert_eq!(a.events[1], verdict, "{}", h.state());
                // Both seats are told the verdict, and nothing else about the doubt.
                for s in [white(), black()] {
                    assert_eq!(told(&a, s)[..2], a.events[..2]);
                }
            }
            // The re-created game also plays on exactly as the original.
            let b = play(&mut *h, seat, &action);
            assert_eq!(a, b, "{action} after {}", g.state());
            assert_eq!(h.state(), g.state());
            steps += 1;
        }
        assert_round_trip(&*g, &opts);
        positions += 1;
    }
    positions
}

#[test]
fn state_strings_round_trip_on_random_games_of_every_variant() {
    let threads: Vec<_> = (0..16)
        .map(|v| std::thread::spawn(move || round_trip_variant(v)))
        .collect();
    let positions: usize = threads
        .into_iter()
        .map(|t| t.join().expect("a variant failed"))
        .sum();
    assert!(positions > 4000, "{positions} positions");
}

// ---- full matches between the built-in agents ----

fn referee() -> Command {
    Command::new(env!("CARGO_BIN_EXE_referee"))
}

fn full_match(dir: &Path, variant: u32, fill: &str) {
    let record = dir.join(format!("v{variant}-{fill}.jsonl"));
    let out = referee()
        .args(["match", "--game", "idoubtit", "-o", &format!("variant={variant}")])
        .args([
            "--seed",
            &variant.to_string(),
            "--tc",
            "120+1",
            "--startup-timeout",
            "60",
            "-q",
        ])
        // `greedy` is the default filler.
        .args(if fill == "greedy" {
            vec![]
        } else {
            vec!["--fill", fill]
        })
        .arg("--record")
        .arg(&record)
        .output()
        .expect("run referee match");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(0),
        "variant {variant} {fill}: {stdout}\n{stderr}"
    );
    assert!(
        stdout.starts_with("result: "),
        "variant {variant} {fill}: {stdout}"
    );
    let body = std::fs::read_to_string(&record).expect("record");
    // The built-in agents only ever submit well-formed actions.
    assert!(
        !body.contains(r#""type":"forfeit""#),
        "variant {variant} {fill}: {stdout}"
    );
    let last: serde_json::Value = serde_json::from_str(body.lines().last().expect("lines")).expect("json");
    assert_eq!(last["type"], "result", "variant {variant} {fill}");
    assert!(
        !last["reason"].as_str().unwrap_or("").starts_with("forfeit"),
        "variant {variant} {fill}: {last}"
    );
    let verify = referee()
        .arg("verify")
        .arg(&record)
        .output()
        .expect("run referee verify");
    assert_eq!(
        verify.status.code(),
        Some(0),
        "verify variant {variant} {fill}: {}{}",
        String::from_utf8_lossy(&verify.stdout),
        String::from_utf8_lossy(&verify.stderr)
    );
}

#[test]
fn built_in_agents_finish_a_verified_match_in_every_variant() {
    let dir = tempfile::TempDir::new().unwrap();
    let threads: Vec<_> = (0..16u32)
        .map(|variant| {
            let path = dir.path().to_path_buf();
            std::thread::spawn(move || {
                full_match(&path, variant, "greedy");
                full_match(&path, variant, "random");
            })
        })
        .collect();
    for t in threads {
        t.join().expect("a match failed");
    }
}
