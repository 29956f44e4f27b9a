//! A global SPRT with no server: the shards of one tournament that share a
//! directory (`--shared DIR`: a cluster file system, a Kubernetes volume) each append
//! their finished seating cycles to a file of their own there, and read everyone's
//! before starting a cycle. Its own room because it is the only place where shards
//! see each other's results.
//!
//! The layout, chosen so that nothing needs a lock (locks are unreliable on network
//! file systems) and no update is lost or counted twice:
//! * `DIR/tournament.json`: the definition, written once (temporary file, then
//!   rename) and compared by every shard that joins;
//! * `DIR/shard-I-of-N.jsonl`: one line per finished seating cycle of shard I, in
//!   JSON, `{"cycle":K,"games":[GameResult…]}`. Each shard is the only writer of its
//!   own file, appends a whole line with one write and syncs it, and never rewrites a
//!   line; a shard that died in the middle of a write leaves a torn last line, which
//!   readers skip until the writer, resumed, cuts it off.
//!
//! A cycle is appended only once all its games are finished, so a half pair never
//! reaches another shard; a cycle already in the file is never appended again, and a
//! reader counts each cycle once.

use std::collections::{BTreeMap, BTreeSet};
use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::results::GameResult;
use super::schedule::{Scheduled, Shard};
use super::{io_err, Definition, TournamentError};

/// Why a shared directory cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum SharedProblem {
    /// Its `tournament.json` is another tournament's.
    #[error("is shared by a different tournament (game, entrants, schedule or seed differ)")]
    OtherTournament,
    /// Its `tournament.json` cannot be read as a definition.
    #[error("not a tournament definition: {0}")]
    Definition(String),
    /// A whole line of a shard's file that is not a finished cycle of the schedule.
    #[error("line {line}: not a finished seating cycle of this tournament: {why}")]
    Line {
        /// Line number, from 1.
        line: usize,
        /// What is wrong with it.
        why: String,
    },
}

/// One line of a shard's file: a finished seating cycle.
#[derive(Serialize, Deserialize)]
struct CycleLine {
    /// The cycle's number in the schedule.
    cycle: usize,
    /// Its games, in schedule order.
    games: Vec<GameResult>,
}

/// This shard's view of a shared directory.
pub(super) struct SharedDir {
    /// The directory.
    dir: PathBuf,
    /// This shard's own file, opened for appending.
    own: File,
    /// Its path.
    own_path: PathBuf,
    /// Cycles this shard's file holds.
    written: BTreeSet<usize>,
    /// Bytes and lines of each shard's file read so far (whole lines only).
    offsets: BTreeMap<PathBuf, (u64, usize)>,
    /// Every cycle read from any file, counted once.
    cycles: BTreeMap<usize, Vec<GameResult>>,
    /// Schedule indices of each cycle's games, for checking lines.
    cycle_games: Vec<Vec<usize>>,
}

/// A shared-directory error about `path`.
fn bad(path: &Path, problem: SharedProblem) -> TournamentError {
    TournamentError::Shared {
        path: path.to_path_buf(),
        problem,
    }
}

impl SharedDir {
    /// Joins (or creates) the shared directory `dir` for `shard` of the tournament
    /// `def`: checks its definition, repairs this shard's own file if its last line
    /// was torn, and reads what every shard has finished so far.
    pub(super) fn open(
        dir: &Path,
        def: &Definition,
        shard: Shard,
        schedule: &[Scheduled],
    ) -> Result<SharedDir, TournamentError> {
        std::fs::create_dir_all(dir).map_err(io_err(dir))?;
        join_definition(dir, def)?;
        let mut cycle_games: Vec<Vec<usize>> = Vec::new();
        for g in schedule {
            if cycle_games.len() <= g.cycle {
                cycle_games.resize(g.cycle + 1, Vec::new());
            }
            cycle_games[g.cycle].push(g.index);
        }
        let own_path = dir.join(format!("shard-{}-of-{}.jsonl", shard.index + 1, shard.count));
        cut_torn_line(&own_path)?;
        let own = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&own_path)
            .map_err(io_err(&own_path))?;
        let _ = File::open(dir).and_then(|d| d.sync_all());
        let mut shared = SharedDir {
            dir: dir.to_path_buf(),
            own,
            own_path,
            written: BTreeSet::new(),
            offsets: BTreeMap::new(),
            cycles: BTreeMap::new(),
            cycle_games,
        };
        shared.read(schedule)?;
        Ok(shared)
    }

    /// Appends finished cycle `cycle` (all its `games`) to this shard's file, unless
    /// the file holds it already; the line is synced before this returns.
    pub(super) fn append(&mut self, cycle: usize, games: &[GameResult]) -> Result<(), TournamentError> {
        if self.written.contains(&cycle) {
            return Ok(());
        }
        let line = CycleLine {
            cycle,
            games: games.to_vec(),
        };
        let mut text = serde_json::to_string(&line).expect("results serialise");
        text.push('\n');
        // One write of the whole line to a file opened with O_APPEND: this shard is
        // its only writer, so a line is either all there or torn at the end.
        self.own
            .write_all(text.as_bytes())
            .and_then(|()| self.own.sync_data())
            .map_err(io_err(&self.own_path))?;
        self.written.insert(cycle);
        Ok(())
    }

    /// Reads the whole lines every shard's file has gained since the last read.
    pub(super) fn read(&mut self, schedule: &[Scheduled]) -> Result<(), TournamentError> {
        let entries = std::fs::read_dir(&self.dir).map_err(io_err(&self.dir))?;
        let mut files = Vec::new();
        for entry in entries {
            let path = entry.map_err(io_err(&self.dir))?.path();
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
            if name.starts_with("shard-") && name.ends_with(".jsonl") {
                files.push(path);
            }
        }
        // In name order, so that a cycle two files both hold is always taken from
        // the same one.
        files.sort();
        for path in files {
            self.read_file(&path, schedule)?;
        }
        Ok(())
    }

    /// Reads the new whole lines of one shard's file.
    fn read_file(&mut self, path: &Path, schedule: &[Scheduled]) -> Result<(), TournamentError> {
        let (offset, before) = self.offsets.get(path).copied().unwrap_or((0, 0));
        let mut file = File::open(path).map_err(io_err(path))?;
        file.seek(SeekFrom::Start(offset)).map_err(io_err(path))?;
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes).map_err(io_err(path))?;
        // Only up to the last line end: what follows is a line still being written,
        // or torn by a shard that died.
        let whole = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        let own = path == self.own_path;
        let lines: Vec<&[u8]> = bytes[..whole].split(|&b| b == b'\n').collect();
        // The split leaves an empty piece after the last line end.
        let count = lines.len().saturating_sub(1);
        for (k, line) in lines.into_iter().take(count).enumerate() {
            if line.is_empty() {
                continue;
            }
            let number = before + k + 1;
            let cycle = self
                .parse_line(line, schedule)
                .map_err(|why| bad(path, SharedProblem::Line { line: number, why }))?;
            if own {
                self.written.insert(cycle.cycle);
            }
            self.cycles.entry(cycle.cycle).or_insert(cycle.games);
        }
        self.offsets
            .insert(path.to_path_buf(), (offset + whole as u64, before + count));
        Ok(())
    }

    /// A line as a finished cycle of the schedule: every game of the cycle, each with
    /// its scheduled seats and a place for every seat.
    fn parse_line(&self, line: &[u8], schedule: &[Scheduled]) -> Result<CycleLine, String> {
        let cycle: CycleLine = serde_json::from_slice(line).map_err(|e| e.to_string())?;
        let indices = self
            .cycle_games
            .get(cycle.cycle)
            .ok_or_else(|| format!("the schedule has no cycle {}", cycle.cycle))?;
        let got: Vec<usize> = cycle.games.iter().map(|g| g.index).collect();
        if got != *indices {
            return Err(format!("cycle {} is games {indices:?}, not {got:?}", cycle.cycle));
        }
        for g in &cycle.games {
            let seats = &schedule[g.index].seats;
            let places_ok = g.places.len() == seats.len()
                && g.places.iter().all(|&p| p >= 1 && p as usize <= seats.len());
            if g.seats != *seats || !places_ok || g.forfeits.iter().any(|&(s, _)| s >= seats.len()) {
                return Err(format!(
                    "game {} does not have the schedule's seats and a place for each",
                    g.index
                ));
            }
        }
        Ok(cycle)
    }

    /// Every finished game of every cycle read, in schedule order.
    pub(super) fn results(&self) -> Vec<GameResult> {
        self.cycles.values().flatten().cloned().collect()
    }
}

/// Checks, without writing anything, that the shared directory `dir` is free or
/// holds the tournament `def`, so a wrong `--shared` changes nothing anywhere.
pub(super) fn check_definition(dir: &Path, def: &Definition) -> Result<(), TournamentError> {
    let meta = dir.join("tournament.json");
    match std::fs::read_to_string(&meta) {
        Ok(text) => same_definition(dir, &text, &def.stored_form()?),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(io_err(&meta)(e)),
    }
}

/// Whether `text`, the shared `tournament.json`, is the definition `given`.
fn same_definition(dir: &Path, text: &str, given: &Definition) -> Result<(), TournamentError> {
    let stored: Definition =
        serde_json::from_str(text).map_err(|e| bad(dir, SharedProblem::Definition(e.to_string())))?;
    if !stored.plays_same_games(given) {
        return Err(bad(dir, SharedProblem::OtherTournament));
    }
    Ok(())
}

/// Writes `def` as `DIR/tournament.json` if no shard has yet, then checks that the
/// file there is this tournament. A temporary file renamed into place, so a reader
/// never sees half a definition; two shards racing write the same text.
fn join_definition(dir: &Path, def: &Definition) -> Result<(), TournamentError> {
    let meta = dir.join("tournament.json");
    let given = def.stored_form()?;
    if !meta.exists() {
        let tmp = dir.join(format!(".tournament.json.{}", std::process::id()));
        let text = serde_json::to_string_pretty(&given).expect("a stored form serialises") + "\n";
        let written = File::create(&tmp)
            .and_then(|mut f| f.write_all(text.as_bytes()).and_then(|()| f.sync_all()))
            .and_then(|()| std::fs::rename(&tmp, &meta));
        if let Err(e) = written {
            let _ = std::fs::remove_file(&tmp);
            return Err(io_err(&meta)(e));
        }
    }
    let text = std::fs::read_to_string(&meta).map_err(io_err(&meta))?;
    same_definition(dir, &text, &given)
}

/// Cuts a torn last line (no line end: the shard died writing it) off this shard's
/// own file, so that the next line appended starts on a line of its own.
fn cut_torn_line(path: &Path) -> Result<(), TournamentError> {
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(io_err(path)(e)),
    };
    if bytes.last().is_none_or(|&b| b == b'\n') {
        return Ok(());
    }
    let keep = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    OpenOptions::new()
        .write(true)
        .open(path)
        .and_then(|f| f.set_len(keep as u64).and_then(|()| f.sync_all()))
        .map_err(io_err(path))
}
