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
        let prev = std::mem::take(&mut self.views[view].prev);
        let numbers: Vec<u32> = svg
            .split_terminator('\n')
            .enumerate()
            .map(|(i, l)| match prev.get(i) {
                // Most lines are where they were in the previous picture, and
                // comparing with that line costs far less than hashing this one.
                Some(&n) if self.lines[n as usize] == l => n,
                _ => self.store(l),
            })
            .collect();
        let track = &mut self.views[view];
        track.prev = prev;
        track.frames.push(edits(&track.prev, &numbers));
        track.prev = numbers;
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
}
