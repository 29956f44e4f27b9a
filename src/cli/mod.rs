//! The command line: what the user typed (clap), turned into one call per mode.
//! Exit codes: 0 success, 1 a check failed or the run failed, 2 bad usage or bad
//! input, 130 interrupted by a signal.

mod agent;
mod args;
mod bench;
mod live;
mod match_cmd;
mod pbm;
mod serve;
mod show;
mod show_html;
mod tournament;
mod tournament_html;
mod verify;

use std::io::{self, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Exit code: success.
pub const EXIT_OK: u8 = 0;
/// Exit code: a check failed (e.g. `verify` found a bad line) or the run failed.
pub const EXIT_FAILED: u8 = 1;
/// Exit code: bad usage or bad input.
pub const EXIT_USAGE: u8 = 2;
/// Exit code: stopped by SIGINT, SIGTERM or SIGHUP.
pub const EXIT_INTERRUPTED: u8 = 130;

/// A headless game referee: runs bots as processes, enforces the rules and the
/// information hiding of its games, and writes hash-chained game records.
#[derive(Debug, Parser)]
#[command(
    name = "referee",
    version,
    about,
    max_term_width = 100,
    arg_required_else_help = true
)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Play one game between agents (built-in agents fill the seats not given).
    Match(Box<match_cmd::MatchArgs>),
    /// Play many games between many bots, concurrently, with statistics.
    Tournament(Box<tournament::TournamentArgs>),
    /// Combine the output directories of a tournament's shards into one table.
    Merge(tournament::MergeArgs),
    /// Play by mail: each command works on one record file.
    #[command(subcommand, arg_required_else_help = true)]
    Pbm(pbm::PbmCommand),
    /// Check that the messages a seat received by mail agree with the final record.
    Audit {
        /// The final record.
        record: PathBuf,
        /// The seat whose messages these are: its number or its player's name.
        #[arg(long)]
        seat: crate::pbm::SeatRef,
        /// A file holding the messages the seat received, in any order.
        #[arg(long)]
        transcript: PathBuf,
        /// Also check the judge's signatures, of the record and of every message,
        /// with this public key.
        #[arg(long, value_name = "PUB")]
        key: Option<PathBuf>,
    },
    /// Make an Ed25519 key pair for signing records: NAME.key (secret) and NAME.pub.
    Keygen {
        /// The key files' name, without .key or .pub.
        #[arg(long, value_name = "NAME")]
        out: PathBuf,
    },
    /// Speak the controller protocol on stdin/stdout (see protocol.md).
    Serve {
        /// Answer every command with one JSON object per line (protocol.md §2.3).
        #[arg(long)]
        json: bool,
    },
    /// Re-check records: hashes, every action, every event, the result.
    Verify {
        /// Record files.
        #[arg(required = true)]
        records: Vec<PathBuf>,
        /// Also require every record to be signed, up to its last line, by this
        /// public key.
        #[arg(long, value_name = "PUB")]
        key: Option<PathBuf>,
    },
    /// Print a recorded game, optionally as one seat saw it, optionally at one ply.
    Show(show::ShowArgs),
    /// Measure the referee against the pipe round trip, per game (see README).
    Bench(bench::BenchArgs),
    /// Run a built-in agent speaking the agent protocol on stdin/stdout.
    #[command(subcommand, arg_required_else_help = true)]
    Agent(agent::BuiltinAgent),
}

/// A failure with the exit code it maps to.
#[derive(Debug)]
pub struct Failure {
    pub(crate) code: u8,
    pub(crate) error: anyhow::Error,
}

impl Failure {
    /// Bad usage or bad input: exit 2.
    pub fn usage(error: impl Into<anyhow::Error>) -> Failure {
        Failure {
            code: EXIT_USAGE,
            error: error.into(),
        }
    }

    /// A failed check or run: exit 1.
    pub fn failed(error: impl Into<anyhow::Error>) -> Failure {
        Failure {
            code: EXIT_FAILED,
            error: error.into(),
        }
    }
}

/// Parses the command line, runs it, and maps the outcome to an exit code.
pub fn main() -> ExitCode {
    if let Some(code) = sandbox_shim() {
        return code;
    }
    // No process of the same user may open this one's memory or descriptors
    // (/proc/<pid>/fd, /proc/<pid>/mem): the referee holds hidden state and records.
    #[cfg(target_os = "linux")]
    let _ = nix::sys::prctl::set_dumpable(false);
    let cli = match parse() {
        Ok(cli) => cli,
        Err(e) if !e.use_stderr() => {
            // --help and --version.
            let _ = print(&e.to_string());
            return ExitCode::from(EXIT_OK);
        }
        Err(e) if e.kind() == clap::error::ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            // A bare `referee` (or `referee pbm`): the help, but no command ran.
            let _ = print(&e.to_string());
            return ExitCode::from(EXIT_USAGE);
        }
        Err(e) => {
            eprintln!(
                "referee: {} (try --help)",
                crate::text::printable(&one_line_usage_error(&e.to_string()))
            );
            return ExitCode::from(EXIT_USAGE);
        }
    };
    match run(cli) {
        Ok(code) => ExitCode::from(code),
        Err(f) => {
            eprintln!("referee: {}", crate::text::printable(&one_line(&f.error)));
            ExitCode::from(f.code)
        }
    }
}

/// `referee __sandbox-exec -- COMMAND…`, the first process of a root referee's
/// sandbox (`agent::identity`): drops to uid 65534 and runs COMMAND, or says why
/// not (exit 126, as a shell says a command cannot run). `None` for any other
/// command line.
fn sandbox_shim() -> Option<ExitCode> {
    let mut args = std::env::args_os().skip(1);
    if args.next()? != crate::agent::identity::SHIM {
        return None;
    }
    let command: Vec<std::ffi::OsString> = args.skip_while(|w| w == "--").collect();
    let error = crate::agent::identity::exec_as_nobody(&command);
    eprintln!(
        "referee: the sandbox cannot run {:?}: {error}",
        command.first().unwrap_or(&"".into())
    );
    Some(ExitCode::from(126))
}

// `referee agent …` parsed on its own: every fresh seat that a built-in agent plays
// starts one, so its start is part of a game's fixed cost, and building the whole
// command line (every mode's arguments and help) was a fifth of its CPU time.
#[derive(Debug, Parser)]
#[command(
    name = "referee agent",
    bin_name = "referee agent",
    about = "Run a built-in agent speaking the agent protocol on stdin/stdout.",
    long_about = None,
    max_term_width = 100,
    arg_required_else_help = true
)]
struct AgentCli {
    #[command(subcommand)]
    agent: agent::BuiltinAgent,
}

/// The command line, parsed; `referee agent …` by [`AgentCli`] alone.
fn parse() -> Result<Cli, clap::Error> {
    let mut args = std::env::args_os();
    if args.nth(1).is_some_and(|word| word == "agent") {
        let words = std::iter::once("referee agent".into()).chain(args);
        return AgentCli::try_parse_from(words).map(|a| Cli {
            command: Command::Agent(a.agent),
        });
    }
    Cli::try_parse()
}

/// Runs one parsed command line.
pub fn run(cli: Cli) -> Result<u8, Failure> {
    // Every mode reads the wall clock; an injected time that is not one is refused
    // before anything is written with the real clock instead.
    crate::wall_clock::check_env().map_err(|e| Failure::usage(anyhow::anyhow!(e)))?;
    match cli.command {
        Command::Match(args) => match_cmd::run(*args),
        Command::Tournament(args) => tournament::run(*args),
        Command::Merge(args) => tournament::merge(args),
        Command::Pbm(command) => pbm::run(command),
        Command::Audit {
            record,
            seat,
            transcript,
            key,
        } => pbm::audit(&record, seat, &transcript, key.as_deref()),
        Command::Keygen { out } => verify::keygen(&out),
        Command::Serve { json } => serve::run(json),
        Command::Bench(args) => bench::run(args),
        Command::Verify { records, key } => verify::run(&records, key.as_deref()),
        Command::Show(args) => show::run(args),
        Command::Agent(which) => agent::run(which),
    }
}

/// An error and its causes on one line, each cause once (library errors often
/// repeat their source in their own message).
fn one_line(error: &anyhow::Error) -> String {
    let mut text = String::new();
    for cause in error.chain() {
        let cause = cause.to_string();
        if !text.contains(&cause) {
            if !text.is_empty() {
                text.push_str(": ");
            }
            text.push_str(&cause);
        }
    }
    text.replace('\n', " ")
}

/// Clap's multi-line usage error as one line: the message without the usage block.
fn one_line_usage_error(text: &str) -> String {
    let message: Vec<&str> = text
        .lines()
        .take_while(|l| !l.starts_with("Usage:") && !l.starts_with("For more information"))
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    message.join(" ").trim_start_matches("error: ").to_string()
}

/// Writes text to stdout; a closed stdout (e.g. piped into `head`) is not an error.
/// Everything the commands print goes through here, and is made printable first:
/// much of it comes from bots (names, actions, error details), and no bot may steer
/// the user's terminal.
fn print(text: &str) -> Result<(), Failure> {
    let text = crate::text::printable(text);
    let mut out = io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|_| out.flush()) {
        Err(e) if e.kind() != io::ErrorKind::BrokenPipe => Err(Failure::failed(e)),
        _ => Ok(()),
    }
}
