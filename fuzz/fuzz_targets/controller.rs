//! Controller sessions: every input line is a command (`!N` plays the N-th legal
//! action, `!u N M …` plays legal actions and undoes them, `!cN` plays in a clone,
//! `!r` records and loads back); every answer must end with one `ok` or
//! `error <kind> …` line (and be one JSON object in its `--json` form), and a
//! rejected command must change nothing.
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use referee::serve::ControlCommand;
use referee_fuzz::{check_error_line, Session, Setup};

/// One scratch directory for the record files of the whole run.
fn scratch() -> &'static std::path::Path {
    static DIR: OnceLock<std::path::PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("referee-fuzz-controller-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("scratch directory");
        dir
    })
}

fuzz_target!(|input: (u8, &str)| {
    let (start, text) = input;
    let mut session = Session::new(scratch());
    // Half of the sessions start with a game, so that game commands get far.
    if start % 2 == 0 {
        let setup = Setup::pick(start / 2);
        session.line(&format!("new {} {}", setup.game, setup.options));
    }
    for line in text.split('\n').take(64) {
        if let Err(e) = ControlCommand::parse(line) {
            check_error_line(&e.to_string());
        }
        session.line(line);
    }
});
