//! State strings (`GameId::create`) and view strings (the I-Doubt-It and multi-player
//! chess view parsers, then the built-in agents) of every game: the input as it is, or
//! spliced into a valid state or view of a game played at random.
#![no_main]

use libfuzzer_sys::fuzz_target;
use referee::game::Seat;
use referee_fuzz::{check_state_text, check_view_text, played, splice, Setup};

fuzz_target!(|input: (u8, u8, u64, u16, u16, &str)| {
    let (setup, mode, seed, a, b, text) = input;
    let setup = Setup::pick(setup);
    let game = played(setup, seed, mode as usize / 4 % 64);
    let seat = Seat::from_index(seed as usize % game.seat_count());
    match mode % 4 {
        0 => check_state_text(setup, text),
        1 => check_view_text(setup, seat, text),
        2 => check_state_text(setup, &splice(&game.state(), a, b, text)),
        _ => check_view_text(setup, seat, &splice(game.view(seat).text(), a, b, text)),
    }
});
