//! Property tests of every parser in the crate: agent lines, controller commands and
//! whole controller sessions, the actions, state strings and view strings of every
//! game, records, time controls and options. The checks themselves are in
//! `property_checks/mod.rs`, which the fuzz targets of `fuzz/` include too and run
//! open-ended; this file holds the strategies that feed them.
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

use referee::clock::TimeControl;
use referee::game::{
    ActionKind, EndReason, ForfeitKind, GameId, Options, Outcome, Rejection, Seat, SetupError, Turn,
};
use referee::protocol::agent::{AgentInput, FromAgent, GoClock, ToAgent};
use referee::record;
use referee::rng::Rng;
use referee::serve::ControlCommand;

mod property_checks;
use property_checks::*;

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
// Games: the setups (`SETUPS`) and the games played from them are in `property_checks`
// ---------------------------------------------------------------------------------

impl Setup {
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
        check_agent_line(&line);
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
        check_bots(&script, seed);
    }
}

// ---------------------------------------------------------------------------------
// Controller
// ---------------------------------------------------------------------------------

/// Text shaped like controller commands.
fn command_line() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => "(new|turn|legal|correct|play|undo|view|events|information_state|state|result|resign|show|games|use|drop|clone|help|quit|frob)( {1,2}(pegchow|telka|idoubtit|multichess|players=[0-9]{1,2}|variant=[0-9]{1,2}|max-plies=[0-9]{1,10}|colors-per-player=[0-3]|state=|main|left|right|[0-9]{1,3}|[a-z0-9:=@-]{1,6})){0,4} ?",
        1 => any_text(),
    ]
}

proptest! {
    #![proptest_config(config(2000))]

    /// `ControlCommand::parse`: a command or a one-line `error <kind> …`.
    #[test]
    fn commands_parse_or_fail_cleanly(line in command_line()) {
        match ControlCommand::parse(&line) {
            Ok(ControlCommand::New { game, options, state, .. }) => {
                prop_assert!(!game.is_empty());
                prop_assert!(options.iter().all(|o| !o.is_empty() && !o.contains(char::is_whitespace)));
                if let Some(state) = state {
                    let expected = format!("state={state}");
                    prop_assert!(line.contains(&expected));
                }
            }
            Ok(ControlCommand::Play(_, action)) => prop_assert!(!action.is_empty() && !action.contains(char::is_whitespace)),
            Ok(_) => {}
            Err(e) => check_error_line(&e.to_string()),
        }
    }
}

/// One step of a controller session.
#[derive(Clone, Debug)]
enum Step {
    /// `new` a game, from its start, or from a state reached by random plies and then edited.
    New(Setup, Option<(u64, usize, Vec<Edit>)>),
    /// `play` the legal action with this index, as the seat to act.
    PlayLegal(Index),
    /// `play` legal actions (picked by these numbers) and `undo` them all.
    PlayUndo(Vec<usize>),
    /// `clone` the current game, play in the copy, come back.
    CloneApart(usize),
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
        2 => proptest::collection::vec(any::<usize>(), 1..5).prop_map(Step::PlayUndo),
        1 => any::<usize>().prop_map(Step::CloneApart),
        2 => (0..10usize, "[a-k0-9@:=+-]{1,9}|doubt|accept|pass").prop_map(|(s, a)| Step::Play(s, a)),
        1 => (0..10usize).prop_map(Step::Resign),
        1 => (0..10usize).prop_map(Step::Look),
        1 => Just(Step::RecordLoad),
        1 => proptest::collection::vec(any::<u8>(), 0..200).prop_map(Step::LoadGarbage),
        3 => command_line().prop_map(Step::Raw),
    ]
}

impl Session {
    /// Runs one step (the checks are those of `Session::run`).
    fn step(&mut self, step: Step) {
        let line = match step {
            Step::New(setup, None) => format!("new {} {}", setup.game, setup.options),
            Step::New(setup, Some((seed, plies, edits))) => {
                let game = played(setup, seed, plies);
                let state = mutate(&game.state(), &edits, setup.alphabet());
                format!("new {} {} state={state}", setup.game, setup.options)
            }
            Step::PlayLegal(i) => return self.play_legal(|n| i.index(n)),
            Step::PlayUndo(picks) => return self.play_undo(&picks),
            Step::CloneApart(pick) => return self.clone_apart(pick),
            Step::Play(seat, action) => format!("play {seat} {action}"),
            Step::Resign(seat) => format!("resign {seat}"),
            Step::Look(seat) => {
                self.run(&format!("show {seat}"));
                format!("view {seat}")
            }
            Step::RecordLoad => return self.record_load(),
            Step::LoadGarbage(bytes) => {
                let path = self.path("garbage.jsonl");
                std::fs::write(&path, &bytes).expect("scratch file");
                format!("load {path}")
            }
            // `record`/`load` of arbitrary lines stay inside the scratch directory.
            Step::Raw(line) => return self.raw(&line),
        };
        self.run(&line);
    }
}

proptest! {
    #![proptest_config(config(300))]

    /// Whole controller sessions of random command lines.
    #[test]
    fn controller_sessions_answer_cleanly(steps in proptest::collection::vec(step(), 1..24)) {
        let dir = tempfile::tempdir().expect("temporary directory");
        let mut session = Session::new(dir.path());
        for step in steps {
            session.step(step);
        }
    }
}

// ---------------------------------------------------------------------------------
// Records
// ---------------------------------------------------------------------------------

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
        check_options(&words);
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
        check_game_options(game, &options);
    }
}

// ---------------------------------------------------------------------------------
// Regressions: bugs the properties above found
// ---------------------------------------------------------------------------------

/// A view whose counter is the highest a `u32` holds: the built-in agents searched
/// on from it and the ply count overflowed (multichess, found by
/// `mutated_views_parse_cleanly`). Every game's parser now refuses such a counter,
/// in a state string and in a view.
#[test]
fn counters_near_u32_max_are_refused_and_no_bot_panics() {
    // The counter's field in each game's state and view, counted from 0.
    let cases = [
        (setup(GameId::MultiChess, "players=2"), 4),
        (setup(GameId::MultiChess, "players=5"), 7),
        (setup(GameId::IDoubtIt, "variant=0"), 7),
        (setup(GameId::Telka, "players=2"), 2),
        (setup(GameId::PegChow, "players=4"), 2),
    ];
    let refused = "`4294967295`: expected an integer from 0 to 2147483647";
    for (setup, field) in cases {
        let game = played(setup, 6151946905959200, 6);
        let Turn::Act { seat, .. } = game.turn() else {
            panic!("{setup:?}: over after 6 plies")
        };
        let replaced = |text: &str, counter: &str| {
            let mut words: Vec<&str> = text.split(' ').collect();
            words[field] = counter;
            words.join(" ")
        };
        let options = setup.start().options();
        let error = setup
            .game
            .create(&options, Some(&replaced(&game.state(), "4294967295")))
            .map(|_| ())
            .expect_err("refused");
        assert!(error.to_string().contains(refused), "{setup:?}: {error}");
        let view = game.view(seat).text().to_string();
        for counter in ["2147483647", "4294967295"] {
            check_view_text(setup, seat, &replaced(&view, counter));
        }
    }
}

#[test]
fn idoubtit_plies_near_u32_max_do_not_overflow() {
    let options = Options::parse(["variant=0"]).expect("options");
    let state = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR play w - - - - 4294967295 -";
    // `2 * army - unplaced + plies` overflowed in a debug build; and a game started
    // at the last ply a counter holds could not number the plies after it, so its
    // record did not replay.
    let error = GameId::IDoubtIt
        .create(&options, Some(state))
        .map(|_| ())
        .expect_err("no room for the plies to come");
    assert!(
        error
            .to_string()
            .contains("plies `4294967295`: expected an integer from 0 to 2147483647"),
        "{error}"
    );
    let state = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR play w - - - - 2147483615 -";
    let game = GameId::IDoubtIt.create(&options, Some(state)).expect("room left");
    assert_eq!(game.plies(), referee::game::MAX_START_PLY);
}

/// A state set up in placement with its counter at the limit: when placement ends the
/// game is drawn (R-D8); it let one more move take the counter to 2147483648, whose
/// final state the parser, and so `show --format svg`, refused.
#[test]
fn idoubtit_placement_ending_at_the_ply_limit_is_drawn() {
    let options = Options::parse(["variant=0"]).expect("options");
    let state = "8/8/8/8/8/8/8/8 place w - - KQRRBBNNPPPPPPPP KQRRBBNNPPPPPPPP 2147483647 -";
    let mut game = GameId::IDoubtIt.create(&options, Some(state)).expect("room left");
    while let Turn::Act { seat, .. } = game.turn() {
        let action = game.legal_actions()[0].clone();
        assert!(action.contains('@'), "a move after placement: {}", game.state());
        game.play(seat, &action).expect("legal");
    }
    assert!(game.outcome().is_some(), "{}", game.state());
    assert!(game.state().contains(" drawn "), "{}", game.state());
    let counter = game.state().split(' ').nth(7).map(str::to_string);
    assert_eq!(counter.as_deref(), Some("2147483647"), "{}", game.state());
}

/// A placement-phase state with two of Black's pieces (its king among them) cut out:
/// the game accepted it and then, on a move of Black's, dropped a view seat 1 had
/// been told from its information state (found by `controller_sessions_answer_cleanly`).
/// Nothing is taken before play, so placement must hold the whole army.
#[test]
fn r_d3_a_placement_state_missing_pieces_is_refused() {
    let options = Options::parse(["variant=0"]).expect("options");
    let state = "pppppnbb/2qnrrp1/8/8/8/8/PPNRPBBP/PPRNQPPK place b - - - P 0 -";
    let error = GameId::IDoubtIt
        .create(&options, Some(state))
        .map(|_| ())
        .expect_err("a king short");
    assert!(
        error
            .to_string()
            .contains("14 pieces placed or to place for black, the army has 16"),
        "{error}"
    );
    let whole = "pppppnbb/pkqnrrp1/8/8/8/8/PPNRPBBP/PPRNQPPK place b - - - P 0 -";
    GameId::IDoubtIt
        .create(&options, Some(whole))
        .expect("the whole army");
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
