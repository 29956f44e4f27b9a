//! Records through `record::replay`: arbitrary bytes, bytes spliced into a valid
//! record (`build_record`: a game played here, from the start or a later state), and
//! valid records with a line's JSON replaced and the hash chain sealed
//! again (so the change reaches the rules checks behind the hashes).
#![no_main]

use libfuzzer_sys::fuzz_target;
use referee::record;
use referee_fuzz::{build_record, check_record, seal_bodies, Setup};

fuzz_target!(|input: (u8, u8, u64, u16, u16, &[u8])| {
    let (mode, setup, seed, a, b, data) = input;
    if mode % 3 == 0 {
        check_record(data);
        return;
    }
    let setup = Setup::pick(setup);
    // Half of the records start from a state reached by up to 29 plies.
    let lead = if seed % 2 == 0 {
        0
    } else {
        (seed / 2 % 30) as usize
    };
    let (valid, _) = build_record(setup, seed, lead, mode as usize / 3 % 40);
    if mode % 3 == 1 {
        let at = a as usize % (valid.len() + 1);
        let to = (at + b as usize % 64).min(valid.len());
        let mut bytes = valid[..at].to_vec();
        bytes.extend_from_slice(data);
        bytes.extend_from_slice(&valid[to..]);
        check_record(&bytes);
        return;
    }
    let text = String::from_utf8(valid).expect("UTF-8");
    let mut bodies: Vec<String> = text
        .lines()
        .map(|l| record::unseal(l).expect("sealed").0)
        .collect();
    let line = a as usize % bodies.len();
    let replacement = String::from_utf8_lossy(data).into_owned();
    match b % 3 {
        // The whole line.
        0 => bodies[line] = replacement,
        // One member's value, kept as JSON when it parses.
        1 => {
            let mut value: serde_json::Value = serde_json::from_str(&bodies[line]).expect("JSON");
            let keys: Vec<String> = value.as_object().expect("object").keys().cloned().collect();
            let key = &keys[b as usize / 3 % keys.len()];
            value[key] = serde_json::from_str(&replacement).unwrap_or(serde_json::Value::String(replacement));
            bodies[line] = serde_json::to_string(&value).expect("JSON");
        }
        // An inserted line.
        _ => bodies.insert(line, replacement),
    }
    check_record(&seal_bodies(&bodies));
});
