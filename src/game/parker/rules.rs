//! Moves of Peg Chow and Telka: steps, leap chains, Telka captures (R-B4…R-B6).

use std::fmt;

use super::board::{Colour, Point, POINTS};
use super::seating::Seating;
// A counter steps and leaps along the eight lines through its point (R-B4), the
// eight neighbours of a king. A leap is two fixed points along a line, not a walk
// to the edge, so it is offset directly: through a ray, the landing point was
// reached from the point leapt over, and leap chains cost 8% more instructions.
use crate::game::geometry::KING as LINES;

/// Which of the two Parker Brothers games is played on the board.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Variant {
    /// No captures; fill the target home (R-B7).
    PegChow,
    /// Leaps capture opponents in the Danger Territory (R-B6); 3 counters home win.
    Telka,
}

/// Why a text is not an action in R-B9 notation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum NotationError {
    /// R-B9: a word is not a point (`a1`…`k11`), and the text is not `pass`.
    #[error("expected points `a1`…`k11` joined by `-` (e.g. `c2-d3`, `a1-c3-e5`) or `pass`")]
    NotPoints,
    /// R-B9: a move names its start and at least one more point.
    #[error("a move names at least two points, e.g. `c2-d3`")]
    OnePoint,
}

/// Why a move in good notation breaks the rules of movement (R-B4…R-B6).
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum MoveError {
    /// R-B5: a colour passes only when it has no move.
    #[error("{mover} has a move, and passing is not allowed (R-B5)")]
    PassWithAMove {
        /// The colour to move.
        mover: Colour,
    },
    /// R-B4: a move starts on a counter of the colour to move.
    #[error("{from} holds no {mover} counter, and {mover} is to move")]
    NotOwnCounter {
        /// Where the move starts.
        from: Point,
        /// The colour to move.
        mover: Colour,
    },
    /// R-B4: a step goes to an empty neighbouring point.
    #[error("{to} is occupied")]
    StepOccupied {
        /// Where the step goes.
        to: Point,
    },
    /// R-B4: every leg is a step or a leap of two points along one of the eight lines.
    #[error("{from}-{to} is neither a step to a neighbouring point nor a leap along a line (R-B4)")]
    NotAStepOrLeap {
        /// Where the leg starts.
        from: Point,
        /// Where it ends.
        to: Point,
    },
    /// R-B4: a step is a whole move, never combined with other steps or leaps.
    #[error("{from}-{to} is a step, and a step is a whole move: it cannot be combined with other steps or leaps (R-B4)")]
    StepInChain {
        /// Where the step starts.
        from: Point,
        /// Where it ends.
        to: Point,
    },
    /// R-B4: a leap goes over a counter.
    #[error("{from}-{to} leaps over {over}, which is empty")]
    LeapsOverEmpty {
        /// Where the leap starts.
        from: Point,
        /// Where it lands.
        to: Point,
        /// The empty point between.
        over: Point,
    },
    /// R-B4: a leap lands on an empty point.
    #[error("{from}-{to} lands on {to}, which is occupied")]
    LandsOnOccupied {
        /// Where the leap starts.
        from: Point,
        /// Where it lands.
        to: Point,
    },
    /// R-B4: a chain of leaps lands on each point at most once.
    #[error("{from}-{to} lands on {to} a second time in one chain (R-B4)")]
    LandsTwice {
        /// Where the leap starts.
        from: Point,
        /// Where it lands again.
        to: Point,
    },
}

/// A move as written in R-B9.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Action {
    /// A step (two adjacent points) or a chain of leaps (start, then every landing).
    Path(Vec<Point>),
    /// The forced pass of a colour with no move (R-B5).
    Pass,
}

impl Action {
    /// Parses R-B9 notation: `c2-d3`, `a1-c3-e5`, or `pass`.
    pub fn parse(text: &str) -> Result<Action, NotationError> {
        // By hand rather than with nom: `verify` parses every action of a record, and
        // the grammar is one split (the tests hold the nom grammar it replaced).
        if text == "pass" {
            return Ok(Action::Pass);
        }
        let mut points = Vec::with_capacity(text.len() / 3 + 1);
        for word in text.as_bytes().split(|&b| b == b'-') {
            match point_word(word) {
                Some(p) => points.push(p),
                None => return Err(NotationError::NotPoints),
            }
        }
        if points.len() < 2 {
            return Err(NotationError::OnePoint);
        }
        Ok(Action::Path(points))
    }
}

/// A point as a word of an action: a file `a`…`k`, then a rank 1…11 in digits with
/// no sign or leading zero (`c02` is not `c2`: one spelling each).
fn point_word(word: &[u8]) -> Option<Point> {
    let (&file, rank) = word.split_first()?;
    let rank = match *rank {
        [d @ b'1'..=b'9'] => d - b'0',
        [b'1', d @ b'0'..=b'1'] => 10 + d - b'0',
        _ => return None,
    };
    if !(b'a'..=b'k').contains(&file) {
        return None;
    }
    Point::new((file - b'a') as i8, rank as i8 - 1)
}

impl Action {
    /// The R-B9 text, built without the formatting machinery: legal lists run to
    /// thousands of chains, and this is most of their cost.
    pub fn text(&self) -> String {
        let len = match self {
            Action::Pass => 4,
            Action::Path(points) => points.len() * 4,
        };
        let mut s = String::with_capacity(len);
        self.push_text(&mut s);
        s
    }

    /// Appends the R-B9 text.
    pub fn push_text(&self, out: &mut String) {
        match self {
            Action::Pass => out.push_str("pass"),
            Action::Path(points) => {
                for (i, p) in points.iter().enumerate() {
                    if i > 0 {
                        out.push('-');
                    }
                    p.push_text(out);
                }
            }
        }
    }
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text())
    }
}

/// The counters on the board, the colour to move and the moves made so far.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Position {
    /// What stands on each point, by point index.
    pub board: [Option<Colour>; POINTS],
    /// The colour to move.
    pub to_move: Colour,
    /// Moves made so far, forced passes included (R-B8 counts them).
    pub moves: u32,
}

/// What a legal move did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Effect {
    /// Counters captured (R-B6), in chain order, with their colours.
    pub captured: Vec<(Point, Colour)>,
}

impl Position {
    /// The start position of a seating: each colour in play on its home (R-B3).
    pub fn start(seating: &Seating) -> Position {
        let mut board = [None; POINTS];
        for &c in seating.colours() {
            for p in c.home_points() {
                board[p.index()] = Some(c);
            }
        }
        Position {
            board,
            to_move: seating.colours()[0],
            moves: 0,
        }
    }

    /// The counter on `p`.
    pub fn at(&self, p: Point) -> Option<Colour> {
        self.board[p.index()]
    }

    /// The points holding counters of `c`.
    pub fn counters(&self, c: Colour) -> impl Iterator<Item = Point> + '_ {
        Point::all().filter(move |&p| self.at(p) == Some(c))
    }

    /// Whether a leap by `mover` over the counter on `over` captures it (R-B6).
    fn captures(&self, variant: Variant, seating: &Seating, mover: Colour, over: Point) -> bool {
        variant == Variant::Telka
            && over.home().is_none()
            && self
                .at(over)
                .is_some_and(|c| seating.side(c) != seating.side(mover))
    }

    /// Every move of the colour to move: steps first, then leap chains, each chain
    /// prefix being a move of its own (R-B4: a chain may stop after any leap).
    pub fn moves(&self, variant: Variant, seating: &Seating) -> Vec<Action> {
        let mover = self.to_move;
        let mut out = Vec::new();
        let mut scratch = self.clone();
        for from in self.counters(mover).collect::<Vec<_>>() {
            for (dx, dy) in LINES {
                if let Some(to) = from.offset(dx, dy).filter(|&to| self.at(to).is_none()) {
                    out.push(Action::Path(vec![from, to]));
                }
            }
            scratch.board[from.index()] = None;
            let mut path = vec![from];
            scratch.chains(
                variant,
                seating,
                mover,
                1u128 << from.index(),
                &mut path,
                &mut out,
            );
            scratch.board[from.index()] = Some(mover);
        }
        out
    }

    /// Depth-first search of leap chains from the end of `path`; the moving counter has
    /// been lifted off the board and captured counters are removed while searching.
    fn chains(
        &mut self,
        variant: Variant,
        seating: &Seating,
        mover: Colour,
        visited: u128,
        path: &mut Vec<Point>,
        out: &mut Vec<Action>,
    ) {
        let here = *path.last().expect("a chain starts somewhere");
        for (dx, dy) in LINES {
            let (Some(over), Some(land)) = (here.offset(dx, dy), here.offset(2 * dx, 2 * dy)) else {
                continue;
            };
            if self.at(over).is_none() || self.at(land).is_some() || visited & (1 << land.index()) != 0 {
                continue;
            }
            let taken = self
                .captures(variant, seating, mover, over)
                .then(|| self.board[over.index()].take());
            path.push(land);
            out.push(Action::Path(path.clone()));
            self.chains(variant, seating, mover, visited | 1 << land.index(), path, out);
            path.pop();
            if let Some(colour) = taken {
                self.board[over.index()] = colour;
            }
        }
    }

    /// Whether the colour to move has any move at all (R-B5), without listing them: a
    /// step, or a first leap, is enough.
    pub fn has_move(&self) -> bool {
        let mover = self.to_move;
        self.counters(mover).any(|from| {
            LINES.iter().any(|&(dx, dy)| match from.offset(dx, dy) {
                Some(next) if self.at(next).is_none() => true,
                Some(_) => from
                    .offset(2 * dx, 2 * dy)
                    .is_some_and(|land| self.at(land).is_none()),
                None => false,
            })
        })
    }

    /// Checks a move of the colour to move against R-B4…R-B6; the position is unchanged.
    pub fn check(&self, variant: Variant, seating: &Seating, action: &Action) -> Result<Effect, MoveError> {
        self.clone().apply(variant, seating, action)
    }

    /// Applies a move of the colour to move (without passing the turn on); on error the
    /// position may be half-changed, so callers apply to a copy ([`Position::check`]).
    pub fn apply(
        &mut self,
        variant: Variant,
        seating: &Seating,
        action: &Action,
    ) -> Result<Effect, MoveError> {
        let mover = self.to_move;
        let points = match action {
            Action::Pass => {
                return if self.moves(variant, seating).is_empty() {
                    Ok(Effect::default())
                } else {
                    Err(MoveError::PassWithAMove { mover })
                };
            }
            Action::Path(points) => points,
        };
        let from = points[0];
        if self.at(from) != Some(mover) {
            return Err(MoveError::NotOwnCounter { from, mover });
        }
        self.board[from.index()] = None;
        let mut effect = Effect::default();
        let (dx, dy) = (points[1].x() - from.x(), points[1].y() - from.y());
        // A step goes to a neighbouring point; `c2-c2` is no move at all (R-B4).
        if points.len() == 2 && dx.abs().max(dy.abs()) == 1 {
            if self.at(points[1]).is_some() {
                return Err(MoveError::StepOccupied { to: points[1] });
            }
        } else {
            let mut visited = 1u128 << from.index();
            for leg in points.windows(2) {
                let (a, b) = (leg[0], leg[1]);
                let (dx, dy) = (b.x() - a.x(), b.y() - a.y());
                // Named apart from other bad legs: `c2-d3-e4` starts with a legal step,
                // and "neither a step nor a leap" would call that step wrong.
                if dx.abs().max(dy.abs()) == 1 {
                    return Err(MoveError::StepInChain { from: a, to: b });
                }
                if !matches!((dx.abs(), dy.abs()), (0 | 2, 0 | 2)) || (dx, dy) == (0, 0) {
                    return Err(MoveError::NotAStepOrLeap { from: a, to: b });
                }
                let over = a.offset(dx / 2, dy / 2).expect("between two points on the board");
                if self.at(over).is_none() {
                    return Err(MoveError::LeapsOverEmpty { from: a, to: b, over });
                }
                if self.at(b).is_some() {
                    return Err(MoveError::LandsOnOccupied { from: a, to: b });
                }
                if visited & (1 << b.index()) != 0 {
                    return Err(MoveError::LandsTwice { from: a, to: b });
                }
                visited |= 1 << b.index();
                if self.captures(variant, seating, mover, over) {
                    let colour = self.board[over.index()].take().expect("checked above");
                    effect.captured.push((over, colour));
                }
            }
        }
        self.board[points[points.len() - 1].index()] = Some(mover);
        Ok(effect)
    }

    /// Whether `colour` has met its goal (R-B7); checked at the end of its own move.
    pub fn has_won(&self, variant: Variant, seating: &Seating, colour: Colour) -> bool {
        let target = colour.target();
        let mut home = target.home_points().map(|p| self.at(p));
        match variant {
            Variant::Telka => home.filter(|&c| c == Some(colour)).count() >= 3,
            Variant::PegChow => {
                // An owner staying at home cannot block the win; an empty target home
                // (3 players) must be filled with the colour's own counters.
                let owner = seating.colours().contains(&target).then_some(target);
                let mut own = 0;
                let full = home.all(|c| {
                    own += usize::from(c == Some(colour));
                    c == Some(colour) || (c.is_some() && c == owner)
                });
                full && own >= 1
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn r_b9_actions_parse_and_print() {
        for text in ["c2-d3", "a1-c3-e5", "k11-i9", "pass"] {
            assert_eq!(Action::parse(text).unwrap().to_string(), text);
        }
        for bad in [
            "", "c2", "c2-", "-c2", "c2-d3-", "c2--d3", "c0-d1", "c12-c11", "l1-k1", "C2-D3", "c2 d3", "pas",
        ] {
            assert!(Action::parse(bad).is_err(), "{bad}");
        }
        for bad in [
            "c+2-d3", "c2-d+3", "é2-d3", "c2-dé", "passx", "pass-c2", "c2-pass", "c١-d3", "c2-d٣",
        ] {
            assert!(Action::parse(bad).is_err(), "{bad}");
        }
    }

    /// The words of each error are those bots were sent before the errors had types:
    /// the texts the old `format!` calls printed, for the same values.
    #[test]
    fn errors_print_the_words_they_always_have() {
        let p = |s| Point::parse(s).unwrap();
        let (from, to, over) = (p("d4"), p("f6"), p("e5"));
        let cases = [
            (
                MoveError::PassWithAMove { mover: Colour::Red },
                "red has a move, and passing is not allowed (R-B5)",
            ),
            (
                MoveError::NotOwnCounter {
                    from,
                    mover: Colour::Blue,
                },
                "d4 holds no blue counter, and blue is to move",
            ),
            (MoveError::StepOccupied { to }, "f6 is occupied"),
            (
                MoveError::NotAStepOrLeap { from, to },
                "d4-f6 is neither a step to a neighbouring point nor a leap along a line (R-B4)",
            ),
            (
                MoveError::LeapsOverEmpty { from, to, over },
                "d4-f6 leaps over e5, which is empty",
            ),
            (
                MoveError::LandsOnOccupied { from, to },
                "d4-f6 lands on f6, which is occupied",
            ),
            (
                MoveError::LandsTwice { from, to },
                "d4-f6 lands on f6 a second time in one chain (R-B4)",
            ),
        ];
        for (error, text) in cases {
            assert_eq!(error.to_string(), text);
        }
        assert_eq!(
            NotationError::NotPoints.to_string(),
            "expected points `a1`…`k11` joined by `-` (e.g. `c2-d3`, `a1-c3-e5`) or `pass`"
        );
        assert_eq!(
            NotationError::OnePoint.to_string(),
            "a move names at least two points, e.g. `c2-d3`"
        );
    }

    /// The nom grammar `Action::parse` was first written with.
    fn parse_by_nom(text: &str) -> Result<Action, NotationError> {
        use nom::branch::alt;
        use nom::bytes::complete::tag;
        use nom::character::complete::{char, digit1, one_of};
        use nom::combinator::{all_consuming, map, map_opt, recognize, value};
        use nom::multi::separated_list1;
        use nom::sequence::pair;
        use nom::{IResult, Parser};

        fn point(i: &str) -> IResult<&str, Point> {
            map_opt(recognize(pair(one_of("abcdefghijk"), digit1)), Point::parse).parse(i)
        }
        let action = alt((
            value(Action::Pass, tag("pass")),
            map(separated_list1(char('-'), point), Action::Path),
        ));
        match all_consuming(action).parse(text) {
            Ok((_, Action::Path(p))) if p.len() < 2 => Err(NotationError::OnePoint),
            Ok((_, a)) => Ok(a),
            Err(_) => Err(NotationError::NotPoints),
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(5000))]

        /// The hand-written parser agrees with the nom grammar, errors included.
        #[test]
        fn parse_agrees_with_the_nom_grammar(text in "(pass|[a-l]?[-+0-9١]{0,4}|[a-k][0-9]{1,2}|-|é){0,5}") {
            proptest::prop_assert_eq!(Action::parse(&text), parse_by_nom(&text), "{}", text);
        }
    }
}
