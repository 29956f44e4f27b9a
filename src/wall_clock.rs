//! The wall clock: the one function every mode reads the date and time from (record
//! times, the header's start, record file names, play-by-mail deadlines). Its own
//! room so that tests can set the time: `REFEREE_NOW=2026-01-02T03:04:05Z` makes
//! every read return that instant, which is how the deadline tests step through days
//! without sleeping. It is a testing aid; real games leave it unset.

use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime};

/// The environment variable that, when set, fixes the wall clock (RFC 3339 UTC).
pub const NOW_VAR: &str = "REFEREE_NOW";

/// No time this process returns is earlier than this, in nanoseconds since the Unix
/// epoch (0: none yet): see [`now`]. An atomic rather than a lock, because every
/// record line reads the clock, and a lock shared by all the games of a tournament
/// was paid per action by each of them.
static FLOOR: AtomicU64 = AtomicU64::new(0);

/// The time now: `REFEREE_NOW` when it is set and readable, else the system clock.
/// The command line refuses an unreadable `REFEREE_NOW` before anything runs
/// ([`check_env`]), so the fallback only serves library callers. It never goes
/// backwards within a process, nor before a time given to [`not_before`]: a
/// system clock stepped back would otherwise write a record `verify` refuses.
pub fn now() -> SystemTime {
    let t = injected().and_then(Result::ok).unwrap_or_else(SystemTime::now);
    match nanos(t) {
        Some(n) => from_nanos(FLOOR.fetch_max(n, Ordering::Relaxed).max(n)),
        // Before the epoch (no RFC 3339 time the referee reads): the floor only.
        None => from_nanos(FLOOR.load(Ordering::Relaxed)).max(t),
    }
}

/// Makes [`now`] return nothing earlier than `t` from now on (the time of the last
/// line of a record about to be continued).
pub fn not_before(t: SystemTime) {
    if let Some(n) = nanos(t) {
        FLOOR.fetch_max(n, Ordering::Relaxed);
    }
}

/// [`now`] as RFC 3339 UTC to the second, as record lines carry it.
pub fn now_rfc3339() -> String {
    // The text of the last second this thread formatted (a match runs on one
    // thread): a second holds thousands of actions, and formatting each anew was a
    // measurable part of the referee's cost per action. Same bytes either way.
    thread_local! {
        static LAST: RefCell<(u64, String)> = const { RefCell::new((u64::MAX, String::new())) };
    }
    let t = now();
    let second = unix_seconds(t);
    LAST.with(|last| {
        let mut last = last.borrow_mut();
        if last.0 != second {
            *last = (second, format_rfc3339(t));
        }
        last.1.clone()
    })
}

/// Nanoseconds since the Unix epoch, if `t` is after it and before the year 2554.
fn nanos(t: SystemTime) -> Option<u64> {
    let d = t.duration_since(SystemTime::UNIX_EPOCH).ok()?;
    u64::try_from(d.as_nanos()).ok().filter(|&n| n > 0)
}

/// The inverse of [`nanos`].
fn from_nanos(n: u64) -> SystemTime {
    SystemTime::UNIX_EPOCH + Duration::from_nanos(n)
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

    #[test]
    fn the_cached_second_reads_as_the_clock_does() {
        // No floor is set here: other tests of this process read the real clock.
        let (a, b, c) = (now_rfc3339(), format_rfc3339(now()), now_rfc3339());
        assert!(a <= b && b <= c, "{a} {b} {c}");
        assert_eq!(format_rfc3339(parse_rfc3339(&c).unwrap()), c);
    }
}
