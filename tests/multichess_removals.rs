//! R-M7c wherever a seat's knowledge is printed. Pairs of Multi-player TelnChes
//! games of 3 to 8 seats differ only in pieces of the forfeiting seat that a viewer
//! never saw, in the forfeiter's own areas (which the forfeit opens to everybody) and
//! elsewhere. Every viewer must get the same bytes from both games of a pair on every
//! channel: what its bot is sent in a match (its transcript), the backlog a resumed
//! game sends it, `show --seat` (text, SVG, the HTML viewer), `serve`'s `events` and
//! `information_state`, and its play-by-mail messages.
//!
//! Two kinds of pairs: random tables (a random game's position, with the forfeiter's
//! pieces changed on squares the viewer cannot see), and games from the start in
//! which the forfeiter plays different moves inside its own area while seat 1 raids
//! it with a knight, so that the viewer saw some of that area and not the rest.

mod cli_support;
mod removal_channels;

use std::collections::BTreeMap;

use referee::game::{ActionKind, ForfeitKind, Game, GameId, Options, Seat, Turn};
use referee::rng::Rng;
use removal_channels::{channels, TELL_THE_FORFEIT};

/// Actions in turn order: `(seat, action)`.
type Plays = Vec<(usize, String)>;

/// One game of a pair: played from `state` (or the start), `before` the forfeit of
/// seat `forfeit` (which is then to act), and `after` it.
#[derive(Clone, Debug)]
struct Side {
    players: usize,
    state: Option<String>,
    before: Plays,
    forfeit: usize,
    after: Plays,
}

/// Two games that the seats of `viewers` cannot tell apart.
struct Twins {
    name: String,
    a: Side,
    b: Side,
    viewers: Vec<usize>,
}

/// What the viewers got: `(channel, seat)` to the bytes.
type Got = BTreeMap<(&'static str, usize), String>;

fn seat(n: usize) -> Seat {
    Seat::new(n).unwrap()
}

fn options(players: usize) -> Options {
    Options::parse([format!("players={players}").as_str()]).unwrap()
}

fn new_game(players: usize, state: Option<&str>) -> Box<dyn Game> {
    GameId::MultiChess
        .create(&options(players), state)
        .unwrap_or_else(|e| panic!("cannot create from {state:?}: {e}"))
}

fn play_all(g: &mut dyn Game, plays: &[(usize, String)]) {
    for (s, action) in plays {
        let before = g.state();
        g.play(seat(*s), action)
            .unwrap_or_else(|e| panic!("seat {s} `{action}` rejected in `{before}`: {e}"));
    }
}

fn remaining(g: &dyn Game) -> Vec<usize> {
    Seat::all(g.seat_count())
        .filter(|&s| !g.is_out(s))
        .map(Seat::number)
        .collect()
}

/// Whether `action` of `mover` goes into another seat's private area.
fn raid(action: &str, mover: usize) -> bool {
    action
        .split_once('-')
        .and_then(|(_, to)| to.split_once(':'))
        .is_some_and(|(area, _)| area != mover.to_string())
}

/// One round of the seats left in `g`, each playing a random legal action.
fn round(g: &mut dyn Game, rng: &mut Rng) -> Plays {
    let mut plays = Vec::new();
    for _ in 0..remaining(g).len() {
        let Turn::Act { seat: s, .. } = g.turn() else {
            break;
        };
        let legal = g.legal_actions();
        let action = legal[rng.below(legal.len())].clone();
        play_all(g, &[(s.number(), action.clone())]);
        plays.push((s.number(), action));
    }
    plays
}

/// The pair of `a` and `b` (each from its start and `before` moves to the moment
/// `forfeit` is to act), with one round of play after the forfeit; its viewers are
/// the seats still playing whose views are the same in both.
fn twins(name: String, a: Side, b: Side, rng: &mut Rng) -> Twins {
    let (n, f) = (a.players, a.forfeit);
    let mut ga = new_game(n, a.state.as_deref());
    let mut gb = new_game(n, b.state.as_deref());
    play_all(ga.as_mut(), &a.before);
    play_all(gb.as_mut(), &b.before);
    assert_eq!(
        ga.turn(),
        Turn::Act {
            seat: seat(f),
            kind: ActionKind::Move
        }
    );
    assert_ne!(ga.state(), gb.state(), "{name}: the twins are two games");
    let viewers: Vec<usize> = remaining(ga.as_ref())
        .into_iter()
        .filter(|&j| j != f && ga.view(seat(j)).text() == gb.view(seat(j)).text())
        .collect();
    ga.forfeit(seat(f), ForfeitKind::Resign);
    gb.forfeit(seat(f), ForfeitKind::Resign);
    assert_eq!(
        ga.state(),
        gb.state(),
        "{name}: the twins differ only in seat {f}'s pieces"
    );
    let after = round(ga.as_mut(), rng);
    let side = |s: Side| Side {
        after: after.clone(),
        ..s
    };
    Twins {
        name,
        a: side(a),
        b: side(b),
        viewers,
    }
}

// --- the pairs ---------------------------------------------------------------------------

/// The 32 cells of an area field of a state or view (`.`, `?` or a piece).
fn cells(field: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for c in field.chars().filter(|&c| c != '/') {
        if c.is_ascii_digit() {
            out.last_mut().expect("a piece letter before its seat").push(c);
        } else {
            out.push(c.to_string());
        }
    }
    assert_eq!(out.len(), 32, "an area of 32 cells: `{field}`");
    out
}

fn area_field(cells: &[String]) -> String {
    cells.chunks(8).map(|r| r.concat()).collect::<Vec<_>>().join("/")
}

/// The position of a random game of `players` from the start, with 3 seats or more
/// still playing; moves into other seats' areas are preferred, so that seats see into
/// areas they do not own.
fn random_table(players: usize, rng: &mut Rng) -> Option<String> {
    let mut g = new_game(players, None);
    for _ in 0..10 + rng.below(50) {
        let Turn::Act { seat: s, .. } = g.turn() else {
            return None;
        };
        let legal = g.legal_actions();
        let raids: Vec<&String> = legal.iter().filter(|a| raid(a, s.number())).collect();
        let action = match raids.len() {
            n if n > 0 && rng.below(3) > 0 => raids[rng.below(n)].clone(),
            _ => legal[rng.below(legal.len())].clone(),
        };
        play_all(g.as_mut(), &[(s.number(), action)]);
    }
    (remaining(g.as_ref()).len() >= 3).then(|| g.state())
}

/// Squares as `(area, cell index)`: area 1 to N, cells as [`cells`] lists them.
type Squares = Vec<(usize, usize)>;

/// The squares of the state `fields` that seat `f`'s pieces may be put on or taken
/// from unseen by the seat whose view is `view` (empty, or holding a piece of `f`
/// other than its king, and `?` in the view): those in areas `f` owns, which its
/// forfeit opens to all, and the others.
fn changeable(fields: &[String], view: &str, f: usize) -> (Squares, Squares) {
    let players = fields.len() - 6;
    let view: Vec<&str> = view.split(' ').collect();
    let owners: Vec<&str> = fields[players + 3].split(',').collect();
    let (mut opened, mut elsewhere) = (Vec::new(), Vec::new());
    for area in 1..=players {
        let (truth, seen) = (cells(&fields[area]), cells(view[area]));
        for i in (0..32).filter(|&i| seen[i] == "?") {
            let own = truth[i].len() > 1 && truth[i][1..] == f.to_string();
            if truth[i] == "." || (own && !truth[i].starts_with('K')) {
                let list = if owners[area - 1] == f.to_string() {
                    &mut opened
                } else {
                    &mut elsewhere
                };
                list.push((area, i));
            }
        }
    }
    (opened, elsewhere)
}

/// `fields` with a random piece of `f` put on each empty square of `squares` and the
/// piece on each other one taken away.
fn toggled(fields: &[String], squares: &[(usize, usize)], f: usize, rng: &mut Rng) -> Vec<String> {
    let mut other = fields.to_vec();
    for &(area, i) in squares {
        let mut c = cells(&other[area]);
        c[i] = match c[i].as_str() {
            "." => format!("{}{f}", ['Q', 'R', 'B', 'N', 'P'][rng.below(5)]),
            _ => ".".to_string(),
        };
        other[area] = area_field(&c);
    }
    other
}

/// A random table and its twin: seat `f` (then to move) has pieces added or taken away
/// on squares seat `k` cannot see, at least one of them in an area `f` owns.
fn table_twins(players: usize, seed: u64) -> Twins {
    let mut rng = Rng::new(seed);
    loop {
        let Some(state) = random_table(players, &mut rng) else {
            continue;
        };
        let g = new_game(players, Some(&state));
        let left = remaining(g.as_ref());
        let f = left[rng.below(left.len())];
        let others: Vec<usize> = left.iter().copied().filter(|&s| s != f).collect();
        let k = others[rng.below(others.len())];
        let mut fields: Vec<String> = state.split(' ').map(str::to_string).collect();
        fields[players + 1] = f.to_string();
        let (opened, elsewhere) = changeable(&fields, g.view(seat(k)).text(), f);
        if opened.is_empty() {
            continue;
        }
        let mut changed: Squares = (0..1 + rng.below(4))
            .map(|_| opened[rng.below(opened.len())])
            .collect();
        for _ in 0..rng.below(3).min(elsewhere.len()) {
            changed.push(elsewhere[rng.below(elsewhere.len())]);
        }
        changed.sort();
        changed.dedup();
        let other = toggled(&fields, &changed, f, &mut rng);
        let side = |fields: &[String]| Side {
            players,
            state: Some(fields.join(" ")),
            before: Vec::new(),
            forfeit: f,
            after: Vec::new(),
        };
        let name = format!("{players} seats, seat {f} forfeits, seed {seed}");
        let t = twins(name, side(&fields), side(&other), &mut rng);
        assert!(
            t.viewers.contains(&k),
            "{}: seat {k} sees none of the changes",
            t.name
        );
        return t;
    }
}

/// From the start: seat 1's knight goes `1:g1-1:f3`, `1:f3-e5`, `e5-2:d3` and so
/// sees part of area 2; seat 2 plays `seat2` (moves inside its own area, on squares
/// that knight never sees), the other seats move pawns; then seat 2 forfeits.
fn opening(players: usize, seat2: [&str; 2]) -> Side {
    let mut before: Plays = Vec::new();
    for (r, knight) in ["1:g1-1:f3", "1:f3-e5"].into_iter().enumerate() {
        before.push((1, knight.to_string()));
        before.push((2, seat2[r].to_string()));
        for s in 3..=players {
            before.push((s, format!("{s}:{file}2-{s}:{file}3", file = ["a", "b"][r])));
        }
    }
    before.push((1, "e5-2:d3".to_string()));
    Side {
        players,
        state: None,
        before,
        forfeit: 2,
        after: Vec::new(),
    }
}

fn opening_twins(players: usize, seed: u64) -> Twins {
    let a = opening(players, ["2:g1-2:h3", "2:a2-2:a4"]);
    let b = opening(players, ["2:b1-2:a3", "2:h2-2:h4"]);
    let t = twins(
        format!("{players} seats from the start"),
        a,
        b,
        &mut Rng::new(seed),
    );
    assert_eq!(
        t.viewers.len(),
        players - 1,
        "{}: every other seat is a viewer",
        t.name
    );
    t
}

/// The first line where `a` and `b` differ, for the message.
fn first_difference(a: &str, b: &str) -> String {
    let (la, lb): (Vec<&str>, Vec<&str>) = (a.lines().collect(), b.lines().collect());
    let i = (0..la.len().max(lb.len()))
        .find(|&i| la.get(i) != lb.get(i))
        .unwrap_or(0);
    let cut = |s: Option<&&str>| s.map_or("(nothing)".to_string(), |s| s.chars().take(300).collect());
    format!("line {}: `{}` / `{}`", i + 1, cut(la.get(i)), cut(lb.get(i)))
}

/// Runs every pair through every channel and fails naming each pair, channel and
/// seat whose bytes differ (so a leak shows how far it reaches).
fn check(pairs: &[Twins]) {
    let mut differ: Vec<String> = Vec::new();
    let mut by_channel: BTreeMap<&str, usize> = BTreeMap::new();
    let (mut compared, mut pairs_differing) = (0, 0);
    for t in pairs {
        let (a, b) = (channels(&t.a, &t.viewers), channels(&t.b, &t.viewers));
        assert_eq!(a.len(), b.len());
        let forfeit = format!("forfeit {} ", t.a.forfeit);
        let before = differ.len();
        for (key, bytes) in &a {
            // The control: the bytes compared are about the forfeit.
            let told = !TELL_THE_FORFEIT.contains(&key.0) || bytes.contains(&forfeit);
            assert!(told, "{}: {key:?} tells no forfeit", t.name);
            compared += 1;
            if b[key] != *bytes {
                *by_channel.entry(key.0).or_default() += 1;
                let (channel, j) = key;
                let at = first_difference(bytes, &b[key]);
                differ.push(format!("{}: {channel} to seat {j}: {at}", t.name));
            }
        }
        pairs_differing += usize::from(differ.len() > before);
    }
    eprintln!(
        "{} pairs, {compared} comparisons, {pairs_differing} pairs differ",
        pairs.len()
    );
    assert!(
        differ.is_empty(),
        "R-M7c: {pairs_differing} of {} pairs differ for a seat that cannot tell them apart \
         (viewers by channel: {by_channel:?}):\n{}",
        pairs.len(),
        differ.join("\n")
    );
}

#[test]
fn r_m7c_random_tables_of_3_to_8_seats_read_the_same_on_every_channel() {
    let pairs: Vec<Twins> = (3..=8).map(|n| table_twins(n, 700 + n as u64)).collect();
    assert!(pairs.iter().all(|t| !t.viewers.is_empty()));
    check(&pairs);
}

#[test]
fn r_m7c_games_from_the_start_of_3_to_8_seats_read_the_same_on_every_channel() {
    let pairs: Vec<Twins> = (3..=8).map(|n| opening_twins(n, 900 + n as u64)).collect();
    check(&pairs);
}

/// protocol.md's example of what a forfeit tells (the opening of the pairs above with
/// 3 seats): the events seat 1 is sent, area 2 in its view, and seat 3's events.
#[test]
fn r_m7c_the_removal_example_of_protocol_md() {
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/protocol.md")).unwrap();
    let (_, example) = doc.split_once("Seat 1 is sent\n\n```\n").expect("the example");
    let block: Vec<&str> = example.split_once("```").unwrap().0.lines().collect();
    let mut g = new_game(3, None);
    play_all(g.as_mut(), &opening(3, ["2:g1-2:h3", "2:a2-2:a4"]).before);
    let p = g.forfeit(seat(2), ForfeitKind::Illegal);
    let sent = |s: usize| -> Vec<String> {
        p.seat_events[s - 1]
            .iter()
            .map(|e| format!("event {}", e.text()))
            .collect()
    };
    assert_eq!(block, sent(1));
    let area = g.view(seat(1)).text().split(' ').nth(2).unwrap().to_string();
    assert!(example.contains(&format!("as `{area}`")), "area 2 reads `{area}`");
    assert_eq!(sent(3), ["event forfeit 2 illegal", "event remove 2 0"]);
    let prose = example.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(prose.contains("sent `event forfeit 2 illegal` and `event remove 2 0`"));
}
