//! `search:NEEDLE`: the cell searched from inside. Every regular file reachable from `/`
//! (links never followed; /proc, /sys and /dev left out) is read up to a size cap, and those
//! whose bytes contain the needle are listed. Tests plant a canary in hidden material and check
//! that no participant, judge, reviewer or chef cell can find it, and a visible one (in raw/)
//! that every such cell does find.

use std::io::{Read, Write};
use std::path::Path;

/// Files larger than this are read only this far.
const READ_CAP: u64 = 8 << 20;
/// At most this many files are read.
const MAX_FILES: usize = 200_000;

/// Searches for `needle` and writes `found <path>` per hit, then `searched <n> files`, to the
/// first free `SEARCH-<k>.txt` of `out` (one per directive, in order; the needle itself is
/// never written, so a later search cannot find it in a report).
pub fn write_search(needle: &str, out: &Path) -> std::io::Result<()> {
    let report = (1..)
        .map(|k| out.join(format!("SEARCH-{k}.txt")))
        .find(|p| !p.exists())
        .expect("some report name is free");
    let report = report.as_path();
    let mut hits = Vec::new();
    let mut searched = 0;
    let mut stack = vec![std::path::PathBuf::from("/")];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if kind.is_dir() {
                if !["/proc", "/sys", "/dev"]
                    .iter()
                    .any(|p| path == Path::new(p))
                {
                    stack.push(path);
                }
            } else if kind.is_file() && searched < MAX_FILES && path != report {
                searched += 1;
                if contains(&path, needle.as_bytes()) {
                    hits.push(path.display().to_string());
                }
            }
        }
    }
    hits.sort();
    let mut file = std::fs::File::create(report)?;
    for hit in &hits {
        writeln!(file, "found {hit}")?;
    }
    writeln!(file, "searched {searched} files")
}

fn contains(path: &Path, needle: &[u8]) -> bool {
    let mut bytes = Vec::new();
    let read = std::fs::File::open(path).and_then(|f| f.take(READ_CAP).read_to_end(&mut bytes));
    read.is_ok() && !needle.is_empty() && bytes.windows(needle.len()).any(|w| w == needle)
}
