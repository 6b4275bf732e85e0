//! Build script: embeds `images/` and a statically linked `mc-cell` into the binary.
//!
//! No image registry is needed for the dummy flavor (and later the egress proxy and the fake
//! CLIs): their images are `FROM scratch` plus `mc-cell`, a std-only program
//! (`crates/mc-cell`) compiled here with `rustc` directly and `+crt-static`. It is compiled
//! with rustc rather than cargo because crt-static cannot apply to the proc-macro crates the
//! main binary depends on (cargo applies RUSTFLAGS to them without `--target`).

use std::env;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    let out = PathBuf::from(env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let manifest =
        PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    embed_images(&manifest.join("images"), &out);
    // `crates/mc-cell-src` links to `crates/mc-cell/src`: cargo leaves a nested package's
    // folder out of this crate's package, but follows the link, so the sources ship.
    build_cell(&manifest.join("crates/mc-cell-src"), &out);
}

/// Writes `images.rs`: every file under `images/` as `(relative path, bytes, executable)`.
fn embed_images(images: &Path, out: &Path) {
    println!("cargo:rerun-if-changed={}", images.display());
    let mut files = Vec::new();
    collect(images, images, &mut files);
    files.sort();
    let mut code = String::from(
        "/// Every file of `images/`: (path relative to `images/`, content, executable).\n",
    );
    code.push_str("pub static IMAGE_FILES: &[(&str, &[u8], bool)] = &[\n");
    for (relative, absolute, executable) in files {
        println!("cargo:rerun-if-changed={}", absolute.display());
        writeln!(
            code,
            "    ({relative:?}, include_bytes!({:?}), {executable}),",
            absolute.display().to_string()
        )
        .expect("writing to a String cannot fail");
    }
    code.push_str("];\n");
    std::fs::write(out.join("images.rs"), code).expect("OUT_DIR is writable");
}

fn collect(root: &Path, dir: &Path, files: &mut Vec<(String, PathBuf, bool)>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            continue;
        };
        if meta.is_dir() {
            println!("cargo:rerun-if-changed={}", path.display());
            collect(root, &path, files);
        } else if meta.is_file() {
            use std::os::unix::fs::PermissionsExt;
            let relative = path
                .strip_prefix(root)
                .expect("walked below root")
                .to_string_lossy()
                .replace('\\', "/");
            files.push((
                relative,
                path.clone(),
                meta.permissions().mode() & 0o111 != 0,
            ));
        }
    }
}

/// Compiles `crates/mc-cell` into `$OUT_DIR/mc-cell` as a static binary, or writes an empty
/// file and sets `mc_cell_missing` where that is impossible (a non-Linux host).
fn build_cell(source: &Path, out: &Path) {
    println!("cargo:rustc-check-cfg=cfg(mc_cell_missing)");
    println!("cargo:rerun-if-changed={}", source.display());
    if let Ok(entries) = std::fs::read_dir(source) {
        for entry in entries.flatten() {
            println!("cargo:rerun-if-changed={}", entry.path().display());
        }
    }
    let binary = out.join("mc-cell");
    let target_os = env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    if target_os != "linux" {
        println!(
            "cargo:warning=mc-cell (the dummy flavor's program) is only built on Linux; the dummy image will be unavailable"
        );
        std::fs::write(&binary, b"").expect("OUT_DIR is writable");
        println!("cargo:rustc-cfg=mc_cell_missing");
        return;
    }
    let rustc = env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let target = env::var("TARGET").expect("cargo sets TARGET");
    let status = Command::new(rustc)
        .args([
            "--edition",
            "2024",
            "--crate-name",
            "mc_cell",
            "--crate-type",
            "bin",
        ])
        .args([
            "-C",
            "opt-level=s",
            "-C",
            "target-feature=+crt-static",
            "-C",
            "strip=symbols",
            "-C",
            "panic=abort",
        ])
        .args(["--target", &target, "--cap-lints", "warn"])
        .arg(source.join("main.rs"))
        .arg("-o")
        .arg(&binary)
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .status()
        .expect("running rustc for mc-cell");
    assert!(
        status.success(),
        "compiling crates/mc-cell statically failed (see the rustc output above)"
    );
}
