//! The bubblewrap arguments of one agent's sandbox, and the checks that refuse an
//! agent its sandbox cannot keep apart.
//!
//! Everything is bound at its resolved path (links met on the way are made again
//! as links, so the command's spelling still works), and compared by it; every
//! place the agent can write is a tmpfs of bounded size, everything else is
//! read-only, its root included.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::bubblewrap::Bubblewrap;
use super::hidden::{Hidden, HiddenKind};
use super::identity::{Privilege, NOBODY, SHIM};
use super::paths::{self, Resolved};

/// Bytes of each private tmpfs an agent writes in (`/tmp` and its working
/// directory): enough for any bot's scratch files, small enough that a bot cannot
/// fill the machine's memory.
pub const TMPFS_BYTES: u64 = 256 << 20;

/// Bytes of the agent's `/dev/shm`: POSIX shared memory and semaphores.
pub const SHM_BYTES: u64 = 64 << 20;

/// Where a sandboxed agent starts, unless told to start in a directory of its own.
pub const PRIVATE_CWD: &str = "/agent";

/// Directories every agent sees read-only, when they exist. `/home`, `/root`, `/tmp`,
/// `/run`, `/var`, `/mnt` and `/media` are not among them: that is where users keep
/// their files, and records.
const SYSTEM_DIRS: [&str; 9] = [
    "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt",
];

/// The directories the sandbox makes itself before anything of the user's is bound.
const PRIVATE_DIRS: [&str; 4] = ["/tmp", "/dev", "/proc", PRIVATE_CWD];

/// The kernel's knobs under `/proc` that the fresh `/proc` would otherwise show
/// writable to a uid that owns them.
const PROC_KNOBS: [&str; 5] = [
    "/proc/sys",
    "/proc/sysrq-trigger",
    "/proc/irq",
    "/proc/bus",
    "/proc/fs",
];

/// Why an agent is not started in its sandbox.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    /// The command names something no agent may see.
    #[error("it names {}, which no agent may see (a record, a log directory, a tournament's output, a key, a state file or a --hide path): keep these apart from bots", .0.display())]
    NamesHidden(PathBuf),
    /// The record would be written in the directory the agent starts in.
    #[error("the record {} would be written in the agents' working directory {}: write records elsewhere (--record, --out) or start agents in another directory", record.display(), cwd.display())]
    RecordInCwd {
        /// The record.
        record: PathBuf,
        /// The working directory.
        cwd: PathBuf,
    },
    /// As root, agents run as uid 65534, which cannot read this.
    #[error("{} is not readable by uid {NOBODY}, which agents run as when the referee runs as root: make it readable by others (chmod o+r, and o+rx for a directory)", .0.display())]
    Unreadable(PathBuf),
    /// Another seat's file lies in the directory this agent is shown.
    #[error("{} of another seat lies in {}, which this agent is shown (its dir= or --agent-cwd): give each agent a directory of its own", file.display(), dir.display())]
    SeesOtherSeat {
        /// The other seat's file.
        file: PathBuf,
        /// This agent's directory.
        dir: PathBuf,
    },
}

/// The sandbox of one agent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sandbox {
    bubblewrap: Arc<Bubblewrap>,
    /// What no agent may see.
    hidden: Hidden,
    /// Whether the agent keeps the machine's network.
    network: bool,
    /// The directory the agent starts in, read-only; a private tmpfs when `None`.
    cwd: Option<Resolved>,
}

impl Sandbox {
    /// A sandbox hiding `hidden` (and the secrets under the referee's home), with
    /// or without the network, starting in `cwd` (read-only) or in a private
    /// working directory.
    pub fn new(bubblewrap: Arc<Bubblewrap>, hidden: Hidden, network: bool, cwd: Option<PathBuf>) -> Sandbox {
        Sandbox {
            bubblewrap,
            hidden: hidden.with_home_secrets(),
            network,
            cwd: cwd.map(|c| paths::resolve(&c)),
        }
    }

    /// What the sandbox hides.
    pub fn hidden(&self) -> &Hidden {
        &self.hidden
    }

    /// The `bwrap` executable to run instead of the agent.
    pub fn program(&self) -> &Path {
        &self.bubblewrap.path
    }

    /// A descriptor bubblewrap must inherit (the user namespace of a root referee).
    pub fn inherited_fd(&self) -> Option<i32> {
        match self.bubblewrap.privilege {
            Privilege::Root { userns } => userns,
            Privilege::User => None,
        }
    }

    /// Refuses `command` (the agent's words) when the sandbox cannot run it apart:
    /// it names what no agent may see, the record would be written where it starts,
    /// or (as root) it names what its uid cannot read.
    pub fn check(&self, command: &[String]) -> Result<(), Refusal> {
        let named = named_paths(command);
        if let Some(p) = named.iter().find(|r| self.hidden.hides(&r.path)) {
            return Err(Refusal::NamesHidden(p.path.clone()));
        }
        if let Some(cwd) = &self.cwd {
            if self.hidden.hides(&cwd.path) {
                return Err(Refusal::NamesHidden(cwd.path.clone()));
            }
            let record = self
                .hidden
                .entries()
                .find(|(k, r)| *k == HiddenKind::Record && r.parent() == Some(&cwd.path));
            if let Some((_, record)) = record {
                return Err(Refusal::RecordInCwd {
                    record: record.to_path_buf(),
                    cwd: cwd.path.clone(),
                });
            }
        }
        if matches!(self.bubblewrap.privilege, Privilege::Root { .. }) {
            let own = std::env::current_exe().map(|e| paths::resolve(&e)).ok();
            let all = named.iter().chain(&self.cwd).chain(&own);
            if let Some(p) = all.map(|r| &r.path).find(|p| !readable_by_others(p)) {
                return Err(Refusal::Unreadable(p.clone()));
            }
        }
        Ok(())
    }

    /// Refuses to run beside `other` (another seat's words) when this agent's
    /// directory holds a file `other` names and this command does not.
    pub fn check_apart(&self, command: &[String], other: &[String]) -> Result<(), Refusal> {
        let Some(cwd) = &self.cwd else {
            return Ok(());
        };
        let own: Vec<PathBuf> = named_paths(command).into_iter().map(|r| r.path).collect();
        let exe = std::env::current_exe().map(|e| paths::canonical(&e)).ok();
        let theirs = named_paths(other)
            .into_iter()
            .map(|r| r.path)
            .filter(|p| p.starts_with(&cwd.path) && !own.contains(p) && Some(p) != exe.as_ref());
        match theirs.into_iter().next() {
            Some(file) => Err(Refusal::SeesOtherSeat {
                file,
                dir: cwd.path.clone(),
            }),
            None => Ok(()),
        }
    }

    /// The arguments of `bwrap` that run `command` (the agent's words) in the
    /// sandbox, with `path_env` the agent's `PATH`. The order matters: later mounts
    /// cover earlier ones, so hidden paths are covered after everything that could
    /// show them, and the agent's own files are bound again after that. One
    /// function so that this order reads top to bottom.
    pub fn argv(&self, command: &[String], path_env: &str) -> Vec<OsString> {
        let mut a = Args::default();
        self.namespaces(&mut a);
        let mut view = View::default();
        let mut made: Vec<&Path> = Vec::new();
        for dir in SYSTEM_DIRS.iter().map(Path::new) {
            match std::fs::read_link(dir) {
                Ok(target) => {
                    a.pair("--symlink", &target, dir);
                    made.push(dir);
                }
                Err(_) if dir.is_dir() => view.bind(&mut a, dir),
                Err(_) => {}
            }
        }
        // Before anything of the user's is bound: a bot's directory may lie in /tmp.
        a.flags(&["--proc", "/proc"]);
        for knob in PROC_KNOBS.iter().map(Path::new) {
            a.pair("--ro-bind-try", knob, knob);
        }
        a.flags(&["--dev", "/dev"]);
        a.tmpfs(Path::new("/dev/shm"), SHM_BYTES, "1777");
        a.pair_one("--remount-ro", Path::new("/dev"));
        a.tmpfs(Path::new("/tmp"), TMPFS_BYTES, "1777");
        let mut named = named_paths(command);
        // The referee itself: the shim, and the built-in agents.
        named.extend(std::env::current_exe().ok().map(|e| paths::resolve(&e)));
        let trees: Vec<Resolved> = path_dirs(path_env)
            .into_iter()
            .chain(named.iter().filter(|r| r.path.is_dir()).cloned())
            .chain(self.cwd.clone())
            .collect();
        for tree in &trees {
            if !view.shows(&tree.path) && !self.hidden.hides(&tree.path) {
                view.bind(&mut a, &tree.path);
            }
        }
        self.cover(&mut a, &mut view);
        for file in named.iter().map(|r| &r.path).filter(|p| !p.is_dir()) {
            if !self.hidden.hides(file) && !view.shows(file) {
                view.parents(&mut a, file);
                a.pair("--ro-bind", file, file);
            }
        }
        for (target, at) in named.iter().chain(&trees).flat_map(|r| &r.links) {
            if !view.shows(at) && !made.contains(&at.as_path()) && !self.hidden.hides(at) {
                view.parents(&mut a, at);
                a.pair("--symlink", target, at);
                made.push(at);
            }
        }
        for cover in &view.covers {
            a.pair_one("--remount-ro", cover);
        }
        match &self.cwd {
            Some(dir) => a.pair_one("--chdir", &dir.path),
            None => {
                // The sandbox's root makes it: as root, the agent's uid is not that
                // root, and needs the bits for others.
                let mode = match self.bubblewrap.privilege {
                    Privilege::User => "0700",
                    Privilege::Root { .. } => "1777",
                };
                a.tmpfs(Path::new(PRIVATE_CWD), TMPFS_BYTES, mode);
                a.pair_one("--chdir", Path::new(PRIVATE_CWD));
            }
        }
        a.pair_one("--remount-ro", Path::new("/"));
        a.flags(&["--"]);
        if let Privilege::Root { .. } = self.bubblewrap.privilege {
            let exe = std::env::current_exe()
                .map(|e| paths::canonical(&e))
                .unwrap_or_default();
            a.0.extend([exe.into_os_string(), SHIM.into(), "--".into()]);
        }
        a.0.extend(command.iter().map(OsString::from));
        a.0
    }

    /// The namespaces and the identity: as an ordinary user bubblewrap's user
    /// namespace and uid; as root the referee's user namespace, and only the
    /// capabilities the shim needs to drop to uid 65534.
    fn namespaces(&self, a: &mut Args) {
        a.flags(&["--die-with-parent", "--new-session"]);
        match self.bubblewrap.privilege {
            Privilege::User => {
                let id = NOBODY.to_string();
                a.flags(&["--unshare-all", "--unshare-user", "--uid", &id, "--gid", &id]);
                a.flags(&["--disable-userns", "--cap-drop", "ALL"]);
                if self.network {
                    a.flags(&["--share-net"]);
                }
            }
            Privilege::Root { userns } => {
                if let Some(fd) = userns {
                    a.flags(&["--userns", &fd.to_string()]);
                }
                a.flags(&[
                    "--unshare-pid",
                    "--unshare-ipc",
                    "--unshare-uts",
                    "--unshare-cgroup-try",
                ]);
                if !self.network {
                    a.flags(&["--unshare-net"]);
                }
                a.flags(&["--cap-drop", "ALL"]);
                for cap in ["CAP_SETUID", "CAP_SETGID", "CAP_SETPCAP"] {
                    a.flags(&["--cap-add", cap]);
                }
            }
        }
        a.flags(&["--hostname", "agent"]);
    }

    /// Covers each hidden path that a bound tree shows: a directory (a record's
    /// among them) with an empty tmpfs, a file with `/dev/null`.
    fn cover(&self, a: &mut Args, view: &mut View) {
        let mut places: Vec<(&Path, bool)> = self
            .hidden
            .entries()
            .map(|(kind, path)| match kind {
                HiddenKind::Record => (path.parent().unwrap_or(path), true),
                _ => (path, path.is_dir()),
            })
            .collect();
        // Outer places first: a cover inside one made already is not needed.
        places.sort_by_key(|(at, _)| at.components().count());
        for (at, dir) in places {
            if !view.shows(at) || (dir && !at.is_dir()) || (!dir && !at.exists()) {
                continue;
            }
            if dir {
                a.tmpfs(at, 0, "0755");
                view.covers.push(at.to_path_buf());
            } else {
                a.pair("--ro-bind", Path::new("/dev/null"), at);
            }
        }
    }
}

/// What the sandbox shows so far: the trees bound, the covers over them, and the
/// directories made to hold what is bound where nothing shows a directory.
#[derive(Default)]
struct View {
    trees: Vec<PathBuf>,
    covers: Vec<PathBuf>,
    made: Vec<PathBuf>,
}

impl View {
    fn bind(&mut self, a: &mut Args, dir: &Path) {
        self.parents(a, dir);
        a.pair("--ro-bind", dir, dir);
        self.trees.push(dir.to_path_buf());
    }

    /// Makes the directories above `path` that nothing shows yet, readable by all:
    /// bubblewrap would make them for the sandbox's root alone, where a root
    /// referee's agent (another uid) could not pass.
    fn parents(&mut self, a: &mut Args, path: &Path) {
        let mut above: Vec<&Path> = path
            .ancestors()
            .skip(1)
            .take_while(|p| p.parent().is_some())
            .collect();
        above.reverse();
        for dir in above {
            let known = self.shows(dir)
                || self.made.iter().any(|m| m == dir)
                || PRIVATE_DIRS.contains(&dir.to_str().unwrap_or(""));
            if !known {
                a.flags(&["--perms", "0755"]);
                a.pair_one("--dir", dir);
                self.made.push(dir.to_path_buf());
            }
        }
    }

    /// Whether resolved `path` is already shown: in a bound tree and in no cover.
    fn shows(&self, path: &Path) -> bool {
        self.trees.iter().any(|t| path.starts_with(t)) && !self.covers.iter().any(|c| path.starts_with(c))
    }
}

/// `bwrap` arguments being built.
#[derive(Default)]
struct Args(Vec<OsString>);

impl Args {
    fn flags(&mut self, flags: &[&str]) {
        self.0.extend(flags.iter().map(OsString::from));
    }

    fn pair(&mut self, flag: &str, from: &Path, to: &Path) {
        self.0.extend([flag.into(), from.into(), to.into()]);
    }

    fn pair_one(&mut self, flag: &str, path: &Path) {
        self.0.extend([flag.into(), path.into()]);
    }

    /// A tmpfs at `at` of `bytes` (0: a cover, which is remounted read-only and
    /// holds nothing).
    fn tmpfs(&mut self, at: &Path, bytes: u64, mode: &str) {
        let bytes = if bytes == 0 { 1 << 20 } else { bytes };
        self.flags(&["--size", &bytes.to_string(), "--perms", mode]);
        self.pair_one("--tmpfs", at);
    }
}

/// The paths the agent's command names (the program if it is a path, and every
/// argument naming an existing file or directory), resolved: what the agent needs
/// to see.
fn named_paths(command: &[String]) -> Vec<Resolved> {
    command
        .iter()
        .map(Path::new)
        .filter(|p| p.is_absolute() && p.exists())
        .map(paths::resolve)
        .collect()
}

/// Whether the uid agents run as as root can read resolved `path` (and list it, for
/// a directory): by the bits for others, or as its owner.
fn readable_by_others(path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    let Ok(meta) = std::fs::metadata(path) else {
        return true;
    };
    let need = if meta.is_dir() { 0o005 } else { 0o004 };
    meta.uid() == NOBODY || meta.mode() & need == need
}

/// The directories of the agent's `PATH`, resolved, each widened to the tool
/// directory it belongs to when it is a `bin`, `sbin` or `shims` directory (an
/// interpreter found there needs its libraries beside it: `/opt/py/bin` needs
/// `/opt/py/lib`), but never to `/` or to the referee's home directory.
fn path_dirs(path_env: &str) -> Vec<Resolved> {
    let home = std::env::var_os("HOME").map(|h| paths::canonical(Path::new(&h)));
    std::env::split_paths(path_env)
        .filter(|d| d.is_absolute() && d.is_dir())
        .map(|d| {
            let mut r = paths::resolve(&d);
            let tool = match r.path.file_name().and_then(|n| n.to_str()) {
                Some("bin" | "sbin" | "shims") => r.path.parent().map(Path::to_path_buf),
                _ => None,
            };
            if let Some(tool) = tool.filter(|t| t != Path::new("/") && Some(t) != home.as_ref()) {
                r.path = tool;
            }
            r
        })
        .collect()
}

#[cfg(test)]
#[path = "argv_tests.rs"]
mod tests;
