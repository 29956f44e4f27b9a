//! `referee match`: one game between agent processes.

use std::path::PathBuf;

use crate::agent::HiddenPath;

use anyhow::{anyhow, Context};
use clap::Args;

use super::args::{AgentArgs, ClockArgs, UnisolatedWarning};
use super::{print, Failure, EXIT_INTERRUPTED, EXIT_OK};
use crate::agent::AgentSpec;
use crate::builtin::Strategy;
use crate::game::{GameId, Options, Seat};
use crate::record::{Durability, Header};
use crate::referee::{
    default_record_path, play_match, AgentCwd, MatchConfig, MatchError, Progress, SeatAgent,
};
use crate::rng::Rng;

/// Arguments of `referee match`.
#[derive(Debug, Args)]
pub struct MatchArgs {
    /// Game: pegchow, telka, idoubtit or multichess.
    #[arg(long, required_unless_present = "resume", value_parser = super::args::game_id)]
    game: Option<GameId>,
    /// Continue the unfinished game of this record (game, options, seed, time control
    /// and agent commands come from its header; --agent and --tc/--st override).
    #[arg(long, value_name = "RECORD", conflicts_with_all = ["game", "options", "state", "record", "seed"])]
    resume: Option<PathBuf>,
    /// With --resume: start the agents whose commands the record's header names (for
    /// the seats not given with --agent). Only for records you trust: a record from
    /// someone else could name any command.
    #[arg(long, requires = "resume")]
    trust_record_commands: bool,
    /// When record lines are forced to disk: after every line, after the result, or
    /// never (lines are always flushed as they are written).
    #[arg(long, value_enum, default_value = "game")]
    fsync: Durability,
    /// Game option KEY=VALUE, repeatable (e.g. -o players=4).
    #[arg(short = 'o', long = "option", value_name = "KEY=VALUE")]
    options: Vec<String>,
    /// Agent command for the next seat, repeatable, in seat order; one quoted string
    /// per agent, or builtin:random / builtin:greedy. Seats without one get --fill.
    #[arg(long = "agent", value_name = "CMD", value_parser = super::args::agent_command)]
    agents: Vec<String>,
    /// Built-in agent for the seats not given with --agent.
    #[arg(long, value_enum, default_value = "greedy")]
    fill: Strategy,
    #[command(flatten)]
    clock: ClockArgs,
    #[command(flatten)]
    agent: AgentArgs,
    /// `setoption` for one seat's agent: SEAT:NAME=VALUE, repeatable.
    #[arg(long = "setoption", value_name = "SEAT:NAME=VALUE")]
    setoptions: Vec<String>,
    /// Seed for the built-in agents (default: from the clock; always recorded).
    #[arg(long)]
    seed: Option<u64>,
    /// Start from this state string instead of the start position; @FILE reads it
    /// from FILE (a state with hidden parts on a command line is visible to every
    /// process of the machine).
    #[arg(long, value_name = "STATE|@FILE", value_parser = super::args::state_text)]
    state: Option<super::args::StateArg>,
    /// Record file to create (default: records/<game>-<time>-<seed>.jsonl).
    #[arg(long)]
    record: Option<PathBuf>,
    /// Sign the record with this secret key (`referee keygen`): after its header and
    /// after its result.
    #[arg(long, value_name = "FILE")]
    sign: Option<PathBuf>,
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
fn config(args: &MatchArgs) -> Result<(MatchConfig, UnisolatedWarning), Failure> {
    // When resuming, the record's header says what was being played.
    let header = match &args.resume {
        Some(path) => {
            let replay = crate::record::replay_file(path)
                .map_err(|e| Failure::usage(anyhow!("cannot resume {}: {e}", path.display())))?;
            Some(replay.header)
        }
        None => None,
    };
    let (game, options, state) = match &header {
        Some(h) => (
            GameId::parse(&h.game).map_err(Failure::usage)?,
            h.options.clone(),
            h.state.clone(),
        ),
        None => (
            args.game.expect("clap requires --game without --resume"),
            Options::parse(args.options.iter().map(String::as_str)).map_err(Failure::usage)?,
            args.state.as_ref().map(|s| s.text.clone()),
        ),
    };
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
    let control = args.clock.control(recorded_tc.as_deref())?;
    let seed = header.as_ref().map(|h| h.seed).or(args.seed).unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(1)
    });
    let mut agents = seat_agents(args, header.as_ref(), seats, seed)?;
    add_setoptions(args, &mut agents)?;
    let agent_cwd = agent_cwd(args)?;
    let record = match (&args.resume, &args.record) {
        (Some(path), _) | (None, Some(path)) => path.clone(),
        (None, None) => default_record_path(game, seed),
    };
    let (isolation, warning) = args.agent.isolation()?;
    let config = MatchConfig {
        game,
        options,
        state,
        agents,
        control,
        margin: args.clock.margin(),
        startup: args.agent.startup(),
        quit_grace: args.agent.quit_grace(),
        seed,
        record,
        log_dir: args.log_dir.clone(),
        resume: args.resume.is_some(),
        durability: args.fsync,
        agent_cwd,
        opening: Vec::new(),
        isolation,
        network: args.agent.network(),
        hidden: hidden_paths(args),
        sign: args.sign.as_deref().map(super::pbm::secret_key).transpose()?,
    };
    Ok((config, warning))
}

/// What agents may not see besides the record and the log directory: the key,
/// the state file, and `--hide`.
fn hidden_paths(args: &MatchArgs) -> Vec<HiddenPath> {
    let state = args.state.as_ref().and_then(|s| s.file.clone());
    let files = args.sign.iter().cloned().chain(state).map(HiddenPath::file);
    files.chain(args.agent.hidden()).collect()
}

/// Each seat's agent: the one given with `--agent` (a `builtin:` name becomes the
/// referee's own agent), else on resume the command the record names if trusted,
/// else the `--fill` agent; with the agent limits and environment of the arguments.
fn seat_agents(
    args: &MatchArgs,
    header: Option<&Header>,
    seats: usize,
    seed: u64,
) -> Result<Vec<SeatAgent>, Failure> {
    let exe = std::env::current_exe()
        .context("cannot find the referee executable")
        .map_err(Failure::failed)?;
    let exe = shell_words::quote(&exe.to_string_lossy()).into_owned();
    Seat::all(seats)
        .map(|seat| -> Result<SeatAgent, Failure> {
            let recorded = header
                .and_then(|h| h.seats.get(seat.index()))
                .and_then(|s| s.command.clone());
            let seeded = Rng::derive(seed, seat.number() as u64);
            let (command, builtin_seed) = match (args.agents.get(seat.index()), recorded) {
                (Some(given), _) => match Strategy::from_agent_command(given) {
                    Some(Ok(strategy)) => (strategy.command_line(&exe, seeded), Some(seeded)),
                    _ => (given.to_string(), None),
                },
                (None, Some(recorded)) if args.trust_record_commands => (recorded, None),
                (None, Some(_)) => {
                    return Err(Failure::usage(anyhow!(
                        "--resume: seat {seat}'s agent would be the command the record names; give it with --agent, or add --trust-record-commands if the record is yours"
                    )))
                }
                (None, None) => (args.fill.command_line(&exe, seeded), Some(seeded)),
            };
            let mut spec = AgentSpec::new(command);
            spec.env = args.agent.env();
            spec.limits = args.agent.limits();
            Ok(SeatAgent {
                spec,
                options: Vec::new(),
                entrant: None,
                control: None,
                builtin_seed,
            })
        })
        .collect()
}

/// Adds each `--setoption SEAT:NAME=VALUE` to its seat's agent, checked as the
/// protocol requires.
fn add_setoptions(args: &MatchArgs, agents: &mut [SeatAgent]) -> Result<(), Failure> {
    let seats = agents.len();
    for text in &args.setoptions {
        let parsed = text.split_once(':').and_then(|(seat, rest)| {
            let seat = seat.parse::<Seat>().ok()?.at_table(seats).ok()?;
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
    for agent in agents.iter() {
        crate::protocol::agent::check_setoptions(&agent.options)
            .map_err(|e| Failure::usage(anyhow!("--setoption: {e}")))?;
        if agent.builtin_seed.is_some() {
            crate::builtin::check_user_options(&agent.options)
                .map_err(|e| Failure::usage(anyhow!("--setoption: {e}")))?;
        }
    }
    Ok(())
}

/// Where the agents start (`--agent-cwd`).
fn agent_cwd(args: &MatchArgs) -> Result<AgentCwd, Failure> {
    Ok(match args.agent_cwd.as_str() {
        "private" => AgentCwd::Private,
        "inherit" => AgentCwd::Inherit,
        dir if std::path::Path::new(dir).is_dir() => AgentCwd::Dir(PathBuf::from(dir)),
        other => {
            return Err(Failure::usage(anyhow!(
                "--agent-cwd `{other}`: expected private, inherit or an existing directory"
            )))
        }
    })
}

/// Runs `referee match`.
pub fn run(args: MatchArgs) -> Result<u8, Failure> {
    let (config, mut warning) = config(&args)?;
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
    warning.arm();
    let mut progress = |p: Progress<'_>| {
        // The game is under way: the agents started and one of them acted.
        warning.say();
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
            Progress::Forfeit { seat, forfeit } if !quiet => {
                format!("seat {seat} forfeits: {} ({})\n", forfeit.kind, forfeit.detail)
            }
            _ => return,
        };
        let _ = print(&line);
    };
    let played = play_match(&config, &mut progress);
    // One game: nothing is to come for a directory its agents left.
    crate::referee::release_private_dirs();
    let report = played.map_err(|e| match e {
        MatchError::Interrupted(_) => Failure {
            code: EXIT_INTERRUPTED,
            error: e.into(),
        },
        MatchError::Record { .. } | MatchError::Resume { .. } => Failure::failed(e),
        other => Failure::usage(other),
    })?;
    warning.say();
    let labels: Vec<String> = report.seats.iter().map(|s| s.label.clone()).collect();
    let mut text = format!(
        "result: {}, after {} plies\n",
        report.outcome.describe(config.game, &labels),
        report.plies,
    );
    for s in &report.seats {
        let place = crate::game::ordinal(report.outcome.places[s.seat.index()]);
        text.push_str(&format!(
            "  {place:<4} seat {} {} ({})\n",
            s.seat, s.label, s.name
        ));
    }
    text.push_str(&format!("record: {}\n", report.record.display()));
    print(&text)?;
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
