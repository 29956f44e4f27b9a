//! Threads kept for the blocking jobs that run beside a game: draining an agent's
//! stderr until the agent closes it.
//!
//! Each game had started a thread for each (and one more to sync its header), and
//! starting and ending them (each stack mapped, guarded, touched and unmapped) was
//! about a seventh of the referee's CPU time for a fresh two-seat game. A thread here
//! waits for its next job when one is done, so a run of games starts threads only
//! while more jobs run at once than ever before; one idle for [`IDLE`] ends.
//!
//! A job runs on the CPUs its caller may run on, as on a thread the caller started:
//! a kept thread takes on each job's mask, so that a worker pinned by `tournament
//! --affinity` has its agents' stderr drained on its own CPU, whichever worker the
//! thread served before.

use std::io;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::{Mutex, MutexGuard};
use std::thread;
use std::time::Duration;

use nix::sched::{sched_getaffinity, sched_setaffinity, CpuSet};
use nix::unistd::Pid;

/// How long a kept thread waits for a job before it ends.
pub const IDLE: Duration = Duration::from_secs(10);

/// The referee's kept threads.
static THREADS: Pool = Pool::new();

/// Runs `job` on a kept thread: an idle one, or a new one when none is idle.
/// Fails only when a new thread is needed and cannot be started.
pub fn run<T: Send + 'static>(job: impl FnOnce() -> T + Send + 'static) -> io::Result<Job<T>> {
    THREADS.run(job)
}

/// A job running beside: its result once it is done.
#[derive(Debug)]
pub struct Job<T> {
    result: Receiver<thread::Result<T>>,
}

impl<T> Job<T> {
    /// Waits for the job at most `limit`: `None` if it is still running then (it
    /// runs on; its result is dropped).
    pub fn join_within(self, limit: Duration) -> Option<thread::Result<T>> {
        match self.result.recv_timeout(limit) {
            Ok(result) => Some(result),
            Err(RecvTimeoutError::Timeout) => None,
            Err(RecvTimeoutError::Disconnected) => Some(Err(lost())),
        }
    }
}

/// The error of a job whose thread went away without a result.
fn lost() -> Box<dyn std::any::Any + Send> {
    Box::new("the job's thread is gone")
}

/// A job for a kept thread: it runs, and gives back what hands its result over,
/// which the thread calls once it is idle again, so that whoever waited for the
/// result finds the thread free for the next job.
type Task = Box<dyn FnOnce() -> Deliver + Send>;

/// A job with the CPUs it may run on (those of its caller; `None` where unknown).
type Sent = (Option<CpuSet>, Task);

/// An idle thread: its number, the CPUs it runs on, and where its next job goes.
type Idle = (u64, Option<CpuSet>, Sender<Sent>);

/// Hands a finished job's result to whoever waits for it.
type Deliver = Box<dyn FnOnce() + Send>;

/// Kept threads: the idle ones ([`Idle`]; of those on the caller's CPUs, the last
/// to finish is taken first: its stack is the warmest), and how many were ever
/// started.
struct Pool {
    idle: Mutex<Vec<Idle>>,
    started: AtomicU64,
}

impl Pool {
    /// A pool with no thread yet.
    const fn new() -> Pool {
        Pool {
            idle: Mutex::new(Vec::new()),
            started: AtomicU64::new(0),
        }
    }

    /// See [`run`].
    fn run<T: Send + 'static>(&'static self, job: impl FnOnce() -> T + Send + 'static) -> io::Result<Job<T>> {
        let (done, result) = mpsc::sync_channel(1);
        let task: Task = Box::new(move || {
            let outcome = catch_unwind(AssertUnwindSafe(job));
            Box::new(move || {
                let _ = done.send(outcome);
            })
        });
        let mask = sched_getaffinity(Pid::from_raw(0)).ok();
        let mut sent = (mask, task);
        loop {
            // One on the caller's CPUs already if there is one: no move to make.
            let idle = {
                let mut idle = self.lock_idle();
                match idle.iter().rposition(|(_, on, _)| *on == mask) {
                    Some(k) => Some(idle.remove(k)),
                    None => idle.pop(),
                }
            };
            let Some((_, _, next)) = idle else { break };
            // A thread that ended since it was listed gives the job back.
            match next.send(sent) {
                Ok(()) => return Ok(Job { result }),
                Err(mpsc::SendError(back)) => sent = back,
            }
        }
        let number = self.started.fetch_add(1, Ordering::Relaxed);
        // A new thread starts on its creator's CPUs: this caller's.
        thread::Builder::new()
            .name("referee-beside".into())
            .spawn(move || self.serve(number, sent))?;
        Ok(Job { result })
    }

    /// The idle list, whatever a panic elsewhere left in it (it holds no invariant a
    /// panic could break).
    fn lock_idle(&self) -> MutexGuard<'_, Vec<Idle>> {
        self.idle.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// A kept thread's life: its first job, then each job it is given, until it has
    /// been idle for [`IDLE`].
    fn serve(&self, number: u64, first: Sent) {
        let (next, jobs) = mpsc::channel::<Sent>();
        let mut mask = first.0;
        let mut task = Some(first);
        while let Some((wanted, job)) = task.take() {
            if let Some(set) = wanted.filter(|w| Some(*w) != mask) {
                if sched_setaffinity(Pid::from_raw(0), &set).is_ok() {
                    mask = Some(set);
                }
            }
            let deliver = job();
            self.lock_idle().push((number, mask, next.clone()));
            deliver();
            task = self.wait_for_job(number, &jobs);
        }
    }

    /// The next job of idle thread `number`, or `None` once it has waited [`IDLE`]
    /// and has taken itself off the idle list.
    fn wait_for_job(&self, number: u64, jobs: &Receiver<Sent>) -> Option<Sent> {
        loop {
            match jobs.recv_timeout(IDLE) {
                Ok(job) => return Some(job),
                Err(RecvTimeoutError::Disconnected) => return None,
                Err(RecvTimeoutError::Timeout) => {
                    let mut idle = self.lock_idle();
                    if let Some(k) = idle.iter().position(|(n, _, _)| *n == number) {
                        idle.remove(k);
                        return None;
                    }
                    // Taken off the list by `run`: its job is on the way.
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Waits for `job` (bounded only against a hang).
    fn joined<T>(job: Job<T>) -> thread::Result<T> {
        job.join_within(Duration::from_secs(120)).expect("the job ended")
    }

    #[test]
    fn a_job_returns_its_result_and_a_panic_is_an_error() {
        static POOL: Pool = Pool::new();
        assert_eq!(joined(POOL.run(|| 6 * 7).unwrap()).unwrap(), 42);
        let panicked = joined(POOL.run(|| -> u8 { panic!("on purpose") }).unwrap());
        assert!(panicked.is_err());
        // The thread that caught the panic serves again.
        assert_eq!(joined(POOL.run(|| "again").unwrap()).unwrap(), "again");
        assert_eq!(POOL.started.load(Ordering::Relaxed), 1);
    }

    #[test]
    fn jobs_one_after_another_start_one_thread() {
        static POOL: Pool = Pool::new();
        let threads: Vec<_> = (0..20)
            .map(|_| joined(POOL.run(|| thread::current().id()).unwrap()).unwrap())
            .collect();
        assert!(threads
            .iter()
            .all(|id| *id == threads[0] && *id != thread::current().id()));
        assert_eq!(POOL.started.load(Ordering::Relaxed), 1);
    }

    #[test]
    fn a_job_runs_on_its_callers_cpus_whoever_the_thread_served_before() {
        static POOL: Pool = Pool::new();
        let allowed = sched_getaffinity(Pid::from_raw(0)).unwrap();
        let cpus: Vec<usize> = (0..CpuSet::count())
            .filter(|&c| allowed.is_set(c).unwrap_or(false))
            .collect();
        if cpus.len() < 2 || !crate::agent::affinity::can_pin() {
            eprintln!("skipped: this test needs two CPUs a thread may be pinned to");
            return;
        }
        // From a thread pinned to each CPU in turn, jobs one after another: one kept
        // thread serves them all, each on its caller's CPU.
        let ran_on: Vec<CpuSet> = cpus[..2]
            .iter()
            .map(|&cpu| {
                thread::spawn(move || {
                    let mut one = CpuSet::new();
                    one.set(cpu).unwrap();
                    sched_setaffinity(Pid::from_raw(0), &one).unwrap();
                    let seen = POOL.run(|| sched_getaffinity(Pid::from_raw(0)).unwrap()).unwrap();
                    (one, joined(seen).unwrap())
                })
                .join()
                .unwrap()
            })
            .map(|(wanted, seen)| {
                assert_eq!(seen, wanted);
                seen
            })
            .collect();
        assert_ne!(ran_on[0], ran_on[1]);
        assert_eq!(POOL.started.load(Ordering::Relaxed), 1);
    }

    #[test]
    fn jobs_that_block_run_side_by_side() {
        static POOL: Pool = Pool::new();
        // On one thread, the first job would wait out its bound before the second ran.
        let (tx, rx) = mpsc::channel::<()>();
        let waiting = POOL
            .run(move || rx.recv_timeout(Duration::from_secs(60)).is_ok())
            .unwrap();
        let sending = POOL.run(move || tx.send(()).is_ok()).unwrap();
        assert!(joined(sending).unwrap());
        assert!(
            joined(waiting).unwrap(),
            "the second job ran only after the first gave up"
        );
        assert_eq!(POOL.started.load(Ordering::Relaxed), 2);
    }
}
