//! The property checks, kept once for the two places that run them:
//! `tests/properties.rs` (bounded, proptest's strategies, on every `cargo test`) and
//! the fuzz targets of `fuzz/` (open-ended, libFuzzer's bytes), which include this
//! file by its path. Each check panics on a violation, which both runners report
//! with the input that caused it. Only the crate, `serde_json` and the standard
//! library are used here: the strategies and the byte decoding stay with their runner.

use std::path::{Path, PathBuf};
use std::time::Duration;

use referee::builtin::{self, Strategy as Bot};
use referee::clock::{SeatClock, TimeControl};
use referee::game::idoubtit::board::{Kind, Piece, Side};
use referee::game::idoubtit::notation::{Action, Promotion};
use referee::game::idoubtit::rules::Variant;
use referee::game::idoubtit::state::{self as idt_state, Lens};
use referee::game::multichess::state as multi_state;
use referee::game::{ForfeitKind, Game, GameId, Options, Seat, SetupError, Turn};
use referee::protocol::agent::{AgentInput, FromAgent};
use referee::record::{
    self, ActionLine, ForfeitLine, Header, Line, RecordWriter, Replay, ResultLine, SeatEntry, FORMAT, GENESIS,
};
use referee::rng::Rng;
use referee::serve::{json, Answer, ControlCommand, Controller};

// ---------------------------------------------------------------------------------
// Games, and games played here
// ---------------------------------------------------------------------------------

/// A game and the options it is played with.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Setup {
    pub game: GameId,
    pub options: &'static str,
}

pub const fn setup(game: GameId, options: &'static str) -> Setup {
    Setup { game, options }
}

/// Every game, with several player counts and variants; small `max-plies` so that
/// finished games come up too.
pub const SETUPS: &[Setup] = &[
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
    pub fn options(self) -> Options {
        Options::parse(self.options.split_whitespace()).expect("setup options")
    }

    pub fn create(self, state: Option<&str>) -> Result<Box<dyn Game>, SetupError> {
        self.game.create(&self.options(), state)
    }

    pub fn start(self) -> Box<dyn Game> {
        self.create(None).expect("start position")
    }

    pub fn variant(self) -> Variant {
        let n = self.options().int("variant", 0, 0..=15).expect("variant");
        Variant::from_number(n).expect("variant")
    }

    pub fn seats(self) -> usize {
        self.start().seat_count()
    }
}

/// The seat to act, if any.
pub fn to_act(game: &dyn Game) -> Option<Seat> {
    match game.turn() {
        Turn::Act { seat, .. } => Some(seat),
        Turn::Over => None,
    }
}

/// A legal action for the seat to act, chosen by `rng` (the forced one if any).
pub fn pick_legal(game: &dyn Game, rng: &mut Rng) -> Option<String> {
    if let Some(forced) = game.forced_action() {
        return Some(forced);
    }
    let legal = game.legal_actions();
    (!legal.is_empty()).then(|| legal[rng.below(legal.len())].clone())
}

/// Plays up to `plies` random legal actions chosen by `seed`, now and then letting the
/// seat to act resign instead, so that positions after forfeits come up too.
pub fn advance(game: &mut dyn Game, seed: u64, plies: usize) {
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
pub fn played(setup: Setup, seed: u64, plies: usize) -> Box<dyn Game> {
    let mut game = setup.start();
    advance(game.as_mut(), seed, plies);
    game
}

// ---------------------------------------------------------------------------------
// Games, states and views
// ---------------------------------------------------------------------------------

/// The I-Doubt-It view printer, with the visibility read back from a parsed view:
/// hidden types are `Kind::Unknown`, and a supply given as a count hides the types of
/// fresh pieces of that side (the same rule decides both, R-D9).
pub fn print_idt_view(pos: &referee::game::idoubtit::rules::Position, viewer: Side) -> String {
    let hidden_supply = |side: Side| pos.supply[side].contains(&Kind::Unknown);
    let sees = |p: &Piece, _pending: bool| {
        p.kind != Kind::Unknown && !(hidden_supply(p.owner) && *p == Piece::new(p.owner, Kind::Pawn))
    };
    idt_state::print(pos, Lens::Seat(viewer, &sees))
}

/// The side the pending action of a parsed view was told to (a hidden promotion type
/// means the viewer is the actor's opponent).
pub fn viewer_of(pos: &referee::game::idoubtit::rules::Position, default: Side) -> Side {
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

pub fn side_of(seat: Seat) -> Side {
    Side::BOTH[seat.index().min(1)]
}

/// A view a game sent must parse with the game's view parser and print back to itself.
pub fn check_real_view(setup: Setup, game: &dyn Game, seat: Seat) {
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
pub fn check_game(setup: Setup, game: &dyn Game) {
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
pub fn check_play(setup: Setup, game: &mut dyn Game, seat: Seat, action: &str) {
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

pub fn to_act_of(turn: Turn) -> Option<Seat> {
    match turn {
        Turn::Act { seat, .. } => Some(seat),
        Turn::Over => None,
    }
}

/// A state string given to `GameId::create`: a clean error listing problems, or a game
/// whose state prints, parses back to the same string, and whose rules run.
pub fn check_state_text(setup: Setup, text: &str) {
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
pub fn check_view_text(setup: Setup, seat: Seat, text: &str) {
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
pub fn check_bot(setup: Setup, seat: Seat, view: &str) {
    if view.contains(['\n', '\r']) {
        return; // one line is all a view can be
    }
    let options = setup.start().options();
    let script = format!(
        "protocol 1\nisready\nnewgame game {} seat {seat} seats {} options {options}\nview {view}\ngo move movetime 10\nquit\n",
        setup.game,
        setup.seats()
    );
    // One `go` before `quit`: one `bestmove`.
    check_bots(&script, 7);
}

// ---------------------------------------------------------------------------------
// Agent lines
// ---------------------------------------------------------------------------------

/// `FromAgent::parse` on one line: anything is classified, and what it extracts is
/// trimmed; `from_line`, which keeps the text in the line's buffer, reads the same.
pub fn check_agent_line(line: &str) {
    assert_eq!(FromAgent::from_line(line.to_string()), FromAgent::parse(line));
    match FromAgent::parse(line) {
        FromAgent::BestMove(a) => assert!(!a.contains(char::is_whitespace)),
        FromAgent::IdName(s) | FromAgent::IdAuthor(s) => assert_eq!(s.trim(), s.as_str()),
        FromAgent::Info(_) | FromAgent::Option(_) | FromAgent::Unknown(_) => {}
        FromAgent::ProtocolOk | FromAgent::ReadyOk => {}
    }
}

/// The built-in agents on a script of referee lines: no panic, and one `bestmove`
/// for each `go` before `quit`.
pub fn check_bots(script: &str, seed: u64) {
    let goes = script
        .lines()
        .map(AgentInput::parse)
        .take_while(|l| *l != AgentInput::Quit)
        .filter(|l| matches!(l, AgentInput::Go { .. }))
        .count();
    for bot in [Bot::Random, Bot::Greedy, Bot::Strong] {
        let mut out = Vec::new();
        // A small node budget: the property is about answers, not their strength.
        builtin::run(bot, seed, 200, script.as_bytes(), &mut out).expect("in-memory output");
        let out = String::from_utf8(out).expect("bots write UTF-8");
        assert_eq!(
            out.lines().filter(|l| l.starts_with("bestmove ")).count(),
            goes,
            "{out}"
        );
    }
}

// ---------------------------------------------------------------------------------
// Controller
// ---------------------------------------------------------------------------------

/// The error kinds of the controller protocol.
pub const ERROR_KINDS: [&str; 10] = [
    "usage",
    "setup",
    "no-game",
    "malformed",
    "illegal",
    "turn",
    "over",
    "record",
    "undo",
    "name",
];

/// An `error` line: `error <kind> <message>`, on one line.
pub fn check_error_line(line: &str) {
    assert!(!line.contains('\n'), "`{line}` spans lines");
    let mut words = line.splitn(3, ' ');
    assert_eq!(words.next(), Some("error"), "`{line}`");
    let kind = words.next().unwrap_or("");
    assert!(ERROR_KINDS.contains(&kind), "`{line}`: unknown error kind");
    assert!(!words.next().unwrap_or("").is_empty(), "`{line}`: no message");
}

/// A `serve --json` answer: one line holding one object whose `ok` says whether the
/// command succeeded, and an error object with a known kind and a message.
pub fn check_json_line(line: &str, ok: bool) {
    assert!(!line.contains('\n'), "`{line}` spans lines");
    let value: serde_json::Value = serde_json::from_str(line).expect("a JSON answer parses");
    assert_eq!(value["ok"], ok, "`{line}`");
    if !ok {
        let kind = value["error"]["kind"].as_str().unwrap_or("");
        assert!(ERROR_KINDS.contains(&kind), "`{line}`: unknown error kind");
        assert!(
            value["error"]["message"].as_str().is_some_and(|m| !m.is_empty()),
            "`{line}`"
        );
    }
}

/// A controller whose `record` and `load` files stay in a scratch directory.
pub struct Session {
    pub controller: Controller,
    dir: PathBuf,
}

impl Session {
    /// A session with no game yet, writing its files into `dir`.
    pub fn new(dir: &Path) -> Session {
        Session {
            controller: Controller::new(),
            dir: dir.to_path_buf(),
        }
    }

    /// A file of the scratch directory.
    pub fn path(&self, name: &str) -> String {
        self.dir.join(name).to_string_lossy().into_owned()
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
    pub fn run(&mut self, line: &str) -> (Vec<String>, bool) {
        let before = self.snapshot();
        let (typed, quit) = self.controller.execute_typed(line);
        check_json_line(&json::answer_line(&typed), typed.is_ok());
        let answer = Answer::of(&typed, quit);
        for l in &answer.lines {
            assert!(!l.contains('\n'), "`{line}`: data line `{l}` spans lines");
            assert!(
                l != "ok" && !l.starts_with("error "),
                "`{line}`: data line `{l}` reads as a final line"
            );
        }
        assert_eq!(
            answer.quit,
            ControlCommand::parse(line) == Ok(ControlCommand::Quit)
        );
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

    /// `play`s a legal action for each of `picks` (the pick modulo the number
    /// listed) while the game goes on, then `undo`es them all at once: everything the
    /// snapshot holds (the answers to the read-only commands and the record) is as it
    /// was before.
    pub fn play_undo(&mut self, picks: &[usize]) {
        let before = self.snapshot();
        let mut played = 0;
        for pick in picks {
            let (Some(turn), Some(legal)) = (self.query("turn"), self.query("legal")) else {
                return;
            };
            let Some(seat) = turn.split(' ').nth(1).filter(|s| *s != "none") else {
                break;
            };
            let legal: Vec<&str> = legal.split(' ').filter(|a| !a.is_empty()).collect();
            if legal.is_empty() {
                break;
            }
            let line = format!("play {seat} {}", legal[pick % legal.len()]);
            assert!(self.run(&line).1, "`{line}` of the legal list rejected");
            played += 1;
        }
        if played == 0 {
            return;
        }
        assert!(self.run(&format!("undo {played}")).1, "`undo {played}` rejected");
        assert_eq!(self.snapshot(), before, "`undo {played}` left another game");
    }

    /// The one data line of a query.
    pub fn query(&mut self, line: &str) -> Option<String> {
        let a = self.controller.execute(line);
        (a.last == "ok").then(|| a.lines.concat())
    }

    /// `play`s, as the seat to act, the legal action numbered `choose(n)` of the `n`
    /// listed: it must be accepted, and the state it leaves accepted back.
    pub fn play_legal(&mut self, choose: impl FnOnce(usize) -> usize) {
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
        let line = format!("play {seat} {}", legal[choose(legal.len())]);
        let known = self.information_states();
        let (_, ok) = self.run(&line);
        assert!(ok, "`{line}` of the legal list rejected");
        self.check_state_accepted_back();
        self.check_recall(&known, &line);
    }

    /// Every seat's `information_state`, by seat.
    fn information_states(&mut self) -> Vec<String> {
        (1..)
            .map_while(|seat| self.query(&format!("information_state {seat}")))
            .collect()
    }

    /// Perfect recall: after an action every seat still knows all it knew, so its
    /// information state before, without the view it ends with, begins the one after
    /// (which is all of it for a seat that resigned before).
    fn check_recall(&mut self, before: &[String], line: &str) {
        for (i, (old, new)) in before.iter().zip(self.information_states()).enumerate() {
            let kept = told_before_now(old);
            // Whole lines: a line that grew since is not what the seat was told.
            assert!(
                new == kept || new.starts_with(&format!("{kept} | ")),
                "`{line}`: seat {} forgot what it was told:\n{old}\n{new}",
                i + 1
            );
        }
    }

    /// `clone`s the current game, plays in the copy and comes back: the copy starts
    /// as the original stands, and playing in it leaves the original as it was.
    pub fn clone_apart(&mut self, pick: usize) {
        let Some(games) = self.query("games") else { return };
        let Some(current) = games
            .split("game ")
            .find(|g| g.trim_end().ends_with(" current"))
            .and_then(|g| g.split(' ').next())
            .map(str::to_string)
        else {
            return;
        };
        let copy = if current == "copy" { "other" } else { "copy" };
        let before = self.snapshot();
        self.run(&format!("drop {copy}"));
        assert!(
            self.run(&format!("clone {current} {copy}")).1,
            "`clone {current} {copy}`"
        );
        assert!(self.run(&format!("use {copy}")).1);
        assert_eq!(
            self.snapshot(),
            before,
            "the clone of `{current}` is another game"
        );
        self.play_legal(|n| pick % n);
        assert!(self.run(&format!("use {current}")).1);
        assert_eq!(self.snapshot(), before, "playing in a clone changed `{current}`");
    }

    /// `record`s the game and `load`s it back: the same state.
    pub fn record_load(&mut self) {
        let path = self.path("game.jsonl");
        let state = self.query("state");
        let (_, ok) = self.run(&format!("record {path}"));
        if ok {
            let (_, loaded) = self.run(&format!("load {path}"));
            assert!(loaded, "a record the controller wrote does not load");
            assert_eq!(self.query("state"), state, "a record loads back to another state");
        }
    }

    /// Runs any command line; the file of a `record` or `load` is a scratch file.
    pub fn raw(&mut self, line: &str) {
        let line = match ControlCommand::parse(line) {
            Ok(ControlCommand::Record(_)) => format!("record {}", self.path("raw.jsonl")),
            Ok(ControlCommand::Load(_)) => format!("load {}", self.path("raw.jsonl")),
            _ => line.to_string(),
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
        let replay = record::replay_file(Path::new(&path)).expect("the controller's record replays");
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

// ---------------------------------------------------------------------------------
// Records
// ---------------------------------------------------------------------------------

/// A valid record of a game of `setup` played here, from the start or from a state
/// reached by `lead` plies, with agents' timings and forfeits of every kind, finished
/// or not; and the state it ends in.
pub fn build_record(setup: Setup, seed: u64, lead: usize, plies: usize) -> (Vec<u8>, String) {
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
                seat,
                label: game.seat_label(seat),
                name: "random".into(),
                command: (seat.number() % 2 == 0).then(|| "referee agent random".into()),
                entrant: None,
                time_control: None,
            })
            .collect(),
        seed,
        time_control: controls[rng.below(controls.len())].map(str::to_string),
        sandbox: (rng.below(2) == 0).then(|| "bubblewrap 0.8.0".into()),
        start: "2025-01-01T00:00:00Z".into(),
        deadline: None,
        time: None,
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
                    seat,
                    reason: ForfeitKind::Timeout,
                    detail: "out of time".into(),
                    action: None,
                    events,
                    time: None,
                })
            }
            0 => {
                let events = game.forfeit(seat, ForfeitKind::Illegal).events;
                Line::Forfeit(ForfeitLine {
                    seat,
                    reason: ForfeitKind::Illegal,
                    detail: "illegal action".into(),
                    action: Some("zz".into()),
                    events,
                    time: None,
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
                    seat,
                    reason,
                    detail: format!("{reason}"),
                    action: None,
                    events,
                    time: None,
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
                    seat,
                    action,
                    taken: played.taken,
                    forced,
                    opening: in_opening,
                    events: played.events,
                    think_ms: timing.map(|t| t.0),
                    clock_ms: timing.map(|t| t.1),
                    time: None,
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
                time: None,
            };
            w.write(&Line::Result(result)).expect("in memory");
            break;
        }
    }
    (bytes, game.state())
}

/// Writes a replayed record back with the crate's own writer.
pub fn rewrite(replay: &Replay) -> Vec<u8> {
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
pub fn check_record(bytes: &[u8]) {
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
pub fn seal_bodies(bodies: &[String]) -> Vec<u8> {
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

// ---------------------------------------------------------------------------------
// Time controls and options
// ---------------------------------------------------------------------------------

/// An accepted control prints in a form that reads back as the same control, and
/// drives a clock without panicking.
pub fn check_control(parsed: Result<TimeControl, referee::clock::TimeControlError>) {
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

/// Option words given to `Options::parse`: words without `=` or with an empty side
/// are errors; what is accepted prints as words that parse back to the same options,
/// and goes through JSON unchanged. Returns the options accepted.
pub fn check_options<S: AsRef<str>>(words: &[S]) -> Option<Options> {
    match Options::parse(words.iter().map(AsRef::as_ref)) {
        Err(e) => {
            assert!(!e.to_string().is_empty());
            None
        }
        Ok(options) => {
            assert_eq!(
                options.iter().count(),
                words.len(),
                "a key given twice was accepted"
            );
            for w in words {
                let (k, v) = w.as_ref().split_once('=').expect("accepted words are KEY=VALUE");
                assert!(!k.is_empty() && !v.is_empty());
            }
            if words.iter().all(|w| !w.as_ref().contains(char::is_whitespace)) {
                let printed = options.to_string();
                assert_eq!(Options::parse(printed.split_whitespace()), Ok(options.clone()));
            }
            let json = serde_json::to_string(&options).expect("JSON");
            assert_eq!(serde_json::from_str::<Options>(&json).expect("JSON"), options);
            Some(options)
        }
    }
}

/// A game checks its options: unknown keys and bad values are setup errors, and the
/// options in force are accepted back as they are.
pub fn check_game_options(game: GameId, options: &Options) {
    match game.create(options, None) {
        Err(SetupError::Option(m)) => assert!(!m.is_empty()),
        Err(e) => panic!("options {options} rejected as {e:?}"),
        Ok(g) => {
            let in_force = g.options();
            let again = game
                .create(&in_force, None)
                .expect("options in force are accepted back");
            assert_eq!(again.options(), in_force);
            assert_eq!(again.state(), g.state());
        }
    }
}

/// An information state without its last line, the view (or `gameover`) of now.
/// Found by its start, not by splitting at ` | `: an I-Doubt-It view holds a ` | `
/// of its own, before the pending action. A seat that resigned has no such line,
/// and what this cuts off is then still a prefix of what it is told later.
fn told_before_now(state: &str) -> &str {
    [" | view ", " | gameover "]
        .iter()
        .filter_map(|m| state.rfind(m))
        .max()
        .map_or(state, |i| &state[..i])
}
