//! The record on disk: the exclusive lock that serialises updates, the atomic
//! rewrite (a temporary file beside the record, synced and renamed over it), the
//! removal of temporary files that dead writers left, and the game's secret salt in
//! `<record>.salt`. Its own room because it is all the file handling, and the crash
//! safety of play by mail rests on it alone.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use nix::fcntl::{Flock, FlockArg};

use super::PbmError;
use crate::record::{write_whole, Header, Line, SecretKey};

pub(super) fn io(path: &Path) -> impl Fn(std::io::Error) -> PbmError + '_ {
    move |e| PbmError::Io(format!("{}: {e}", path.display()))
}

/// Side files of a record.
pub(super) fn side(path: &Path, ext: &str) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(ext);
    PathBuf::from(name)
}

/// Holds the exclusive lock on a record for the duration of one update.
pub(super) struct Locked {
    _lock: Flock<File>,
}

pub(super) fn lock(path: &Path) -> Result<Locked, PbmError> {
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

/// Writes a fresh secret salt to `<record>.salt`, readable by its owner only; the
/// caller holds the record's lock (`_held`) and the record does not exist yet.
pub(super) fn write_salt(_held: &Locked, path: &Path) -> Result<(), PbmError> {
    let salt_path = side(path, ".salt");
    // A salt without its record is left by a `new` that died before the record was
    // written: it belongs to no game.
    match std::fs::remove_file(&salt_path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(io(&salt_path)(e)),
        _ => {}
    }
    let salt = fresh_hex(32)?;
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
    Ok(())
}

/// The judge's key of a signed game, from `<record>.key`; `None` for a game not
/// signed (no such file).
pub(super) fn read_key(path: &Path) -> Result<Option<SecretKey>, PbmError> {
    let key_path = side(path, ".key");
    if !key_path.exists() {
        return Ok(None);
    }
    SecretKey::read(&key_path)
        .map(Some)
        .map_err(|e| PbmError::Record(e.to_string()))
}

/// Puts the judge's key beside a new record as `<record>.key` (mode 0600), so every
/// later command signs the record and the messages with it, or, for a game not
/// signed, removes one a `new` that died before its record left there (it belongs
/// to no game, and would sign this one). The caller holds the record's lock.
pub(super) fn write_key(_held: &Locked, path: &Path, key: Option<&SecretKey>) -> Result<(), PbmError> {
    let key_path = side(path, ".key");
    match std::fs::remove_file(&key_path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(io(&key_path)(e)),
        _ => {}
    }
    let Some(key) = key else { return Ok(()) };
    use std::os::unix::fs::OpenOptionsExt;
    let mut f = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&key_path)
        .map_err(io(&key_path))?;
    writeln!(f, "{}", key.to_hex())
        .and_then(|_| f.sync_all())
        .map_err(io(&key_path))
}

/// Removes `<record>.salt` once the record's `reveal` line holds the salt; the caller
/// holds the record's lock (`_held`). Gone already is fine: nothing else removes it.
pub(super) fn remove_salt(_held: &Locked, path: &Path) -> Result<(), PbmError> {
    let salt_path = side(path, ".salt");
    match std::fs::remove_file(&salt_path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(io(&salt_path)(e)),
        _ => Ok(()),
    }
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
pub(super) fn rewrite(held: &Locked, path: &Path, header: &Header, lines: &[Line]) -> Result<(), PbmError> {
    remove_stale_temps(held, path)?;
    let key = read_key(path)?;
    let tmp = side(path, &format!(".tmp{}", std::process::id()));
    write_whole(path, &tmp, header, lines, key.as_ref(), || {
        fault("after-temp-write")
    })
    .map_err(io(path))
}

/// A test hook: `REFEREE_PBM_FAULT=<point>` aborts the process at that point, as a
/// crash or a kill would.
pub(super) fn fault(point: &str) {
    if std::env::var("REFEREE_PBM_FAULT").is_ok_and(|p| p == point) {
        std::process::abort();
    }
}

/// `n` fresh random bytes, hex, from the operating system (salts, passwords).
pub(super) fn fresh_hex(n: usize) -> Result<String, PbmError> {
    let mut bytes = vec![0u8; n];
    File::open("/dev/urandom")
        .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut bytes))
        .map_err(|e| PbmError::Io(format!("cannot read random bytes: {e}")))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}
