//! The statistics of a tournament from its finished games: each entrant's standing
//! (wins, draws and losses, Elo and likelihood of superiority for two seats, average
//! place and a Weng-Lin rating for more), head-to-head pairings, the SPRT, and the
//! table printed from them. Its own room because it is pure arithmetic over
//! [`GameResult`]s, the same for one run and for merged shards.

use std::fmt::Write as _;

use serde::Serialize;

use super::results::GameResult;
use super::stats::{self, Pentanomial, Sprt, SprtState, Wdl};
use super::{Definition, TournamentError};
use crate::game::ForfeitKind;

/// One entrant's line in the final table.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Standing {
    /// Name.
    pub name: String,
    /// Games played.
    pub games: u32,
    /// Wins, draws, losses (two-seat games) against the field.
    pub wins: u32,
    /// Draws.
    pub draws: u32,
    /// Losses.
    pub losses: u32,
    /// Points: a win 1, a draw ½ (two seats).
    pub points: f64,
    /// Score per game (two seats), or average place (more seats).
    pub score: f64,
    /// Elo against the field, with the 95% half-width (two seats).
    pub elo: Option<(f64, f64)>,
    /// Likelihood of superiority against the field (two seats).
    pub los: Option<f64>,
    /// Average place (multi-seat).
    pub average_place: f64,
    /// Weng-Lin rating and uncertainty (multi-seat).
    pub rating: Option<(f64, f64)>,
    /// Games lost on time (or a handshake timeout).
    pub timeouts: u32,
    /// Games lost by crashing.
    pub crashes: u32,
    /// Games lost by an illegal action.
    pub illegal: u32,
    /// Games lost by a protocol error.
    pub protocol: u32,
}

/// Head-to-head figures for one pair of entrants, over the games both sat in. In a
/// game of more seats the one placed ahead wins and a shared place is a draw, so
/// that "how does A do against B" has an answer there too.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Pairing {
    /// First entrant's name.
    pub first: String,
    /// Second entrant's name.
    pub second: String,
    /// First's wins, draws, losses against the second.
    pub wdl: (u32, u32, u32),
    /// First's score against the second (a draw counts half).
    pub score: f64,
    /// The score's 95% interval (Wilson).
    pub score_interval: (f64, f64),
    /// Elo of the first over the second, with the 95% half-width.
    pub elo: (f64, f64),
    /// Likelihood that the first is stronger.
    pub los: f64,
    /// Draws per game.
    pub draw_ratio: f64,
    /// Pentanomial counts of the first's game-pair totals (0, ½, 1, 1½, 2), for
    /// two-seat games, whose colour-swapped pairs they count; `null` for more seats.
    pub pentanomial: Option<[u32; 5]>,
}

/// The statistics of a tournament, from its finished games.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Summary {
    /// Game id and options.
    pub game: String,
    /// Seats per game.
    pub seats: usize,
    /// Games finished / scheduled (in the shards read).
    pub finished: usize,
    /// Games scheduled in total.
    pub scheduled: usize,
    /// Table, best first.
    pub standings: Vec<Standing>,
    /// Head-to-head figures of every pair of entrants that met.
    pub pairings: Vec<Pairing>,
    /// SPRT log-likelihood ratio, bounds and decision, if configured.
    pub sprt: Option<(f64, (f64, f64), String)>,
    /// Finished games that repeat an earlier one move for move (same entrants in the
    /// same seats, same start, same actions): deterministic bots replaying one game
    /// add no information, and an SPRT counting them decides on nothing.
    pub repeated: usize,
}

/// `a`'s score in a game against `b`, if both sat in it: 1 placed ahead, ½ placed
/// alike, 0 behind.
fn score(r: &GameResult, a: usize, b: usize) -> Option<f64> {
    let (sa, sb) = (
        r.seats.iter().position(|&w| w == a)?,
        r.seats.iter().position(|&w| w == b)?,
    );
    Some(match r.places[sa].cmp(&r.places[sb]) {
        std::cmp::Ordering::Less => 1.0,
        std::cmp::Ordering::Equal => 0.5,
        std::cmp::Ordering::Greater => 0.0,
    })
}

/// Pentanomial counts of `a` against `b` over complete colour-swapped pairs (the two
/// games of a pair are consecutive schedule indices 2k, 2k+1 of one table).
pub(super) fn pentanomial(results: &[GameResult], a: usize, b: usize) -> Pentanomial {
    let mut by_index: Vec<&GameResult> = results.iter().filter(|r| score(r, a, b).is_some()).collect();
    by_index.sort_by_key(|r| r.index);
    let mut p = Pentanomial::default();
    for w in by_index.windows(2) {
        if w[0].index % 2 == 0 && w[1].index == w[0].index + 1 {
            p.add(score(w[0], a, b).unwrap_or(0.0) + score(w[1], a, b).unwrap_or(0.0));
        }
    }
    p
}

/// Computes the table from finished games (in index order, so a merged set of shards
/// gives exactly the figures of one run).
pub fn summarize(def: &Definition, results: &[GameResult]) -> Result<Summary, TournamentError> {
    summarize_counted(def, def.seats()?, def.schedule()?.len(), results)
}

/// [`summarize`] for a tournament of `seats` seats and `scheduled` games: what a
/// running tournament computes after every game, without building its schedule again.
pub fn summarize_counted(
    def: &Definition,
    seats: usize,
    scheduled: usize,
    results: &[GameResult],
) -> Result<Summary, TournamentError> {
    let mut results: Vec<GameResult> = results.to_vec();
    results.sort_by_key(|r| r.index);
    let mut standings = standings(def, seats, &results);
    let pairings = pairings(def, seats, &results);
    let sprt = sprt_summary(def, &results);
    // Best first: score for two seats, average place (lower is better) otherwise.
    standings.sort_by(|x, y| {
        let key = |s: &Standing| if seats == 2 { -s.score } else { s.average_place };
        key(x).partial_cmp(&key(y)).unwrap_or(std::cmp::Ordering::Equal)
    });
    Ok(Summary {
        game: format!("{} {}", def.game, def.options),
        seats,
        finished: results.len(),
        scheduled,
        standings,
        pairings,
        sprt,
        repeated: repeats(&results).len(),
    })
}

/// The finished games (in the order given) that repeat an earlier one move for move,
/// each with the index of the first game it repeats.
pub fn repeats(results: &[GameResult]) -> Vec<(usize, usize)> {
    let mut first: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    let mut out = Vec::new();
    for r in results {
        match first.get(r.fingerprint.as_str()) {
            Some(&earlier) => out.push((r.index, earlier)),
            None => {
                first.insert(&r.fingerprint, r.index);
            }
        }
    }
    out
}

/// Writes `summary` to `<out>/summary.json` atomically (a temporary file in the same
/// directory, renamed over it), so a reader never sees half a file.
pub fn write_summary(out: &std::path::Path, summary: &Summary) -> Result<(), TournamentError> {
    let json = serde_json::to_string_pretty(summary).expect("summaries serialise") + "\n";
    let path = out.join("summary.json");
    let temp = out.join(format!(".summary.json.new{}", std::process::id()));
    std::fs::write(&temp, json).map_err(super::io_err(&temp))?;
    std::fs::rename(&temp, &path).map_err(super::io_err(&path))
}

/// Each entrant's standing over `results` (games of `seats` seats), in entrant order.
fn standings(def: &Definition, seats: usize, results: &[GameResult]) -> Vec<Standing> {
    let n = def.entrants.len();
    let mut standings: Vec<Standing> = def
        .entrants
        .iter()
        .map(|e| Standing {
            name: e.name.clone(),
            games: 0,
            wins: 0,
            draws: 0,
            losses: 0,
            points: 0.0,
            score: 0.0,
            elo: None,
            los: None,
            average_place: 0.0,
            rating: None,
            timeouts: 0,
            crashes: 0,
            illegal: 0,
            protocol: 0,
        })
        .collect();
    let place_sum = tally(&mut standings, seats, results);
    let ratings = (seats > 2).then(|| {
        let games: Vec<Vec<(usize, u8)>> = results
            .iter()
            .map(|r| r.seats.iter().zip(&r.places).map(|(&w, &p)| (w, p)).collect())
            .collect();
        stats::weng_lin(n, &games)
    });
    for (i, s) in standings.iter_mut().enumerate() {
        if s.games == 0 {
            continue;
        }
        s.average_place = place_sum[i] as f64 / s.games as f64;
        if seats == 2 {
            let wdl = Wdl {
                wins: s.wins,
                draws: s.draws,
                losses: s.losses,
            };
            s.points = f64::from(s.wins) + f64::from(s.draws) / 2.0;
            s.score = wdl.score();
            s.elo = Some(wdl.elo());
            s.los = Some(wdl.los());
        } else {
            s.score = s.average_place;
            s.rating = ratings.as_ref().map(|r| r[i]);
        }
    }
    standings
}

/// Counts the games, the wins, draws and losses (two seats) and the forfeits of every
/// entrant into `standings`; returns each entrant's sum of places.
fn tally(standings: &mut [Standing], seats: usize, results: &[GameResult]) -> Vec<u64> {
    let mut place_sum = vec![0u64; standings.len()];
    for r in results {
        for (seat, &who) in r.seats.iter().enumerate() {
            let s = &mut standings[who];
            s.games += 1;
            place_sum[who] += r.places[seat] as u64;
            if seats == 2 {
                let other = r.places[1 - seat];
                match r.places[seat].cmp(&other) {
                    std::cmp::Ordering::Less => s.wins += 1,
                    std::cmp::Ordering::Equal => s.draws += 1,
                    std::cmp::Ordering::Greater => s.losses += 1,
                }
            }
        }
        for &(seat, kind) in &r.forfeits {
            let s = &mut standings[r.seats[seat]];
            match kind {
                ForfeitKind::Timeout => s.timeouts += 1,
                ForfeitKind::Crash => s.crashes += 1,
                ForfeitKind::Illegal => s.illegal += 1,
                ForfeitKind::Protocol => s.protocol += 1,
                ForfeitKind::Resign => {}
            }
        }
    }
    place_sum
}

/// Head-to-head figures of every pair of entrants that met in games of `seats`.
fn pairings(def: &Definition, seats: usize, results: &[GameResult]) -> Vec<Pairing> {
    let n = def.entrants.len();
    let mut pairings = Vec::new();
    for a in 0..n {
        for b in a + 1..n {
            let mut wdl = Wdl::default();
            for r in results {
                match score(r, a, b) {
                    Some(1.0) => wdl.wins += 1,
                    Some(0.5) => wdl.draws += 1,
                    Some(_) => wdl.losses += 1,
                    None => {}
                }
            }
            if wdl.games() == 0 {
                continue;
            }
            pairings.push(Pairing {
                first: def.entrants[a].name.clone(),
                second: def.entrants[b].name.clone(),
                wdl: (wdl.wins, wdl.draws, wdl.losses),
                score: wdl.score(),
                score_interval: wdl.score_interval(),
                elo: wdl.elo(),
                los: wdl.los(),
                draw_ratio: wdl.draw_ratio(),
                pentanomial: (seats == 2).then(|| pentanomial(results, a, b).0),
            });
        }
    }
    pairings
}

/// The SPRT's log-likelihood ratio, bounds and state, if the tournament has one.
fn sprt_summary(def: &Definition, results: &[GameResult]) -> Option<(f64, (f64, f64), String)> {
    def.sprt.map(|d| {
        let s = Sprt::from(d);
        let p = pentanomial(results, 0, 1);
        let state = match s.state(&p) {
            SprtState::Continue => "continue",
            SprtState::AcceptH0 => "H0 accepted",
            SprtState::AcceptH1 => "H1 accepted",
        };
        (s.llr(&p), s.bounds(), state.to_string())
    })
}

impl Summary {
    /// The final table as text.
    pub fn table(&self) -> String {
        let mut t = self.standings_table();
        self.pairings_lines(&mut t);
        t
    }

    /// The names of the standings' columns, as the printed table and the index page
    /// of `--out` head them: two seats have wins, Elo and the like, more seats an
    /// average place and a rating.
    pub fn columns(&self) -> &'static [&'static str] {
        if self.seats == 2 {
            &[
                "rank",
                "name",
                "games",
                "wins",
                "draws",
                "losses",
                "points",
                "score",
                "elo (95%)",
                "los",
                "time",
                "crash",
            ]
        } else {
            &[
                "rank",
                "name",
                "games",
                "avg place",
                "rating (±)",
                "time",
                "crash",
            ]
        }
    }

    /// The title line and the standings, one row per entrant, best first.
    fn standings_table(&self) -> String {
        let mut t = String::new();
        let _ = writeln!(t, "{}: {} of {} games", self.game, self.finished, self.scheduled);
        let two = self.seats == 2;
        let c = self.columns();
        if two {
            let _ = writeln!(
                t,
                "{:<4} {:<20} {:>6} {:>6} {:>6} {:>6} {:>7} {:>7} {:>16} {:>6} {:>5} {:>5}",
                c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7], c[8], c[9], c[10], c[11]
            );
        } else {
            let _ = writeln!(
                t,
                "{:<4} {:<20} {:>6} {:>10} {:>16} {:>5} {:>5}",
                c[0], c[1], c[2], c[3], c[4], c[5], c[6]
            );
        }
        for (i, s) in self.standings.iter().enumerate() {
            if two {
                let elo = s.elo.map_or("-".to_string(), |(e, h)| fmt_elo(e, h));
                let los = s.los.map_or("-".to_string(), |l| format!("{:.1}%", l * 100.0));
                let _ = writeln!(
                    t,
                    "{:<4} {:<20} {:>6} {:>6} {:>6} {:>6} {:>7.1} {:>6.1}% {:>16} {:>6} {:>5} {:>5}",
                    i + 1,
                    s.name,
                    s.games,
                    s.wins,
                    s.draws,
                    s.losses,
                    s.points,
                    s.score * 100.0,
                    elo,
                    los,
                    s.timeouts,
                    s.crashes
                );
            } else {
                let rating = s
                    .rating
                    .map_or("-".to_string(), |(r, u)| format!("{r:.1} ± {u:.1}"));
                let _ = writeln!(
                    t,
                    "{:<4} {:<20} {:>6} {:>10.2} {:>16} {:>5} {:>5}",
                    i + 1,
                    s.name,
                    s.games,
                    s.average_place,
                    rating,
                    s.timeouts,
                    s.crashes
                );
            }
        }
        t
    }

    /// Per pair of entrants their head-to-head line, then the SPRT and repeats lines.
    fn pairings_lines(&self, t: &mut String) {
        for p in &self.pairings {
            let (lo, hi) = p.score_interval;
            let _ = write!(
                *t,
                "{} vs {}: +{} ={} -{}  score {:.1}% ({:.1}–{:.1}%)  elo {}  los {:.1}%  draws {:.1}%",
                p.first,
                p.second,
                p.wdl.0,
                p.wdl.1,
                p.wdl.2,
                p.score * 100.0,
                lo * 100.0,
                hi * 100.0,
                fmt_elo(p.elo.0, p.elo.1),
                p.los * 100.0,
                p.draw_ratio * 100.0,
            );
            if let Some(cells) = p.pentanomial {
                let cells: Vec<String> = cells.iter().map(u32::to_string).collect();
                let _ = write!(*t, "  pentanomial [{}]", cells.join(" "));
            }
            t.push('\n');
        }
        if let Some((llr, (lo, hi), state)) = &self.sprt {
            let _ = writeln!(*t, "SPRT: LLR {llr:.2} ({lo:.2}, {hi:.2}) {state}");
        }
        if self.repeated > 0 {
            let _ = writeln!(
                *t,
                "repeats: {} of {} games are an earlier game again, move for move",
                self.repeated, self.finished
            );
        }
    }
}

/// The warning about games replayed move for move, with its count and the cure.
pub fn repeat_warning(repeated: usize, finished: usize) -> String {
    format!(
        "{repeated} of {finished} games repeat an earlier game move for move (same entrants, seats and start); \
         deterministic bots need --openings or --random-plies to give the statistics new games"
    )
}

/// `+123.4 ± 56.7`, or `±inf` when the score is 0 or 1.
pub fn fmt_elo(elo: f64, half: f64) -> String {
    // An even score gives −0.0, which would print as `-0.0`.
    let elo = elo + 0.0;
    if elo.is_finite() && half.is_finite() {
        format!("{elo:+.1} ± {half:.1}")
    } else if elo.is_finite() {
        format!("{elo:+.1} ± inf")
    } else {
        format!("{}inf", if elo > 0.0 { "+" } else { "-" })
    }
}
