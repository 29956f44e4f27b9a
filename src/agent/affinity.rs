//! Pinning a thread to one CPU, and with it every agent the thread starts: a child
//! process inherits the CPU mask of the thread that starts it. `tournament
//! --affinity` gives each of its workers a CPU of its own this way, and `referee
//! bench` places the referee and its agents with it.
//!
//! Why a tournament wants it: an agent kept from game to game talks to the same
//! worker thread for the whole run, and the scheduler tends to gather such pipe
//! partners onto one CPU, two games' worth on one CPU while the other idles. A fresh
//! agent is placed afresh at every start, so it suffers less; pinned, neither does.
//! Measured in the README (Tournament throughput).

/// The CPUs the calling thread may run on, in order; empty where the operating
/// system does not tell.
pub fn allowed_cpus() -> Vec<usize> {
    #[cfg(target_os = "linux")]
    {
        use nix::sched::{sched_getaffinity, CpuSet};
        match sched_getaffinity(nix::unistd::Pid::from_raw(0)) {
            Ok(set) => (0..CpuSet::count())
                .filter(|&c| set.is_set(c).unwrap_or(false))
                .collect(),
            Err(_) => Vec::new(),
        }
    }
    #[cfg(not(target_os = "linux"))]
    Vec::new()
}

/// Pins the calling thread (and the processes it starts from now on) to `cpu`.
#[cfg_attr(not(target_os = "linux"), allow(unused_variables))]
pub fn pin_thread(cpu: usize) -> std::io::Result<()> {
    #[cfg(target_os = "linux")]
    {
        let mut set = nix::sched::CpuSet::new();
        set.set(cpu).map_err(std::io::Error::from)?;
        nix::sched::sched_setaffinity(nix::unistd::Pid::from_raw(0), &set).map_err(std::io::Error::from)
    }
    #[cfg(not(target_os = "linux"))]
    Err(std::io::Error::new(
        std::io::ErrorKind::Unsupported,
        "CPU pinning is not available on this system",
    ))
}

/// Whether a thread of this process can be pinned to one of its CPUs: tried on a
/// thread of its own, which ends with the try, so the caller's mask is untouched.
pub fn can_pin() -> bool {
    let Some(&cpu) = allowed_cpus().first() else {
        return false;
    };
    std::thread::spawn(move || pin_thread(cpu).is_ok())
        .join()
        .unwrap_or(false)
}
