//! I-Doubt-It TelnChes (RULES.md §3, R-D1…R-D10): chess or shogi where nobody sees the
//! other side's types, any well-formed move is accepted, and the opponent may doubt.
//!
//! The hidden part of the game is the pieces' types. Everything a seat is sent goes
//! through [`IdtGame::sees`], the one function that applies R-D9.

pub mod board;
pub mod notation;
pub mod rules;
pub mod state;

use board::{BySide, Kind, Piece, Side};
use notation::Action;
use rules::{Pending, Phase, Position, Variant};
use state::Lens;

use super::{
    ActionKind, ByGame, EndReason, ForfeitKind, Game, GameId, Options, Outcome, Played, Rejection, Seat,
    SeatEvent, SetupError, Turn, View,
};

/// Option keys of this game.
const KEYS: [&str; 2] = ["variant", "max-plies"];

/// Builds an I-Doubt-It game from options and an optional state string.
pub fn create(options: &Options, state: Option<&str>) -> Result<Box<dyn Game>, SetupError> {
    options.expect_only(&KEYS)?;
    let (variant, max_plies) = parse_options(options)?;
    let pos = match state {
        None => Position::new(variant),
        Some(text) => state::parse(text, variant, false).map_err(SetupError::State)?,
    };
    let mut game = IdtGame {
        variant,
        max_plies,
        pos,
        forfeit: None,
    };
    // A state already at the ply limit is drawn, as the action reaching it would be.
    game.check_draw();
    Ok(Box::new(game))
}

/// Reads `variant` (0..15, default 0) and `max-plies` (default 500, R-D8).
pub fn parse_options(options: &Options) -> Result<(Variant, u32), SetupError> {
    let number = options.int("variant", 0, 0..=15)?;
    let variant = Variant::from_number(number).expect("range checked");
    let max_plies = options.int("max-plies", 500, 1..=1_000_000)?;
    Ok((variant, max_plies))
}

/// An I-Doubt-It game in progress.
#[derive(Clone, Debug)]
pub struct IdtGame {
    variant: Variant,
    max_plies: u32,
    pos: Position,
    /// The result of a forfeit (R-F1: with two seats, the other side wins).
    forfeit: Option<Outcome>,
}

/// The seat of a side: White is seat 1 (R-D2).
fn seat_of(side: Side) -> Seat {
    Seat::from_index(side.index())
}

/// The side of a seat.
fn side_of(seat: Seat) -> Side {
    if seat.index() == 0 {
        Side::White
    } else {
        Side::Black
    }
}

impl IdtGame {
    /// The position, hidden parts included.
    pub fn position(&self) -> &Position {
        &self.pos
    }

    /// R-D9: whether `viewer` sees the type of `piece`. `pending_capture` marks a
    /// piece whose capture has not stood yet (its type is revealed only when it does).
    pub fn sees(variant: Variant, viewer: Side, piece: &Piece, pending_capture: bool) -> bool {
        // With s = 1 a seat sees exactly what its opponent would see with s = 0.
        let q = if variant.swapped {
            viewer.opponent()
        } else {
            viewer
        };
        let owns = piece.owner == q && !pending_capture;
        match variant.drops {
            0 => owns,
            1 => owns || piece.revealed[q],
            2 => piece.origin == q,
            _ => owns || piece.revealed.white || piece.revealed.black,
        }
    }

    /// The view string of `side`.
    fn view_text(&self, side: Side) -> String {
        let variant = self.variant;
        let sees = move |p: &Piece, pending: bool| IdtGame::sees(variant, side, p, pending);
        state::print(&self.pos, Lens::Seat(side, &sees))
    }

    /// Makes the opponent's last action stand: its capture reveals the captured type
    /// (R-D9) now that the doubt window has closed.
    fn stand(&mut self) {
        if let Some((side, slot)) = state::pending_capture(&self.pos) {
            self.pos.benches[side][slot].revealed[side] = true;
        }
        self.pos.pending = None;
    }

    /// Whether the play has reached the ply limit (R-D8); a king capture awaiting its
    /// answer is answered first.
    fn check_draw(&mut self) {
        if self.pos.phase == Phase::Play && self.pos.plies >= self.max_plies {
            self.pos.phase = Phase::Drawn;
        }
    }

    /// Applies a well-formed action of `side`; returns the events as (text for the
    /// record, text for each seat). One arm per kind of action (R-D6…R-D9), in the
    /// order the rules list them, so that who is told what reads in one place.
    fn act(&mut self, side: Side, action: Action) -> Vec<Told> {
        let mut told = Vec::new();
        match action {
            Action::Place { kind, to } => {
                self.pos.apply_placement(side, kind, to);
                let piece = self.pos.at(to).expect("just placed");
                told.push(Told::per_seat(format!("place {side} {action}"), |viewer| {
                    let k = if IdtGame::sees(self.variant, viewer, &piece, false) {
                        kind
                    } else {
                        Kind::Unknown
                    };
                    format!("place {side} {}@{to}", k.letter())
                }));
                let next = side.opponent();
                if self.pos.supply.iter().all(Vec::is_empty) {
                    self.pos.phase = Phase::Play;
                    self.pos.to_act = Side::White;
                    // A state set up in placement may already count the limit's
                    // actions (R-D8): drawn now, or a move would take the counter
                    // past what a state string may hold.
                    self.check_draw();
                } else if !self.pos.supply[self.variant.placed_for(next)].is_empty() {
                    self.pos.to_act = next;
                }
            }
            Action::Doubt => {
                let pending = self.pos.pending.clone().expect("well-formed: something to doubt");
                let correct = pending.before.correct(pending.actor, &pending.action).is_ok();
                told.push(Told::same(format!("doubt {side}")));
                self.pos.plies += 1;
                if correct {
                    told.push(Told::same("verdict correct".to_string()));
                    self.stand();
                    self.pos.ep = None;
                    if self.pos.phase == Phase::Respond {
                        self.pos.phase = Phase::Won;
                    }
                    self.pos.to_act = pending.actor;
                } else {
                    told.push(Told::same("verdict incorrect".to_string()));
                    told.push(Told::per_seat(
                        format!("undo {} {}", pending.actor, pending.action),
                        |viewer| {
                            format!(
                                "undo {} {}",
                                pending.actor,
                                state::public_action(&pending.action, pending.actor, viewer)
                            )
                        },
                    ));
                    let plies = self.pos.plies;
                    self.pos = pending.before;
                    self.pos.plies = plies;
                    self.pos.phase = Phase::Play;
                    self.pos.to_act = side;
                    self.pos.ep = None;
                }
                self.check_draw();
            }
            Action::Accept => {
                let actor = self
                    .pos
                    .pending
                    .as_ref()
                    .expect("respond phase has a pending capture")
                    .actor;
                told.push(Told::same(format!("accept {side}")));
                self.stand();
                self.pos.plies += 1;
                self.pos.phase = Phase::Won;
                self.pos.to_act = actor;
            }
            Action::Move { .. } | Action::EnPassant { .. } | Action::Drop { .. } => {
                // Acting without doubting lets the opponent's last action stand (R-D6).
                self.stand();
                let before = self.pos.clone();
                let effect = self.pos.apply_declared(side, &action);
                self.pos.plies += 1;
                self.pos.pending = Some(Box::new(Pending {
                    actor: side,
                    action,
                    before,
                }));
                self.pos.to_act = side.opponent();
                let verb = if matches!(action, Action::Drop { .. }) {
                    "drop"
                } else {
                    "move"
                };
                // `<verb> <side> <action>[ capture <square>]`, the action as each seat
                // is told it; pushed piece by piece, as this is every move's event.
                let event = |action_text: &dyn Fn(&mut String)| {
                    let mut text = String::with_capacity(32);
                    text.push_str(verb);
                    text.push(' ');
                    text.push_str(side.name());
                    text.push(' ');
                    action_text(&mut text);
                    if let Some(sq) = effect.captured_on {
                        text.push_str(" capture ");
                        sq.push_to(&mut text);
                    }
                    text
                };
                told.push(Told::per_seat(event(&|t| action.push_to(t)), |viewer| {
                    event(&|t| state::push_public_action(t, &action, side, viewer))
                }));
                if effect.king {
                    told.push(Told::same(format!("king-captured {}", side.opponent())));
                    self.pos.phase = Phase::Respond;
                } else {
                    self.check_draw();
                }
            }
        }
        told
    }
}

/// One event: what the record says and what each seat is told.
struct Told {
    all: String,
    seats: BySide<String>,
}

impl Told {
    /// An event every seat is told as it is.
    fn same(text: String) -> Told {
        Told {
            seats: BySide::both(text.clone()),
            all: text,
        }
    }

    /// An event each seat is told in its own way.
    fn per_seat(all: String, for_seat: impl Fn(Side) -> String) -> Told {
        Told {
            seats: BySide::from_fn(for_seat),
            all,
        }
    }
}

/// Turns events into what `Game::play` returns.
fn played(told: Vec<Told>) -> Played {
    let mut seat_events: BySide<Vec<SeatEvent>> = BySide::default();
    let mut events = Vec::new();
    for t in told {
        events.push(t.all);
        let BySide { white, black } = t.seats;
        seat_events.white.push(SeatEvent::new(white));
        seat_events.black.push(SeatEvent::new(black));
    }
    Played {
        taken: None,
        events,
        // By seat index: White is seat 1 (R-D2), and a `BySide` yields White first.
        seat_events: seat_events.into_iter().collect(),
    }
}

impl Game for IdtGame {
    fn id(&self) -> GameId {
        GameId::IDoubtIt
    }

    fn options(&self) -> Options {
        let mut o = Options::new();
        o.set("variant", self.variant.number());
        o.set("max-plies", self.max_plies);
        o
    }

    fn seat_count(&self) -> usize {
        2
    }

    fn seat_label(&self, seat: Seat) -> String {
        match side_of(seat) {
            Side::White => "White".into(),
            Side::Black => "Black".into(),
        }
    }

    fn turn(&self) -> Turn {
        if self.forfeit.is_some() {
            return Turn::Over;
        }
        let kind = match self.pos.phase {
            Phase::Place => ActionKind::Place,
            Phase::Play => ActionKind::Move,
            Phase::Respond => ActionKind::Respond,
            Phase::Won | Phase::Drawn => return Turn::Over,
        };
        Turn::Act {
            seat: seat_of(self.pos.to_act),
            kind,
        }
    }

    fn plies(&self) -> u32 {
        let army = self.variant.board.army().len() as u32;
        let unplaced: u32 = self.pos.supply.iter().map(|s| s.len() as u32).sum();
        (2 * army).saturating_sub(unplaced).saturating_add(self.pos.plies)
    }

    fn legal_actions(&self) -> Vec<String> {
        if self.forfeit.is_some() {
            return Vec::new();
        }
        self.pos
            .well_formed_actions()
            .iter()
            .map(Action::to_string)
            .collect()
    }

    fn correct_actions(&self) -> Vec<String> {
        if self.forfeit.is_some() {
            return Vec::new();
        }
        self.pos.correct_actions().iter().map(Action::to_string).collect()
    }

    fn play(&mut self, seat: Seat, text: &str) -> Result<Played, Rejection> {
        let to_act_side = self.pos.to_act;
        self.turn()
            .check(seat, |to_act| format!("seat {to_act} ({to_act_side}) is to act"))?;
        let action = notation::parse(text, self.variant.board).map_err(|reason| Rejection::Malformed {
            action: text.to_string(),
            reason: ByGame::IDoubtIt(reason),
        })?;
        let side = side_of(seat);
        self.pos
            .well_formed(side, &action)
            .map_err(|reason| Rejection::Illegal {
                action: text.to_string(),
                reason: ByGame::IDoubtIt(reason),
            })?;
        Ok(played(self.act(side, action)))
    }

    fn forced_action(&self) -> Option<String> {
        None
    }

    fn is_out(&self, _seat: Seat) -> bool {
        // Two sides: a forfeit ends the game, and nobody is ever eliminated.
        false
    }

    fn forfeit(&mut self, seat: Seat, kind: ForfeitKind) -> Played {
        if self.outcome().is_some() {
            return Played::default();
        }
        let winner = seat_of(side_of(seat).opponent());
        self.forfeit = Some(Outcome::win(2, &[winner], EndReason::Forfeit { seat, kind }));
        played(vec![Told::same(format!("forfeit {seat} {kind}"))])
    }

    fn view(&self, seat: Seat) -> View {
        View::new(seat, self.view_text(side_of(seat)))
    }

    fn state(&self) -> String {
        state::print(&self.pos, Lens::All)
    }

    fn outcome(&self) -> Option<Outcome> {
        if let Some(o) = &self.forfeit {
            return Some(o.clone());
        }
        match self.pos.phase {
            Phase::Won => Some(Outcome::win(2, &[seat_of(self.pos.to_act)], EndReason::Win)),
            Phase::Drawn => Some(Outcome::draw(2, EndReason::MaxPlies)),
            _ => None,
        }
    }

    fn diagram(&self, seat: Option<Seat>) -> String {
        let text = match seat {
            Some(s) => self.view_text(side_of(s)),
            None => self.state(),
        };
        diagram(&text, self.variant)
    }

    fn commitment_data(&self) -> Option<String> {
        // Once placement ends, the types are fixed and hidden: commit to them.
        let at_start = self.pos.phase == Phase::Play && self.pos.plies == 0 && self.pos.pending.is_none();
        at_start.then(|| self.state())
    }

    fn boxed_clone(&self) -> Box<dyn Game> {
        Box::new(self.clone())
    }
}

/// A board diagram drawn from a state or view string (so a seat's diagram can only
/// show what its view shows), with its fields in words below: who acts, the benches
/// slot by slot, what is left to place, what may be doubted, and what the marks on
/// the pieces mean (protocol.md §3.2).
fn diagram(text: &str, variant: Variant) -> String {
    let n = variant.board.size();
    let mut parts = text.split(" | ");
    let fields: Vec<&str> = parts.next().unwrap_or("").split(' ').collect();
    let field = |i: usize| fields.get(i).copied().unwrap_or("");
    let mut out = String::new();
    for (row, rank) in field(0).split('/').enumerate() {
        out.push_str(&format!("{:>2} ", n as usize - row));
        for cell in cells(rank) {
            out.push_str(&format!("{cell:>4}"));
        }
        out.push('\n');
    }
    out.push_str("   ");
    for f in 0..n {
        out.push_str(&format!("{:>4}", (b'a' + f) as char));
    }
    out.push('\n');
    out.push_str(&format!(
        "{}; {} play-phase actions\n",
        turn_words(field(1), field(2)),
        field(7)
    ));
    if variant.drops > 0 {
        out.push_str(&format!(
            "benches: White {}; Black {}\n",
            bench_words(field(3)),
            bench_words(field(4))
        ));
    }
    if field(1) == "place" {
        out.push_str(&format!(
            "to place: White {}; Black {}\n",
            supply_words(field(5)),
            supply_words(field(6))
        ));
    }
    if let Some(pending) = parts.next() {
        let (actor, action) = pending.split_once(' ').unwrap_or((pending, ""));
        out.push_str(&format!("may be doubted: {}'s {action}\n", side_name(actor)));
    }
    out.push_str(
        "marks: ' the piece changed sides (captured, then benched or dropped); ^ / _ a capture \
         of it by White / by Black has stood; X / x a piece whose type is not known here\n",
    );
    out
}

/// The cells of one rank of a board field: `.` for an empty square, else the piece
/// token with its marks (`+r`, `P'^`).
fn cells(rank: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut chars = rank.chars().peekable();
    while let Some(c) = chars.next() {
        if let Some(d) = c.to_digit(10) {
            out.extend((0..d).map(|_| ".".to_string()));
            continue;
        }
        let mut cell = String::from(c);
        if c == '+' {
            cell.extend(chars.next());
        }
        while let Some(m) = chars.next_if(|m| "'^_".contains(*m)) {
            cell.push(m);
        }
        out.push(cell);
    }
    out
}

/// `White to play`, `Black to place`, `White has won`, … from the phase and side fields.
fn turn_words(phase: &str, side: &str) -> String {
    let who = side_name(side);
    match phase {
        "place" => format!("{who} to place"),
        "play" => format!("{who} to play"),
        "respond" => format!("{who} to answer the capture of its king"),
        "won" => format!("{who} has won"),
        "drawn" => "drawn".to_string(),
        other => format!("{other} {side}"),
    }
}

/// `White` for `w`, `Black` for `b`.
fn side_name(side: &str) -> &str {
    match side {
        "w" => "White",
        "b" => "Black",
        other => other,
    }
}

/// A bench field as its slots: `1 P'^, 2 B'^_`, or `empty`.
fn bench_words(bench: &str) -> String {
    let slots = cells(bench);
    if bench == "-" || slots.is_empty() {
        return "empty".to_string();
    }
    let words: Vec<String> = slots
        .iter()
        .enumerate()
        .map(|(i, p)| format!("{} {p}", i + 1))
        .collect();
    words.join(", ")
}

/// A supply field: its types, or `nothing`.
fn supply_words(supply: &str) -> &str {
    if supply == "-" || supply.is_empty() {
        "nothing"
    } else {
        supply
    }
}

#[cfg(test)]
mod tests {
    use super::{bench_words, cells, turn_words};

    #[test]
    fn the_diagram_says_its_fields_in_words_and_keeps_the_marks() {
        assert_eq!(cells("2P'^+r_x1"), [".", ".", "P'^", "+r_", "x", "."]);
        assert_eq!(bench_words("P'^B'^_"), "1 P'^, 2 B'^_");
        assert_eq!(bench_words("-"), "empty");
        assert_eq!(
            turn_words("respond", "b"),
            "Black to answer the capture of its king"
        );
        assert_eq!(turn_words("won", "w"), "White has won");
        assert_eq!(turn_words("drawn", "-"), "drawn");
    }
}
