//! `referee pbm …` (play by mail) and `referee audit`.

use std::path::PathBuf;

use anyhow::anyhow;
use clap::{Args, Subcommand};

use super::{print, Failure, EXIT_FAILED, EXIT_OK, EXIT_USAGE};
use crate::game::Options;
use crate::pbm::{self, AuditError, Delivery, MailOutcome, Message, NewMail, PbmError, SeatRef};
use crate::record::{Nmr, PublicKey, SecretKey};

/// How messages are mailed, overriding the game's default (at most one).
#[derive(Debug, Default, Args)]
pub struct SendArgs {
    /// Deliver each seat's message into the Maildir DIR/<seat name or number>/.
    #[arg(long, value_name = "DIR", conflicts_with_all = ["sendmail", "smtp"])]
    outbox: Option<PathBuf>,
    /// Deliver through a sendmail-compatible command (message on stdin, `-i -f FROM -- ADDRESS`).
    #[arg(long, value_name = "CMD", conflicts_with = "smtp")]
    sendmail: Option<String>,
    /// Deliver to the SMTP server at HOST:PORT (unencrypted: for one on this machine).
    #[arg(long, value_name = "HOST:PORT")]
    smtp: Option<String>,
}

impl SendArgs {
    fn given(self) -> Option<Delivery> {
        match (self.outbox, self.sendmail, self.smtp) {
            (Some(d), _, _) => Some(Delivery::Outbox(d)),
            (_, Some(c), _) => Some(Delivery::Sendmail(c)),
            (_, _, Some(a)) => Some(Delivery::Smtp(a)),
            _ => None,
        }
    }
}

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
        /// A player's mail address, once per seat in seat order (or never): the game
        /// then takes mail (`pbm mail`, `pbm inbox`), and each seat gets a password.
        #[arg(long = "address", value_name = "ADDRESS")]
        addresses: Vec<String>,
        /// Sign the record and every message with this secret key (`referee keygen`).
        #[arg(long, value_name = "FILE")]
        key: Option<PathBuf>,
        /// The judge's address, the From of every message mailed (default referee@localhost).
        #[arg(long, value_name = "ADDRESS")]
        from: Option<String>,
        /// How messages are mailed, kept as the game's default.
        #[command(flatten)]
        send: SendArgs,
        /// Time each seat has to act, e.g. 72h, 30m, 2d (enforced by `pbm tick`).
        #[arg(long, value_name = "DURATION", value_parser = pbm::parse_duration)]
        deadline: Option<u64>,
        /// Remind the seat to act this long before its deadline, once a turn.
        #[arg(long, value_name = "DURATION", value_parser = pbm::parse_duration)]
        reminder: Option<u64>,
        /// What a missed deadline does (default forfeit).
        #[arg(long, value_enum)]
        nmr: Option<Nmr>,
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
        /// How messages are mailed, instead of the game's default.
        #[command(flatten)]
        send: SendArgs,
    },
    /// Process one mail (RFC 5322) read from stdin; prints the messages to send.
    Mail {
        /// The record.
        record: PathBuf,
        /// Append each seat's messages to DIR/seat-N.txt instead of printing them.
        #[arg(long, value_name = "DIR")]
        outdir: Option<PathBuf>,
        /// How messages are mailed, instead of the game's default.
        #[command(flatten)]
        send: SendArgs,
    },
    /// Process every new mail of a Maildir (new/ to cur/), each exactly once.
    Inbox {
        /// The record.
        record: PathBuf,
        /// The Maildir.
        #[arg(long, value_name = "DIR")]
        maildir: PathBuf,
        /// Append each seat's messages to DIR/seat-N.txt instead of printing them.
        #[arg(long, value_name = "DIR")]
        outdir: Option<PathBuf>,
        /// How messages are mailed, instead of the game's default.
        #[command(flatten)]
        send: SendArgs,
    },
    /// Send again the messages a failed delivery kept in RECORD.unsent/.
    Send {
        /// The record.
        record: PathBuf,
        /// How messages are mailed, instead of the game's default.
        #[command(flatten)]
        send: SendArgs,
    },
    /// Send due reminders and apply the missed-move rule to passed deadlines (run
    /// it from cron or a timer); prints the messages to send.
    Tick {
        /// The record.
        record: PathBuf,
        /// Append each seat's messages to DIR/seat-N.txt instead of printing them.
        #[arg(long, value_name = "DIR")]
        outdir: Option<PathBuf>,
        /// How messages are mailed, instead of the game's default.
        #[command(flatten)]
        send: SendArgs,
    },
    /// A seat resigns.
    Resign {
        /// The record.
        record: PathBuf,
        /// The seat resigning: its number or its player's name.
        #[arg(long)]
        seat: SeatRef,
        /// How messages are mailed, instead of the game's default.
        #[command(flatten)]
        send: SendArgs,
    },
}

fn failure(e: PbmError) -> Failure {
    match e {
        PbmError::Io(_) | PbmError::Invalid(_) => Failure::failed(anyhow!(e)),
        _ => Failure::usage(anyhow!(e)),
    }
}

/// Reads one mail from stdin, refusing more than [`pbm::MAX_MAIL`] bytes.
fn read_stdin() -> Result<Vec<u8>, Failure> {
    use std::io::Read;
    let mut bytes = Vec::new();
    std::io::stdin()
        .take(pbm::MAX_MAIL as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| Failure::usage(anyhow!("cannot read the mail on stdin: {e}")))?;
    if bytes.len() > pbm::MAX_MAIL {
        return Err(Failure::usage(anyhow!(
            "a mail has at most {} bytes",
            pbm::MAX_MAIL
        )));
    }
    Ok(bytes)
}

/// Mails the messages by `how`, or appends each to `outdir/seat-N.txt`, or prints
/// them. A failed mailing exits 1 after the game was updated: the error says so.
fn deliver(
    record: &std::path::Path,
    messages: &[Message],
    outdir: Option<&std::path::Path>,
    how: Option<&Delivery>,
) -> Result<(), Failure> {
    let dir = match (outdir, how) {
        (Some(dir), _) => dir,
        (None, Some(how)) => {
            let sent = pbm::send(record, messages, how).map_err(failure)?;
            eprintln!("referee: {sent} messages mailed by {}", how.describe());
            return Ok(());
        }
        (None, None) => return show(messages),
    };
    use std::io::Write;
    std::fs::create_dir_all(dir).map_err(|e| Failure::failed(anyhow!("{}: {e}", dir.display())))?;
    for m in messages {
        let file = dir.join(format!("seat-{}.txt", m.seat));
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&file)
            .and_then(|mut f| writeln!(f, "{}", m.text))
            .map_err(|e| Failure::failed(anyhow!("{}: {e}", file.display())))?;
    }
    Ok(())
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
            addresses,
            key,
            from,
            send,
            deadline,
            reminder,
            nmr,
            record,
        } => {
            let options = Options::parse(options.iter().map(String::as_str)).map_err(Failure::usage)?;
            let key = key.as_deref().map(secret_key).transpose()?;
            let mail = NewMail {
                from,
                delivery: send.given(),
            };
            let rule = pbm::deadline_rule(deadline, reminder, nmr).map_err(failure)?;
            let messages = pbm::new_game(
                &record,
                &game,
                &options,
                &seats,
                &addresses,
                key.as_ref(),
                &mail,
                rule,
            )
            .map_err(failure)?;
            let how = pbm::delivery(&record, None).map_err(failure)?;
            deliver(&record, &messages, None, how.as_ref())?;
        }
        PbmCommand::Tick { record, outdir, send } => {
            let how = pbm::delivery(&record, send.given()).map_err(failure)?;
            let messages = pbm::tick(&record).map_err(failure)?;
            deliver(&record, &messages, outdir.as_deref(), how.as_ref())?;
        }
        PbmCommand::Mail { record, outdir, send } => {
            let how = pbm::delivery(&record, send.given()).map_err(failure)?;
            let bytes = read_stdin()?;
            match pbm::mail(&record, &bytes).map_err(failure)? {
                MailOutcome::Replied(messages) => {
                    deliver(&record, &messages, outdir.as_deref(), how.as_ref())?
                }
                MailOutcome::Duplicate => {
                    eprintln!("referee: this mail was processed before; nothing was done again")
                }
            }
        }
        PbmCommand::Inbox {
            record,
            maildir,
            outdir,
            send,
        } => {
            let how = pbm::delivery(&record, send.given()).map_err(failure)?;
            let report = pbm::inbox(&record, &maildir).map_err(failure)?;
            // The mails are processed whatever becomes of the replies: say so first.
            for r in &report.refused {
                eprintln!("referee: {}", crate::text::printable(r));
            }
            eprintln!(
                "referee: inbox: {} mails processed, {} refused, {} processed before",
                report.processed,
                report.refused.len(),
                report.duplicates
            );
            deliver(&record, &report.messages, outdir.as_deref(), how.as_ref())?;
            if !report.refused.is_empty() {
                return Ok(EXIT_USAGE);
            }
        }
        PbmCommand::Send { record, send } => {
            let how = pbm::delivery(&record, send.given())
                .map_err(failure)?
                .ok_or_else(|| Failure::usage(anyhow!("no delivery: give --outbox, --sendmail or --smtp")))?;
            let sent = pbm::resend(&record, &how).map_err(failure)?;
            eprintln!("referee: {sent} messages sent again by {}", how.describe());
        }
        PbmCommand::Status { record } => {
            let mut text = pbm::status(&record).map_err(failure)?;
            if let n @ 1.. = pbm::unsent(&record) {
                text.push_str(&format!(
                    "unsent: {n} mails kept by a failed delivery; `referee pbm send {}` sends them\n",
                    record.display()
                ));
            }
            print(&text)?
        }
        PbmCommand::View { record, seat } => {
            let seat = pbm::seat_of(&record, &seat).map_err(failure)?;
            show(&[pbm::view(&record, seat).map_err(failure)?])?
        }
        PbmCommand::Play {
            record,
            seat,
            action,
            send,
        } => {
            let how = pbm::delivery(&record, send.given()).map_err(failure)?;
            let seat = pbm::seat_of(&record, &seat).map_err(failure)?;
            let messages = pbm::play(&record, seat, &action).map_err(failure)?;
            deliver(&record, &messages, None, how.as_ref())?
        }
        PbmCommand::Resign { record, seat, send } => {
            let how = pbm::delivery(&record, send.given()).map_err(failure)?;
            let seat = pbm::seat_of(&record, &seat).map_err(failure)?;
            let messages = pbm::resign(&record, seat).map_err(failure)?;
            deliver(&record, &messages, None, how.as_ref())?
        }
    }
    Ok(EXIT_OK)
}

/// Reads a secret key file; a bad one is bad input (exit 2).
pub(super) fn secret_key(path: &std::path::Path) -> Result<SecretKey, Failure> {
    SecretKey::read(path).map_err(Failure::usage)
}

/// Reads a public key file; a bad one is bad input (exit 2).
pub(super) fn public_key(path: &std::path::Path) -> Result<PublicKey, Failure> {
    PublicKey::read(path).map_err(Failure::usage)
}

/// Runs `referee audit`, checking the judge's signatures too when given `key`.
pub fn audit(
    record: &std::path::Path,
    seat: SeatRef,
    transcript: &std::path::Path,
    key: Option<&std::path::Path>,
) -> Result<u8, Failure> {
    let key = key.map(public_key).transpose()?;
    let seat = pbm::seat_of(record, &seat).map_err(failure)?;
    let text = std::fs::read_to_string(transcript)
        .map_err(|e| Failure::usage(anyhow!("{}: {e}", transcript.display())))?;
    match pbm::audit(record, seat, &text, key.as_ref()) {
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
