//! Why an action was not accepted: the rejection every game's `play` returns, and
//! the typed reason of each game inside it. The reasons' texts reach bots (`error`
//! lines) and records, so each game's enum prints exactly the words it always has.

use std::error::Error;
use std::fmt;

use super::{idoubtit, multichess, parker, Seat};

/// Why an action was not accepted. A rejected action changes nothing.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Rejection {
    /// The text is not an action of this game at all.
    #[error("malformed action `{action}`: {reason}")]
    Malformed {
        /// The text submitted.
        action: String,
        /// What is wrong with it.
        reason: MalformedReason,
    },
    /// It is not this seat's turn.
    #[error("not seat {seat}'s turn ({turn})")]
    NotYourTurn {
        /// The seat that tried to act.
        seat: Seat,
        /// Whose turn it is, in words.
        turn: String,
    },
    /// Well-formed, but the rules forbid it here.
    #[error("illegal action `{action}`: {reason}")]
    Illegal {
        /// The text submitted.
        action: String,
        /// The rule it breaks.
        reason: IllegalReason,
    },
    /// The game is over.
    #[error("the game is over")]
    GameOver,
}

/// Why a text is not an action of the game, in the game's own terms: R-B9, the
/// notation of I-Doubt-It's actions, R-M2.
pub type MalformedReason =
    ByGame<parker::rules::NotationError, idoubtit::notation::NotationError, multichess::rules::NotationError>;

/// Which rule a well-formed action breaks, in the game's own terms: R-B4…R-B6, what
/// R-D4 refuses (an incorrect action is accepted and left to a doubt, R-D6), R-M1
/// and R-M4…R-M6.
pub type IllegalReason =
    ByGame<parker::rules::MoveError, idoubtit::rules::NotWellFormed, multichess::rules::MoveError>;

/// One value of the type each game has for it; it prints as the game's own value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ByGame<P, D, M> {
    /// Peg Chow and Telka.
    Parker(P),
    /// I-Doubt-It TelnChes.
    IDoubtIt(D),
    /// Multi-player TelnChes.
    MultiChess(M),
}

impl<P: fmt::Display, D: fmt::Display, M: fmt::Display> fmt::Display for ByGame<P, D, M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ByGame::Parker(p) => p.fmt(f),
            ByGame::IDoubtIt(d) => d.fmt(f),
            ByGame::MultiChess(m) => m.fmt(f),
        }
    }
}

impl<P: Error, D: Error, M: Error> Error for ByGame<P, D, M> {}
