//! Hostile archives, built by hand the way an engine (or a cell that controls its own tree)
//! could shape them: every entry that is not a plain folder or file is refused and recorded.

use std::os::unix::fs::PermissionsExt;

use super::*;

fn header(kind: tar::EntryType, size: u64) -> tar::Header {
    let mut header = tar::Header::new_gnu();
    header.set_entry_type(kind);
    header.set_size(size);
    header.set_mode(0o777);
    header.set_uid(0);
    header
}

/// A tar whose entries start with `out/`, as the engine's archive API gives them.
struct Tar(tar::Builder<Vec<u8>>);

impl Tar {
    fn new() -> Self {
        let mut tar = Self(tar::Builder::new(Vec::new()));
        tar.dir("");
        tar
    }
    fn dir(&mut self, path: &str) -> &mut Self {
        let mut h = header(tar::EntryType::Directory, 0);
        self.0
            .append_data(&mut h, format!("out/{path}"), &[][..])
            .unwrap();
        self
    }
    fn file(&mut self, path: &str, bytes: &[u8]) -> &mut Self {
        let mut h = header(tar::EntryType::Regular, bytes.len() as u64);
        self.0
            .append_data(&mut h, format!("out/{path}"), bytes)
            .unwrap();
        self
    }
    fn link(&mut self, kind: tar::EntryType, path: &str, target: &str) -> &mut Self {
        let mut h = header(kind, 0);
        self.0
            .append_link(&mut h, format!("out/{path}"), target)
            .unwrap();
        self
    }
    fn special(&mut self, kind: tar::EntryType, path: &str) -> &mut Self {
        let mut h = header(kind, 0);
        self.0
            .append_data(&mut h, format!("out/{path}"), &[][..])
            .unwrap();
        self
    }
    /// An entry whose raw name is written into the header as is (`..`, absolute paths).
    fn raw(&mut self, name: &str, bytes: &[u8]) -> &mut Self {
        let mut h = header(tar::EntryType::Regular, bytes.len() as u64);
        h.as_gnu_mut().unwrap().name[..name.len()].copy_from_slice(name.as_bytes());
        h.set_cksum();
        self.0.append(&h, bytes).unwrap();
        self
    }
    fn bytes(&mut self) -> Vec<u8> {
        std::mem::replace(&mut self.0, tar::Builder::new(Vec::new()))
            .into_inner()
            .unwrap()
    }
}

fn unpack_into(tar: &[u8], bounds: Bounds, secrets: &[&str]) -> (tempfile::TempDir, Collected) {
    let host = tempfile::tempdir().unwrap();
    let secrets: Vec<String> = secrets.iter().map(|s| (*s).to_owned()).collect();
    let report = unpack(
        tar,
        &host.path().join("out"),
        bounds,
        &Redactor::new(&secrets),
    )
    .unwrap();
    (host, report)
}

fn skips(report: &Collected) -> Vec<(String, String)> {
    report
        .copy
        .skipped
        .iter()
        .map(|s| {
            let why = serde_json::to_value(&s.skip).unwrap()["reason"]
                .as_str()
                .unwrap_or("?")
                .to_owned();
            (s.path.clone(), why)
        })
        .collect()
}

#[test]
fn only_folders_and_regular_files_are_written_and_every_other_entry_is_recorded() {
    let tar = Tar::new()
        .file("RESULT.md", b"done")
        .dir("site")
        .file("site/index.html", b"<p>")
        .link(tar::EntryType::Symlink, "shadow", "/etc/shadow")
        .link(
            tar::EntryType::Symlink,
            "mapping",
            "../../judging/_mapping.json",
        )
        .link(tar::EntryType::Link, "hard", "out/RESULT.md")
        .special(tar::EntryType::Fifo, "fifo")
        .special(tar::EntryType::Char, "null")
        .special(tar::EntryType::Block, "disk")
        .raw("../escape.txt", b"x")
        .raw("/etc/evil", b"x")
        .raw("out/../../up", b"x")
        .bytes();
    let (host, report) = unpack_into(&tar, Bounds::with_max_bytes(1 << 20), &[]);
    let out = host.path().join("out");
    assert_eq!(
        std::fs::read_to_string(out.join("RESULT.md")).unwrap(),
        "done"
    );
    assert_eq!((report.copy.files, report.copy.bytes), (2, 7));
    let mut names: Vec<String> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["RESULT.md", "site"]);
    assert!(!host.path().join("escape.txt").exists() && !host.path().join("up").exists());
    let why: Vec<String> = skips(&report).into_iter().map(|(_, w)| w).collect();
    assert_eq!(
        why,
        [
            "symlink", "symlink", "hardlink", "special", "special", "special", "bad_path",
            "bad_path", "bad_path"
        ]
    );
}

#[test]
fn what_is_written_belongs_to_the_operator_alone() {
    let tar = Tar::new().dir("d").file("d/f", b"x").bytes();
    let (host, _) = unpack_into(&tar, Bounds::with_max_bytes(1 << 20), &[]);
    let mode = |p: &str| {
        std::fs::metadata(host.path().join(p))
            .unwrap()
            .permissions()
            .mode()
            & 0o777
    };
    assert_eq!(
        (mode("out"), mode("out/d"), mode("out/d/f")),
        (0o700, 0o700, 0o600)
    );
}

#[test]
fn a_deep_tree_is_cut_once_at_the_limit_and_the_rest_is_kept() {
    let mut tar = Tar::new();
    tar.file("RESULT.md", b"ok");
    let mut path = String::new();
    for level in 0..100 {
        path.push_str(&format!("d{level}/"));
        tar.dir(path.trim_end_matches('/'));
    }
    tar.file(&format!("{path}deep.txt"), b"deep");
    let bytes = tar.bytes();
    let (host, report) = unpack_into(&bytes, Bounds::with_max_bytes(1 << 20), &[]);
    assert!(host.path().join("out/RESULT.md").is_file());
    assert_eq!(
        skips(&report),
        [(
            (0..=MAX_DEPTH)
                .map(|l| format!("d{l}"))
                .collect::<Vec<_>>()
                .join("/"),
            "too_deep".to_owned()
        )],
        "one record for the cut subtree"
    );
}

#[test]
fn long_names_size_and_count_caps_skip_entries_not_the_area() {
    let long = "n".repeat(300);
    let tar = Tar::new()
        .file(&long, b"x")
        .file("a", &[b'a'; 600])
        .file("b", &[b'b'; 600])
        .file("c", b"c")
        .file("d", b"d")
        .bytes();
    let bounds = Bounds {
        max_bytes: 1000,
        max_entries: 3,
        max_depth: 8,
        max_path_bytes: 256,
    };
    let (host, report) = unpack_into(&tar, bounds, &[]);
    assert_eq!(
        skips(&report),
        [
            (long.clone(), "path_too_long".to_owned()),
            ("b".into(), "size_cap".into()),
            ("d".into(), "count_cap".into())
        ]
    );
    assert!(host.path().join("out/a").is_file() && host.path().join("out/c").is_file());
}

#[test]
fn a_login_copied_into_the_output_is_redacted_before_it_is_written() {
    let mut big = vec![b'.'; 3 << 20];
    big.extend_from_slice(b"sk-live-TOKEN-0123456789");
    let tar = Tar::new()
        .file("stolen.json", b"{\"token\": \"sk-live-TOKEN-0123456789\"}")
        .file("big.log", &big)
        .file("clean.md", b"nothing")
        .bytes();
    let (host, report) = unpack_into(
        &tar,
        Bounds::with_max_bytes(64 << 20),
        &["sk-live-TOKEN-0123456789"],
    );
    let stolen = std::fs::read_to_string(host.path().join("out/stolen.json")).unwrap();
    assert_eq!(stolen, "{\"token\": \"[REDACTED]\"}");
    let big = std::fs::read(host.path().join("out/big.log")).unwrap();
    assert!(big.ends_with(b"[REDACTED]"));
    let redacted: Vec<&str> = report.redacted.iter().map(|r| r.path.as_str()).collect();
    assert_eq!(redacted, ["stolen.json", "big.log"]);
}

#[test]
fn many_skips_are_counted_beyond_the_listed_ones() {
    let mut tar = Tar::new();
    for i in 0..250 {
        tar.special(tar::EntryType::Fifo, &format!("f{i}"));
    }
    let bytes = tar.bytes();
    let (_host, report) = unpack_into(&bytes, Bounds::with_max_bytes(1 << 20), &[]);
    assert_eq!(report.copy.skipped.len(), 200);
    assert_eq!(report.skipped_unlisted, 50);
}

#[test]
fn the_destination_must_be_new() {
    let host = tempfile::tempdir().unwrap();
    let tar = Tar::new().file("a", b"x").bytes();
    let error = unpack(
        tar.as_slice(),
        host.path(),
        Bounds::with_max_bytes(1 << 20),
        &Redactor::new(&[]),
    )
    .unwrap_err();
    assert_eq!(error.kind(), io::ErrorKind::AlreadyExists);
}

#[test]
fn a_sparse_giant_is_cut_at_the_cap_and_what_came_before_is_kept() {
    // What the engine sends for a sparse file claiming 1 GiB in a 1 MiB area: all of it.
    let mut tar = tar::Builder::new(Vec::new());
    let mut h = header(tar::EntryType::Directory, 0);
    tar.append_data(&mut h, "out/", &[][..]).unwrap();
    let mut h = header(tar::EntryType::Regular, 2);
    tar.append_data(&mut h, "out/A.md", &b"ok"[..]).unwrap();
    let mut h = header(tar::EntryType::Regular, 1 << 30);
    h.set_path("out/giant").unwrap();
    h.set_cksum();
    // The entries so far, without the end-of-archive blocks `into_inner` would add.
    let mut bytes = tar.get_ref().clone();
    bytes.extend_from_slice(h.as_bytes());
    let stream = std::io::Read::chain(bytes.as_slice(), std::io::repeat(0));
    let host = tempfile::tempdir().unwrap();
    let bounds = Bounds {
        max_bytes: 1 << 20,
        max_entries: 10,
        max_depth: 8,
        max_path_bytes: 256,
    };
    let report = unpack(
        stream,
        &host.path().join("out"),
        bounds,
        &Redactor::new(&[]),
    )
    .unwrap();
    assert!(host.path().join("out/A.md").is_file(), "kept");
    assert!(report.cut.is_some(), "{report:?}");
}
