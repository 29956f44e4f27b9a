//! The `referee` binary: everything lives in the library; see `referee::cli`.

fn main() -> std::process::ExitCode {
    referee::cli::main()
}
