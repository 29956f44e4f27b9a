//! `referee verify`: re-check records and name the first bad line.

use std::path::PathBuf;

use super::{print, Failure, EXIT_FAILED, EXIT_OK, EXIT_USAGE};
use crate::record;

/// Verifies each record; exit 1 if any is wrong, 2 if any cannot be read at all.
pub fn run(records: &[PathBuf]) -> Result<u8, Failure> {
    let mut code = EXIT_OK;
    for path in records {
        match record::check_file(path) {
            Ok(replay) => {
                let labels: Vec<String> = replay.header.seats.iter().map(|s| s.label.clone()).collect();
                let mut status = match (&replay.result, replay.game.outcome()) {
                    (Some(_), Some(outcome)) => {
                        format!("finished: {}", outcome.describe(replay.game.id(), &labels))
                    }
                    (Some(r), None) => format!(
                        "finished: places {} reason {}",
                        r.places.iter().map(u8::to_string).collect::<Vec<_>>().join(" "),
                        r.reason
                    ),
                    // A mail game waits for its next mail, it was not interrupted.
                    (None, _) if crate::pbm::in_progress(path) => format!(
                        "UNFINISHED: a play-by-mail game in progress (`referee pbm status {}` says whose turn it is; `referee pbm play` continues it)",
                        path.display()
                    ),
                    (None, _) => {
                        "UNFINISHED: no result line (the game was interrupted; `match --resume` continues it)"
                            .to_string()
                    }
                };
                if let Some(n) = replay.torn {
                    status.push_str(&format!("; line {n} was cut short by a crash and is ignored"));
                }
                print(&format!(
                    "{}: ok, {} with {} lines after the header, {} plies, {status}\n",
                    path.display(),
                    replay.header.game,
                    replay.line_count,
                    replay.game.plies()
                ))?;
            }
            Err(e) if e.is_unreadable() => {
                eprintln!(
                    "referee: {}",
                    crate::text::printable(&format!("{}: {e}", path.display()))
                );
                code = code.max(EXIT_USAGE);
            }
            Err(e) => {
                eprintln!(
                    "referee: {}",
                    crate::text::printable(&format!("{}: {e}", path.display()))
                );
                code = code.max(EXIT_FAILED);
            }
        }
    }
    Ok(code)
}
