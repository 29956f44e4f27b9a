//! Writing a record: [`RecordWriter`] appends sealed lines one at a time, creates a
//! record atomically and reopens one to continue it; [`Durability`] says when lines
//! are forced to the disk. Its own room because it is the only code that writes
//! record files.

use std::fs::File;
use std::io::{self, Write};
use std::path::Path;

use super::chain::{hash_of_sealed, seal};
use super::{Header, Line, Replay, SecretKey, SignatureLine, GENESIS};

/// Writes `header` and `lines` as the whole record at `path`, through the file `tmp`
/// beside it: written, synced, renamed over `path`, and the directory synced, so a
/// crash leaves the old record or the new one, never half of one. With a `signer`,
/// a signature line of the whole is appended. `complete` runs
/// once the temporary file is whole, before the rename (a test's crash point). The
/// temporary file is removed when anything fails.
pub fn write_whole(
    path: &Path,
    tmp: &Path,
    header: &Header,
    lines: &[Line],
    signer: Option<&SecretKey>,
    complete: impl FnOnce(),
) -> io::Result<()> {
    let result = (|| -> io::Result<()> {
        let mut w = RecordWriter::new(io::BufWriter::new(File::create(tmp)?));
        w.write(&Line::Header(header.clone()))?;
        for line in lines {
            w.write(line)?;
        }
        if let Some(key) = signer {
            w.sign(key)?;
        }
        let file = w.into_inner().into_inner().map_err(|e| e.into_error())?;
        file.sync_all()?;
        complete();
        std::fs::rename(tmp, path)?;
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            let _ = File::open(dir).and_then(|d| d.sync_all());
        }
        Ok(())
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(tmp);
    }
    result
}

/// Writes hash-chained lines to any sink, flushing each line.
#[derive(Debug)]
pub struct RecordWriter<W: Write> {
    out: W,
    prev: String,
}

/// When record lines reach the disk, not just the operating system.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Durability {
    /// fsync after every line: survives a power cut mid-game, costs a disk sync per action.
    Line,
    /// fsync after the result: a finished game survives a power cut (lines are still
    /// flushed one by one, so a crash of the referee loses nothing; an
    /// operating-system crash may lose the game in progress).
    Game,
    /// Never fsync (flush only).
    Never,
}

impl RecordWriter<File> {
    /// Creates a new record holding `first` (its header), atomically: the line is
    /// written to a hidden file beside it, which is then linked to `path`, so a crash
    /// of the referee leaves either no record or one with a whole header, never an
    /// empty file (an operating-system crash may: see `Durability::Game`). An
    /// existing file is never overwritten.
    pub fn start(path: &Path, first: &Line) -> io::Result<RecordWriter<File>> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)?;
        }
        let name = path
            .file_name()
            .ok_or_else(|| io::Error::other("a record path names a file"))?;
        let tmp = path.with_file_name(format!(".{}.new{}", name.to_string_lossy(), std::process::id()));
        let mut writer = RecordWriter::new(File::create(&tmp)?);
        let written = writer.write(first);
        let linked = written.and_then(|_| std::fs::hard_link(&tmp, path));
        let _ = std::fs::remove_file(&tmp);
        linked?;
        Ok(writer)
    }

    /// Reopens a record to continue it after `replay` read it: a torn last line is cut
    /// off, and the chain goes on from its last complete line.
    pub fn append(path: &Path, replay: &Replay) -> io::Result<RecordWriter<File>> {
        // The lines to come are written after those there, whatever the clock says.
        if let Some(t) = replay.last_time {
            crate::wall_clock::not_before(t);
        }
        let file = File::options().write(true).open(path)?;
        file.set_len(replay.complete_len)?;
        let mut file = file;
        io::Seek::seek(&mut file, io::SeekFrom::End(0))?;
        Ok(RecordWriter {
            out: file,
            prev: replay.last_hash.clone(),
        })
    }

    /// Forces what was written to the disk.
    pub fn sync(&mut self) -> io::Result<()> {
        self.out.sync_data()
    }
}

impl<W: Write> RecordWriter<W> {
    /// A writer whose first line chains from [`GENESIS`].
    pub fn new(out: W) -> RecordWriter<W> {
        RecordWriter {
            out,
            prev: GENESIS.to_string(),
        }
    }

    /// Appends one line and flushes it.
    pub fn write(&mut self, line: &Line) -> io::Result<()> {
        let mut text = seal(&self.prev, line);
        text.push('\n');
        // One write per line keeps the window for a torn line as small as it gets.
        self.out.write_all(text.as_bytes())?;
        self.out.flush()?;
        text.pop();
        // The previous hash's buffer is reused: no allocation per line.
        self.prev.clear();
        self.prev.push_str(hash_of_sealed(&text));
        Ok(())
    }

    /// Appends the judge's signature of everything written so far: a signature line
    /// over the last line's chain hash.
    pub fn sign(&mut self, key: &SecretKey) -> io::Result<()> {
        let signature = key.sign_record(&self.prev);
        self.write(&Line::Signature(SignatureLine {
            signature,
            time: Some(crate::wall_clock::now_rfc3339()),
        }))
    }

    /// The hash of the last line written.
    pub fn last_hash(&self) -> &str {
        &self.prev
    }

    /// The sink, e.g. to sync a file after the last line.
    pub fn into_inner(self) -> W {
        self.out
    }
}
