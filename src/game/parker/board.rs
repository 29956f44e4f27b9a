//! The Peg Chow / Telka board (R-B1, R-B2): points, colours, homes and tints.

use std::fmt;

/// Width and height of the board.
pub const SIZE: u8 = 11;
/// Number of points.
pub const POINTS: usize = (SIZE as usize) * (SIZE as usize);

/// One of the 121 points, `a1`…`k11` (x = file 0..10, y = rank 0..10).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Point(u8);

impl Point {
    /// The point at file `x`, rank `y`, when both are on the board.
    pub fn new(x: i8, y: i8) -> Option<Point> {
        let on = 0..SIZE as i8;
        (on.contains(&x) && on.contains(&y)).then(|| Point(y as u8 * SIZE + x as u8))
    }

    /// The point with index `i` (0..121, rank-major from a1).
    pub fn from_index(i: usize) -> Point {
        assert!(i < POINTS);
        Point(i as u8)
    }

    /// Index 0..121.
    pub fn index(self) -> usize {
        self.0 as usize
    }

    /// File, 0..10.
    pub fn x(self) -> i8 {
        (self.0 % SIZE) as i8
    }

    /// Rank, 0..10.
    pub fn y(self) -> i8 {
        (self.0 / SIZE) as i8
    }

    /// Every point of the board.
    pub fn all() -> impl Iterator<Item = Point> {
        (0..POINTS).map(Point::from_index)
    }

    /// The point `(dx, dy)` away, if on the board.
    pub fn offset(self, dx: i8, dy: i8) -> Option<Point> {
        Point::new(self.x() + dx, self.y() + dy)
    }

    /// The tint (x mod 2, y mod 2): a leap never changes it (R-B2).
    pub fn tint(self) -> (u8, u8) {
        ((self.x() % 2) as u8, (self.y() % 2) as u8)
    }

    /// The home this point belongs to, or `None` in the Danger Territory (R-B1).
    pub fn home(self) -> Option<Colour> {
        Colour::ALL.into_iter().find(|c| c.home_contains(self))
    }

    /// Appends the name, `a1`…`k11` (without the formatting machinery: events and
    /// legal lists are made of these).
    pub fn push_text(self, out: &mut String) {
        out.push((b'a' + self.x() as u8) as char);
        let rank = self.y() as u8 + 1;
        if rank >= 10 {
            out.push('1');
        }
        out.push((b'0' + rank % 10) as char);
    }

    /// Parses `a1`…`k11`.
    pub fn parse(s: &str) -> Option<Point> {
        let mut chars = s.chars();
        let file = chars.next()?;
        let rank = chars.as_str();
        // Digits only: `str::parse` would also take a sign (`c+2`).
        if !('a'..='k').contains(&file) || !rank.bytes().all(|b| b.is_ascii_digit()) || rank.starts_with('0')
        {
            return None;
        }
        let rank: i8 = rank.parse().ok()?;
        Point::new(file as i8 - b'a' as i8, rank - 1)
    }
}

impl fmt::Display for Point {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", (b'a' + self.x() as u8) as char, self.y() + 1)
    }
}

/// A counter colour, in turn order (R-B3: Blue → Yellow → Red → Green).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Colour {
    /// South-west home, moves first.
    Blue,
    /// North-west home.
    Yellow,
    /// North-east home.
    Red,
    /// South-east home.
    Green,
}

impl Colour {
    /// All colours in turn order.
    pub const ALL: [Colour; 4] = [Colour::Blue, Colour::Yellow, Colour::Red, Colour::Green];

    /// Position in the turn order, 0..4.
    pub fn index(self) -> usize {
        self as usize
    }

    /// The letter used in state strings (`b y r g`).
    pub fn letter(self) -> char {
        ['b', 'y', 'r', 'g'][self.index()]
    }

    /// The colour of a state-string letter.
    pub fn from_letter(c: char) -> Option<Colour> {
        Colour::ALL.into_iter().find(|col| col.letter() == c)
    }

    /// The lower-case name used in events.
    pub fn name(self) -> &'static str {
        ["blue", "yellow", "red", "green"][self.index()]
    }

    /// The diagonally opposite colour, whose home is this colour's target (R-B3).
    pub fn target(self) -> Colour {
        match self {
            Colour::Blue => Colour::Red,
            Colour::Red => Colour::Blue,
            Colour::Yellow => Colour::Green,
            Colour::Green => Colour::Yellow,
        }
    }

    /// Which corner: (x is east, y is north).
    fn corner(self) -> (bool, bool) {
        match self {
            Colour::Blue => (false, false),
            Colour::Yellow => (false, true),
            Colour::Red => (true, true),
            Colour::Green => (true, false),
        }
    }

    /// Whether `p` is one of this colour's 12 home points: the 4×4 corner block minus
    /// its inner 2×2 (R-B1).
    pub fn home_contains(self, p: Point) -> bool {
        let (east, north) = self.corner();
        // Fold every corner onto the south-west one.
        let x = if east { SIZE as i8 - 1 - p.x() } else { p.x() };
        let y = if north { SIZE as i8 - 1 - p.y() } else { p.y() };
        x < 4 && y < 4 && !(x >= 2 && y >= 2)
    }

    /// The 12 home points, rank-major (computed once: win checks run after every move).
    pub fn home_points(self) -> impl Iterator<Item = Point> {
        static HOMES: std::sync::OnceLock<[[Point; 12]; 4]> = std::sync::OnceLock::new();
        let homes = HOMES.get_or_init(|| {
            Colour::ALL.map(|c| {
                let mut points = Point::all().filter(|&p| c.home_contains(p));
                std::array::from_fn(|_| points.next().expect("12 home points"))
            })
        });
        homes[self.index()].into_iter()
    }

    /// Chebyshev distance from `p` to the nearest point of this colour's home.
    pub fn distance_to_home(self, p: Point) -> i8 {
        self.home_points()
            .map(|h| (h.x() - p.x()).abs().max((h.y() - p.y()).abs()))
            .min()
            .unwrap_or(0)
    }
}

impl fmt::Display for Colour {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn r_b1_homes_have_twelve_points_and_danger_territory_has_73() {
        for c in Colour::ALL {
            assert_eq!(c.home_points().count(), 12, "{c}");
        }
        assert_eq!(Point::all().filter(|p| p.home().is_none()).count(), 73);
        assert_eq!(Point::parse("c3").unwrap().home(), None, "inner notch");
        assert_eq!(Point::parse("b4").unwrap().home(), Some(Colour::Blue));
        assert_eq!(Point::parse("h11").unwrap().home(), Some(Colour::Red));
        assert_eq!(Point::parse("k3").unwrap().home(), Some(Colour::Green));
        assert_eq!(Point::parse("a8").unwrap().home(), Some(Colour::Yellow));
    }

    #[test]
    fn r_b9_point_notation_round_trips() {
        for p in Point::all() {
            assert_eq!(Point::parse(&p.to_string()), Some(p));
        }
        for bad in [
            "", "a", "a0", "a12", "l1", "A1", "a01", "a1x", "a-1", "c+2", "b 3",
        ] {
            assert_eq!(Point::parse(bad), None, "{bad}");
        }
    }
}
