//! Logs of what an agent said (its transcript, its stderr) with a bounded size: the
//! head is written as it comes, the tail is kept in memory and written at the end
//! after an explicit marker, so a bot that floods cannot fill the disk and the log
//! still shows how the flood began and how the game ended.

use std::collections::VecDeque;
use std::io::{self, Write};

/// Bytes of a log written as they come.
pub const LOG_HEAD: u64 = 15 << 20;

/// Bytes of a log's end kept once the head is full, written when the log is closed.
pub const LOG_TAIL: usize = 1 << 20;

/// A log holding at most [`LOG_HEAD`] + [`LOG_TAIL`] bytes of what was written to it,
/// and a line saying how much was left out between them; `W` is the file, buffered
/// or not (a stderr log is written as it comes, so it can be watched).
#[derive(Debug)]
pub struct CappedLog<W: Write> {
    file: W,
    head: u64,
    tail: VecDeque<u8>,
    /// Bytes that fell out of the tail: left out of the log.
    dropped: u64,
    tail_limit: usize,
}

impl<W: Write> CappedLog<W> {
    /// A log written to `file`.
    pub fn new(file: W) -> CappedLog<W> {
        CappedLog::with_limits(file, LOG_HEAD, LOG_TAIL)
    }

    /// A log with other limits (tests).
    pub fn with_limits(file: W, head: u64, tail: usize) -> CappedLog<W> {
        CappedLog {
            file,
            head,
            tail: VecDeque::new(),
            dropped: 0,
            tail_limit: tail,
        }
    }

    /// Writes the tail (after its marker) and flushes: the log is complete.
    pub fn finish(&mut self) -> io::Result<()> {
        if self.dropped > 0 {
            writeln!(
                self.file,
                "\n[referee: {} bytes left out here; the last {} follow]",
                self.dropped,
                self.tail.len()
            )?;
            self.dropped = 0;
        }
        let (a, b) = self.tail.as_slices();
        self.file.write_all(a)?;
        self.file.write_all(b)?;
        self.tail.clear();
        self.file.flush()
    }
}

impl<W: Write> Write for CappedLog<W> {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        let to_head = usize::try_from(self.head).unwrap_or(usize::MAX).min(bytes.len());
        self.file.write_all(&bytes[..to_head])?;
        self.head -= to_head as u64;
        let rest = &bytes[to_head..];
        if !rest.is_empty() {
            // Only the last `tail_limit` bytes of everything past the head survive.
            let keep = rest.len().min(self.tail_limit);
            let overflow = (self.tail.len() + keep).saturating_sub(self.tail_limit);
            self.tail.drain(..overflow);
            self.dropped += (overflow + rest.len() - keep) as u64;
            self.tail.extend(&rest[rest.len() - keep..]);
        }
        Ok(bytes.len())
    }

    /// Flushes the head only: the tail is written by [`CappedLog::finish`].
    fn flush(&mut self) -> io::Result<()> {
        self.file.flush()
    }
}

impl<W: Write> Drop for CappedLog<W> {
    fn drop(&mut self) {
        let _ = self.finish();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs::File;

    fn logged(head: u64, tail: usize, writes: &[&[u8]]) -> String {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log");
        {
            let mut log = CappedLog::with_limits(File::create(&path).unwrap(), head, tail);
            for w in writes {
                log.write_all(w).unwrap();
            }
        }
        std::fs::read_to_string(path).unwrap()
    }

    #[test]
    fn a_short_log_is_kept_whole() {
        assert_eq!(logged(100, 10, &[b"hello ", b"world"]), "hello world");
    }

    #[test]
    fn a_long_log_keeps_its_head_and_tail_around_a_marker() {
        let text = logged(4, 3, &[b"abcdef", b"ghij", b"k"]);
        assert_eq!(
            text,
            "abcd\n[referee: 4 bytes left out here; the last 3 follow]\nijk"
        );
        // One write far larger than both limits.
        let big = vec![b'x'; 1000];
        let text = logged(2, 2, &[&big, b"yz"]);
        assert_eq!(
            text,
            "xx\n[referee: 998 bytes left out here; the last 2 follow]\nyz"
        );
    }
}
