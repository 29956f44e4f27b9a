//! Time-control strings (`parse_tc`, `parse_st`, `parse_recorded`: what is accepted
//! prints back to the same control) and option words (`Options::parse`, and every
//! game's check of its options).
#![no_main]

use libfuzzer_sys::fuzz_target;
use referee::clock::TimeControl;
use referee::game::GameId;
use referee_fuzz::{check_control, check_game_options, check_options};

fuzz_target!(|text: &str| {
    check_control(TimeControl::parse_tc(text));
    check_control(TimeControl::parse_st(text));
    check_control(TimeControl::parse_recorded(text));
    let words: Vec<&str> = text.split_whitespace().collect();
    if let Some(options) = check_options(&words) {
        for game in GameId::ALL {
            check_game_options(game, &options);
        }
    }
});
