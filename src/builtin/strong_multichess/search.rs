//! The search of one decision: alpha-beta on the believed board, the bot against
//! "the others" as one opponent (paranoid), and the evaluation at its leaves.

use super::{estimate, worth, WIN};
use crate::builtin::multichess::distance;
use crate::builtin::strong::{Budget, Node};
use crate::game::multichess::board::{Area, Kind, Piece, Square};
use crate::game::multichess::rules::{Move, Position};
use crate::game::Seat;

/// Moves searched per full-width node below the root.
const BEAM: usize = 10;

/// Captures searched per node of the capture-only search.
const CAPTURE_BEAM: usize = 6;

/// Below this much material besides king and pawns, against bare kings, the bot's
/// king turns hunter: staying home then only waits for the ply limit (R-M6).
const HUNTER: i64 = 500;

/// What a rank is worth to a pawn of a bot left with less than `HUNTER` besides
/// king and pawns.
const PUSH: i64 = 40;

/// What the hunting king pays for standing on public rank 5, where an enemy king on
/// an unseen rank 4 may take it.
const FOG_EDGE: i64 = 150;

/// What the king standing where a hidden slider may reach costs.
const EXPOSED_KING: i64 = 300;

/// One decision's search.
pub(super) struct Search {
    /// The seat the bot plays.
    me: Seat,
    /// Nodes searched so far.
    nodes: u64,
    /// When to stop.
    budget: Budget,
    /// The ply of the decision, so that a loss further away scores better.
    root_plies: u32,
    /// Captures the others may make in a row before the bot answers: with three
    /// seats or more, several seats move between two moves of the bot, and each
    /// takes what it can.
    streak: u8,
    /// How many hidden enemy pieces may strike each square (`fog::exposed`).
    exposed: Vec<u8>,
    /// The seats (by index) whose king is only guessed (`Belief::guessed_kings`).
    guessed: Vec<bool>,
    /// The squares in sight at the decision, by index: a king elsewhere is only
    /// remembered there.
    seen: Vec<bool>,
}

impl Search {
    /// A search for the seat to move in `board`, within `budget`; `exposed` as
    /// `fog::exposed` gives it, `guessed` as `Belief::guessed_kings` does, `seen`
    /// as the view shows it.
    pub(super) fn new(
        board: &Position,
        budget: Budget,
        exposed: Vec<u8>,
        guessed: Vec<bool>,
        seen: Vec<bool>,
    ) -> Search {
        let streak = if board.remaining().len() >= 3 { 2 } else { 1 };
        Search {
            me: board.to_move,
            nodes: 0,
            budget,
            root_plies: board.plies,
            streak,
            exposed,
            guessed,
            seen,
        }
    }

    /// The best of `moves` searched `depth` full-width plies deep, each value less
    /// its `penalty`, or `None` when the budget ran out before the depth was
    /// searched through.
    pub(super) fn root(
        &mut self,
        board: &Position,
        moves: &[Move],
        depth: u32,
        penalty: impl Fn(&Move) -> i64,
    ) -> Option<(Move, i64)> {
        let mut best: Option<(Move, i64)> = None;
        let mut alpha = -WIN - 1;
        for mv in moves {
            let next = self.play(board, self.me, mv);
            let value = self.value(&next, depth - 1, alpha, WIN + 1)? - penalty(mv);
            if best.is_none_or(|(_, b)| value > b) {
                best = Some((*mv, value));
                alpha = alpha.max(value);
            }
        }
        best
    }

    /// `board` after `seat` plays `mv`, with the turn given to the other side of the
    /// search (the bot after any other seat, the others after the bot). A king only
    /// guessed is not there to be taken: the move that would take it finds the
    /// square empty (the likeliest outcome), so a probe is worth the look, not a
    /// win, and the line goes on with that seat's king unknown. So is a king only
    /// remembered, when the bot takes it while its own king hangs: the bot loses
    /// its king at once if the memory is stale, and trusting it lost games.
    fn play(&self, board: &Position, seat: Seat, mv: &Move) -> Position {
        let mut next = board.clone();
        let taken = next.make(seat, *mv);
        if let Some((sq, _)) = taken.captured.filter(|&(sq, p)| {
            p.kind == Kind::King
                && (self.guessed[p.owner.index()]
                    || (seat == self.me && !self.seen[sq.index()] && self.king_hangs(board)))
        }) {
            next = board.clone();
            next.squares[sq.index()] = None;
            next.make(seat, *mv);
        }
        next.to_move = if seat == self.me {
            next.next_seat(self.me)
        } else {
            self.me
        };
        next
    }

    /// Whether another seat takes the bot's king on `board` if the bot lets it.
    fn king_hangs(&self, board: &Position) -> bool {
        let Some(king) = board.all_squares().find(|&sq| {
            board.at(sq)
                == Some(Piece {
                    kind: Kind::King,
                    owner: self.me,
                })
        }) else {
            return false;
        };
        let others = board.remaining().into_iter().filter(|&s| s != self.me);
        others.into_iter().any(|s| {
            board.moves(s).into_iter().filter(|m| m.to == king).any(|m| {
                let mut after = board.clone();
                after.make(s, m).captured.is_some_and(|(at, _)| at == king)
            })
        })
    }

    /// Whether the bot is to move in `board` (else the others are).
    fn ours(&self, board: &Position) -> bool {
        board.to_move == self.me
    }

    /// Every move of the side to move, as (seat, move): the bot's, or all the others'.
    fn moves(&self, board: &Position) -> Vec<(Seat, Move)> {
        let seats: Vec<Seat> = if self.ours(board) {
            vec![self.me]
        } else {
            board.remaining().into_iter().filter(|&s| s != self.me).collect()
        };
        seats
            .into_iter()
            .flat_map(|s| board.moves(s).into_iter().map(move |m| (s, m)))
            .collect()
    }

    /// Counts a node; `None` once the budget is spent.
    fn tick(&mut self) -> Option<()> {
        self.nodes += 1;
        (!self.budget.spent(self.nodes)).then_some(())
    }

    /// Alpha-beta value of `board` for the bot, `depth` full-width plies deep.
    fn value(&mut self, board: &Position, depth: u32, alpha: i64, beta: i64) -> Option<i64> {
        self.tick()?;
        if let Some(end) = self.finished(board) {
            return Some(end);
        }
        if depth == 0 {
            return self.captures(board, alpha, beta, self.streak);
        }
        let ours = self.ours(board);
        let mut moves = self.moves(board);
        if moves.is_empty() {
            // Nobody on this side can move: they pass (R-M6).
            let mut next = board.clone();
            next.to_move = if ours { board.next_seat(self.me) } else { self.me };
            return self.value(&next, depth - 1, alpha, beta);
        }
        moves.sort_by_cached_key(|(_, m)| -estimate(board, m));
        moves.truncate(BEAM);
        let mut node = Node::new(ours, if ours { -WIN - 2 } else { WIN + 2 }, alpha, beta);
        for (seat, mv) in &moves {
            let next = self.play(board, *seat, mv);
            if node.take(self.value(&next, depth - 1, node.alpha, node.beta)?) {
                break;
            }
        }
        Some(node.best)
    }

    /// The capture-only search: the side to move may stop (the position as it
    /// stands) or capture, its most valuable captures first. The others may
    /// capture up to `left` times in a row before the bot answers.
    fn captures(&mut self, board: &Position, alpha: i64, beta: i64, left: u8) -> Option<i64> {
        let ours = self.ours(board);
        let stand = self.evaluate(board);
        let mut node = Node::new(ours, stand, alpha, beta);
        if node.take(stand) {
            return Some(stand);
        }
        let mut moves: Vec<(i64, Seat, Move)> = self
            .moves(board)
            .into_iter()
            .filter(|(_, m)| board.at(m.to).is_some())
            .map(|(s, m)| (estimate(board, &m), s, m))
            .collect();
        moves.sort_by_key(|(e, _, _)| -e);
        moves.truncate(CAPTURE_BEAM);
        for (_, seat, mv) in &moves {
            self.tick()?;
            let mut next = self.play(board, *seat, mv);
            let mut after = self.streak;
            if !ours && left > 1 {
                // Another seat moves before the bot does.
                next.to_move = next.next_seat(self.me);
                after = left - 1;
            }
            let v = match self.finished(&next) {
                Some(end) => end,
                None => self.captures(&next, node.alpha, node.beta, after)?,
            };
            if node.take(v) {
                break;
            }
        }
        Some(node.best)
    }

    /// The value of a finished game: the bot out (its king taken, R-M5) or last.
    /// A loss further off is worth more than a near one (another seat may well not
    /// play the line), and a win nearer more than a far one.
    fn finished(&self, board: &Position) -> Option<i64> {
        let plies = i64::from(board.plies - self.root_plies);
        if board.out.contains(&self.me) {
            return Some(-WIN + plies);
        }
        (board.remaining().len() == 1).then_some(WIN - plies)
    }

    /// The worth of the bot's pieces on `board` besides its king and pawns.
    fn officers(&self, board: &Position) -> i64 {
        let mine = board.squares.iter().flatten().filter(|p| p.owner == self.me);
        mine.filter(|p| !matches!(p.kind, Kind::King | Kind::Pawn))
            .map(|p| worth(p.kind))
            .sum()
    }

    /// The believed board's worth to the bot.
    fn evaluate(&self, board: &Position) -> i64 {
        let kings: Vec<Square> = board
            .all_squares()
            .filter(|&sq| {
                board
                    .at(sq)
                    .is_some_and(|p| p.kind == Kind::King && p.owner != self.me)
            })
            .collect();
        let toward = |sq: Square| kings.iter().map(|&k| distance(sq, k)).min().unwrap_or(0);
        let (mut mine, mut theirs, mut placing) = (0, 0, 0);
        // With little besides king and pawns, a queen is the way to a win: the
        // pawns push on, through the fog that would otherwise hold them back for
        // the whole game (its seat shared first at the ply limit, R-M6).
        let officers = self.officers(board);
        let pushing = officers < HUNTER;
        let mut king = None;
        for sq in board.all_squares() {
            let Some(p) = board.at(sq) else { continue };
            if p.owner != self.me {
                theirs += worth(p.kind);
                continue;
            }
            mine += worth(p.kind);
            // Lost in part: a piece may come out of the fog and take it, half lost
            // to one, wholly to two or more (counted as its own material is).
            placing -= match (self.exposed[sq.index()], p.kind) {
                (0, _) => 0,
                (_, Kind::King) => EXPOSED_KING,
                (_, Kind::Pawn) if pushing => 0,
                (1, kind) => 3 * worth(kind) / 4,
                (_, kind) => 3 * worth(kind) / 2,
            };
            placing += match p.kind {
                // Pawns on the way to promotion (public rank 8).
                Kind::Pawn if pushing => PUSH * i64::from(sq.rank),
                Kind::Pawn => 4 * i64::from(sq.rank),
                Kind::King => {
                    king = Some(sq);
                    0
                }
                // Other pieces towards the nearest enemy king, seen or believed, and
                // into foreign areas, where they see what they attack (R-M3).
                _ => {
                    let inside =
                        matches!(sq.area, Area::Private(a) if board.owners[a as usize] != Some(self.me));
                    -8 * toward(sq) + if inside { 30 } else { 0 }
                }
            };
        }
        // Without pieces to hunt with, against kings alone, the king hunts: a king
        // that steps next to it is taken (the search keeps it from stepping next to
        // one itself). It keeps off public rank 5, next to every enemy area's rank 4,
        // where a king may wait unseen.
        let hunter = officers < HUNTER && theirs == 0;
        placing += king.map_or(0, |sq| match (hunter, sq.area) {
            (true, Area::Public) if sq.rank == 4 => -10 * toward(sq) - FOG_EDGE,
            (true, _) => -10 * toward(sq),
            // The king at home, behind its pieces: out in the open any seat may
            // find it.
            (false, Area::Private(_)) => -20 * i64::from(sq.rank),
            (false, Area::Public) => -400,
        });
        let others = board.remaining().len() as i64 - 1;
        mine + mine / 2 - theirs + placing - 2_000 * others
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Puts `kind` of the seat numbered `seat` on `name`, or empties it.
    fn put(board: &mut Position, name: &str, piece: Option<(Kind, usize)>) {
        let sq = Square::parse(name, board.seats).unwrap();
        board.squares[sq.index()] = piece.map(|(kind, seat)| Piece {
            kind,
            owner: Seat::new(seat).unwrap(),
        });
    }

    #[test]
    fn a_remembered_king_is_no_win_while_its_own_king_hangs() {
        let mut board = Position::start(2);
        for sq in board.all_squares().collect::<Vec<_>>() {
            if sq.area == Area::Private(1) {
                board.squares[sq.index()] = None;
            }
        }
        put(&mut board, "2:e1", Some((Kind::King, 2)));
        put(&mut board, "e5", Some((Kind::Rook, 1)));
        put(&mut board, "1:e2", None);
        put(&mut board, "1:e3", Some((Kind::Queen, 2)));
        // Area 2 is out of sight: its king is only remembered on 2:e1.
        let seen = board
            .all_squares()
            .map(|sq| sq.area != Area::Private(1))
            .collect();
        let budget = Budget {
            nodes: 100_000,
            deadline: None,
        };
        let mut search = Search::new(&board, budget, vec![0; board.squares.len()], vec![false; 2], seen);
        let moves = board.moves(board.to_move);
        let (best, _) = search.root(&board, &moves, 2, |_| 0).unwrap();
        assert_ne!(
            best.to,
            Square::parse("2:e1", 2).unwrap(),
            "the probe leaves its king to the queen"
        );
        assert_eq!(best.to, Square::parse("1:e3", 2).unwrap(), "it takes the queen");
    }

    #[test]
    fn a_bot_left_with_pawns_pushes_them_through_the_fog() {
        let mut board = Position::start(3);
        for sq in board.all_squares().collect::<Vec<_>>() {
            if board
                .at(sq)
                .is_some_and(|p| p.owner.index() == 0 && p.kind != Kind::King)
            {
                board.squares[sq.index()] = None;
            }
        }
        put(&mut board, "1:a4", Some((Kind::Pawn, 1)));
        let mut ahead = board.clone();
        put(&mut ahead, "1:a4", None);
        put(&mut ahead, "a5", Some((Kind::Pawn, 1)));
        // Public a5 is next to two enemy areas' rank 4: struck twice from the fog.
        let mut exposed = vec![0; board.squares.len()];
        exposed[Square::parse("a5", 3).unwrap().index()] = 2;
        let budget = Budget {
            nodes: 1_000,
            deadline: None,
        };
        let seen = vec![true; board.squares.len()];
        let search = Search::new(&board, budget, exposed, vec![false; 3], seen);
        assert!(
            search.evaluate(&ahead) > search.evaluate(&board),
            "with pawns alone it pushes"
        );
        put(&mut board, "1:a1", Some((Kind::Rook, 1)));
        put(&mut ahead, "1:a1", Some((Kind::Rook, 1)));
        assert!(
            search.evaluate(&ahead) < search.evaluate(&board),
            "with a rook it keeps the pawn back"
        );
    }
}
