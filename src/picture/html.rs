//! The HTML viewer of a game (`referee show --format html`): one self-contained
//! page with the picture of every ply, a slider and arrow keys to step through
//! them, a choice of view, the event list, the players and the result.
//!
//! Self-contained means it works from a mail attachment or a `file://` URL: no
//! network, no external script, style or font, and a Content-Security-Policy that
//! forbids fetching anything. The pictures are the ones `show --format svg` draws,
//! stored by [`Book`]; the page holds only the views put into the book, so a book of
//! one seat's views makes a page that is safe to send to that seat.

use super::frames::Book;
use super::svg::escape;

/// The page's script: rebuilds the pictures from the book and steps through them.
const SCRIPT: &str = include_str!("viewer.js");
/// The page's style.
const STYLE: &str = include_str!("viewer.css");
/// No request of any kind: the page must open the same offline as online.
const POLICY: &str =
    "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:";

/// What the page says about the game besides its pictures, as public as its views.
#[derive(Clone, Debug)]
pub struct Heading {
    /// The game and its options.
    pub title: String,
    /// One line per seat: its label and who played it.
    pub players: Vec<String>,
    /// The result, or `unfinished`.
    pub result: String,
}

/// The page for `book`, headed by `heading`.
pub fn page(heading: &Heading, book: &Book) -> String {
    let players: String = heading
        .players
        .iter()
        .map(|p| format!("<li>{}</li>", escape(p)))
        .collect();
    let title = escape(&heading.title);
    let result = escape(&heading.result);
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"{POLICY}\">\n\
         <title>{title}</title>\n<style>\n{STYLE}</style>\n</head>\n<body>\n\
         <header>\n<h1>{title}</h1>\n<ul id=\"players\">{players}</ul>\n\
         <p id=\"result\">{result}</p>\n</header>\n{CONTROLS}\
         <main>\n<div id=\"board\"></div>\n<ol id=\"events\"></ol>\n</main>\n\
         <script type=\"application/json\" id=\"data\">{}</script>\n\
         <script>\n{SCRIPT}</script>\n</body>\n</html>\n",
        data(book)
    )
}

/// The view choice and the ply slider with its buttons; the script fills them in.
const CONTROLS: &str = "<nav>\n<label>View <select id=\"view\"></select></label>\n\
    <button id=\"first\" title=\"first ply (Home)\">|&#x25C0;</button>\n\
    <button id=\"prev\" title=\"previous ply (&#x2190;)\">&#x25C0;</button>\n\
    <input type=\"range\" id=\"slider\" min=\"0\" max=\"0\" value=\"0\" aria-label=\"ply\">\n\
    <button id=\"next\" title=\"next ply (&#x2192;)\">&#x25B6;</button>\n\
    <button id=\"last\" title=\"last ply (End)\">&#x25B6;|</button>\n\
    <span id=\"plyno\"></span>\n</nav>\n";

/// The book as JSON that can sit inside a `<script>` element: every `<` written as
/// `\u003c`, so no text from a record can close the element or open a comment.
fn data(book: &Book) -> String {
    serde_json::to_string(book)
        .expect("books serialise")
        .replace('<', "\\u003c")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn record_text_cannot_close_the_data_element() {
        let mut book = Book::new(vec![("omniscient".into(), None)]);
        book.ply(0);
        book.picture(0, "<svg>\n<text></script><script>alert(1)</text>\n</svg>\n");
        book.event(0, "</script>".into());
        let heading = Heading {
            title: "<b>".into(),
            players: vec!["seat 1 Blue (</script>)".into()],
            result: "unfinished".into(),
        };
        let html = page(&heading, &book);
        assert_eq!(html.matches("</script>").count(), 2, "only the page's own two");
        assert!(html.contains("<h1>&lt;b&gt;</h1>"));
    }
}
