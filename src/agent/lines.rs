//! Splitting an agent's stdout into lines with a hard bound on memory.
//!
//! An agent may print one endless line; growing a buffer to hold it would let a bot
//! exhaust the referee's memory. So the splitter keeps at most [`MAX_LINE`] bytes of
//! the current line, reports an over-long line once and then discards bytes until the
//! next `\n` without looking back.

use std::collections::VecDeque;
use std::fs::File;
use std::io::{self, ErrorKind, Read};
use std::ops::ControlFlow;
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::time::Duration;

use nix::fcntl::{fcntl, FcntlArg, OFlag};
use nix::poll::{poll, PollFd, PollFlags, PollTimeout};

use super::{Received, MAX_HELD_LINES, MAX_LINE};

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
            let end = memchr::memchr(b'\n', bytes);
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

/// An agent's stdout, read on the caller's thread without ever blocking it.
///
/// The pipe is non-blocking and read only when the caller asks for a line, so the
/// line reaches the match loop with no thread hand-over (a wake-up per line was the
/// largest part of the referee's cost per action). An agent that prints while nobody
/// reads it fills its pipe and then blocks in its own writes: the back-pressure lands
/// on the agent, not on the referee.
#[derive(Debug)]
pub(crate) struct Output {
    /// The pipe, until its end was read (or it failed, which means the same).
    pipe: Option<File>,
    splitter: LineSplitter,
    /// Lines split off but not yet taken; holds at most what one fill adds past
    /// [`QUEUE`] lines.
    queue: VecDeque<Received>,
    /// Read buffer, kept: zeroing a fresh one per read cost more than the read.
    chunk: Box<[u8]>,
}

/// Lines held before reading stops until the caller takes some.
const QUEUE: usize = MAX_HELD_LINES;

/// Reads per [`Output::fill`]: enough to get past a whole line of [`MAX_LINE`] bytes,
/// so that a fill of a full pipe always yields a line or [`Received::TooLong`] (a
/// caller takes "nothing" to mean nothing more is there), and few enough that an
/// agent printing without end cannot keep the caller from its deadline checks.
const READS_PER_FILL: usize = MAX_LINE / CHUNK + 1;

impl Output {
    /// Takes over `pipe` (the read end; an agent's stdout), making it non-blocking.
    pub(crate) fn new(pipe: impl Into<OwnedFd>) -> io::Result<Output> {
        let pipe = File::from(pipe.into());
        let fd = pipe.as_raw_fd();
        let flags = OFlag::from_bits_truncate(fcntl(fd, FcntlArg::F_GETFL)?);
        fcntl(fd, FcntlArg::F_SETFL(flags | OFlag::O_NONBLOCK))?;
        Ok(Output {
            pipe: Some(pipe),
            splitter: LineSplitter::default(),
            queue: VecDeque::new(),
            chunk: vec![0; CHUNK].into_boxed_slice(),
        })
    }

    /// An output that has already ended (the agent's stdout was not piped).
    pub(crate) fn closed() -> Output {
        Output {
            pipe: None,
            splitter: LineSplitter::default(),
            queue: VecDeque::new(),
            chunk: Box::default(),
        }
    }

    /// The next line already split off, or [`Received::Closed`] once the pipe has
    /// ended and every line is taken; `None` while more may come.
    pub(crate) fn take(&mut self) -> Option<Received> {
        match self.queue.pop_front() {
            Some(received) => Some(received),
            None if self.pipe.is_none() => Some(Received::Closed),
            None => None,
        }
    }

    /// Reads what the pipe holds now, without waiting: until a read comes back short,
    /// at most [`READS_PER_FILL`] reads, and not while [`QUEUE`] lines are held.
    /// Returns whether the pipe was read to empty (or to its end); false when one of
    /// those limits stopped the reading first.
    pub(crate) fn fill(&mut self) -> bool {
        for _ in 0..READS_PER_FILL {
            if self.queue.len() >= QUEUE {
                return false;
            }
            let Some(pipe) = self.pipe.as_mut() else {
                return true;
            };
            let n = match pipe.read(&mut self.chunk) {
                Ok(n) => n,
                Err(err) if err.kind() == ErrorKind::Interrupted => continue,
                Err(err) if err.kind() == ErrorKind::WouldBlock => return true,
                // A read error on a pipe means the agent side is gone: same as its end.
                Err(_) => 0,
            };
            let queue = &mut self.queue;
            let mut emit = |msg| {
                queue.push_back(msg);
                ControlFlow::Continue(())
            };
            if n == 0 {
                self.splitter.finish(&mut emit);
                self.pipe = None;
                return true;
            }
            let _ = self.splitter.feed(&self.chunk[..n], &mut emit);
            // A short read emptied the pipe: another would only say "nothing more"
            // at the price of a system call per line.
            if n < self.chunk.len() {
                return true;
            }
        }
        false
    }

    /// Waits at most `limit` until the pipe is readable or has ended; true unless the
    /// time ran out with nothing to read. An ended pipe returns at once.
    pub(crate) fn wait(&self, limit: Duration) -> bool {
        let Some(pipe) = self.pipe.as_ref() else {
            return true;
        };
        let millis = u16::try_from(limit.as_millis()).unwrap_or(u16::MAX);
        // Round up: a sub-millisecond wait must not become a busy loop of zero waits.
        let millis = if Duration::from_millis(millis.into()) < limit {
            millis.saturating_add(1)
        } else {
            millis
        };
        let mut fds = [PollFd::new(pipe.as_fd(), PollFlags::POLLIN)];
        // A failed or interrupted poll counts as readable: the caller reads and looks
        // again, so nothing is missed and nothing spins.
        !matches!(poll(&mut fds, PollTimeout::from(millis)), Ok(0))
    }
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

    /// A fill of a pipe holding a line of exactly `MAX_LINE` bytes and another after
    /// it yields both: a caller reads "nothing" as "nothing more is there".
    #[cfg(target_os = "linux")]
    #[test]
    fn a_fill_gets_past_a_line_of_max_line_bytes() {
        use std::io::Write;
        // Close-on-exec, as the referee's own pipes are: a child another test
        // starts meanwhile must not keep the write end open past its `exec`.
        let (read, write) = nix::unistd::pipe2(OFlag::O_CLOEXEC).unwrap();
        // Room for all of it, so the test does not depend on the writer's timing.
        fcntl(write.as_raw_fd(), FcntlArg::F_SETPIPE_SZ(1 << 20)).unwrap();
        let mut data = vec![b'x'; MAX_LINE];
        data.extend_from_slice(b"\nafter\n");
        std::fs::File::from(write).write_all(&data).unwrap();
        let mut output = Output::new(read).unwrap();
        output.fill();
        assert_eq!(output.take(), Some(line(&"x".repeat(MAX_LINE))));
        assert_eq!(output.take(), Some(line("after")));
        // The write end is closed: the end follows, once a child another test is
        // starting meanwhile has dropped its copy at its `exec` (bounded for a hang).
        assert!(output.wait(Duration::from_secs(60)), "the end came");
        output.fill();
        assert_eq!(output.take(), Some(Received::Closed));
    }

    #[test]
    fn invalid_utf8_is_reported_with_its_bytes() {
        assert_eq!(
            split(b"\xff\xfeok\nfine\n", 4),
            vec![Received::NotUtf8(b"\xff\xfeok".to_vec()), line("fine")]
        );
    }
}
