//! Text at the edges: suggestions for what a mistyped word may have meant, and text
//! from bots made safe to print on a terminal.

use std::borrow::Cow;
use std::fmt::Write as _;

/// Up to `max` candidates closest to `typed` by edit distance, best first: the best
/// ones (and, when the best is exact or one edit away, all those one edit away), and
/// only those a typo away (at most 3 edits, and at most half the word).
pub fn closest<'a, I>(typed: &str, candidates: I, max: usize) -> Vec<&'a str>
where
    I: IntoIterator<Item = &'a str>,
{
    let limit = (typed.chars().count() / 2).clamp(1, 3);
    let mut scored: Vec<(usize, &str)> = candidates
        .into_iter()
        .map(|c| (strsim::levenshtein(typed, c), c))
        .filter(|&(d, _)| d <= limit)
        .collect();
    scored.sort();
    let best = scored.first().map_or(0, |s| s.0);
    scored
        .into_iter()
        .take_while(|&(d, _)| d <= best.max(1))
        .take(max)
        .map(|(_, c)| c)
        .collect()
}

/// `; did you mean `x`?` for the closest candidate to `typed`, or nothing.
pub fn did_you_mean<'a>(typed: &str, candidates: impl IntoIterator<Item = &'a str>) -> String {
    match closest(typed, candidates, 1).first() {
        Some(c) => format!("; did you mean `{c}`?"),
        None => String::new(),
    }
}

/// `text` with every character that could steer a terminal written as an escape:
/// control characters (but newline and tab), DEL, the C1 controls and the Unicode
/// direction overrides become `\x1b`, `\r`, `\u{202e}`… Text a bot chose (its name, an
/// illegal action, an error it caused) passes through here before it is printed.
pub fn printable(text: &str) -> Cow<'_, str> {
    if !text.chars().any(unsafe_char) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '\r' => out.push_str("\\r"),
            c if unsafe_char(c) && (c as u32) < 0x100 => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c if unsafe_char(c) => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// Whether `c` may change what a terminal shows beyond printing itself.
fn unsafe_char(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\t')
        || matches!(c, '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggests_only_near_misses() {
        let games = ["pegchow", "telka", "idoubtit", "multichess"];
        assert_eq!(closest("telk", games, 3), ["telka"]);
        assert_eq!(closest("multichss", games, 3), ["multichess"]);
        assert!(closest("chess", games, 3).is_empty());
        assert!(closest("x", games, 3).is_empty());
        assert_eq!(
            did_you_mean("player", ["players", "max-plies"]),
            "; did you mean `players`?"
        );
        assert_eq!(did_you_mean("zzz", ["players"]), "");
    }

    #[test]
    fn escapes_what_would_steer_a_terminal() {
        assert_eq!(printable("plain name\twith tab\n"), "plain name\twith tab\n");
        assert!(matches!(printable("Bot ♞"), Cow::Borrowed(_)));
        assert_eq!(printable("\x1b[2Jevil\r"), "\\x1b[2Jevil\\r");
        assert_eq!(printable("a\u{7f}b\u{9b}c"), "a\\x7fb\\x9bc");
        assert_eq!(printable("\u{202e}txt"), "\\u{202e}txt");
        assert_eq!(printable("\0"), "\\x00");
    }
}
