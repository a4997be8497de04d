//! What a result's lines name by their shape, beside its labelled fields:
//! a list item's id with its title, a log line's revision with its
//! subject, tags, wiki links and local links, a tree listing's files under
//! their folders, and a document's path inside a line.

use std::sync::LazyLock;

use regex::Regex;

/// Another field of a record: `(label, value)`.
type Alias = (String, String);

/// A list item that begins with its record's id (`- [ ] **#7** Send the
/// card`, `3. ENG-12: Fix the login`, `#42 Pay the invoice`): the id, and
/// the rest of the line as its title.
static ITEM_ID: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"^\s*(?:(?:[-*+•]|\d{1,4}[.)])\s+)?(?:\[[ xX~/-]?\]\s+)?(?:\*\*|__|`)?#?([A-Z][A-Z0-9]{1,9}-\d{1,7}|\d{1,9})(?:\*\*|__|`)?[:.)\]]?\s+(?:[-–—|:]\s+)?(\S.{1,160})$",
    )
    .expect("the item id pattern compiles")
});
/// A log line that begins with a revision (`bb2c358 2026-04-22 Maren
/// Holt Fix the pump`, `commit 2be2eb39...`): the revision, and the rest
/// as its subject.
static REVISION_LINE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\s*(?:[-*]\s+)?(?:commit\s+)?([0-9a-f]{7,40})\b[:\s]+(\S.{0,160})?$")
        .expect("the revision line pattern compiles")
});
/// A tag in running text (`#family`, `#broadcast/fcc`), never a heading's
/// `# ` or a number's `#7`.
static TAG: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?:^|[\s(,\[`])#([A-Za-z][\w/-]{1,40})").expect("the tag pattern compiles")
});
/// A wiki link (`[[broadcast/fcc-compliance]]`, `[[Pump log|the log]]`).
static WIKI_LINK: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\[\[([^\]|#\n]{1,120})(?:[#|][^\]\n]*)?\]\]")
        .expect("the wiki link pattern compiles")
});
/// A Markdown link to a place of the server's own (`[memo](docs/memo.md)`),
/// never one on the web.
static MD_LINK: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\[[^\]\n]{1,120}\]\(([^)\s]{1,200})\)").expect("the link pattern compiles")
});

/// A log line's subject without the author and the date before it
/// (`Tove Ahlgren Wed Jan 7 10:20:00 2026 +0000 Fix the rain gauge`, or
/// `2026-04-22 Maren Holt: Fix the pump`): the words after the date,
/// where there are some; else the line as it is.
fn log_subject(rest: &str) -> String {
    static DATE: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(
            r"\b(?:[A-Z][a-z]{2} [A-Z][a-z]{2} \d{1,2} \d{2}:\d{2}:\d{2} \d{4}(?: [+-]\d{4})?|\d{4}-\d{2}-\d{2}(?:[ T]\d{2}:\d{2}(?::\d{2})?(?:Z|[+-]\d{2}:?\d{2})?)?)",
        )
        .expect("the log date pattern compiles")
    });
    if let Some(m) = DATE.find(rest) {
        let after = rest[m.end()..]
            .trim_start_matches(|c: char| c.is_whitespace() || c == ':' || c == '-' || c == '|')
            .trim();
        if after.chars().count() >= 3 {
            return after.to_owned();
        }
    }
    rest.to_owned()
}

/// A listing printed as a header and then one name a line (`Found
/// keys:` over `alpha` and `beta`), or as bullets or numbered lines of
/// short names: the names, under the header's noun (`keys`) or `item`.
pub fn listed_names(text: &str) -> Option<(String, Vec<String>)> {
    static ITEM: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"^\s*(?:[-*+•]|\d{1,4}[.)])\s+(\S.{0,80}?)\s*$")
            .expect("the item pattern compiles")
    });
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    if let [line] = lines.as_slice() {
        return comma_listed(line);
    }
    let (header, rest) = match lines.split_first() {
        Some((h, rest)) if h.trim_end().ends_with(':') && h.chars().count() <= 60 => {
            (Some(h.trim().trim_end_matches(':').trim()), rest)
        }
        _ => (None, lines.as_slice()),
    };
    if rest.len() < 2 || rest.len() > 500 {
        return None;
    }
    let names: Vec<String> = rest
        .iter()
        .map(|l| {
            ITEM.captures(l).map_or_else(
                || (header.is_some()).then(|| l.trim().to_owned()),
                |c| Some(c[1].to_owned()),
            )
        })
        .collect::<Option<Vec<String>>>()?
        .into_iter()
        .map(|n| {
            n.trim_matches(|c| c == '`' || c == '"' || c == '\'')
                .to_owned()
        })
        .collect();
    let short = names.iter().all(|n| {
        (1..=80).contains(&n.chars().count())
            && n.split_whitespace().count() <= 5
            && !n.ends_with(':')
            && !n.contains(": ")
    });
    if !short {
        return None;
    }
    // The header's noun: its last word (`Found keys` lists keys).
    let key = header
        .and_then(|h| crate::access::words(h).pop())
        .unwrap_or_else(|| "item".to_owned());
    Some((key, names))
}

/// One line of names split by commas (`owners, pets, visits`), after a
/// header on the same line or none (`Tables: owners, pets`): each name a
/// word (letters, digits, `_.:/-`), two or more of them.
fn comma_listed(line: &str) -> Option<(String, Vec<String>)> {
    let (header, rest) = match line.split_once(':') {
        Some((h, rest)) if rest.contains(',') && h.split_whitespace().count() <= 4 => {
            (Some(h.trim()), rest)
        }
        _ => (None, line),
    };
    let names: Vec<String> = rest
        .split(',')
        .map(|n| {
            n.trim()
                .trim_matches(|c| c == '`' || c == '"' || c == '\'')
                .to_owned()
        })
        .collect();
    let word = |n: &String| {
        (1..=64).contains(&n.chars().count())
            && n.chars().next().is_some_and(char::is_alphanumeric)
            && n.chars()
                .all(|c| c.is_alphanumeric() || "_.:/-".contains(c))
    };
    if names.len() < 2 || names.len() > 500 || !names.iter().all(word) {
        return None;
    }
    let key = header
        .and_then(|h| crate::access::words(h).pop())
        .unwrap_or_else(|| "item".to_owned());
    Some((key, names))
}

/// Handles a text's lines name by their shape, beside its labelled
/// fields: a list item's id with its title, a log line's revision with its
/// subject, tags, wiki links and local links, and the files of a tree
/// listing joined under their folders (`docs/broadcast/ (3 files)` over
/// `  fcc-compliance.md`, or `├── fcc-compliance.md`).
pub(super) fn line_handles(text: &str) -> Vec<(String, &'static str, Option<Alias>)> {
    let mut out: Vec<(String, &'static str, Option<Alias>)> = Vec::new();
    let title = |t: &str| {
        t.trim()
            .trim_matches(|c: char| c == '*' || c == '_' || c == '`')
            .trim()
            .to_owned()
    };
    // The folders a tree listing is in, with the indent each was at.
    let mut folders: Vec<(usize, String)> = Vec::new();
    for line in text.lines().take(5_000) {
        if out.len() >= 500 {
            break;
        }
        if let Some(c) = REVISION_LINE.captures(line)
            && c[1].chars().any(|ch| ch.is_ascii_digit())
            && c[1].chars().any(|ch| ch.is_ascii_alphabetic())
        {
            let subject = c.get(2).map(|m| log_subject(&title(m.as_str())));
            out.push((
                c[1].to_owned(),
                "commit",
                subject
                    .filter(|s| (3..=120).contains(&s.chars().count()))
                    .map(|s| ("subject".to_owned(), s)),
            ));
        } else if let Some(c) = ITEM_ID.captures(line) {
            let t = title(&c[2]);
            let id = c.get(1).map_or(0..0, |m| m.range());
            // A bare number is an id only where it is marked as one (`#7`,
            // `**7**`, after a checkbox): a numbered list's `1.` is its
            // place, `3 apples` a quantity.
            let before = &line[..id.start];
            let marked = !c[1].chars().all(|ch| ch.is_ascii_digit())
                || before.ends_with('#')
                || before.ends_with("**")
                || before.ends_with('`')
                || before.contains(']');
            if marked && t.chars().any(char::is_alphabetic) && t.split_whitespace().count() >= 2 {
                out.push((c[1].to_owned(), "id", Some(("title".to_owned(), t))));
            }
        }
        for c in TAG.captures_iter(line) {
            out.push((c[1].to_owned(), "tag", None));
        }
        for c in WIKI_LINK.captures_iter(line) {
            out.push((c[1].trim().to_owned(), "link", None));
        }
        for c in MD_LINK.captures_iter(line) {
            let target = c[1].split('#').next().unwrap_or("");
            if !target.is_empty() && !target.contains(':') && !target.starts_with("//") {
                out.push((target.to_owned(), "path", None));
            }
        }
        tree_entry(line, &mut folders, &mut out);
        // A document's path inside a line (`[1] training/rope-manual.pdf
        // p.1`, `club/loans.md:12: text`): a name a call may take.
        for token in line.split_whitespace() {
            let token = token
                .trim_matches(|c: char| "()[]{},;\"'`<>".contains(c))
                .split(':')
                .next()
                .unwrap_or("");
            if file_name_like(token)
                && !token.starts_with('/')
                && (token.contains('/') || document_extension(token))
            {
                out.push((token.to_owned(), "file", None));
            }
        }
    }
    out
}

/// Does a name end in an extension of a document, a data file or source
/// code (`.pdf`, `.md`, `.csv`, `.py`…)?
fn document_extension(name: &str) -> bool {
    const EXTENSIONS: &[&str] = &[
        "pdf", "md", "markdown", "txt", "csv", "tsv", "json", "jsonl", "yaml", "yml", "toml",
        "xml", "html", "htm", "docx", "doc", "xlsx", "xls", "ods", "odt", "pptx", "rtf", "epub",
        "db", "sqlite", "sqlite3", "duckdb", "parquet", "log", "ini", "cfg", "py", "js", "ts",
        "rs", "go", "java", "c", "h", "cpp", "rb", "sh", "sql", "ipynb",
    ];
    name.rsplit_once('.')
        .is_some_and(|(_, ext)| EXTENSIONS.contains(&ext.to_ascii_lowercase().as_str()))
}

/// One line of a tree listing: a folder (`docs/`, `docs/broadcast/ (3
/// files)`, `├── notes/`) opens at its indent; a file's name under it is
/// pushed joined onto the folders it is in.
fn tree_entry(
    line: &str,
    folders: &mut Vec<(usize, String)>,
    out: &mut Vec<(String, &'static str, Option<Alias>)>,
) {
    let body = line.trim_start_matches(|c: char| c.is_whitespace() || "│├└─┬┼|`+-*•".contains(c));
    let indent = line.len() - body.len();
    let entry = body
        .split(" (")
        .next()
        .unwrap_or(body)
        .trim_end()
        .trim_end_matches(':');
    if entry.is_empty() || entry.contains(char::is_whitespace) || entry.contains("://") {
        return;
    }
    while folders.last().is_some_and(|(i, _)| *i >= indent) {
        folders.pop();
    }
    if let Some(folder) = entry.strip_suffix('/').filter(|f| !f.is_empty()) {
        folders.push((indent, folder.to_owned()));
        return;
    }
    if folders.is_empty() || entry.contains('/') || !file_name_like(entry) {
        return;
    }
    let path: Vec<&str> = folders.iter().map(|(_, f)| f.as_str()).collect();
    // `docs/` over `docs/broadcast/`: a folder named from the root.
    let joined = match path.iter().rposition(|f| f.contains('/')) {
        Some(from_root) => path[from_root..].join("/"),
        None => path.join("/"),
    };
    out.push((
        format!("{joined}/{entry}"),
        "path",
        Some(("name".to_owned(), entry.to_owned())),
    ));
}

/// A file's name or path: no spaces, and a short extension of letters or
/// digits after its last dot (`garden_stock.xlsx`, `data/notes.md`).
pub fn file_name_like(v: &str) -> bool {
    let n = v.chars().count();
    if !(3..=200).contains(&n) || v.contains(char::is_whitespace) || v.contains("://") {
        return false;
    }
    let name = v.rsplit('/').next().unwrap_or(v);
    match name.rsplit_once('.') {
        Some((stem, ext)) => {
            !stem.is_empty()
                && (1..=8).contains(&ext.len())
                && ext.chars().all(|c| c.is_ascii_alphanumeric())
                && ext.chars().any(|c| c.is_ascii_alphabetic())
        }
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_listing_under_a_header_or_of_bullets_is_read_as_names() {
        assert_eq!(
            listed_names("Found keys:\nuser:42\nsession-cart\nfeature flags"),
            Some((
                "keys".to_owned(),
                vec![
                    "user:42".into(),
                    "session-cart".into(),
                    "feature flags".into()
                ]
            ))
        );
        assert_eq!(
            listed_names("- Maren Holt\n- Idris Vale\n- Ana Reyes"),
            Some((
                "item".to_owned(),
                vec!["Maren Holt".into(), "Idris Vale".into(), "Ana Reyes".into()]
            ))
        );
        // Prose is no listing, nor is a list of labelled fields.
        assert_eq!(
            listed_names("The server is ready.\nIt holds three keys."),
            None
        );
        assert_eq!(listed_names("Keys:\nname: alpha\nsize: 3"), None);
    }

    #[test]
    fn names_split_by_commas_on_one_line_are_a_listing() {
        // mcp-alchemy's all_table_names.
        assert_eq!(
            listed_names("owners, pets, vets, visits"),
            Some((
                "item".to_owned(),
                vec![
                    "owners".into(),
                    "pets".into(),
                    "vets".into(),
                    "visits".into()
                ]
            ))
        );
        assert_eq!(
            listed_names("Tables: orders, order_items"),
            Some((
                "tables".to_owned(),
                vec!["orders".into(), "order_items".into()]
            ))
        );
        // A header in another language names its list the same way.
        assert_eq!(
            listed_names("Gefundene Schlüssel:\nkunde:7\nwarenkorb-3"),
            Some((
                "schlüssel".to_owned(),
                vec!["kunde:7".into(), "warenkorb-3".into()]
            ))
        );
        // A sentence with commas is no listing.
        assert_eq!(listed_names("Done, saved the file, and closed it."), None);
        assert_eq!(listed_names("owners"), None);
    }
}
