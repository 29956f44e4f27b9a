//! The geometry of Multi-player TelnChes (R-M1, R-M2): one public area (ranks 5–8)
//! and one private area per seat (ranks 1–4), every private rank 4 joined to public
//! rank 5.

use std::fmt;

pub use super::errors::SquareError;
use crate::game::Seat;

/// Squares per area: 8 files × 4 ranks.
pub const AREA: usize = 32;

/// Where a square lies.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Area {
    /// The shared ranks 5–8.
    Public,
    /// Seat `k`'s private ranks 1–4 (0-based seat index).
    Private(u8),
}

/// A square: its area, file 0..8 and absolute rank 0..8 (0..4 private, 4..8 public).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Square {
    /// The area.
    pub area: Area,
    /// File, 0 = `a`.
    pub file: u8,
    /// Rank, 0 = rank 1; public squares have ranks 4..8, private ones 0..4.
    pub rank: u8,
}

impl Square {
    /// Index into a position's square vector: area 0 is public, area k+1 seat k's.
    pub fn index(self) -> usize {
        match self.area {
            Area::Public => (self.rank as usize - 4) * 8 + self.file as usize,
            Area::Private(k) => AREA * (k as usize + 1) + self.rank as usize * 8 + self.file as usize,
        }
    }

    /// The square at `index` (inverse of [`Square::index`]).
    pub fn from_index(i: usize) -> Square {
        let (area, within) = (i / AREA, i % AREA);
        match area {
            0 => Square {
                area: Area::Public,
                file: (within % 8) as u8,
                rank: (within / 8) as u8 + 4,
            },
            k => Square {
                area: Area::Private(k as u8 - 1),
                file: (within % 8) as u8,
                rank: (within / 8) as u8,
            },
        }
    }

    /// The square `(df, dr)` away on the board formed by `private` (the one private
    /// area a move may involve) and the public area; `None` off that board.
    pub fn offset(self, df: i8, dr: i8, private: Option<u8>) -> Option<Square> {
        let file = self.file as i8 + df;
        let rank = self.rank as i8 + dr;
        if !(0..8).contains(&file) || !(0..8).contains(&rank) {
            return None;
        }
        let area = if rank >= 4 {
            Area::Public
        } else {
            Area::Private(private?)
        };
        Some(Square {
            area,
            file: file as u8,
            rank: rank as u8,
        })
    }

    /// Parses `e5` (public) or `2:e1` (private) for a table of `seats`.
    pub fn parse(text: &str, seats: usize) -> Result<Square, SquareError> {
        let (area, name) = match text.split_once(':') {
            Some((seat, name)) => {
                let seat: Seat = seat.parse().map_err(|_| SquareError::NotASeat {
                    text: text.to_string(),
                    seat: seat.to_string(),
                })?;
                if seat.number() > seats {
                    return Err(SquareError::NoSuchArea {
                        text: text.to_string(),
                        seat,
                        seats,
                    });
                }
                (Area::Private(seat.index() as u8), name)
            }
            None => (Area::Public, text),
        };
        let b = name.as_bytes();
        if b.len() != 2 || !(b'a'..=b'h').contains(&b[0]) || !(b'1'..=b'8').contains(&b[1]) {
            return Err(SquareError::NotASquare {
                text: text.to_string(),
            });
        }
        let (file, rank) = (b[0] - b'a', b[1] - b'1');
        match (area, rank >= 4) {
            (Area::Public, false) => Err(SquareError::PublicRank {
                text: text.to_string(),
            }),
            (Area::Private(_), true) => Err(SquareError::PrivateRank {
                text: text.to_string(),
            }),
            _ => Ok(Square { area, file, rank }),
        }
    }
}

impl fmt::Display for Square {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Area::Private(k) = self.area {
            write!(f, "{}:", k + 1)?;
        }
        write!(f, "{}{}", (b'a' + self.file) as char, self.rank + 1)
    }
}

/// A chess piece type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    /// K.
    King,
    /// Q.
    Queen,
    /// R.
    Rook,
    /// B.
    Bishop,
    /// N.
    Knight,
    /// P.
    Pawn,
}

impl Kind {
    /// The upper-case letter.
    pub fn letter(self) -> char {
        match self {
            Kind::King => 'K',
            Kind::Queen => 'Q',
            Kind::Rook => 'R',
            Kind::Bishop => 'B',
            Kind::Knight => 'N',
            Kind::Pawn => 'P',
        }
    }

    /// Every kind, king first.
    pub const ALL: [Kind; 6] = [
        Kind::King,
        Kind::Queen,
        Kind::Rook,
        Kind::Bishop,
        Kind::Knight,
        Kind::Pawn,
    ];

    /// Its place in [`Kind::ALL`].
    pub fn index(self) -> usize {
        self as usize
    }

    /// The kind of an upper-case letter.
    pub fn from_letter(c: char) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.letter() == c)
    }

    /// Whether it slides (and so can be stopped by an unseen piece, R-M4).
    pub fn slides(self) -> bool {
        matches!(self, Kind::Queen | Kind::Rook | Kind::Bishop)
    }
}

/// A piece: its type and the seat that owns it now.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Piece {
    /// Type.
    pub kind: Kind,
    /// Owner.
    pub owner: Seat,
}

impl fmt::Display for Piece {
    /// `R1`: the type letter and the owner's seat number.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", self.kind.letter(), self.owner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn r_m2_squares_parse_and_print() {
        for text in ["e5", "h8", "a5", "1:e1", "3:h4", "8:a1"] {
            assert_eq!(Square::parse(text, 8).unwrap().to_string(), text);
        }
        for bad in [
            "e4", "1:e5", "9:e1", "0:e1", "e9", "i5", "1:", ":e1", "x:e1", "E5",
        ] {
            assert!(Square::parse(bad, 8).is_err(), "{bad}");
        }
        assert!(Square::parse("4:e1", 3).is_err());
        for i in 0..AREA * 9 {
            assert_eq!(Square::from_index(i).index(), i);
        }
    }
}
