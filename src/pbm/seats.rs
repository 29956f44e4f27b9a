//! Who sits where in a mail game: the players' names given at `pbm new`, checked
//! there so that each one addresses exactly one seat, and a seat as a command names
//! it (by number or by name), resolved against the record's header. Its own room
//! because a mail game is run by people, who know each other by name.

use std::str::FromStr;

use super::PbmError;
use crate::game::Seat;

/// The longest name a seat may have, in characters: it is written in every message.
const MAX_NAME: usize = 64;

/// A seat as a command names it: `--seat 2` or `--seat alice`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SeatRef {
    /// By number, 1-based.
    Number(Seat),
    /// By the player's name given at `pbm new` (letter case aside).
    Name(String),
}

impl FromStr for SeatRef {
    type Err = String;

    fn from_str(s: &str) -> Result<SeatRef, String> {
        // Names are never all digits (`check_names`), so digits are a number.
        if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) {
            return s.parse().map(SeatRef::Number);
        }
        if s.trim().is_empty() {
            return Err("a seat is a number or a player's name, not nothing".into());
        }
        Ok(SeatRef::Name(s.to_string()))
    }
}

impl SeatRef {
    /// The seat this names at a table whose players are `names`, in seat order.
    pub fn resolve(&self, names: &[String]) -> Result<Seat, PbmError> {
        match self {
            SeatRef::Number(seat) => Ok(seat.at_table(names.len())?),
            SeatRef::Name(name) => names
                .iter()
                .position(|n| n.to_lowercase() == name.to_lowercase())
                .map(Seat::from_index)
                .ok_or_else(|| {
                    PbmError::Usage(format!(
                        "no seat is named `{}`; the seats are {}",
                        crate::text::printable(name),
                        who_is_who(names)
                    ))
                }),
        }
    }
}

/// `seat 1 alice, seat 2 bob`: every seat with its player's name.
pub(super) fn who_is_who(names: &[String]) -> String {
    names
        .iter()
        .enumerate()
        .map(|(i, n)| format!("seat {} {n}", i + 1))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Checks the names given at `pbm new`: each one addresses one seat (no two alike,
/// letter case aside; none all digits, which would read as a seat number) and fits
/// on one line of a message (no control characters, no surrounding blanks, at most
/// [`MAX_NAME`] characters).
pub(super) fn check_names(names: &[String]) -> Result<(), PbmError> {
    for (i, name) in names.iter().enumerate() {
        let bad = |why: &str| {
            Err(PbmError::Usage(format!(
                "--seat `{}`: {why}",
                crate::text::printable(name)
            )))
        };
        if name.trim().is_empty() {
            return bad("a player's name cannot be empty");
        }
        if name.trim() != name {
            return bad("a player's name cannot start or end with a blank");
        }
        if name.chars().any(char::is_control) {
            return bad("a player's name cannot hold control characters");
        }
        if name.chars().count() > MAX_NAME {
            return bad(&format!("a player's name has at most {MAX_NAME} characters"));
        }
        if name.bytes().all(|b| b.is_ascii_digit()) {
            return bad("a player's name cannot be a number: `--seat 2` means seat 2");
        }
        if names[..i].iter().any(|n| n.to_lowercase() == name.to_lowercase()) {
            return bad("two seats cannot have one name: a name addresses one seat");
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(n: &[&str]) -> Vec<String> {
        n.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_seat_is_named_by_number_or_by_name() {
        let table = names(&["alice", "Bob"]);
        let seat = |s: &str| {
            s.parse::<SeatRef>()
                .and_then(|r| r.resolve(&table).map_err(|e| e.to_string()))
        };
        assert_eq!(seat("2"), Ok(Seat::from_index(1)));
        assert_eq!(seat("bob"), Ok(Seat::from_index(1)));
        assert_eq!(seat("ALICE"), Ok(Seat::from_index(0)));
        assert!(seat("3").unwrap_err().contains("seat 3"));
        assert!(seat("carol").unwrap_err().contains("seat 1 alice, seat 2 Bob"));
        assert!(seat("0").is_err());
        assert!("".parse::<SeatRef>().is_err());
    }

    #[test]
    fn names_that_would_not_address_one_seat_are_refused() {
        assert!(check_names(&names(&["alice", "bob"])).is_ok());
        for bad in [
            &["alice", "Alice"][..],
            &["alice", "2"],
            &["alice", ""],
            &["alice", " bob"],
            &["alice", "bo\nb"],
        ] {
            assert!(check_names(&names(bad)).is_err(), "{bad:?}");
        }
        assert!(check_names(&names(&["a", &"x".repeat(65)])).is_err());
    }
}
