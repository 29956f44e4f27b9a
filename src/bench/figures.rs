//! What `referee bench` reports: the round trips and per-action costs per placement,
//! the figures that do not depend on placement, and the table printed from them. Its
//! own room because it is the bench's output format, apart from how it is measured.

use serde::Serialize;

use super::cpus::Placement;
use super::sandbox;

/// Round trips and per-action costs under one placement.
#[derive(Clone, Debug, Serialize)]
pub struct PlacementTiming {
    /// Where the referee and agents ran.
    pub placement: Placement,
    /// Pipe ping-pong round trip with `cat`, µs (the floor): the median of
    /// [`BATCHES`](super::floor::BATCHES) batches.
    pub pipe_round_trip_us: f64,
    /// CPU time of the timing thread per pipe round trip, µs.
    pub pipe_cpu_us: f64,
    /// The same through the referee's I/O path with the record append, µs
    /// ([`io_path_round_trip`](super::floor::io_path_round_trip)).
    pub io_path_round_trip_us: f64,
    /// CPU time of the timing thread per round trip through the I/O path, µs.
    pub io_path_cpu_us: f64,
    /// The round trip through the referee's agent I/O alone (write, wait, read: one
    /// agent, no record append), µs: what waiting with a deadline costs over a
    /// blocking read.
    pub agent_io_round_trip_us: f64,
    /// Per game configuration.
    pub games: Vec<GameTiming>,
}

/// One game configuration played by instant agents under one placement.
#[derive(Clone, Debug, Serialize)]
pub struct GameTiming {
    /// Game and options.
    pub game: String,
    /// Actions timed.
    pub actions: u64,
    /// Wall time per action, µs, from the first action to the last: the median over
    /// the replays.
    pub us_per_action: f64,
    /// CPU time of the referee's match thread per action, µs (user and system).
    pub referee_cpu_us_per_action: f64,
    /// The median of the floor batches taken just before each replay, µs.
    pub floor_us: f64,
    /// The ratio to the floor: the median over the replays of µs per action divided
    /// by the floor batch taken just before that replay.
    pub ratio_to_pipe: f64,
    /// `us_per_action` over the round trip through the referee's I/O path.
    pub ratio_to_io_path: f64,
    /// Per replay: µs per action, and the µs per round trip of its floor batch.
    pub pairs: Vec<[f64; 2]>,
}

/// What does not depend on placement, per game configuration.
#[derive(Clone, Debug, Serialize)]
pub struct GameFigures {
    /// Game and options.
    pub game: String,
    /// Heap allocations (and reallocations) of the match loop per action; `None` when
    /// the counting allocator is not installed.
    pub allocations_per_action: Option<f64>,
    /// Legal-action generation, µs per position (positions from random play).
    pub legal_us_per_position: f64,
    /// `verify` throughput on this game's records, actions per second, on one CPU.
    pub verify_actions_per_s: f64,
}

/// Everything `referee bench` measures.
#[derive(Clone, Debug, Serialize)]
pub struct Figures {
    /// CPUs this process may use.
    pub cpus: usize,
    /// The CPU model, as the OS names it.
    pub cpu_model: String,
    /// Round trips and per-action costs, per placement.
    pub timings: Vec<PlacementTiming>,
    /// Per game configuration.
    pub games: Vec<GameFigures>,
    /// Resident memory added per concurrent game, KiB (agents' processes excluded).
    pub kib_per_concurrent_game: f64,
    /// What the sandbox costs, where agents can be sandboxed here.
    pub sandbox: Option<sandbox::SandboxFigures>,
    /// The fixed cost of a game and of a seat (whole matches fitted against plies).
    pub fixed_costs: super::fixed::FixedCosts,
}

impl Figures {
    /// The table `referee bench` prints.
    pub fn table(&self) -> String {
        let mut t = format!(
            "referee bench: {} CPU{} ({}); figures vary from run to run, compare the ratios\n\n",
            self.cpus,
            if self.cpus == 1 { "" } else { "s" },
            if self.cpu_model.is_empty() {
                "model unknown"
            } else {
                &self.cpu_model
            }
        );
        self.round_trips(&mut t);
        t.push('\n');
        self.per_action(&mut t);
        self.per_game(&mut t);
        self.memory_and_sandbox(&mut t);
        self.fixed_costs.table(&mut t);
        // Centred headings leave trailing blanks; the table is pasted into documents.
        t.lines().map(str::trim_end).collect::<Vec<_>>().join("\n") + "\n"
    }

    /// The round trips per placement: the floor, the referee's agent I/O, the I/O
    /// path, and their CPU times.
    fn round_trips(&self, t: &mut String) {
        let head: String = self
            .timings
            .iter()
            .map(|p| format!(" {:>10}", p.placement.label()))
            .collect();
        t.push_str(&format!("{:<46}{head}\n", "round trip, µs"));
        let row = |name: &str, f: &dyn Fn(&PlacementTiming) -> f64| {
            let cells: String = self.timings.iter().map(|p| format!(" {:>10.1}", f(p))).collect();
            format!("{name:<46}{cells}\n")
        };
        t.push_str(&row("pipe ping-pong with cat (the floor)", &|p| {
            p.pipe_round_trip_us
        }));
        t.push_str(&row("the referee's agent I/O (write, wait, read)", &|p| {
            p.agent_io_round_trip_us
        }));
        t.push_str(&row("  + record, 2 agents in turn: the I/O path", &|p| {
            p.io_path_round_trip_us
        }));
        t.push_str(&row("  its CPU µs on the referee's side, pipe", &|p| {
            p.pipe_cpu_us
        }));
        t.push_str(&row("  its CPU µs on the referee's side, I/O path", &|p| {
            p.io_path_cpu_us
        }));
    }

    /// The cost per action of each game with instant agents, per placement, and its
    /// ratios to the floor and to the I/O path.
    fn per_action(&self, t: &mut String) {
        t.push_str(&format!("{:<22} {:>7}", "per action", "actions"));
        for p in &self.timings {
            t.push_str(&format!(" | {:^30}", p.placement.label()));
        }
        t.push('\n');
        t.push_str(&format!("{:<22} {:>7}", "instant agents", ""));
        for _ in &self.timings {
            t.push_str(&format!(
                " | {:>7} {:>6} {:>6} {:>8}",
                "µs", "×pipe", "×I/O", "cpu µs"
            ));
        }
        t.push('\n');
        for (k, g) in self.games.iter().enumerate() {
            let actions = self.timings.first().map_or(0, |p| p.games[k].actions);
            t.push_str(&format!("{:<22} {:>7}", g.game, actions));
            for p in &self.timings {
                let x = &p.games[k];
                t.push_str(&format!(
                    " | {:>7.1} {:>6.2} {:>6.2} {:>8.1}",
                    x.us_per_action, x.ratio_to_pipe, x.ratio_to_io_path, x.referee_cpu_us_per_action
                ));
            }
            t.push('\n');
        }
        t.push_str(
            "×pipe: the median over replays of µs per action over the floor batch just before each\n\n",
        );
    }

    /// What does not depend on placement: allocations, legal-action generation and
    /// `verify` throughput per game.
    fn per_game(&self, t: &mut String) {
        t.push_str(&format!(
            "{:<22} {:>13} {:>16} {:>18}\n",
            "game", "allocs/action", "legal µs/position", "verify actions/s"
        ));
        for g in &self.games {
            let allocs = g
                .allocations_per_action
                .map_or_else(|| "n/a".to_string(), |n| format!("{n:.1}"));
            t.push_str(&format!(
                "{:<22} {:>13} {:>16.1} {:>18.0}\n",
                g.game, allocs, g.legal_us_per_position, g.verify_actions_per_s
            ));
        }
    }

    /// The memory per concurrent match and the sandbox's costs.
    fn memory_and_sandbox(&self, t: &mut String) {
        t.push_str(&format!(
            "\nmemory per concurrent match (2-player Telka, referee only): {:.1} KiB\n",
            self.kib_per_concurrent_game
        ));
        match &self.sandbox {
            Some(s) => {
                t.push_str(&format!(
                    "\n{:<48}{:>9}{:>11}\n",
                    format!("{}, unpinned", s.sandbox),
                    "plain",
                    "sandboxed"
                ));
                t.push_str(&format!(
                    "{:<48}{:>9.1}{:>11.1}\n",
                    "start of an agent, to protocolok, ms", s.start_ms[0], s.start_ms[1]
                ));
                let action = format!("per action, {}, µs", s.game);
                t.push_str(&format!(
                    "{action:<48}{:>9.1}{:>11.1}\n",
                    s.us_per_action[0], s.us_per_action[1]
                ));
            }
            None => t.push_str("\nthe sandbox: not available here, not measured\n"),
        }
    }
}
