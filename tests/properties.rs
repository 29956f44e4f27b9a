//! Property tests of every parser in the crate: agent lines, controller commands and
//! whole controller sessions, the actions, state strings and view strings of every
//! game, records, time controls and options. `fuzz/` runs the same kinds of checks
//! open-ended.
//!
//! Each parser is fed fully arbitrary text (or bytes), text drawn from its own
//! alphabet, and mutations of valid input (states, views and records of games played
//! here). It must never panic; what it rejects must come back as a clean error, and
//! what it accepts must print back to itself where the crate has a printer. Case
//! counts are small so the whole file runs in well under a minute in a debug build.
//!
//! The bugs these properties found are pinned by the regression tests at the end, each
//! named after its bug. A newly found bug goes there as a test marked
//! `#[ignore = "bug: …"]` until it is fixed.

use std::time::Duration;

use proptest::prelude::*;
use proptest::sample::Index;
use serde_json::Value;

use referee::builtin::{self, Strategy as Bot};
use referee::clock::{SeatClock, TimeControl};
use referee::game::idoubtit::board::{Kind, Piece, Side};
use referee::game::idoubtit::notation::{Action, Promotion};
use referee::game::idoubtit::rules::Variant;
use referee::game::idoubtit::state::{self as idt_state, Lens};
use referee::game::multichess::state as multi_state;
use referee::game::{
    ActionKind, EndReason, ForfeitKind, Game, GameId, Options, Outcome, Rejection, Seat, SetupError, Turn,
};
use referee::protocol::agent::{AgentInput, FromAgent, GoClock, ToAgent};
use referee::protocol::controller::{Command, Controller};
use referee::record::{
    self, ActionLine, ForfeitLine, Header, Line, RecordWriter, Replay, ResultLine, SeatEntry, FORMAT, GENESIS,
};
use referee::rng::Rng;

/// A small case count (multiplied by `PROPERTIES_SCALE`, when set, for a deeper run),
/// and no regression files written into the project.
fn config(cases: u32) -> ProptestConfig {
    let scale = std::env::var("PROPERTIES_SCALE")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1);
    ProptestConfig {
        cases: cases.saturating_mul(scale),
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

/// Any text: arbitrary Unicode (control characters and newlines included).
fn any_text() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<String>(),
        "(?s).{0,60}",
        proptest::collection::vec(any::<u8>(), 0..80).prop_map(|b| String::from_utf8_lossy(&b).into_owned()),
    ]
}

// ---------------------------------------------------------------------------------
// Games, and games played here
// ---------------------------------------------------------------------------------

/// A game and the options it is played with.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Setup {
    game: GameId,
    options: &'static str,
}

const fn setup(game: GameId, options: &'static str) -> Setup {
    Setup { game, options }
}

/// Every game, with several player counts and variants; small `max-plies` so that
/// finished games come up too.
const SETUPS: &[Setup] = &[
    setup(GameId::PegChow, "players=2"),
    setup(GameId::PegChow, "players=3"),
    setup(GameId::PegChow, "players=4 max-plies=30"),
    setup(GameId::PegChow, "colors-per-player=2"),
    setup(GameId::Telka, "players=2 max-plies=12"),
    setup(GameId::Telka, "players=3"),
    setup(GameId::Telka, "players=4"),
    setup(GameId::Telka, "colors-per-player=2"),
    setup(GameId::IDoubtIt, "variant=0"),
    setup(GameId::IDoubtIt, "variant=1 max-plies=6"),
    setup(GameId::IDoubtIt, "variant=2"),
    setup(GameId::IDoubtIt, "variant=3"),
    setup(GameId::IDoubtIt, "variant=4"),
    setup(GameId::IDoubtIt, "variant=7"),
    setup(GameId::IDoubtIt, "variant=8"),
    setup(GameId::IDoubtIt, "variant=9"),
    setup(GameId::IDoubtIt, "variant=11 max-plies=5"),
    setup(GameId::IDoubtIt, "variant=14"),
    setup(GameId::MultiChess, "players=2"),
    setup(GameId::MultiChess, "players=3 max-plies=9"),
    setup(GameId::MultiChess, "players=5"),
    setup(GameId::MultiChess, "players=8"),
];

impl Setup {
    fn options(self) -> Options {
        Options::parse(self.options.split_whitespace()).expect("setup options")
    }

    fn create(self, state: Option<&str>) -> Result<Box<dyn Game>, SetupError> {
        self.game.create(&self.options(), state)
    }

    fn start(self) -> Box<dyn Game> {
        self.create(None).expect("start position")
    }

    fn variant(self) -> Variant {
        let n = self.options().int("variant", 0, 0..=15).expect("variant");
        Variant::from_number(n).expect("variant")
    }

    fn seats(self) -> usize {
        self.start().seat_count()
    }

    /// The characters of this game's state and view strings.
    fn alphabet(self) -> &'static str {
        match self.game {
            GameId::PegChow | GameId::Telka => "bgry0123456789/ -out=,1",
            GameId::IDoubtIt => "KQRBNPGSLXkqrbnpgslx+'^_0123456789/ -#|wbe",
            GameId::MultiChess => ".?KQRBNP0123456789/ ,-",
        }
    }

    /// Text shaped like this game's actions.
    fn action_text(self) -> BoxedStrategy<String> {
        let grammar = match self.game {
            GameId::PegChow | GameId::Telka => "pass|[a-l](0|[1-9]|1[0-2]|99999)(-[a-l](0|[1-9]|1[0-2])){0,5}",
            GameId::IDoubtIt => {
                "doubt|accept|[KQRBNPGSLXk+]@[a-j][0-9]|[a-j][0-9][a-j][0-9]([qrbnkQ+?]|ep)?|[0-9]{1,3}@[a-j][0-9]"
            }
            GameId::MultiChess => "pass|([0-9]{1,2}:)?[a-i][0-9]-([0-9]{1,2}:)?[a-i][0-9](=[QRBNKP]{0,2})?",
        };
        prop_oneof![3 => grammar, 1 => any_text()].boxed()
    }
}

fn any_setup() -> impl Strategy<Value = Setup> {
    proptest::sample::select(SETUPS)
}

fn setups_of(game: GameId) -> impl Strategy<Value = Setup> {
    let list: Vec<Setup> = SETUPS.iter().copied().filter(|s| s.game == game).collect();
    proptest::sample::select(list)
}

/// The seat to act, if any.
fn to_act(game: &dyn Game) -> Option<Seat> {
    match game.turn() {
        Turn::Act { seat, .. } => Some(seat),
        Turn::Over => None,
    }
}

/// A legal action for the seat to act, chosen by `rng` (the forced one if any).
fn pick_legal(game: &dyn Game, rng: &mut Rng) -> Option<String> {
    if let Some(forced) = game.forced_action() {
        return Some(forced);
    }
    let legal = game.legal_actions();
    (!legal.is_empty()).then(|| legal[rng.below(legal.len())].clone())
}

/// Plays up to `plies` random legal actions chosen by `seed`, now and then letting the
/// seat to act resign instead, so that positions after forfeits come up too.
fn advance(game: &mut dyn Game, seed: u64, plies: usize) {
    let mut rng = Rng::new(seed);
    for _ in 0..plies {
        let Some(seat) = to_act(game) else { break };
        if rng.below(48) == 0 {
            game.forfeit(seat, ForfeitKind::Resign);
            continue;
        }
        let Some(action) = pick_legal(game, &mut rng) else {
            break;
        };
        if let Err(e) = game.play(seat, &action) {
            panic!(
                "legal action `{action}` of seat {seat} rejected in `{}`: {e}",
                game.state()
            );
        }
    }
}

/// A game of `setup` after `plies` random plies.
fn played(setup: Setup, seed: u64, plies: usize) -> Box<dyn Game> {
    let mut game = setup.start();
    advance(game.as_mut(), seed, plies);
    game
}

// ---------------------------------------------------------------------------------
// Text mutations
// ---------------------------------------------------------------------------------

/// One edit of a valid string.
#[derive(Clone, Debug)]
enum Edit {
    /// Replaces the character at an index with one of the alphabet.
    Replace(Index, Index),
    /// Inserts a character of the alphabet.
    Insert(Index, Index),
    /// Deletes a run of up to 4 characters.
    Delete(Index, usize),
    /// Repeats a run of up to 12 characters in place.
    Repeat(Index, usize),
    /// Swaps two space-separated words.
    SwapWords(Index, Index),
    /// Replaces a whole space-separated word.
    Word(Index, String),
    /// Cuts the string short.
    Truncate(Index),
}

fn edit() -> impl Strategy<Value = Edit> {
    let word = prop_oneof![
        "[a-zA-Z0-9#|?.,/+=:@'^_-]{0,8}",
        Just("4294967295".to_string()),
        Just("4294967296".to_string()),
        Just("18446744073709551616".to_string()),
        Just("255".to_string()),
        Just("256".to_string()),
        Just("-1".to_string()),
        Just("|".to_string()),
    ];
    prop_oneof![
        4 => (any::<Index>(), any::<Index>()).prop_map(|(a, c)| Edit::Replace(a, c)),
        2 => (any::<Index>(), any::<Index>()).prop_map(|(a, c)| Edit::Insert(a, c)),
        2 => (any::<Index>(), 1..5usize).prop_map(|(a, n)| Edit::Delete(a, n)),
        1 => (any::<Index>(), 1..13usize).prop_map(|(a, n)| Edit::Repeat(a, n)),
        1 => (any::<Index>(), any::<Index>()).prop_map(|(a, b)| Edit::SwapWords(a, b)),
        2 => (any::<Index>(), word).prop_map(|(a, w)| Edit::Word(a, w)),
        1 => any::<Index>().prop_map(Edit::Truncate),
    ]
}

fn edits() -> impl Strategy<Value = Vec<Edit>> {
    proptest::collection::vec(edit(), 1..5)
}

fn split_words(chars: &[char]) -> Vec<String> {
    chars
        .iter()
        .collect::<String>()
        .split(' ')
        .map(String::from)
        .collect()
}

/// Applies `edits` to `text`, drawing new characters from `alphabet`.
fn mutate(text: &str, edits: &[Edit], alphabet: &str) -> String {
    let alphabet: Vec<char> = alphabet.chars().collect();
    let mut chars: Vec<char> = text.chars().collect();
    for e in edits {
        let len = chars.len();
        match e {
            Edit::Replace(at, c) if len > 0 => chars[at.index(len)] = *c.get(&alphabet),
            Edit::Insert(at, c) => chars.insert(at.index(len + 1), *c.get(&alphabet)),
            Edit::Delete(at, n) if len > 0 => {
                let from = at.index(len);
                chars.drain(from..(from + n).min(len));
            }
            Edit::Repeat(at, n) if len > 0 => {
                let from = at.index(len);
                let run: Vec<char> = chars[from..(from + n).min(len)].to_vec();
                chars.splice(from..from, run);
            }
            Edit::SwapWords(a, b) => {
                let mut words = split_words(&chars);
                let n = words.len();
                words.swap(a.index(n), b.index(n));
                chars = words.join(" ").chars().collect();
            }
            Edit::Word(a, w) => {
                let mut words = split_words(&chars);
                let n = words.len();
                words[a.index(n)] = w.clone();
                chars = words.join(" ").chars().collect();
            }
            Edit::Truncate(at) => chars.truncate(at.index(len + 1)),
            _ => {}
        }
    }
    chars.into_iter().collect()
}

// ---------------------------------------------------------------------------------
// Checks shared by several properties
// ---------------------------------------------------------------------------------

/// The I-Doubt-It view printer, with the visibility read back from a parsed view:
/// hidden types are `Kind::Unknown`, and a supply given as a count hides the types of
/// fresh pieces of that side (the same rule decides both, R-D9).
fn print_idt_view(pos: &referee::game::idoubtit::rules::Position, viewer: Side) -> String {
    let hidden_supply = |side: Side| pos.supply[side.index()].contains(&Kind::Unknown);
    let sees = |p: &Piece, _pending: bool| {
        p.kind != Kind::Unknown && !(hidden_supply(p.owner) && *p == Piece::new(p.owner, Kind::Pawn))
    };
    idt_state::print(pos, Lens::Seat(viewer, &sees))
}

/// The side the pending action of a parsed view was told to (a hidden promotion type
/// means the viewer is the actor's opponent).
fn viewer_of(pos: &referee::game::idoubtit::rules::Position, default: Side) -> Side {
    match pos.pending.as_deref() {
        Some(p) => match p.action {
            Action::Move {
                promotion: Promotion::To(Kind::Unknown),
                ..
            } => p.actor.opponent(),
            Action::Move {
                promotion: Promotion::To(_),
                ..
            } => p.actor,
            _ => default,
        },
        None => default,
    }
}

fn side_of(seat: Seat) -> Side {
    Side::BOTH[seat.index().min(1)]
}

/// A view a game sent must parse with the game's view parser and print back to itself.
fn check_real_view(setup: Setup, game: &dyn Game, seat: Seat) {
    let text = game.view(seat).text().to_string();
    assert!(!text.contains('\n'), "view `{text}` spans lines");
    match setup.game {
        GameId::PegChow | GameId::Telka => assert_eq!(text, game.state(), "nothing is hidden"),
        GameId::IDoubtIt => {
            let pos = idt_state::parse(&text, setup.variant(), true)
                .unwrap_or_else(|e| panic!("view `{text}` of seat {seat} does not parse: {e:?}"));
            assert_eq!(print_idt_view(&pos, side_of(seat)), text, "view of seat {seat}");
        }
        GameId::MultiChess => {
            let (pos, seen) = multi_state::parse(&text, game.seat_count(), true)
                .unwrap_or_else(|e| panic!("view `{text}` of seat {seat} does not parse: {e:?}"));
            assert_eq!(
                multi_state::print(&pos, Some((seat, seen.as_slice()))),
                text,
                "view of seat {seat}"
            );
        }
    }
}

/// Exercises every query of a game, and checks that its state is accepted back and
/// that its views parse and print back.
fn check_game(setup: Setup, game: &dyn Game) {
    let state = game.state();
    assert!(!state.contains('\n'), "state `{state}` spans lines");
    let again = setup
        .create(Some(&state))
        .unwrap_or_else(|e| panic!("{setup:?}: state `{state}` not accepted back: {e}"));
    assert_eq!(again.state(), state, "{setup:?}: state does not round-trip");
    let legal = game.legal_actions();
    if game.outcome().is_none() {
        assert_eq!(again.turn(), game.turn(), "turn after a round trip of `{state}`");
        assert_eq!(
            again.legal_actions(),
            legal,
            "legal actions after a round trip of `{state}`"
        );
    }
    let _ = (
        game.correct_actions(),
        game.forced_action(),
        game.plies(),
        game.options(),
    );
    let _ = game.diagram(None);
    for seat in Seat::all(game.seat_count()) {
        let _ = (game.seat_label(seat), game.diagram(Some(seat)));
        check_real_view(setup, game, seat);
    }
}

/// Plays `action` for `seat` and checks what the rules promise: a rejection changes
/// nothing, an accepted action is one of the legal actions of the seat to act, counts
/// one ply, and leaves a state that round-trips.
fn check_play(setup: Setup, game: &mut dyn Game, seat: Seat, action: &str) {
    let (state, turn, plies, outcome) = (game.state(), game.turn(), game.plies(), game.outcome());
    let legal = game.legal_actions();
    let forced = game.forced_action();
    match game.play(seat, action) {
        Err(e) => {
            let message = e.to_string();
            assert!(!message.is_empty());
            assert_eq!(
                game.state(),
                state,
                "rejected `{action}` ({message}) changed the state"
            );
            assert_eq!(game.turn(), turn);
            assert_eq!(game.plies(), plies);
            assert_eq!(game.outcome(), outcome);
        }
        Ok(played) => {
            assert!(
                outcome.is_none(),
                "`{action}` accepted after the game ended in `{state}`"
            );
            assert_eq!(
                Some(seat),
                to_act_of(turn),
                "`{action}` accepted from seat {seat} out of turn"
            );
            assert!(
                legal.iter().any(|a| a == action) || forced.as_deref() == Some(action),
                "`{action}` accepted in `{state}` but not among the legal actions"
            );
            assert_eq!(game.plies(), plies + 1, "an accepted action counts one ply");
            assert_eq!(played.seat_events.len(), game.seat_count());
            for line in played.events.iter().chain(played.taken.iter()) {
                assert!(!line.contains('\n'));
            }
            check_game(setup, game);
        }
    }
}

fn to_act_of(turn: Turn) -> Option<Seat> {
    match turn {
        Turn::Act { seat, .. } => Some(seat),
        Turn::Over => None,
    }
}

/// A state string given to `GameId::create`: a clean error listing problems, or a game
/// whose state prints, parses back to the same string, and whose rules run.
fn check_state_text(setup: Setup, text: &str) {
    match setup.create(Some(text)) {
        Err(SetupError::State(problems)) => {
            assert!(!problems.is_empty(), "a bad state without a reason");
            assert!(problems.iter().all(|p| !p.is_empty()));
        }
        Err(e) => panic!("{setup:?}: state `{text}` rejected as {e:?}, not as a bad state"),
        Ok(mut game) => {
            check_game(setup, game.as_ref());
            // The rules must cope with any position the parser accepts.
            if let Some(seat) = to_act(game.as_ref()) {
                let mut rng = Rng::new(text.len() as u64);
                if let Some(action) = pick_legal(game.as_ref(), &mut rng) {
                    let mut copy = game.boxed_clone();
                    if let Err(e) = copy.play(seat, &action) {
                        panic!("{setup:?}: legal `{action}` rejected in the parsed state `{text}`: {e}");
                    }
                    check_game(setup, copy.as_ref());
                }
                game.forfeit(seat, ForfeitKind::Timeout);
                let _ = (game.state(), game.outcome(), game.legal_actions());
            }
        }
    }
}

/// A view string given to its game's view parser, and then to a built-in agent: no
/// panic; a view that parses prints back to a view that parses to the same text.
fn check_view_text(setup: Setup, seat: Seat, text: &str) {
    match setup.game {
        GameId::PegChow | GameId::Telka => {}
        GameId::IDoubtIt => {
            if let Ok(pos) = idt_state::parse(text, setup.variant(), true) {
                let viewer = viewer_of(&pos, side_of(seat));
                let printed = print_idt_view(&pos, viewer);
                let again = idt_state::parse(&printed, setup.variant(), true).unwrap_or_else(|e| {
                    panic!("view `{text}` printed as `{printed}`, which does not parse: {e:?}")
                });
                assert_eq!(print_idt_view(&again, viewer), printed);
            }
        }
        GameId::MultiChess => {
            if let Ok((pos, seen)) = multi_state::parse(text, setup.seats(), true) {
                let printed = multi_state::print(&pos, Some((pos.to_move, seen.as_slice())));
                let (again, seen) = multi_state::parse(&printed, setup.seats(), true).unwrap_or_else(|e| {
                    panic!("view `{text}` printed as `{printed}`, which does not parse: {e:?}")
                });
                assert_eq!(
                    multi_state::print(&again, Some((pos.to_move, seen.as_slice()))),
                    printed
                );
            }
        }
    }
    check_bot(setup, seat, text);
}

/// A built-in agent told `view` must answer `go` with one `bestmove` line.
fn check_bot(setup: Setup, seat: Seat, view: &str) {
    if view.contains(['\n', '\r']) {
        return; // one line is all a view can be
    }
    let options = setup.start().options();
    let script = format!(
        "protocol 1\nisready\nnewgame game {} seat {seat} seats {} options {options}\nview {view}\ngo move movetime 10\nquit\n",
        setup.game,
        setup.seats()
    );
    for bot in [Bot::Random, Bot::Greedy] {
        let mut out = Vec::new();
        builtin::run(bot, 7, script.as_bytes(), &mut out).expect("in-memory output");
        let out = String::from_utf8(out).expect("bots write UTF-8");
        assert_eq!(
            out.lines().filter(|l| l.starts_with("bestmove ")).count(),
            1,
            "{out}"
        );
    }
}

// ---------------------------------------------------------------------------------
// Actions
// ---------------------------------------------------------------------------------

/// An action text for a game: shaped like its actions, an edited legal action, or
/// anything at all.
fn action_for(setup: Setup) -> impl Strategy<Value = (Option<Edit>, String)> {
    prop_oneof![
        setup.action_text().prop_map(|t| (None, t)),
        (edit(), Just(String::new())).prop_map(|(e, t)| (Some(e), t)),
    ]
}

proptest! {
    #![proptest_config(config(1000))]

    /// `Game::play` on arbitrary strings, for every game, from random positions.
    #[test]
    fn actions_are_accepted_only_when_legal(
        (setup, seed, plies, seat, tries) in any_setup().prop_flat_map(|s| (
            Just(s),
            any::<u64>(),
            0..40usize,
            1..10usize,
            proptest::collection::vec(action_for(s), 1..6),
        ))
    ) {
        let mut game = played(setup, seed, plies);
        let seat = Seat::new(seat).expect("seat");
        let mut rng = Rng::new(seed);
        for (edit, text) in tries {
            let text = match edit {
                // An edited legal action: close to the grammar, often just illegal.
                Some(e) => {
                    let legal = pick_legal(game.as_ref(), &mut rng).unwrap_or_default();
                    mutate(&legal, &[e], "abcdefghijk0123456789-@:=+QRBNPK")
                }
                None => text,
            };
            check_play(setup, game.as_mut(), seat, &text);
            if let Some(s) = to_act(game.as_ref()) {
                check_play(setup, game.as_mut(), s, &text);
            }
        }
        // Every listed action is accepted.
        if let (Some(s), Some(action)) = (to_act(game.as_ref()), pick_legal(game.as_ref(), &mut rng)) {
            let mut copy = game.boxed_clone();
            prop_assert!(copy.play(s, &action).is_ok(), "legal `{}` rejected in `{}`", action, game.state());
        }
    }
}

// ---------------------------------------------------------------------------------
// State strings and view strings
// ---------------------------------------------------------------------------------

proptest! {
    #![proptest_config(config(800))]

    /// States of games played here are accepted back unchanged, and every view of them
    /// parses and prints back.
    #[test]
    fn states_and_views_of_played_games_round_trip(setup in any_setup(), seed in any::<u64>(), plies in 0..80usize) {
        let game = played(setup, seed, plies);
        check_game(setup, game.as_ref());
    }

    /// Mutated valid states: a clean error, or a game whose state round-trips.
    #[test]
    fn mutated_states_parse_cleanly(setup in any_setup(), seed in any::<u64>(), plies in 0..60usize, edits in edits()) {
        let game = played(setup, seed, plies);
        let text = mutate(&game.state(), &edits, setup.alphabet());
        check_state_text(setup, &text);
    }

    /// Mutated valid views: no panic in the view parsers nor in the built-in agents.
    #[test]
    fn mutated_views_parse_cleanly(
        setup in prop_oneof![setups_of(GameId::IDoubtIt), setups_of(GameId::MultiChess), setups_of(GameId::Telka)],
        seed in any::<u64>(),
        plies in 0..60usize,
        seat in any::<Index>(),
        edits in edits(),
    ) {
        let game = played(setup, seed, plies);
        let seat = Seat::from_index(seat.index(game.seat_count()));
        let text = mutate(game.view(seat).text(), &edits, setup.alphabet());
        check_view_text(setup, seat, &text);
    }
}

proptest! {
    #![proptest_config(config(1500))]

    /// State strings from the game's alphabet, and arbitrary text.
    #[test]
    fn arbitrary_states_parse_cleanly(
        (setup, text) in any_setup().prop_flat_map(|s| {
            let shaped = proptest::collection::vec(proptest::sample::select(s.alphabet().chars().collect::<Vec<_>>()), 0..120)
                .prop_map(|c| c.into_iter().collect::<String>());
            (Just(s), prop_oneof![shaped, any_text()])
        })
    ) {
        check_state_text(setup, &text);
        check_view_text(setup, Seat::new(1).expect("seat"), &text);
    }
}

// ---------------------------------------------------------------------------------
// Agent lines
// ---------------------------------------------------------------------------------

/// Text shaped like agent-protocol lines, in both directions.
fn agent_line() -> impl Strategy<Value = String> {
    let command = proptest::sample::select(vec!["setoption", "go", "newgame", "protocol", "bestmove", "id"]);
    let word = proptest::sample::select(vec![
        "name",
        "value",
        "author",
        "game",
        "seat",
        "seats",
        "options",
        "time",
        "inc",
        "movestogo",
        "movetime",
        "move",
        "telka",
        "players=3",
        "0",
        "1",
        "30",
        "18446744073709551615",
        "18446744073709551616",
        "-1",
        "",
    ]);
    let structured =
        (command, proptest::collection::vec(word, 0..8)).prop_map(|(c, w)| format!("{c} {}", w.join(" ")));
    prop_oneof![
        structured,
        "(bestmove|info|id|option|readyok|protocolok|name|author|setoption|value|protocol|isready|newgame|game|seat|seats|options|event|view|go|time|inc|movestogo|movetime|gameover|quit)?([ \t]{1,3}(name|value|author|time|inc|movestogo|movetime|seat|seats|options|[a-z0-9=@-]{0,6}|[0-9]{1,20})){0,6}[ \t\r]{0,2}",
        any_text(),
    ]
}

/// Lines the referee sends, printed by `ToAgent`, with what `AgentInput` must read.
fn referee_line() -> impl Strategy<Value = (String, AgentInput)> {
    let name = "[A-Za-z][A-Za-z0-9]{0,8}( [A-Za-z0-9]{1,8}){0,2}"
        .prop_filter("`value` separates name and value", |n| {
            !n.split(' ').any(|w| w == "value")
        });
    let clock = prop_oneof![
        (0..1u64 << 40).prop_map(GoClock::MoveTime),
        (0..1u64 << 40, 0..1u64 << 30, proptest::option::of(0..1000u32)).prop_map(
            |(time_ms, inc_ms, moves_to_go)| {
                GoClock::Clock {
                    time_ms,
                    inc_ms,
                    moves_to_go,
                }
            }
        ),
    ];
    let kind = proptest::sample::select(vec![ActionKind::Place, ActionKind::Move, ActionKind::Respond]);
    prop_oneof![
        Just((ToAgent::Hello.to_string(), AgentInput::Hello(1))),
        Just((ToAgent::IsReady.to_string(), AgentInput::IsReady)),
        Just((ToAgent::Quit.to_string(), AgentInput::Quit)),
        (name, "[ -~]{0,16}").prop_map(|(name, value)| {
            let line = ToAgent::SetOption {
                name: &name,
                value: &value,
            }
            .to_string();
            (line, AgentInput::SetOption(name, value))
        }),
        (kind, clock).prop_map(|(kind, clock)| {
            let budget_ms = match clock {
                GoClock::MoveTime(ms) => ms,
                GoClock::Clock {
                    time_ms,
                    inc_ms,
                    moves_to_go,
                } => time_ms / u64::from(moves_to_go.unwrap_or(30).max(1)) + inc_ms,
            };
            let line = ToAgent::Go { kind, clock }.to_string();
            (
                line,
                AgentInput::Go {
                    kind: kind.as_str().to_string(),
                    budget_ms: Some(budget_ms),
                },
            )
        }),
        (any_setup(), any::<Index>(), any::<u64>(), 0..30usize).prop_map(|(setup, seat, seed, plies)| {
            let game = played(setup, seed, plies);
            let seat = Seat::from_index(seat.index(game.seat_count()));
            let options = game.options();
            let line = ToAgent::NewGame {
                game: setup.game,
                seat,
                seats: game.seat_count(),
                options: &options,
            }
            .to_string();
            let pairs = options
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
            let expected = AgentInput::NewGame {
                game: setup.game.to_string(),
                seat: seat.number(),
                seats: game.seat_count(),
                options: pairs,
            };
            (line, expected)
        }),
        (any_setup(), any::<Index>(), any::<u64>(), 0..30usize).prop_map(|(setup, seat, seed, plies)| {
            let game = played(setup, seed, plies);
            let view = game.view(Seat::from_index(seat.index(game.seat_count())));
            (
                ToAgent::View(&view).to_string(),
                AgentInput::View(view.text().to_string()),
            )
        }),
        (any_setup(), any::<u64>(), 0..30usize).prop_map(|(setup, seed, plies)| {
            let mut game = played(setup, seed, plies);
            let mut rng = Rng::new(seed);
            let event = match (to_act(game.as_ref()), pick_legal(game.as_ref(), &mut rng)) {
                (Some(seat), Some(action)) => game
                    .play(seat, &action)
                    .expect("legal")
                    .seat_events
                    .concat()
                    .into_iter()
                    .next(),
                _ => None,
            };
            match event {
                Some(e) => (
                    ToAgent::Event(&e).to_string(),
                    AgentInput::Event(e.text().to_string()),
                ),
                None => (ToAgent::Quit.to_string(), AgentInput::Quit),
            }
        }),
        (proptest::collection::vec(1..9u8, 2..9), 0..4usize, 1..9usize).prop_map(|(places, reason, seat)| {
            let seat = Seat::new(seat).expect("seat");
            let reason = [
                EndReason::Win,
                EndReason::MaxPlies,
                EndReason::LastStanding,
                EndReason::Forfeit {
                    seat,
                    kind: ForfeitKind::Protocol,
                },
            ][reason]
                .clone();
            let outcome = Outcome { places, reason };
            (
                ToAgent::GameOver(&outcome).to_string(),
                AgentInput::GameOver(outcome.protocol_text()),
            )
        }),
    ]
}

proptest! {
    #![proptest_config(config(2000))]

    /// `FromAgent::parse`: anything is classified, and what it extracts is trimmed;
    /// `from_line`, which keeps the text in the line's buffer, reads the same.
    #[test]
    fn agent_lines_are_classified(line in agent_line()) {
        prop_assert_eq!(FromAgent::from_line(line.clone()), FromAgent::parse(&line));
        match FromAgent::parse(&line) {
            FromAgent::BestMove(a) => prop_assert!(!a.contains(char::is_whitespace)),
            FromAgent::IdName(s) | FromAgent::IdAuthor(s) => prop_assert_eq!(s.trim(), s.as_str()),
            FromAgent::Info(_) | FromAgent::Option(_) | FromAgent::Unknown(_) => {}
            FromAgent::ProtocolOk | FromAgent::ReadyOk => {}
        }
    }

    /// Agent answers as a bot would print them are read back.
    #[test]
    fn agent_answers_round_trip(
        action in "[!-~]{1,12}",
        tail in "([ \t]{1,2}[!-~]{1,6}){0,3}",
        name in "[!-~]{1,8}( [!-~]{1,8}){0,2}",
        gap in "[ \t]{1,3}",
    ) {
        prop_assert_eq!(FromAgent::parse(&format!("bestmove{gap}{action}{tail}")), FromAgent::BestMove(action.clone()));
        prop_assert_eq!(FromAgent::parse(&format!("id{gap}name {name}")), FromAgent::IdName(name.clone()));
        prop_assert_eq!(FromAgent::parse(&format!("id author {name}")), FromAgent::IdAuthor(name.clone()));
        prop_assert_eq!(FromAgent::parse(&format!("info{gap}{name}")), FromAgent::Info(name.clone()));
        prop_assert_eq!(FromAgent::parse(&format!("{gap}readyok{gap}")), FromAgent::ReadyOk);
    }

    /// `AgentInput::parse` on anything: no panic.
    #[test]
    fn referee_lines_of_any_shape_parse(line in agent_line()) {
        let _ = AgentInput::parse(&line);
    }

    /// What `ToAgent` prints, `AgentInput` reads back.
    #[test]
    fn referee_lines_round_trip((line, expected) in referee_line()) {
        prop_assert!(!line.contains('\n'));
        prop_assert_eq!(AgentInput::parse(&line), expected);
    }

    /// The built-in agents on scripts of arbitrary referee lines: no panic, and one
    /// `bestmove` for each `go` before `quit`.
    #[test]
    fn bots_survive_any_script(
        setup in any_setup(),
        lines in proptest::collection::vec(agent_line(), 0..8),
        seed in any::<u64>(),
    ) {
        let start = setup.start();
        let mut script = format!(
            "protocol 1\nnewgame game {} seat 1 seats {} options {}\n",
            setup.game,
            start.seat_count(),
            start.options()
        );
        for line in &lines {
            script.push_str(line);
            script.push('\n');
        }
        script.push_str("go move movetime 5\n");
        let goes = script
            .lines()
            .map(AgentInput::parse)
            .take_while(|l| *l != AgentInput::Quit)
            .filter(|l| matches!(l, AgentInput::Go { .. }))
            .count();
        for bot in [Bot::Random, Bot::Greedy] {
            let mut out = Vec::new();
            builtin::run(bot, seed, script.as_bytes(), &mut out).expect("in-memory output");
            let out = String::from_utf8(out).expect("bots write UTF-8");
            prop_assert_eq!(out.lines().filter(|l| l.starts_with("bestmove ")).count(), goes, "{}", out);
        }
    }
}

// ---------------------------------------------------------------------------------
// Controller
// ---------------------------------------------------------------------------------

/// The error kinds of the controller protocol.
const ERROR_KINDS: [&str; 8] = [
    "usage",
    "setup",
    "no-game",
    "malformed",
    "illegal",
    "turn",
    "over",
    "record",
];

/// Text shaped like controller commands.
fn command_line() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => "(new|turn|legal|correct|play|view|state|result|resign|show|help|quit|frob)( {1,2}(pegchow|telka|idoubtit|multichess|players=[0-9]{1,2}|variant=[0-9]{1,2}|max-plies=[0-9]{1,10}|colors-per-player=[0-3]|state=|[0-9]{1,3}|[a-z0-9:=@-]{1,6})){0,4} ?",
        1 => any_text(),
    ]
}

proptest! {
    #![proptest_config(config(2000))]

    /// `Command::parse`: a command or a one-line `error <kind> …`.
    #[test]
    fn commands_parse_or_fail_cleanly(line in command_line()) {
        match Command::parse(&line) {
            Ok(Command::New { game, options, state }) => {
                prop_assert!(!game.is_empty());
                prop_assert!(options.iter().all(|o| !o.is_empty() && !o.contains(char::is_whitespace)));
                if let Some(state) = state {
                    let expected = format!("state={state}");
                    prop_assert!(line.contains(&expected));
                }
            }
            Ok(Command::Play(_, action)) => prop_assert!(!action.is_empty() && !action.contains(char::is_whitespace)),
            Ok(_) => {}
            Err(e) => check_error_line(&e.to_string()),
        }
    }
}

/// An `error` line: `error <kind> <message>`, on one line.
fn check_error_line(line: &str) {
    assert!(!line.contains('\n'), "`{line}` spans lines");
    let mut words = line.splitn(3, ' ');
    assert_eq!(words.next(), Some("error"), "`{line}`");
    let kind = words.next().unwrap_or("");
    assert!(ERROR_KINDS.contains(&kind), "`{line}`: unknown error kind");
    assert!(!words.next().unwrap_or("").is_empty(), "`{line}`: no message");
}

/// One step of a controller session.
#[derive(Clone, Debug)]
enum Step {
    /// `new` a game, from its start, or from a state reached by random plies and then edited.
    New(Setup, Option<(u64, usize, Vec<Edit>)>),
    /// `play` the legal action with this index, as the seat to act.
    PlayLegal(Index),
    /// `play` for a seat some text.
    Play(usize, String),
    /// `resign` a seat.
    Resign(usize),
    /// `view` or `show` a seat.
    Look(usize),
    /// `record` the game, `load` it back, compare.
    RecordLoad,
    /// `load` a file of arbitrary bytes.
    LoadGarbage(Vec<u8>),
    /// Any command line.
    Raw(String),
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        2 => (any_setup(), proptest::option::of((any::<u64>(), 0..40usize, edits()))).prop_map(|(s, st)| Step::New(s, st)),
        8 => any::<Index>().prop_map(Step::PlayLegal),
        2 => (0..10usize, "[a-k0-9@:=+-]{1,9}|doubt|accept|pass").prop_map(|(s, a)| Step::Play(s, a)),
        1 => (0..10usize).prop_map(Step::Resign),
        1 => (0..10usize).prop_map(Step::Look),
        1 => Just(Step::RecordLoad),
        1 => proptest::collection::vec(any::<u8>(), 0..200).prop_map(Step::LoadGarbage),
        3 => command_line().prop_map(Step::Raw),
    ]
}

/// A controller and a scratch directory for its record files.
struct Session {
    controller: Controller,
    dir: tempfile::TempDir,
}

impl Session {
    fn new() -> Session {
        Session {
            controller: Controller::new(),
            dir: tempfile::tempdir().expect("temporary directory"),
        }
    }

    fn path(&self, name: &str) -> String {
        self.dir.path().join(name).to_string_lossy().into_owned()
    }

    /// Everything a rejected command must leave as it was: the answers to the
    /// read-only commands, and the record so far.
    fn snapshot(&mut self) -> Vec<String> {
        let path = self.path("snapshot.jsonl");
        let mut out = Vec::new();
        for command in ["state", "turn", "result", "legal"] {
            let a = self.controller.execute(command);
            out.extend(a.lines);
            out.push(a.last);
        }
        let recorded = self.controller.execute(&format!("record {path}"));
        if recorded.last == "ok" {
            let text = std::fs::read_to_string(&path).expect("record written");
            // The last line's hash stands for the whole chain.
            out.push(
                text.lines()
                    .map(|l| l.len().to_string())
                    .collect::<Vec<_>>()
                    .join(","),
            );
            out.extend(text.lines().last().map(str::to_string));
        }
        out.push(recorded.last);
        out
    }

    /// Executes one line and checks the shape of the answer; a rejected command must
    /// change nothing. Returns the answer's lines and whether it was `ok`.
    fn run(&mut self, line: &str) -> (Vec<String>, bool) {
        let before = self.snapshot();
        let answer = self.controller.execute(line);
        for l in &answer.lines {
            assert!(!l.contains('\n'), "`{line}`: data line `{l}` spans lines");
            assert!(
                l != "ok" && !l.starts_with("error "),
                "`{line}`: data line `{l}` reads as a final line"
            );
        }
        assert_eq!(answer.quit, Command::parse(line) == Ok(Command::Quit));
        if answer.last == "ok" {
            return (answer.lines, true);
        }
        check_error_line(&answer.last);
        assert!(answer.lines.is_empty(), "`{line}`: an error after data lines");
        assert_eq!(
            self.snapshot(),
            before,
            "`{line}` was rejected ({}) but changed something",
            answer.last
        );
        (answer.lines, false)
    }

    /// The one data line of a query.
    fn query(&mut self, line: &str) -> Option<String> {
        let a = self.controller.execute(line);
        (a.last == "ok").then(|| a.lines.concat())
    }

    fn step(&mut self, step: Step) {
        let line = match step {
            Step::New(setup, None) => format!("new {} {}", setup.game, setup.options),
            Step::New(setup, Some((seed, plies, edits))) => {
                let game = played(setup, seed, plies);
                let state = mutate(&game.state(), &edits, setup.alphabet());
                format!("new {} {} state={state}", setup.game, setup.options)
            }
            Step::PlayLegal(i) => {
                let (Some(turn), Some(legal)) = (self.query("turn"), self.query("legal")) else {
                    return;
                };
                let Some(seat) = turn.split(' ').nth(1).filter(|s| *s != "none") else {
                    return;
                };
                let legal: Vec<&str> = legal.split(' ').filter(|a| !a.is_empty()).collect();
                if legal.is_empty() {
                    return;
                }
                let line = format!("play {seat} {}", legal[i.index(legal.len())]);
                let (_, ok) = self.run(&line);
                assert!(ok, "`{line}` of the legal list rejected");
                self.check_state_accepted_back();
                return;
            }
            Step::Play(seat, action) => format!("play {seat} {action}"),
            Step::Resign(seat) => format!("resign {seat}"),
            Step::Look(seat) => {
                self.run(&format!("show {seat}"));
                format!("view {seat}")
            }
            Step::RecordLoad => {
                let path = self.path("game.jsonl");
                let state = self.query("state");
                let (_, ok) = self.run(&format!("record {path}"));
                if ok {
                    let (_, loaded) = self.run(&format!("load {path}"));
                    assert!(loaded, "a record the controller wrote does not load");
                    assert_eq!(self.query("state"), state, "a record loads back to another state");
                }
                return;
            }
            Step::LoadGarbage(bytes) => {
                let path = self.path("garbage.jsonl");
                std::fs::write(&path, &bytes).expect("scratch file");
                format!("load {path}")
            }
            // `record`/`load` of arbitrary lines stay inside the scratch directory.
            Step::Raw(line) => match Command::parse(&line) {
                Ok(Command::Record(_)) => format!("record {}", self.path("raw.jsonl")),
                Ok(Command::Load(_)) => format!("load {}", self.path("raw.jsonl")),
                _ => line,
            },
        };
        self.run(&line);
    }

    /// The `state` answer is accepted back by `new <game> <options in force> state=`,
    /// and the record so far replays to it.
    fn check_state_accepted_back(&mut self) {
        let Some(state) = self.query("state") else { return };
        let path = self.path("check.jsonl");
        if self.query(&format!("record {path}")).is_none() {
            return;
        }
        let replay =
            record::replay_file(std::path::Path::new(&path)).expect("the controller's record replays");
        assert_eq!(replay.game.state(), state, "the record replays to another state");
        let mut other = Controller::new();
        let new = format!(
            "new {} {} state={state}",
            replay.header.game, replay.header.options
        );
        let answer = other.execute(&new);
        assert_eq!(answer.last, "ok", "`{new}`");
        assert_eq!(other.execute("state").lines, vec![state]);
    }
}

proptest! {
    #![proptest_config(config(300))]

    /// Whole controller sessions of random command lines.
    #[test]
    fn controller_sessions_answer_cleanly(steps in proptest::collection::vec(step(), 1..24)) {
        let mut session = Session::new();
        for step in steps {
            session.step(step);
        }
    }
}

// ---------------------------------------------------------------------------------
// Records
// ---------------------------------------------------------------------------------

/// A valid record of a game of `setup` played here, from the start or from a state
/// reached by `lead` plies, with agents' timings and forfeits of every kind, finished
/// or not; and the state it ends in.
fn build_record(setup: Setup, seed: u64, lead: usize, plies: usize) -> (Vec<u8>, String) {
    let mut rng = Rng::new(seed);
    let mut state = None;
    let mut game = setup.start();
    if lead > 0 {
        let before = played(setup, seed ^ 0x5eed, lead);
        if before.outcome().is_none() {
            state = Some(before.state());
            game = setup.create(state.as_deref()).expect("state of a played game");
        }
    }
    let controls = [None, Some("10+0.1"), Some("40/60+0.5"), Some("st=1")];
    let header = Header {
        format: FORMAT,
        referee: "0.1.0".into(),
        game: setup.game.to_string(),
        options: game.options(),
        state,
        seats: Seat::all(game.seat_count())
            .map(|seat| SeatEntry {
                seat: seat.number(),
                label: game.seat_label(seat),
                name: "random".into(),
                command: (seat.number() % 2 == 0).then(|| "referee agent random".into()),
            })
            .collect(),
        seed,
        time_control: controls[rng.below(controls.len())].map(str::to_string),
        sandbox: (rng.below(2) == 0).then(|| "bubblewrap 0.8.0".into()),
        start: "2025-01-01T00:00:00Z".into(),
    };
    // The seats' clocks, charged as the match loop charges them: what verify checks
    // every `clock_ms` against.
    let control = header
        .time_control
        .as_deref()
        .map(|tc| TimeControl::parse_recorded(tc).expect("a valid control"));
    let mut clocks = vec![control.map(SeatClock::new); game.seat_count()];
    // Openings come first: only while no other action was made.
    let mut in_opening = control.is_some();
    let mut bytes = Vec::new();
    let mut w = RecordWriter::new(&mut bytes);
    w.write(&Line::Header(header)).expect("in memory");
    for _ in 0..plies {
        let Some(seat) = to_act(game.as_ref()) else { break };
        let think = Duration::from_millis(rng.below(1000) as u64);
        let flag_fell = game.forced_action().is_none()
            && clocks[seat.index()]
                .clone()
                .is_some_and(|mut c| !c.charge(think, Duration::from_millis(50)));
        let line = match rng.below(30) {
            _ if flag_fell => {
                let events = game.forfeit(seat, ForfeitKind::Timeout).events;
                Line::Forfeit(ForfeitLine {
                    seat: seat.number(),
                    reason: ForfeitKind::Timeout,
                    detail: "out of time".into(),
                    action: None,
                    events,
                })
            }
            0 => {
                let events = game.forfeit(seat, ForfeitKind::Illegal).events;
                Line::Forfeit(ForfeitLine {
                    seat: seat.number(),
                    reason: ForfeitKind::Illegal,
                    detail: "illegal action".into(),
                    action: Some("zz".into()),
                    events,
                })
            }
            1 => {
                let kinds = [
                    ForfeitKind::Timeout,
                    ForfeitKind::Crash,
                    ForfeitKind::Protocol,
                    ForfeitKind::Resign,
                ];
                let reason = kinds[rng.below(kinds.len())];
                let events = game.forfeit(seat, reason).events;
                Line::Forfeit(ForfeitLine {
                    seat: seat.number(),
                    reason,
                    detail: format!("{reason}"),
                    action: None,
                    events,
                })
            }
            _ => {
                let Some(action) = pick_legal(game.as_ref(), &mut rng) else {
                    break;
                };
                let forced = game.forced_action().as_deref() == Some(action.as_str());
                let played = game.play(seat, &action).expect("legal");
                in_opening &= !forced && game.plies() <= 2 && rng.below(2) == 0;
                // Agents' actions are timed, now and then not (a controller went on
                // with a match record); the referee's own, forced or opening, never.
                let clock = clocks[seat.index()]
                    .as_mut()
                    .filter(|_| !forced && !in_opening && rng.below(8) > 0);
                let timing = clock.map(|c| {
                    assert!(c.charge(think, Duration::from_millis(50)), "checked above");
                    (think.as_millis() as u64, c.left().as_millis() as u64)
                });
                Line::Action(ActionLine {
                    ply: game.plies(),
                    seat: seat.number(),
                    action,
                    taken: played.taken,
                    forced,
                    opening: in_opening,
                    events: played.events,
                    think_ms: timing.map(|t| t.0),
                    clock_ms: timing.map(|t| t.1),
                })
            }
        };
        w.write(&line).expect("in memory");
        if let Some(o) = game.outcome() {
            let result = ResultLine {
                places: o.places,
                reason: o.reason.to_string(),
                plies: game.plies(),
                state: game.state(),
                escaped: None,
            };
            w.write(&Line::Result(result)).expect("in memory");
            break;
        }
    }
    (bytes, game.state())
}

/// Writes a replayed record back with the crate's own writer.
fn rewrite(replay: &Replay) -> Vec<u8> {
    let mut bytes = Vec::new();
    let mut w = RecordWriter::new(&mut bytes);
    w.write(&Line::Header(replay.header.clone())).expect("in memory");
    for line in &replay.lines {
        w.write(line).expect("in memory");
    }
    bytes
}

/// Any bytes given to `record::replay`: a clean error, or a record that writes back
/// and replays again to the same game, and whose seat histories can be derived.
fn check_record(bytes: &[u8]) {
    match record::replay(bytes) {
        Err(e) => assert!(!e.message.is_empty()),
        Ok(replay) => {
            assert!(replay.complete_len as usize <= bytes.len());
            let again =
                record::replay(&rewrite(&replay)[..]).expect("a replayed record written back replays");
            assert_eq!(again.lines, replay.lines);
            assert_eq!(again.game.state(), replay.game.state());
            let told = record::seat_histories(&replay);
            assert_eq!(told.len(), replay.game.seat_count());
        }
    }
}

/// Seals JSON bodies into a hash chain, as the writer would.
fn seal_bodies(bodies: &[String]) -> Vec<u8> {
    let mut prev = GENESIS.to_string();
    let mut out = String::new();
    for body in bodies {
        let hash = record::chain_hash(&prev, body.as_bytes());
        out.push_str(body.strip_suffix('}').unwrap_or(body));
        out.push_str(&format!(",\"hash\":\"{hash}\"}}\n"));
        prev = hash;
    }
    out.into_bytes()
}

/// One edit of a record's content (the chain is sealed again afterwards, so the edit
/// reaches the checks behind the hashes).
#[derive(Clone, Debug)]
enum RecordEdit {
    /// Sets a member of a line to a value from a pool.
    Set(Index, Index, Index),
    /// Copies the same member from another line.
    Copy(Index, Index, Index),
    /// Edits the text of a string member.
    Text(Index, Index, Vec<Edit>),
    /// Removes a member.
    Remove(Index, Index),
    /// Removes, duplicates or swaps lines.
    DropLine(Index),
    DupLine(Index),
    SwapLines(Index, Index),
}

fn record_edit() -> impl Strategy<Value = RecordEdit> {
    let i = any::<Index>;
    prop_oneof![
        3 => (i(), i(), i()).prop_map(|(a, b, c)| RecordEdit::Set(a, b, c)),
        2 => (i(), i(), i()).prop_map(|(a, b, c)| RecordEdit::Copy(a, b, c)),
        3 => (i(), i(), edits()).prop_map(|(a, b, e)| RecordEdit::Text(a, b, e)),
        1 => (i(), i()).prop_map(|(a, b)| RecordEdit::Remove(a, b)),
        1 => i().prop_map(RecordEdit::DropLine),
        1 => i().prop_map(RecordEdit::DupLine),
        1 => (i(), i()).prop_map(|(a, b)| RecordEdit::SwapLines(a, b)),
    ]
}

/// Values record members are set to.
fn value_pool() -> Vec<Value> {
    serde_json::from_str(
        r#"[0, 1, 2, 3, 8, 9, -1, 255, 256, 4294967295, 4294967296, 18446744073709551615, 1e300, 0.5,
            "", "zz", "pass", "win", "max-plies", "last-standing", "forfeit 1 resign", "forfeit 9 crash",
            "resign", "illegal", "timeout", "c2-d3", "e2e4", "doubt", "accept", "K@e1", "1@e5", "1:e2-1:e4",
            "10+0.1", "0/0", "st=0", "pegchow", "idoubtit", "multichess", "telka", "header", "action",
            "forfeit", "result", true, false, null, [], [1, 2], [0], [1, 1, 1, 1, 1, 1, 1, 1, 1], {},
            ["move blue c2-d3"], {"players": "3"}, {"variant": "16"}, {"players": "9"}, {"max-plies": "1"}]"#,
    )
    .expect("pool")
}

/// Applies record edits to the JSON objects of the lines.
fn edit_record(lines: &mut Vec<Value>, edits: &[RecordEdit]) {
    let pool = value_pool();
    let keys = |v: &Value| -> Vec<String> {
        v.as_object()
            .map(|o| o.keys().cloned().collect())
            .unwrap_or_default()
    };
    for e in edits {
        let n = lines.len();
        if n == 0 {
            return;
        }
        match e {
            RecordEdit::Set(l, k, v) => {
                let line = &mut lines[l.index(n)];
                let keys = keys(line);
                if !keys.is_empty() {
                    line[&keys[k.index(keys.len())]] = v.get(&pool).clone();
                }
            }
            RecordEdit::Copy(from, to, k) => {
                let source = lines[from.index(n)].clone();
                let keys = keys(&source);
                if !keys.is_empty() {
                    let key = &keys[k.index(keys.len())];
                    lines[to.index(n)][key] = source[key].clone();
                }
            }
            RecordEdit::Text(l, k, edits) => {
                let line = &mut lines[l.index(n)];
                let keys: Vec<String> = keys(line).into_iter().filter(|k| line[k].is_string()).collect();
                if !keys.is_empty() {
                    let key = &keys[k.index(keys.len())];
                    let text = line[key].as_str().unwrap_or_default().to_string();
                    line[key] =
                        Value::String(mutate(&text, edits, "abcdefghijk0123456789-@:=+/ |KQRBNPbgryx."));
                }
            }
            RecordEdit::Remove(l, k) => {
                let line = &mut lines[l.index(n)];
                let keys = keys(line);
                if let (false, Some(o)) = (keys.is_empty(), line.as_object_mut()) {
                    o.remove(&keys[k.index(keys.len())]);
                }
            }
            RecordEdit::DropLine(l) => {
                lines.remove(l.index(n));
            }
            RecordEdit::DupLine(l) => {
                let at = l.index(n);
                lines.insert(at, lines[at].clone());
            }
            RecordEdit::SwapLines(a, b) => lines.swap(a.index(n), b.index(n)),
        }
    }
}

fn any_record() -> impl Strategy<Value = (Vec<u8>, String)> {
    (
        any_setup(),
        any::<u64>(),
        prop_oneof![Just(0usize), 0..30usize],
        0..60usize,
    )
        .prop_map(|(setup, seed, lead, plies)| build_record(setup, seed, lead, plies))
}

proptest! {
    #![proptest_config(config(400))]

    /// Records of games played here replay to the same game and write back byte for byte.
    #[test]
    fn valid_records_replay_and_round_trip((bytes, state) in any_record()) {
        let replay = record::replay(&bytes[..]).unwrap_or_else(|e| panic!("{e}\n{}", String::from_utf8_lossy(&bytes)));
        prop_assert_eq!(replay.game.state(), state);
        prop_assert_eq!(replay.torn, None);
        prop_assert_eq!(replay.complete_len as usize, bytes.len());
        prop_assert_eq!(rewrite(&replay), bytes);
        record::seat_histories(&replay);
    }

    /// Valid records cut short or with bytes edited (the hash chain catches those).
    #[test]
    fn damaged_records_replay_cleanly((bytes, _) in any_record(), cut in any::<Index>(), edits in edits()) {
        check_record(&bytes[..cut.index(bytes.len() + 1)]);
        let text = String::from_utf8_lossy(&bytes).into_owned();
        check_record(mutate(&text, &edits, "{}[]\",:0123456789abcdef\n ").as_bytes());
    }

    /// Valid records with their content edited and the chain sealed again, so that the
    /// edits reach the rules checks behind the hashes.
    #[test]
    fn edited_resealed_records_replay_cleanly(
        (bytes, _) in any_record(),
        edits in proptest::collection::vec(record_edit(), 1..4),
    ) {
        let text = String::from_utf8(bytes).expect("UTF-8");
        let mut lines: Vec<Value> = text
            .lines()
            .map(|l| serde_json::from_str(&record::unseal(l).expect("sealed").0).expect("JSON"))
            .collect();
        edit_record(&mut lines, &edits);
        let bodies: Vec<String> = lines.iter().map(|v| serde_json::to_string(v).expect("JSON")).collect();
        check_record(&seal_bodies(&bodies));
    }

    /// Arbitrary bytes, and arbitrary JSON-ish lines sealed into a valid chain behind a
    /// valid header.
    #[test]
    fn arbitrary_records_replay_cleanly(
        bytes in proptest::collection::vec(any::<u8>(), 0..300),
        bodies in proptest::collection::vec(
            prop_oneof![
                r#"\{"type":"(header|action|forfeit|result)"(,"(ply|seat|action|events|reason|detail|places|plies|state|taken|forced|format|game|options|seats|seed|start|referee)":(0|1|2|-1|"[a-z0-9 =-]{0,8}"|\[\]|\["[a-z0-9 -]{0,8}"\]|null|true|\{\})){0,8}\}"#,
                any_text(),
            ],
            0..4,
        ),
        setup in any_setup(),
    ) {
        check_record(&bytes);
        let (valid, _) = build_record(setup, 1, 0, 0);
        let header = record::unseal(String::from_utf8(valid).expect("UTF-8").trim_end()).expect("sealed").0;
        let mut all = vec![header];
        all.extend(bodies);
        check_record(&seal_bodies(&all));
    }
}

// ---------------------------------------------------------------------------------
// Time controls and options
// ---------------------------------------------------------------------------------

fn control_text() -> impl Strategy<Value = String> {
    prop_oneof![
        "(st=)?([0-9]{1,5}/)?[0-9]{0,4}(\\.[0-9]{0,10})?(\\+[0-9]{0,4}(\\.[0-9]{0,10})?)?",
        "[0-9./+st= e-]{0,14}",
        "[0-9]{8,12}(\\.[0-9]{1,3})?",
        any_text(),
    ]
}

/// An accepted control prints in a form that reads back as the same control, and
/// drives a clock without panicking.
fn check_control(parsed: Result<TimeControl, referee::clock::TimeControlError>) {
    match parsed {
        Err(e) => assert!(!e.to_string().is_empty()),
        Ok(tc) => {
            let printed = tc.to_string();
            assert_eq!(
                TimeControl::parse_recorded(&printed),
                Ok(tc),
                "`{printed}` does not read back"
            );
            let mut clock = SeatClock::new(tc);
            for used in [0, 1, 10_000, 3_600_000] {
                let _ = (clock.go(), clock.budget(), clock.left());
                clock.charge(Duration::from_millis(used), Duration::from_millis(50));
            }
        }
    }
}

proptest! {
    #![proptest_config(config(3000))]

    #[test]
    fn time_controls_parse_cleanly_and_round_trip(text in control_text()) {
        check_control(TimeControl::parse_tc(&text));
        check_control(TimeControl::parse_st(&text));
        check_control(TimeControl::parse_recorded(&text));
    }

    /// Controls built from milliseconds print and read back exactly.
    #[test]
    fn time_controls_print_and_read_back(
        moves in proptest::option::of(1..1000u32),
        base in 0..100_000_000u64,
        inc in 0..100_000u64,
        per_move in 1..100_000_000u64,
    ) {
        let tc = TimeControl::Clock { moves, base: Duration::from_millis(base), increment: Duration::from_millis(inc) };
        if base > 0 || inc > 0 {
            prop_assert_eq!(TimeControl::parse_tc(&tc.to_string()), Ok(tc));
        }
        let st = TimeControl::PerMove(Duration::from_millis(per_move));
        prop_assert_eq!(TimeControl::parse_recorded(&st.to_string()), Ok(st));
    }

    /// `Options::parse`: words without `=` or with an empty side are errors; what is
    /// accepted prints as words that parse back to the same options.
    #[test]
    fn options_parse_cleanly_and_round_trip(
        words in proptest::collection::vec(
            prop_oneof!["[a-z-]{0,10}=[0-9a-z=]{0,5}", "[a-z=]{0,6}", any_text()],
            0..5,
        ),
    ) {
        match Options::parse(words.iter().map(String::as_str)) {
            Err(e) => prop_assert!(!e.to_string().is_empty()),
            Ok(options) => {
                prop_assert_eq!(options.iter().count(), words.len(), "a key given twice was accepted");
                for w in &words {
                    let (k, v) = w.split_once('=').expect("accepted words are KEY=VALUE");
                    prop_assert!(!k.is_empty() && !v.is_empty());
                }
                if words.iter().all(|w| !w.contains(char::is_whitespace)) {
                    let printed = options.to_string();
                    prop_assert_eq!(Options::parse(printed.split_whitespace()), Ok(options.clone()));
                }
                let json = serde_json::to_string(&options).expect("JSON");
                prop_assert_eq!(serde_json::from_str::<Options>(&json).expect("JSON"), options);
            }
        }
    }

    /// Every game checks its options: unknown keys and bad values are setup errors,
    /// and the options in force are accepted back as they are.
    #[test]
    fn game_options_are_checked(
        game in proptest::sample::select(GameId::ALL.to_vec()),
        words in proptest::collection::vec(
            "(players|variant|max-plies|colors-per-player|seats|x)=([0-9]{1,3}|4294967296|-1|two)",
            0..4,
        ),
    ) {
        let Ok(options) = Options::parse(words.iter().map(String::as_str)) else { return Ok(()) };
        match game.create(&options, None) {
            Err(SetupError::Option(m)) => prop_assert!(!m.is_empty()),
            Err(e) => return Err(TestCaseError::fail(format!("options {options} rejected as {e:?}"))),
            Ok(g) => {
                let in_force = g.options();
                let again = game.create(&in_force, None).expect("options in force are accepted back");
                prop_assert_eq!(again.options(), in_force);
                prop_assert_eq!(again.state(), g.state());
            }
        }
    }
}

// ---------------------------------------------------------------------------------
// Regressions: bugs the properties above found
// ---------------------------------------------------------------------------------

#[test]
fn idoubtit_plies_near_u32_max_do_not_overflow() {
    let options = Options::parse(["variant=0"]).expect("options");
    let state = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR play w - - - - 4294967295 -";
    let game = GameId::IDoubtIt
        .create(&options, Some(state))
        .expect("the parser accepts it");
    // `2 * army - unplaced + plies` overflowed in a debug build.
    assert_eq!(game.plies(), u32::MAX);
}

#[test]
fn agent_input_setoption_without_a_name_does_not_panic() {
    // Sliced `rest[5..4]` and panicked.
    assert!(matches!(
        AgentInput::parse("setoption name value x"),
        AgentInput::Unknown(_)
    ));
}

#[test]
fn agent_input_go_with_a_huge_clock_does_not_overflow() {
    // `time / to_go + inc` overflowed in a debug build.
    assert_eq!(
        AgentInput::parse("go move time 18446744073709551615 inc 1 movestogo 1"),
        AgentInput::Go {
            kind: "move".into(),
            budget_ms: Some(u64::MAX)
        }
    );
}

#[test]
fn idoubtit_drop_slots_have_one_spelling() {
    let options = Options::parse(["variant=3"]).expect("options");
    let state = "rnbqk1nr/pppp1ppp/8/4P3/1b6/8/PPP1PPPP/RNBQKBNR play w P'^ - - - 4 - | b f8b4 \
                 | rnbqkbnr/pppp1ppp/8/4P3/8/8/PPP1PPPP/RNBQKBNR play b P'^ - - - 3 -";
    let mut game = GameId::IDoubtIt
        .create(&options, Some(state))
        .expect("protocol.md's example");
    assert!(game.legal_actions().iter().any(|a| a == "1@e4"));
    assert!(!game.legal_actions().iter().any(|a| a == "01@e4"));
    // Was accepted (nom's `u8` reads `01`) and recorded as submitted.
    let played = game.play(Seat::new(1).expect("seat"), "01@e4");
    assert!(matches!(played, Err(Rejection::Malformed { .. })), "{played:?}");
}

#[test]
fn idoubtit_states_with_an_impossible_army_are_rejected() {
    // Only the total per side was checked; a supply must be what is left of the army
    // after the pieces placed.
    let options = Options::parse(["variant=0"]).expect("options");
    let state = "8/8/8/8/8/8/8/8 place w - - KQRRBBNNPPPPPPPP KKKKKKKKKKKKKKKK 0 -";
    let created = GameId::IDoubtIt.create(&options, Some(state));
    assert!(matches!(created, Err(SetupError::State(_))), "accepted `{state}`");
}

#[test]
fn multichess_states_with_two_kings_for_a_seat_are_rejected() {
    // Seat 2 has a second queen instead of its king (and still castling rights): it
    // could never be eliminated (R-M5).
    let options = Options::parse(["players=2"]).expect("options");
    let state = "......../......../......../........ \
                 ......../......../P1P1P1P1P1P1P1P1/R1N1B1Q1K1B1N1R1 \
                 ......../......../P2P2P2P2P2P2P2P2/R2N2B2K2K2B2N2R2 1 0 1,2 KQ,KQ -";
    let created = GameId::MultiChess.create(&options, Some(state));
    assert!(matches!(created, Err(SetupError::State(_))), "accepted `{state}`");
}
