//! What a match is given: its configuration ([`MatchConfig`], one [`SeatAgent`] per
//! seat, where agents start), and the preparation of each agent's place from it, its
//! sandbox or working directory and what it must not see, and the default record
//! path. Its own room because it is everything decided before the first agent
//! starts; the match loop beside it only reads it.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::agent::{AgentError, AgentSpec, Hidden, HiddenKind, HiddenPath, Isolation, Sandbox};
use crate::clock::TimeControl;
use crate::game::{GameId, Options, Seat};
use crate::record::{Durability, SecretKey};

/// One seat's agent and the options it is given with `setoption`.
#[derive(Clone, Debug)]
pub struct SeatAgent {
    /// How to start it.
    pub spec: AgentSpec,
    /// `setoption` pairs sent after the handshake.
    pub options: Vec<(String, String)>,
    /// The tournament entrant it is, recorded in the header's seat entry.
    pub entrant: Option<String>,
    /// Its own time control instead of the match's (a tournament entrant's `tc=`).
    pub control: Option<TimeControl>,
    /// For a built-in agent, the seed its command ends with: a kept built-in agent
    /// started with another seed is told this one (`setoption name Seed`) instead
    /// of being started again, and plays the game as its command would.
    pub builtin_seed: Option<u64>,
}

/// Everything one match needs.
#[derive(Clone, Debug)]
pub struct MatchConfig {
    /// The game.
    pub game: GameId,
    /// Its options.
    pub options: Options,
    /// A state to start from instead of the start position.
    pub state: Option<String>,
    /// One agent per seat, in seat order.
    pub agents: Vec<SeatAgent>,
    /// The time control.
    pub control: TimeControl,
    /// Extra time granted past the clock before the flag falls.
    pub margin: Duration,
    /// Time for the handshake and for `readyok` after `newgame`.
    pub startup: Duration,
    /// Time an agent has to exit after `quit`.
    pub quit_grace: Duration,
    /// The seed recorded in the header.
    pub seed: u64,
    /// Where the record goes (a new file).
    pub record: PathBuf,
    /// A directory for per-seat transcripts and stderr logs.
    pub log_dir: Option<PathBuf>,
    /// Continue the unfinished game in `record` instead of starting one.
    pub resume: bool,
    /// When record lines are forced to disk.
    pub durability: Durability,
    /// Where agents start.
    pub agent_cwd: AgentCwd,
    /// Actions the referee plays before the agents take over (a random opening).
    pub opening: Vec<String>,
    /// How agents are isolated.
    pub isolation: Isolation,
    /// Whether sandboxed agents keep the network.
    pub network: bool,
    /// The judge's key: the record is signed after its header and after its result.
    pub sign: Option<SecretKey>,
    /// What agents must not see besides the record and the log directory: every
    /// other path the referee reads or writes for this match (keys, state files, a
    /// tournament's output and its other files, `--hide`), filled where the path is
    /// learnt.
    pub hidden: Vec<HiddenPath>,
}

impl MatchConfig {
    /// The time control seat index `i`'s clock runs under: its agent's own, or the
    /// match's.
    pub fn seat_control(&self, i: usize) -> TimeControl {
        self.agents.get(i).and_then(|a| a.control).unwrap_or(self.control)
    }

    /// What no agent of this match may see: the record (with the files beside it
    /// that belong to it), the log directory, and the configuration's others,
    /// resolved. Directories are made now if missing, so that the sandbox can cover
    /// them before anything is written there.
    pub(crate) fn prepare_hidden(&self) -> std::io::Result<Hidden> {
        let mut list: Vec<HiddenPath> = self.log_dir.iter().map(HiddenPath::dir).collect();
        list.extend(self.hidden.iter().cloned());
        let record_dir = self.record.parent().filter(|d| !d.as_os_str().is_empty());
        let dirs = list
            .iter()
            .filter(|h| h.kind == HiddenKind::Dir)
            .map(|h| h.path.as_path());
        for dir in dirs.chain(record_dir) {
            std::fs::create_dir_all(dir)?;
        }
        list.push(HiddenPath::record(&self.record));
        Ok(Hidden::resolve(&list))
    }
}

/// The working directory agents start in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AgentCwd {
    /// A fresh directory per agent (in a sandbox a private tmpfs, otherwise a
    /// temporary directory removed afterwards); arguments naming existing relative
    /// paths are made absolute first, so `python3 bot.py` still finds `bot.py`.
    Private,
    /// The referee's own working directory.
    Inherit,
    /// This directory, for every agent.
    Dir(PathBuf),
}

/// Makes every argument of `command` that names an existing path relative to the
/// referee's working directory absolute (the program itself only if it contains a
/// `/`, so that `python3` is still looked up in `PATH`).
///
/// Of a command of the referee's own executable (a built-in agent's, or a bench's
/// replay agent) only the program is: its words are subcommands and options, and a file of the
/// same name in the working directory (a bot author's `agent/` folder) must not turn
/// `referee agent random` into a path.
fn absolutize(command: &str) -> String {
    let (Ok(words), Ok(here)) = (shell_words::split(command), std::env::current_dir()) else {
        return command.to_string();
    };
    if let Some((program, rest)) = words.split_first() {
        if is_own_executable(Path::new(program)) {
            let program = here.join(program).to_string_lossy().into_owned();
            return shell_words::join(std::iter::once(&program).chain(rest));
        }
    }
    let words: Vec<String> = words
        .into_iter()
        .enumerate()
        .map(|(i, w)| {
            let p = Path::new(&w);
            let candidate = !p.is_absolute() && (i > 0 || w.contains('/')) && p.exists();
            if candidate {
                here.join(p).to_string_lossy().into_owned()
            } else {
                w
            }
        })
        .collect();
    shell_words::join(words)
}

/// Whether `program` is the referee's own executable: the same path, or the same
/// file by another path (`./referee`, a link).
///
/// The same file is the same device and inode: one `stat` per agent start, where
/// resolving both paths read a link per directory of each, at every start.
fn is_own_executable(program: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    static OWN: std::sync::OnceLock<Option<(PathBuf, u64, u64)>> = std::sync::OnceLock::new();
    let own = OWN.get_or_init(|| {
        let path = std::env::current_exe().ok()?;
        let meta = std::fs::metadata(&path).ok()?;
        Some((path, meta.dev(), meta.ino()))
    });
    let Some((own, dev, ino)) = own else {
        return false;
    };
    program == own || std::fs::metadata(program).is_ok_and(|m| (m.dev(), m.ino()) == (*dev, *ino))
}

/// Prepares where seat `seat`'s agent runs: its sandbox, if agents are isolated, and
/// its working directory. Returns its private directory, to give back after the
/// match, if it has one. A sandbox that cannot keep the agent apart (from what no
/// agent may see, or from another seat's files) refuses it.
pub(super) fn place_agent(
    spec: &mut AgentSpec,
    config: &MatchConfig,
    seat: Seat,
) -> Result<Option<super::scratch::PrivateDir>, AgentError> {
    let io_err = |source| AgentError::WorkingDir {
        path: std::env::temp_dir(),
        source,
    };
    // An agent that names its own directory (a tournament entrant's `dir=`) keeps it.
    let agent_cwd = match spec.working_dir.take() {
        Some(dir) => AgentCwd::Dir(dir),
        None => config.agent_cwd.clone(),
    };
    if let Isolation::Sandboxed(bubblewrap) = &config.isolation {
        // Relative paths are made absolute so that the sandbox can show them.
        spec.command = absolutize(&spec.command);
        let cwd = match &agent_cwd {
            AgentCwd::Private => None,
            AgentCwd::Inherit => Some(std::env::current_dir().map_err(io_err)?),
            AgentCwd::Dir(dir) => Some(dir.clone()),
        };
        let sandbox = Sandbox::new(
            bubblewrap.clone(),
            config.prepare_hidden().map_err(io_err)?,
            config.network,
            cwd,
        );
        check_apart(&sandbox, spec, config, seat)?;
        spec.sandbox = Some(sandbox);
        return Ok(None);
    }
    match &agent_cwd {
        AgentCwd::Inherit => Ok(None),
        AgentCwd::Dir(dir) => {
            spec.working_dir = Some(dir.clone());
            Ok(None)
        }
        AgentCwd::Private => {
            let dir = super::scratch::take(seat).map_err(io_err)?;
            spec.command = absolutize(&spec.command);
            spec.working_dir = Some(dir.path().to_path_buf());
            Ok(Some(dir))
        }
    }
}

/// Refuses seat `seat`'s sandbox when its directory shows a file that another
/// seat's command names (two entrants in one folder).
fn check_apart(
    sandbox: &Sandbox,
    spec: &AgentSpec,
    config: &MatchConfig,
    seat: Seat,
) -> Result<(), AgentError> {
    let words = |command: &str| shell_words::split(&absolutize(command)).unwrap_or_default();
    let own = words(&spec.command);
    // A built-in agent is the referee's own code: it looks at nothing but its game.
    if own
        .first()
        .is_some_and(|program| is_own_executable(Path::new(program)))
    {
        return Ok(());
    }
    for (i, other) in config.agents.iter().enumerate() {
        if i != seat.index() {
            sandbox
                .check_apart(&own, &words(&other.spec.command))
                .map_err(|reason| AgentError::Refused {
                    command: spec.command.clone(),
                    reason,
                })?;
        }
    }
    Ok(())
}

/// The default record path: `records/<game>-<unix seconds>-<seed>.jsonl`.
pub fn default_record_path(game: GameId, seed: u64) -> PathBuf {
    let secs = crate::wall_clock::unix_seconds(crate::wall_clock::now());
    Path::new("records").join(format!("{game}-{secs}-{seed}.jsonl"))
}
