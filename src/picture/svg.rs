//! A small SVG writer: elements with escaped attribute values and text, a header
//! with a `viewBox` (so one drawing scales to any width) and a `<title>`.
//!
//! Every string that reaches the output goes through [`escape`]: attribute names
//! are the writer's own constants, everything else may come from a record.

use std::fmt::Write as _;

/// The Okabe–Ito palette, distinguishable with the common colour-vision deficiencies.
pub mod palette {
    /// Blue.
    pub const BLUE: &str = "#0072B2";
    /// Vermillion.
    pub const VERMILLION: &str = "#D55E00";
    /// Bluish green.
    pub const GREEN: &str = "#009E73";
    /// Yellow.
    pub const YELLOW: &str = "#F0E442";
    /// Orange.
    pub const ORANGE: &str = "#E69F00";
    /// Sky blue.
    pub const SKY: &str = "#56B4E9";
    /// Reddish purple.
    pub const PURPLE: &str = "#CC79A7";
    /// Black.
    pub const BLACK: &str = "#000000";
    /// The light board background.
    pub const PAPER: &str = "#FFFFFF";
    /// Grey for lines, fog and neutral marks.
    pub const GREY: &str = "#999999";

    /// A seat colour, repeating after eight seats.
    pub fn seat(index: usize) -> &'static str {
        [BLUE, VERMILLION, GREEN, ORANGE, PURPLE, SKY, YELLOW, BLACK][index % 8]
    }

    /// Black or white, whichever reads better on `fill` (one of the palette colours).
    pub fn ink_on(fill: &str) -> &'static str {
        match fill {
            YELLOW | ORANGE | SKY | PAPER => BLACK,
            _ => PAPER,
        }
    }
}

/// `text` made safe as XML character data or an attribute value: the five special
/// characters become entities, characters XML 1.0 forbids are dropped.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    escape_into(&mut out, text);
    out
}

/// [`escape`], appended to `out`: a picture writes thousands of attributes, and
/// one allocation each showed in its profile.
fn escape_into(out: &mut String, text: &str) {
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\t' | '\n' | '\r' => out.push(c),
            c if (c as u32) < 0x20 || matches!(c, '\u{FFFE}' | '\u{FFFF}') => {}
            c => out.push(c),
        }
    }
}

/// A coordinate or length in user units, without a trailing `.0`.
pub fn num(v: f64) -> String {
    // Nearly every coordinate is a whole number of tenths, which integers print
    // exactly as `{:.1}` would; the float formatter was a third of a page's time.
    let tenths = v * 10.0;
    if tenths.fract() == 0.0 && tenths.abs() < 1e15 {
        let t = tenths as i64;
        let sign = if v.is_sign_negative() { "-" } else { "" };
        let (whole, tenth) = (t.unsigned_abs() / 10, t.unsigned_abs() % 10);
        return match tenth {
            0 => format!("{sign}{whole}"),
            _ => format!("{sign}{whole}.{tenth}"),
        };
    }
    let s = format!("{v:.1}");
    s.strip_suffix(".0").map_or(s.clone(), str::to_string)
}

/// How a text is aligned on its anchor point.
#[derive(Clone, Copy, Debug)]
pub enum Anchor {
    /// The text starts at the point.
    Start,
    /// The text is centred on the point.
    Middle,
}

/// A drawing being built, element by element.
#[derive(Debug, Default)]
pub struct Svg {
    body: String,
}

impl Svg {
    /// An empty drawing.
    pub fn new() -> Svg {
        Svg::default()
    }

    /// Writes `<name a="v" …` without closing the tag.
    fn start(&mut self, name: &str, attrs: &[(&str, &str)]) {
        self.body.push('<');
        self.body.push_str(name);
        for (k, v) in attrs {
            self.body.push(' ');
            self.body.push_str(k);
            self.body.push_str("=\"");
            escape_into(&mut self.body, v);
            self.body.push('"');
        }
    }

    /// An empty element `<name … />`.
    pub fn leaf(&mut self, name: &str, attrs: &[(&str, &str)]) {
        self.start(name, attrs);
        self.body.push_str("/>\n");
    }

    /// Opens a group; [`Svg::close`] ends it.
    pub fn open(&mut self, name: &str, attrs: &[(&str, &str)]) {
        self.start(name, attrs);
        self.body.push_str(">\n");
    }

    /// Closes the element `name` opened last.
    pub fn close(&mut self, name: &str) {
        let _ = writeln!(self.body, "</{name}>");
    }

    /// An element holding only `content` as text.
    pub fn with_text(&mut self, name: &str, attrs: &[(&str, &str)], content: &str) {
        self.start(name, attrs);
        self.body.push('>');
        escape_into(&mut self.body, content);
        let _ = writeln!(self.body, "</{name}>");
    }

    /// A filled rectangle, with an optional class.
    pub fn rect(&mut self, (x, y, w, h): (f64, f64, f64, f64), fill: &str, class: &str) {
        let (x, y, w, h) = (num(x), num(y), num(w), num(h));
        let mut attrs = vec![
            ("x", &*x),
            ("y", &*y),
            ("width", &*w),
            ("height", &*h),
            ("fill", fill),
        ];
        if !class.is_empty() {
            attrs.push(("class", class));
        }
        self.leaf("rect", &attrs);
    }

    /// A straight line.
    pub fn line(&mut self, (x1, y1): (f64, f64), (x2, y2): (f64, f64), stroke: &str, width: f64) {
        let attrs = [
            ("x1", num(x1)),
            ("y1", num(y1)),
            ("x2", num(x2)),
            ("y2", num(y2)),
            ("stroke", stroke.to_string()),
            ("stroke-width", num(width)),
        ];
        let attrs: Vec<(&str, &str)> = attrs.iter().map(|(k, v)| (*k, v.as_str())).collect();
        self.leaf("line", &attrs);
    }

    /// A text of height `size` at `(x, y)` (the baseline sits a third of `size` below
    /// `y`, so `y` is roughly the text's middle).
    pub fn text(&mut self, (x, y): (f64, f64), size: f64, anchor: Anchor, fill: &str, content: &str) {
        let anchor = match anchor {
            Anchor::Start => "start",
            Anchor::Middle => "middle",
        };
        let (x, y, size) = (num(x), num(y + size / 3.0), num(size));
        let attrs = [
            ("x", &*x),
            ("y", &*y),
            ("font-size", &*size),
            ("text-anchor", anchor),
            ("fill", fill),
        ];
        self.with_text("text", &attrs, content);
    }

    /// A polyline through `points`, unfilled.
    pub fn path(&mut self, points: &[(f64, f64)], stroke: &str, width: f64, class: &str) {
        let d: Vec<String> = points
            .iter()
            .enumerate()
            .map(|(i, (x, y))| format!("{}{} {}", if i == 0 { 'M' } else { 'L' }, num(*x), num(*y)))
            .collect();
        let (d, width) = (d.join(" "), num(width));
        let attrs = [
            ("d", &*d),
            ("fill", "none"),
            ("stroke", stroke),
            ("stroke-width", &*width),
            ("stroke-linecap", "round"),
            ("stroke-linejoin", "round"),
            ("class", class),
        ];
        self.leaf("path", &attrs);
    }

    /// A closed, filled polygon through `points`.
    pub fn polygon(&mut self, points: &[(f64, f64)], fill: &str, class: &str) {
        let list: Vec<String> = points
            .iter()
            .map(|(x, y)| format!("{},{}", num(*x), num(*y)))
            .collect();
        let list = list.join(" ");
        self.leaf("polygon", &[("points", &list), ("fill", fill), ("class", class)]);
    }

    /// A circle.
    pub fn circle(&mut self, (cx, cy): (f64, f64), r: f64, fill: &str, stroke: &str) {
        let (cx, cy, r) = (num(cx), num(cy), num(r));
        let attrs = [
            ("cx", &*cx),
            ("cy", &*cy),
            ("r", &*r),
            ("fill", fill),
            ("stroke", stroke),
            ("stroke-width", "1.5"),
        ];
        self.leaf("circle", &attrs);
    }

    /// The finished document: `width` × `height` user units, titled `title`, with the
    /// title also drawn across the top (the caller leaves room for it).
    pub fn finish(self, width: f64, height: f64, title: &str) -> String {
        let mut out = String::with_capacity(self.body.len() + 512);
        let _ = writeln!(
            out,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {} {}\" \
             font-family=\"DejaVu Sans, Noto Sans, Arial, sans-serif\" role=\"img\">",
            num(width),
            num(height)
        );
        let _ = writeln!(out, "<title>{}</title>", escape(title));
        out.push_str(&self.body);
        out.push_str("</svg>\n");
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_covers_the_special_characters_and_drops_forbidden_ones() {
        assert_eq!(escape("a<b>&\"'\u{1}c"), "a&lt;b&gt;&amp;&quot;&apos;c");
    }

    #[test]
    fn numbers_lose_a_trailing_zero() {
        assert_eq!(num(3.0), "3");
        assert_eq!(num(2.26), "2.3");
        assert_eq!(num(-1.5), "-1.5");
        // Whole tenths and the rest print as the float formatter prints them.
        let eighths = (-2000..2000).map(|k| f64::from(k) / 8.0);
        for v in eighths.chain([-0.0, -0.04, 0.3, 1e20, f64::NAN]) {
            let s = format!("{v:.1}");
            assert_eq!(num(v), s.strip_suffix(".0").unwrap_or(&s), "{v}");
        }
    }
}
