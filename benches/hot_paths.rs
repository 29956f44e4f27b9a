//! Micro-benchmarks of the referee's per-action hot paths: parsing an action,
//! checking and applying it, building a seat's view, sealing a record line, and
//! replaying a whole record (`verify`). Run with `cargo bench --bench hot_paths`.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use referee::clock::{SeatClock, TimeControl};
use referee::game::{Game, GameId, Options, Seat, Turn};
use referee::record::{self, seal, ActionLine, Header, Line, RecordWriter, ResultLine, SeatEntry, GENESIS};
use referee::rng::Rng;
use std::hint::black_box;
use std::time::Duration;

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

/// Parsing one action of each game on its own, without checking or applying it.
fn parse_actions(c: &mut Criterion) {
    use referee::game::{idoubtit, multichess, parker};
    let (telka, idt, multi) = ("k9-i11-g11-i9-k7", "e7e8q", "2:e2-2:e4");
    // Each must parse: the error path (a formatted message) is not what is timed.
    assert!(parker::rules::Action::parse(telka).is_ok());
    assert!(idoubtit::notation::parse(idt, idoubtit::board::BoardKind::Chess).is_ok());
    assert!(multichess::rules::Move::parse(multi, 3).is_ok());
    c.bench_function("telka/parse", |b| {
        b.iter(|| black_box(parker::rules::Action::parse(black_box(telka))))
    });
    c.bench_function("idoubtit/parse", |b| {
        b.iter(|| {
            black_box(idoubtit::notation::parse(
                black_box(idt),
                idoubtit::board::BoardKind::Chess,
            ))
        })
    });
    c.bench_function("multichess/parse", |b| {
        b.iter(|| black_box(multichess::rules::Move::parse(black_box(multi), 3)))
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
        seat: Seat::new(1).unwrap(),
        action: "a1-c3-e5".into(),
        taken: None,
        forced: false,
        opening: false,
        events: vec!["move blue a1-c3-e5 capture b2".into()],
        think_ms: Some(3),
        clock_ms: Some(9_870),
        time: Some("2025-01-01T00:00:00Z".into()),
    });
    c.bench_function("record/seal", |b| {
        b.iter(|| black_box(seal(GENESIS, black_box(&line))))
    });
}

/// A record of a random game of `id` as the referee writes it, and its action count.
fn random_record(id: GameId, options: &[&str], seed: u64) -> (Vec<u8>, u64) {
    let options = Options::parse(options.iter().copied()).unwrap();
    let mut g = id.create(&options, None).unwrap();
    let mut rng = Rng::new(seed);
    // The agents' clocks, charged as the match loop charges them, so that the record
    // verifies (verify replays them).
    let control = TimeControl::parse_tc("10+0.1").unwrap();
    let mut clocks = vec![SeatClock::new(control); g.seat_count()];
    let mut bytes = Vec::new();
    let mut w = RecordWriter::new(&mut bytes);
    let header = Header {
        format: record::FORMAT,
        referee: "0.1.0".into(),
        game: id.to_string(),
        options: g.options(),
        state: None,
        seats: Seat::all(g.seat_count())
            .map(|seat| SeatEntry {
                seat,
                label: g.seat_label(seat),
                name: "random".into(),
                command: Some("referee agent random".into()),
                entrant: None,
                time_control: None,
            })
            .collect(),
        seed,
        time_control: Some(control.to_string()),
        sandbox: None,
        start: "2025-01-01T00:00:00Z".into(),
        deadline: None,
        time: Some("2025-01-01T00:00:00Z".into()),
    };
    w.write(&Line::Header(header)).unwrap();
    let mut actions = 0;
    while let Turn::Act { seat, .. } = g.turn() {
        let legal = g.correct_actions();
        let action = legal[rng.below(legal.len())].clone();
        let forced = g.forced_action().as_deref() == Some(action.as_str());
        let played = g.play(seat, &action).unwrap();
        actions += 1;
        // The referee's forced actions are untimed.
        let timing = (!forced).then(|| {
            let think = rng.below(50) as u64;
            let clock = &mut clocks[seat.index()];
            clock.spend(Duration::from_millis(think));
            (think, clock.left().as_millis() as u64)
        });
        w.write(&Line::Action(ActionLine {
            ply: g.plies(),
            seat,
            action,
            taken: played.taken,
            forced,
            opening: false,
            events: played.events,
            think_ms: timing.map(|t| t.0),
            clock_ms: timing.map(|t| t.1),
            time: Some("2025-01-01T00:00:00Z".into()),
        }))
        .unwrap();
    }
    let outcome = g.outcome().unwrap();
    w.write(&Line::Result(ResultLine {
        places: outcome.places,
        reason: outcome.reason.to_string(),
        plies: g.plies(),
        state: g.state(),
        escaped: None,
        time: Some("2025-01-01T00:00:00Z".into()),
    }))
    .unwrap();
    (bytes, actions)
}

fn verify(c: &mut Criterion) {
    let (bytes, actions) = random_record(GameId::Telka, &["players=2"], 1);
    let mut group = c.benchmark_group("verify");
    group.throughput(Throughput::Elements(actions));
    group.bench_function("telka2", |b| {
        b.iter(|| black_box(record::replay(black_box(&bytes[..])).unwrap()))
    });
    group.finish();
}

criterion_group!(benches, parse_actions, games, record_line, verify);
criterion_main!(benches);
