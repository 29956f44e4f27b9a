//! `referee pbm …` (play by mail) and `referee audit`.

use std::path::PathBuf;

use anyhow::anyhow;
use clap::Subcommand;

use super::{print, Failure, EXIT_FAILED, EXIT_OK};
use crate::game::{Options, Seat};
use crate::pbm::{self, AuditError, Message, PbmError, SeatRef};

/// The `pbm` subcommands.
#[derive(Debug, Subcommand)]
pub enum PbmCommand {
    /// Create a game in a new record; prints the first message for every seat.
    New {
        /// Game: pegchow, telka, idoubtit or multichess.
        #[arg(long)]
        game: String,
        /// Game option KEY=VALUE, repeatable.
        #[arg(short = 'o', long = "option", value_name = "KEY=VALUE")]
        options: Vec<String>,
        /// A player's name, once per seat in seat order.
        #[arg(long = "seat", value_name = "NAME", required = true)]
        seats: Vec<String>,
        /// The record file to create.
        record: PathBuf,
    },
    /// Whose turn it is and what is expected.
    Status {
        /// The record.
        record: PathBuf,
    },
    /// The message to send to one seat now.
    View {
        /// The record.
        record: PathBuf,
        /// The seat: its number or its player's name.
        #[arg(long)]
        seat: SeatRef,
    },
    /// Apply one seat's action; prints the message for every seat.
    Play {
        /// The record.
        record: PathBuf,
        /// The seat acting: its number or its player's name.
        #[arg(long)]
        seat: SeatRef,
        /// The action, as the game writes it.
        action: String,
    },
    /// A seat resigns.
    Resign {
        /// The record.
        record: PathBuf,
        /// The seat resigning: its number or its player's name.
        #[arg(long)]
        seat: SeatRef,
    },
}

fn failure(e: PbmError) -> Failure {
    match e {
        PbmError::Io(_) | PbmError::Invalid(_) => Failure::failed(anyhow!(e)),
        _ => Failure::usage(anyhow!(e)),
    }
}

fn show(messages: &[Message]) -> Result<(), Failure> {
    let text: String = messages
        .iter()
        .map(|m| m.text.clone())
        .collect::<Vec<_>>()
        .join("\n");
    print(&text)
}

/// Runs one `pbm` subcommand.
pub fn run(command: PbmCommand) -> Result<u8, Failure> {
    match command {
        PbmCommand::New {
            game,
            options,
            seats,
            record,
        } => {
            let options = Options::parse(options.iter().map(String::as_str)).map_err(Failure::usage)?;
            show(&pbm::new_game(&record, &game, &options, &seats).map_err(failure)?)?;
        }
        PbmCommand::Status { record } => print(&pbm::status(&record).map_err(failure)?)?,
        PbmCommand::View { record, seat } => {
            let seat = pbm::seat_of(&record, &seat).map_err(failure)?;
            show(&[pbm::view(&record, seat).map_err(failure)?])?
        }
        PbmCommand::Play { record, seat, action } => {
            let seat = pbm::seat_of(&record, &seat).map_err(failure)?;
            show(&pbm::play(&record, seat, &action).map_err(failure)?)?
        }
        PbmCommand::Resign { record, seat } => {
            let seat = pbm::seat_of(&record, &seat).map_err(failure)?;
            show(&pbm::resign(&record, seat).map_err(failure)?)?
        }
    }
    Ok(EXIT_OK)
}

/// Runs `referee audit`.
pub fn audit(record: &std::path::Path, seat: Seat, transcript: &std::path::Path) -> Result<u8, Failure> {
    let text = std::fs::read_to_string(transcript)
        .map_err(|e| Failure::usage(anyhow!("{}: {e}", transcript.display())))?;
    match pbm::audit(record, seat, &text) {
        Ok(report) => {
            print(&format!(
                "audit ok: {} messages to seat {seat}, {} events, all consistent with {}\n",
                report.messages,
                report.events,
                record.display()
            ))?;
            Ok(EXIT_OK)
        }
        Err(AuditError::Input(e)) => Err(failure(e)),
        Err(AuditError::Problems(problems)) => {
            for p in &problems {
                eprintln!("referee: audit: {}", crate::text::printable(p));
            }
            Ok(EXIT_FAILED)
        }
    }
}
