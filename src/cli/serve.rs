//! `referee serve`: the controller protocol on stdin/stdout.

use std::io::{self, BufRead, Read};

use super::{print, Failure, EXIT_OK};
use crate::protocol::controller::Controller;

/// Longest command line read; a longer one is answered with an error and skipped.
const MAX_COMMAND: usize = 1 << 20;

/// Reads commands until `quit` or end of input, answering each.
pub fn run() -> Result<u8, Failure> {
    let mut controller = Controller::new();
    let mut input = io::stdin().lock();
    let mut buf = Vec::new();
    loop {
        buf.clear();
        let n = (&mut input)
            .take(MAX_COMMAND as u64 + 1)
            .read_until(b'\n', &mut buf)
            .map_err(Failure::failed)?;
        if n == 0 {
            return Ok(EXIT_OK);
        }
        let answer = if buf.len() > MAX_COMMAND && buf.last() != Some(&b'\n') {
            // Skip the rest of the over-long line before answering.
            let mut sink = Vec::new();
            let _ = (&mut input).take(u64::MAX).read_until(b'\n', &mut sink);
            format!("error usage command longer than {MAX_COMMAND} bytes\n")
        } else {
            match std::str::from_utf8(&buf) {
                Err(_) => "error usage command is not UTF-8\n".to_string(),
                Ok(line) => {
                    let line = line.trim_end_matches(['\n', '\r']);
                    if line.trim().is_empty() || line.trim_start().starts_with('#') {
                        continue;
                    }
                    let answer = controller.execute(line);
                    let mut text = String::new();
                    for l in &answer.lines {
                        text.push_str(l);
                        text.push('\n');
                    }
                    text.push_str(&answer.last);
                    text.push('\n');
                    if answer.quit {
                        print(&text)?;
                        return Ok(EXIT_OK);
                    }
                    text
                }
            }
        };
        print(&answer)?;
    }
}
