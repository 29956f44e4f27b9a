//! The greedy strategy of the Parker games (Peg Chow, Telka): score every legal
//! action by the position it leads to, as seen from the seat's view, and play a best
//! one (ties broken at random).

use super::Assignment;
use crate::game::parker::board::{Colour, Point};
use crate::game::parker::rules::{Action, Variant};
use crate::game::parker::{seating, state};
use crate::game::GameId;
use crate::rng::Rng;

/// Picks a best-scoring action among `legal`.
pub(super) fn choose(t: &Assignment, view: &str, legal: &[String], rng: &mut Rng) -> Option<String> {
    let scores: Vec<i64> = match t.game {
        GameId::PegChow | GameId::Telka => parker_scores(t, view, legal)?,
        GameId::IDoubtIt | GameId::MultiChess => return None,
    };
    let best = *scores.iter().max()?;
    let best_ones: Vec<usize> = (0..legal.len()).filter(|&i| scores[i] == best).collect();
    Some(legal[best_ones[rng.below(best_ones.len())]].clone())
}

/// The strong strategy's move (see [`super::strong`]) in the position of `view`.
pub(super) fn choose_strong(
    t: &Assignment,
    view: &str,
    budget: super::strong::Budget,
    rng: &mut Rng,
) -> Option<String> {
    let (variant, seating) = rules_of(t)?;
    let (pos, _) = state::parse(view, &seating).ok()?;
    super::strong::choose(variant, &seating, &pos, budget, rng).map(|a| a.text())
}

/// The variant and seating of a Parker game's options.
fn rules_of(t: &Assignment) -> Option<(Variant, seating::Seating)> {
    let players = t.options.int("players", 2, 2..=4).ok()? as usize;
    let per_player = t.options.int("colors-per-player", 1, 1..=2).ok()? as usize;
    let seating = seating::Seating::new(players, per_player).ok()?;
    let variant = if t.game == GameId::Telka {
        Variant::Telka
    } else {
        Variant::PegChow
    };
    Some((variant, seating))
}

/// Peg Chow and Telka: progress of the moving colour towards its target home, a win
/// above all, and captures in Telka.
fn parker_scores(t: &Assignment, view: &str, legal: &[String]) -> Option<Vec<i64>> {
    let (variant, seating) = rules_of(t)?;
    let (pos, _) = state::parse(view, &seating).ok()?;
    let mover = pos.to_move;
    // Legal lists run to thousands of chains in crowded positions: price every point
    // once, then score a move by what it changes.
    let cost: Vec<i64> = Point::all().map(|p| point_cost(variant, mover, p)).collect();
    Some(
        legal
            .iter()
            .map(|text| {
                let mut next = pos.clone();
                let Ok(action) = Action::parse(text) else {
                    return i64::MIN;
                };
                let gain = match &action {
                    Action::Path(points) => cost[points[0].index()] - cost[points[points.len() - 1].index()],
                    Action::Pass => 0,
                };
                match next.apply(variant, &seating, &action) {
                    Ok(_) if next.has_won(variant, &seating, mover) => i64::MAX,
                    Ok(effect) => gain + 30 * effect.captured.len() as i64,
                    Err(_) => i64::MIN,
                }
            })
            .collect(),
    )
}

/// How far a counter of `colour` on `p` is from its goal; lower is better.
pub(super) fn point_cost(variant: Variant, colour: Colour, p: Point) -> i64 {
    let target = colour.target();
    let home_distance = target.distance_to_home(p) as i64;
    match variant {
        // Any three counters home win: get them there, nearest point first.
        Variant::Telka => home_distance * 4 - if home_distance == 0 { 6 } else { 0 },
        // Every point must be filled: inside the home go deep, so later counters find
        // the points near the entrance free; outside, any home point is ahead.
        Variant::PegChow if home_distance == 0 => {
            let corner = target
                .home_points()
                .max_by_key(|p| far_from_centre(*p))
                .expect("12 points");
            chebyshev(p, corner)
        }
        Variant::PegChow => 4 + 2 * home_distance,
    }
}

/// Chebyshev distance between two points.
fn chebyshev(a: Point, b: Point) -> i64 {
    ((a.x() - b.x()).abs().max((a.y() - b.y()).abs())) as i64
}

/// Distance from the board's centre, which picks out a home's outer corner.
fn far_from_centre(p: Point) -> i64 {
    ((p.x() - 5).abs() + (p.y() - 5).abs()) as i64
}
