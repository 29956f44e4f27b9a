//! Starting an agent's process the way `posix_spawn` does, but with the two things
//! the agent needs done in it before its `exec`: the signal that kills it with the
//! referee, and its resource limits.
//!
//! The standard library runs such a hook between a `fork` and the `exec`, and a
//! `fork` copies the referee's page tables and then makes every page of it copy on
//! write. A referee playing 64 games at once has some 200 threads on both CPUs, so
//! each start then cost it milliseconds of page faults and of interrupts telling
//! the other CPU to forget its mappings (about a fifth of its whole CPU per action
//! in a 64-game tournament, in `perf record`). Here the child shares the referee's
//! memory instead (`CLONE_VM`), the referee's thread waits until the child has
//! called `exec` or died (`CLONE_VFORK`), and the child makes only plain system
//! calls: nothing of the referee is copied, and nothing of it is touched.

use std::ffi::{c_int, c_void, CString, OsStr, OsString};
use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{ChildStderr, ChildStdin, ChildStdout, ExitStatus};
use std::sync::atomic::{AtomicI32, Ordering};

use nix::fcntl::OFlag;

use super::Limits;

/// The child's own stack while it sets itself up: it calls a few system calls and
/// nothing else, so this is plenty.
const CHILD_STACK: usize = 64 * 1024;

/// What to start: a program, its arguments, its whole environment, its directory,
/// its limits, and whether it dies with the referee.
#[derive(Debug)]
pub(crate) struct Command {
    program: OsString,
    args: Vec<OsString>,
    env: Vec<(String, String)>,
    cwd: Option<PathBuf>,
    limits: Limits,
    die_with: Option<i32>,
    discard_stderr: bool,
    inherit: Option<c_int>,
}

impl Command {
    /// `program` with no arguments, an empty environment, the referee's directory,
    /// no limits, and a life of its own.
    pub(crate) fn new(program: impl Into<OsString>) -> Command {
        Command {
            program: program.into(),
            args: Vec::new(),
            env: Vec::new(),
            cwd: None,
            limits: Limits::default(),
            die_with: None,
            discard_stderr: false,
            inherit: None,
        }
    }

    /// Appends arguments.
    pub(crate) fn args<S: Into<OsString>>(&mut self, args: impl IntoIterator<Item = S>) -> &mut Command {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }

    /// The child's entire environment (nothing of the referee's is passed on).
    pub(crate) fn env(&mut self, env: &[(String, String)]) -> &mut Command {
        self.env = env.to_vec();
        self
    }

    /// The directory the child starts in.
    pub(crate) fn current_dir(&mut self, dir: impl Into<PathBuf>) -> &mut Command {
        self.cwd = Some(dir.into());
        self
    }

    /// Resource limits, set in the child before its `exec`.
    pub(crate) fn limits(&mut self, limits: Limits) -> &mut Command {
        self.limits = limits;
        self
    }

    /// Kills the child with SIGKILL when the thread that starts it ends, and refuses
    /// to start it if process `referee` is no longer its parent by then.
    pub(crate) fn die_with(&mut self, referee: i32) -> &mut Command {
        self.die_with = Some(referee);
        self
    }

    /// Leaves descriptor `fd` open in the child (every other one above stderr is
    /// closed by its `exec`).
    pub(crate) fn inherit(&mut self, fd: c_int) -> &mut Command {
        self.inherit = Some(fd);
        self
    }

    /// Sends the child's stderr to `/dev/null` instead of a pipe, when nobody reads
    /// it: a pipe would need a thread draining it for the child's whole life.
    pub(crate) fn discard_stderr(&mut self) -> &mut Command {
        self.discard_stderr = true;
        self
    }

    /// Starts the child in a process group of its own, its three standard streams
    /// piped to the returned [`Child`] (stderr to `/dev/null` instead, if so told and
    /// it can be opened; then [`Child::stderr`] is `None`). Fails as an `exec` would
    /// when the program cannot be found or run.
    pub(crate) fn spawn(&self) -> io::Result<Child> {
        let candidates = self.candidates()?;
        let argv = cstrings(
            std::iter::once(&self.program)
                .chain(&self.args)
                .map(OsString::as_os_str),
        )?;
        let env: Vec<OsString> = self.env.iter().map(|(k, v)| format!("{k}={v}").into()).collect();
        let envp = cstrings(env.iter().map(OsString::as_os_str))?;
        let cwd = self
            .cwd
            .as_ref()
            .map(|dir| cstring(dir.as_os_str()))
            .transpose()?;
        let (stdin_r, stdin_w) = nix::unistd::pipe2(OFlag::O_CLOEXEC)?;
        let (stdout_r, stdout_w) = nix::unistd::pipe2(OFlag::O_CLOEXEC)?;
        let (stderr_r, stderr_w) = match dev_null().filter(|_| self.discard_stderr) {
            Some(null) => (None, Stderr::Null(null)),
            None => {
                let (r, w) = nix::unistd::pipe2(OFlag::O_CLOEXEC)?;
                (Some(r), Stderr::Pipe(w))
            }
        };
        let argv_ptrs = pointers(&argv);
        let envp_ptrs = pointers(&envp);
        let candidate_ptrs = pointers(&candidates);
        // For a file without a `#!` line, which `exec` refuses: `sh` runs it, as
        // `execvp` (and so the standard library) does. The program's slot is
        // filled in by the child with the candidate that was refused.
        let mut shell_argv: Vec<*const libc::c_char> = vec![c"sh".as_ptr(), std::ptr::null()];
        shell_argv.extend(argv_ptrs.iter().skip(1));
        let plan = Plan {
            candidates: candidate_ptrs.as_ptr(),
            shell_argv: shell_argv.as_mut_ptr(),
            argv: argv_ptrs.as_ptr(),
            envp: envp_ptrs.as_ptr(),
            cwd: cwd.as_ref().map_or(std::ptr::null(), |c| c.as_ptr()),
            stdio: [stdin_r.as_raw_fd(), stdout_w.as_raw_fd(), stderr_w.raw()],
            limits: self.limits,
            die_with: self.die_with,
            inherit: self.inherit,
            error: AtomicI32::new(0),
        };
        let pid = clone_vfork(&plan)?;
        // Only the child's ends: closing them here leaves each pipe with one owner.
        drop((stdin_r, stdout_w, stderr_w));
        let error = plan.error.load(Ordering::Acquire);
        let mut child = Child {
            pid,
            status: None,
            stdin: Some(ChildStdin::from(stdin_w)),
            stdout: Some(ChildStdout::from(stdout_r)),
            stderr: stderr_r.map(ChildStderr::from),
        };
        if error != 0 {
            // The child exited without running the program: reap it, report why.
            let _ = child.wait();
            return Err(io::Error::from_raw_os_error(error));
        }
        Ok(child)
    }

    /// The paths the child tries `exec` on, in order, as `execvp` does: the
    /// program as written when it names a path, otherwise the program in each
    /// directory of the child's `PATH` (or the `exec` default), an empty entry
    /// meaning the child's own directory. They are tried in the child, after its
    /// `chdir`, so that relative ones mean what they would mean to `execvp`.
    fn candidates(&self) -> io::Result<Vec<CString>> {
        if self.program.as_bytes().contains(&b'/') {
            return Ok(vec![cstring(&self.program)?]);
        }
        let path = self
            .env
            .iter()
            .find(|(k, _)| k == "PATH")
            .map_or("/bin:/usr/bin", |(_, v)| v.as_str());
        path.split(':')
            .map(|dir| {
                let dir = if dir.is_empty() { "." } else { dir };
                cstring(Path::new(dir).join(&self.program).as_os_str())
            })
            .collect()
    }
}

/// A started child: its pid, its pipes, and its exit status once reaped.
#[derive(Debug)]
pub(crate) struct Child {
    pid: i32,
    status: Option<ExitStatus>,
    /// The write end of its stdin.
    pub(crate) stdin: Option<ChildStdin>,
    /// The read end of its stdout.
    pub(crate) stdout: Option<ChildStdout>,
    /// The read end of its stderr.
    pub(crate) stderr: Option<ChildStderr>,
}

impl Child {
    /// Its process id (and process group id).
    pub(crate) fn id(&self) -> u32 {
        self.pid.unsigned_abs()
    }

    /// SIGKILL, unless it has been reaped already (then its pid may be another's).
    pub(crate) fn kill(&mut self) -> io::Result<()> {
        if self.status.is_none() {
            nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(self.pid),
                nix::sys::signal::Signal::SIGKILL,
            )?;
        }
        Ok(())
    }

    /// Waits for it to exit and reaps it; its status from then on.
    pub(crate) fn wait(&mut self) -> io::Result<ExitStatus> {
        self.reap(0)
            .map(|status| status.expect("a blocking wait returns a status"))
    }

    /// Its status if it has exited (reaping it), without waiting.
    pub(crate) fn try_wait(&mut self) -> io::Result<Option<ExitStatus>> {
        self.reap(libc::WNOHANG)
    }

    /// One `waitpid` with `flags`, unless the status is known already.
    fn reap(&mut self, flags: c_int) -> io::Result<Option<ExitStatus>> {
        if self.status.is_some() {
            return Ok(self.status);
        }
        let mut raw = 0;
        loop {
            // SAFETY: waitpid writes only the status it is given.
            let pid = unsafe { libc::waitpid(self.pid, &mut raw, flags) };
            if pid == self.pid {
                self.status = Some(ExitStatus::from_raw(raw));
                return Ok(self.status);
            }
            if pid == 0 {
                return Ok(None);
            }
            let error = io::Error::last_os_error();
            if error.kind() != io::ErrorKind::Interrupted {
                return Err(error);
            }
        }
    }
}

/// The child's end of its stderr: a pipe's write end, or the process's `/dev/null`.
enum Stderr {
    Pipe(OwnedFd),
    Null(BorrowedFd<'static>),
}

impl Stderr {
    fn raw(&self) -> c_int {
        match self {
            Stderr::Pipe(fd) => fd.as_raw_fd(),
            Stderr::Null(fd) => fd.as_raw_fd(),
        }
    }
}

/// `/dev/null` open for writing, once per process (close-on-exec: a child gets it
/// only as the stream it is put on); `None` where it cannot be opened.
fn dev_null() -> Option<BorrowedFd<'static>> {
    static NULL: std::sync::OnceLock<Option<OwnedFd>> = std::sync::OnceLock::new();
    NULL.get_or_init(|| {
        std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/null")
            .ok()
            .map(OwnedFd::from)
    })
    .as_ref()
    .map(|fd| fd.as_fd())
}

/// What the child needs, prepared by the parent: the child may only read it (and
/// write `error`), since it must not allocate.
struct Plan {
    /// The paths to try `exec` on, null-terminated (see `Command::candidates`).
    candidates: *const *const libc::c_char,
    /// `sh`, a slot for the program's path, then its arguments: for a program
    /// `exec` refuses as no executable format. The one thing the child writes
    /// besides `error`, in memory only it uses until it is done.
    shell_argv: *mut *const libc::c_char,
    argv: *const *const libc::c_char,
    envp: *const *const libc::c_char,
    cwd: *const libc::c_char,
    /// The child's ends of its stdin, stdout and stderr pipes, in that order.
    stdio: [c_int; 3],
    limits: Limits,
    die_with: Option<i32>,
    /// A descriptor kept open across the `exec`.
    inherit: Option<c_int>,
    /// The errno of the step that failed, or 0 once the `exec` succeeded (then the
    /// child never writes it).
    error: AtomicI32,
}

/// Starts the child on a stack of its own, sharing this process's memory, and
/// returns once it has called `exec` (or died trying). Every signal is blocked in
/// this thread meanwhile, so no handler of the referee's runs in the child before
/// it has reset them.
fn clone_vfork(plan: &Plan) -> io::Result<i32> {
    // A thread whose locals are being torn down maps a stack of its own.
    let stack = match SPARE_STACK.try_with(std::cell::Cell::take) {
        Ok(Some(stack)) => stack,
        _ => Stack::new()?,
    };
    // The stack grows down from its end, which must be 16-byte aligned.
    let top = stack.top() & !15;
    // Every signal, glibc's own two included (its `pthread_sigmask` leaves those
    // out, and their handlers would run in the child on the referee's memory):
    // the system call itself, with the kernel's 8-byte set, as `posix_spawn` does.
    let all: u64 = !0;
    let mut old: u64 = 0;
    // SAFETY: rt_sigprocmask reads and writes the two 8-byte sets given.
    unsafe { set_mask(&all, &mut old) };
    // SAFETY: `child_main` runs on `stack` (alive until this returns, as the parent
    // is suspended until the child's exec or exit) and only reads `plan`, which
    // outlives the call for the same reason.
    let pid = unsafe {
        libc::clone(
            child_main,
            top as *mut c_void,
            libc::CLONE_VM | libc::CLONE_VFORK | libc::SIGCHLD,
            plan as *const Plan as *mut c_void,
        )
    };
    let error = io::Error::last_os_error();
    // SAFETY: restores the mask saved above.
    unsafe { set_mask(&old, &mut 0) };
    // Kept for this thread's next start: the child is done with it (it has called
    // `exec` or exited), and unmapping it made every CPU that runs a thread of the
    // referee flush its address translations.
    let _ = SPARE_STACK.try_with(|spare| spare.set(Some(stack)));
    if pid < 0 {
        return Err(error);
    }
    Ok(pid)
}

/// `rt_sigprocmask(SIG_SETMASK, new, old)` on the kernel's 64-signal set.
///
/// # Safety
/// A plain system call on the two sets.
unsafe fn set_mask(new: &u64, old: &mut u64) {
    libc::syscall(
        libc::SYS_rt_sigprocmask,
        libc::SIG_SETMASK,
        new as *const u64,
        old as *mut u64,
        8,
    );
}

thread_local! {
    /// The stack of this thread's last child, for its next one: a thread starts its
    /// children one at a time, each done with the stack once `clone` returns.
    static SPARE_STACK: std::cell::Cell<Option<Stack>> = const { std::cell::Cell::new(None) };
}

/// The child's stack: mapped on its own with an unmapped page below it, so that
/// running out of it faults instead of writing over the referee's heap.
struct Stack {
    base: *mut c_void,
    len: usize,
}

impl Stack {
    /// Maps [`CHILD_STACK`] bytes and a guard page beneath them.
    fn new() -> io::Result<Stack> {
        let guard = 4096;
        let len = CHILD_STACK + guard;
        // SAFETY: a fresh private anonymous mapping, owned by the returned value.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_STACK,
                -1,
                0,
            )
        };
        if base == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let stack = Stack { base, len };
        // SAFETY: the lowest page of the mapping just made.
        if unsafe { libc::mprotect(base, guard, libc::PROT_NONE) } < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(stack)
    }

    /// The address above its highest byte.
    fn top(&self) -> usize {
        self.base as usize + self.len
    }
}

impl Drop for Stack {
    fn drop(&mut self) {
        // SAFETY: the mapping `new` made, no longer used (the child has exec'd).
        unsafe { libc::munmap(self.base, self.len) };
    }
}

/// The child, between its start and its `exec`: on failure, says why in the plan
/// and exits with 127.
extern "C" fn child_main(plan: *mut c_void) -> c_int {
    // SAFETY: `clone_vfork` passes a `Plan` that outlives this call.
    let plan = unsafe { &*(plan as *const Plan) };
    // SAFETY: only system calls on what the parent prepared.
    let errno = unsafe { prepare_and_exec(plan) };
    plan.error.store(errno, Ordering::Release);
    // SAFETY: _exit runs no destructor and no handler of the shared process image.
    unsafe { libc::_exit(127) }
}

/// Sets the child up and calls `exec`; returns the errno of the step that failed.
///
/// # Safety
/// Runs in the `clone_vfork` child: it may not allocate, take a lock, or return
/// into the parent's frames, so every step is a plain system call.
unsafe fn prepare_and_exec(plan: &Plan) -> c_int {
    let errno = || *libc::__errno_location();
    // Handlers are the referee's and would run on its memory: a signal reaching the
    // child before its `exec` (its mask is cleared just before) finds the default.
    // SIGPIPE is reset as the standard library resets it for any child.
    let mut action: libc::sigaction = std::mem::zeroed();
    for signal in 1..=64 {
        if signal == libc::SIGKILL || signal == libc::SIGSTOP {
            continue;
        }
        if libc::sigaction(signal, std::ptr::null(), &mut action) == 0
            && (signal == libc::SIGPIPE || action.sa_sigaction != libc::SIG_IGN)
            && action.sa_sigaction != libc::SIG_DFL
        {
            libc::signal(signal, libc::SIG_DFL);
        }
    }
    for (target, &fd) in plan.stdio.iter().enumerate() {
        let target = target as c_int;
        // A pipe end that is already the target only loses its close-on-exec flag.
        let done = if fd == target {
            libc::fcntl(fd, libc::F_SETFD, 0)
        } else {
            libc::dup2(fd, target)
        };
        if done < 0 {
            return errno();
        }
    }
    if let Some(fd) = plan.inherit {
        if libc::fcntl(fd, libc::F_SETFD, 0) < 0 {
            return errno();
        }
    }
    if libc::setpgid(0, 0) < 0 {
        return errno();
    }
    if !plan.cwd.is_null() && libc::chdir(plan.cwd) < 0 {
        return errno();
    }
    if let Some(referee) = plan.die_with {
        // The referee may have died before the prctl: then nothing would kill this
        // child with it, and it must not start at all.
        if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong) < 0 {
            return errno();
        }
        if libc::getppid() != referee {
            return libc::ESRCH;
        }
    }
    if let Some(bytes) = plan.limits.memory_bytes {
        if set_limit(libc::RLIMIT_AS, bytes, bytes) < 0 {
            return errno();
        }
    }
    if let Some(secs) = plan.limits.cpu_seconds {
        if set_limit(libc::RLIMIT_CPU, secs, secs.saturating_add(1)) < 0 {
            return errno();
        }
    }
    let mut empty: libc::sigset_t = std::mem::zeroed();
    libc::sigemptyset(&mut empty);
    libc::pthread_sigmask(libc::SIG_SETMASK, &empty, std::ptr::null_mut());
    exec_first(plan)
}

/// `execve` of the first of the plan's candidates that can run (a shell script
/// without `#!` through `/bin/sh`), as `execvp` tries them; returns the errno that
/// ends the search: EACCES if some candidate was there but refused, else the last.
///
/// # Safety
/// As for [`prepare_and_exec`].
unsafe fn exec_first(plan: &Plan) -> c_int {
    let mut denied = false;
    let mut last = libc::ENOENT;
    let mut next = plan.candidates;
    while !(*next).is_null() {
        libc::execve(*next, plan.argv, plan.envp);
        last = *libc::__errno_location();
        match last {
            libc::ENOEXEC => {
                *plan.shell_argv.add(1) = *next;
                libc::execve(c"/bin/sh".as_ptr(), plan.shell_argv, plan.envp);
                return *libc::__errno_location();
            }
            libc::EACCES => denied = true,
            libc::ENOENT | libc::ENOTDIR | libc::ESTALE | libc::ENODEV | libc::ETIMEDOUT => {}
            _ => return last,
        }
        next = next.add(1);
    }
    if denied {
        libc::EACCES
    } else {
        last
    }
}

/// `setrlimit` of `resource` to `soft` and `hard`.
///
/// # Safety
/// A plain system call.
unsafe fn set_limit(resource: libc::__rlimit_resource_t, soft: u64, hard: u64) -> c_int {
    let limit = libc::rlimit {
        rlim_cur: soft,
        rlim_max: hard,
    };
    libc::setrlimit(resource, &limit)
}

/// `text` as a C string; a NUL inside it is an invalid argument, as for `exec`.
fn cstring(text: &OsStr) -> io::Result<CString> {
    CString::new(text.as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "a NUL byte in the command"))
}

/// Each of `texts` as a C string.
fn cstrings<'a>(texts: impl IntoIterator<Item = &'a OsStr>) -> io::Result<Vec<CString>> {
    texts.into_iter().map(cstring).collect()
}

/// The null-terminated array of pointers `exec` takes.
fn pointers(strings: &[CString]) -> Vec<*const libc::c_char> {
    strings
        .iter()
        .map(|s| s.as_ptr())
        .chain(std::iter::once(std::ptr::null()))
        .collect()
}

#[cfg(test)]
mod tests {
    use std::io::Read;

    use super::{Child, Command};
    use crate::agent::Limits;

    /// A `Command` with the given environment's `PATH`, as every agent has one.
    fn command(program: &str, args: &[&str]) -> Command {
        let mut command = Command::new(program);
        command
            .args(args.iter().copied())
            .env(&[("PATH".to_string(), "/usr/bin:/bin".to_string())]);
        command
    }

    /// Starts `command` registered as an agent is, so that another test's scan for
    /// escaped descendants leaves it be.
    fn spawn(command: &mut Command) -> std::io::Result<Child> {
        crate::agent::registry::spawn_registered(command)
    }

    /// Everything the child printed on stdout, once it has exited (and forgotten).
    fn output(mut child: Child) -> String {
        let mut text = String::new();
        child.stdout.take().unwrap().read_to_string(&mut text).unwrap();
        assert!(child.wait().unwrap().success());
        crate::agent::registry::unregister(child.id() as i32);
        text
    }

    #[test]
    fn the_child_gets_its_environment_directory_limits_and_group_and_nothing_else() {
        let dir = std::env::temp_dir();
        let script =
            "printf '%s|%s|%s|%s\\n' \"$0\" \"$FOO\" \"$(pwd -P)\" \"$(ulimit -v)\"; env | grep -c =";
        let mut command = command("sh", &["-c", script]);
        command
            .env(&[
                ("PATH".to_string(), "/usr/bin:/bin".to_string()),
                ("FOO".to_string(), "bar baz".to_string()),
            ])
            .current_dir(&dir)
            .limits(Limits {
                memory_bytes: Some(512 << 20),
                cpu_seconds: None,
            });
        let child = spawn(&mut command).unwrap();
        let pid = child.id() as i32;
        // SAFETY: a plain system call on a child not reaped yet.
        assert_eq!(unsafe { libc::getpgid(pid) }, pid, "it leads a group of its own");
        let dir = dir.canonicalize().unwrap();
        let text = output(child);
        let (first, count) = text.split_once('\n').unwrap();
        assert_eq!(first, format!("sh|bar baz|{}|524288", dir.display()), "{text}");
        // PATH and FOO, and what sh sets itself (PWD, maybe SHLVL and _): no more.
        let count: usize = count.trim().parse().unwrap();
        assert!((2..=5).contains(&count), "{text}");
    }

    #[test]
    fn a_stderr_nobody_reads_is_dev_null_and_a_logged_one_a_pipe() {
        // Several megabytes: a pipe nobody drained would stop the child at 64 KiB.
        let script = "readlink /proc/self/fd/2; head -c 4000000 /dev/zero >&2; echo done";
        let mut discarded = command("sh", &["-c", script]);
        discarded.discard_stderr();
        let child = spawn(&mut discarded).unwrap();
        assert!(child.stderr.is_none(), "no pipe is made for it");
        assert_eq!(output(child), "/dev/null\ndone\n");
        let mut piped = spawn(&mut command("sh", &["-c", "readlink /proc/self/fd/2"])).unwrap();
        assert!(piped.stderr.take().is_some());
        assert!(output(piped).starts_with("pipe:"));
    }

    #[test]
    fn the_child_starts_with_no_signal_blocked_and_sigpipe_at_its_default() {
        // The referee ignores SIGPIPE (the standard library does) and blocks every
        // signal around the start: neither may reach the agent.
        let status = output(spawn(&mut command("cat", &["/proc/self/status"])).unwrap());
        let mask = |name: &str| {
            let line = status.lines().find(|l| l.starts_with(name)).unwrap();
            u64::from_str_radix(line[name.len()..].trim(), 16).unwrap()
        };
        assert_eq!(mask("SigBlk:"), 0, "{status}");
        assert_eq!(mask("SigIgn:") & (1 << (libc::SIGPIPE - 1)), 0, "{status}");
    }

    #[test]
    fn a_script_without_its_interpreter_line_runs_in_sh_found_on_a_relative_path() {
        // `execvp` runs such a file with `sh`, and a relative `PATH` entry means the
        // child's directory: bots written for other tools rely on both.
        let dir = std::env::temp_dir().join(format!("launch-script-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("bin")).unwrap();
        let script = dir.join("bin").join("bot");
        std::fs::write(&script, "echo \"ran by sh: $1\"\n").unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
        let mut command = Command::new("bot");
        command
            .args(["hello"])
            .env(&[("PATH".to_string(), "no-such-dir:bin:/usr/bin:/bin".to_string())])
            .current_dir(&dir);
        let text = output(spawn(&mut command).unwrap());
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(text, "ran by sh: hello\n");
    }

    #[test]
    fn a_program_that_cannot_run_is_an_error_saying_why() {
        let missing = spawn(&mut command("no-such-program-anywhere", &[])).unwrap_err();
        assert_eq!(missing.kind(), std::io::ErrorKind::NotFound, "{missing}");
        // Found, but not executable: the child's exec fails, and says why.
        let file = std::env::temp_dir().join(format!("launch-test-{}", std::process::id()));
        std::fs::write(&file, "not a program").unwrap();
        let denied = spawn(&mut command(file.to_str().unwrap(), &[])).unwrap_err();
        std::fs::remove_file(&file).unwrap();
        assert_eq!(denied.kind(), std::io::ErrorKind::PermissionDenied, "{denied}");
        let mut bad_dir = command("true", &[]);
        bad_dir.current_dir("/no/such/directory");
        let gone = spawn(&mut bad_dir).unwrap_err();
        assert_eq!(gone.kind(), std::io::ErrorKind::NotFound, "{gone}");
    }
}
