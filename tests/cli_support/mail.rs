//! Reading back the mails `pbm` sends to the seats, with `mail-parser`: the shape of
//! a mail (the text and the attached picture) and the picture `show` draws for the
//! same seat and ply, which the attachment must be byte for byte.

use std::path::Path;

use mail_parser::{MessageParser, MimeHeaders};

use super::{referee_in, text};

/// What a judge's mail to a seat carries, checked for shape.
pub struct Mailed {
    /// Its Subject.
    pub subject: String,
    /// The text part, line ends as sent (CRLF).
    pub body: String,
    /// The attached picture's file name.
    pub name: String,
    /// The attached picture, decoded.
    pub svg: String,
    /// The ply the Subject names.
    pub ply: u32,
}

/// Parses a judge's mail to seat `seat` of a `game` and checks its shape: a
/// multipart/mixed message of a text/plain part and exactly one image/svg+xml
/// attachment named `GAME-plyK-seatN.svg`, K the Subject's ply.
pub fn mailed(bytes: &[u8], game: &str, seat: usize) -> Mailed {
    let m = MessageParser::default().parse(bytes).expect("a mail message");
    assert!(m.is_content_type("multipart", "mixed"), "a multipart/mixed mail");
    let subject = m.subject().expect("a Subject").to_string();
    let ply: u32 = subject
        .rsplit_once(", ply ")
        .and_then(|(_, k)| k.parse().ok())
        .unwrap_or_else(|| panic!("a Subject ending in its ply: {subject}"));
    assert_eq!(m.text_body_count(), 1, "one text part");
    let body = m.body_text(0).expect("a text part").into_owned();
    assert_eq!(m.attachment_count(), 1, "one attachment: the picture");
    let part = m.attachment(0).expect("the picture");
    assert!(
        part.is_content_type("image", "svg+xml"),
        "an image/svg+xml attachment"
    );
    let disposition = part.content_disposition().expect("a Content-Disposition");
    assert_eq!(disposition.ctype(), "attachment", "an attachment, not inline");
    let name = part.attachment_name().expect("a file name").to_string();
    assert_eq!(name, format!("{game}-ply{ply}-seat{seat}.svg"));
    let svg = String::from_utf8(part.contents().to_vec()).expect("the picture is UTF-8");
    Mailed {
        subject,
        body,
        name,
        svg,
        ply,
    }
}

/// What `referee show RECORD --format svg --ply K --seat N` prints, run in `dir`.
pub fn show_svg(dir: &Path, record: &str, ply: u32, seat: usize) -> String {
    let (ply, seat) = (ply.to_string(), seat.to_string());
    let out = referee_in(dir)
        .args(["show", record, "--format", "svg", "--ply", &ply, "--seat", &seat])
        .output()
        .expect("the binary runs");
    assert!(out.status.success(), "show: {}", text(&out.stderr));
    text(&out.stdout)
}
