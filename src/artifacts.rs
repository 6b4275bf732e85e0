//! What a cook folder holds and who may see it: `artifacts.json` and `archive`.
//!
//! Every file gets one visibility class (docs/BEHAVIOR.md §6.7, tightened):
//! - `secret`: anything under a `.auth` folder, at any depth (login snapshots);
//! - `host_only`: what would unblind the jury: `judging/_mapping.json`, the sealed inbox, the
//!   judges' inboxes and every other `judging/_*` file except judge logs and earlier judgings;
//! - `public`: the participants' outputs (`work/<participant>/out/**` of brief participants),
//!   `leaderboard.md`, `leaderboard.html`, `summary.json`, and judges' `review.md`;
//! - `hidden`: the hidden tests (`verify/**`) and what the verifiers reported about them
//!   (`verification/**`: test names and failure messages echo the tests);
//! - `operator`: everything else, including any file nobody anticipated (never public).
//!
//! An archive copies `public` (and `operator` with `--include-operator`, `hidden` with
//! `--include-hidden`) regular files only, opened without following links, and never a
//! `secret` or `host_only` file.

use std::io::{self, Read as _};
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::{Path, PathBuf};

use serde::Serialize;
use sha2::{Digest as _, Sha256};

use crate::brief::Brief;
use crate::fsx;
use crate::state::CookPaths;

/// Files hashed in the manifest at most this large.
const HASH_MAX_BYTES: u64 = 5 << 20;

/// Who may see a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Visibility {
    /// Fine to publish.
    Public,
    /// For whoever runs the cook.
    Operator,
    /// Credentials: never leaves the machine.
    Secret,
    /// Unblinds the jury: never leaves the machine.
    HostOnly,
    /// The hidden tests and their reports: archived only when asked.
    Hidden,
}

impl Visibility {
    /// The class's name in the manifest.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Public => "public",
            Self::Operator => "operator",
            Self::Secret => "secret",
            Self::HostOnly => "host_only",
            Self::Hidden => "hidden",
        }
    }
}

/// One manifest entry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Artifact {
    /// Relative, `/`-separated.
    pub path: String,
    /// By suffix: `markdown`, `json`, `log` … or `file`.
    pub kind: &'static str,
    /// Who may see it.
    pub visibility: Visibility,
    /// Bytes (regular files).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    /// SHA-256 of regular files up to 5 MiB.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sha256: Option<String>,
    /// A symbolic link (never followed, never archived).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub symlink: bool,
    /// A FIFO, socket or device (never archived).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub special: bool,
}

/// The class of a relative path.
pub fn classify(relative: &str, brief: &Brief) -> Visibility {
    let parts: Vec<&str> = relative.split('/').collect();
    if parts.contains(&".auth") {
        return Visibility::Secret;
    }
    match parts.as_slice() {
        [crate::state::VERIFY_DIR | "verification", ..] => Visibility::Hidden,
        ["judging", "_logs" | "_previous", ..] => Visibility::Operator,
        ["judging", dir, ..] if dir.starts_with('_') => Visibility::HostOnly,
        ["judging", "_mapping.json" | "_normalized.json"] | ["chef", _, "_mapping.json"] => {
            Visibility::HostOnly
        }
        ["judging", judge, "review.md"] if brief.judge(judge).is_some() => Visibility::Public,
        ["leaderboard.md" | "leaderboard.html" | "summary.json"] => Visibility::Public,
        ["work", participant, "out", _, ..] if brief.participant(participant).is_some() => {
            Visibility::Public
        }
        _ => Visibility::Operator,
    }
}

fn kind(path: &str) -> &'static str {
    let suffix = path.rsplit_once('.').map_or("", |(_, s)| s);
    match suffix {
        "md" => "markdown",
        "json" => "json",
        "jsonl" => "jsonl",
        "log" => "log",
        "yaml" | "yml" => "yaml",
        "txt" => "text",
        "html" => "html",
        "css" => "css",
        "js" => "javascript",
        "ts" => "typescript",
        "py" => "python",
        "rs" => "rust",
        _ => "file",
    }
}

/// Top-level entries the manifest never lists (its own outputs).
const SKIPPED_AT_ROOT: &[&str] = &["archive", ".archive-staging", "artifacts.json"];

/// Walks the cook folder without following links.
pub fn manifest(paths: &CookPaths, brief: &Brief) -> io::Result<Vec<Artifact>> {
    let root = paths.dir();
    let archive_name = format!("{}-archive.tar.gz", paths.name());
    let mut artifacts = Vec::new();
    let mut walker = walkdir::WalkDir::new(root)
        .follow_links(false)
        .sort_by_file_name()
        .min_depth(1)
        .into_iter();
    while let Some(entry) = walker.next() {
        let entry = entry.map_err(io::Error::other)?;
        let relative = entry
            .path()
            .strip_prefix(root)
            .unwrap_or(entry.path())
            .to_string_lossy()
            .into_owned();
        let name = entry.file_name().to_string_lossy();
        if entry.depth() == 1 && (SKIPPED_AT_ROOT.contains(&name.as_ref()) || name == archive_name)
        {
            if entry.file_type().is_dir() {
                walker.skip_current_dir();
            }
            continue;
        }
        if entry.file_type().is_dir() {
            if fsx::SEAL_IGNORE.contains(&name.as_ref()) {
                walker.skip_current_dir();
            }
            continue;
        }
        let file_type = entry.file_type();
        let size = file_type
            .is_file()
            .then(|| entry.metadata().map_or(0, |m| m.len()));
        let sha256 = match size {
            Some(len) if len <= HASH_MAX_BYTES => hash(entry.path()).ok(),
            _ => None,
        };
        artifacts.push(Artifact {
            kind: kind(&relative),
            visibility: classify(&relative, brief),
            size,
            sha256,
            symlink: file_type.is_symlink(),
            special: !file_type.is_file() && !file_type.is_symlink(),
            path: relative,
        });
    }
    artifacts.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(artifacts)
}

/// Opens a regular file without following a link at its last component.
fn open_no_follow(path: &Path) -> io::Result<std::fs::File> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)?;
    if !file.metadata()?.is_file() {
        return Err(io::Error::other("not a regular file"));
    }
    Ok(file)
}

fn hash(path: &Path) -> io::Result<String> {
    let mut file = open_no_follow(path)?;
    let mut hasher = Sha256::new();
    let mut buffer = vec![0; 64 << 10];
    loop {
        let n = file.read(&mut buffer)?;
        if n == 0 {
            break;
        }
        hasher.update(&buffer[..n]);
    }
    Ok(hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect())
}

/// Writes `artifacts.json` and returns the manifest.
pub fn write_manifest(paths: &CookPaths, brief: &Brief) -> io::Result<Vec<Artifact>> {
    let artifacts = manifest(paths, brief)?;
    let document = serde_json::json!({
        "schema_version": 1,
        "cook": paths.name(),
        "generated_at": crate::state::now_iso(),
        "artifacts": artifacts,
    });
    fsx::write_json_atomic(&paths.dir().join("artifacts.json"), &document)?;
    Ok(artifacts)
}

/// Archive formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// A folder.
    Dir,
    /// A gzip-compressed tarball.
    Tar,
}

/// What an archive holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Archived {
    /// Where it was written.
    pub dest: PathBuf,
    /// Files copied.
    pub files: usize,
    /// Allowed entries skipped (links, special files, files that changed into something else).
    pub skipped: usize,
}

/// Archives the public files of a cook, and those of the `also` classes (`operator`,
/// `hidden`); `secret` and `host_only` files never, whatever `also` says.
pub fn archive(
    paths: &CookPaths,
    brief: &Brief,
    also: &[Visibility],
    format: Format,
    out: Option<&Path>,
) -> io::Result<Archived> {
    let artifacts = write_manifest(paths, brief)?;
    let allowed = |a: &Artifact| match a.visibility {
        Visibility::Public => true,
        Visibility::Operator | Visibility::Hidden => also.contains(&a.visibility),
        Visibility::Secret | Visibility::HostOnly => false,
    };
    let chosen: Vec<&Artifact> = artifacts.iter().filter(|a| allowed(a)).collect();
    let mut files: Vec<(&Artifact, std::fs::File)> = Vec::new();
    let mut skipped = 0;
    for artifact in chosen {
        if artifact.symlink || artifact.special {
            skipped += 1;
            continue;
        }
        match open_no_follow(&paths.dir().join(&artifact.path)) {
            Ok(file) => files.push((artifact, file)),
            Err(_) => skipped += 1,
        }
    }
    let listed: Vec<&Artifact> = files.iter().map(|(a, _)| *a).collect();
    let manifest = fsx::to_json_pretty(&serde_json::json!({
        "schema_version": 1, "cook": paths.name(), "artifacts": listed,
    }));
    let count = files.len();
    let dest = match format {
        Format::Tar => {
            let dest = out.map_or_else(
                || paths.dir().join(format!("{}-archive.tar.gz", paths.name())),
                Path::to_path_buf,
            );
            write_tar(paths.name(), &dest, files, &manifest)?;
            dest
        }
        Format::Dir => {
            let dest = out.map_or_else(|| paths.dir().join("archive"), Path::to_path_buf);
            let staging = paths.dir().join(".archive-staging");
            fsx::remove_tree(&staging)?;
            // Made even when no file is archived (issue 25: a cook killed before anything was
            // collected failed to archive its manifest).
            fs_err::create_dir_all(&staging)?;
            for (artifact, mut file) in files {
                let target = staging.join(&artifact.path);
                fs_err::create_dir_all(target.parent().unwrap_or(&staging))?;
                let mut copy = fs_err::File::create(&target)?;
                io::copy(&mut file, &mut copy)?;
            }
            fs_err::write(staging.join("artifacts.json"), &manifest)?;
            fsx::remove_tree(&dest)?;
            fs_err::rename(&staging, &dest)?;
            dest
        }
    };
    Ok(Archived {
        dest,
        files: count,
        skipped,
    })
}

fn write_tar(
    cook: &str,
    dest: &Path,
    files: Vec<(&Artifact, std::fs::File)>,
    manifest: &[u8],
) -> io::Result<()> {
    let partial = dest.with_extension("partial");
    let encoder = flate2::write::GzEncoder::new(
        fs_err::File::create(&partial)?,
        flate2::Compression::default(),
    );
    let mut tar = tar::Builder::new(encoder);
    for (artifact, mut file) in files {
        let mut header = tar::Header::new_gnu();
        header.set_size(file.metadata()?.len());
        header.set_mode(0o600);
        header.set_cksum();
        tar.append_data(&mut header, format!("{cook}/{}", artifact.path), &mut file)?;
    }
    let mut header = tar::Header::new_gnu();
    header.set_size(manifest.len() as u64);
    header.set_mode(0o600);
    header.set_cksum();
    tar.append_data(&mut header, format!("{cook}/artifacts.json"), manifest)?;
    tar.into_inner()?.finish()?;
    fs_err::rename(&partial, dest)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn brief() -> Brief {
        crate::brief::parse(
            Path::new("brief.yaml"),
            b"name: t\nparticipants:\n  - {name: ada, flavor: dummy}\njudges:\n  - {name: ref, flavor: dummy}\nrubric: {dimensions: [{id: c, weight: 100}]}\n",
        )
        .unwrap()
        .brief
    }

    #[test]
    fn a_cook_with_nothing_collected_archives_its_manifest() {
        let dir = tempfile::tempdir().unwrap();
        let paths = CookPaths::new(dir.path().join("261126-t"));
        fs_err::create_dir_all(paths.work("ada")).unwrap();
        let archived = archive(&paths, &brief(), &[], Format::Dir, None).unwrap();
        assert!(archived.dest.join("artifacts.json").is_file());
        assert!(!paths.dir().join(".archive-staging").exists());
    }

    #[test]
    fn every_path_gets_the_narrowest_class_and_unknown_files_are_never_public() {
        let brief = brief();
        let cases = [
            ("work/ada/out/index.html", Visibility::Public),
            ("work/ada/out/.auth/token", Visibility::Secret),
            (".auth/p-ada/claude/.credentials.json", Visibility::Secret),
            ("work/eve/out/x.md", Visibility::Operator),
            ("work/ada/PROMPT.txt", Visibility::Operator),
            ("judging/_mapping.json", Visibility::HostOnly),
            ("judging/_inbox/ada/out/x", Visibility::HostOnly),
            (
                "judging/_work-ref/submissions/A/out/x",
                Visibility::HostOnly,
            ),
            ("judging/_normalized.json", Visibility::HostOnly),
            ("chef/chef/_mapping.json", Visibility::HostOnly),
            ("judging/_logs/ref/dummy.stdout.log", Visibility::Operator),
            ("judging/ref/review.md", Visibility::Public),
            ("judging/ref/scores_deanon.json", Visibility::Operator),
            ("judging/stranger/review.md", Visibility::Operator),
            ("leaderboard.md", Visibility::Public),
            ("summary.json", Visibility::Public),
            ("notes/anything.txt", Visibility::Operator),
            ("status.json", Visibility::Operator),
            ("verify/tests/test_cli.py", Visibility::Hidden),
            ("verify/Dockerfile", Visibility::Hidden),
            ("verification/ada/results/junit.xml", Visibility::Hidden),
            (
                "verification/_previous/x/ada/result.json",
                Visibility::Hidden,
            ),
            ("work/ada/out/verify/tests.json", Visibility::Public),
        ];
        for (path, class) in cases {
            assert_eq!(classify(path, &brief), class, "{path}");
        }
    }
}
