//! Every design document the code cites exists, and so does every section it cites
//! (`docs/README.md` says how a citation is written: `docs/BEHAVIOR.md §4.5`, ranges
//! `§6.1–§6.6`, items `§1.4 item 10`). Reads every text file of the repository; pure, no engine.
//!
//! A section cited without its document takes the nearest one named before it on the same line,
//! else in the two lines above (a comment wrapped after the document's name); inside a design
//! document, a bare section is that document's own. This file is not read: its tests spell
//! citations out on purpose.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::LazyLock;

use regex::Regex;

const REPO: &str = env!("CARGO_MANIFEST_DIR");

/// The design documents code may cite.
const DOCS: [&str; 6] = [
    "BEHAVIOR",
    "ENGINE",
    "FLAVORS",
    "REAL-CLIS",
    "RANKING",
    "HARBOR",
];

/// Folders never read: build output, the repository's own data, user cooks.
const SKIPPED_DIRS: [&str; 3] = ["target", ".git", "cooks"];

/// A design document's name, with or without its folder.
static DOC: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(docs/)?\b(BEHAVIOR|ENGINE|FLAVORS|REAL-CLIS|RANKING|HARBOR)\.md").unwrap()
});

/// `§4.5`, `§4b`, `§1.4 item 10`, `§6.1–§6.6`, `§1.4–1.6`, and the old `§1.4-10`.
static SECTION: LazyLock<Regex> = LazyLock::new(|| {
    let number = r"\d+[a-z]?(?:\.\d+[a-z]?)*";
    let range = format!(r"\s*–\s*§?(?P<to>{number})");
    let item = r"\s+item\s+(?P<item>\d+)";
    Regex::new(&format!(
        r"§\s?(?P<from>{number})(?:{range}|(?P<dash>-\d)|{item})?"
    ))
    .unwrap()
});

/// A numbered heading: `## 4. Lifecycle`, `### 4.5 Exit classification`, `## 4b. …`.
static HEADING: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^#{1,6}\s+(\d+[a-z]?(?:\.\d+[a-z]?)*)\.?(?:\s|$)").unwrap());

/// A numbered list item: `10. …`.
static ITEM: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^\s*(\d+)\.\s").unwrap());

/// One design document's sections, each with the numbers of its list items.
type Sections = BTreeMap<String, BTreeSet<String>>;

/// The sections of a document's text: every numbered heading, and the numbered items in its
/// body (up to the next heading).
fn sections(text: &str) -> Sections {
    let mut found = Sections::new();
    let mut current: Option<String> = None;
    for line in text.lines() {
        if line.starts_with('#') {
            current = HEADING.captures(line).map(|c| c[1].to_owned());
            if let Some(number) = &current {
                found.entry(number.clone()).or_default();
            }
        } else if let (Some(number), Some(item)) = (&current, ITEM.captures(line)) {
            found
                .entry(number.clone())
                .or_default()
                .insert(item[1].to_owned());
        }
    }
    found
}

/// Every design document that exists, by name.
fn documents(repo: &Path) -> BTreeMap<&'static str, Sections> {
    DOCS.iter()
        .filter_map(|name| {
            let text = fs_err::read_to_string(repo.join("docs").join(format!("{name}.md"))).ok()?;
            Some((*name, sections(&text)))
        })
        .collect()
}

/// Where a line's citations are checked: the file, and the design document it is, if any.
struct Source<'a> {
    path: &'a str,
    own: Option<&'a str>,
}

/// A document named on a line: where it starts and ends, and its name.
fn named_documents(line: &str) -> Vec<(usize, usize, &str, bool)> {
    DOC.captures_iter(line)
        .filter_map(|c| {
            let whole = c.get(0)?;
            let folder = c.get(1).is_some();
            // `"RANKING.md"`, `input/RANKING.md`: a file name, not a citation.
            let before = line[..whole.start()].chars().next_back();
            let file_name = !folder
                && before.is_some_and(|b| b == '/' || b == '"' || b == '-' || b.is_alphanumeric());
            let name = c.get(2)?.as_str();
            (!file_name).then_some((whole.start(), whole.end(), name, folder))
        })
        .collect()
}

/// The problems of one file's citations.
fn check_text(source: &Source<'_>, text: &str, docs: &BTreeMap<&str, Sections>) -> Vec<String> {
    let mut problems = Vec::new();
    let mut recent: Vec<(usize, &str)> = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let at = format!("{}:{}", source.path, index + 1);
        let named = named_documents(line);
        for &(_, _, name, folder) in &named {
            if !docs.contains_key(name) {
                problems.push(format!("{at}: cites docs/{name}.md, which does not exist"));
            } else if !folder && source.own.is_none() && !source.path.starts_with("docs/") {
                problems.push(format!(
                    "{at}: cite it as `docs/{name}.md`, not `{name}.md`"
                ));
            }
        }
        for section in SECTION.captures_iter(line) {
            let start = section.get(0).map_or(0, |m| m.start());
            let document = named
                .iter()
                .rev()
                .find(|(_, end, _, _)| *end <= start)
                .map(|(_, _, name, _)| *name)
                .or(source.own)
                .or_else(|| {
                    recent
                        .iter()
                        .rev()
                        .find(|(line, _)| index - line <= 2)
                        .map(|(_, name)| *name)
                });
            check_section(&at, document, &section, docs, &mut problems);
        }
        recent.extend(named.iter().map(|(_, _, name, _)| (index, *name)));
    }
    problems
}

/// One cited section (or range, or item) against the document it belongs to.
fn check_section(
    at: &str,
    document: Option<&str>,
    section: &regex::Captures<'_>,
    docs: &BTreeMap<&str, Sections>,
    problems: &mut Vec<String>,
) {
    let cited = &section[0];
    let Some(document) = document else {
        problems.push(format!(
            "{at}: `{cited}` names no document: write `docs/<FILE>.md {cited}` \
             (for another work's section, `section N`)"
        ));
        return;
    };
    let Some(sections) = docs.get(document) else {
        return; // reported with the document's name
    };
    if section.name("dash").is_some() {
        problems.push(format!(
            "{at}: `{cited}…`: write `§N item M` for a list item and `–` for a range"
        ));
    }
    for end in [section.name("from"), section.name("to")]
        .into_iter()
        .flatten()
    {
        if !sections.contains_key(end.as_str()) {
            problems.push(format!(
                "{at}: docs/{document}.md has no section {} (cited as `{cited}`)",
                end.as_str()
            ));
        }
    }
    if let (Some(item), Some(items)) = (section.name("item"), sections.get(&section["from"]))
        && !items.contains(item.as_str())
    {
        problems.push(format!(
            "{at}: docs/{document}.md §{} has no item {} (cited as `{cited}`)",
            &section["from"],
            item.as_str()
        ));
    }
}

/// Every text file of the repository but this one and the skipped folders, as
/// `(path from the root, text)`.
fn repository_texts(repo: &Path) -> Vec<(String, String)> {
    walkdir::WalkDir::new(repo)
        .into_iter()
        .filter_entry(|e| {
            !(e.file_type().is_dir()
                && SKIPPED_DIRS.contains(&e.file_name().to_string_lossy().as_ref()))
        })
        .flatten()
        .filter(|e| e.file_type().is_file() && e.metadata().is_ok_and(|m| m.len() < 4 << 20))
        .filter_map(|e| {
            let path = e
                .path()
                .strip_prefix(repo)
                .ok()?
                .to_string_lossy()
                .into_owned();
            let text = String::from_utf8(fs_err::read(e.path()).ok()?).ok()?;
            (path != "tests/it/docs.rs").then_some((path, text))
        })
        .collect()
}

/// The problems of every citation in `texts`, and how many citations were checked.
fn check_all(texts: &[(String, String)], docs: &BTreeMap<&str, Sections>) -> (Vec<String>, usize) {
    let mut problems = Vec::new();
    let mut citations = 0;
    for (path, text) in texts {
        let own = DOCS
            .iter()
            .copied()
            .find(|name| *path == format!("docs/{name}.md"));
        citations += text
            .lines()
            .map(|l| SECTION.find_iter(l).count())
            .sum::<usize>();
        problems.extend(check_text(&Source { path, own }, text, docs));
    }
    (problems, citations)
}

#[test]
fn every_cited_design_section_exists() {
    let repo = Path::new(REPO);
    let docs = documents(repo);
    for name in ["BEHAVIOR", "ENGINE", "FLAVORS", "REAL-CLIS", "RANKING"] {
        assert!(docs.contains_key(name), "docs/{name}.md is missing");
    }
    let texts = repository_texts(repo);
    let (problems, citations) = check_all(&texts, &docs);
    assert!(
        problems.is_empty(),
        "{} citation problem(s):\n{}",
        problems.len(),
        problems.join("\n")
    );
    let outside: usize = texts
        .iter()
        .filter(|(path, _)| !path.starts_with("docs/"))
        .map(|(_, text)| {
            text.lines()
                .map(|l| SECTION.find_iter(l).count())
                .sum::<usize>()
        })
        .sum();
    assert!(
        outside >= 50 && citations > outside,
        "too few citations found ({outside} outside docs/, {citations} in all): \
         is the walk reading the repository?"
    );
}

#[test]
fn a_missing_document_section_or_item_and_an_old_form_are_each_reported() {
    let docs: BTreeMap<&str, Sections> = [(
        "FLAVORS",
        sections("## 1. claude\n### 1.4 Failure modes\n1. one\n2. two\n### 1.5 Design\n"),
    )]
    .into_iter()
    .collect();
    let source = Source {
        path: "src/x.rs",
        own: None,
    };
    let cases = [
        ("// docs/FLAVORS.md §1.4, §1.4–§1.5, §1.4 item 2", 0, ""),
        ("// docs/FLAVORS.md §1.6", 1, "no section 1.6"),
        ("// docs/FLAVORS.md §1.4–1.9", 1, "no section 1.9"),
        ("// docs/FLAVORS.md §1.4 item 3", 1, "no item 3"),
        ("// docs/FLAVORS.md §1.4-2", 1, "item M"),
        ("// FLAVORS.md §1.4", 1, "cite it as `docs/FLAVORS.md`"),
        (
            "// docs/ENGINE.md §2",
            1,
            "docs/ENGINE.md, which does not exist",
        ),
        ("// an unknown work, §3.2", 1, "names no document"),
        ("// docs/FLAVORS.md says\n// more (§1.5)", 0, ""),
        (
            "let f = input.join(\"RANKING.md\"); // chef-input/RANKING.md",
            0,
            "",
        ),
    ];
    for (text, count, needle) in cases {
        let problems = check_text(&source, text, &docs);
        assert_eq!(problems.len(), count, "{text}: {problems:?}");
        assert!(
            problems.iter().all(|p| p.contains(needle)),
            "{text}: {problems:?}"
        );
    }
    let own = Source {
        path: "docs/FLAVORS.md",
        own: Some("FLAVORS"),
    };
    assert!(check_text(&own, "see §1.5", &docs).is_empty());
    assert_eq!(check_text(&own, "see §2.1", &docs).len(), 1);
}
