//! Micro-benchmarks of the referee's per-action hot paths: parsing an action,
//! checking and applying it, building a seat's view, and sealing a record line.
//! Run with `cargo bench --bench hot_paths`.

use criterion::{criterion_group, criterion_main, Criterion};
use referee::game::{Game, GameId, Options, Seat, Turn};
use referee::record::{seal, ActionLine, Line, GENESIS};
use referee::rng::Rng;
use std::hint::black_box;

/// A game of `id` after `plies` random correct actions.
fn midgame(id: GameId, options: &[&str], plies: usize) -> Box<dyn Game> {
    let mut g = id
        .create(&Options::parse(options.iter().copied()).unwrap(), None)
        .unwrap();
    let mut rng = Rng::new(11);
    for _ in 0..plies {
        let Turn::Act { seat, .. } = g.turn() else { break };
        let legal = g.correct_actions();
        if legal.is_empty() {
            break;
        }
        g.play(seat, &legal[rng.below(legal.len())].clone()).unwrap();
    }
    g
}

fn bench_game(c: &mut Criterion, name: &str, id: GameId, options: &[&str], plies: usize) {
    let g = midgame(id, options, plies);
    let Turn::Act { seat, .. } = g.turn() else { return };
    let action = g.correct_actions()[0].clone();
    c.bench_function(&format!("{name}/legal"), |b| {
        b.iter(|| black_box(g.legal_actions()))
    });
    c.bench_function(&format!("{name}/play"), |b| {
        b.iter(|| {
            let mut copy = g.boxed_clone();
            black_box(copy.play(seat, black_box(&action)).unwrap())
        })
    });
    c.bench_function(&format!("{name}/clone"), |b| {
        b.iter(|| black_box(g.boxed_clone()))
    });
    c.bench_function(&format!("{name}/view"), |b| {
        b.iter(|| black_box(g.view(Seat::new(1).unwrap())))
    });
}

fn games(c: &mut Criterion) {
    bench_game(c, "telka2", GameId::Telka, &["players=2"], 40);
    bench_game(c, "telka4", GameId::Telka, &["players=4"], 80);
    bench_game(c, "idoubtit0", GameId::IDoubtIt, &["variant=0"], 60);
    bench_game(c, "idoubtit9", GameId::IDoubtIt, &["variant=9"], 70);
    bench_game(c, "multichess3", GameId::MultiChess, &["players=3"], 60);
}

fn record_line(c: &mut Criterion) {
    let line = Line::Action(ActionLine {
        ply: 17,
        seat: 1,
        action: "a1-c3-e5".into(),
        taken: None,
        forced: false,
        opening: false,
        events: vec!["move blue a1-c3-e5 capture b2".into()],
        think_ms: Some(3),
        clock_ms: Some(9_870),
    });
    c.bench_function("record/seal", |b| {
        b.iter(|| black_box(seal(GENESIS, black_box(&line))))
    });
}

criterion_group!(benches, games, record_line);
criterion_main!(benches);
