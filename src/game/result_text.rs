//! A result in words, for people: who won, how, and every place when there are
//! more than two sides. (Agents and records get the `places … reason …` form.)

use super::{EndReason, ForfeitKind, GameId, Outcome, Seat};

impl GameId {
    /// How a seat of this game wins outright (`EndReason::Win`).
    pub fn win_phrase(self) -> &'static str {
        match self {
            GameId::PegChow => "by filling the target home",
            GameId::Telka => "by bringing three counters into the target home",
            GameId::IDoubtIt => "by capturing the king",
            GameId::MultiChess => "by capturing the last king",
        }
    }
}

impl ForfeitKind {
    /// What the forfeiting seat did, after "seat N".
    fn phrase(self) -> &'static str {
        match self {
            ForfeitKind::Timeout => "lost on time",
            ForfeitKind::Crash => "crashed",
            ForfeitKind::Illegal => "played an illegal action",
            ForfeitKind::Protocol => "broke the protocol",
            ForfeitKind::Resign => "resigned",
        }
    }
}

/// `Blue (seat 1)`, or for several seats `Blue+Green (seats 1 and 4)`.
fn side(seats: &[Seat], labels: &[String]) -> String {
    let label = |s: &Seat| {
        labels
            .get(s.index())
            .cloned()
            .unwrap_or_else(|| format!("seat {s}"))
    };
    let names: Vec<String> = seats.iter().map(label).collect();
    let numbers: Vec<String> = seats.iter().map(Seat::to_string).collect();
    match numbers.as_slice() {
        [one] => format!("{} (seat {one})", names[0]),
        [init @ .., last] => format!("{} (seats {} and {last})", names.join("+"), init.join(", ")),
        [] => "nobody".to_string(),
    }
}

impl Outcome {
    /// The result in words, e.g. `Blue+Green (seats 1 and 4) win by filling the target
    /// home`; `labels` are the seats' labels, `game` says how its wins are made.
    pub fn describe(&self, game: GameId, labels: &[String]) -> String {
        let firsts: Vec<Seat> = self.seats_placed(1);
        let verb = if firsts.len() == 1 { "wins" } else { "win" };
        let winners = side(&firsts, labels);
        let everybody = firsts.len() == self.places.len();
        let mut text = match &self.reason {
            EndReason::Win => format!("{winners} {verb} {}", game.win_phrase()),
            EndReason::LastStanding => format!("{winners} {verb} as the last side standing"),
            EndReason::MaxPlies if everybody => "drawn: the ply limit was reached".to_string(),
            EndReason::MaxPlies => format!("{winners} share first place at the ply limit"),
            EndReason::Forfeit { seat, kind } => {
                format!("{winners} {verb}: {} {}", side(&[*seat], labels), kind.phrase())
            }
        };
        let last = self.places.iter().copied().max().unwrap_or(1);
        if last > 2 {
            let places: Vec<String> = (1..=last)
                .map(|p| format!("{} {}", ordinal(p), side(&self.seats_placed(p), labels)))
                .collect();
            text.push_str("; places: ");
            text.push_str(&places.join(", "));
        }
        text
    }

    /// The seats in place `place`, in seat order.
    fn seats_placed(&self, place: u8) -> Vec<Seat> {
        (0..self.places.len())
            .filter(|&i| self.places[i] == place)
            .map(Seat::from_index)
            .collect()
    }
}

/// `1st`, `2nd`, `3rd`, `4th`…
pub fn ordinal(n: u8) -> String {
    let suffix = match (n % 10, n % 100) {
        (_, 11..=13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    };
    format!("{n}{suffix}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(names: &[&str]) -> Vec<String> {
        names.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_team_win_names_both_seats() {
        let o = Outcome {
            places: vec![1, 2, 2, 1],
            reason: EndReason::Win,
        };
        assert_eq!(
            o.describe(GameId::PegChow, &labels(&["Blue", "Yellow", "Red", "Green"])),
            "Blue+Green (seats 1 and 4) win by filling the target home"
        );
    }

    #[test]
    fn forfeits_draws_and_places_read_as_words() {
        let two = labels(&["White", "Black"]);
        let o = Outcome {
            places: vec![1, 2],
            reason: EndReason::Forfeit {
                seat: Seat::from_index(1),
                kind: ForfeitKind::Timeout,
            },
        };
        assert_eq!(
            o.describe(GameId::IDoubtIt, &two),
            "White (seat 1) wins: Black (seat 2) lost on time"
        );
        let o = Outcome::draw(2, EndReason::MaxPlies);
        assert_eq!(
            o.describe(GameId::IDoubtIt, &two),
            "drawn: the ply limit was reached"
        );
        let o = Outcome {
            places: vec![2, 3, 1],
            reason: EndReason::LastStanding,
        };
        assert_eq!(
            o.describe(GameId::MultiChess, &labels(&["Area1", "Area2", "Area3"])),
            "Area3 (seat 3) wins as the last side standing; places: 1st Area3 (seat 3), 2nd Area1 (seat 1), 3rd Area2 (seat 2)"
        );
        assert_eq!(ordinal(11), "11th");
        assert_eq!(ordinal(22), "22nd");
    }
}
