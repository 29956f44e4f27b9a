//! Tournament entrants: `--agent` words in the cutechess-cli spirit
//! (`name=N cmd='…' dir=D tc=T st=S restart=R option.K=V`) or a JSON / TOML file of
//! them.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::engines::Restart;
use crate::clock::TimeControl;

/// One bot in a tournament.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entrant {
    /// Unique name in tables and statistics.
    pub name: String,
    /// Command line; `builtin:random` and `builtin:greedy` name the built-in agents.
    pub cmd: String,
    /// Working directory (default: a private one per game).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dir: Option<PathBuf>,
    /// `setoption` pairs sent after the handshake.
    #[serde(default, skip_serializing_if = "Vec::is_empty", with = "option_pairs")]
    pub options: Vec<(String, String)>,
    /// Its own clock, as `--tc` takes it (instead of the tournament's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tc: Option<String>,
    /// Its own time per decision in seconds, as `--st` takes it (instead of the
    /// tournament's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub st: Option<String>,
    /// When its process is started again between games.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub restart: Option<Restart>,
}

/// Options are a `{ "name": "value" }` table in files, kept in order inside.
mod option_pairs {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};
    use std::collections::BTreeMap;

    pub fn serialize<S: Serializer>(v: &[(String, String)], s: S) -> Result<S::Ok, S::Error> {
        v.iter()
            .cloned()
            .collect::<BTreeMap<String, String>>()
            .serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<(String, String)>, D::Error> {
        Ok(BTreeMap::<String, String>::deserialize(d)?.into_iter().collect())
    }
}

impl Entrant {
    /// Parses one `--agent` value: either `name=… cmd=… [dir=…] [tc=…|st=…]
    /// [restart=…] [option.K=V]…` or, without `cmd=`, the whole text as the command.
    pub fn parse(text: &str) -> Result<Entrant, String> {
        let words = shell_words::split(text).map_err(|e| format!("--agent `{text}`: {e}"))?;
        let keyed = words.iter().any(|w| w.starts_with("cmd="));
        if !keyed {
            if words.is_empty() {
                return Err("--agent: empty command".into());
            }
            return Entrant::new(
                default_name(&words[0], words.get(1).map(String::as_str)),
                text.to_string(),
            )
            .checked();
        }
        let (mut name, mut cmd) = (None, None);
        let mut e = Entrant::new(String::new(), String::new());
        for w in &words {
            let (k, v) = w
                .split_once('=')
                .ok_or_else(|| format!("--agent `{w}`: expected KEY=VALUE"))?;
            match k {
                "name" => name = Some(v.to_string()),
                "cmd" => cmd = Some(v.to_string()),
                "dir" => e.dir = Some(PathBuf::from(v)),
                "tc" => e.tc = Some(v.to_string()),
                "st" => e.st = Some(v.to_string()),
                "restart" => e.restart = Some(Restart::parse(v).map_err(|m| format!("--agent: {m}"))?),
                _ => match k.strip_prefix("option.") {
                    Some(o) if !o.is_empty() => e.options.push((o.to_string(), v.to_string())),
                    _ => {
                        return Err(format!(
                            "--agent: unknown key `{k}` (name, cmd, dir, tc, st, restart, option.NAME)"
                        ))
                    }
                },
            }
        }
        e.cmd = cmd
            .filter(|c| !c.trim().is_empty())
            .ok_or("--agent: `cmd=` is empty")?;
        e.name = name.unwrap_or_else(|| {
            let w = shell_words::split(&e.cmd).unwrap_or_default();
            default_name(
                w.first().map(String::as_str).unwrap_or("agent"),
                w.get(1).map(String::as_str),
            )
        });
        e.checked()
    }

    /// An entrant with only a name and a command.
    pub fn new(name: String, cmd: String) -> Entrant {
        Entrant {
            name,
            cmd,
            dir: None,
            options: Vec::new(),
            tc: None,
            st: None,
            restart: None,
        }
    }

    /// The entrant's own time control, if it has one (`tc=` or `st=`).
    pub fn control(&self) -> Result<Option<TimeControl>, String> {
        let parsed = match (&self.tc, &self.st) {
            (None, None) => return Ok(None),
            (Some(_), Some(_)) => return Err("give tc= or st=, not both".into()),
            (Some(tc), None) => TimeControl::parse_tc(tc),
            (None, Some(st)) => TimeControl::parse_st(st),
        };
        parsed.map(Some).map_err(|e| e.to_string())
    }

    /// The entrant, if what the command line and the files cannot check by their
    /// syntax holds: a `builtin:` name is a built-in agent, and no option name or value
    /// holds a line break (it would end the `setoption` line and start another).
    fn checked(self) -> Result<Entrant, String> {
        match crate::builtin::Strategy::from_agent_command(&self.cmd) {
            Some(Err(e)) => return Err(format!("entrant `{}`: {e}", self.name)),
            Some(Ok(_)) => crate::builtin::check_user_options(&self.options)
                .map_err(|e| format!("entrant `{}`: {e}", self.name))?,
            None => {}
        }
        crate::protocol::agent::check_setoptions(&self.options)
            .map_err(|e| format!("entrant `{}`: {e}", self.name))?;
        self.control()
            .map_err(|e| format!("entrant `{}`: {e}", self.name))?;
        Ok(self)
    }

    /// Makes a relative `dir=` absolute from `base` (the current directory for
    /// `--agent`, the agents file's directory for a file), so that a resume from
    /// anywhere starts the entrant in the same place, and checks it is a directory:
    /// a mistyped one is refused before any game, not a forfeit in every game.
    pub fn anchor_dir(&mut self, base: &Path) -> Result<(), String> {
        let Some(dir) = &self.dir else {
            return Ok(());
        };
        let dir = if dir.is_absolute() {
            dir.clone()
        } else {
            base.join(dir)
        };
        if !dir.is_dir() {
            return Err(format!(
                "entrant `{}`: dir={}: not a directory",
                self.name,
                dir.display()
            ));
        }
        self.dir = Some(dir);
        Ok(())
    }

    /// Reads entrants from a JSON array or a TOML file of `[[agent]]` tables.
    pub fn load(path: &Path) -> Result<Vec<Entrant>, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let is_toml = path.extension().is_some_and(|e| e == "toml");
        if is_toml {
            #[derive(Deserialize)]
            struct File {
                agent: Vec<Entrant>,
            }
            toml::from_str::<File>(&text)
                .map(|f| f.agent)
                .map_err(|e| format!("{}: {}", path.display(), e.to_string().replace('\n', " ")))
        } else {
            serde_json::from_str::<Vec<Entrant>>(&text).map_err(|e| format!("{}: {e}", path.display()))
        }?
        .into_iter()
        .map(|e| {
            let mut e = e.checked()?;
            let base = path
                .parent()
                .filter(|p| !p.as_os_str().is_empty())
                .unwrap_or(Path::new("."));
            e.anchor_dir(base)?;
            Ok(e)
        })
        .collect::<Result<_, String>>()
        .map_err(|e| format!("{}: {e}", path.display()))
    }
}

/// A name from the command: the built-in strategy, or the program's (or script's)
/// file stem.
fn default_name(program: &str, arg: Option<&str>) -> String {
    if let Some(b) = program.strip_prefix("builtin:") {
        return b.to_string();
    }
    let interpreters = ["python3", "python", "sh", "bash", "node", "java", "ruby", "perl"];
    let base = |p: &str| {
        Path::new(p)
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or(p)
            .to_string()
    };
    match arg {
        Some(script) if interpreters.contains(&base(program).as_str()) => base(script),
        _ => base(program),
    }
}

/// Makes names unique by appending `#2`, `#3`, … to repeats.
pub fn dedupe_names(entrants: &mut [Entrant]) {
    for i in 1..entrants.len() {
        let mut k = 2;
        let base = entrants[i].name.clone();
        while entrants[..i].iter().any(|e| e.name == entrants[i].name) {
            entrants[i].name = format!("{base}#{k}");
            k += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agent_words_parse() {
        let e = Entrant::parse("name=A cmd='python3 bot.py --fast' dir=/tmp option.Depth=3").unwrap();
        assert_eq!(e.name, "A");
        assert_eq!(e.cmd, "python3 bot.py --fast");
        assert_eq!(e.dir, Some(PathBuf::from("/tmp")));
        assert_eq!(e.options, vec![("Depth".to_string(), "3".to_string())]);
        assert_eq!(Entrant::parse("builtin:greedy").unwrap().name, "greedy");
        assert_eq!(
            Entrant::parse("python3 examples/agents/random_agent.py")
                .unwrap()
                .name,
            "random_agent"
        );
        assert!(Entrant::parse("cmd=").is_err());
        let timed = Entrant::parse("cmd=x tc=5+0.1 restart=on-failure").unwrap();
        assert_eq!(
            timed.control().unwrap().map(|c| c.to_string()).as_deref(),
            Some("5+0.1")
        );
        assert_eq!(timed.restart, Some(Restart::OnFailure));
        assert_eq!(
            Entrant::parse("cmd=x st=0.5")
                .unwrap()
                .control()
                .unwrap()
                .map(|c| c.to_string())
                .as_deref(),
            Some("st=0.5")
        );
        for bad in [
            "cmd=x tc=0",
            "cmd=x st=-1",
            "cmd=x tc=1 st=1",
            "cmd=x restart=never",
        ] {
            assert!(Entrant::parse(bad).is_err(), "{bad}");
        }
        assert!(Entrant::parse("cmd=x bogus=1").is_err());
        assert_eq!(
            Entrant::parse("cmd=x restart=always").unwrap().restart,
            Some(Restart::Always)
        );
        assert_eq!(Entrant::parse("cmd=x").unwrap().restart, None);
        assert!(Entrant::parse("cmd=x restart=never")
            .unwrap_err()
            .contains("unknown restart policy `never`"));
        let mut list = vec![
            Entrant::parse("builtin:random").unwrap(),
            Entrant::parse("builtin:random").unwrap(),
        ];
        dedupe_names(&mut list);
        assert_eq!(list[1].name, "random#2");
    }
}
