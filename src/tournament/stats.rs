//! Tournament statistics: Elo with a 95% interval, likelihood of superiority,
//! pentanomial counts and the pentanomial SPRT for two-seat games; average place and
//! a Weng-Lin (Plackett-Luce) rating for multi-seat games.

use skillratings::weng_lin::{weng_lin_multi_team, WengLinConfig, WengLinRating};
use skillratings::MultiTeamOutcome;

/// The 97.5% quantile of the standard normal distribution (two-sided 95%).
const Z95: f64 = 1.959_963_984_540_054;

/// Wins, draws and losses of one side.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Wdl {
    /// Wins.
    pub wins: u32,
    /// Draws.
    pub draws: u32,
    /// Losses.
    pub losses: u32,
}

impl Wdl {
    /// Games counted.
    pub fn games(&self) -> u32 {
        self.wins + self.draws + self.losses
    }

    /// Mean score per game (win 1, draw ½).
    pub fn score(&self) -> f64 {
        (self.wins as f64 + self.draws as f64 / 2.0) / self.games() as f64
    }

    /// The score's 95% interval (Wilson).
    pub fn score_interval(&self) -> (f64, f64) {
        let points = f64::from(self.wins) + f64::from(self.draws) / 2.0;
        wilson(points, f64::from(self.games()))
    }

    /// Draws per game.
    pub fn draw_ratio(&self) -> f64 {
        self.draws as f64 / self.games() as f64
    }

    /// Elo difference implied by the score, with the half-width of its 95% interval
    /// from the per-game (trinomial) variance. Infinite when the score is 0 or 1.
    pub fn elo(&self) -> (f64, f64) {
        let n = self.games() as f64;
        let s = self.score();
        let var = (self.wins as f64 * (1.0 - s).powi(2)
            + self.draws as f64 * (0.5 - s).powi(2)
            + self.losses as f64 * s.powi(2))
            / n;
        let half = Z95 * (var / n).sqrt();
        let elo = elo_of(s);
        let width = (elo_of((s + half).min(1.0)) - elo_of((s - half).max(0.0))) / 2.0;
        (elo, width)
    }

    /// Likelihood of superiority: P(stronger) from wins and losses (draws carry no
    /// information), 0.5·(1 + erf((W − L) / √(2(W + L)))).
    pub fn los(&self) -> f64 {
        let (w, l) = (self.wins as f64, self.losses as f64);
        if w + l == 0.0 {
            return 0.5;
        }
        0.5 * (1.0 + libm::erf((w - l) / (2.0 * (w + l)).sqrt()))
    }
}

/// The Wilson 95% interval of a score of `points` out of `games` (a draw counts
/// half): unlike the normal approximation it stays inside 0–100% and is not empty
/// when every game was won, which the small samples of a bot's first tests often are.
pub fn wilson(points: f64, games: f64) -> (f64, f64) {
    if games == 0.0 {
        return (0.0, 1.0);
    }
    let p = points / games;
    let z2 = Z95 * Z95;
    let centre = (p + z2 / (2.0 * games)) / (1.0 + z2 / games);
    let half = Z95 / (1.0 + z2 / games) * (p * (1.0 - p) / games + z2 / (4.0 * games * games)).sqrt();
    ((centre - half).max(0.0), (centre + half).min(1.0))
}

/// The Elo difference of an expected score under the logistic model.
pub fn elo_of(score: f64) -> f64 {
    -400.0 * (1.0 / score - 1.0).log10()
}

/// The expected score of an Elo difference under the logistic model.
pub fn score_of(elo: f64) -> f64 {
    1.0 / (1.0 + 10f64.powf(-elo / 400.0))
}

/// Counts of game-pair totals for one side: `[0, ½, 1, 1½, 2]` points out of 2.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Pentanomial(pub [u32; 5]);

impl Pentanomial {
    /// Adds a pair worth `points` (0, 0.5, …, 2) to the side.
    pub fn add(&mut self, points: f64) {
        let i = (points * 2.0).round().clamp(0.0, 4.0) as usize;
        self.0[i] += 1;
    }

    /// Pairs counted.
    pub fn pairs(&self) -> u32 {
        self.0.iter().sum()
    }

    /// The counts with every empty cell counted as 10⁻³ pairs (fishtest's
    /// `regularize`): without that prior a one-sided result (every pair won) would
    /// leave cells of probability zero and an SPRT could never stop.
    fn regularized(&self) -> [f64; 5] {
        self.0.map(|c| if c == 0 { 1e-3 } else { c as f64 })
    }
}

/// The pair scores of the five pentanomial cells, normalised to 0..1.
const CELL_SCORES: [f64; 5] = [0.0, 0.25, 0.5, 0.75, 1.0];

/// The distribution on the five cells most likely to give the observed frequencies
/// `p` (all positive) among those with mean `s`: `qᵢ = pᵢ / (1 + x·(aᵢ − s))` with `x`
/// the root of `Σ pᵢ(aᵢ − s) / (1 + x·(aᵢ − s)) = 0` (fishtest's `MLE_expected`). The
/// sum falls from +∞ to −∞ across the interval where every `qᵢ` is positive, so
/// bisection finds the root.
fn closest_with_mean(p: &[f64; 5], s: f64) -> [f64; 5] {
    // An Elo bound so large that its expected score rounds to 0 or 1 would leave no
    // interval to search.
    let s = s.clamp(1e-9, 1.0 - 1e-9);
    let b = CELL_SCORES.map(|a| a - s);
    let f = |x: f64| {
        p.iter()
            .zip(b)
            .map(|(&pi, bi)| pi * bi / (1.0 + x * bi))
            .sum::<f64>()
    };
    let (mut lo, mut hi) = (-1.0 / b[4], -1.0 / b[0]);
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if mid <= lo || mid >= hi {
            break;
        }
        if f(mid) > 0.0 {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    let x = 0.5 * (lo + hi);
    let q = std::array::from_fn(|i| p[i] / (1.0 + x * b[i]));
    let total: f64 = q.iter().sum();
    q.map(|v| v / total)
}

/// A sequential probability ratio test between `elo0` (H0) and `elo1` (H1).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sprt {
    /// Elo under H0.
    pub elo0: f64,
    /// Elo under H1.
    pub elo1: f64,
    /// False-positive rate.
    pub alpha: f64,
    /// False-negative rate.
    pub beta: f64,
}

/// Where an SPRT stands.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum SprtState {
    /// Keep playing.
    Continue,
    /// H0 accepted (not the gain hoped for).
    AcceptH0,
    /// H1 accepted.
    AcceptH1,
}

impl Sprt {
    /// Parses `elo0=0 elo1=5 alpha=0.05 beta=0.05` (words in any order, all four given).
    pub fn parse(words: &[String]) -> Result<Sprt, String> {
        let mut v = [None; 4];
        for w in words.iter().flat_map(|w| w.split_whitespace()) {
            let (k, val) = w
                .split_once('=')
                .ok_or_else(|| format!("--sprt `{w}`: expected KEY=VALUE"))?;
            let i = ["elo0", "elo1", "alpha", "beta"]
                .iter()
                .position(|n| *n == k)
                .ok_or_else(|| format!("--sprt: unknown `{k}` (elo0, elo1, alpha, beta)"))?;
            // `inf` and `NaN` parse as f64 but are no bound, and JSON cannot store
            // them: tournament.json would hold `null` and never be read back.
            v[i] = Some(
                val.parse::<f64>()
                    .ok()
                    .filter(|x| x.is_finite())
                    .ok_or_else(|| format!("--sprt {k}={val}: not a finite number"))?,
            );
        }
        let [Some(elo0), Some(elo1), Some(alpha), Some(beta)] = v else {
            return Err("--sprt needs elo0=, elo1=, alpha= and beta=".into());
        };
        let valid = elo0 < elo1
            && (0.0..0.5).contains(&alpha)
            && alpha > 0.0
            && (0.0..0.5).contains(&beta)
            && beta > 0.0;
        if !valid {
            return Err("--sprt needs elo0 < elo1 and 0 < alpha, beta < 0.5".into());
        }
        Ok(Sprt {
            elo0,
            elo1,
            alpha,
            beta,
        })
    }

    /// The decision bounds on the LLR: `(ln(β/(1−α)), ln((1−β)/α))`.
    pub fn bounds(&self) -> (f64, f64) {
        (
            (self.beta / (1.0 - self.alpha)).ln(),
            ((1.0 - self.beta) / self.alpha).ln(),
        )
    }

    /// The log-likelihood ratio of the pentanomial counts under the logistic model:
    /// the generalised SPRT of fishtest's `LLR_logistic`, `Σ nᵢ·ln(q1ᵢ / q0ᵢ)` where
    /// `qk` is the distribution on the five pair scores most likely to give the counts
    /// among those whose mean is the expected pair score at `elok`. Unlike the normal
    /// approximation `N·((m − μ0)² − (m − μ1)²) / (2σ²)`, it stays honest on a few
    /// pairs: one pair won twice is worth about `ln(μ1/μ0)`, not the dozens the tiny
    /// variance of a one-sided sample gives, so no minimum number of pairs is needed.
    pub fn llr(&self, p: &Pentanomial) -> f64 {
        if p.pairs() == 0 {
            return 0.0;
        }
        let counts = p.regularized();
        let n: f64 = counts.iter().sum();
        let freq = counts.map(|c| c / n);
        let q0 = closest_with_mean(&freq, score_of(self.elo0));
        let q1 = closest_with_mean(&freq, score_of(self.elo1));
        (0..5).map(|i| counts[i] * (q1[i] / q0[i]).ln()).sum()
    }

    /// The decision for the counts so far: an LLR on or beyond a bound decides,
    /// however few the pairs. There is no minimum number of pairs (a hidden one made
    /// a printed `LLR 7.64 (-2.94, 2.94)` read `continue`): the likelihood ratio of
    /// [`Sprt::llr`] is honest on a few pairs.
    pub fn state(&self, p: &Pentanomial) -> SprtState {
        let llr = self.llr(p);
        let (lo, hi) = self.bounds();
        if llr >= hi {
            SprtState::AcceptH1
        } else if llr <= lo {
            SprtState::AcceptH0
        } else {
            SprtState::Continue
        }
    }
}

/// Weng-Lin (Bayesian Plackett-Luce) ratings of `players` entrants after `games`,
/// each game given as the entrant and place of every seat, applied in order.
pub fn weng_lin(players: usize, games: &[Vec<(usize, u8)>]) -> Vec<(f64, f64)> {
    let config = WengLinConfig::new();
    let mut ratings = vec![WengLinRating::new(); players];
    for game in games {
        // An entrant may hold several seats of one table: rate its best place once.
        let mut seen: Vec<(usize, u8)> = Vec::new();
        for &(who, place) in game {
            match seen.iter_mut().find(|(w, _)| *w == who) {
                Some(entry) => entry.1 = entry.1.min(place),
                None => seen.push((who, place)),
            }
        }
        let teams: Vec<[WengLinRating; 1]> = seen.iter().map(|&(w, _)| [ratings[w]]).collect();
        let input: Vec<(&[WengLinRating], MultiTeamOutcome)> = teams
            .iter()
            .zip(&seen)
            .map(|(t, &(_, place))| (&t[..], MultiTeamOutcome::new(place as usize)))
            .collect();
        let updated = weng_lin_multi_team(&input, &config);
        for ((who, _), new) in seen.iter().zip(updated) {
            ratings[*who] = new[0];
        }
    }
    ratings.iter().map(|r| (r.rating, r.uncertainty)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() < tol
    }

    #[test]
    fn the_wilson_interval_matches_the_textbook_figures() {
        // 10 of 10: 72.2–100%; 5 of 10: 23.7–76.3%; 0 of 20: 0–16.1%.
        let (lo, hi) = wilson(10.0, 10.0);
        assert!(close(lo, 0.7225, 1e-4) && close(hi, 1.0, 1e-12), "{lo} {hi}");
        let (lo, hi) = wilson(5.0, 10.0);
        assert!(close(lo, 0.2366, 1e-4) && close(hi, 0.7634, 1e-4), "{lo} {hi}");
        let (lo, hi) = wilson(0.0, 20.0);
        assert!(close(lo, 0.0, 1e-12) && close(hi, 0.1611, 1e-4), "{lo} {hi}");
    }

    #[test]
    fn elo_from_a_known_score() {
        // 60 wins, 20 draws, 20 losses: score 0.7, Elo = -400·log10(1/0.7 − 1) ≈ 147.19.
        let wdl = Wdl {
            wins: 60,
            draws: 20,
            losses: 20,
        };
        let (elo, half) = wdl.elo();
        assert!(close(elo, 147.19, 0.01), "{elo}");
        // Variance per game: (60·0.09 + 20·0.04 + 20·0.49)/100 = 0.16; stderr 0.04;
        // interval 0.7 ± 0.0784 = 0.6216 … 0.7784 → Elo 86.2 … 218.3, half width ≈ 66.0.
        let lo = elo_of(0.7 - Z95 * 0.04);
        let hi = elo_of(0.7 + Z95 * 0.04);
        assert!(close(half, (hi - lo) / 2.0, 1e-9));
        assert!(close(half, 66.0, 0.1), "{half}");
        assert!(close(wdl.draw_ratio(), 0.2, 1e-12));
        // LOS = Φ((60 − 20)/√80) = Φ(4.472) ≈ 0.999996.
        assert!(close(wdl.los(), 0.999_996_1, 1e-6), "{}", wdl.los());
        assert!(close(
            Wdl {
                wins: 5,
                draws: 0,
                losses: 5
            }
            .los(),
            0.5,
            1e-12
        ));
        assert!(close(score_of(elo_of(0.3)), 0.3, 1e-12));
    }

    #[test]
    fn sprt_llr_on_a_fixed_pentanomial_vector() {
        // Pairs [LL, LD, DD+WL, WD, WW] = [10, 20, 40, 20, 10] on 0, ¼, ½, ¾, 1:
        // mean 0.5, variance (2·10·0.25 + 2·20·0.0625)/100 = 0.075.
        let p = Pentanomial([10, 20, 40, 20, 10]);
        let sprt = Sprt {
            elo0: 0.0,
            elo1: 5.0,
            alpha: 0.05,
            beta: 0.05,
        };
        // On many pairs and a small Elo step, the likelihood ratio is its normal
        // approximation N·((m − μ0)² − (m − μ1)²) / (2σ²).
        let mu1 = score_of(5.0);
        let expect = 100.0 * ((0.5f64 - 0.5).powi(2) - (0.5 - mu1).powi(2)) / (2.0 * 0.075);
        assert!(close(sprt.llr(&p), expect, 1e-4), "{} vs {expect}", sprt.llr(&p));
        // μ1 = 1/(1+10^(−5/400)) ≈ 0.5071945; LLR ≈ −100·0.00005176/0.15 ≈ −0.0345.
        assert!(close(sprt.llr(&p), -0.0345, 0.0005), "{}", sprt.llr(&p));
        let (lo, hi) = sprt.bounds();
        assert!(close(lo, -2.944_438_979, 1e-6) && close(hi, 2.944_438_979, 1e-6));
        assert_eq!(sprt.state(&p), SprtState::Continue);
        // A crushing score accepts H1.
        assert_eq!(
            sprt.state(&Pentanomial([0, 5, 20, 200, 300])),
            SprtState::AcceptH1
        );
        assert_eq!(
            sprt.state(&Pentanomial([300, 200, 20, 5, 0])),
            SprtState::AcceptH0
        );
    }

    #[test]
    fn sprt_decides_when_every_pair_is_won() {
        // Regression: all pairs in one cell have no variance; the 10⁻³ prior per empty
        // cell keeps the LLR finite and lets the test stop.
        let sprt = Sprt {
            elo0: 0.0,
            elo1: 200.0,
            alpha: 0.05,
            beta: 0.05,
        };
        let llr = sprt.llr(&Pentanomial([0, 0, 0, 0, 10]));
        assert!(llr.is_finite() && llr > sprt.bounds().1, "{llr}");
        assert_eq!(sprt.state(&Pentanomial([10, 0, 0, 0, 0])), SprtState::AcceptH0);
        assert_eq!(sprt.llr(&Pentanomial::default()), 0.0);
    }

    #[test]
    fn a_pair_won_twice_is_worth_the_log_ratio_of_the_expected_scores() {
        // Regression: the normal approximation gave one pair won twice an LLR of 51
        // at elo1 = 200, a decision on two games. The likelihood ratio of a pair of
        // wins is about μ1/μ0 (the most likely distributions with those means put
        // that much mass on two wins), so each such pair adds about ln(μ1/μ0).
        let sprt = Sprt {
            elo0: 0.0,
            elo1: 200.0,
            alpha: 0.05,
            beta: 0.05,
        };
        let per_pair = (score_of(200.0) / 0.5).ln();
        for n in [1, 3, 8] {
            let llr = sprt.llr(&Pentanomial([0, 0, 0, 0, n]));
            assert!(
                close(llr, n as f64 * per_pair, 0.02 * n as f64),
                "{n} pairs: {llr}"
            );
        }
        assert_eq!(sprt.state(&Pentanomial([0, 0, 0, 0, 3])), SprtState::Continue);
        assert_eq!(sprt.state(&Pentanomial([0, 0, 0, 0, 8])), SprtState::AcceptH1);
    }

    #[test]
    fn the_closest_distribution_has_the_mean_asked_for() {
        let counts = Pentanomial([3, 0, 5, 9, 1]).regularized();
        let n: f64 = counts.iter().sum();
        let p = counts.map(|c| c / n);
        for s in [0.1, 0.5, 0.62, 0.9] {
            let q = closest_with_mean(&p, s);
            let mean: f64 = q.iter().zip(CELL_SCORES).map(|(q, a)| q * a).sum();
            assert!(
                close(mean, s, 1e-9) && close(q.iter().sum(), 1.0, 1e-12),
                "{s}: {q:?}"
            );
            assert!(q.iter().all(|&v| v > 0.0));
        }
        // The sample's own mean gives the sample back.
        let m: f64 = p.iter().zip(CELL_SCORES).map(|(q, a)| q * a).sum();
        let q = closest_with_mean(&p, m);
        assert!(q.iter().zip(p).all(|(a, b)| close(*a, b, 1e-9)), "{q:?} vs {p:?}");
    }

    #[test]
    fn an_llr_beyond_a_bound_decides_however_few_the_pairs() {
        // Regression: a hidden minimum of ten pairs printed `LLR 7.64 (-2.94, 2.94)
        // continue`. The state is the LLR against the bounds, nothing else.
        let sprt = Sprt {
            elo0: 0.0,
            elo1: 200.0,
            alpha: 0.05,
            beta: 0.05,
        };
        let (lo, hi) = sprt.bounds();
        for cells in [
            [0, 0, 0, 0, 3],
            [3, 0, 0, 0, 0],
            [0, 0, 1, 2, 0],
            [0, 0, 0, 0, 1],
            [1, 0, 0, 0, 0],
        ] {
            let p = Pentanomial(cells);
            let llr = sprt.llr(&p);
            let expect = if llr >= hi {
                SprtState::AcceptH1
            } else if llr <= lo {
                SprtState::AcceptH0
            } else {
                SprtState::Continue
            };
            assert_eq!(sprt.state(&p), expect, "{cells:?}: LLR {llr}");
        }
        // A close test is not decided by one decisive pair: the prior holds it back.
        let close_test = Sprt {
            elo0: 0.0,
            elo1: 5.0,
            alpha: 0.05,
            beta: 0.05,
        };
        assert_eq!(
            close_test.state(&Pentanomial([0, 0, 0, 0, 1])),
            SprtState::Continue
        );
    }

    #[test]
    fn weng_lin_ranks_the_winner_first() {
        let games: Vec<Vec<(usize, u8)>> = (0..20).map(|_| vec![(0, 1), (1, 2), (2, 3)]).collect();
        let r = weng_lin(3, &games);
        assert!(r[0].0 > r[1].0 && r[1].0 > r[2].0, "{r:?}");
    }

    #[test]
    fn sprt_parses() {
        let s = Sprt::parse(&["elo0=0 elo1=5".into(), "alpha=0.05".into(), "beta=0.1".into()]).unwrap();
        assert_eq!(
            s,
            Sprt {
                elo0: 0.0,
                elo1: 5.0,
                alpha: 0.05,
                beta: 0.1
            }
        );
        assert!(Sprt::parse(&["elo0=5 elo1=0 alpha=0.05 beta=0.05".into()]).is_err());
        assert!(Sprt::parse(&["elo0=0".into()]).is_err());
    }
}
