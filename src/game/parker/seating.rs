//! Who commands which colour, and who plays with whom (R-B3).

use super::board::Colour;
use crate::game::Seat;

/// Why a seating is none of those R-B3 allows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SeatingError {
    /// R-B3: two, three or four players.
    #[error("players={players}: expected 2, 3 or 4")]
    Players {
        /// The number asked for.
        players: usize,
    },
    /// R-B3: two colours each only with two players.
    #[error("colors-per-player=2 needs players=2 (R-B3)")]
    TwoColoursNeedTwoPlayers,
    /// R-B3: a player commands one colour or two.
    #[error("colors-per-player={colours}: expected 1 or 2")]
    ColoursPerPlayer {
        /// The number asked for.
        colours: usize,
    },
}

/// The seating of one Peg Chow / Telka game.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Seating {
    players: usize,
    colours_per_player: usize,
}

impl Seating {
    /// A seating of `players` seats; `colours_per_player` is 2 only with 2 players.
    pub fn new(players: usize, colours_per_player: usize) -> Result<Seating, SeatingError> {
        if !(2..=4).contains(&players) {
            return Err(SeatingError::Players { players });
        }
        match (players, colours_per_player) {
            (_, 1) | (2, 2) => Ok(Seating {
                players,
                colours_per_player,
            }),
            (_, 2) => Err(SeatingError::TwoColoursNeedTwoPlayers),
            (_, colours) => Err(SeatingError::ColoursPerPlayer { colours }),
        }
    }

    /// Number of seats.
    pub fn players(&self) -> usize {
        self.players
    }

    /// Colours each seat commands.
    pub fn colours_per_player(&self) -> usize {
        self.colours_per_player
    }

    /// The colours in play, in turn order.
    pub fn colours(&self) -> &'static [Colour] {
        use Colour::*;
        match (self.players, self.colours_per_player) {
            (2, 1) => &[Blue, Red],
            (3, _) => &[Blue, Yellow, Red],
            _ => &[Blue, Yellow, Red, Green],
        }
    }

    /// The seat commanding `colour`, if it is in play.
    pub fn owner(&self, colour: Colour) -> Option<Seat> {
        use Colour::*;
        let n = match (self.players, self.colours_per_player, colour) {
            (2, 1, Blue) => 1,
            (2, 1, Red) => 2,
            (2, 1, _) => return None,
            (2, 2, Blue | Green) => 1,
            (2, 2, _) => 2,
            (3, _, Green) => return None,
            (_, _, c) => c.index() + 1,
        };
        Seat::new(n)
    }

    /// The colours `seat` commands.
    pub fn colours_of(&self, seat: Seat) -> Vec<Colour> {
        self.colours()
            .iter()
            .copied()
            .filter(|&c| self.owner(c) == Some(seat))
            .collect()
    }

    /// The side (team) of a colour: partners share a side (4 players: Blue+Green
    /// against Yellow+Red; a seat's two colours with `colors-per-player=2`).
    pub fn side(&self, colour: Colour) -> usize {
        match self.players {
            3 => colour.index(),
            _ => usize::from(matches!(colour, Colour::Yellow | Colour::Red)),
        }
    }

    /// The side of a seat.
    pub fn side_of_seat(&self, seat: Seat) -> usize {
        self.side(self.colours_of(seat)[0])
    }

    /// The seats on `seat`'s side, itself included.
    pub fn team(&self, seat: Seat) -> Vec<Seat> {
        let side = self.side_of_seat(seat);
        Seat::all(self.players)
            .filter(|&s| self.side_of_seat(s) == side)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn r_b3_seating() {
        let four = Seating::new(4, 1).unwrap();
        let s = |n| Seat::new(n).unwrap();
        assert_eq!(four.team(s(1)), vec![s(1), s(4)], "Blue+Green");
        assert_eq!(four.team(s(2)), vec![s(2), s(3)], "Yellow+Red");
        let three = Seating::new(3, 1).unwrap();
        assert_eq!(three.owner(Colour::Green), None);
        assert_eq!(three.team(s(2)), vec![s(2)]);
        let two = Seating::new(2, 1).unwrap();
        assert_eq!(two.colours(), &[Colour::Blue, Colour::Red]);
        assert_eq!(two.owner(Colour::Red), Some(s(2)));
        let double = Seating::new(2, 2).unwrap();
        assert_eq!(double.colours_of(s(1)), vec![Colour::Blue, Colour::Green]);
        assert_eq!(double.colours_of(s(2)), vec![Colour::Yellow, Colour::Red]);
        // The words are those `option` errors have always said.
        let said = |p, c| Seating::new(p, c).unwrap_err().to_string();
        assert_eq!(said(3, 2), "colors-per-player=2 needs players=2 (R-B3)");
        assert_eq!(said(5, 1), "players=5: expected 2, 3 or 4");
        assert_eq!(said(2, 3), "colors-per-player=3: expected 1 or 2");
    }
}
