//! Actions of every game through `Game::play`, from positions reached by random play:
//! each input line is played for a chosen seat and for the seat to act.
#![no_main]

use libfuzzer_sys::fuzz_target;
use referee::game::Seat;
use referee_fuzz::{check_play, played, to_act, Setup};

fuzz_target!(|input: (u8, u64, u8, u8, &str)| {
    let (setup, seed, plies, seat, text) = input;
    let setup = Setup::pick(setup);
    let mut game = played(setup, seed, plies as usize % 64);
    let seat = Seat::new(seat as usize % 10 + 1).expect("seat");
    for action in text.split('\n').take(16) {
        check_play(setup, game.as_mut(), seat, action);
        if let Some(s) = to_act(game.as_ref()) {
            check_play(setup, game.as_mut(), s, action);
        }
    }
});
