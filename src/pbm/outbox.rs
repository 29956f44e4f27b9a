//! Mail out: every message to a seat as an RFC 5322 message built by `lettre` (To the
//! seat's address, From the judge's, Subject, Date, Message-ID, In-Reply-To and
//! References when it answers the seat's mail; the text, and the seat's picture
//! attached), and how a game sends them, kept in
//! `<record>.mailout` (mode 0600: the addresses as given, the judge's address and the
//! default delivery). Its own room because it is the one place that decides what goes
//! out to whom; `smtp` carries the messages.

use std::fs::OpenOptions;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use lettre::message::header::{ContentTransferEncoding, ContentType};
use lettre::message::{Attachment, Body, Mailbox, MultiPart, SinglePart};
use serde::{Deserialize, Serialize};

use super::store::{io, side, Locked};
use super::{smtp, Message, Open, PbmError};
use crate::game::Seat;
use crate::record::salted_digest;

/// The judge's address when `pbm new` is given no `--from`.
pub const DEFAULT_FROM: &str = "referee@localhost";

/// How a game's messages are sent.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Delivery {
    /// Into a Maildir per seat: `DIR/<seat name or number>/{tmp,new,cur}`.
    Outbox(PathBuf),
    /// Through a `sendmail`-compatible command: `CMD -i -f FROM -- ADDRESS`.
    Sendmail(String),
    /// To an SMTP server at `HOST:PORT`, unencrypted (for a server on this machine).
    Smtp(String),
}

impl Delivery {
    /// Checks a delivery given on the command line, so a bad one changes nothing.
    pub fn check(&self) -> Result<(), PbmError> {
        let bad = |why: String| Err(PbmError::Usage(why));
        match self {
            Delivery::Outbox(dir) if dir.as_os_str().is_empty() => {
                bad("--outbox: an empty directory name".into())
            }
            Delivery::Sendmail(cmd) => match shell_words::split(cmd) {
                Ok(w) if !w.is_empty() => Ok(()),
                Ok(_) => bad("--sendmail: an empty command".into()),
                Err(e) => bad(format!("--sendmail `{}`: {e}", crate::text::printable(cmd))),
            },
            Delivery::Smtp(at) => smtp::host_port(at).map(|_| ()),
            Delivery::Outbox(_) => Ok(()),
        }
    }

    /// This delivery with a relative outbox made absolute, so that later commands
    /// run elsewhere deliver to the same place.
    fn absolute(self) -> Result<Delivery, PbmError> {
        match self {
            Delivery::Outbox(dir) => std::path::absolute(&dir).map(Delivery::Outbox).map_err(io(&dir)),
            d => Ok(d),
        }
    }

    /// How it is named in a report.
    pub fn describe(&self) -> String {
        match self {
            Delivery::Outbox(dir) => format!("the outbox {}", dir.display()),
            Delivery::Sendmail(cmd) => format!("`{}`", crate::text::printable(cmd)),
            Delivery::Smtp(at) => format!("SMTP {}", crate::text::printable(at)),
        }
    }
}

/// What `pbm new` is given for mail out.
#[derive(Clone, Debug, Default)]
pub struct NewMail {
    /// The judge's address (`--from`); [`DEFAULT_FROM`] when none.
    pub from: Option<String>,
    /// The game's default delivery; none prints the messages.
    pub delivery: Option<Delivery>,
}

/// What `<record>.mailout` holds.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(super) struct MailOut {
    /// The judge's address, the From of every message.
    pub(super) from: String,
    /// Each seat's address as given at `pbm new`, in seat order.
    pub(super) to: Vec<String>,
    /// The game's default delivery; none prints the messages.
    pub(super) delivery: Option<Delivery>,
}

fn mailbox(flag: &str, address: &str) -> Result<Mailbox, PbmError> {
    address.parse::<Mailbox>().map_err(|e| {
        PbmError::Usage(format!(
            "{flag} `{}`: not a mail address: {e}",
            crate::text::printable(address)
        ))
    })
}

/// Checks what `pbm new` was given for mail out before anything is written:
/// addresses `lettre` can write, and mail out only for a game that takes mail.
pub(super) fn check_new(new: &NewMail, addresses: &[String]) -> Result<(), PbmError> {
    if addresses.is_empty() && (new.from.is_some() || new.delivery.is_some()) {
        return Err(PbmError::Usage(
            "--from, --outbox, --sendmail and --smtp need one --address per seat: a game without addresses mails no one".into(),
        ));
    }
    if let Some(f) = &new.from {
        mailbox("--from", f)?;
    }
    for a in addresses {
        mailbox("--address", a)?;
    }
    new.delivery.as_ref().map_or(Ok(()), Delivery::check)
}

/// Writes `<record>.mailout` for a new game that takes mail; the caller holds the
/// lock and the record does not exist yet.
pub(super) fn write_new(
    _held: &Locked,
    path: &Path,
    new: &NewMail,
    addresses: &[String],
) -> Result<(), PbmError> {
    let file = side(path, ".mailout");
    // Left by a `new` that died before its record was written, it belongs to no game.
    let _ = std::fs::remove_file(&file);
    if addresses.is_empty() {
        return Ok(());
    }
    let out = MailOut {
        from: new.from.as_deref().unwrap_or(DEFAULT_FROM).to_string(),
        to: addresses.to_vec(),
        delivery: new.delivery.clone().map(Delivery::absolute).transpose()?,
    };
    let text = serde_json::to_string(&out).map_err(|e| PbmError::Io(e.to_string()))?;
    use std::os::unix::fs::OpenOptionsExt;
    let mut f = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&file)
        .map_err(io(&file))?;
    writeln!(f, "{text}")
        .and_then(|_| f.sync_all())
        .map_err(io(&file))
}

/// The game's mail out settings; `None` for a game that takes no mail.
pub(super) fn read(path: &Path) -> Result<Option<MailOut>, PbmError> {
    let file = side(path, ".mailout");
    let text = match std::fs::read_to_string(&file) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io(&file)(e)),
    };
    serde_json::from_str(&text)
        .map(Some)
        .map_err(|e| PbmError::Record(format!("{}: {e}", file.display())))
}

/// The delivery for a command on the record at `path`: `given` if any, else the
/// game's default; `None` prints. Checked before the command changes anything.
pub fn delivery(path: &Path, given: Option<Delivery>) -> Result<Option<Delivery>, PbmError> {
    let stored = read(path)?;
    match (given, stored) {
        (Some(_), None) => Err(PbmError::Usage(format!(
            "{}: this game mails no one (it was created without --address)",
            path.display()
        ))),
        (Some(d), Some(_)) => {
            d.check()?;
            Ok(Some(d.absolute()?))
        }
        (None, stored) => Ok(stored.and_then(|s| s.delivery)),
    }
}

/// Sends every message to its seat's address by `how`; returns how many were sent.
/// Every message is tried; one not sent is kept, whole, in `<record>.unsent/` (a
/// Maildir per seat) for [`resend`], and the error says how many and for whom.
pub fn send(path: &Path, messages: &[Message], how: &Delivery) -> Result<usize, PbmError> {
    let out = settings(path)?;
    let open = Open::read(path)?;
    let names = open.names();
    let mut failed = Vec::new();
    for m in messages {
        let mail = build(&open, &out, m)?;
        let bytes = mail.formatted();
        if let Err(e) = smtp::deliver(how, &names, m.seat, mail.envelope(), &bytes) {
            let kept = smtp::to_maildir(&unsent_dir(path, &names, m.seat), &bytes);
            failed.push((m.seat, e, kept.is_ok()));
        }
    }
    let Some((_, first, _)) = failed.first() else {
        return Ok(messages.len());
    };
    let seats: Vec<String> = failed.iter().map(|(s, _, _)| s.to_string()).collect();
    let again = if failed.iter().all(|(_, _, kept)| *kept) {
        format!(
            "they are kept in {}: `referee pbm send {}` sends them again",
            side(path, ".unsent").display(),
            path.display()
        )
    } else {
        format!(
            "`referee pbm view {} --seat N` makes a seat's message again",
            path.display()
        )
    };
    Err(PbmError::Io(format!(
        "{} of {} messages, for seat {}, not sent by {} ({first}); the game is updated all the same, and {again}",
        failed.len(),
        messages.len(),
        seats.join(", "),
        how.describe(),
    )))
}

/// Sends again, by `how`, every mail kept in `<record>.unsent/`, oldest first,
/// removing each once sent; stops at the first that fails (it stays). Returns how
/// many were sent.
pub fn resend(path: &Path, how: &Delivery) -> Result<usize, PbmError> {
    let out = settings(path)?;
    // Under the record's lock, so two resends cannot send one mail twice.
    let _held = super::update::locked(path)?;
    let names = Open::read(path)?.names();
    let from = mailbox("from", &out.from)?.email;
    let mut sent = 0;
    for seat in Seat::all(names.len()) {
        let new = unsent_dir(path, &names, seat).join("new");
        let mut files: Vec<PathBuf> = match std::fs::read_dir(&new) {
            Ok(r) => r.filter_map(Result::ok).map(|e| e.path()).collect(),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(io(&new)(e)),
        };
        files.sort();
        let to = out.to.get(seat.index()).map_or("", String::as_str);
        let envelope =
            lettre::address::Envelope::new(Some(from.clone()), vec![mailbox("--address", to)?.email])
                .map_err(|e| PbmError::Record(format!("seat {seat}: {e}")))?;
        for file in files {
            let bytes = std::fs::read(&file).map_err(io(&file))?;
            smtp::deliver(how, &names, seat, &envelope, &bytes)?;
            std::fs::remove_file(&file).map_err(io(&file))?;
            sent += 1;
        }
    }
    Ok(sent)
}

/// How many mails a failed delivery kept in `<record>.unsent/` for [`resend`].
pub fn unsent(path: &Path) -> usize {
    let count = |dir: PathBuf| std::fs::read_dir(dir.join("new")).map_or(0, Iterator::count);
    std::fs::read_dir(side(path, ".unsent")).map_or(0, |seats| {
        seats.filter_map(Result::ok).map(|e| count(e.path())).sum()
    })
}

/// Where a seat's unsent mails are kept: a Maildir in `<record>.unsent/`.
fn unsent_dir(path: &Path, names: &[String], seat: Seat) -> PathBuf {
    side(path, ".unsent").join(smtp::seat_dir(names, seat))
}

/// The game's mail out settings, for a game that mails.
fn settings(path: &Path) -> Result<MailOut, PbmError> {
    read(path)?.ok_or_else(|| PbmError::Usage(format!("{}: this game mails no one", path.display())))
}

/// The RFC 5322 message carrying `m` to its seat: its text, and its picture as an
/// `image/svg+xml` attachment. Every header is one the seat may know: its own
/// address, the judge's, the game and ply, and ids salted with the game's secret salt
/// (so they tell nothing until the salt is revealed); the picture was drawn from
/// the seat's view alone ([`super::Picture`]).
pub(super) fn build(open: &Open, out: &MailOut, m: &Message) -> Result<lettre::Message, PbmError> {
    let to = out
        .to
        .get(m.seat.index())
        .ok_or_else(|| PbmError::Record(format!("no address for seat {}", m.seat)))?;
    let from = mailbox("from", &out.from)?;
    let domain = out
        .from
        .rsplit_once('@')
        .map_or("localhost", |(_, d)| d.trim_end_matches('>'));
    // The same message made again (a resend) keeps its id, so a reader shows it once.
    let data = format!("{}\n{}\n{}", m.seat, m.reply_to.as_deref().unwrap_or(""), m.text);
    let digest = salted_digest(open.salt()?, "message-id", &data);
    let id = format!("<{}.seat{}@{domain}>", &digest[..32], m.seat);
    let ply = m.picture.as_ref().map_or(open.replay.game.plies(), |p| p.ply);
    let mut b = lettre::Message::builder()
        .from(from)
        .to(mailbox("--address", to)?)
        .subject(subject(open, m.seat, ply))
        .date_now()
        .message_id(Some(id));
    if let Some(r) = &m.reply_to {
        let r = format!("<{}>", r.trim_matches(['<', '>']));
        b = b.in_reply_to(r.clone()).references(r);
    }
    let cannot = |e: String| PbmError::Io(format!("cannot build the message to seat {}: {e}", m.seat));
    let text = SinglePart::plain(m.text.clone());
    // Only a message made while the game mailed no one has none: sent as text alone.
    let Some(picture) = &m.picture else {
        return b.singlepart(text).map_err(|e| cannot(e.to_string()));
    };
    // An attachment, not a picture linked from an HTML part: mail programs that block
    // remote content still show attachments, and the text part stays the message
    // for plain-text readers (and for `audit`). `mixed`, as nothing refers to it.
    let svg = ContentType::parse("image/svg+xml").map_err(|e| cannot(e.to_string()))?;
    let name = format!(
        "{}-ply{}-seat{}.svg",
        open.replay.header.game, picture.ply, m.seat
    );
    // As bytes in base64, so it arrives byte for byte what `show` prints: given a
    // string, lettre turns its line ends into CRLF.
    let bytes = picture.svg.clone().into_bytes();
    let body = Body::new_with_encoding(bytes, ContentTransferEncoding::Base64)
        .map_err(|_| cannot("the picture cannot be encoded".into()))?;
    let parts = MultiPart::mixed()
        .singlepart(text)
        .singlepart(Attachment::new(name).body(body, svg));
    b.multipart(parts).map_err(|e| cannot(e.to_string()))
}

/// `referee: telka game, seat 2 (bob), ply 3`: the game, the record's name, the seat
/// and how many actions were played (`ply`, the message's), all public.
fn subject(open: &Open, seat: Seat, ply: u32) -> String {
    let name = open
        .path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    format!(
        "referee: {} {}, seat {seat} ({}), ply {}",
        open.replay.header.game,
        crate::text::printable(&name),
        open.names()[seat.index()],
        ply
    )
}
