//! The wall clock: the one function every mode reads the date and time from (record
//! times, the header's start, record file names, play-by-mail deadlines). Its own
//! room so that tests can set the time: `REFEREE_NOW=2026-01-02T03:04:05Z` makes
//! every read return that instant, which is how the deadline tests step through days
//! without sleeping. It is a testing aid; real games leave it unset.

use std::sync::{Mutex, PoisonError};
use std::time::{Duration, SystemTime};

/// The environment variable that, when set, fixes the wall clock (RFC 3339 UTC).
pub const NOW_VAR: &str = "REFEREE_NOW";

/// No time this process returns is earlier than this: see [`now`].
static FLOOR: Mutex<Option<SystemTime>> = Mutex::new(None);

/// The time now: `REFEREE_NOW` when it is set and readable, else the system clock.
/// The command line refuses an unreadable `REFEREE_NOW` before anything runs
/// ([`check_env`]), so the fallback only serves library callers. It never goes
/// backwards within a process, nor before a time given to [`not_before`]: a
/// system clock stepped back would otherwise write a record `verify` refuses.
pub fn now() -> SystemTime {
    let t = injected().and_then(Result::ok).unwrap_or_else(SystemTime::now);
    let mut floor = FLOOR.lock().unwrap_or_else(PoisonError::into_inner);
    let t = floor.map_or(t, |f| f.max(t));
    *floor = Some(t);
    t
}

/// Makes [`now`] return nothing earlier than `t` from now on (the time of the last
/// line of a record about to be continued).
pub fn not_before(t: SystemTime) {
    let mut floor = FLOOR.lock().unwrap_or_else(PoisonError::into_inner);
    *floor = Some(floor.map_or(t, |f| f.max(t)));
}

/// [`now`] as RFC 3339 UTC to the second, as record lines carry it.
pub fn now_rfc3339() -> String {
    format_rfc3339(now())
}

/// `t` as RFC 3339 UTC to the second (`2026-01-02T03:04:05Z`).
pub fn format_rfc3339(t: SystemTime) -> String {
    humantime::format_rfc3339_seconds(t).to_string()
}

/// Reads an RFC 3339 time (`2026-01-02T03:04:05Z`).
pub fn parse_rfc3339(text: &str) -> Option<SystemTime> {
    humantime::parse_rfc3339_weak(text)
        .ok()
        .filter(|_| text.ends_with('Z'))
}

/// Why `REFEREE_NOW` cannot be used, if it is set and unreadable: the command line
/// stops with this before doing anything, rather than run on the real clock.
pub fn check_env() -> Result<(), String> {
    match injected() {
        Some(Err(text)) => Err(format!(
            "{NOW_VAR}={text:?} is not an RFC 3339 UTC time like 2026-01-02T03:04:05Z"
        )),
        _ => Ok(()),
    }
}

/// The injected time, if `REFEREE_NOW` is set: the time, or the text that is not one.
fn injected() -> Option<Result<SystemTime, String>> {
    // Read once: the environment does not change under a running referee, and this
    // is asked for every record line, where a lookup each time would be timed as the
    // referee's cost per action.
    static INJECTED: std::sync::OnceLock<Option<Result<SystemTime, String>>> = std::sync::OnceLock::new();
    INJECTED
        .get_or_init(|| {
            let text = std::env::var(NOW_VAR).ok()?;
            Some(parse_rfc3339(&text).ok_or(text))
        })
        .clone()
}

/// Seconds since the Unix epoch of `t` (0 before it).
pub fn unix_seconds(t: SystemTime) -> u64 {
    t.duration_since(SystemTime::UNIX_EPOCH)
        .unwrap_or(Duration::ZERO)
        .as_secs()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339_round_trips_and_wants_utc() {
        let t = parse_rfc3339("2026-01-02T03:04:05Z").unwrap();
        assert_eq!(format_rfc3339(t), "2026-01-02T03:04:05Z");
        assert_eq!(parse_rfc3339("2026-01-02T03:04:05+01:00"), None);
        assert_eq!(parse_rfc3339("yesterday"), None);
    }
}
