//! The game abstraction every game plugs into, and the registry of games.
//!
//! A game is typed on the inside (its own square, action, view and state types, see
//! `parker`) and talks text at this boundary, because the referee loop, the records
//! and the controller protocol are the same for every game. Information hiding is
//! structural: the only thing about a game that may reach an agent is a [`View`] or a
//! [`SeatEvent`], and both are built only inside the crate (their constructors are
//! `pub(crate)`), where only the games build them, each for one seat.

pub mod geometry;
pub mod idoubtit;
pub mod multichess;
pub mod options;
pub mod parker;
mod rejection;
mod result_text;

pub use rejection::{ByGame, IllegalReason, MalformedReason, Rejection};
pub use result_text::ordinal;

use std::fmt;

pub use options::Options;

/// A seat at the table, numbered from 1 as everywhere in the user-facing surface.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Seat(u8);

impl Seat {
    /// The seat with 1-based number `n`; `None` for 0.
    pub fn new(n: usize) -> Option<Seat> {
        u8::try_from(n).ok().filter(|&n| n >= 1).map(Seat)
    }

    /// The 1-based seat number.
    pub fn number(self) -> usize {
        self.0 as usize
    }

    /// The 0-based index, for per-seat vectors.
    pub fn index(self) -> usize {
        self.0 as usize - 1
    }

    /// The seat at 0-based index `i`.
    pub fn from_index(i: usize) -> Seat {
        Seat(u8::try_from(i + 1).expect("at most 255 seats"))
    }

    /// All seats of a table of `n`.
    pub fn all(n: usize) -> impl Iterator<Item = Seat> {
        (0..n).map(Seat::from_index)
    }
}

/// Records write a seat as its 1-based number, as they did when they held a bare
/// number, so the bytes (and hence the hash chain) are unchanged.
impl serde::Serialize for Seat {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u64(u64::from(self.0))
    }
}

/// Reading a record refuses seat 0 (and numbers past the last possible seat) here,
/// so every `Seat` a record line holds is one.
impl<'de> serde::Deserialize<'de> for Seat {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Seat, D::Error> {
        let n = u64::deserialize(d)?;
        usize::try_from(n).ok().and_then(Seat::new).ok_or_else(|| {
            serde::de::Error::custom(format!(
                "seat {n} does not exist: seats are numbered from 1 to 255"
            ))
        })
    }
}

/// A seat the game does not have.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("seat {seat} does not exist: the game has {seats} seats")]
pub struct NoSuchSeat {
    /// The seat asked for.
    pub seat: Seat,
    /// How many seats the game has.
    pub seats: usize,
}

impl Seat {
    /// `self` when a game of `seats` seats has it: the one range check for seats
    /// that come from users and records (a `Seat` is never 0, so only the top end).
    pub fn at_table(self, seats: usize) -> Result<Seat, NoSuchSeat> {
        if self.number() > seats {
            return Err(NoSuchSeat { seat: self, seats });
        }
        Ok(self)
    }
}

impl fmt::Display for Seat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

impl std::str::FromStr for Seat {
    type Err = String;
    fn from_str(s: &str) -> Result<Seat, String> {
        // Digits only, no sign or leading zero: one spelling per seat.
        let canonical = !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) && !s.starts_with('0');
        canonical
            .then(|| s.parse::<usize>().ok())
            .flatten()
            .and_then(Seat::new)
            .ok_or_else(|| format!("bad seat `{s}`: expected a number from 1"))
    }
}

/// What kind of action the seat to act is asked for (the `go` line names it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ActionKind {
    /// A placement (I-Doubt-It's placement phase).
    Place,
    /// An ordinary move (or drop).
    Move,
    /// An answer to a king-capture announcement: `doubt` or `accept`.
    Respond,
}

impl ActionKind {
    /// The protocol word for this kind.
    pub fn as_str(self) -> &'static str {
        match self {
            ActionKind::Place => "place",
            ActionKind::Move => "move",
            ActionKind::Respond => "respond",
        }
    }
}

impl fmt::Display for ActionKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Whose turn it is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Turn {
    /// `seat` must submit an action of `kind`.
    Act {
        /// The seat to act.
        seat: Seat,
        /// The kind of action expected.
        kind: ActionKind,
    },
    /// The game is over.
    Over,
}

impl Turn {
    /// The turn check every game's `play` starts with: `Ok` when `seat` is to act,
    /// else why not; `whose` says whose turn it is in the game's words, and is only
    /// called (it formats) for a rejection.
    pub fn check(self, seat: Seat, whose: impl FnOnce(Seat) -> String) -> Result<(), Rejection> {
        match self {
            Turn::Over => Err(Rejection::GameOver),
            Turn::Act { seat: to_act, .. } if to_act != seat => Err(Rejection::NotYourTurn {
                seat,
                turn: whose(to_act),
            }),
            Turn::Act { .. } => Ok(()),
        }
    }
}

/// Why a seat forfeited; the four kinds are distinct in records and results.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ForfeitKind {
    /// The seat's clock ran out (or it never finished the handshake in time).
    Timeout,
    /// The agent process exited, or closed its output.
    Crash,
    /// The agent submitted an action the rules reject.
    Illegal,
    /// The agent broke the protocol (garbage where an answer was due, an over-long line).
    Protocol,
    /// The seat resigned (controller or play-by-mail).
    Resign,
}

impl ForfeitKind {
    /// The word used in records and on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            ForfeitKind::Timeout => "timeout",
            ForfeitKind::Crash => "crash",
            ForfeitKind::Illegal => "illegal",
            ForfeitKind::Protocol => "protocol",
            ForfeitKind::Resign => "resign",
        }
    }

    /// Parses the record word.
    pub fn parse(s: &str) -> Option<ForfeitKind> {
        [
            ForfeitKind::Timeout,
            ForfeitKind::Crash,
            ForfeitKind::Illegal,
            ForfeitKind::Protocol,
            ForfeitKind::Resign,
        ]
        .into_iter()
        .find(|k| k.as_str() == s)
    }
}

impl fmt::Display for ForfeitKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How a finished game ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EndReason {
    /// A seat (or team) reached its goal.
    Win,
    /// The `max-plies` limit was reached (R-B8, R-D8, R-M6).
    MaxPlies,
    /// Only one side is left after the others forfeited (R-F1).
    LastStanding,
    /// The game ended because `seat` forfeited for `kind`.
    Forfeit {
        /// The seat that forfeited.
        seat: Seat,
        /// Why.
        kind: ForfeitKind,
    },
}

impl fmt::Display for EndReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EndReason::Win => f.write_str("win"),
            EndReason::MaxPlies => f.write_str("max-plies"),
            EndReason::LastStanding => f.write_str("last-standing"),
            EndReason::Forfeit { seat, kind } => write!(f, "forfeit {seat} {kind}"),
        }
    }
}

/// The result of a finished game: a place per seat (1 is best; places are dense, so
/// seats sharing a place are followed by the next number).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outcome {
    /// `places[i]` is the place of seat `i + 1`.
    pub places: Vec<u8>,
    /// How the game ended.
    pub reason: EndReason,
}

impl Outcome {
    /// A game won by `winners` (a seat, or a team), everybody else sharing second place.
    pub fn win(seats: usize, winners: &[Seat], reason: EndReason) -> Outcome {
        let places = Seat::all(seats)
            .map(|s| if winners.contains(&s) { 1 } else { 2 })
            .collect();
        Outcome { places, reason }
    }

    /// A draw: every seat shares first place.
    pub fn draw(seats: usize, reason: EndReason) -> Outcome {
        Outcome {
            places: vec![1; seats],
            reason,
        }
    }

    /// The seats in first place, when that is not everybody.
    pub fn winners(&self) -> Vec<Seat> {
        if self.places.iter().all(|&p| p == 1) {
            return Vec::new();
        }
        (0..self.places.len())
            .filter(|&i| self.places[i] == 1)
            .map(Seat::from_index)
            .collect()
    }

    /// The protocol form: `places 1 2 reason win` (see protocol.md).
    pub fn protocol_text(&self) -> String {
        let places: Vec<String> = self.places.iter().map(u8::to_string).collect();
        format!("places {} reason {}", places.join(" "), self.reason)
    }
}

/// A seat's complete current view, one line; only a game can build one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct View {
    seat: Seat,
    text: String,
}

impl View {
    /// Built by a game's view function, which reads hidden fields only through the
    /// visibility rule of that game.
    pub(crate) fn new(seat: Seat, text: String) -> View {
        debug_assert!(!text.contains('\n'));
        View { seat, text }
    }

    /// The seat this view belongs to.
    pub fn seat(&self) -> Seat {
        self.seat
    }

    /// The one-line text sent after `view `.
    pub fn text(&self) -> &str {
        &self.text
    }
}

/// One thing a seat is told happened; only a game can build one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SeatEvent {
    text: String,
}

impl SeatEvent {
    /// Built by a game for one seat's audience.
    pub(crate) fn new(text: String) -> SeatEvent {
        debug_assert!(!text.contains('\n'));
        SeatEvent { text }
    }

    /// The text sent after `event `.
    pub fn text(&self) -> &str {
        &self.text
    }
}

/// What one accepted action (or forfeit) did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Played {
    /// The action as the referee applied it, when it differs from the one submitted
    /// (a multi-player chess move stopped by an unseen piece, R-M4).
    pub taken: Option<String>,
    /// Everything that happened, omniscient (records and the controller).
    pub events: Vec<String>,
    /// What each seat is told, indexed by seat index.
    pub seat_events: Vec<Vec<SeatEvent>>,
}

/// What one accepted action did, without what each seat is told: the part of
/// [`Played`] a record holds.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Omniscient {
    /// See [`Played::taken`].
    pub taken: Option<String>,
    /// See [`Played::events`].
    pub events: Vec<String>,
}

/// A game in progress. Object safe, so the referee loop is the same for every game.
pub trait Game: Send + fmt::Debug {
    /// Which game this is.
    fn id(&self) -> GameId;
    /// The options in force, defaults filled in (records store these).
    fn options(&self) -> Options;
    /// Number of seats.
    fn seat_count(&self) -> usize;
    /// A short name for a seat's side, e.g. `Blue` or `Blue+Green`.
    fn seat_label(&self, seat: Seat) -> String;
    /// The other seats on `seat`'s team (4-player Peg Chow and Telka); none where
    /// every seat plays for itself.
    fn partners(&self, _seat: Seat) -> Vec<Seat> {
        Vec::new()
    }
    /// Whose turn it is and what kind of action is expected.
    fn turn(&self) -> Turn;
    /// Actions made so far, of every kind (records number their lines by it).
    fn plies(&self) -> u32;
    /// Every action the seat to act may submit now, in a stable order.
    fn legal_actions(&self) -> Vec<String>;
    /// The legal actions a doubt would find correct (omniscient; the same as
    /// [`Game::legal_actions`] in games without bluffing).
    fn correct_actions(&self) -> Vec<String> {
        self.legal_actions()
    }
    /// Checks and applies an action of `seat`; a rejection changes nothing.
    fn play(&mut self, seat: Seat, action: &str) -> Result<Played, Rejection>;
    /// [`Game::play`] without building what each seat is told, which a replay of a
    /// record never uses; games override it when that saves work.
    fn play_omniscient(&mut self, seat: Seat, action: &str) -> Result<Omniscient, Rejection> {
        self.play(seat, action).map(|p| Omniscient {
            taken: p.taken,
            events: p.events,
        })
    }
    /// A forced move the referee makes itself, without asking the seat (a forced
    /// `pass`, R-B5, R-M6); `None` when the seat to act has a real choice.
    fn forced_action(&self) -> Option<String>;
    /// Takes `seat` out of the game for `kind` (R-F1): the game ends or goes on. A
    /// seat that [`Game::is_out`] already, or any seat once the game is over, cannot
    /// forfeit: nothing changes and nothing is told (an empty [`Played`]), so callers
    /// check first and refuse.
    fn forfeit(&mut self, seat: Seat, kind: ForfeitKind) -> Played;
    /// Whether `seat` is out of a game that went on without it: it forfeited with
    /// three or more independent sides (R-F1), or it was eliminated (R-M5). The seats
    /// of a finished game are not out; [`Game::outcome`] says it is over.
    fn is_out(&self, seat: Seat) -> bool;
    /// Whether a forfeit of `seat` would change the game (R-F1): not once it is over,
    /// nor for a seat already out of it. Every mode asks this before it records a
    /// forfeit, and `verify` refuses a record holding one that changes nothing.
    fn forfeitable(&self, seat: Seat) -> Result<(), Unforfeitable> {
        if self.outcome().is_some() {
            Err(Unforfeitable::Over)
        } else if self.is_out(seat) {
            Err(Unforfeitable::Out)
        } else {
            Ok(())
        }
    }
    /// What `seat` may know right now, on one line.
    fn view(&self, seat: Seat) -> View;
    /// The omniscient state on one line; [`GameId::create`] accepts it back.
    fn state(&self) -> String;
    /// The result, once the game is over.
    fn outcome(&self) -> Option<Outcome>;
    /// A text board diagram, omniscient or as `seat` sees it.
    fn diagram(&self, seat: Option<Seat>) -> String;
    /// The hidden part of the game, canonically encoded, at the point where a referee
    /// should commit to it (I-Doubt-It: when placement ends); `None` elsewhere.
    fn commitment_data(&self) -> Option<String> {
        None
    }
    /// A copy behind a new box (replays, lookahead by agents).
    fn boxed_clone(&self) -> Box<dyn Game>;
}

/// Why a game could not be set up.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SetupError {
    /// No such game.
    #[error(
        "unknown game `{name}` (games: pegchow, telka, idoubtit, multichess){hint}",
        name = .0,
        hint = crate::text::did_you_mean(.0, GameId::ALL.map(GameId::as_str))
    )]
    UnknownGame(String),
    /// An option is unknown or has a bad value.
    #[error("option {0}")]
    Option(String),
    /// A state string is malformed or inconsistent; every problem is listed.
    #[error("bad state string: {}", .0.join("; "))]
    State(Vec<String>),
}

/// Why a seat's forfeit would change nothing ([`Game::forfeitable`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unforfeitable {
    /// The game is over.
    Over,
    /// The seat is out of the game already.
    Out,
}

/// The highest ply count a state string may start a game at.
pub const MAX_START_PLY: u32 = u32::MAX / 2;

/// Parses a state string's ply or move counter, at most [`MAX_START_PLY`].
///
/// Views are held to this too: a bot's search counts plies on from the view it was
/// sent, and a counter near `u32::MAX` in a mangled view must not overflow there.
pub fn parse_counter(text: &str) -> Result<u32, String> {
    match text.parse::<u32>() {
        Ok(n) if n <= MAX_START_PLY => Ok(n),
        _ => Err(format!("`{text}`: expected an integer from 0 to {MAX_START_PLY}")),
    }
}

/// The games `referee` knows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GameId {
    /// Peg Chow (RULES.md §2).
    PegChow,
    /// Telka (RULES.md §2).
    Telka,
    /// I-Doubt-It TelnChes (RULES.md §3).
    IDoubtIt,
    /// Multi-player TelnChes (RULES.md §4).
    MultiChess,
}

impl GameId {
    /// Every game, in the order help texts list them.
    pub const ALL: [GameId; 4] = [
        GameId::PegChow,
        GameId::Telka,
        GameId::IDoubtIt,
        GameId::MultiChess,
    ];

    /// The id used on the command line, in records and on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            GameId::PegChow => "pegchow",
            GameId::Telka => "telka",
            GameId::IDoubtIt => "idoubtit",
            GameId::MultiChess => "multichess",
        }
    }

    /// Looks a game up by its id.
    pub fn parse(s: &str) -> Result<GameId, SetupError> {
        GameId::ALL
            .into_iter()
            .find(|g| g.as_str() == s)
            .ok_or_else(|| SetupError::UnknownGame(s.to_string()))
    }

    /// Starts a game with `options`, from the start position or from `state`.
    pub fn create(self, options: &Options, state: Option<&str>) -> Result<Box<dyn Game>, SetupError> {
        let game = match self {
            GameId::PegChow | GameId::Telka => parker::create(self, options, state),
            GameId::IDoubtIt => idoubtit::create(options, state),
            GameId::MultiChess => multichess::create(options, state),
        }?;
        // A record numbers every ply it holds; a counter started this high could not
        // number the plies still to come (RULES.md §1, "State strings").
        if game.plies() > MAX_START_PLY {
            return Err(SetupError::State(vec![format!(
                "ply counter {}: at most {MAX_START_PLY}, so that every ply still to come can be numbered",
                game.plies()
            )]));
        }
        Ok(game)
    }
}

impl fmt::Display for GameId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Appends `n` in decimal. State strings are printed once per action, for every view;
/// going through the formatting machinery for their small counts cost more than the
/// board itself.
pub fn push_decimal(s: &mut String, n: impl Into<u64>) {
    let mut n: u64 = n.into();
    if n < 10 {
        // Nearly every number in a state string: a run of empty squares.
        s.push(char::from(b'0' + n as u8));
        return;
    }
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    while n > 0 {
        at -= 1;
        digits[at] = b'0' + (n % 10) as u8;
        n /= 10;
    }
    digits[at..].iter().for_each(|&d| s.push(char::from(d)));
}

#[cfg(test)]
mod tests {
    use super::Seat;

    #[test]
    fn a_seat_is_written_as_its_number() {
        let seat = Seat::new(3).unwrap();
        assert_eq!(serde_json::to_string(&seat).unwrap(), "3");
        assert_eq!(serde_json::from_str::<Seat>("3").unwrap(), seat);
    }

    #[test]
    fn reading_seat_0_says_seats_start_at_1() {
        let e = serde_json::from_str::<Seat>("0").unwrap_err().to_string();
        assert!(e.contains("seat 0 does not exist"), "{e}");
        assert!(serde_json::from_str::<Seat>("256").is_err());
        assert!(serde_json::from_str::<Seat>("-1").is_err());
    }
}
