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
/// one allocation each showed in its profile. Nearly every value needs no change,
/// so the runs between special characters are copied whole.
fn escape_into(out: &mut String, text: &str) {
    // The bytes that may start a character to replace or drop: the five specials,
    // the controls, and the lead byte of U+F000–U+FFFF (U+FFFE and U+FFFF among them).
    let special = |b: &u8| matches!(b, b'&' | b'<' | b'>' | b'"' | b'\'' | 0..=0x1F | 0xEF);
    let mut rest = text;
    while let Some(i) = rest.as_bytes().iter().position(special) {
        out.push_str(&rest[..i]);
        let c = rest[i..]
            .chars()
            .next()
            .expect("a special byte starts a character");
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
        rest = &rest[i + c.len_utf8()..];
    }
    out.push_str(rest);
}

/// A coordinate or length in user units, without a trailing `.0`.
pub fn num(v: f64) -> String {
    let mut out = String::new();
    put_num(&mut out, v);
    out
}

/// [`num`], appended to `out`: a page draws thousands of pictures of hundreds of
/// numbers, and a string for each was a fifth of its time.
fn put_num(out: &mut String, v: f64) {
    // Nearly every coordinate is a whole number of tenths, which integers print
    // exactly as `{:.1}` would; the float formatter was a third of a page's time.
    let tenths = v * 10.0;
    if tenths.fract() == 0.0 && tenths.abs() < 1e15 {
        let t = tenths as i64;
        if v.is_sign_negative() {
            out.push('-');
        }
        put_digits(out, t.unsigned_abs() / 10);
        let tenth = (t.unsigned_abs() % 10) as u8;
        if tenth != 0 {
            out.push('.');
            out.push(char::from(b'0' + tenth));
        }
        return;
    }
    let s = format!("{v:.1}");
    out.push_str(s.strip_suffix(".0").unwrap_or(&s));
}

/// The decimal digits of `n`, without the formatter's machinery (its padding and
/// dispatch were a tenth of a page's time).
fn put_digits(out: &mut String, mut n: u64) {
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    loop {
        i -= 1;
        digits[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.push_str(std::str::from_utf8(&digits[i..]).expect("ASCII digits"));
}

/// Text attributes as [`Value`]s.
fn texts<'a>(attrs: &'a [(&'a str, &'a str)]) -> impl Iterator<Item = (&'a str, Value<'a>)> {
    attrs.iter().map(|&(k, v)| (k, Value::Text(v)))
}

/// One attribute's value: a number in user units, or a text to escape.
#[derive(Clone, Copy, Debug)]
enum Value<'a> {
    /// Printed by [`num`].
    Num(f64),
    /// Escaped by [`escape`].
    Text(&'a str),
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
    fn start<'a>(&mut self, name: &str, attrs: impl IntoIterator<Item = (&'a str, Value<'a>)>) {
        self.body.push('<');
        self.body.push_str(name);
        for (k, v) in attrs {
            self.body.push(' ');
            self.body.push_str(k);
            self.body.push_str("=\"");
            match v {
                Value::Num(n) => put_num(&mut self.body, n),
                Value::Text(t) => escape_into(&mut self.body, t),
            }
            self.body.push('"');
        }
    }

    /// An empty element `<name … />` whose attributes may be numbers.
    fn shape(&mut self, name: &str, attrs: &[(&str, Value)]) {
        self.start(name, attrs.iter().copied());
        self.body.push_str("/>\n");
    }

    /// An element holding only `content` as text, whose attributes may be numbers.
    fn element<'a>(
        &mut self,
        name: &str,
        attrs: impl IntoIterator<Item = (&'a str, Value<'a>)>,
        content: &str,
    ) {
        self.start(name, attrs);
        self.body.push('>');
        escape_into(&mut self.body, content);
        self.body.push_str("</");
        self.body.push_str(name);
        self.body.push_str(">\n");
    }

    /// An empty element `<name … />`.
    pub fn leaf(&mut self, name: &str, attrs: &[(&str, &str)]) {
        self.start(name, texts(attrs));
        self.body.push_str("/>\n");
    }

    /// Opens a group; [`Svg::close`] ends it.
    pub fn open(&mut self, name: &str, attrs: &[(&str, &str)]) {
        self.start(name, texts(attrs));
        self.body.push_str(">\n");
    }

    /// Closes the element `name` opened last.
    pub fn close(&mut self, name: &str) {
        let _ = writeln!(self.body, "</{name}>");
    }

    /// An element holding only `content` as text.
    pub fn with_text(&mut self, name: &str, attrs: &[(&str, &str)], content: &str) {
        self.element(name, texts(attrs), content);
    }

    /// A filled rectangle, with an optional class.
    pub fn rect(&mut self, (x, y, w, h): (f64, f64, f64, f64), fill: &str, class: &str) {
        use Value::{Num, Text};
        let attrs = [
            ("x", Num(x)),
            ("y", Num(y)),
            ("width", Num(w)),
            ("height", Num(h)),
            ("fill", Text(fill)),
            ("class", Text(class)),
        ];
        let n = if class.is_empty() { 5 } else { 6 };
        self.shape("rect", &attrs[..n]);
    }

    /// A straight line.
    pub fn line(&mut self, (x1, y1): (f64, f64), (x2, y2): (f64, f64), stroke: &str, width: f64) {
        use Value::{Num, Text};
        let attrs = [
            ("x1", Num(x1)),
            ("y1", Num(y1)),
            ("x2", Num(x2)),
            ("y2", Num(y2)),
            ("stroke", Text(stroke)),
            ("stroke-width", Num(width)),
        ];
        self.shape("line", &attrs);
    }

    /// A text of height `size` at `(x, y)` (the baseline sits a third of `size` below
    /// `y`, so `y` is roughly the text's middle).
    pub fn text(&mut self, (x, y): (f64, f64), size: f64, anchor: Anchor, fill: &str, content: &str) {
        use Value::{Num, Text};
        let anchor = match anchor {
            Anchor::Start => "start",
            Anchor::Middle => "middle",
        };
        let attrs = [
            ("x", Num(x)),
            ("y", Num(y + size / 3.0)),
            ("font-size", Num(size)),
            ("text-anchor", Text(anchor)),
            ("fill", Text(fill)),
        ];
        self.element("text", attrs, content);
    }

    /// A polyline through `points`, unfilled.
    pub fn path(&mut self, points: &[(f64, f64)], stroke: &str, width: f64, class: &str) {
        use Value::{Num, Text};
        let mut d = String::new();
        for (i, &(x, y)) in points.iter().enumerate() {
            d.push_str(if i == 0 { "M" } else { " L" });
            put_num(&mut d, x);
            d.push(' ');
            put_num(&mut d, y);
        }
        let attrs = [
            ("d", Text(&d)),
            ("fill", Text("none")),
            ("stroke", Text(stroke)),
            ("stroke-width", Num(width)),
            ("stroke-linecap", Text("round")),
            ("stroke-linejoin", Text("round")),
            ("class", Text(class)),
        ];
        self.shape("path", &attrs);
    }

    /// A closed, filled polygon through `points`.
    pub fn polygon(&mut self, points: &[(f64, f64)], fill: &str, class: &str) {
        let mut list = String::new();
        for (i, &(x, y)) in points.iter().enumerate() {
            if i > 0 {
                list.push(' ');
            }
            put_num(&mut list, x);
            list.push(',');
            put_num(&mut list, y);
        }
        self.leaf("polygon", &[("points", &list), ("fill", fill), ("class", class)]);
    }

    /// A circle.
    pub fn circle(&mut self, (cx, cy): (f64, f64), r: f64, fill: &str, stroke: &str) {
        use Value::{Num, Text};
        let attrs = [
            ("cx", Num(cx)),
            ("cy", Num(cy)),
            ("r", Num(r)),
            ("fill", Text(fill)),
            ("stroke", Text(stroke)),
            ("stroke-width", Text("1.5")),
        ];
        self.shape("circle", &attrs);
    }

    /// The elements `draw` writes, kept to be [`Svg::append`]ed: for the parts that
    /// are the same in every picture of a game, drawn once.
    pub fn drawn(draw: impl FnOnce(&mut Svg)) -> Svg {
        let mut svg = Svg::new();
        draw(&mut svg);
        svg
    }

    /// The elements written so far, as text.
    pub fn as_str(&self) -> &str {
        &self.body
    }

    /// Appends the elements of `other`, escaped as it wrote them.
    pub fn append(&mut self, other: &Svg) {
        self.body.push_str(&other.body);
    }

    /// The finished document: these elements and then `tail`'s, `width` × `height`
    /// user units, titled `title`. Leaves the drawing as it was, so one drawing can
    /// end several documents.
    pub fn finish(&self, tail: &Svg, width: f64, height: f64, title: &str) -> String {
        let mut out = String::with_capacity(self.body.len() + tail.body.len() + 512);
        let _ = writeln!(
            out,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {} {}\" \
             font-family=\"DejaVu Sans, Noto Sans, Arial, sans-serif\" role=\"img\">",
            num(width),
            num(height)
        );
        let _ = writeln!(out, "<title>{}</title>", escape(title));
        out.push_str(&self.body);
        out.push_str(&tail.body);
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
        // Around and between them, every other character is kept as it is.
        let kept = "\té·\u{F000}\u{FFFD}→\r\n";
        assert_eq!(escape(kept), kept);
        assert_eq!(escape("x\u{FFFE}y\u{FFFF}z\u{1F}"), "xyz");
        assert_eq!(escape("<<é&"), "&lt;&lt;é&amp;");
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
