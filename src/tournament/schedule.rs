//! The deterministic game schedule of a tournament: which entrants sit where in each
//! game, and each game's seeds. Shards are slices of it by seating cycle, so the
//! games of a colour-swapped pair are always played (and scored) by one shard.

use crate::rng::Rng;

/// How tables are formed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Format {
    /// Every table of entrants plays.
    RoundRobin,
    /// The first entrant plays every table of the others.
    Gauntlet,
}

/// One scheduled game.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Scheduled {
    /// Position in the schedule, from 0.
    pub index: usize,
    /// The entrant in each seat, seat 1 first.
    pub seats: Vec<usize>,
    /// Seed for the game's built-in agents.
    pub seed: u64,
    /// Seed of the random opening, shared by the games of a colour-swapped pair.
    pub opening_seed: u64,
    /// The seating cycle this game belongs to: the games of one table that rotate
    /// its seating once (two seats: the colour-swapped pair), numbered from 0 through
    /// the schedule; its games share their opening.
    pub cycle: usize,
    /// The colour-swapped pair this game belongs to (two-seat games).
    pub pair: Option<usize>,
    /// The opening suite's line this game starts from (`--openings`), an index into
    /// the definition's openings; set by [`crate::tournament::Definition::schedule`].
    pub opening: Option<usize>,
}

/// A slice `index/count` of the schedule's seating cycles (`--shard 2/4` is index 1
/// of 4).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    /// 0-based slice number.
    pub index: usize,
    /// Number of slices.
    pub count: usize,
}

impl Shard {
    /// Parses `I/N` with 1 ≤ I ≤ N.
    pub fn parse(text: &str) -> Result<Shard, String> {
        let err = || format!("--shard `{text}`: expected I/N with 1 ≤ I ≤ N, e.g. 2/4");
        let (i, n) = text.split_once('/').ok_or_else(err)?;
        let (i, n): (usize, usize) = (i.parse().map_err(|_| err())?, n.parse().map_err(|_| err())?);
        if i == 0 || i > n {
            return Err(err());
        }
        Ok(Shard {
            index: i - 1,
            count: n,
        })
    }

    /// Whether `game` belongs to this shard: by its seating cycle, never by its own
    /// index, which would give the two games of a colour-swapped pair to different
    /// shards (and, with an even count, one colour only to each).
    pub fn contains(&self, game: &Scheduled) -> bool {
        game.cycle % self.count == self.index
    }
}

/// The most games a schedule may hold. The schedule is built in memory before the
/// first game (about a hundred bytes a game), so a mistyped `--games` must not
/// exhaust the machine; a million games is more than any SPRT run needs.
pub const MAX_GAMES: usize = 1_000_000;

/// `n` choose `k`, or `None` past `usize`.
fn binomial(n: usize, k: usize) -> Option<usize> {
    let k = k.min(n.saturating_sub(k));
    (0..k).try_fold(1usize, |acc, i| acc.checked_mul(n - i).map(|x| x / (i + 1)))
}

/// All `k`-element subsets of `items`, in lexicographic order.
fn combinations(items: &[usize], k: usize) -> Vec<Vec<usize>> {
    if k == 0 {
        return vec![Vec::new()];
    }
    let mut out = Vec::new();
    for (i, &first) in items.iter().enumerate() {
        for mut rest in combinations(&items[i + 1..], k - 1) {
            rest.insert(0, first);
            out.push(rest);
        }
    }
    out
}

/// Builds the schedule: for every round, every table (of `seats` distinct entrants
/// out of `entrants`), `games` games whose seatings rotate through the table so
/// every entrant sits in every seat equally often (two seats: colour-swapped pairs).
pub fn build(
    format: Format,
    entrants: usize,
    seats: usize,
    games: usize,
    rounds: usize,
    seed: u64,
) -> Result<Vec<Scheduled>, String> {
    if entrants < 2 {
        return Err("a tournament needs at least two entrants".into());
    }
    if entrants < seats {
        return Err(format!(
            "{entrants} entrants cannot fill a table of {seats} seats"
        ));
    }
    if games == 0 || games % seats != 0 {
        return Err(format!("--games {games}: use a positive multiple of {seats} so every entrant sits in every seat equally often"));
    }
    let tables = match format {
        Format::RoundRobin => binomial(entrants, seats),
        Format::Gauntlet => binomial(entrants - 1, seats - 1),
    };
    let total = tables.and_then(|t| t.checked_mul(games)?.checked_mul(rounds));
    if total.is_none_or(|n| n > MAX_GAMES) {
        return Err(format!(
            "the schedule would hold {} games, more than the {MAX_GAMES} a tournament may have: use fewer --games, --rounds or entrants",
            total.map_or("more than 10^19".to_string(), |n| n.to_string())
        ));
    }
    let all: Vec<usize> = (0..entrants).collect();
    let tables: Vec<Vec<usize>> = match format {
        Format::RoundRobin => combinations(&all, seats),
        Format::Gauntlet => combinations(&all[1..], seats - 1)
            .into_iter()
            .map(|mut t| {
                t.insert(0, 0);
                t
            })
            .collect(),
    };
    let mut out = Vec::new();
    // A cycle is one pass through a table's rotations; its games share an opening,
    // and with two seats it is the colour-swapped pair.
    let mut cycles = 0;
    for _round in 0..rounds {
        for table in &tables {
            for g in 0..games {
                // Rotation g mod S puts entrant t[(s + g) mod S] in seat s.
                let rot = g % seats;
                let seated: Vec<usize> = (0..seats).map(|s| table[(s + rot) % seats]).collect();
                let index = out.len();
                let cycle = cycles + g / seats;
                out.push(Scheduled {
                    index,
                    seats: seated,
                    seed: Rng::derive(seed, index as u64 + 1),
                    opening_seed: Rng::derive(seed ^ 0x6f70_656e, cycle as u64 + 1),
                    cycle,
                    pair: (seats == 2).then_some(cycle),
                    opening: None,
                });
            }
            cycles += games / seats;
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seat_counts(s: &[Scheduled], entrants: usize, seats: usize) -> Vec<Vec<usize>> {
        let mut counts = vec![vec![0; seats]; entrants];
        for g in s {
            for (seat, &who) in g.seats.iter().enumerate() {
                counts[who][seat] += 1;
            }
        }
        counts
    }

    #[test]
    fn every_entrant_sits_in_every_seat_equally_often() {
        for (entrants, seats) in [(2, 2), (5, 2), (3, 3), (4, 3), (5, 4), (4, 4)] {
            let s = build(Format::RoundRobin, entrants, seats, seats * 2, 1, 7).unwrap();
            for row in seat_counts(&s, entrants, seats) {
                assert!(row.iter().all(|&c| c == row[0]), "{entrants}/{seats}: {row:?}");
            }
        }
    }

    #[test]
    fn pairs_share_openings_and_swap_colours() {
        let s = build(Format::Gauntlet, 3, 2, 4, 1, 1).unwrap();
        assert_eq!(s.len(), 8);
        for pair in s.chunks(2) {
            assert_eq!(pair[0].seats, vec![pair[1].seats[1], pair[1].seats[0]]);
            assert_eq!(pair[0].opening_seed, pair[1].opening_seed);
            assert_eq!(pair[0].pair, pair[1].pair);
        }
        assert!(
            s.iter().all(|g| g.seats.contains(&0)),
            "gauntlet: entrant 1 always plays"
        );
        assert_ne!(s[0].opening_seed, s[2].opening_seed);
    }

    #[test]
    fn shards_are_disjoint_and_cover_the_schedule() {
        let s = build(Format::RoundRobin, 4, 2, 2, 3, 9).unwrap();
        for n in 1..5 {
            let mut seen = vec![0; s.len()];
            for i in 0..n {
                let shard = Shard { index: i, count: n };
                for g in s.iter().filter(|g| shard.contains(g)) {
                    seen[g.index] += 1;
                }
            }
            assert!(seen.iter().all(|&c| c == 1));
        }
        assert_eq!(Shard::parse("2/4"), Ok(Shard { index: 1, count: 4 }));
        for bad in ["0/4", "5/4", "x", "1/0", "1/"] {
            assert!(Shard::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_shard_holds_whole_seating_cycles_and_both_colours() {
        // Regression: sharding by game index gave game 2k to one shard and 2k+1 to
        // another, so no shard ever completed a pair.
        for seats in [2, 3, 4] {
            let s = build(Format::RoundRobin, 4, seats, seats * 2, 2, 5).unwrap();
            for n in [2, 3, 4] {
                for i in 0..n {
                    let shard = Shard { index: i, count: n };
                    let mine: Vec<&Scheduled> = s.iter().filter(|g| shard.contains(g)).collect();
                    for g in &s {
                        let same_cycle = mine.iter().filter(|m| m.cycle == g.cycle).count();
                        assert!(same_cycle == 0 || same_cycle == seats, "{seats} seats, {i}/{n}");
                    }
                    // Each shard is seat-balanced on its own: every entrant sits in
                    // every seat equally often.
                    let owned: Vec<Scheduled> = mine.iter().map(|g| (*g).clone()).collect();
                    for row in seat_counts(&owned, 4, seats) {
                        assert!(
                            row.iter().all(|&c| c == row[0]),
                            "{seats} seats, {i}/{n}: {row:?}"
                        );
                    }
                }
            }
        }
        let s = build(Format::RoundRobin, 3, 3, 6, 1, 5).unwrap();
        let cycles: Vec<usize> = s.iter().map(|g| g.cycle).collect();
        assert_eq!(cycles, [0, 0, 0, 1, 1, 1]);
    }

    #[test]
    fn rejects_unbalanced_or_impossible_schedules() {
        assert!(build(Format::RoundRobin, 2, 3, 3, 1, 1).is_err());
        assert!(build(Format::RoundRobin, 4, 3, 4, 1, 1).is_err());
        assert!(build(Format::RoundRobin, 1, 2, 2, 1, 1).is_err());
        assert!(build(Format::RoundRobin, 2, 2, usize::MAX - 1, 1, 1).is_err());
        assert!(build(Format::RoundRobin, 2, 2, 2, usize::MAX, 1).is_err());
        assert!(build(Format::RoundRobin, 100, 2, 2, 102, 1).is_err());
        assert!(build(Format::RoundRobin, 100, 2, 2, 100, 1).is_ok_and(|s| s.len() == 990_000));
        assert_eq!(binomial(5, 2), Some(10));
        assert_eq!(binomial(8, 8), Some(1));
        assert_eq!(binomial(3, 0), Some(1));
    }
}
