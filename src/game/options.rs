//! Game options (`-o KEY=VALUE`): parsed at the edge, read by each game through typed
//! getters, and checked so that a misspelt key is an error rather than silently ignored.

use std::collections::BTreeMap;
use std::fmt;

use super::SetupError;

/// Game options as `key=value` pairs, in key order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Options(BTreeMap<String, String>);

impl Options {
    /// No options: every game uses its defaults.
    pub fn new() -> Options {
        Options::default()
    }

    /// Parses `key=value` words, as given after `-o` or on a controller `new` line.
    pub fn parse<'a>(words: impl IntoIterator<Item = &'a str>) -> Result<Options, SetupError> {
        let mut map = BTreeMap::new();
        for word in words {
            let (key, value) = word
                .split_once('=')
                .filter(|(k, v)| !k.is_empty() && !v.is_empty())
                .ok_or_else(|| SetupError::Option(format!("`{word}` is not KEY=VALUE")))?;
            if map.insert(key.to_string(), value.to_string()).is_some() {
                return Err(SetupError::Option(format!("`{key}` given twice")));
            }
        }
        Ok(Options(map))
    }

    /// Sets `key` (used by games to store defaults in their normalised options).
    pub fn set(&mut self, key: &str, value: impl ToString) {
        self.0.insert(key.to_string(), value.to_string());
    }

    /// The raw value of `key`.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).map(String::as_str)
    }

    /// Iterates over the pairs in key order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.0.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }

    /// Reads an integer option within `range`, or `default` when absent.
    pub fn int(
        &self,
        key: &str,
        default: u32,
        range: std::ops::RangeInclusive<u32>,
    ) -> Result<u32, SetupError> {
        let Some(raw) = self.get(key) else {
            return Ok(default);
        };
        raw.parse::<u32>()
            .ok()
            .filter(|v| range.contains(v))
            .ok_or_else(|| {
                SetupError::Option(format!(
                    "{key}={raw}: expected an integer from {} to {}",
                    range.start(),
                    range.end()
                ))
            })
    }

    /// Fails on the first key not in `known`, naming the keys that are.
    pub fn expect_only(&self, known: &[&str]) -> Result<(), SetupError> {
        match self.0.keys().find(|k| !known.contains(&k.as_str())) {
            Some(k) => Err(SetupError::Option(format!(
                "`{k}` is not an option of this game (options: {}){}",
                known.join(", "),
                crate::text::did_you_mean(k, known.iter().copied())
            ))),
            None => Ok(()),
        }
    }
}

impl fmt::Display for Options {
    /// `key=value` words separated by spaces, as on a `newgame` line.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, (k, v)) in self.iter().enumerate() {
            if i > 0 {
                f.write_str(" ")?;
            }
            write!(f, "{k}={v}")?;
        }
        Ok(())
    }
}

impl serde::Serialize for Options {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(s)
    }
}

impl<'de> serde::Deserialize<'de> for Options {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Options, D::Error> {
        BTreeMap::deserialize(d).map(Options)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_pairs_and_rejects_junk() {
        let o = Options::parse(["players=4", "max-plies=10"]).unwrap();
        assert_eq!(o.int("players", 2, 2..=4).unwrap(), 4);
        assert_eq!(o.to_string(), "max-plies=10 players=4");
        assert!(Options::parse(["players"]).is_err());
        assert!(Options::parse(["=3"]).is_err());
        assert!(Options::parse(["a=1", "a=2"]).is_err());
        assert!(o.int("players", 2, 2..=3).is_err());
        assert!(o.expect_only(&["players"]).is_err());
        assert!(o.expect_only(&["players", "max-plies"]).is_ok());
    }
}
