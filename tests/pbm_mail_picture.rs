//! The picture every mail to a seat carries (issue 17), through the real binary: it
//! is byte for byte `show --format svg --ply K --seat N` of the record as the mail
//! left it, in every game, and it holds only what that seat may know: two games
//! whose hidden parts differ but which seat 1 saw alike give seat 1 the same
//! pictures, byte for byte, while the seat that knows the difference gets different
//! ones.

mod cli_support;

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use cli_support::mail::{mailed, show_svg, Mailed};
use cli_support::{referee_in, text};

const RECORD: &str = "game.jsonl";

/// A game by mail into outbox Maildirs (`out/s1`, `out/s2`), in its own directory.
struct Game {
    dir: tempfile::TempDir,
    game: &'static str,
    /// The mail files read so far (Maildir names do not sort by time).
    seen: HashSet<PathBuf>,
}

impl Game {
    fn new(game: &'static str, options: &[&str]) -> Game {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let g = Game {
            dir,
            game,
            seen: HashSet::new(),
        };
        let mut args = vec!["pbm", "new", "--game", game];
        for o in options {
            args.extend(["-o", o]);
        }
        args.extend(["--seat", "s1", "--address", "s1@example.org"]);
        args.extend(["--seat", "s2", "--address", "s2@example.org"]);
        args.extend(["--outbox", "out", RECORD]);
        g.run(&args);
        g
    }

    fn dir(&self) -> &Path {
        self.dir.path()
    }

    fn run(&self, args: &[&str]) {
        let out = referee_in(self.dir())
            .args(args)
            .output()
            .expect("the binary runs");
        assert!(out.status.success(), "{args:?}: {}", text(&out.stderr));
    }

    /// `seat` plays `action`.
    fn play(&self, seat: usize, action: &str) {
        self.run(&["pbm", "play", RECORD, "--seat", &seat.to_string(), action]);
    }

    /// The one mail each seat got since the last call, checked for shape.
    fn mails(&mut self) -> Vec<Mailed> {
        (1..=2)
            .map(|seat| {
                let new = self.dir().join(format!("out/s{seat}/new"));
                let fresh: Vec<PathBuf> = std::fs::read_dir(&new)
                    .expect("the seat's Maildir")
                    .map(|e| e.expect("an entry").path())
                    .filter(|f| self.seen.insert(f.clone()))
                    .collect();
                assert_eq!(fresh.len(), 1, "one mail to seat {seat}");
                let last = &fresh[0];
                mailed(&std::fs::read(last).expect("a mail"), self.game, seat)
            })
            .collect()
    }

    /// Checks each seat's picture is what `show` draws for it at the mail's ply.
    fn assert_shown(&self, mails: &[Mailed]) {
        for (i, m) in mails.iter().enumerate() {
            let shown = show_svg(self.dir(), RECORD, m.ply, i + 1);
            assert!(
                m.svg == shown,
                "seat {}'s attachment is not show's picture",
                i + 1
            );
        }
    }
}

/// Plays `a` and `b` side by side, seat 1's actions the same in both; after every
/// action each mail's picture is `show`'s, seat 1's pictures are the same in both
/// games and, once seat 2 has acted, seat 2's differ (it knows what seat 1 cannot).
fn side_by_side(mut a: Game, mut b: Game, moves: &[(usize, &str, &str)]) -> (Vec<String>, Vec<String>) {
    let (first_a, first_b) = (a.mails(), b.mails());
    assert_eq!(first_a[0].svg, first_b[0].svg);
    let (mut seat1_b, mut seat2_b) = (vec![first_b[0].svg.clone()], Vec::new());
    for (seat, in_a, in_b) in moves {
        a.play(*seat, in_a);
        b.play(*seat, in_b);
        let (got_a, got_b) = (a.mails(), b.mails());
        a.assert_shown(&got_a);
        b.assert_shown(&got_b);
        assert!(
            got_a[0].svg == got_b[0].svg,
            "seat 1's picture after {in_a} / {in_b} tells the games apart"
        );
        assert_eq!(got_a[0].name, got_b[0].name);
        if in_a != in_b {
            assert_ne!(got_a[1].svg, got_b[1].svg, "seat 2 sees what differs");
        }
        seat1_b.push(got_b[0].svg.clone());
        seat2_b.push(got_b[1].svg.clone());
    }
    (seat1_b, seat2_b)
}

#[test]
fn idoubtit_pictures_hide_the_types_a_seat_cannot_see() {
    let options = ["variant=0"];
    let (a, b) = (Game::new("idoubtit", &options), Game::new("idoubtit", &options));
    // Seat 2 places its king on e8 in one game, its queen in the other.
    let moves = [(1, "K@e1", "K@e1"), (2, "K@e8", "Q@e8"), (1, "R@a1", "R@a1")];
    let (seat1, seat2) = side_by_side(a, b, &moves);
    // No queen is placed but seat 2's hidden one: seat 1 never sees its type.
    let queen = '\u{265B}';
    assert!(
        seat1.iter().all(|svg| !svg.contains(queen)),
        "seat 1 sees no queen"
    );
    assert!(
        seat2[1..].iter().all(|svg| svg.contains(queen)),
        "seat 2 sees its own queen once placed"
    );
}

#[test]
fn multichess_pictures_hide_the_private_areas_a_seat_cannot_see() {
    let (a, b) = (Game::new("multichess", &[]), Game::new("multichess", &[]));
    // Seat 2 moves inside its own area, unseen by seat 1: a rook's pawn, left or right.
    let moves = [
        (1, "1:b1-1:c3", "1:b1-1:c3"),
        (2, "2:a2-2:a3", "2:h2-2:h4"),
        (1, "1:e2-1:e3", "1:e2-1:e3"),
    ];
    side_by_side(a, b, &moves);
}

#[test]
fn pegchow_and_telka_mails_carry_the_seats_pictures() {
    for (game, first, second) in [("pegchow", None, None), ("telka", Some("a1-c3"), Some("k11-i9"))] {
        let mut g = Game::new(game, &[]);
        let start = g.mails();
        g.assert_shown(&start);
        assert!(start.iter().all(|m| m.ply == 0), "{game}");
        let first = first.map_or_else(|| legal(&start[0].body), str::to_string);
        g.play(1, &first);
        let after = g.mails();
        g.assert_shown(&after);
        let second = second.map_or_else(|| legal(&after[1].body), str::to_string);
        g.play(2, &second);
        let last = g.mails();
        g.assert_shown(&last);
        assert!(last.iter().all(|m| m.ply == 2), "{game}");
        // Each seat's own view: the two pictures of one ply are not one picture.
        assert_ne!(last[0].svg, last[1].svg, "{game}");
    }
}

/// The first legal action a message lists.
fn legal(body: &str) -> String {
    cli_support::legal_of(&body.replace("\r\n", "\n"))
        .into_iter()
        .next()
        .expect("a legal action")
}
