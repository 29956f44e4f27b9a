//! Checks shared by the fuzz targets: the properties of `tests/properties.rs`, driven
//! by libFuzzer's bytes instead of proptest's strategies. Every check panics on a
//! violation, which libFuzzer reports as a crash with the input that caused it.
//!

use std::path::Path;

use referee::builtin::{self, Strategy as Bot};
use referee::clock::{SeatClock, TimeControl, TimeControlError};
use referee::game::idoubtit::board::{Kind, Piece, Side};
use referee::game::idoubtit::rules::{Position as IdtPosition, Variant};
use referee::game::idoubtit::state::{self as idt_state, Lens};
use referee::game::multichess::state as multi_state;
use referee::game::{ForfeitKind, Game, GameId, Options, Seat, SetupError, Turn};
use referee::protocol::agent::{AgentInput, FromAgent};
use referee::protocol::controller::{Command, Controller};
use referee::record::{self, Line, RecordWriter, Replay, GENESIS};
use referee::rng::Rng;

/// A game and the options it is played with.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Setup {
    pub game: GameId,
    pub options: &'static str,
}

const fn setup(game: GameId, options: &'static str) -> Setup {
    Setup { game, options }
}

/// Every game, with several player counts and variants.
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
    /// The setup a byte picks.
    pub fn pick(byte: u8) -> Setup {
        SETUPS[byte as usize % SETUPS.len()]
    }

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
        Variant::from_number(self.options().int("variant", 0, 0..=15).expect("variant")).expect("variant")
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

/// A game of `setup` after up to `plies` random plies chosen by `seed` (now and then
/// a resignation instead).
pub fn played(setup: Setup, seed: u64, plies: usize) -> Box<dyn Game> {
    let mut game = setup.start();
    let mut rng = Rng::new(seed);
    for _ in 0..plies {
        let Some(seat) = to_act(game.as_ref()) else { break };
        if rng.below(48) == 0 {
            game.forfeit(seat, ForfeitKind::Resign);
            continue;
        }
        let Some(action) = pick_legal(game.as_ref(), &mut rng) else {
            break;
        };
        if let Err(e) = game.play(seat, &action) {
            panic!(
                "legal `{action}` of seat {seat} rejected in `{}`: {e}",
                game.state()
            );
        }
    }
    game
}

/// `text` spliced into `base` between two positions chosen by `a` and `b`.
pub fn splice(base: &str, a: u16, b: u16, text: &str) -> String {
    let chars: Vec<char> = base.chars().collect();
    let from = a as usize % (chars.len() + 1);
    let to = (from + b as usize % 16).min(chars.len());
    let mut out: String = chars[..from].iter().collect();
    out.push_str(text);
    out.extend(&chars[to..]);
    out
}

// ---- games ----

fn side_of(seat: Seat) -> Side {
    Side::BOTH[seat.index().min(1)]
}

/// Prints a parsed I-Doubt-It view back, with the visibility read from it.
fn print_idt_view(pos: &IdtPosition, viewer: Side) -> String {
    let hidden_supply = |side: Side| pos.supply[side.index()].contains(&Kind::Unknown);
    let sees = |p: &Piece, _pending: bool| {
        p.kind != Kind::Unknown && !(hidden_supply(p.owner) && *p == Piece::new(p.owner, Kind::Pawn))
    };
    let mut main = pos.clone();
    let pending = main.pending.take();
    let mut text = idt_state::print(&main, Lens::Seat(viewer, &sees));
    if let Some(p) = pending {
        let action = idt_state::public_action(&p.action, p.actor, viewer);
        text.push_str(&format!(" | {} {action}", p.actor.letter()));
    }
    text
}

/// Exercises every query of a game; its state must be accepted back unchanged, and
/// its views must parse and print back.
pub fn check_game(setup: Setup, game: &dyn Game) {
    let state = game.state();
    assert!(!state.contains('\n'));
    let again = setup
        .create(Some(&state))
        .unwrap_or_else(|e| panic!("{setup:?}: state `{state}` not accepted back: {e}"));
    assert_eq!(again.state(), state);
    let legal = game.legal_actions();
    if game.outcome().is_none() {
        assert_eq!(again.turn(), game.turn());
        assert_eq!(again.legal_actions(), legal);
    }
    let _ = (
        game.correct_actions(),
        game.forced_action(),
        game.plies(),
        game.options(),
        game.diagram(None),
    );
    for seat in Seat::all(game.seat_count()) {
        let _ = (game.seat_label(seat), game.diagram(Some(seat)));
        let text = game.view(seat).text().to_string();
        match setup.game {
            GameId::PegChow | GameId::Telka => assert_eq!(text, state),
            GameId::IDoubtIt => {
                let pos = idt_state::parse(&text, setup.variant(), true)
                    .unwrap_or_else(|e| panic!("view `{text}` does not parse: {e:?}"));
                assert_eq!(print_idt_view(&pos, side_of(seat)), text);
            }
            GameId::MultiChess => {
                let (pos, seen) = multi_state::parse(&text, game.seat_count(), true)
                    .unwrap_or_else(|e| panic!("view `{text}` does not parse: {e:?}"));
                assert_eq!(multi_state::print(&pos, Some((seat, seen.as_slice()))), text);
            }
        }
    }
}

/// Plays `action` for `seat`: a rejection changes nothing; an accepted action is a
/// legal action of the seat to act, counts one ply and leaves a state that round-trips.
pub fn check_play(setup: Setup, game: &mut dyn Game, seat: Seat, action: &str) {
    let (state, turn, plies, outcome) = (game.state(), game.turn(), game.plies(), game.outcome());
    let legal = game.legal_actions();
    let forced = game.forced_action();
    match game.play(seat, action) {
        Err(_) => {
            assert_eq!(game.state(), state, "rejected `{action}` changed the state");
            assert_eq!(
                (game.turn(), game.plies(), game.outcome()),
                (turn, plies, outcome)
            );
        }
        Ok(_) => {
            assert!(outcome.is_none(), "`{action}` accepted after the game ended");
            assert!(
                matches!(turn, Turn::Act { seat: s, .. } if s == seat),
                "`{action}` accepted out of turn"
            );
            let listed = legal.iter().any(|a| a == action) || forced.as_deref() == Some(action);
            assert!(listed, "`{action}` accepted but not listed by `legal`");
            assert_eq!(game.plies(), plies + 1);
            check_game(setup, game);
        }
    }
}

/// A state string: a clean error, or a game whose state round-trips and whose rules run.
pub fn check_state_text(setup: Setup, text: &str) {
    match setup.create(Some(text)) {
        Err(SetupError::State(problems)) => {
            assert!(!problems.is_empty() && problems.iter().all(|p| !p.is_empty()))
        }
        Err(e) => panic!("state `{text}` rejected as {e:?}"),
        Ok(mut game) => {
            check_game(setup, game.as_ref());
            if let Some(seat) = to_act(game.as_ref()) {
                if let Some(action) = pick_legal(game.as_ref(), &mut Rng::new(text.len() as u64)) {
                    let mut copy = game.boxed_clone();
                    if let Err(e) = copy.play(seat, &action) {
                        panic!("legal `{action}` rejected in the parsed state `{text}`: {e}");
                    }
                    check_game(setup, copy.as_ref());
                }
                game.forfeit(seat, ForfeitKind::Timeout);
                let _ = (game.state(), game.outcome(), game.legal_actions());
            }
        }
    }
}

/// A view string: no panic in the view parser; what parses prints back to a view that
/// parses to the same text; the built-in agents answer `go` from it.
pub fn check_view_text(setup: Setup, seat: Seat, text: &str) {
    if text.contains(['\n', '\r']) {
        return;
    }
    match setup.game {
        GameId::PegChow | GameId::Telka => {}
        GameId::IDoubtIt => {
            if let Ok(pos) = idt_state::parse(text, setup.variant(), true) {
                let viewer = side_of(seat);
                let printed = print_idt_view(&pos, viewer);
                if let Ok(again) = idt_state::parse(&printed, setup.variant(), true) {
                    assert_eq!(print_idt_view(&again, viewer), printed);
                }
            }
        }
        GameId::MultiChess => {
            if let Ok((pos, seen)) = multi_state::parse(text, setup.seats(), true) {
                let printed = multi_state::print(&pos, Some((pos.to_move, seen.as_slice())));
                let (again, seen) = multi_state::parse(&printed, setup.seats(), true).unwrap_or_else(|e| {
                    panic!("`{text}` printed as `{printed}`, which does not parse: {e:?}")
                });
                assert_eq!(
                    multi_state::print(&again, Some((pos.to_move, seen.as_slice()))),
                    printed
                );
            }
        }
    }
    let script = format!(
        "protocol 1\nnewgame game {} seat {seat} seats {} options {}\nview {text}\ngo move movetime 10\nquit\n",
        setup.game,
        setup.seats(),
        setup.start().options()
    );
    check_bots(&script, 1);
}

/// The built-in agents run a script of referee lines without panicking, answering
/// each `go` before `quit` with one `bestmove`.
pub fn check_bots(script: &str, seed: u64) {
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
        assert_eq!(
            out.lines().filter(|l| l.starts_with("bestmove ")).count(),
            goes,
            "{out}"
        );
    }
}

// ---- agent lines ----

/// One line of either direction of the agent protocol.
pub fn check_agent_line(line: &str) {
    match FromAgent::parse(line) {
        FromAgent::BestMove(a) => assert!(!a.contains(char::is_whitespace)),
        FromAgent::IdName(s) | FromAgent::IdAuthor(s) => assert_eq!(s.trim(), s),
        _ => {}
    }
    let _ = AgentInput::parse(line);
}

// ---- controller ----

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

/// An `error` line: `error <kind> <message>`, on one line.
pub fn check_error_line(line: &str) {
    assert!(!line.contains('\n'));
    let mut words = line.splitn(3, ' ');
    assert_eq!(words.next(), Some("error"), "`{line}`");
    assert!(
        ERROR_KINDS.contains(&words.next().unwrap_or("")),
        "`{line}`: unknown error kind"
    );
    assert!(!words.next().unwrap_or("").is_empty(), "`{line}`: no message");
}

/// A controller whose `record`/`load` files stay in a scratch directory.
pub struct Session {
    pub controller: Controller,
    dir: std::path::PathBuf,
}

impl Session {
    pub fn new(dir: &Path) -> Session {
        Session {
            controller: Controller::new(),
            dir: dir.to_path_buf(),
        }
    }

    fn path(&self, name: &str) -> String {
        self.dir.join(name).to_string_lossy().into_owned()
    }

    fn snapshot(&mut self) -> Vec<String> {
        let mut out = Vec::new();
        for command in ["state", "turn", "result", "legal"] {
            let a = self.controller.execute(command);
            out.extend(a.lines);
            out.push(a.last);
        }
        out
    }

    fn query(&mut self, line: &str) -> Option<String> {
        let a = self.controller.execute(line);
        (a.last == "ok").then(|| a.lines.concat())
    }

    /// Runs one line: `!N` plays the N-th legal action, `!r` records and loads back,
    /// anything else is a command (`record`/`load` paths are replaced by scratch files).
    pub fn line(&mut self, line: &str) {
        if let Some(n) = line.strip_prefix('!').and_then(|n| n.parse::<usize>().ok()) {
            let (Some(turn), Some(legal)) = (self.query("turn"), self.query("legal")) else {
                return;
            };
            let Some(seat) = turn.split(' ').nth(1).filter(|s| *s != "none") else {
                return;
            };
            let legal: Vec<&str> = legal.split(' ').filter(|a| !a.is_empty()).collect();
            if let Some(action) = legal.get(n % legal.len().max(1)) {
                let play = format!("play {seat} {action}");
                assert!(self.run(&play), "`{play}` of the legal list rejected");
            }
            return;
        }
        if line == "!r" {
            let path = self.path("game.jsonl");
            let state = self.query("state");
            if self.run(&format!("record {path}")) {
                assert!(
                    self.run(&format!("load {path}")),
                    "a record the controller wrote does not load"
                );
                assert_eq!(self.query("state"), state);
            }
            return;
        }
        let line = match Command::parse(line) {
            Ok(Command::Record(_)) => format!("record {}", self.path("raw.jsonl")),
            Ok(Command::Load(_)) => format!("load {}", self.path("raw.jsonl")),
            _ => line.to_string(),
        };
        self.run(&line);
    }

    /// Executes a line and checks the answer; a rejected command changes nothing.
    fn run(&mut self, line: &str) -> bool {
        let before = self.snapshot();
        let answer = self.controller.execute(line);
        for l in &answer.lines {
            assert!(
                !l.contains('\n') && l != "ok" && !l.starts_with("error "),
                "`{line}`: data line `{l}`"
            );
        }
        assert_eq!(answer.quit, Command::parse(line) == Ok(Command::Quit));
        if answer.last == "ok" {
            return true;
        }
        check_error_line(&answer.last);
        assert!(answer.lines.is_empty());
        assert_eq!(
            self.snapshot(),
            before,
            "`{line}` was rejected ({}) but changed something",
            answer.last
        );
        false
    }
}

// ---- records ----

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

/// A valid record of `plies` random plies of `setup` (through the controller), and
/// the state it ends in.
pub fn valid_record(dir: &Path, setup: Setup, seed: u64, plies: usize) -> (Vec<u8>, String) {
    let mut c = Controller::new();
    assert_eq!(
        c.execute(&format!("new {} {}", setup.game, setup.options)).last,
        "ok"
    );
    let mut game = setup.start();
    let mut rng = Rng::new(seed);
    for _ in 0..plies {
        let Some(seat) = to_act(game.as_ref()) else { break };
        if rng.below(30) == 0 {
            game.forfeit(seat, ForfeitKind::Resign);
            assert_eq!(c.execute(&format!("resign {seat}")).last, "ok");
            continue;
        }
        let Some(action) = pick_legal(game.as_ref(), &mut rng) else {
            break;
        };
        game.play(seat, &action).expect("legal");
        assert_eq!(c.execute(&format!("play {seat} {action}")).last, "ok");
    }
    let path = dir.join("valid.jsonl");
    assert_eq!(c.execute(&format!("record {}", path.display())).last, "ok");
    (std::fs::read(&path).expect("record"), game.state())
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

/// Any bytes given to `record::replay`: a clean error, or a record that writes back
/// and replays to the same game, and whose seat histories can be derived.
pub fn check_record(bytes: &[u8]) {
    match record::replay(bytes) {
        Err(e) => assert!(!e.message.is_empty()),
        Ok(replay) => {
            assert!(replay.complete_len as usize <= bytes.len());
            let again =
                record::replay(&rewrite(&replay)[..]).expect("a replayed record written back replays");
            assert_eq!(again.lines, replay.lines);
            assert_eq!(again.game.state(), replay.game.state());
            assert_eq!(record::seat_histories(&replay).len(), replay.game.seat_count());
        }
    }
}

// ---- time controls and options ----

/// An accepted control prints as text that reads back as the same control.
pub fn check_control(parsed: Result<TimeControl, TimeControlError>) {
    if let Ok(tc) = parsed {
        let printed = tc.to_string();
        assert_eq!(
            TimeControl::parse_recorded(&printed),
            Ok(tc),
            "`{printed}` does not read back"
        );
        let mut clock = SeatClock::new(tc);
        for used in [0, 1, 10_000, 3_600_000] {
            let _ = (clock.go(), clock.budget(), clock.left());
            clock.charge(
                std::time::Duration::from_millis(used),
                std::time::Duration::from_millis(50),
            );
        }
    }
}

/// Option words: what is accepted prints back to the same options, and every game
/// either rejects them as an option error or accepts its options in force back.
pub fn check_options(words: &[&str]) {
    let Ok(options) = Options::parse(words.iter().copied()) else {
        return;
    };
    assert_eq!(options.iter().count(), words.len());
    if words.iter().all(|w| !w.contains(char::is_whitespace)) {
        assert_eq!(
            Options::parse(options.to_string().split_whitespace()),
            Ok(options.clone())
        );
    }
    for game in GameId::ALL {
        match game.create(&options, None) {
            Err(SetupError::Option(_)) => {}
            Err(e) => panic!("options {options} rejected as {e:?}"),
            Ok(g) => assert_eq!(
                game.create(&g.options(), None)
                    .expect("options in force")
                    .options(),
                g.options()
            ),
        }
    }
}
