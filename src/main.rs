//! The `referee` binary: everything lives in the library; see `referee::cli`.

/// Counts allocations per thread, so `referee bench` can report allocations per action.
#[global_allocator]
static ALLOCATOR: referee::bench::CountingAlloc = referee::bench::CountingAlloc;

fn main() -> std::process::ExitCode {
    referee::cli::main()
}
