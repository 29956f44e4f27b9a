//! Play by mail: every command is a short-lived process working on one record file.
//!
//! Updates are atomic (a new file is written beside the record, synced, and renamed
//! over it) and serialised by an exclusive lock on `<record>.lock`, so two mails
//! processed at once cannot both apply and a crash leaves the previous record intact
//! (its temporary file, `<record>.tmp<pid>`, is removed by the next update).
//! A game's secret salt lives in `<record>.salt` until the game ends; then a `reveal`
//! line publishes it, so every seat can check what it was told (`audit`).

use std::fmt::Write as _;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use nix::fcntl::{Flock, FlockArg};

use crate::game::{Game, GameId, Options, Played, Rejection, Seat, SeatEvent, Turn};
use crate::record::{
    self, salted_digest, ActionLine, CommitLine, ForfeitLine, Header, Line, RecordWriter, Replay, ResultLine,
    RevealLine,
};

/// Marks the start of a message, with the seat it is for (audit reads these).
const BEGIN: &str = "=== referee play-by-mail message to seat";
/// Marks its end.
const END: &str = "=== end of message ===";

/// Why a play-by-mail command failed; nothing was changed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PbmError {
    /// The action or command was rejected; the text explains, with suggestions.
    #[error("{0}")]
    Rejected(String),
    /// Bad arguments (unknown game, seat, existing file…).
    #[error("{0}")]
    Usage(String),
    /// The record cannot be read, or is not a play-by-mail game (bad input).
    #[error("{0}")]
    Record(String),
    /// The record was read and fails verification at a line (a failed check).
    #[error("{0}")]
    Invalid(String),
    /// The record or its files could not be written, or the system failed.
    #[error("{0}")]
    Io(String),
}

/// A message for one seat.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Message {
    /// The seat.
    pub seat: Seat,
    /// Its text, ready to mail.
    pub text: String,
}

fn io(path: &Path) -> impl Fn(std::io::Error) -> PbmError + '_ {
    move |e| PbmError::Io(format!("{}: {e}", path.display()))
}

/// Side files of a record.
fn side(path: &Path, ext: &str) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(ext);
    PathBuf::from(name)
}

/// Holds the exclusive lock on a record for the duration of one update.
struct Locked {
    _lock: Flock<File>,
}

fn lock(path: &Path) -> Result<Locked, PbmError> {
    let lock_path = side(path, ".lock");
    let file = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock_path)
        .map_err(io(&lock_path))?;
    let lock = Flock::lock(file, FlockArg::LockExclusive)
        .map_err(|(_, e)| PbmError::Io(format!("{}: cannot lock: {e}", lock_path.display())))?;
    Ok(Locked { _lock: lock })
}

/// Removes the temporary files `<record>.tmp<pid>` that writers of the record left
/// when they died between writing one and renaming it over the record (a kill, a
/// crash, a power cut). The lock is exclusive and every writer takes it first, so
/// while `_held` no other writer is alive: every such file found is stale. They are
/// whole records, omniscient events and hidden placements included, so they must not
/// pile up beside the record.
fn remove_stale_temps(_held: &Locked, path: &Path) -> Result<(), PbmError> {
    let Some(name) = path.file_name() else {
        return Ok(());
    };
    let mut prefix = name.as_encoded_bytes().to_vec();
    prefix.extend_from_slice(b".tmp");
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    for entry in std::fs::read_dir(dir).map_err(io(dir))? {
        let entry = entry.map_err(io(dir))?;
        let file_name = entry.file_name();
        let stale = file_name
            .as_encoded_bytes()
            .strip_prefix(prefix.as_slice())
            .is_some_and(|pid| !pid.is_empty() && pid.iter().all(u8::is_ascii_digit));
        if stale {
            let stale_path = entry.path();
            match std::fs::remove_file(&stale_path) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(io(&stale_path)(e)),
                _ => {}
            }
        }
    }
    Ok(())
}

/// Writes `lines` as the whole record, atomically; the caller holds the record's
/// lock (`held`).
fn rewrite(held: &Locked, path: &Path, header: &Header, lines: &[Line]) -> Result<(), PbmError> {
    remove_stale_temps(held, path)?;
    let tmp = side(path, &format!(".tmp{}", std::process::id()));
    let result = (|| -> std::io::Result<()> {
        let file = File::create(&tmp)?;
        let mut w = RecordWriter::new(std::io::BufWriter::new(file));
        w.write(&Line::Header(header.clone()))?;
        for l in lines {
            w.write(l)?;
        }
        let file = w.into_inner().into_inner().map_err(|e| e.into_error())?;
        file.sync_all()?;
        fault("after-temp-write");
        std::fs::rename(&tmp, path)?;
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            let _ = File::open(dir).and_then(|d| d.sync_all());
        }
        Ok(())
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result.map_err(io(path))
}

/// A test hook: `REFEREE_PBM_FAULT=<point>` aborts the process at that point, as a
/// crash or a kill would.
fn fault(point: &str) {
    if std::env::var("REFEREE_PBM_FAULT").is_ok_and(|p| p == point) {
        std::process::abort();
    }
}

/// A fresh 256-bit salt, hex, from the operating system.
fn fresh_salt() -> Result<String, PbmError> {
    let mut bytes = [0u8; 32];
    File::open("/dev/urandom")
        .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut bytes))
        .map_err(|e| PbmError::Io(format!("cannot read random bytes: {e}")))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// The open game of a record.
struct Open {
    path: PathBuf,
    replay: Replay,
    /// The chain hash after every line (1-based line numbers), header first.
    chain: Vec<String>,
    salt: Option<String>,
}

impl Open {
    fn read(path: &Path) -> Result<Open, PbmError> {
        // One read serves the replay and the chain hashes alike: reading the file twice
        // could mix two versions of a record that another process replaced meanwhile
        // (`view` takes no lock), giving a message the hash of a line it does not tell.
        let bytes = std::fs::read(path)
            .map_err(|e| PbmError::Record(format!("{}: cannot open: {e}", path.display())))?;
        let replay = record::replay(&bytes[..]).map_err(|e| {
            let text = format!("{}: {e}", path.display());
            if e.is_unreadable() {
                PbmError::Record(text)
            } else {
                PbmError::Invalid(text)
            }
        })?;
        let complete =
            usize::try_from(replay.complete_len).map_or(&bytes[..], |n| &bytes[..n.min(bytes.len())]);
        let chain = String::from_utf8_lossy(complete)
            .lines()
            .filter_map(|l| record::unseal(l).map(|(_, h)| h.to_string()))
            .collect();
        let salt_path = side(path, ".salt");
        let salt = match &replay.revealed {
            Some(s) => Some(s.clone()),
            None => std::fs::read_to_string(&salt_path)
                .ok()
                .map(|s| s.trim().to_string()),
        };
        Ok(Open {
            path: path.to_path_buf(),
            replay,
            chain,
            salt,
        })
    }

    fn salt(&self) -> Result<&str, PbmError> {
        self.salt.as_deref().ok_or_else(|| {
            PbmError::Record(format!(
                "{}: not a play-by-mail game: its secret salt file {} is missing",
                self.path.display(),
                side(&self.path, ".salt").display()
            ))
        })
    }

    fn names(&self) -> Vec<String> {
        self.replay.header.seats.iter().map(|s| s.name.clone()).collect()
    }
}

/// What each seat was told by each record line: `(line number, events per seat)`
/// (a line that told nothing may have no per-seat entries at all: use [`told_to`]).
fn told_by_line(replay: &Replay) -> Vec<(usize, Vec<Vec<SeatEvent>>)> {
    let mut game = record::start_game(&replay.header).expect("verified record");
    replay
        .lines
        .iter()
        .enumerate()
        .filter_map(|(i, line)| record::step(game.as_mut(), line).map(|p| (i + 2, p.seat_events)))
        .collect()
}

/// What `seat` was told by one line.
fn told_to(told: &[Vec<SeatEvent>], seat: Seat) -> &[SeatEvent] {
    told.get(seat.index()).map_or(&[], Vec::as_slice)
}

/// Creates a game: `names` are the seats' players, in seat order.
pub fn new_game(
    path: &Path,
    game: &str,
    options: &Options,
    names: &[String],
) -> Result<Vec<Message>, PbmError> {
    let id = GameId::parse(game).map_err(|e| PbmError::Usage(e.to_string()))?;
    let g = id
        .create(options, None)
        .map_err(|e| PbmError::Usage(e.to_string()))?;
    if names.len() != g.seat_count() {
        return Err(PbmError::Usage(format!(
            "{} --seat names for a game of {} seats",
            names.len(),
            g.seat_count()
        )));
    }
    let held = lock(path)?;
    // Checked under the lock, so two `new` on one path cannot both pass.
    if path.exists() {
        return Err(PbmError::Usage(format!(
            "{} already exists; nothing is overwritten",
            path.display()
        )));
    }
    let salt_path = side(path, ".salt");
    // A salt without its record is left by a `new` that died before the record was
    // written: it belongs to no game.
    match std::fs::remove_file(&salt_path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(io(&salt_path)(e)),
        _ => {}
    }
    let salt = fresh_salt()?;
    let mut f = OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&salt_path)
        .map_err(io(&salt_path))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let _ = f.set_permissions(std::fs::Permissions::from_mode(0o600));
    }
    writeln!(f, "{salt}")
        .and_then(|_| f.sync_all())
        .map_err(io(&salt_path))?;
    let header = Header::new(g.as_ref(), None, 0, |seat| (names[seat.index()].clone(), None));
    rewrite(&held, path, &header, &[])?;
    let open = Open::read(path)?;
    Seat::all(g.seat_count()).map(|s| message(&open, s, 1)).collect()
}

/// Whose turn it is and what is expected.
pub fn status(path: &Path) -> Result<String, PbmError> {
    let open = Open::read(path)?;
    let g = &open.replay.game;
    let names = open.names();
    let mut t = format!("{} {}\n", open.replay.header.game, open.replay.header.options);
    match g.outcome() {
        Some(o) => {
            let _ = writeln!(t, "over: {}", o.protocol_text());
        }
        None => match g.turn() {
            Turn::Act { seat, kind } => {
                let _ = writeln!(t, "turn: seat {seat} ({}) to {kind}", names[seat.index()]);
            }
            Turn::Over => t.push_str("over\n"),
        },
    }
    let _ = writeln!(t, "actions: {}", g.plies());
    Ok(t)
}

/// The message for `seat` now: its view, what it saw since its last turn, its legal
/// actions when it is to act, and the salted chain hash.
pub fn view(path: &Path, seat: Seat) -> Result<Message, PbmError> {
    let open = Open::read(path)?;
    check_seat(open.replay.game.as_ref(), seat)?;
    // Events since the seat's own last action (its last turn).
    let since = open
        .replay
        .lines
        .iter()
        .enumerate()
        .rev()
        .find(|(_, l)| matches!(l, Line::Action(a) if a.seat == seat.number()))
        .map_or(1, |(i, _)| i + 2);
    message(&open, seat, since)
}

fn check_seat(game: &dyn Game, seat: Seat) -> Result<(), PbmError> {
    if seat.number() > game.seat_count() {
        return Err(PbmError::Usage(format!(
            "seat {seat} does not exist: the game has {} seats",
            game.seat_count()
        )));
    }
    Ok(())
}

/// Builds the message for `seat` covering what it was told after record line `since`.
fn message(open: &Open, seat: Seat, since: usize) -> Result<Message, PbmError> {
    let salt = open.salt()?;
    let chain = &open.chain;
    let last = chain.len();
    let game = open.replay.game.as_ref();
    let names = open.names();
    let h = &open.replay.header;
    let mut t = String::new();
    let _ = writeln!(t, "{BEGIN} {seat} ({}) ===", names[seat.index()]);
    let _ = writeln!(t, "game: {} {}", h.game, h.options);
    let _ = writeln!(t, "you: seat {seat}, {}", game.seat_label(seat));
    // R-S1: the chain hash covers hidden facts, so seats get it salted.
    let _ = writeln!(
        t,
        "record: line {last}, hash {}",
        salted_digest(salt, "chain", &chain[last - 1])
    );
    for line in &open.replay.lines {
        if let Line::Commit(c) = line {
            let _ = writeln!(t, "commitment: {}", c.commitment);
        }
    }
    let _ = writeln!(t, "since line {since}:");
    for (line_no, told) in told_by_line(&open.replay) {
        if line_no > since {
            for e in told_to(&told, seat) {
                let _ = writeln!(t, "  event {}", e.text());
            }
        }
    }
    let _ = writeln!(t, "view: {}", game.view(seat).text());
    for l in game.diagram(Some(seat)).lines() {
        let _ = writeln!(t, "  | {l}");
    }
    match (game.outcome(), game.turn()) {
        (Some(o), _) => {
            let _ = writeln!(t, "result: {}", o.protocol_text());
            if let Some(s) = &open.replay.revealed {
                let _ = writeln!(t, "salt: {s}");
            }
        }
        (None, Turn::Act { seat: to, kind }) if to == seat => {
            let _ = writeln!(t, "your turn: {kind}");
            let _ = writeln!(t, "legal: {}", short_legal(&game.legal_actions()));
        }
        (None, Turn::Act { seat: to, kind }) => {
            let _ = writeln!(t, "waiting for: seat {to} ({}) to {kind}", names[to.index()]);
        }
        (None, Turn::Over) => {}
    }
    let _ = writeln!(t, "{END}");
    Ok(Message { seat, text: t })
}

/// The legal actions, grouped by their first four characters (a from-square pair or
/// a placement type) when there are many, so a person can read them.
fn short_legal(legal: &[String]) -> String {
    if legal.len() <= 40 {
        return legal.join(" ");
    }
    let mut groups: Vec<(String, Vec<String>)> = Vec::new();
    for a in legal {
        let (head, tail) = match a.find(['-', '@']) {
            Some(i) if i > 0 => (a[..i].to_string(), a[i..].to_string()),
            _ if a.len() > 2 && a.is_char_boundary(2) => (a[..2].to_string(), a[2..].to_string()),
            _ => (a.clone(), String::new()),
        };
        match groups.iter_mut().find(|(h, _)| *h == head) {
            Some((_, v)) => v.push(tail),
            None => groups.push((head, vec![tail])),
        }
    }
    groups
        .iter()
        .map(|(h, v)| format!("{h}[{}]", v.join(" ")))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Validates and applies `action` of `seat`; returns the message for every seat.
pub fn play(path: &Path, seat: Seat, action: &str) -> Result<Vec<Message>, PbmError> {
    update(path, seat, |game| match game.play(seat, action) {
        Ok(played) => Ok((
            played.clone(),
            Line::Action(ActionLine {
                ply: game.plies(),
                seat: seat.number(),
                action: action.to_string(),
                taken: played.taken.clone(),
                forced: false,
                opening: false,
                events: played.events,
                think_ms: None,
                clock_ms: None,
            }),
        )),
        Err(rejection) => {
            let mut text = format!("rejected, nothing changed: {rejection}");
            // Suggestions come from the legal actions of the seat to act: never show
            // them to another seat (an eliminated multichess seat gets `Illegal`).
            let to_act = matches!(game.turn(), Turn::Act { seat: to, .. } if to == seat);
            if to_act && matches!(rejection, Rejection::Malformed { .. } | Rejection::Illegal { .. }) {
                let legal = game.legal_actions();
                let close = crate::text::closest(action, legal.iter().map(String::as_str), 5);
                if !close.is_empty() {
                    let _ = write!(text, "; did you mean {}?", close.join(", "));
                }
            }
            Err(PbmError::Rejected(text))
        }
    })
}

/// Records that `seat` resigns (a forfeit, R-F1 applies).
pub fn resign(path: &Path, seat: Seat) -> Result<Vec<Message>, PbmError> {
    update(path, seat, |game| {
        if game.outcome().is_some() {
            return Err(PbmError::Rejected(
                "rejected, nothing changed: the game is over".into(),
            ));
        }
        if game.is_out(seat) {
            // A second forfeit would change nothing, and verify refuses it (R-F1, R-M5).
            return Err(PbmError::Rejected(format!(
                "rejected, nothing changed: seat {seat} is out of the game already"
            )));
        }
        let played = game.forfeit(seat, crate::game::ForfeitKind::Resign);
        Ok((
            played.clone(),
            Line::Forfeit(ForfeitLine {
                seat: seat.number(),
                reason: crate::game::ForfeitKind::Resign,
                detail: "resigned by mail".into(),
                action: None,
                events: played.events,
            }),
        ))
    })
}

/// Applies one change under the lock, appends the lines it implies (commitment,
/// result, reveal), rewrites the record atomically, and builds every seat's message.
fn update(
    path: &Path,
    seat: Seat,
    change: impl FnOnce(&mut dyn Game) -> Result<(Played, Line), PbmError>,
) -> Result<Vec<Message>, PbmError> {
    // No lock file beside a record that is not there.
    if !path.is_file() {
        return Err(PbmError::Record(format!("{}: no such record", path.display())));
    }
    let held = lock(path)?;
    let open = Open::read(path)?;
    let salt = open.salt()?.to_string();
    let mut game = open.replay.game.boxed_clone();
    check_seat(game.as_ref(), seat)?;
    let before = open.chain.len();
    let (_, line) = change(game.as_mut())?;
    let mut lines = open.replay.lines.clone();
    lines.push(line);
    let committed = lines.iter().any(|l| matches!(l, Line::Commit(_)));
    if let (false, Some(data)) = (committed, game.commitment_data()) {
        lines.push(Line::Commit(CommitLine {
            commitment: salted_digest(&salt, "commit", &data),
        }));
    }
    if let Some(o) = game.outcome() {
        lines.push(Line::Result(ResultLine {
            places: o.places.clone(),
            reason: o.reason.to_string(),
            plies: game.plies(),
            state: game.state(),
            // Play by mail runs no agent processes: none can have escaped.
            escaped: None,
        }));
        let data = committed_data(&open.replay, &lines);
        lines.push(Line::Reveal(RevealLine { salt, data }));
    }
    rewrite(&held, path, &open.replay.header, &lines)?;
    let open = Open::read(path)?;
    Seat::all(game.seat_count())
        .map(|s| message(&open, s, before))
        .collect()
}

/// The hidden data committed to in `lines`, recomputed by replaying them.
fn committed_data(replay: &Replay, lines: &[Line]) -> Option<String> {
    let mut game = record::start_game(&replay.header).ok()?;
    for line in lines {
        if let Line::Commit(_) = line {
            return game.commitment_data();
        }
        record::step(game.as_mut(), line);
    }
    None
}

/// `seat`'s view after every record line (index: line number - 1, header first).
fn views_by_line(replay: &Replay, seat: Seat) -> Vec<String> {
    let mut game = record::start_game(&replay.header).expect("verified record");
    let mut views = vec![game.view(seat).text().to_string()];
    for line in &replay.lines {
        record::step(game.as_mut(), line);
        views.push(game.view(seat).text().to_string());
    }
    views
}

/// Why an audit did not pass.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AuditError {
    /// It could not be made: the record cannot be read, the game has not ended, or
    /// the transcript is not a transcript of messages.
    Input(PbmError),
    /// It was made, and the messages disagree with the record in these ways.
    Problems(Vec<String>),
}

/// What an audit found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AuditReport {
    /// Messages checked.
    pub messages: usize,
    /// Events checked.
    pub events: usize,
}

/// One parsed message of a transcript.
struct Parsed {
    seat: usize,
    line: usize,
    hash: String,
    since: usize,
    events: Vec<String>,
    commitment: Option<String>,
    view: Option<String>,
}

fn parse_transcript(text: &str) -> Result<Vec<Parsed>, String> {
    let mut out = Vec::new();
    let mut cur: Option<Parsed> = None;
    for (n, l) in text.lines().enumerate() {
        let n = n + 1;
        if let Some(rest) = l.strip_prefix(BEGIN) {
            let seat = rest.split_whitespace().next().and_then(|w| w.parse().ok());
            cur = Some(Parsed {
                seat: seat.ok_or(format!("transcript line {n}: no seat number"))?,
                line: 0,
                hash: String::new(),
                since: 0,
                events: Vec::new(),
                commitment: None,
                view: None,
            });
        } else if l == END {
            let m = cur
                .take()
                .ok_or(format!("transcript line {n}: end without a start"))?;
            if m.line == 0 || m.hash.is_empty() {
                return Err(format!("transcript line {n}: a message without its record line"));
            }
            out.push(m);
        } else if let Some(m) = cur.as_mut() {
            if let Some(rest) = l.strip_prefix("record: line ") {
                let (line, hash) = rest
                    .split_once(", hash ")
                    .ok_or(format!("transcript line {n}: bad record line"))?;
                m.line = line
                    .parse()
                    .map_err(|_| format!("transcript line {n}: bad line number"))?;
                m.hash = hash.trim().to_string();
            } else if let Some(rest) = l.strip_prefix("since line ") {
                m.since = rest
                    .trim_end_matches(':')
                    .parse()
                    .map_err(|_| format!("transcript line {n}: bad since"))?;
            } else if let Some(rest) = l.strip_prefix("  event ") {
                m.events.push(rest.to_string());
            } else if let Some(rest) = l.strip_prefix("commitment: ") {
                m.commitment = Some(rest.to_string());
            } else if let Some(rest) = l.strip_prefix("view: ") {
                m.view = Some(rest.to_string());
            }
        }
    }
    if cur.is_some() {
        return Err("the transcript ends inside a message".into());
    }
    Ok(out)
}

/// Checks that every message `seat` received (the transcript) is consistent with the
/// final record: the salted chain hashes, the commitment and its opening, every event
/// (and so every verdict) the rules give for that seat, every view, and no message
/// missing.
pub fn audit(path: &Path, seat: Seat, transcript: &str) -> Result<AuditReport, AuditError> {
    let open = Open::read(path).map_err(AuditError::Input)?;
    let salt = open.replay.revealed.clone().ok_or_else(|| {
        AuditError::Input(PbmError::Record(format!(
            "{}: no salt revealed: not a play-by-mail record, or its game has not ended yet",
            path.display()
        )))
    })?;
    let chain = &open.chain;
    let messages = parse_transcript(transcript).map_err(|e| AuditError::Input(PbmError::Usage(e)))?;
    let told = told_by_line(&open.replay);
    let views = views_by_line(&open.replay, seat);
    let commitment = open.replay.lines.iter().find_map(|l| match l {
        Line::Commit(c) => Some(c.commitment.clone()),
        _ => None,
    });
    let mut problems = Vec::new();
    let mut covered = 1;
    let mut events = 0;
    let mut mine: Vec<&Parsed> = messages.iter().filter(|m| m.seat == seat.number()).collect();
    if mine.len() != messages.len() {
        problems.push(format!(
            "{} messages are addressed to another seat",
            messages.len() - mine.len()
        ));
    }
    mine.sort_by_key(|m| (m.line, m.since));
    for m in &mine {
        let at = format!("message up to line {}", m.line);
        match chain.get(m.line.wrapping_sub(1)) {
            Some(h) if salted_digest(&salt, "chain", h) == m.hash => {}
            Some(_) => problems.push(format!(
                "{at}: its record hash is not the record's (the record was changed)"
            )),
            None => problems.push(format!("{at}: the record has no line {}", m.line)),
        }
        if m.since > covered {
            problems.push(format!(
                "a message is missing: nothing told lines {}..{}",
                covered + 1,
                m.since
            ));
        }
        covered = covered.max(m.line);
        let expected: Vec<String> = told
            .iter()
            .filter(|(n, _)| *n > m.since && *n <= m.line)
            .flat_map(|(_, t)| told_to(t, seat).iter().map(|e| e.text().to_string()))
            .collect();
        if expected != m.events {
            problems.push(format!(
                "{at}: the events told are not what the rules give: told {:?}, rules {:?}",
                m.events, expected
            ));
        }
        events += m.events.len();
        if let (Some(told_v), Some(real)) = (&m.view, views.get(m.line.wrapping_sub(1))) {
            if told_v != real {
                problems.push(format!(
                    "{at}: the view told is not the seat's view at that line: told {told_v:?}, rules {real:?}"
                ));
            }
        }
        if let (Some(told_c), Some(real)) = (&m.commitment, &commitment) {
            if told_c != real {
                problems.push(format!("{at}: the commitment told differs from the record's"));
            }
        }
    }
    if covered < chain.len() {
        let last_told = told
            .iter()
            .filter(|(n, t)| *n > covered && !told_to(t, seat).is_empty())
            .count();
        if last_told > 0 {
            problems.push(format!(
                "a message is missing: lines after {covered} were never told"
            ));
        }
    }
    // The record itself was verified when read: the commitment opens to the revealed
    // data (the reveal line is checked), so a changed hidden type cannot pass.
    if problems.is_empty() {
        Ok(AuditReport {
            messages: mine.len(),
            events,
        })
    } else {
        Err(AuditError::Problems(problems))
    }
}
