//! Isolation of agents from the referee, from its files and from each other, with
//! bubblewrap (`bwrap`, the sandbox Flatpak uses) rather than a hand-made imitation.
//!
//! What each layer stops (README §Security has the whole threat model):
//! * a new **user namespace**, a non-root uid, every capability dropped and no nested
//!   user namespaces: nothing the agent runs can mount, trace or gain privileges;
//! * a new **PID namespace** with a fresh `/proc`: the agent sees only its own
//!   processes, so it cannot read the referee's open files (`/proc/<pid>/fd`) or
//!   command line, write into another agent's pipes, or signal anyone outside; when
//!   the sandbox's first process dies (`--die-with-parent`: with the referee too), the
//!   kernel kills everything left in the namespace, whatever process group, session
//!   or signal disposition it chose;
//! * a new **mount namespace**: the system directories, the agent's `PATH` and the
//!   files its command names, read-only; a private `/tmp` and working directory
//!   (size-limited tmpfs); never the records, logs or tournament output (they are
//!   covered by an empty tmpfs wherever a bound directory would show them);
//! * new **network, IPC and UTS** namespaces: no network (only its own loopback,
//!   unless `--allow-network`), no shared memory or message queues with other agents;
//! * a **new session**: no controlling terminal to inject keystrokes into.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, OnceLock};

/// Whether agents run sandboxed (`--sandbox`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum SandboxMode {
    /// The sandbox when this machine supports it; otherwise say so and run without.
    #[default]
    Auto,
    /// The sandbox, or refuse to start.
    Require,
    /// No sandbox: agents are plain processes of the referee's user.
    None,
}

/// Bytes of each private tmpfs (`/tmp` and the working directory): enough for any
/// bot's scratch files, small enough that a bot cannot fill the machine's memory.
const TMPFS_BYTES: u64 = 256 << 20;

/// Where a sandboxed agent starts, unless told to start in a directory of its own.
pub const PRIVATE_CWD: &str = "/agent";

/// The uid and gid an agent runs as inside its sandbox (`nobody`).
const SANDBOX_ID: &str = "65534";

/// Directories every agent sees read-only, when they exist. `/home`, `/root`, `/tmp`,
/// `/run`, `/var`, `/mnt` and `/media` are not among them: that is where users keep
/// their files, and records.
const SYSTEM_DIRS: [&str; 9] = [
    "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt",
];

/// A working bubblewrap on this machine.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Bubblewrap {
    /// The `bwrap` executable.
    path: PathBuf,
    /// What `bwrap --version` said, for the record header.
    version: String,
    /// Whether it can make user namespaces here (if not, it runs privileged with
    /// every capability dropped; see [`detect`]).
    user_namespace: bool,
}

impl Bubblewrap {
    /// `bubblewrap 0.8.0`, as the record header names it.
    pub fn version(&self) -> &str {
        &self.version
    }
}

/// How the agents of this referee are isolated.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Isolation {
    /// Each agent in a sandbox of its own.
    Sandboxed(Arc<Bubblewrap>),
    /// Plain processes; the text says why (`--sandbox none`, or what is missing).
    NotIsolated(String),
}

impl Isolation {
    /// The header's `sandbox` member: `bubblewrap 0.8.0`, or `none (<why>)`.
    pub fn describe(&self) -> String {
        match self {
            Isolation::Sandboxed(b) => b.version.clone(),
            Isolation::NotIsolated(why) => format!("none ({why})"),
        }
    }
}

/// Why `--sandbox require` cannot be met.
#[derive(Debug, thiserror::Error)]
#[error("--sandbox require: {0}")]
pub struct SandboxUnavailable(String);

/// Decides how agents are isolated under `mode`. The machine is probed once per
/// process (a sandbox that runs `true`), so a tournament pays for it once.
pub fn detect(mode: SandboxMode) -> Result<Isolation, SandboxUnavailable> {
    static PROBED: OnceLock<Result<Arc<Bubblewrap>, String>> = OnceLock::new();
    if mode == SandboxMode::None {
        return Ok(Isolation::NotIsolated("--sandbox none".into()));
    }
    match (PROBED.get_or_init(probe), mode) {
        (Ok(b), _) => Ok(Isolation::Sandboxed(b.clone())),
        (Err(why), SandboxMode::Require) => Err(SandboxUnavailable(why.clone())),
        (Err(why), _) => Ok(Isolation::NotIsolated(why.clone())),
    }
}

/// Finds `bwrap` and checks that it can build the sandbox agents get, first with a
/// user namespace, then (where the kernel forbids those, and the referee runs as
/// root) without one.
fn probe() -> Result<Arc<Bubblewrap>, String> {
    let path = find_program("bwrap").ok_or("bubblewrap (bwrap) is not installed")?;
    let version = Command::new(&path)
        .arg("--version")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map(|v| v.trim().to_string())
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| "bubblewrap".into());
    let mut last = String::new();
    for user_namespace in [true, false] {
        let bwrap = Bubblewrap {
            path: path.clone(),
            version: version.clone(),
            user_namespace,
        };
        let sandbox = Sandbox::new(Arc::new(bwrap.clone()), Hidden::default(), false, None);
        let path_env = std::env::var("PATH").unwrap_or_default();
        let argv = sandbox.argv(&["true".to_string()], &path_env);
        let out = run_probe(&path, &argv, &path_env);
        match out {
            Ok(o) if o.status.success() => return Ok(Arc::new(bwrap)),
            Ok(o) => {
                last = String::from_utf8_lossy(&o.stderr)
                    .lines()
                    .next()
                    .unwrap_or("")
                    .to_string();
            }
            Err(e) => last = e.to_string(),
        }
    }
    Err(format!("bubblewrap cannot create a sandbox here: {last}"))
}

/// Runs bubblewrap with `argv` to completion, as an agent's sandbox would start.
///
/// bubblewrap may exit before the sandbox's first process, which is then orphaned:
/// to this process, made a subreaper first, because an init that does not reap (as
/// in some containers) would keep it a zombie for ever. Its pid, from `--info-fd`,
/// is reaped here, as an agent's is at its shutdown.
fn run_probe(path: &Path, argv: &[OsString], path_env: &str) -> std::io::Result<std::process::Output> {
    use std::os::fd::AsRawFd;
    use std::os::unix::process::CommandExt;
    super::spawn::become_subreaper();
    let (read, write) = super::spawn::info_pipe()?;
    let fd = write.as_raw_fd();
    let mut command = Command::new(path);
    command
        .arg("--info-fd")
        .arg(fd.to_string())
        .args(argv)
        .env_clear()
        .env("PATH", path_env)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    // SAFETY: the closure only makes one `fcntl` call, async-signal-safe, and
    // allocates nothing.
    unsafe {
        command.pre_exec(move || super::spawn::inherit_fd(fd));
    }
    let out = command.output();
    drop(write);
    let until = std::time::Instant::now() + std::time::Duration::from_secs(2);
    super::stop::reap_sandbox_init(&mut std::fs::File::from(read), until);
    out
}

/// The first executable `name` on the referee's `PATH`.
fn find_program(name: &str) -> Option<PathBuf> {
    find_in(name, &std::env::var_os("PATH")?)
}

/// The first executable `name` on `path` (a `PATH` value).
pub(super) fn find_in(name: &str, path: &std::ffi::OsStr) -> Option<PathBuf> {
    std::env::split_paths(path)
        .map(|dir| dir.join(name))
        .find(|p| executable(p))
}

/// Whether `path` is an executable file.
fn executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// Checks, before a sandbox is built around it, that `program` can be run: inside,
/// a missing program would look like an agent that crashed at once, not like the
/// bad command line it is.
pub fn check_program(program: &str, path_env: &str) -> std::io::Result<()> {
    let found = if program.contains('/') {
        executable(Path::new(program))
    } else {
        find_in(program, std::ffi::OsStr::new(path_env)).is_some()
    };
    if found {
        Ok(())
    } else {
        Err(std::io::Error::from(nix::errno::Errno::ENOENT))
    }
}

/// What no agent may see.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Hidden {
    /// Directories no agent sees anything of: the logs, a tournament's output.
    pub dirs: Vec<PathBuf>,
    /// Records: each is hidden with every file beside it whose name begins with the
    /// record's (its lock, its salt, its temporary files; a leading `.` allowed);
    /// of the rest of its directory an agent sees only the files its command names.
    pub records: Vec<PathBuf>,
}

impl Hidden {
    /// Whether `path` is, or lies in, something no agent may see.
    fn hides(&self, path: &Path) -> bool {
        self.dirs.iter().any(|d| path.starts_with(d))
            || self.records.iter().any(|r| {
                let name = |p: &Path| p.file_name().map(|n| n.to_string_lossy().into_owned());
                let (Some(record), Some(file)) = (name(r), name(path)) else {
                    return false;
                };
                path.parent() == r.parent()
                    && (file.starts_with(&record)
                        || file.strip_prefix('.').is_some_and(|f| f.starts_with(&record)))
            })
    }

    /// The directories to cover with an empty tmpfs wherever they would be shown.
    fn covered(&self) -> impl Iterator<Item = PathBuf> + '_ {
        self.dirs
            .iter()
            .cloned()
            .chain(self.records.iter().map(|r| parent(r)))
    }
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
    cwd: Option<PathBuf>,
}

impl Sandbox {
    /// A sandbox hiding `hidden`, with or without the network, starting in `cwd`
    /// (read-only) or in a private working directory.
    pub fn new(bubblewrap: Arc<Bubblewrap>, hidden: Hidden, network: bool, cwd: Option<PathBuf>) -> Sandbox {
        let absolute_all = |v: Vec<PathBuf>| v.iter().map(|p| absolute(p)).collect();
        Sandbox {
            bubblewrap,
            hidden: Hidden {
                dirs: absolute_all(hidden.dirs),
                records: absolute_all(hidden.records),
            },
            network,
            cwd: cwd.map(|c| absolute(&c)),
        }
    }

    /// A path the agent's `command` names that no agent may see (a record, the
    /// logs, a tournament's output), if any: such an agent cannot be started.
    pub fn hidden_path(&self, command: &[String]) -> Option<PathBuf> {
        command_paths(command).into_iter().find(|p| self.hidden.hides(p))
    }

    /// The `bwrap` executable to run instead of the agent.
    pub fn program(&self) -> &Path {
        &self.bubblewrap.path
    }

    /// The arguments of `bwrap` that run `command` (the agent's words) in the
    /// sandbox, with `path_env` the agent's `PATH`. The order matters: later mounts
    /// cover earlier ones, so hidden directories are covered after everything that
    /// could show them, and the agent's own files are bound again after that. One
    /// function so that this order reads top to bottom.
    pub fn argv(&self, command: &[String], path_env: &str) -> Vec<OsString> {
        let mut a = Args::default();
        a.flags(&[
            "--unshare-all",
            "--die-with-parent",
            "--new-session",
            "--cap-drop",
            "ALL",
        ]);
        if self.bubblewrap.user_namespace {
            a.flags(&[
                "--unshare-user",
                "--uid",
                SANDBOX_ID,
                "--gid",
                SANDBOX_ID,
                "--disable-userns",
            ]);
        }
        if self.network {
            a.flags(&["--share-net"]);
        }
        a.flags(&["--hostname", "agent"]);
        let mut shown: Vec<PathBuf> = Vec::new();
        for dir in SYSTEM_DIRS.iter().map(Path::new) {
            match std::fs::read_link(dir) {
                Ok(target) => a.pair("--symlink", &target, dir),
                Err(_) if dir.is_dir() => {
                    a.pair("--ro-bind", dir, dir);
                    shown.push(dir.to_path_buf());
                }
                Err(_) => {}
            }
        }
        // Before anything of the user's is bound: a bot's directory may lie in /tmp.
        a.flags(&["--proc", "/proc", "--dev", "/dev"]);
        a.tmpfs(Path::new("/tmp"), "1777");
        let mut files = command_paths(command);
        // The referee itself, so that an agent can run the built-in agents.
        files.extend(std::env::current_exe().ok().filter(|exe| !files.contains(exe)));
        let dirs = path_dirs(path_env)
            .into_iter()
            .chain(
                command_paths(command)
                    .into_iter()
                    .map(|f| if f.is_dir() { f } else { parent(&f) }),
            )
            .chain(self.cwd.clone());
        for dir in dirs {
            if !shown.iter().any(|s| dir.starts_with(s)) {
                a.pair("--ro-bind", &dir, &dir);
                shown.push(dir);
            }
        }
        let covered: Vec<PathBuf> = self
            .hidden
            .covered()
            .filter(|c| c.is_dir() && shown.iter().any(|s| c.starts_with(s)))
            .collect();
        for dir in &covered {
            a.tmpfs(dir, "0755");
        }
        // The files the command names are shown again on their own in a covered
        // directory (a bot beside its record), as is the referee's executable when
        // nothing shows it yet. `hidden_path` has refused what may not be shown.
        for file in &files {
            let under_cover = covered.iter().any(|c| file.starts_with(c));
            if !self.hidden.hides(file) && (under_cover || !shown.iter().any(|s| file.starts_with(s))) {
                a.pair("--ro-bind", file, file);
            }
        }
        match &self.cwd {
            Some(dir) => a.pair_one("--chdir", dir),
            None => {
                a.tmpfs(Path::new(PRIVATE_CWD), "0700");
                a.pair_one("--chdir", Path::new(PRIVATE_CWD));
            }
        }
        a.flags(&["--"]);
        a.0.extend(command.iter().map(OsString::from));
        a.0
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

    fn tmpfs(&mut self, at: &Path, mode: &str) {
        self.flags(&["--size", &TMPFS_BYTES.to_string(), "--perms", mode]);
        self.pair_one("--tmpfs", at);
    }
}

/// The absolute paths the agent's command names (the program if it is a path, and
/// every argument naming an existing file or directory): what the agent needs to see.
fn command_paths(command: &[String]) -> Vec<PathBuf> {
    command
        .iter()
        .map(Path::new)
        .filter(|p| p.is_absolute() && p.exists())
        .map(Path::to_path_buf)
        .collect()
}

/// The directories of the agent's `PATH`, each widened to the tool directory it
/// belongs to when it is a `bin`, `sbin` or `shims` directory (an interpreter found
/// there needs its libraries beside it: `/opt/py/bin` needs `/opt/py/lib`).
fn path_dirs(path_env: &str) -> Vec<PathBuf> {
    std::env::split_paths(path_env)
        .filter(|d| d.is_absolute() && d.is_dir())
        .map(|d| match d.file_name().and_then(|n| n.to_str()) {
            Some("bin" | "sbin" | "shims") if d.parent().is_some_and(|p| p != Path::new("/")) => parent(&d),
            _ => d,
        })
        .collect()
}

/// `path`'s directory (itself for `/`).
fn parent(path: &Path) -> PathBuf {
    path.parent()
        .map_or_else(|| path.to_path_buf(), Path::to_path_buf)
}

/// `path` made absolute against the referee's working directory.
fn absolute(path: &Path) -> PathBuf {
    if path.is_absolute() {
        return path.to_path_buf();
    }
    std::env::current_dir().map_or_else(|_| path.to_path_buf(), |here| here.join(path))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sandbox(dirs: &[&str], cwd: Option<&str>) -> Sandbox {
        let bwrap = Arc::new(Bubblewrap {
            path: PathBuf::from("/usr/bin/bwrap"),
            version: "bubblewrap 0".into(),
            user_namespace: true,
        });
        Sandbox::new(
            bwrap,
            Hidden {
                dirs: dirs.iter().map(PathBuf::from).collect(),
                records: Vec::new(),
            },
            false,
            cwd.map(PathBuf::from),
        )
    }

    fn words(argv: &[OsString]) -> Vec<String> {
        argv.iter().map(|a| a.to_string_lossy().into_owned()).collect()
    }

    #[test]
    fn tool_directories_widen_to_their_root() {
        let dir = tempfile::tempdir().unwrap();
        let bin = dir.path().join("py/bin");
        std::fs::create_dir_all(&bin).unwrap();
        let path = std::env::join_paths([&bin, Path::new("/usr/bin")]).unwrap();
        let dirs = path_dirs(path.to_str().unwrap());
        assert_eq!(dirs, [dir.path().join("py"), PathBuf::from("/usr")]);
    }

    #[test]
    fn the_command_comes_last_and_nothing_is_shared() {
        let argv = words(&sandbox(&[], None).argv(&["true".into(), "x y".into()], ""));
        let at = argv.iter().position(|a| a == "--").unwrap();
        assert_eq!(&argv[at + 1..], ["true", "x y"]);
        for flag in [
            "--unshare-all",
            "--die-with-parent",
            "--new-session",
            "--disable-userns",
        ] {
            assert!(argv[..at].contains(&flag.to_string()), "{flag}");
        }
        assert!(!argv.contains(&"--share-net".to_string()));
        assert!(argv.windows(2).any(|w| w == ["--chdir", PRIVATE_CWD]));
    }

    #[test]
    fn hidden_directories_are_covered_and_never_shown_again() {
        let dir = tempfile::tempdir().unwrap();
        let records = dir.path().join("records");
        std::fs::create_dir(&records).unwrap();
        let bot = dir.path().join("bot.py");
        std::fs::write(&bot, "").unwrap();
        let s = sandbox(&[records.to_str().unwrap()], None);
        let argv = words(&s.argv(&["python3".into(), bot.to_string_lossy().into_owned()], ""));
        let d = dir.path().to_string_lossy().into_owned();
        let r = records.to_string_lossy().into_owned();
        let bound = argv
            .windows(3)
            .position(|w| w[0] == "--ro-bind" && w[1] == d)
            .expect("the bot's directory");
        let covered = argv
            .windows(2)
            .position(|w| w == ["--tmpfs", r.as_str()])
            .expect("covered");
        assert!(bound < covered, "{argv:?}");
        let shown_again = argv[covered..]
            .windows(2)
            .any(|w| w[0] == "--ro-bind" && w[1].starts_with(&r));
        assert!(!shown_again, "{argv:?}");
        // A command naming anything inside a hidden directory is refused.
        let record = records.join("r.jsonl");
        std::fs::write(&record, "").unwrap();
        let inside = ["cat".to_string(), record.to_string_lossy().into_owned()];
        assert_eq!(s.hidden_path(&inside), Some(record));
        assert_eq!(s.hidden_path(&["python3".into(), b_of(&bot)]), None);
    }

    #[test]
    fn a_record_beside_the_bot_is_hidden_and_the_bot_shown() {
        let dir = tempfile::tempdir().unwrap();
        let bot = dir.path().join("bot.py");
        let other = dir.path().join("old.jsonl");
        std::fs::write(&bot, "").unwrap();
        std::fs::write(&other, "").unwrap();
        let record = dir.path().join("r.jsonl");
        let bwrap = Arc::new(Bubblewrap {
            path: PathBuf::from("/usr/bin/bwrap"),
            version: "bubblewrap 0".into(),
            user_namespace: true,
        });
        let hidden = Hidden {
            dirs: Vec::new(),
            records: vec![record.clone()],
        };
        let s = Sandbox::new(bwrap, hidden, false, None);
        let argv = words(&s.argv(&["python3".into(), b_of(&bot), b_of(&other)], ""));
        let d = b_of(dir.path());
        let covered = argv
            .windows(2)
            .position(|w| w == ["--tmpfs", d.as_str()])
            .expect("covered");
        for file in [&bot, &other] {
            let again = argv[covered..]
                .windows(3)
                .any(|w| w[0] == "--ro-bind" && w[1] == b_of(file));
            assert!(again, "{} shown again: {argv:?}", file.display());
        }
        // The record and its side files are never shown, and naming one is refused.
        for name in [
            "r.jsonl",
            "r.jsonl.lock",
            "r.jsonl.salt",
            ".r.jsonl.new12",
            "r.jsonl.tmp9",
        ] {
            let path = dir.path().join(name);
            std::fs::write(&path, "").unwrap();
            assert_eq!(s.hidden_path(&["cat".into(), b_of(&path)]), Some(path));
        }
        assert_eq!(s.hidden_path(&["python3".into(), b_of(&bot), b_of(&other)]), None);
    }

    fn b_of(p: &Path) -> String {
        p.to_string_lossy().into_owned()
    }
}
