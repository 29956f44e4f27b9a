//! `referee serve`: the controller protocol on stdin/stdout.

use std::io::{self, BufRead, Read};

use super::{print, Failure, EXIT_OK};
use crate::serve::{json, Answer, CommandError, Controller, ErrorKind, Reply};

/// Longest command line read (protocol.md §2): far above any command, whose longest
/// part, a state string, is a few KiB. A longer line is answered with an error and
/// skipped.
const MAX_COMMAND: usize = 1 << 20;

/// What [`read_command`] found.
#[derive(Debug, PartialEq, Eq)]
enum Incoming {
    /// A line of at most [`MAX_COMMAND`] bytes (its newline included, if any).
    Line,
    /// A longer line, read past and dropped.
    TooLong,
    /// The end of the input.
    End,
}

/// Reads one line into `buf` (cleared first), holding at most [`MAX_COMMAND`] + 1
/// bytes of it: a controller that sends an endless line must not make the referee
/// hold it.
fn read_command(input: &mut impl BufRead, buf: &mut Vec<u8>) -> io::Result<Incoming> {
    buf.clear();
    let n = input
        .by_ref()
        .take(MAX_COMMAND as u64 + 1)
        .read_until(b'\n', buf)?;
    if n == 0 {
        return Ok(Incoming::End);
    }
    if buf.len() <= MAX_COMMAND || buf.last() == Some(&b'\n') {
        return Ok(Incoming::Line);
    }
    skip_line(input)?;
    Ok(Incoming::TooLong)
}

/// Consumes the input through the next newline (or to its end) a buffer at a time,
/// keeping none of it.
fn skip_line(input: &mut impl BufRead) -> io::Result<()> {
    loop {
        let chunk = match input.fill_buf() {
            Ok(chunk) => chunk,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if chunk.is_empty() {
            return Ok(());
        }
        match memchr::memchr(b'\n', chunk) {
            Some(at) => {
                input.consume(at + 1);
                return Ok(());
            }
            None => {
                let len = chunk.len();
                input.consume(len);
            }
        }
    }
}

/// Reads commands until `quit` or end of input, answering each: in the text form, or
/// with `json` one JSON object per line.
pub fn run(json: bool) -> Result<u8, Failure> {
    let mut controller = Controller::new();
    let mut input = io::stdin().lock();
    let mut buf = Vec::new();
    loop {
        let (answer, quit) = match read_command(&mut input, &mut buf).map_err(Failure::failed)? {
            Incoming::End => return Ok(EXIT_OK),
            Incoming::TooLong => (
                Err(usage(format!(
                    "command line too long: over {MAX_COMMAND} bytes (skipped)"
                ))),
                false,
            ),
            Incoming::Line => match std::str::from_utf8(&buf) {
                Err(_) => (Err(usage("command is not UTF-8".to_string())), false),
                Ok(line) => {
                    let line = line.trim_end_matches(['\n', '\r']);
                    if line.trim().is_empty() || line.trim_start().starts_with('#') {
                        continue;
                    }
                    controller.execute_typed(line)
                }
            },
        };
        print(&render(&answer, quit, json))?;
        if quit {
            return Ok(EXIT_OK);
        }
    }
}

/// A usage error found before the controller sees the line.
fn usage(message: String) -> CommandError {
    CommandError {
        kind: ErrorKind::Usage,
        message,
    }
}

/// The whole answer to one command, its newlines included.
fn render(answer: &Result<Reply, CommandError>, quit: bool, json: bool) -> String {
    if json {
        return json::answer_line(answer) + "\n";
    }
    let answer = Answer::of(answer, quit);
    let mut text = String::new();
    for l in answer.lines.iter().chain([&answer.last]) {
        text.push_str(l);
        text.push('\n');
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reader that hands out at most 7 bytes per call, so lines span many buffers.
    fn trickle(bytes: &[u8]) -> io::BufReader<&[u8]> {
        io::BufReader::with_capacity(7, bytes)
    }

    #[test]
    fn lines_at_the_cap_are_read_and_longer_ones_skipped() {
        let at_cap = "a".repeat(MAX_COMMAND - 1) + "\n";
        let over = "b".repeat(MAX_COMMAND + 5) + "\n";
        let unended = "c".repeat(MAX_COMMAND + 1);
        let all = format!("{at_cap}{over}turn\n{unended}");
        let mut input = trickle(all.as_bytes());
        let mut buf = Vec::new();
        assert_eq!(read_command(&mut input, &mut buf).unwrap(), Incoming::Line);
        assert_eq!(buf, at_cap.as_bytes());
        assert_eq!(read_command(&mut input, &mut buf).unwrap(), Incoming::TooLong);
        assert!(buf.len() <= MAX_COMMAND + 1);
        assert_eq!(read_command(&mut input, &mut buf).unwrap(), Incoming::Line);
        assert_eq!(buf, b"turn\n");
        assert_eq!(read_command(&mut input, &mut buf).unwrap(), Incoming::TooLong);
        assert_eq!(read_command(&mut input, &mut buf).unwrap(), Incoming::End);
    }
}
