//! Where the referee and its agents run while round trips are timed: the
//! placements (one CPU, two, unpinned), the CPUs this thread may use and the pinning
//! to them (agents inherit the pinning of the thread that starts them), and the CPU
//! time a thread has used. Its own room because the scheduler's choice changes a
//! round trip several times over, so every timed figure goes through it.

use std::time::Duration;

use serde::Serialize;

/// Where the referee and its agents run while round trips are timed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Placement {
    /// Referee and agents share one CPU: a round trip is two context switches, and
    /// every microsecond either side works adds to it.
    OneCpu,
    /// The referee on one CPU, the agents on another: a round trip is two cross-CPU
    /// wake-ups.
    TwoCpus,
    /// Wherever the scheduler puts them, as in a `referee match` (also where CPU
    /// pinning is not available).
    Unpinned,
}

impl Placement {
    /// The name in the table.
    pub(super) fn label(self) -> &'static str {
        match self {
            Placement::OneCpu => "one CPU",
            Placement::TwoCpus => "two CPUs",
            Placement::Unpinned => "unpinned",
        }
    }
}

/// The CPUs this thread may run on, and pinning to one of them. Processes started
/// by the thread inherit its pinning, which is how agents are placed.
pub(super) struct Cpus {
    #[cfg(target_os = "linux")]
    original: nix::sched::CpuSet,
    /// The first two CPUs allowed (the second may be missing).
    ids: Vec<usize>,
}

impl Cpus {
    /// The allowed CPUs, or `None` where pinning is not available.
    pub(super) fn detect() -> Option<Cpus> {
        #[cfg(target_os = "linux")]
        {
            let original = nix::sched::sched_getaffinity(nix::unistd::Pid::from_raw(0)).ok()?;
            let mut ids = crate::agent::affinity::allowed_cpus();
            ids.truncate(2);
            (!ids.is_empty()).then_some(Cpus { original, ids })
        }
        #[cfg(not(target_os = "linux"))]
        None
    }

    /// The placements these CPUs allow.
    pub(super) fn placements(cpus: Option<&Cpus>) -> Vec<Placement> {
        match cpus.map(|c| c.ids.len()) {
            None => vec![Placement::Unpinned],
            Some(1) => vec![Placement::OneCpu],
            Some(_) => vec![Placement::OneCpu, Placement::TwoCpus, Placement::Unpinned],
        }
    }

    /// Pins the calling thread to CPU `cpu`.
    fn pin(&self, cpu: usize) -> std::io::Result<()> {
        crate::agent::affinity::pin_thread(cpu)
    }

    /// Gives the calling thread back every CPU it had.
    pub(super) fn restore(&self) {
        #[cfg(target_os = "linux")]
        let _ = nix::sched::sched_setaffinity(nix::unistd::Pid::from_raw(0), &self.original);
    }
}

/// Pinning for one placement: the agents' CPU while they are started, then the
/// referee's.
#[derive(Clone, Copy)]
pub(super) struct Pin<'c> {
    cpus: Option<&'c Cpus>,
    referee: usize,
    agents: usize,
    /// Every allowed CPU for both (the unpinned placement).
    free: bool,
}

impl<'c> Pin<'c> {
    pub(super) fn new(cpus: Option<&'c Cpus>, placement: Placement) -> Pin<'c> {
        let id = |k: usize| cpus.and_then(|c| c.ids.get(k).copied()).unwrap_or(0);
        let agents = if placement == Placement::TwoCpus {
            id(1)
        } else {
            id(0)
        };
        Pin {
            cpus,
            referee: id(0),
            agents,
            free: placement == Placement::Unpinned,
        }
    }

    /// Before starting agents: they will run where this thread runs now.
    pub(super) fn for_agents(self) -> std::io::Result<()> {
        self.go_to(self.agents)
    }

    /// Once the agents are started: the referee's own CPU.
    pub(super) fn for_referee(self) -> std::io::Result<()> {
        self.go_to(self.referee)
    }

    /// Moves this thread to `cpu`, or back to every allowed CPU when unpinned.
    fn go_to(self, cpu: usize) -> std::io::Result<()> {
        match self.cpus {
            Some(c) if self.free => {
                c.restore();
                Ok(())
            }
            Some(c) => c.pin(cpu),
            None => Ok(()),
        }
    }
}

/// CPU time this thread has used (user and system), where the OS tells.
pub(super) fn thread_cpu_time() -> Duration {
    #[cfg(target_os = "linux")]
    {
        usage_time(nix::sys::resource::UsageWho::RUSAGE_THREAD)
    }
    #[cfg(not(target_os = "linux"))]
    {
        Duration::ZERO
    }
}

/// CPU time of this whole process so far (user and system; zero where unknown).
pub(super) fn process_cpu_time() -> Duration {
    usage_time(nix::sys::resource::UsageWho::RUSAGE_SELF)
}

/// CPU time of this process's children that have ended and been reaped (user and
/// system; zero where unknown): the agents, once a tournament has stopped them.
pub(super) fn children_cpu_time() -> Duration {
    usage_time(nix::sys::resource::UsageWho::RUSAGE_CHILDREN)
}

/// The user and system time `getrusage` reports for `who`.
fn usage_time(who: nix::sys::resource::UsageWho) -> Duration {
    match nix::sys::resource::getrusage(who) {
        Ok(usage) => {
            let us = |t: nix::sys::time::TimeVal| t.tv_sec() as u64 * 1_000_000 + t.tv_usec() as u64;
            Duration::from_micros(us(usage.user_time()) + us(usage.system_time()))
        }
        Err(_) => Duration::ZERO,
    }
}
