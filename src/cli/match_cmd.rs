//! `referee match`: one game between agent processes.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{anyhow, Context};
use clap::Args;

use super::{print, Failure, EXIT_INTERRUPTED, EXIT_OK};
use crate::agent::{AgentSpec, Limits};
use crate::builtin::Strategy;
use crate::game::{EndReason, GameId, Options, Seat};
use crate::record::Durability;
use crate::referee::{
    default_record_path, play_match, AgentCwd, MatchConfig, MatchError, Progress, SeatAgent,
};
use crate::rng::Rng;

/// Arguments of `referee match`.
#[derive(Debug, Args)]
pub struct MatchArgs {
    /// Game: pegchow, telka, idoubtit or multichess.
    #[arg(long, required_unless_present = "resume")]
    game: Option<String>,
    /// Continue the unfinished game of this record (game, options, seed, time control
    /// and agent commands come from its header; --agent and --tc/--st override).
    #[arg(long, value_name = "RECORD", conflicts_with_all = ["game", "options", "state", "record", "seed"])]
    resume: Option<PathBuf>,
    /// When record lines are forced to disk: after every line, after the header and
    /// the result, or never (lines are always flushed as they are written).
    #[arg(long, value_enum, default_value = "game")]
    fsync: Durability,
    /// Game option KEY=VALUE, repeatable (e.g. -o players=4).
    #[arg(short = 'o', long = "option", value_name = "KEY=VALUE")]
    options: Vec<String>,
    /// Agent command for the next seat, repeatable, in seat order; one quoted string
    /// per agent. Seats without one get a built-in agent (see --fill).
    #[arg(long = "agent", value_name = "CMD")]
    agents: Vec<String>,
    /// Built-in agent for the seats not given with --agent.
    #[arg(long, value_enum, default_value = "greedy")]
    fill: Strategy,
    /// Time control [moves/]seconds[+increment], per seat, as in cutechess-cli
    /// (default 10+0.1, or the resumed record's).
    #[arg(long, value_name = "TC", conflicts_with = "st")]
    tc: Option<String>,
    /// Fixed seconds per decision instead of a clock.
    #[arg(long, value_name = "SECONDS")]
    st: Option<String>,
    /// Milliseconds granted past the clock before the flag falls.
    #[arg(long, value_name = "MS", default_value_t = 50)]
    margin: u64,
    /// Seconds an agent has for the handshake, and again to be ready for the game.
    #[arg(long, value_name = "SECONDS", default_value_t = 10.0)]
    startup_timeout: f64,
    /// Seconds an agent has to exit after `quit` before it is killed.
    #[arg(long, value_name = "SECONDS", default_value_t = 1.0)]
    quit_grace: f64,
    /// `setoption` for one seat's agent: SEAT:NAME=VALUE, repeatable.
    #[arg(long = "setoption", value_name = "SEAT:NAME=VALUE")]
    setoptions: Vec<String>,
    /// Seed for the built-in agents (default: from the clock; always recorded).
    #[arg(long)]
    seed: Option<u64>,
    /// Start from this state string instead of the start position.
    #[arg(long)]
    state: Option<String>,
    /// Record file to create (default: records/<game>-<time>-<seed>.jsonl).
    #[arg(long)]
    record: Option<PathBuf>,
    /// Environment variable for every agent: KEY=VALUE, or KEY to pass the referee's
    /// value; repeatable. Agents get nothing else but PATH.
    #[arg(long = "env", value_name = "KEY[=VALUE]")]
    env: Vec<String>,
    /// Address-space limit per agent process, in MiB.
    #[arg(long, value_name = "MIB")]
    max_memory: Option<u64>,
    /// CPU-time limit per agent process, in seconds (for the whole game).
    #[arg(long, value_name = "SECONDS")]
    max_cpu: Option<u64>,
    /// Where agents start: `private` (a fresh directory each; relative paths in the
    /// command are made absolute), `inherit` (the referee's), or a directory.
    #[arg(long, value_name = "private|inherit|DIR", default_value = "private")]
    agent_cwd: String,
    /// Directory for per-seat transcripts (every line exchanged) and stderr logs.
    #[arg(long, value_name = "DIR")]
    log_dir: Option<PathBuf>,
    /// Print every action (default: a line every 100 plies).
    #[arg(short, long, conflicts_with = "quiet")]
    verbose: bool,
    /// Print only the result and the record path.
    #[arg(short, long)]
    quiet: bool,
}

/// Resolves the arguments into a match configuration.
fn config(args: &MatchArgs) -> Result<MatchConfig, Failure> {
    // When resuming, the record's header says what was being played.
    let header = match &args.resume {
        Some(path) => {
            let replay = crate::record::replay_file(path)
                .map_err(|e| Failure::usage(anyhow!("cannot resume {}: {e}", path.display())))?;
            Some(replay.header)
        }
        None => None,
    };
    let (game_name, options, state) = match &header {
        Some(h) => (h.game.clone(), h.options.clone(), h.state.clone()),
        None => (
            args.game.clone().expect("clap requires --game without --resume"),
            Options::parse(args.options.iter().map(String::as_str)).map_err(Failure::usage)?,
            args.state.clone(),
        ),
    };
    let game = GameId::parse(&game_name).map_err(Failure::usage)?;
    // Creating the game checks options and state before any agent starts.
    let probe = game.create(&options, state.as_deref()).map_err(Failure::usage)?;
    let seats = probe.seat_count();
    if args.agents.len() > seats {
        return Err(Failure::usage(anyhow!(
            "{} agents given for a game of {seats} seats",
            args.agents.len()
        )));
    }
    let recorded_tc = header.as_ref().and_then(|h| h.time_control.clone());
    let control = super::time_control(args.st.as_deref(), args.tc.as_deref(), recorded_tc.as_deref())?;
    let seed = header.as_ref().map(|h| h.seed).or(args.seed).unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(1)
    });
    let exe = std::env::current_exe()
        .context("cannot find the referee executable")
        .map_err(Failure::failed)?;
    let exe = shell_words::quote(&exe.to_string_lossy()).into_owned();
    let mut agents: Vec<SeatAgent> = Seat::all(seats)
        .map(|seat| {
            let recorded = header
                .as_ref()
                .and_then(|h| h.seats.get(seat.index()))
                .and_then(|s| s.command.clone());
            let command = args
                .agents
                .get(seat.index())
                .cloned()
                .or(recorded)
                .unwrap_or_else(|| {
                    format!(
                        "{exe} agent {} --seed {}",
                        args.fill.name(),
                        Rng::derive(seed, seat.number() as u64)
                    )
                });
            SeatAgent {
                spec: AgentSpec::new(command),
                options: Vec::new(),
            }
        })
        .collect();
    for text in &args.setoptions {
        let parsed = text.split_once(':').and_then(|(seat, rest)| {
            let seat = seat.parse::<Seat>().ok().filter(|s| s.number() <= seats)?;
            let (name, value) = rest.split_once('=').filter(|(n, _)| !n.is_empty())?;
            Some((seat, name.to_string(), value.to_string()))
        });
        let (seat, name, value) = parsed.ok_or_else(|| {
            Failure::usage(anyhow!(
                "--setoption `{text}`: expected SEAT:NAME=VALUE with a seat of this game"
            ))
        })?;
        agents[seat.index()].options.push((name, value));
    }
    let seconds = |s: f64, what: &str| {
        if s.is_finite() && s > 0.0 && s < 1e6 {
            Ok(Duration::from_secs_f64(s))
        } else {
            Err(Failure::usage(anyhow!(
                "{what} must be a positive number of seconds"
            )))
        }
    };
    let env = super::agent_env(&args.env)?;
    let limits = Limits {
        memory_bytes: args.max_memory.map(|mib| mib.saturating_mul(1 << 20)),
        cpu_seconds: args.max_cpu,
    };
    if limits.memory_bytes == Some(0) || limits.cpu_seconds == Some(0) {
        return Err(Failure::usage(anyhow!(
            "--max-memory and --max-cpu must be positive"
        )));
    }
    for agent in &mut agents {
        agent.spec.env = env.clone();
        agent.spec.limits = limits;
    }
    let agent_cwd = match args.agent_cwd.as_str() {
        "private" => AgentCwd::Private,
        "inherit" => AgentCwd::Inherit,
        dir if std::path::Path::new(dir).is_dir() => AgentCwd::Dir(PathBuf::from(dir)),
        other => {
            return Err(Failure::usage(anyhow!(
                "--agent-cwd `{other}`: expected private, inherit or an existing directory"
            )))
        }
    };
    let record = match (&args.resume, &args.record) {
        (Some(path), _) | (None, Some(path)) => path.clone(),
        (None, None) => default_record_path(game, seed),
    };
    Ok(MatchConfig {
        game,
        options,
        state,
        agents,
        control,
        margin: Duration::from_millis(args.margin),
        startup: seconds(args.startup_timeout, "--startup-timeout")?,
        quit_grace: seconds(args.quit_grace, "--quit-grace")?,
        seed,
        record,
        log_dir: args.log_dir.clone(),
        resume: args.resume.is_some(),
        durability: args.fsync,
        agent_cwd,
        opening: Vec::new(),
    })
}

/// Runs `referee match`.
pub fn run(args: MatchArgs) -> Result<u8, Failure> {
    let config = config(&args)?;
    if !config.resume && config.record.exists() {
        return Err(Failure::usage(anyhow!(
            "record {} already exists; nothing is overwritten",
            config.record.display()
        )));
    }
    if let Some(dir) = &config.log_dir {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("cannot create log directory {}", dir.display()))
            .map_err(Failure::usage)?;
    }
    watch_interrupt()?;
    if !args.quiet {
        print(&format!(
            "{} game, {} seats, seed {}, time control {}\n",
            config.game,
            config.agents.len(),
            config.seed,
            config.control
        ))?;
    }
    let (verbose, quiet) = (args.verbose, args.quiet);
    let mut progress = |p: Progress<'_>| {
        let line = match p {
            Progress::Action {
                ply,
                seat,
                label,
                action,
                forced,
                ..
            } if verbose || (!quiet && ply % 100 == 0) => {
                let forced = if forced { " (forced)" } else { "" };
                format!("ply {ply:>4}  seat {seat} {label:<6} {action}{forced}\n")
            }
            Progress::Forfeit { seat, failure } if !quiet => {
                format!("seat {seat} forfeits: {} ({})\n", failure.kind, failure.detail)
            }
            _ => return,
        };
        let _ = print(&line);
    };
    let report = play_match(&config, &mut progress).map_err(|e| match e {
        MatchError::Interrupted(_) => Failure {
            code: EXIT_INTERRUPTED,
            error: e.into(),
        },
        MatchError::Record { .. } | MatchError::Resume { .. } => Failure::failed(e),
        other => Failure::usage(other),
    })?;
    let names: Vec<String> = report
        .seats
        .iter()
        .map(|s| {
            format!(
                "seat {} {} ({}): place {}",
                s.seat,
                s.label,
                s.name,
                report.outcome.places[s.seat - 1]
            )
        })
        .collect();
    let how = match &report.outcome.reason {
        EndReason::Win => "won".to_string(),
        EndReason::MaxPlies => "drawn by the ply limit".to_string(),
        EndReason::LastStanding => "won as the last side standing".to_string(),
        EndReason::Forfeit { seat, kind } => format!("decided by seat {seat}'s forfeit ({kind})"),
    };
    print(&format!(
        "result: {} after {} plies, {how}\n  {}\nrecord: {}\n",
        report.outcome.protocol_text(),
        report.plies,
        names.join("\n  "),
        report.record.display()
    ))?;
    Ok(EXIT_OK)
}

/// On SIGINT, SIGTERM or SIGHUP: kill every agent and make the running matches stop
/// without recording what the killing caused; the command then exits 130 (from here
/// after a while, should the loop be stuck elsewhere).
pub(super) fn watch_interrupt() -> Result<(), Failure> {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    let mut signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP])
        .context("cannot install signal handlers")
        .map_err(Failure::failed)?;
    std::thread::spawn(move || {
        if let Some(signal) = signals.forever().next() {
            crate::referee::interrupt();
            std::thread::sleep(std::time::Duration::from_secs(5));
            eprintln!("referee: interrupted by signal {signal}; agents stopped");
            std::process::exit(i32::from(EXIT_INTERRUPTED));
        }
    });
    Ok(())
}
