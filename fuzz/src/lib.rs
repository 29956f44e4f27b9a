//! What the fuzz targets share: the property checks of `tests/properties.rs`, included
//! from the one file both use (`tests/property_checks/mod.rs`), and the few helpers
//! that turn libFuzzer's bytes into their inputs. Every check panics on a violation,
//! which libFuzzer reports as a crash with the input that caused it.

#[path = "../../tests/property_checks/mod.rs"]
mod property_checks;

pub use property_checks::*;

impl Setup {
    /// The setup a byte picks.
    pub fn pick(byte: u8) -> Setup {
        SETUPS[byte as usize % SETUPS.len()]
    }
}

/// `text` spliced into `base` between two positions chosen by `a` and `b`.
pub fn splice(base: &str, a: u16, b: u16, text: &str) -> String {
    let chars: Vec<char> = base.chars().collect();
    let from = a as usize % (chars.len() + 1);
    let to = (from + b as usize % 16).min(chars.len());
    let mut out: String = chars[..from].iter().collect();
    out.push_str(text);
    out.extend(&chars[to..]);
    out
}

impl Session {
    /// Runs one input line: `!N` plays the N-th legal action, `!u N M …` plays the
    /// N-th, M-th … legal actions and undoes them all, `!cN` clones the game and plays
    /// in the copy, `!r` records and loads back,
    /// anything else is a command (`record`/`load` paths become scratch files).
    pub fn line(&mut self, line: &str) {
        if let Some(n) = line.strip_prefix('!').and_then(|n| n.parse::<usize>().ok()) {
            self.play_legal(|len| n % len);
        } else if let Some(picks) = line.strip_prefix("!u ") {
            let picks: Vec<usize> = picks.split(' ').filter_map(|p| p.parse().ok()).take(8).collect();
            self.play_undo(&picks);
        } else if let Some(pick) = line.strip_prefix("!c").and_then(|n| n.parse::<usize>().ok()) {
            self.clone_apart(pick);
        } else if line == "!r" {
            self.record_load();
        } else {
            self.raw(line);
        }
    }
}
