//! Splitting an agent's stdout into lines with a hard bound on memory.
//!
//! An agent may print one endless line; growing a buffer to hold it would let a bot
//! exhaust the referee's memory. So the splitter keeps at most [`MAX_LINE`] bytes of
//! the current line, reports an over-long line once and then discards bytes until the
//! next `\n` without looking back.

use std::io::{ErrorKind, Read};
use std::ops::ControlFlow;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::SyncSender;

use super::{Received, MAX_LINE};

/// Size of each read from the pipe; also the most a read can add past a full line.
const CHUNK: usize = 8 * 1024;

/// Incremental line splitter: feed it bytes, it emits complete lines.
#[derive(Debug, Default)]
pub(crate) struct LineSplitter {
    /// The current line so far, never more than `MAX_LINE` bytes.
    line: Vec<u8>,
    /// Inside a line already reported as too long: drop bytes up to its `\n`.
    skipping: bool,
}

impl LineSplitter {
    /// Splits `bytes`, emitting each finished line; stops early if `emit` breaks.
    pub(crate) fn feed(
        &mut self,
        mut bytes: &[u8],
        emit: &mut impl FnMut(Received) -> ControlFlow<()>,
    ) -> ControlFlow<()> {
        while !bytes.is_empty() {
            let end = bytes.iter().position(|&b| b == b'\n');
            let piece = &bytes[..end.unwrap_or(bytes.len())];
            if !self.skipping {
                if self.line.len() + piece.len() > MAX_LINE {
                    self.line.clear();
                    self.skipping = end.is_none();
                    emit(Received::TooLong)?;
                } else {
                    self.line.extend_from_slice(piece);
                    if end.is_some() {
                        emit(finish(std::mem::take(&mut self.line)))?;
                    }
                }
            } else if end.is_some() {
                self.skipping = false;
            }
            bytes = match end {
                Some(i) => &bytes[i + 1..],
                None => &[],
            };
        }
        ControlFlow::Continue(())
    }

    /// Emits a last line that had no `\n` before the end of the output.
    pub(crate) fn finish(&mut self, emit: &mut impl FnMut(Received) -> ControlFlow<()>) {
        if !self.skipping && !self.line.is_empty() {
            let _ = emit(finish(std::mem::take(&mut self.line)));
        }
    }

    /// Bytes held for the current line; kept bounded whatever the input.
    #[cfg(test)]
    fn held(&self) -> usize {
        self.line.capacity()
    }
}

/// Turns the bytes of one line (without `\n`) into what the caller receives.
fn finish(mut line: Vec<u8>) -> Received {
    if line.last() == Some(&b'\r') {
        line.pop();
    }
    match String::from_utf8(line) {
        Ok(text) => Received::Line(text),
        Err(err) => Received::NotUtf8(err.into_bytes()),
    }
}

/// Reads `input` to its end, sending its lines; returns early once nobody listens.
///
/// The channel is bounded, so a flooding agent blocks here, on its own thread, and
/// then in its own writes: the back-pressure lands on the agent, not the referee.
///
/// `busy` is set from the moment a read has returned until every line it completed is
/// queued, so the receiver can tell "nothing more arrived" from "the rest of what
/// arrived together is on its way" (`AgentProcess::try_recv_settled`).
pub(crate) fn pump_lines(mut input: impl Read, out: &SyncSender<Received>, busy: &AtomicBool) {
    let mut splitter = LineSplitter::default();
    let mut emit = |msg| match out.send(msg) {
        Ok(()) => ControlFlow::Continue(()),
        Err(_) => ControlFlow::Break(()),
    };
    let mut chunk = [0u8; CHUNK];
    loop {
        let n = match input.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => n,
            Err(err) if err.kind() == ErrorKind::Interrupted => continue,
            // A read error on a pipe means the agent side is gone: same as its end.
            Err(_) => break,
        };
        busy.store(true, Ordering::SeqCst);
        let flow = splitter.feed(&chunk[..n], &mut emit);
        busy.store(false, Ordering::SeqCst);
        if flow.is_break() {
            return;
        }
    }
    splitter.finish(&mut emit);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Feeds `input` in pieces of `step` bytes and collects what comes out.
    fn split(input: &[u8], step: usize) -> Vec<Received> {
        let mut splitter = LineSplitter::default();
        let mut got = Vec::new();
        let mut emit = |msg| {
            got.push(msg);
            ControlFlow::Continue(())
        };
        for piece in input.chunks(step) {
            let _ = splitter.feed(piece, &mut emit);
        }
        splitter.finish(&mut emit);
        got
    }

    fn line(text: &str) -> Received {
        Received::Line(text.to_string())
    }

    #[test]
    fn splits_lines_whatever_the_read_boundaries() {
        let input = b"id name x\r\nreadyok\n\nbestmove a1\n";
        let want = vec![line("id name x"), line("readyok"), line(""), line("bestmove a1")];
        for step in [1, 2, 3, 7, 100] {
            assert_eq!(split(input, step), want, "step {step}");
        }
    }

    #[test]
    fn last_line_without_newline_is_kept() {
        assert_eq!(split(b"a\nb", 1), vec![line("a"), line("b")]);
    }

    #[test]
    fn line_of_exactly_max_line_bytes_is_accepted() {
        let mut input = vec![b'x'; MAX_LINE];
        input.push(b'\n');
        assert_eq!(split(&input, CHUNK), vec![line(&"x".repeat(MAX_LINE))]);
    }

    #[test]
    fn over_long_line_is_reported_once_and_skipped() {
        let mut input = vec![b'x'; MAX_LINE + 1];
        input.extend_from_slice(b"\nok\n");
        for step in [1000, CHUNK, MAX_LINE + 5] {
            assert_eq!(
                split(&input, step),
                vec![Received::TooLong, line("ok")],
                "step {step}"
            );
        }
    }

    #[test]
    fn endless_line_does_not_grow_the_buffer() {
        let mut splitter = LineSplitter::default();
        let mut count = 0;
        let mut emit = |msg| {
            assert_eq!(msg, Received::TooLong);
            count += 1;
            ControlFlow::Continue(())
        };
        let chunk = [b'y'; CHUNK];
        for _ in 0..(8 * 1024 * 1024 / CHUNK) {
            let _ = splitter.feed(&chunk, &mut emit);
            assert!(splitter.held() <= MAX_LINE + CHUNK);
        }
        assert_eq!(count, 1);
    }

    #[test]
    fn invalid_utf8_is_reported_with_its_bytes() {
        assert_eq!(
            split(b"\xff\xfeok\nfine\n", 4),
            vec![Received::NotUtf8(b"\xff\xfeok".to_vec()), line("fine")]
        );
    }

    #[test]
    fn pump_stops_when_the_receiver_is_gone() {
        let (tx, rx) = std::sync::mpsc::sync_channel(1);
        drop(rx);
        // Would loop forever on an endless reader if it ignored the closed channel.
        pump_lines(std::io::repeat(b'\n'), &tx, &AtomicBool::new(false));
    }
}
