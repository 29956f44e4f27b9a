//! The pictures of every ply of a game, stored small for the HTML viewer.
//!
//! A 2,000-ply game has thousands of pictures of 10–20 kB that differ from the one
//! before in a handful of lines (the piece that moved, the captions). So every
//! distinct line is stored once, and each picture is a list of edits on the previous
//! picture of the same view: "copy these lines of it" or "this stored line". The
//! page rebuilds each picture by replaying the edits, which costs milliseconds.
//!
//! Only the pictures handed to a [`Book`] enter it: a book made of one seat's
//! pictures holds no line the other views drew.

use std::collections::HashMap;

use serde::Serialize;

/// How far ahead in the previous picture a line is looked for after a mismatch:
/// enough to skip a piece taken off the board, little enough to stay linear.
const LOOKAHEAD: usize = 12;

/// One edit of a picture: a stored line, or a run of the previous picture's lines.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum Edit {
    /// The stored line with this number.
    Line(u32),
    /// `len` lines of the previous picture from line `start` on.
    Copy(u32, u32),
}

/// One view's pictures (omniscient or one seat's) and the events it was told.
#[derive(Debug, Serialize)]
pub struct Track {
    /// What the view is, as the page lists it (`seat 2 (Red)`).
    pub label: String,
    /// The seat whose view it is; `None` for the omniscient one.
    pub seat: Option<u32>,
    /// Each picture as edits on the one before.
    pub frames: Vec<Vec<Edit>>,
    /// The event lines, each with the number of the picture it leads to.
    pub events: Vec<(usize, String)>,
    /// The previous picture, as numbers of stored lines.
    #[serde(skip)]
    prev: Vec<u32>,
    /// The previous picture's text.
    #[serde(skip)]
    text: String,
}

/// Every view's pictures of one game, with their lines stored once.
#[derive(Debug, Default, Serialize)]
pub struct Book {
    /// The distinct lines of all pictures.
    pub lines: Vec<String>,
    /// The ply of each picture (the same for every view).
    pub plies: Vec<u32>,
    /// The views.
    pub views: Vec<Track>,
    /// Where each line is stored.
    #[serde(skip)]
    index: HashMap<String, u32>,
}

impl Book {
    /// A book with no pictures yet, for views `(label, seat)`.
    pub fn new(views: Vec<(String, Option<u32>)>) -> Book {
        let views = views
            .into_iter()
            .map(|(label, seat)| Track {
                label,
                seat,
                frames: Vec::new(),
                events: Vec::new(),
                prev: Vec::new(),
                text: String::new(),
            })
            .collect();
        Book {
            views,
            ..Book::default()
        }
    }

    /// Notes that the next pictures are at `ply`.
    pub fn ply(&mut self, ply: u32) {
        self.plies.push(ply);
    }

    /// An event line of `view`, belonging to its next picture.
    pub fn event(&mut self, view: usize, text: String) {
        let track = &mut self.views[view];
        track.events.push((track.frames.len(), text));
    }

    /// Adds the next picture of `view` (its lines are split at `\n` only, so joining
    /// them with `\n` and ending with one gives the picture back byte for byte).
    pub fn picture(&mut self, view: usize, svg: &str) {
        let track = &mut self.views[view];
        let (prev, prev_text) = (std::mem::take(&mut track.prev), std::mem::take(&mut track.text));
        let numbers = self.numbers(svg, &prev, &prev_text);
        let track = &mut self.views[view];
        track.frames.push(edits(&prev, &numbers));
        // The previous text's allocation holds the next one.
        let mut text = prev_text;
        text.clear();
        text.push_str(svg);
        (track.prev, track.text) = (numbers, text);
    }

    /// The numbers of `svg`'s lines, given the previous picture of its view (`prev`,
    /// whose text is `prev_text`).
    ///
    /// Most of a picture is the previous one's text, byte for byte, where it was.
    /// So a run of bytes equal to those at the same offset in the previous picture
    /// is compared in blocks and its whole lines take their numbers from it; only
    /// the lines that differ are split out and looked up by hash. Splitting and
    /// hashing every line was most of a page's time.
    fn numbers(&mut self, svg: &str, prev: &[u32], prev_text: &str) -> Vec<u32> {
        let (new, old) = (svg.as_bytes(), prev_text.as_bytes());
        let mut numbers = Vec::with_capacity(prev.len());
        // Byte offsets in `new` and `old`, each at the start of a line, and the
        // number of `old`'s lines before `j`.
        let (mut i, mut j, mut k) = (0, 0, 0);
        while i < new.len() {
            let same = common_prefix(&new[i..], old.get(j..).unwrap_or_default());
            let whole = memchr::memrchr(b'\n', &new[i..i + same]).map_or(0, |p| p + 1);
            let lines = memchr::memchr_iter(b'\n', &new[i..i + whole]).count();
            numbers.extend_from_slice(&prev[k..k + lines]);
            (i, j, k) = (i + whole, j + whole, k + lines);
            if i == new.len() {
                break;
            }
            let end = line_end(new, i);
            numbers.push(self.store(&svg[i..end]));
            i = (end + 1).min(new.len());
            if k < prev.len() {
                (j, k) = (line_end(old, j) + 1, k + 1);
            }
        }
        numbers
    }

    /// The number of `line`, storing it if it is new.
    fn store(&mut self, line: &str) -> u32 {
        if let Some(&n) = self.index.get(line) {
            return n;
        }
        let n = self.lines.len() as u32;
        self.lines.push(line.to_string());
        self.index.insert(line.to_string(), n);
        n
    }
}

/// How many bytes `a` and `b` begin with alike.
fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    // A block compares as one `memcmp`, many times faster than byte by byte.
    const BLOCK: usize = 64;
    let n = a.len().min(b.len());
    let mut i = 0;
    while i + BLOCK <= n && a[i..i + BLOCK] == b[i..i + BLOCK] {
        i += BLOCK;
    }
    while i < n && a[i] == b[i] {
        i += 1;
    }
    i
}

/// The offset of the end of the line that starts at `start` in `text`: its `\n`,
/// or the end of `text`.
fn line_end(text: &[u8], start: usize) -> usize {
    memchr::memchr(b'\n', &text[start..]).map_or(text.len(), |p| start + p)
}

/// The edits that turn `prev` into `next` (both as numbers of stored lines). Not a
/// minimal diff: it walks both lists once, resynchronising after a mismatch if the
/// line (and the one after it) turns up a little further on in `prev`.
pub fn edits(prev: &[u32], next: &[u32]) -> Vec<Edit> {
    let mut out: Vec<Edit> = Vec::new();
    let mut j = 0;
    for (i, &line) in next.iter().enumerate() {
        let after = next.get(i + 1).copied();
        let found = (j..prev.len().min(j + LOOKAHEAD))
            .find(|&k| prev[k] == line && (k == j || after.is_none() || prev.get(k + 1).copied() == after));
        match found {
            Some(k) => {
                match out.last_mut() {
                    Some(Edit::Copy(start, len)) if *start + *len == k as u32 => *len += 1,
                    _ => out.push(Edit::Copy(k as u32, 1)),
                }
                j = k + 1;
            }
            None => {
                out.push(Edit::Line(line));
                // A line replaced by another: keep both lists in step.
                if j < prev.len() && after.is_some() && prev.get(j + 1).copied() == after {
                    j += 1;
                }
            }
        }
    }
    out
}

/// `prev` with `edits` applied: what the page does to rebuild a picture.
pub fn apply(prev: &[u32], edits: &[Edit]) -> Vec<u32> {
    let mut out = Vec::new();
    for edit in edits {
        match *edit {
            Edit::Line(n) => out.push(n),
            Edit::Copy(start, len) => out.extend_from_slice(&prev[start as usize..(start + len) as usize]),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edits_rebuild_the_next_picture_after_moves_insertions_and_deletions() {
        let cases: [(&[u32], &[u32]); 5] = [
            (&[], &[1, 2, 3]),
            (&[1, 2, 3, 4, 5], &[1, 2, 3, 4, 5]),
            (&[1, 2, 3, 4, 5], &[1, 9, 3, 4, 5]),
            (&[1, 2, 3, 4, 5, 6], &[1, 4, 5, 7, 8, 6]),
            (&[1, 2, 2, 2, 3], &[2, 2, 3, 3, 1]),
        ];
        for (prev, next) in cases {
            assert_eq!(apply(prev, &edits(prev, next)), next, "{prev:?} -> {next:?}");
        }
    }

    #[test]
    fn an_unchanged_picture_is_one_copy() {
        let same: Vec<u32> = (0..300).collect();
        assert_eq!(edits(&same, &same), vec![Edit::Copy(0, 300)]);
    }

    #[test]
    fn a_book_stores_each_line_once() {
        let mut book = Book::new(vec![("omniscient".into(), None)]);
        book.ply(0);
        book.picture(0, "<svg>\n<a/>\n</svg>\n");
        book.ply(1);
        book.picture(0, "<svg>\n<b/>\n</svg>\n");
        assert_eq!(book.lines, ["<svg>", "<a/>", "</svg>", "<b/>"]);
        assert_eq!(
            book.views[0].frames[1],
            [Edit::Copy(0, 1), Edit::Line(3), Edit::Copy(2, 1)]
        );
    }

    #[test]
    fn a_book_gives_back_every_picture_whatever_changed_from_the_one_before() {
        // Long runs alike (several of the blocks compared at once), a line changed,
        // lines removed and added, empty lines, and a last line without its `\n`.
        let long = "<rect x=\"1\" y=\"2\" width=\"40\" height=\"40\"/>\n".repeat(9);
        let pictures = [
            format!("<svg>\n{long}<a/>\n{long}</svg>\n"),
            format!("<svg>\n{long}<b/>\n{long}</svg>\n"),
            format!("<svg>\n<c/>\n{long}<b/>\n\n{long}</svg>\n"),
            format!("<svg>\n{long}\n\n</svg>"),
            format!("<svg>\n{long}\n\n</svg>\n<d/>\n"),
            String::new(),
            format!("<svg>\n{long}"),
        ];
        let mut book = Book::new(vec![("omniscient".into(), None)]);
        let mut shown: Vec<u32> = Vec::new();
        for (ply, svg) in pictures.iter().enumerate() {
            book.ply(ply as u32);
            book.picture(0, svg);
            shown = apply(&shown, &book.views[0].frames[ply]);
            let text: Vec<&str> = shown.iter().map(|&n| book.lines[n as usize].as_str()).collect();
            assert_eq!(
                text,
                svg.split_terminator('\n').collect::<Vec<_>>(),
                "picture {ply}"
            );
        }
        let mut distinct: Vec<&String> = book.lines.iter().collect();
        distinct.sort();
        distinct.dedup();
        assert_eq!(distinct.len(), book.lines.len(), "a line stored twice");
    }
}
