//! Flavors: which image runs a CLI, what its cell looks like from inside (HOME), and how its
//! output reveals a rate limit. Image build contexts are embedded in the binary from `images/`
//! at compile time, so an installed multicooker needs no checkout.
//!
//! This module never talks to the engine; it only produces build contexts and descriptions.

mod auth;
pub mod build_args;
pub mod final_message;
#[cfg(test)]
mod fixtures;
mod limits;
pub mod meter;
pub mod task_layer;
mod usage;

use std::io;
use std::path::{Path, PathBuf};

use sha2::Digest;

pub use auth::detect_login_failure;
pub use limits::{LimitKind, RateLimit, detect_rate_limit};
pub use usage::{COST_BASIS, usage_from_output};

use crate::error::Hint;

include!(concat!(env!("OUT_DIR"), "/images.rs"));

/// The statically linked `mc-cell` program, injected into images that run it.
static MC_CELL: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/mc-cell"));

/// HOME inside every cell: a tmpfs, so nothing a CLI writes there reaches the host disk.
pub const CELL_HOME: &str = "/home/mc";

/// Errors producing a flavor's image.
#[derive(Debug, thiserror::Error)]
pub enum FlavorError {
    /// No `images/<flavor>/` in this build.
    #[error("flavor `{flavor}` has no image in this build of multicooker")]
    NoImage {
        /// The flavor.
        flavor: String,
    },
    /// The image needs `mc-cell`, which could not be built on this platform.
    #[error("flavor `{flavor}` needs mc-cell, a static Linux program this build could not compile")]
    NoCell {
        /// The flavor.
        flavor: String,
    },
    /// `MULTICOOKER_BUILD_ARGS` holds an item that is not a usable build argument.
    #[error("`MULTICOOKER_BUILD_ARGS`: `{item}`: {reason}")]
    BuildArgs {
        /// The item.
        item: String,
        /// What is wrong with it.
        reason: String,
    },
    /// Assembling the build context failed.
    #[error("cannot assemble the build context of flavor `{flavor}`")]
    Context {
        /// The flavor.
        flavor: String,
        /// The cause.
        #[source]
        source: io::Error,
    },
}

crate::hint_source!(FlavorError);

impl Hint for FlavorError {
    fn hint(&self) -> Option<String> {
        match self {
            Self::NoImage { flavor } => Some(format!(
                "use `flavor: dummy` to try multicooker, or add `images/{flavor}/Dockerfile` and rebuild"
            )),
            Self::NoCell { .. } => {
                Some("build multicooker on Linux to use the dummy flavor".into())
            }
            Self::BuildArgs { .. } => Some(
                "set it to `NAME=value,…` with the ARG names of the flavor Dockerfiles (images/README.md), e.g. `BASE_IMAGE=my-debian:12`, or unset it".into(),
            ),
            Self::Context { .. } => None,
        }
    }
}

/// A build context ready for the engine.
#[derive(Debug, Clone)]
pub struct BuildContext {
    /// Uncompressed tar with a `Dockerfile` at its root.
    pub tar: Vec<u8>,
    /// Short hash of the content, recorded as an image label.
    pub digest: String,
}

/// True when `flavor` runs a vendor's model, which could prefer its own vendor's work. The
/// offline `dummy` is no vendor: it scores by the quality its participants were scripted with,
/// so `require_distinct_flavor` has nothing to guard against between dummies (issue 17: the
/// reference's example cooks, set to `dummy`, must give a leaderboard). A cook's own flavor may
/// wrap any vendor's CLI, so it counts as one.
pub fn is_vendor(flavor: &str) -> bool {
    flavor != "dummy"
}

/// The hosts a flavor's CLI needs (its model API and sign-in), as `host:port`. These are the
/// only targets a judge's proxy allows, and the start of every participant's allowlist.
/// Taken from each vendor's documentation (docs/FLAVORS.md); check them against a real login.
pub fn api_hosts(flavor: &str) -> &'static [&'static str] {
    const CLAUDE: &[&str] = &[
        "api.anthropic.com:443",
        "claude.ai:443",
        "platform.claude.com:443",
        "console.anthropic.com:443",
    ];
    const CODEX: &[&str] = &[
        "api.openai.com:443",
        "chatgpt.com:443",
        "auth.openai.com:443",
    ];
    const AGY: &[&str] = &[
        "generativelanguage.googleapis.com:443",
        "cloudcode-pa.googleapis.com:443",
        "oauth2.googleapis.com:443",
        "www.googleapis.com:443",
    ];
    const GROK: &[&str] = &["api.x.ai:443", "auth.x.ai:443"];
    const TRIAD: &[&str] = &[
        "api.anthropic.com:443",
        "claude.ai:443",
        "platform.claude.com:443",
        "console.anthropic.com:443",
        "api.openai.com:443",
        "chatgpt.com:443",
        "auth.openai.com:443",
        "api.x.ai:443",
        "auth.x.ai:443",
    ];
    match flavor {
        "claude" => CLAUDE,
        "codex" => CODEX,
        "agy" => AGY,
        "grok" => GROK,
        "triad" => TRIAD,
        _ => &[],
    }
}

/// Environment variables a flavor's cell must never receive (docs/FLAVORS.md §9): API keys that
/// would bill the API instead of the subscription, endpoint overrides, host paths, and every
/// flavor's secrets. Cells get an explicit environment, so none is ever inherited; this list is
/// enforced on top of that, for anything a future caller might add.
pub fn denied_env() -> Vec<&'static str> {
    const ALL: &[&str] = &[
        "SSH_AUTH_SOCK",
        "GH_TOKEN",
        "GITHUB_TOKEN",
        "NPM_TOKEN",
        "AWS_ACCESS_KEY_ID",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",
        "GOOGLE_APPLICATION_CREDENTIALS",
        "DOCKER_HOST",
    ];
    const CLAUDE: &[&str] = &[
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_AUTH_TOKEN",
        "ANTHROPIC_BASE_URL",
        "CLAUDE_CODE_USE_BEDROCK",
        "CLAUDE_CODE_USE_VERTEX",
        "CLAUDE_CODE_USE_FOUNDRY",
        "CLAUDE_CONFIG_DIR",
        "IS_SANDBOX",
        "CLAUDE_CODE_OAUTH_TOKEN",
    ];
    const CODEX: &[&str] = &[
        "OPENAI_API_KEY",
        "CODEX_API_KEY",
        "OPENAI_BASE_URL",
        "CODEX_HOME",
        "CODEX_ACCESS_TOKEN",
    ];
    const AGY: &[&str] = &[
        "GEMINI_API_KEY",
        "GOOGLE_API_KEY",
        "GOOGLE_GENAI_USE_VERTEXAI",
        "GOOGLE_CLOUD_PROJECT",
        "DBUS_SESSION_BUS_ADDRESS",
    ];
    const GROK: &[&str] = &["XAI_API_KEY", "GROK_CODE_XAI_API_KEY"];
    let mut denied: Vec<&'static str> = ALL.to_vec();
    // Every flavor's keys are denied to every cell: another vendor's key has no business there.
    denied.extend(CLAUDE.iter().chain(CODEX).chain(AGY).chain(GROK));
    denied
}

/// The tag of a flavor's shared base image for a context digest (the default namespace).
pub fn base_tag(flavor: &str, digest: &str) -> String {
    base_tag_in(flavor, digest, None)
}

/// [`base_tag`] in a namespace (`--namespace`): `multicooker-base-claude:<digest>`,
/// `multicooker-base-claude:<ns>-<digest>`. Namespaces never share a base image, so one never
/// removes another's.
pub fn base_tag_in(flavor: &str, digest: &str, namespace: Option<&str>) -> String {
    format!(
        "multicooker-base-{flavor}:{}",
        tag_version(digest, namespace)
    )
}

/// The tag of a base image built from a cook's own `flavors/<flavor>/` folder: never under the
/// packaged flavors' names, so a cook's (or a test's) own `claude` never stands where a user's
/// real `multicooker-base-claude` images are. Namespaced like [`base_tag_in`].
pub fn own_tag(flavor: &str, digest: &str, namespace: Option<&str>) -> String {
    format!(
        "multicooker-own-{flavor}:{}",
        tag_version(digest, namespace)
    )
}

/// The tag part of a base image: the digest, after the namespace when there is one (a tag takes
/// the namespace's letters, digits, `-` and `_`, and up to 128 characters).
fn tag_version(digest: &str, namespace: Option<&str>) -> String {
    namespace.map_or_else(|| digest.to_owned(), |ns| format!("{ns}-{digest}"))
}

/// The build context of a cook's own image: `FROM` the shared base, nothing else, so it
/// builds in one step and carries the cook's labels.
pub fn thin_context(base: &str) -> Result<Vec<u8>, io::Error> {
    let mut builder = tar::Builder::new(Vec::new());
    append(
        &mut builder,
        "Dockerfile",
        format!("FROM {base}\n").as_bytes(),
        false,
    )?;
    builder.into_inner()
}

/// The name of the cell's init in a build context (never a name a flavor's folder uses).
const INIT_FILE: &str = ".multicooker-init";

/// True when this build has an image for `flavor`.
pub fn has_image(flavor: &str) -> bool {
    let dockerfile = format!("{flavor}/Dockerfile");
    IMAGE_FILES.iter().any(|(path, _, _)| *path == dockerfile)
}

/// A cook's own image folder for a flavor: `<cook>/flavors/<flavor>/`, if it has a Dockerfile.
/// It overrides the packaged image of a known flavor, or defines a custom flavor.
pub fn cook_image_dir(cook: &Path, flavor: &str) -> Option<PathBuf> {
    let dir = cook.join("flavors").join(flavor);
    dir.join("Dockerfile").is_file().then_some(dir)
}

/// Custom flavors a cook defines (folders of `<cook>/flavors/` with a Dockerfile).
pub fn cook_flavors(cook: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(cook.join("flavors"))
        .map(|entries| {
            entries
                .flatten()
                .filter(|e| e.path().join("Dockerfile").is_file())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

/// The build context of a flavor: the cook's own `flavors/<flavor>/` if present, else the
/// packaged `images/<flavor>/`; `mc-cell` is added when the Dockerfile copies it. Every context
/// gets the cell's init as the Dockerfile's last instruction (so nothing the flavor's own
/// Dockerfile does replaces it: it is what ends a cell at its deadline when multicooker is
/// gone). `args` (`MULTICOOKER_BUILD_ARGS`, resolved by the settings) set the defaults of the
/// Dockerfile's `ARG` lines. Deterministic: same content and arguments, same bytes.
pub fn build_context(
    flavor: &str,
    cook: Option<&Path>,
    args: &[build_args::BuildArg],
) -> Result<BuildContext, FlavorError> {
    let context_error = |source| FlavorError::Context {
        flavor: flavor.to_owned(),
        source,
    };
    let files = match cook.and_then(|c| cook_image_dir(c, flavor)) {
        Some(dir) => read_folder(&dir).map_err(context_error)?,
        None if has_image(flavor) => {
            let prefix = format!("{flavor}/");
            IMAGE_FILES
                .iter()
                .filter(|(p, _, _)| p.starts_with(&prefix))
                .map(|(p, bytes, exec)| (p[prefix.len()..].to_owned(), bytes.to_vec(), *exec))
                .collect()
        }
        None => {
            return Err(FlavorError::NoImage {
                flavor: flavor.to_owned(),
            });
        }
    };
    context_of(flavor, &files, args)
}

/// The build context of a Dockerfile alone (a Harbor task's prebuilt `docker_image`, as
/// `FROM <image>`), the cell's init added last.
pub fn dockerfile_context(
    name: &str,
    dockerfile: &str,
    args: &[build_args::BuildArg],
) -> Result<BuildContext, FlavorError> {
    context_of(
        name,
        &[(
            "Dockerfile".to_owned(),
            dockerfile.as_bytes().to_vec(),
            false,
        )],
        args,
    )
}

/// The build context of a folder with a Dockerfile (the verifier's `verify/`, a Harbor task's
/// `environment/`), its files read without following links; `mc-cell` is added when the
/// Dockerfile copies it.
pub fn folder_context(
    name: &str,
    dir: &Path,
    args: &[build_args::BuildArg],
) -> Result<BuildContext, FlavorError> {
    let files = read_folder(dir).map_err(|source| FlavorError::Context {
        flavor: name.to_owned(),
        source,
    })?;
    context_of(name, &files, args)
}

fn context_of(
    flavor: &str,
    files: &[(String, Vec<u8>, bool)],
    args: &[build_args::BuildArg],
) -> Result<BuildContext, FlavorError> {
    let context_error = |source| FlavorError::Context {
        flavor: flavor.to_owned(),
        source,
    };
    if MC_CELL.is_empty() {
        return Err(FlavorError::NoCell {
            flavor: flavor.to_owned(),
        });
    }
    let mut builder = tar::Builder::new(Vec::new());
    let mut needs_cell = false;
    for (name, bytes, executable) in files {
        if name == "Dockerfile" {
            let text = String::from_utf8_lossy(bytes);
            needs_cell = text
                .lines()
                .any(|l| l.trim_start().starts_with("COPY mc-cell"));
            // Build arguments become the ARG defaults, so they are part of the content hash.
            let mut dockerfile = if args.is_empty() {
                bytes.clone()
            } else {
                build_args::apply(&text, args).into_bytes()
            };
            dockerfile.extend_from_slice(
                format!(
                    "\n# multicooker: the cell's init, last, so nothing above replaces it\nCOPY {INIT_FILE} {}\n",
                    crate::runtime::INIT_PATH
                )
                .as_bytes(),
            );
            append(&mut builder, name, &dockerfile, *executable).map_err(context_error)?;
            continue;
        }
        append(&mut builder, name, bytes, *executable).map_err(context_error)?;
    }
    if needs_cell {
        append(&mut builder, "mc-cell", MC_CELL, true).map_err(context_error)?;
    }
    append(&mut builder, INIT_FILE, MC_CELL, true).map_err(context_error)?;
    let tar = builder.into_inner().map_err(context_error)?;
    let digest = sha2::Sha256::digest(&tar)
        .iter()
        .take(6)
        .map(|b| format!("{b:02x}"))
        .collect();
    Ok(BuildContext { tar, digest })
}

/// The regular files of a folder (links and special files are not followed), sorted.
fn read_folder(dir: &Path) -> io::Result<Vec<(String, Vec<u8>, bool)>> {
    use std::os::unix::fs::PermissionsExt;
    let mut files = Vec::new();
    for entry in walkdir::WalkDir::new(dir)
        .follow_links(false)
        .sort_by_file_name()
    {
        let entry = entry.map_err(io::Error::other)?;
        if entry.file_type().is_file() {
            let name = entry
                .path()
                .strip_prefix(dir)
                .unwrap_or(entry.path())
                .to_string_lossy()
                .into_owned();
            let executable = entry
                .metadata()
                .map_err(io::Error::other)?
                .permissions()
                .mode()
                & 0o111
                != 0;
            files.push((name, fs_err::read(entry.path())?, executable));
        }
    }
    Ok(files)
}

fn append(
    builder: &mut tar::Builder<Vec<u8>>,
    name: &str,
    bytes: &[u8],
    executable: bool,
) -> io::Result<()> {
    let mut header = tar::Header::new_gnu();
    header.set_size(bytes.len() as u64);
    header.set_mode(if executable { 0o755 } else { 0o644 });
    header.set_mtime(0);
    header.set_uid(0);
    header.set_gid(0);
    builder.append_data(&mut header, name, bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dummy_context_holds_dockerfile_and_static_cell() {
        let context = build_context("dummy", None, &[]).unwrap();
        let mut archive = tar::Archive::new(context.tar.as_slice());
        let mut names: Vec<String> = archive
            .entries()
            .unwrap()
            .map(|e| e.unwrap().path().unwrap().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(names, [".multicooker-init", "Dockerfile", "mc-cell"]);
        let mut dockerfile = String::new();
        let mut archive = tar::Archive::new(context.tar.as_slice());
        for entry in archive.entries().unwrap() {
            let mut entry = entry.unwrap();
            if entry.path().unwrap().to_string_lossy() == "Dockerfile" {
                io::Read::read_to_string(&mut entry, &mut dockerfile).unwrap();
            }
        }
        assert!(
            dockerfile.ends_with("COPY .multicooker-init /opt/multicooker/mc-cell\n"),
            "the init is the last instruction: {dockerfile}"
        );
        assert_eq!(
            build_context("dummy", None, &[]).unwrap().digest,
            context.digest,
            "contexts are deterministic"
        );
    }

    #[test]
    fn build_args_change_the_content_hash_only_when_the_dockerfile_declares_them() {
        let files = |flavor: &str| -> Vec<(String, Vec<u8>, bool)> {
            let prefix = format!("{flavor}/");
            IMAGE_FILES
                .iter()
                .filter(|(p, _, _)| p.starts_with(&prefix))
                .map(|(p, b, e)| (p[prefix.len()..].to_owned(), b.to_vec(), *e))
                .collect()
        };
        let args = build_args::parse("BASE_IMAGE=mc-test-rootfs:1,CLAUDE_SOURCE=mc-cli:1").unwrap();
        let plain = context_of("claude", &files("claude"), &[]).unwrap();
        let swapped = context_of("claude", &files("claude"), &args).unwrap();
        assert_ne!(
            plain.digest, swapped.digest,
            "an image built with test arguments never stands under the normal tag"
        );
        assert_ne!(
            base_tag("claude", &plain.digest),
            base_tag("claude", &swapped.digest)
        );
        let dummy = context_of("dummy", &files("dummy"), &args).unwrap();
        assert_eq!(
            dummy.digest,
            context_of("dummy", &files("dummy"), &[]).unwrap().digest,
            "a Dockerfile that declares none of them is unchanged"
        );
    }

    #[test]
    fn flavors_without_an_image_say_so() {
        let error = build_context("nonesuch", None, &[]).unwrap_err();
        assert!(matches!(error, FlavorError::NoImage { .. }));
        assert!(error.hint().unwrap().contains("flavor: dummy"));
    }
}

#[cfg(test)]
mod image_tests {
    use super::*;

    fn dockerfile(flavor: &str) -> String {
        let path = format!("{flavor}/Dockerfile");
        let (_, bytes, _) = IMAGE_FILES
            .iter()
            .find(|(p, _, _)| *p == path)
            .unwrap_or_else(|| panic!("images/{flavor}/Dockerfile is packaged"));
        String::from_utf8(bytes.to_vec()).unwrap()
    }

    /// The real flavors' images cannot be built here (no registry); this checks what can be
    /// checked without one: pins, labels, user, entrypoint, nothing installed under HOME.
    #[test]
    fn real_images_pin_label_run_non_root_and_use_the_entrypoint() {
        for flavor in ["claude", "codex", "agy", "grok", "triad"] {
            let text = dockerfile(flavor);
            let from = text
                .lines()
                .find(|l| l.starts_with("FROM ") || l.starts_with("ARG BASE_IMAGE="))
                .unwrap();
            assert!(
                from.contains(':') && !from.contains(":latest"),
                "{flavor}: base image pinned by tag: {from}"
            );
            assert!(
                text.contains("ARG ") && text.contains("_VERSION="),
                "{flavor}: version pin"
            );
            let label = text
                .lines()
                .find(|l| l.contains("io.multicooker.cli-version=\""))
                .unwrap_or_else(|| panic!("{flavor}: version label"));
            assert!(
                label.contains("_VERSION}"),
                "{flavor}: the label is the pin: {label}"
            );
            assert!(text.contains("\nUSER 1000:1000\n"), "{flavor}: non-root");
            assert!(
                text.contains("COPY mc-cell /usr/local/bin/mc-cell"),
                "{flavor}"
            );
            assert!(
                text.contains(&format!(
                    "ENTRYPOINT [\"/usr/local/bin/mc-cell\", \"run\", \"{flavor}\"]"
                )),
                "{flavor}: headless entrypoint"
            );
            assert!(
                text.contains("HOME=/home/mc"),
                "{flavor}: HOME is the cell's tmpfs"
            );
            assert!(!text.contains("latest\""), "{flavor}: no floating versions");
            let context = build_context(flavor, None, &[]).unwrap();
            let mut archive = tar::Archive::new(context.tar.as_slice());
            let names: Vec<String> = archive
                .entries()
                .unwrap()
                .map(|e| e.unwrap().path().unwrap().to_string_lossy().into_owned())
                .collect();
            assert_eq!(
                names,
                ["Dockerfile", "mc-cell", ".multicooker-init"],
                "{flavor}: context"
            );
        }
    }
}
