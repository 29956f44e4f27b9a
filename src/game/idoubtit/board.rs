//! Boards, sides, squares and pieces of I-Doubt-It TelnChes (R-D1, R-D2).

use std::fmt;

/// Which board and piece set a variant plays with (the `b` of R-D1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BoardKind {
    /// 8×8, chess pieces, home rows = first 2 ranks.
    Chess,
    /// 9×9, shogi pieces, home rows = first 3 ranks.
    Shogi,
}

impl BoardKind {
    /// Files and ranks.
    pub fn size(self) -> u8 {
        match self {
            BoardKind::Chess => 8,
            BoardKind::Shogi => 9,
        }
    }

    /// Number of squares.
    pub fn squares(self) -> usize {
        let n = self.size() as usize;
        n * n
    }

    /// Ranks of each side's home rows, counted from its own side (R-D3).
    pub fn home_rows(self) -> u8 {
        match self {
            BoardKind::Chess => 2,
            BoardKind::Shogi => 3,
        }
    }

    /// The pieces each side starts with, in the order placements list them (R-D2).
    pub fn army(self) -> &'static [Kind] {
        use Kind::*;
        // Static: the ply count is derived from it, several times per action.
        const CHESS: [Kind; 16] = [
            King, Queen, Rook, Rook, Bishop, Bishop, Knight, Knight, Pawn, Pawn, Pawn, Pawn, Pawn, Pawn,
            Pawn, Pawn,
        ];
        const SHOGI: [Kind; 20] = [
            King, Rook, Bishop, Gold, Gold, Silver, Silver, Knight, Knight, Lance, Lance, Pawn, Pawn, Pawn,
            Pawn, Pawn, Pawn, Pawn, Pawn, Pawn,
        ];
        match self {
            BoardKind::Chess => &CHESS,
            BoardKind::Shogi => &SHOGI,
        }
    }

    /// The piece kinds of this board, in letter order for listings.
    pub fn kinds(self) -> &'static [Kind] {
        use Kind::*;
        match self {
            BoardKind::Chess => &[King, Queen, Rook, Bishop, Knight, Pawn],
            BoardKind::Shogi => &[King, Rook, Bishop, Gold, Silver, Knight, Lance, Pawn],
        }
    }

    /// Every square, rank 1 first.
    pub fn all_squares(self) -> impl Iterator<Item = Square> {
        let n = self.size();
        (0..n).flat_map(move |rank| (0..n).map(move |file| Square { file, rank }))
    }
}

/// A side: seat 1 is White (sente, moves first), seat 2 Black (R-D2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Side {
    /// Seat 1, ranks 1–2 (1–3 on the shogi board).
    White,
    /// Seat 2.
    Black,
}

impl Side {
    /// Both sides, White first.
    pub const BOTH: [Side; 2] = [Side::White, Side::Black];

    /// 0 for White, 1 for Black.
    pub fn index(self) -> usize {
        self as usize
    }

    /// The other side.
    pub fn opponent(self) -> Side {
        match self {
            Side::White => Side::Black,
            Side::Black => Side::White,
        }
    }

    /// +1 if forward is up the ranks, −1 if down.
    pub fn forward(self) -> i8 {
        match self {
            Side::White => 1,
            Side::Black => -1,
        }
    }

    /// The rank `rank` counted from this side's back rank (0 = own first rank).
    pub fn relative_rank(self, rank: u8, board: BoardKind) -> u8 {
        match self {
            Side::White => rank,
            Side::Black => board.size() - 1 - rank,
        }
    }

    /// The word used in events: `white` or `black`.
    pub fn name(self) -> &'static str {
        match self {
            Side::White => "white",
            Side::Black => "black",
        }
    }

    /// `w` or `b`.
    pub fn letter(self) -> char {
        match self {
            Side::White => 'w',
            Side::Black => 'b',
        }
    }

    /// The side of a `w`/`b` letter.
    pub fn from_letter(c: char) -> Option<Side> {
        match c {
            'w' => Some(Side::White),
            'b' => Some(Side::Black),
            _ => None,
        }
    }
}

impl fmt::Display for Side {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A square: file 0.. (`a`..), rank 0.. (`1`..).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Square {
    /// File, 0-based.
    pub file: u8,
    /// Rank, 0-based.
    pub rank: u8,
}

impl Square {
    /// The square at (file, rank) if it is on `board`.
    pub fn new(file: i8, rank: i8, board: BoardKind) -> Option<Square> {
        let n = board.size() as i8;
        ((0..n).contains(&file) && (0..n).contains(&rank)).then_some(Square {
            file: file as u8,
            rank: rank as u8,
        })
    }

    /// Index into a board's square vector.
    pub fn index(self, board: BoardKind) -> usize {
        self.rank as usize * board.size() as usize + self.file as usize
    }

    /// The square `(df, dr)` away, if on the board.
    pub fn offset(self, df: i8, dr: i8, board: BoardKind) -> Option<Square> {
        Square::new(self.file as i8 + df, self.rank as i8 + dr, board)
    }

    /// Parses `e4` on `board`.
    pub fn parse(s: &str, board: BoardKind) -> Option<Square> {
        let mut chars = s.chars();
        let (f, r) = (chars.next()?, chars.next()?);
        if chars.next().is_some() || !f.is_ascii_lowercase() || !r.is_ascii_digit() || r == '0' {
            return None;
        }
        Square::new(f as i8 - b'a' as i8, r as i8 - b'1' as i8, board)
    }
}

impl Square {
    /// Appends the square's name (`e4`): squares are in every event and view, so they
    /// are pushed as bytes rather than through the formatting machinery.
    pub fn push_to(self, out: &mut String) {
        out.push(char::from(b'a' + self.file));
        crate::game::push_decimal(out, self.rank + 1);
    }
}

impl fmt::Display for Square {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut name = String::with_capacity(3);
        self.push_to(&mut name);
        f.write_str(&name)
    }
}

/// A piece type. `Unknown` exists only in views, for types the seat may not see.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    /// K.
    King,
    /// Q (chess).
    Queen,
    /// R.
    Rook,
    /// B.
    Bishop,
    /// N.
    Knight,
    /// P.
    Pawn,
    /// G (shogi).
    Gold,
    /// S (shogi).
    Silver,
    /// L (shogi).
    Lance,
    /// A type hidden from the seat whose view this is (`X`).
    Unknown,
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
            Kind::Gold => 'G',
            Kind::Silver => 'S',
            Kind::Lance => 'L',
            Kind::Unknown => 'X',
        }
    }

    /// The kind of an upper-case letter on `board` (`X` is not accepted here).
    pub fn from_letter(c: char, board: BoardKind) -> Option<Kind> {
        board.kinds().iter().copied().find(|k| k.letter() == c)
    }

    /// Whether a shogi piece of this kind has a promoted form.
    pub fn promotable_in_shogi(self) -> bool {
        matches!(
            self,
            Kind::Rook | Kind::Bishop | Kind::Silver | Kind::Knight | Kind::Lance | Kind::Pawn
        )
    }
}

/// One `T` for each side, named rather than a `[T; 2]` indexed by number.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct BySide<T> {
    /// White's (seat 1).
    pub white: T,
    /// Black's (seat 2).
    pub black: T,
}

impl<T> BySide<T> {
    /// The same value for both sides.
    pub fn both(value: T) -> BySide<T>
    where
        T: Clone,
    {
        BySide {
            white: value.clone(),
            black: value,
        }
    }

    /// Each side's value from `f`, White's first.
    pub fn from_fn(mut f: impl FnMut(Side) -> T) -> BySide<T> {
        BySide {
            white: f(Side::White),
            black: f(Side::Black),
        }
    }

    /// `side`'s value.
    pub fn get(&self, side: Side) -> &T {
        match side {
            Side::White => &self.white,
            Side::Black => &self.black,
        }
    }

    /// `side`'s value, to change.
    pub fn get_mut(&mut self, side: Side) -> &mut T {
        match side {
            Side::White => &mut self.white,
            Side::Black => &mut self.black,
        }
    }

    /// Both values, White's first.
    pub fn iter(&self) -> std::array::IntoIter<&T, 2> {
        [&self.white, &self.black].into_iter()
    }
}

impl<T> std::ops::Index<Side> for BySide<T> {
    type Output = T;
    fn index(&self, side: Side) -> &T {
        self.get(side)
    }
}

impl<T> std::ops::IndexMut<Side> for BySide<T> {
    fn index_mut(&mut self, side: Side) -> &mut T {
        self.get_mut(side)
    }
}

impl<T> IntoIterator for BySide<T> {
    type Item = T;
    type IntoIter = std::array::IntoIter<T, 2>;
    fn into_iter(self) -> Self::IntoIter {
        [self.white, self.black].into_iter()
    }
}

impl<'a, T> IntoIterator for &'a BySide<T> {
    type Item = &'a T;
    type IntoIter = std::array::IntoIter<&'a T, 2>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

/// A piece. Its position and owner are public; its kind (and, on the shogi board,
/// whether it is promoted) is visible only as R-D9 says.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Piece {
    /// Who owns it now.
    pub owner: Side,
    /// Who it was placed for (R-D9 `d` = 2: "the pieces P started with").
    pub origin: Side,
    /// Its type (on the chess board a promoted pawn simply has its new type).
    pub kind: Kind,
    /// Promoted (shogi board only).
    pub promoted: bool,
    /// `revealed[side]`: `side` made a capture of this piece that stood (R-D9: the
    /// type stays revealed to it).
    pub revealed: BySide<bool>,
}

impl Piece {
    /// A fresh piece placed for `side`.
    pub fn new(side: Side, kind: Kind) -> Piece {
        Piece {
            owner: side,
            origin: side,
            kind,
            promoted: false,
            revealed: BySide::both(false),
        }
    }
}
