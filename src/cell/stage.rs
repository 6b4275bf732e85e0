//! Stage: the tars the host sends into a cell's areas. Host folders are walked without
//! following links; links, devices, FIFOs and sockets in them are left out and recorded, so a
//! careless `raw/` (a link to `~/.ssh`) shows nothing of the host. Owners and modes are set
//! here, not taken from the host: inputs belong to root and are read-only for the cell; a
//! writable area's seed (a refine round's previous output) belongs to the cell user; a
//! verifier's hidden folder belongs to root and the cell user's group, readable by that group
//! only, so the code under test, started as the launch identity (another uid and gid), cannot
//! read it and nobody in the cell can change it.

use std::collections::BTreeSet;
use std::io;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use super::files::{CellFiles, Input};
use super::plan::CellUser;
use crate::fsx::{Skip, Skipped};
use crate::runtime::{Archive, Area, CONTROL_AREA, GO_NAME};

/// Whose the staged entries are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ownership {
    /// Root's, read-only for everyone (files 0444, or 0555 when executable; folders 0555).
    ReadOnly,
    /// The cell user's, writable by it alone (files 0644/0755, folders 0755).
    Cell {
        /// uid.
        uid: u32,
        /// gid.
        gid: u32,
    },
    /// Root's, readable by the cell user's group alone (files 0440, or 0550 when executable;
    /// folders 0550): the hidden tests, which the runner reads and the code it launches cannot.
    Group {
        /// The cell user's gid.
        gid: u32,
    },
    /// The cell user's and nobody else's, for a login (files 0400, folders 0500).
    Secret {
        /// uid.
        uid: u32,
        /// gid.
        gid: u32,
    },
}

/// Where a tar is written.
#[derive(Debug)]
enum Sink {
    Memory(Vec<u8>),
    File(io::BufWriter<std::fs::File>),
}

impl io::Write for Sink {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        match self {
            Self::Memory(vec) => vec.write(bytes),
            Self::File(file) => file.write(bytes),
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        match self {
            Self::Memory(_) => Ok(()),
            Self::File(file) => file.flush(),
        }
    }
}

/// A tar being built for one area.
pub struct StageTar {
    builder: tar::Builder<Sink>,
    ownership: Ownership,
    folders: BTreeSet<String>,
    skipped: Vec<Skipped>,
    bytes: u64,
    entries: u64,
}

impl std::fmt::Debug for StageTar {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StageTar")
            .field("ownership", &self.ownership)
            .field("bytes", &self.bytes)
            .finish_non_exhaustive()
    }
}

/// What staging an area will send.
#[derive(Debug)]
pub struct Staged {
    /// The tar.
    pub archive: Archive,
    /// Bytes of file content in it.
    pub bytes: u64,
    /// Host entries left out.
    pub skipped: Vec<Skipped>,
    /// Files and folders in it.
    pub entries: u64,
}

impl StageTar {
    /// A tar written to an unnamed temporary file (for folders of any size).
    pub fn on_disk(ownership: Ownership) -> io::Result<Self> {
        let file = tempfile::tempfile()?;
        Ok(Self::with_sink(
            Sink::File(io::BufWriter::new(file)),
            ownership,
        ))
    }

    /// A tar kept in memory (a login never touches the disk).
    pub fn in_memory(ownership: Ownership) -> Self {
        Self::with_sink(Sink::Memory(Vec::new()), ownership)
    }

    fn with_sink(sink: Sink, ownership: Ownership) -> Self {
        let mut builder = tar::Builder::new(sink);
        builder.mode(tar::HeaderMode::Deterministic);
        Self {
            builder,
            ownership,
            folders: BTreeSet::new(),
            skipped: Vec::new(),
            bytes: 0,
            entries: 0,
        }
    }

    /// Changes whose the entries added from now on are (the hidden tests share the inputs'
    /// tar, so that one upload stages both).
    pub fn set_ownership(&mut self, ownership: Ownership) {
        self.ownership = ownership;
    }

    /// Adds the go file as the tar's last entry: init starts the program when it appears, so
    /// everything before it is already staged. Nothing can be added after it.
    pub fn go(mut self) -> io::Result<Staged> {
        self.ownership = Ownership::ReadOnly;
        let mut header = self.header(tar::EntryType::Regular, false);
        header.set_size(0);
        self.builder
            .append_data(&mut header, GO_NAME, io::empty())?;
        self.entries += 1;
        self.finish()
    }

    /// A path of the area's top level that only [`StageTar::go`] may write: an entry there
    /// from anything else (a host folder staged at `.`) would start the program early.
    fn reserved(&mut self, path: &str) -> bool {
        let top = path
            .trim_start_matches("./")
            .split('/')
            .next()
            .unwrap_or_default();
        if top == GO_NAME {
            self.skipped.push(Skipped {
                path: path.to_owned(),
                skip: Skip::BadPath,
            });
            return true;
        }
        false
    }

    /// Adds one file with these bytes at `path` (relative to the area).
    pub fn file(&mut self, path: &str, bytes: &[u8], executable: bool) -> io::Result<()> {
        if self.reserved(path) {
            return Ok(());
        }
        self.parents(path)?;
        let mut header = self.header(tar::EntryType::Regular, executable);
        header.set_size(bytes.len() as u64);
        self.builder.append_data(&mut header, path, bytes)?;
        self.bytes += bytes.len() as u64;
        self.entries += 1;
        Ok(())
    }

    /// Adds a host file or folder at `path` (relative to the area; `.` is the area itself),
    /// never following a link. A missing source adds an empty folder.
    pub fn tree(&mut self, path: &str, source: &Path) -> io::Result<()> {
        match std::fs::symlink_metadata(source) {
            Ok(meta) if meta.is_file() => {
                return self.host_file(path, source, &meta);
            }
            Ok(meta) if meta.is_dir() => {}
            Err(e) if e.kind() == io::ErrorKind::NotFound => return self.folder(path),
            Ok(meta) => {
                self.skipped.push(Skipped {
                    path: path.to_owned(),
                    skip: special(source, &meta),
                });
                return Ok(());
            }
            Err(e) => return Err(e),
        }
        if path != "." {
            self.folder(path)?;
        }
        let walker = walkdir::WalkDir::new(source)
            .follow_links(false)
            .sort_by_file_name()
            .min_depth(1);
        for entry in walker {
            let entry = match entry {
                Ok(entry) => entry,
                Err(e) => {
                    self.skipped.push(Skipped {
                        path: e
                            .path()
                            .map(|p| p.display().to_string())
                            .unwrap_or_default(),
                        skip: Skip::Unreadable {
                            error: e.to_string(),
                        },
                    });
                    continue;
                }
            };
            let relative = entry.path().strip_prefix(source).unwrap_or(entry.path());
            let inside = if path == "." {
                relative.to_string_lossy().into_owned()
            } else {
                format!("{path}/{}", relative.to_string_lossy())
            };
            let meta = entry.metadata().map_err(io::Error::other)?;
            if meta.is_dir() {
                self.folder(&inside)?;
            } else if meta.is_file() {
                self.host_file(&inside, entry.path(), &meta)?;
            } else {
                self.skipped.push(Skipped {
                    path: inside,
                    skip: special(entry.path(), &meta),
                });
            }
        }
        Ok(())
    }

    /// Adds an empty folder at `path`.
    pub fn folder(&mut self, path: &str) -> io::Result<()> {
        if self.reserved(path) {
            return Ok(());
        }
        self.parents(path)?;
        if self.folders.insert(path.to_owned()) {
            let mut header = self.header(tar::EntryType::Directory, true);
            header.set_size(0);
            self.builder.append_data(&mut header, path, io::empty())?;
            self.entries += 1;
        }
        Ok(())
    }

    /// Finishes the tar.
    pub fn finish(self) -> io::Result<Staged> {
        let Self {
            builder,
            skipped,
            bytes,
            entries,
            ..
        } = self;
        let archive = match builder.into_inner()? {
            Sink::Memory(bytes) => Archive::from_bytes(bytes),
            Sink::File(file) => {
                Archive::from_file(file.into_inner().map_err(io::IntoInnerError::into_error)?)?
            }
        };
        Ok(Staged {
            archive,
            bytes,
            skipped,
            entries,
        })
    }

    fn host_file(&mut self, path: &str, source: &Path, meta: &std::fs::Metadata) -> io::Result<()> {
        use std::os::unix::fs::OpenOptionsExt;
        if self.reserved(path) {
            return Ok(());
        }
        let file = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NOFOLLOW)
            .open(source);
        let file = match file {
            Ok(file) => file,
            Err(e) => {
                self.skipped.push(Skipped {
                    path: path.to_owned(),
                    skip: Skip::Unreadable {
                        error: e.to_string(),
                    },
                });
                return Ok(());
            }
        };
        self.parents(path)?;
        let executable = meta.permissions().mode() & 0o111 != 0;
        let mut header = self.header(tar::EntryType::Regular, executable);
        header.set_size(meta.len());
        // Exactly the size stat gave: a file growing meanwhile is cut, one shrinking is padded.
        let reader = io::Read::take(
            io::Read::chain(io::Read::take(file, meta.len()), io::repeat(0)),
            meta.len(),
        );
        self.builder.append_data(&mut header, path, reader)?;
        self.bytes += meta.len();
        self.entries += 1;
        Ok(())
    }

    fn parents(&mut self, path: &str) -> io::Result<()> {
        let mut missing = Vec::new();
        let mut current = Path::new(path).parent();
        while let Some(parent) = current.filter(|p| !p.as_os_str().is_empty()) {
            let text = parent.to_string_lossy().into_owned();
            if self.folders.contains(&text) {
                break;
            }
            missing.push(text);
            current = parent.parent();
        }
        for folder in missing.into_iter().rev() {
            self.folder(&folder)?;
        }
        Ok(())
    }

    fn header(&self, kind: tar::EntryType, executable: bool) -> tar::Header {
        let mut header = tar::Header::new_gnu();
        header.set_entry_type(kind);
        let folder = kind == tar::EntryType::Directory;
        let (uid, gid, mode) = match self.ownership {
            Ownership::ReadOnly => (0, 0, if folder || executable { 0o555 } else { 0o444 }),
            Ownership::Cell { uid, gid } => {
                (uid, gid, if folder || executable { 0o755 } else { 0o644 })
            }
            Ownership::Group { gid } => (0, gid, if folder || executable { 0o550 } else { 0o440 }),
            Ownership::Secret { uid, gid } => (uid, gid, if folder { 0o500 } else { 0o400 }),
        };
        header.set_uid(u64::from(uid));
        header.set_gid(u64::from(gid));
        header.set_mode(mode);
        header.set_mtime(0);
        header
    }
}

/// Every tar one cell gets, and the areas they need.
#[derive(Debug)]
pub struct CellStaging {
    /// `(area path in the cell, tar)` in staging order; the inputs come last, ending with the
    /// go file.
    pub archives: Vec<(String, Archive)>,
    /// The areas to create the cell with.
    pub areas: Vec<Area>,
    /// Host entries of inputs left out (links, specials).
    pub skipped: Vec<Skipped>,
}

/// Slack above what is staged into an area, so the tar's own folders fit.
const AREA_SLACK: u64 = 1 << 20;

/// What one staged entry may take in an area beyond its bytes: the engine's in-memory file
/// system gives every file at least one page, so 5,000 one-line files take 20 MiB, not the
/// 5 MiB of their tar.
const ENTRY_SLACK: u64 = 4 << 10;

/// The size of an area holding `staged`: its tar's length, a page per entry, whole MiB, plus
/// slack.
fn area_size(staged: &Staged) -> u64 {
    let needed = staged.archive.len + staged.entries * ENTRY_SLACK;
    needed.div_ceil(AREA_SLACK) * AREA_SLACK + AREA_SLACK
}

/// Builds the tars of `files` for a cell running as `user` (blocking: reads host files): the
/// seeds and the login first, then the inputs with the hidden tests and, as its last entry, the
/// go file, so that a cell with neither seed nor login is staged in one upload (issue 28).
/// `control`: the cell gets a control area for init's launch socket ([`crate::runtime::Init`]).
pub fn prepare(files: &CellFiles, user: CellUser, control: bool) -> io::Result<CellStaging> {
    let mut archives = Vec::new();
    let mut areas = Vec::new();
    let mut skipped = Vec::new();
    let mut inputs = StageTar::on_disk(Ownership::ReadOnly)?;
    let mut hidden = Vec::new();
    for input in &files.inputs {
        match input {
            Input::Text { path, bytes } => inputs.file(path, bytes, false)?,
            Input::Folder { path } => inputs.folder(path)?,
            Input::Copy { path, source } => inputs.tree(path, source.path())?,
            Input::Hidden(copy) => hidden.push(copy),
        }
    }
    // The hidden folder in the same tar, root's and readable by the cell user's group alone.
    inputs.set_ownership(Ownership::Group { gid: user.gid });
    for copy in hidden {
        inputs.tree(copy.path(), copy.source().path())?;
    }
    // No entry for a writable area's folder: the engine makes its mount point, and an entry
    // here would hand the area's root to root.
    let staged = inputs.go()?;
    let input_area = files.input_area();
    areas.push(Area {
        target: input_area.to_owned(),
        size_bytes: area_size(&staged),
        owner: (0, 0),
        mode: 0o755,
    });
    skipped.extend(staged.skipped);
    let cell = Ownership::Cell {
        uid: user.uid,
        gid: user.gid,
    };
    for writable in files.writable.iter().filter(|w| w.mounted) {
        areas.push(Area {
            target: writable.target(),
            size_bytes: writable.cap_bytes,
            owner: (user.uid, user.gid),
            mode: 0o700,
        });
        if let Some(seed) = &writable.seed {
            let mut tar = StageTar::on_disk(cell)?;
            tar.tree(".", seed.path())?;
            let staged = tar.finish()?;
            skipped.extend(staged.skipped);
            archives.push((writable.target(), staged.archive));
        }
    }
    if let Some(login) = &files.login {
        let mut tar = StageTar::in_memory(Ownership::Secret {
            uid: user.uid,
            gid: user.gid,
        });
        for (path, bytes) in &login.files {
            tar.file(path, bytes, false)?;
        }
        let staged = tar.finish()?;
        areas.push(Area {
            target: crate::creds::STAGING_TARGET.to_owned(),
            size_bytes: area_size(&staged),
            owner: (user.uid, user.gid),
            mode: 0o500,
        });
        archives.push((crate::creds::STAGING_TARGET.to_owned(), staged.archive));
    }
    if control {
        areas.push(Area {
            target: CONTROL_AREA.to_owned(),
            size_bytes: AREA_SLACK,
            owner: (0, 0),
            mode: 0o755,
        });
    }
    // Last: the go file at its end lets init start the program.
    archives.push((input_area.to_owned(), staged.archive));
    Ok(CellStaging {
        archives,
        areas,
        skipped,
    })
}

fn special(path: &Path, meta: &std::fs::Metadata) -> Skip {
    use std::os::unix::fs::FileTypeExt;
    let kind = meta.file_type();
    if kind.is_symlink() {
        Skip::Symlink {
            target: std::fs::read_link(path)
                .map(|t| t.to_string_lossy().into_owned())
                .unwrap_or_default(),
        }
    } else if kind.is_fifo() {
        Skip::Special { kind: "fifo" }
    } else if kind.is_socket() {
        Skip::Special { kind: "socket" }
    } else if kind.is_char_device() {
        Skip::Special {
            kind: "char_device",
        }
    } else {
        Skip::Special {
            kind: "block_device",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cell::files::INPUT_AREA;

    fn entries(staged: Staged) -> Vec<(String, u64, u32, String)> {
        let bytes = staged.archive.into_bytes().unwrap();
        let mut archive = tar::Archive::new(bytes.as_ref());
        archive
            .entries()
            .unwrap()
            .map(|e| {
                let mut e = e.unwrap();
                let header = e.header().clone();
                let mut text = String::new();
                let _ = io::Read::read_to_string(&mut e, &mut text);
                (
                    e.path().unwrap().display().to_string(),
                    header.uid().unwrap(),
                    header.mode().unwrap(),
                    text,
                )
            })
            .collect()
    }

    #[test]
    fn a_host_folder_is_staged_read_only_without_its_links_and_specials() {
        let host = tempfile::tempdir().unwrap();
        let raw = host.path().join("raw");
        std::fs::create_dir_all(raw.join("sub")).unwrap();
        std::fs::write(raw.join("sub/notes.md"), "notes").unwrap();
        std::os::unix::fs::symlink("/etc/passwd", raw.join("passwd")).unwrap();
        let fifo = std::ffi::CString::new(raw.join("fifo").to_str().unwrap()).unwrap();
        #[expect(unsafe_code, reason = "test fixture: std has no mkfifo")]
        // SAFETY: a valid NUL-terminated path.
        let rc = unsafe { libc::mkfifo(fifo.as_ptr(), 0o644) };
        assert_eq!(rc, 0);
        let mut tar = StageTar::on_disk(Ownership::ReadOnly).unwrap();
        tar.file("PROMPT.txt", b"do it", false).unwrap();
        tar.tree("raw", &raw).unwrap();
        tar.tree("missing", &host.path().join("nothing")).unwrap();
        let staged = tar.finish().unwrap();
        let skipped: Vec<String> = staged.skipped.iter().map(|s| s.path.clone()).collect();
        assert_eq!(skipped, ["raw/fifo", "raw/passwd"]);
        assert_eq!(staged.bytes, 10);
        assert_eq!(
            entries(staged),
            [
                ("PROMPT.txt".into(), 0, 0o444, "do it".into()),
                ("raw".into(), 0, 0o555, String::new()),
                ("raw/sub".into(), 0, 0o555, String::new()),
                ("raw/sub/notes.md".into(), 0, 0o444, "notes".into()),
                ("missing".into(), 0, 0o555, String::new()),
            ]
        );
    }

    #[test]
    fn the_hidden_folder_is_roots_and_readable_by_the_cell_users_group_alone() {
        let host = tempfile::tempdir().unwrap();
        let hidden = host.path().join("verify");
        std::fs::create_dir_all(hidden.join("tests")).unwrap();
        std::fs::write(hidden.join("tests/test_a.py"), "x").unwrap();
        let mut tar = StageTar::on_disk(Ownership::Group { gid: 1000 }).unwrap();
        tar.tree("verify", &hidden).unwrap();
        let bytes = tar.finish().unwrap().archive.into_bytes().unwrap();
        let mut archive = tar::Archive::new(bytes.as_ref());
        let listed: Vec<(String, u64, u64, u32)> = archive
            .entries()
            .unwrap()
            .map(|e| {
                let e = e.unwrap();
                let h = e.header();
                (
                    e.path().unwrap().display().to_string(),
                    h.uid().unwrap(),
                    h.gid().unwrap(),
                    h.mode().unwrap(),
                )
            })
            .collect();
        assert_eq!(
            listed,
            [
                ("verify".into(), 0, 1000, 0o550),
                ("verify/tests".into(), 0, 1000, 0o550),
                ("verify/tests/test_a.py".into(), 0, 1000, 0o440),
            ]
        );
    }

    #[test]
    fn one_upload_holds_the_inputs_and_ends_with_the_go_file_which_nothing_else_can_write() {
        let mut tar = StageTar::on_disk(Ownership::ReadOnly).unwrap();
        tar.file("PROMPT.txt", b"do it", false).unwrap();
        // Only the host's own go() may write the go file: an entry of that name is refused.
        tar.file(GO_NAME, b"", false).unwrap();
        tar.folder(&format!("{GO_NAME}/x")).unwrap();
        tar.set_ownership(Ownership::Group { gid: 1000 });
        tar.file("verify/tests.json", b"{}", false).unwrap();
        let staged = tar.go().unwrap();
        let refused: Vec<&str> = staged.skipped.iter().map(|s| s.path.as_str()).collect();
        assert_eq!(refused, [GO_NAME.to_owned(), format!("{GO_NAME}/x")]);
        let listed = entries(staged);
        let names: Vec<&str> = listed.iter().map(|e| e.0.as_str()).collect();
        assert_eq!(
            names,
            ["PROMPT.txt", "verify", "verify/tests.json", GO_NAME],
            "the go file comes last"
        );
        assert_eq!(
            (listed[2].1, listed[2].2),
            (0, 0o440),
            "hidden: root's, group-read"
        );
        assert_eq!(
            (listed[3].1, listed[3].2),
            (0, 0o444),
            "go: root's, read-only"
        );
    }

    #[test]
    fn a_cell_without_seed_or_login_is_staged_in_one_upload() {
        let files = CellFiles {
            inputs: vec![Input::Text {
                path: "PROMPT.txt".into(),
                bytes: b"hi".to_vec(),
            }],
            writable: Vec::new(),
            login: None,
            input_area: None,
        };
        let user = CellUser {
            uid: 1000,
            gid: 1000,
        };
        let staging = prepare(&files, user, false).unwrap();
        let targets: Vec<&str> = staging.archives.iter().map(|(t, _)| t.as_str()).collect();
        assert_eq!(targets, [INPUT_AREA]);
        let areas: Vec<&str> = staging.areas.iter().map(|a| a.target.as_str()).collect();
        assert_eq!(areas, [INPUT_AREA], "no control area without launch");
        let with_launch = prepare(&files, user, true).unwrap();
        assert!(with_launch.areas.iter().any(|a| a.target == CONTROL_AREA));
        assert_eq!(
            crate::runtime::GO_FILE,
            format!("{INPUT_AREA}/{GO_NAME}"),
            "init looks where the tar puts it"
        );
    }

    #[test]
    fn a_login_is_the_cell_users_alone_and_parents_come_first() {
        let mut tar = StageTar::in_memory(Ownership::Secret {
            uid: 1000,
            gid: 1000,
        });
        tar.file("claude/.credentials.json", b"{}", false).unwrap();
        let listed = entries(tar.finish().unwrap());
        assert_eq!(
            listed,
            [
                ("claude".into(), 1000, 0o500, String::new()),
                ("claude/.credentials.json".into(), 1000, 0o400, "{}".into()),
            ]
        );
    }
}
