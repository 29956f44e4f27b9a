//! Agent-protocol lines, both directions: `FromAgent::parse` and `AgentInput::parse` on
//! every line, then the whole input as a script for the built-in agents.
#![no_main]

use libfuzzer_sys::fuzz_target;
use referee::protocol::agent::AgentInput;
use referee_fuzz::{check_agent_line, check_bots, Setup};

fuzz_target!(|input: (u8, u64, &str)| {
    let (setup, seed, text) = input;
    for line in text.split('\n') {
        check_agent_line(line);
        let _ = AgentInput::parse(line);
    }
    let setup = Setup::pick(setup);
    let start = setup.start();
    let script = format!(
        "protocol 1\nnewgame game {} seat 1 seats {} options {}\n{text}\ngo move movetime 1\n",
        setup.game,
        start.seat_count(),
        start.options()
    );
    check_bots(&script, seed);
});
