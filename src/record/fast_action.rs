//! Action lines read in place and written directly, without serde: nearly every line
//! of a record is one, `verify` spent most of its time building and dropping their
//! strings, and the match loop writes one per action.
//!
//! Only the exact shape [`super::RecordWriter`] writes is read here: members in
//! declaration order, no whitespace, no escapes, optional members only when they carry
//! a value. Anything else gives `None` and goes through serde, so this reader accepts
//! a subset of what serde accepts and reads it to the same values.

use super::ActionLine;
use crate::game::{push_decimal, Seat};

/// An action line's members, borrowed from the line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct ActionRef<'a> {
    /// See [`ActionLine::ply`].
    pub ply: u32,
    /// See [`ActionLine::seat`].
    pub seat: Seat,
    /// See [`ActionLine::action`].
    pub action: &'a str,
    /// See [`ActionLine::taken`].
    pub taken: Option<&'a str>,
    /// See [`ActionLine::forced`].
    pub forced: bool,
    /// See [`ActionLine::opening`].
    pub opening: bool,
    /// See [`ActionLine::events`].
    pub events: Events<'a>,
    /// See [`ActionLine::think_ms`].
    pub think_ms: Option<u64>,
    /// See [`ActionLine::clock_ms`].
    pub clock_ms: Option<u64>,
    /// See [`ActionLine::time`].
    pub time: Option<&'a str>,
}

/// Recorded events, as read in place or as serde built them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Events<'a> {
    /// The inside of the JSON array, `"a","b"` (empty for `[]`); its strings hold no
    /// `"` or `\`, so their JSON text is their value, and every other piece between
    /// quotes is one.
    Raw(&'a str),
    /// Strings serde parsed.
    Parsed(&'a [String]),
}

impl<'a> Events<'a> {
    /// The events in order.
    pub fn iter(self) -> EventIter<'a> {
        match self {
            Events::Raw(raw) => EventIter {
                raw,
                parsed: [].iter(),
            },
            Events::Parsed(list) => EventIter {
                raw: "",
                parsed: list.iter(),
            },
        }
    }

    /// Whether these are exactly `derived`, in order.
    pub fn matches(self, derived: &[String]) -> bool {
        match self {
            Events::Parsed(list) => list == derived,
            Events::Raw(_) => self.iter().eq(derived.iter().map(String::as_str)),
        }
    }
}

/// The events of [`Events`], in order.
pub(super) struct EventIter<'a> {
    /// What is left of [`Events::Raw`].
    raw: &'a str,
    /// What is left of [`Events::Parsed`].
    parsed: std::slice::Iter<'a, String>,
}

impl<'a> Iterator for EventIter<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        if let Some(s) = self.parsed.next() {
            return Some(s);
        }
        // `"a","b"`: each event runs from a quote to the next one.
        let rest = self.raw.strip_prefix(',').unwrap_or(self.raw).strip_prefix('"')?;
        let end = rest.find('"')?;
        self.raw = &rest[end + 1..];
        Some(&rest[..end])
    }
}

impl<'a> ActionRef<'a> {
    /// Borrows a line serde parsed.
    pub fn of(a: &'a ActionLine) -> ActionRef<'a> {
        ActionRef {
            ply: a.ply,
            seat: a.seat,
            action: &a.action,
            taken: a.taken.as_deref(),
            forced: a.forced,
            opening: a.opening,
            events: Events::Parsed(&a.events),
            think_ms: a.think_ms,
            clock_ms: a.clock_ms,
            time: a.time.as_deref(),
        }
    }

    /// The owned line, with `events` standing for the recorded ones (the caller has
    /// checked that they are equal, and moving them saves a copy).
    pub fn to_line(self, events: Vec<String>) -> ActionLine {
        debug_assert!(self.events.matches(&events));
        ActionLine {
            ply: self.ply,
            seat: self.seat,
            action: self.action.to_string(),
            taken: self.taken.map(str::to_string),
            forced: self.forced,
            opening: self.opening,
            events,
            think_ms: self.think_ms,
            clock_ms: self.clock_ms,
            time: self.time.map(str::to_string),
        }
    }
}

/// Appends the JSON of `line` as serde writes it (`{"type":"action",…}`), when none
/// of its strings needs an escape; false (with `out` as it was) sends the line to
/// serde.
pub(super) fn write(line: &ActionLine, out: &mut String) -> bool {
    let plain = |s: &str| !s.bytes().any(|b| b == b'"' || b == b'\\' || b < 0x20);
    let strings_plain = plain(&line.action)
        && line.taken.as_deref().is_none_or(plain)
        && line.events.iter().all(|e| plain(e))
        && line.time.as_deref().is_none_or(plain);
    if !strings_plain {
        return false;
    }
    let string = |out: &mut String, s: &str| {
        out.push('"');
        out.push_str(s);
        out.push('"');
    };
    out.push_str("{\"type\":\"action\",\"ply\":");
    push_decimal(out, line.ply);
    out.push_str(",\"seat\":");
    push_decimal(out, line.seat.number() as u64);
    out.push_str(",\"action\":");
    string(out, &line.action);
    if let Some(taken) = &line.taken {
        out.push_str(",\"taken\":");
        string(out, taken);
    }
    if line.forced {
        out.push_str(",\"forced\":true");
    }
    if line.opening {
        out.push_str(",\"opening\":true");
    }
    out.push_str(",\"events\":[");
    for (i, e) in line.events.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        string(out, e);
    }
    out.push(']');
    if let Some(ms) = line.think_ms {
        out.push_str(",\"think_ms\":");
        push_decimal(out, ms);
    }
    if let Some(ms) = line.clock_ms {
        out.push_str(",\"clock_ms\":");
        push_decimal(out, ms);
    }
    if let Some(time) = &line.time {
        out.push_str(",\"time\":");
        string(out, time);
    }
    out.push('}');
    true
}

/// Reads `head`, a sealed action line up to its `,"hash":…` member, when it has the
/// shape the writer gives it; `None` sends the line to serde.
pub(super) fn parse(head: &str) -> Option<ActionRef<'_>> {
    let mut r = Reader { rest: head };
    r.eat("{\"type\":\"action\",\"ply\":")?;
    let ply = u32::try_from(r.number()?).ok()?;
    r.eat(",\"seat\":")?;
    // Seat 0 goes to serde, which says what is wrong with it.
    let seat = usize::try_from(r.number()?).ok().and_then(Seat::new)?;
    r.eat(",\"action\":")?;
    let action = r.string()?;
    let taken = match r.eat(",\"taken\":") {
        Some(()) => Some(r.string()?),
        None => None,
    };
    let forced = r.eat(",\"forced\":true").is_some();
    let opening = r.eat(",\"opening\":true").is_some();
    r.eat(",\"events\":[")?;
    let events = r.string_list()?;
    let think_ms = match r.eat(",\"think_ms\":") {
        Some(()) => Some(r.number()?),
        None => None,
    };
    let clock_ms = match r.eat(",\"clock_ms\":") {
        Some(()) => Some(r.number()?),
        None => None,
    };
    let time = match r.eat(",\"time\":") {
        Some(()) => Some(r.string()?),
        None => None,
    };
    r.rest.is_empty().then_some(ActionRef {
        ply,
        seat,
        action,
        taken,
        forced,
        opening,
        events: Events::Raw(events),
        think_ms,
        clock_ms,
        time,
    })
}

/// A cursor over the line.
struct Reader<'a> {
    rest: &'a str,
}

impl<'a> Reader<'a> {
    /// Consumes `token` if the rest starts with it.
    fn eat(&mut self, token: &str) -> Option<()> {
        self.rest = self.rest.strip_prefix(token)?;
        Some(())
    }

    /// A JSON integer in `u64` without sign, exponent or leading zero.
    fn number(&mut self) -> Option<u64> {
        let len = self.rest.bytes().take_while(u8::is_ascii_digit).count();
        let (digits, rest) = self.rest.split_at(len);
        if digits.is_empty() || (digits.len() > 1 && digits.starts_with('0')) {
            return None;
        }
        let mut n = 0u64;
        for d in digits.bytes() {
            n = n.checked_mul(10)?.checked_add(u64::from(d - b'0'))?;
        }
        self.rest = rest;
        Some(n)
    }

    /// A JSON string without escapes or control characters, returned without its quotes.
    fn string(&mut self) -> Option<&'a str> {
        let inside = self.rest.strip_prefix('"')?;
        let end = inside.bytes().position(|b| b == b'"' || b == b'\\' || b < 0x20)?;
        if inside.as_bytes()[end] != b'"' {
            return None;
        }
        self.rest = &inside[end + 1..];
        Some(&inside[..end])
    }

    /// The strings of an array whose `[` is consumed, through its `]`; returns their
    /// text between the brackets.
    fn string_list(&mut self) -> Option<&'a str> {
        let start = self.rest;
        if self.eat("]").is_some() {
            return Some("");
        }
        loop {
            self.string()?;
            if self.eat("]").is_some() {
                return Some(&start[..start.len() - self.rest.len() - 1]);
            }
            self.eat(",")?;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The serde reading of a whole sealed line, as `ActionRef`-comparable parts.
    fn by_serde(head: &str) -> Option<ActionLine> {
        serde_json::from_str(&format!("{head},\"hash\":\"{}\"}}", "0".repeat(64))).ok()
    }

    fn by_fast(head: &str) -> Option<ActionLine> {
        parse(head).map(|a| a.to_line(a.events.iter().map(str::to_string).collect()))
    }

    /// Either the fast reader declines, or it reads what serde reads.
    fn agrees(head: &str) {
        if let Some(fast) = by_fast(head) {
            assert_eq!(Some(fast), by_serde(head), "{head}");
        }
    }

    const LINES: &[&str] = &[
        r#"{"type":"action","ply":1,"seat":1,"action":"c2-d3","events":["move blue c2-d3"],"think_ms":3,"clock_ms":9870"#,
        r#"{"type":"action","ply":4294967295,"seat":2,"action":"a1-c3-e5","taken":"a1-c3","forced":true,"opening":true,"events":["move red a1-c3-e5 capture b2 d4","x",""],"think_ms":0,"clock_ms":18446744073709551615"#,
        r#"{"type":"action","ply":7,"seat":3,"action":"pass","events":[]"#,
        r#"{"type":"action","ply":7,"seat":3,"action":"","events":[""]"#,
        "{\"type\":\"action\",\"ply\":7,\"seat\":3,\"action\":\"é→😀\",\"events\":[\"ü \",\"\u{7f}\"]",
        r#"{"type":"action","ply":2,"seat":2,"action":"c7-d6","events":[],"time":"2026-01-02T03:04:05Z""#,
    ];

    #[test]
    fn writer_shapes_are_read_as_serde_reads_them() {
        for head in LINES {
            assert!(parse(head).is_some(), "{head}");
            agrees(head);
        }
        let a = parse(LINES[1]).unwrap();
        assert_eq!(
            a.events.iter().collect::<Vec<_>>(),
            ["move red a1-c3-e5 capture b2 d4", "x", ""]
        );
        assert_eq!(parse(LINES[2]).unwrap().events.iter().count(), 0);
        assert_eq!(parse(LINES[3]).unwrap().events.iter().collect::<Vec<_>>(), [""]);
    }

    #[test]
    fn the_writers_own_lines_take_the_fast_path() {
        let line = ActionLine {
            ply: 12,
            seat: Seat::new(2).unwrap(),
            action: "a1-c3".into(),
            taken: Some("a1".into()),
            forced: true,
            opening: false,
            events: vec!["move red a1-c3 capture b2".into(), "pass blue".into()],
            think_ms: None,
            clock_ms: Some(5),
            time: Some("2026-01-02T03:04:05Z".into()),
        };
        let sealed = super::super::seal(super::super::GENESIS, &super::super::Line::Action(line.clone()));
        let (head, _) = super::super::chain::split_sealed(&sealed).unwrap();
        assert_eq!(by_fast(head), Some(line));
    }

    #[test]
    fn other_shapes_are_left_to_serde() {
        let declined = [
            // Escapes, control characters, whitespace, other orders and spellings.
            r#"{"type":"action","ply":1,"seat":1,"action":"c2\u002dd3","events":[]"#,
            r#"{"type":"action","ply":1,"seat":1,"action":"c2-d3","events":["a\"b"]"#,
            "{\"type\":\"action\",\"ply\":1,\"seat\":1,\"action\":\"c2\td3\",\"events\":[]",
            r#"{"type":"action","ply":1,"seat":1,"action":"c2-d3","events": []"#,
            r#"{"type":"action","seat":1,"ply":1,"action":"c2-d3","events":[]"#,
            r#"{"type":"action","ply":1,"seat":1,"action":"c2-d3","forced":false,"events":[]"#,
            r#"{"type":"action","ply":1,"seat":1,"action":"c2-d3","taken":null,"events":[]"#,
            r#"{"type":"action","ply":1,"seat":1,"action":"c2-d3","events":[],"think_ms":null"#,
            r#"{"type":"action","ply":1,"seat":1,"action":"c2-d3","events":[],"clock_ms":1,"think_ms":1"#,
            // Extra, missing or repeated members.
            r#"{"type":"action","ply":1,"seat":1,"action":"c2-d3","events":[],"x":1"#,
            r#"{"type":"action","ply":1,"seat":1,"events":[]"#,
            r#"{"type":"action","ply":1,"seat":1,"action":"c2-d3""#,
            r#"{"type":"action","ply":1,"seat":1,"action":"c2-d3","events":[],"hash":"x""#,
            // Numbers serde reads differently or refuses.
            r#"{"type":"action","ply":01,"seat":1,"action":"c2-d3","events":[]"#,
            r#"{"type":"action","ply":-1,"seat":1,"action":"c2-d3","events":[]"#,
            r#"{"type":"action","ply":1.0,"seat":1,"action":"c2-d3","events":[]"#,
            r#"{"type":"action","ply":1e2,"seat":1,"action":"c2-d3","events":[]"#,
            r#"{"type":"action","ply":4294967296,"seat":1,"action":"c2-d3","events":[]"#,
            r#"{"type":"action","ply":1,"seat":1,"action":"c2-d3","events":[],"think_ms":18446744073709551616"#,
            // Broken arrays and strings.
            r#"{"type":"action","ply":1,"seat":1,"action":"c2-d3","events":["a",]"#,
            r#"{"type":"action","ply":1,"seat":1,"action":"c2-d3","events":[,"a"]"#,
            r#"{"type":"action","ply":1,"seat":1,"action":"c2-d3","events":["a""b"]"#,
            r#"{"type":"action","ply":1,"seat":1,"action":"c2-d3","events":["a"#,
            r#"{"type":"action","ply":1,"seat":1,"action":"c2-d3","events":[1]"#,
            r#"{"type":"action","ply":1,"seat":1,"action":c2-d3,"events":[]"#,
            r#"{"type":"result","ply":1,"seat":1,"action":"c2-d3","events":[]"#,
            "",
        ];
        for head in declined {
            assert_eq!(parse(head), None, "{head}");
        }
    }

    /// The direct writer and serde write the same bytes, or the writer declines.
    fn writes_as_serde(line: &ActionLine) {
        let mut direct = String::new();
        if write(line, &mut direct) {
            let serde = serde_json::to_string(&super::super::Line::Action(line.clone())).unwrap();
            assert_eq!(direct, serde);
        } else {
            assert!(direct.is_empty());
        }
    }

    #[test]
    fn strings_that_need_escapes_are_left_to_serde() {
        for bad in ["a\"b", "a\\b", "a\nb", "\u{1}", "\t"] {
            let mut line = by_fast(LINES[0]).unwrap();
            line.events.push(bad.to_string());
            let mut out = String::new();
            assert!(!write(&line, &mut out), "{bad:?}");
            writes_as_serde(&line);
        }
        let line = by_fast(LINES[4]).unwrap();
        let mut out = String::new();
        assert!(write(&line, &mut out), "DEL and non-ASCII need no escape");
        writes_as_serde(&line);
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2000))]

        /// Any action line: the direct writer agrees with serde byte for byte.
        #[test]
        fn any_line_is_written_as_serde_writes_it(
            ply: u32,
            seat in 1usize..=255,
            action in ".{0,12}",
            taken in proptest::option::of(".{0,6}"),
            forced: bool,
            opening: bool,
            events in proptest::collection::vec(".{0,10}", 0..4),
            think_ms: Option<u64>,
            clock_ms: Option<u64>,
            time in proptest::option::of(".{0,6}"),
        ) {
            let seat = Seat::new(seat).unwrap();
            writes_as_serde(&ActionLine { ply, seat, action, taken, forced, opening, events, think_ms, clock_ms, time });
        }

        /// Lines with any byte of a valid one replaced, dropped or doubled.
        #[test]
        fn edited_lines_agree_with_serde(
            which in 0..LINES.len(),
            at in 0usize..400,
            edit in 0u8..3,
            byte in proptest::sample::select(b"{}[]\",:\\ 0123456789-.eEtrufalsn\x01\x7fax".to_vec()),
        ) {
            let mut bytes = LINES[which].as_bytes().to_vec();
            let at = at % bytes.len();
            match edit {
                0 => bytes[at] = byte,
                1 => { bytes.remove(at); }
                _ => bytes.insert(at, bytes[at]),
            }
            if let Ok(head) = std::str::from_utf8(&bytes) {
                agrees(head);
            }
        }

        /// Arbitrary strings spliced into the action and the events.
        #[test]
        fn any_strings_agree_with_serde(action in ".{0,12}", event in ".{0,12}") {
            let raw = format!(
                r#"{{"type":"action","ply":1,"seat":1,"action":"{action}","events":["{event}","x"],"clock_ms":2"#
            );
            agrees(&raw);
            let line = ActionLine {
                ply: 1,
                seat: Seat::new(1).unwrap(),
                action,
                taken: None,
                forced: false,
                opening: false,
                events: vec![event],
                think_ms: None,
                clock_ms: None,
                time: None,
            };
            let sealed = super::super::seal(super::super::GENESIS, &super::super::Line::Action(line.clone()));
            let (head, _) = super::super::chain::split_sealed(&sealed).unwrap();
            agrees(head);
            if !head.contains('\\') {
                proptest::prop_assert_eq!(by_fast(head), Some(line));
            }
        }
    }
}
