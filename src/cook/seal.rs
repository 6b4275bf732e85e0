//! Sealing: after a participant's cell ends, its `out/` is copied (never linked) into
//! `judging/_inbox/<participant>/out/` and made read-only. The copy follows no symlink and
//! copies no device, FIFO, socket or outside hard link; those are skipped and recorded on the
//! host (in trace.json), never in the sealed tree, which must not reveal flavor, model or name.

use std::path::Path;

use serde::Serialize;

use crate::brief::RequiredOutput;
use crate::fsx::{self, CopyOptions, CopyReport, SEAL_IGNORE};
use crate::state::CookPaths;

/// Default cap on a sealed output's size.
pub const DEFAULT_SEAL_MAX_BYTES: u64 = 1 << 30;

/// `judging/_inbox/<p>/meta.json`: all a judge learns besides the files.
#[derive(Debug, Serialize)]
struct Meta<'a> {
    schema_version: u32,
    exit_class: &'a str,
    round: u32,
}

/// Seals one participant's output, replacing an earlier seal.
pub fn seal(
    paths: &CookPaths,
    participant: &str,
    exit_class: &str,
    round: u32,
    max_bytes: u64,
) -> std::io::Result<CopyReport> {
    let sealed = paths.sealed(participant);
    fsx::remove_tree(&sealed)?;
    fs_err::create_dir_all(&sealed)?;
    let options = CopyOptions {
        ignore: SEAL_IGNORE,
        max_bytes,
        read_only: true,
        share: true,
    };
    let report = fsx::copy_tree_no_follow(&paths.out(participant), &sealed.join("out"), &options)?;
    let meta = Meta {
        schema_version: 1,
        exit_class,
        round,
    };
    fsx::write_atomic(&sealed.join("meta.json"), &fsx::to_json_pretty(&meta))?;
    Ok(report)
}

/// Required outputs absent from the sealed copy (what a judge will actually see): a required
/// path counts only as a non-empty regular file.
pub fn missing_outputs(sealed_out: &Path, required: &[RequiredOutput]) -> Vec<String> {
    required
        .iter()
        .filter(|r| {
            !fs_err::symlink_metadata(sealed_out.join(&r.path))
                .is_ok_and(|m| m.is_file() && m.len() > 0)
        })
        .map(|r| r.path.clone())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sealing_copies_out_and_writes_only_neutral_meta() {
        let tmp = tempfile::tempdir().unwrap();
        let paths = CookPaths::new(tmp.path().join("251122-t"));
        fs_err::create_dir_all(paths.out("alpha").join("site")).unwrap();
        fs_err::write(paths.out("alpha").join("RESULT.md"), "done").unwrap();
        fs_err::write(paths.out("alpha").join("site/empty.html"), "").unwrap();
        std::os::unix::fs::symlink("../../bravo/out", paths.out("alpha").join("sibling")).unwrap();
        let report = seal(&paths, "alpha", "ok", 1, 1 << 20).unwrap();
        assert_eq!(report.files, 2);
        assert_eq!(report.skipped.len(), 1);
        let meta = fs_err::read_to_string(paths.sealed("alpha").join("meta.json")).unwrap();
        assert_eq!(
            meta,
            "{\n  \"schema_version\": 1,\n  \"exit_class\": \"ok\",\n  \"round\": 1\n}\n"
        );
        let required = [
            RequiredOutput {
                path: "RESULT.md".into(),
                kind: None,
            },
            RequiredOutput {
                path: "site/empty.html".into(),
                kind: None,
            },
            RequiredOutput {
                path: "sibling".into(),
                kind: None,
            },
        ];
        assert_eq!(
            missing_outputs(&paths.sealed("alpha").join("out"), &required),
            ["site/empty.html", "sibling"]
        );
        // Sealing again replaces the read-only copy.
        seal(&paths, "alpha", "ok", 1, 1 << 20).unwrap();
    }
}
