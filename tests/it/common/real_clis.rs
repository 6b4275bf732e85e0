//! What the real-CLI suite needs: the pinned `PyPI` wheels' binaries and a Debian rootfs
//! (`tests/real-clis/prepare.sh`, cached in `~/.cache/multicooker/real-clis`), imported and built
//! into images through the engine API, and the stand-in model API (`crates/mc-standin`) as a
//! container on an egress network, reachable by the vendors' hostnames.
//!
//! The rootfs, base and CLI-source images are cached on purpose (hundreds of MB each): they
//! carry `io.multicooker.cook=real-clis-cache` and no root label, so no cook's leftover check
//! sees them; their tags are keyed on the package list, the CA and the CLI versions.

use std::collections::HashMap;

use futures_util::StreamExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use multicooker::runtime::{ImageSpec, LABEL_COOK, LABEL_ROLE};
use multicooker::runtime::{LABEL_ROOT, Labels, NetworkSpec, ObjectRef, Runtime};
use multicooker::state::root_id;

use super::{TestCook, block_on, engine};

/// The hostnames the stand-in answers as (network aliases).
pub(crate) const HOSTS: &[&str] = &[
    "api.anthropic.com",
    "claude.ai",
    "platform.claude.com",
    "console.anthropic.com",
    "chatgpt.com",
    "api.openai.com",
    "auth.openai.com",
];

/// The prepared inputs and the images built from them.
pub(crate) struct RealClis {
    pub(crate) values: HashMap<String, String>,
    pub(crate) base: String,
    pub(crate) claude_source: String,
    pub(crate) codex_source: String,
    pub(crate) standin_binary: PathBuf,
    pub(crate) ca_dir: PathBuf,
}

impl RealClis {
    /// `MULTICOOKER_BUILD_ARGS` for the claude and codex flavor images: only the base and the
    /// binaries' sources are swapped, so the images' own version checks hold the wheels to the
    /// packaged pins (one pin per CLI).
    pub(crate) fn build_args(&self) -> String {
        format!(
            "BASE_IMAGE={},CLAUDE_SOURCE={},CODEX_SOURCE={}",
            self.base, self.claude_source, self.codex_source
        )
    }
}

fn cache_labels() -> Labels {
    Labels::default()
        .with(LABEL_COOK, "real-clis-cache")
        .with(LABEL_ROLE, "test-cache")
}

fn run(command: &mut Command, fix: &str) -> String {
    let output = command
        .output()
        .unwrap_or_else(|e| panic!("cannot run {command:?} ({e}): {fix}"));
    assert!(
        output.status.success(),
        "{command:?} failed: {}\n{}\nfix: {fix}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// Fetches and builds everything once per test process.
pub(crate) fn prepare() -> &'static RealClis {
    static PREPARED: std::sync::OnceLock<RealClis> = std::sync::OnceLock::new();
    PREPARED.get_or_init(prepare_now)
}

fn prepare_now() -> RealClis {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = run(
        &mut Command::new(manifest.join("tests/real-clis/prepare.sh")),
        "the script names what is missing (pip: `apt-get install -y python3-pip`; debootstrap: `apt-get install -y debootstrap`)",
    );
    let values: HashMap<String, String> = out
        .lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect();
    let target = Path::new(env!("CARGO_BIN_EXE_multicooker"))
        .parent()
        .unwrap()
        .to_path_buf();
    run(
        Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
            .args(["build", "--locked", "-p", "mc-standin", "--target-dir"])
            .arg(target.parent().unwrap())
            .current_dir(manifest),
        "`cargo build -p mc-standin` must work",
    );
    let standin_binary = target.join("mc-standin");
    let cache = Path::new(&values["rootfs"]).parent().unwrap().to_path_buf();
    let ca_dir = cache.join("ca");
    if !ca_dir.join("ca.pem").is_file() {
        run(
            Command::new(&standin_binary).arg("ca").arg(&ca_dir),
            "the stand-in writes the test CA",
        );
    }
    let ca = fs_err::read(ca_dir.join("ca.pem")).unwrap();
    let ca_key = short_hash(&ca);
    let rootfs_tag = format!("multicooker-realcli-rootfs:{}", values["rootfs_key"]);
    let base = format!("multicooker-realcli-base:{}-{ca_key}", values["rootfs_key"]);
    let claude_source = format!("multicooker-realcli-claude:{}", values["claude_version"]);
    let codex_source = format!("multicooker-realcli-codex:{}", values["codex_version"]);
    block_on(async {
        import_rootfs(&rootfs_tag, Path::new(&values["rootfs"])).await;
        let dockerfile = format!(
            "FROM {rootfs_tag}\nCOPY multicooker-test-ca.crt /usr/local/share/ca-certificates/\nRUN update-ca-certificates\n"
        );
        build_once(
            &base,
            &dockerfile,
            &[("multicooker-test-ca.crt", &ca_dir.join("ca.pem"))],
        )
        .await;
        let claude = Path::new(&values["claude_binary"]).to_path_buf();
        build_once(
            &claude_source,
            "FROM scratch\nCOPY opt /opt\n",
            &[("opt/multicooker-cli/claude", &claude)],
        )
        .await;
        let codex = Path::new(&values["codex_dir"]);
        build_once(
            &codex_source,
            "FROM scratch\nCOPY opt /opt\n",
            &[
                ("opt/multicooker-cli/codex", &codex.join("codex")),
                (
                    "opt/multicooker-cli/codex-code-mode-host",
                    &codex.join("codex-code-mode-host"),
                ),
            ],
        )
        .await;
    });
    RealClis {
        values,
        base,
        claude_source,
        codex_source,
        standin_binary,
        ca_dir,
    }
}

fn short_hash(bytes: &[u8]) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(bytes)
        .iter()
        .take(6)
        .map(|b| format!("{b:02x}"))
        .collect()
}

async fn import_rootfs(tag: &str, tar: &Path) {
    let runtime = engine().await;
    if runtime.image_exists(tag).await.unwrap() {
        return;
    }
    let docker = bollard::Docker::connect_with_local_defaults().unwrap();
    let (repo, version) = tag.split_once(':').unwrap();
    let options = bollard::query_parameters::CreateImageOptionsBuilder::default()
        .from_src("-")
        .repo(repo)
        .tag(version)
        .changes(vec![
            "LABEL io.multicooker.cook=real-clis-cache io.multicooker.role=test-cache".to_owned(),
        ])
        .build();
    let bytes = fs_err::read(tar).unwrap();
    let mut stream =
        docker.create_image(Some(options), Some(bollard::body_full(bytes.into())), None);
    while let Some(item) = stream.next().await {
        item.unwrap_or_else(|e| panic!("importing {} as {tag}: {e}", tar.display()));
    }
}

/// Builds `tag` from a Dockerfile and files (mode 0755) unless it exists.
async fn build_once(tag: &str, dockerfile: &str, files: &[(&str, &Path)]) {
    let runtime = engine().await;
    if runtime.image_exists(tag).await.unwrap() {
        return;
    }
    let mut builder = tar::Builder::new(Vec::new());
    let mut add = |name: &str, bytes: &[u8]| {
        let mut header = tar::Header::new_gnu();
        header.set_size(bytes.len() as u64);
        header.set_mode(0o755);
        header.set_cksum();
        builder.append_data(&mut header, name, bytes).unwrap();
    };
    add("Dockerfile", dockerfile.as_bytes());
    for (name, path) in files {
        add(name, &fs_err::read(path).unwrap());
    }
    let context = builder.into_inner().unwrap();
    runtime
        .build_image(&ImageSpec {
            tag: tag.to_owned(),
            labels: cache_labels(),
            context,
        })
        .await
        .unwrap_or_else(|e| panic!("building {tag}: {e}"));
}

/// The stand-in on its own egress network, labelled with the cook.
pub(crate) struct StandIn {
    pub(crate) network: String,
    pub(crate) container: String,
    pub(crate) record: tempfile::TempDir,
}

impl StandIn {
    pub(crate) fn start(cook: &TestCook, clis: &RealClis, tag: &str) -> Self {
        let record = tempfile::Builder::new()
            .prefix("mc-standin-")
            .tempdir()
            .unwrap();
        let network = format!("mc-test-{tag}-{}-egress", std::process::id());
        let container = format!("mc-test-{tag}-{}-standin", std::process::id());
        let labels =
            Labels::new(cook.name(), "test-double").with(LABEL_ROOT, &root_id(cook.root()));
        block_on(async {
            let runtime = engine().await;
            runtime
                .create_network(&NetworkSpec {
                    name: network.clone(),
                    labels: labels.clone(),
                    internal: false,
                    isolated: false,
                })
                .await
                .unwrap();
            let docker = bollard::Docker::connect_with_local_defaults().unwrap();
            let mut endpoints = HashMap::new();
            endpoints.insert(
                network.clone(),
                bollard::models::EndpointSettings {
                    aliases: Some(HOSTS.iter().map(|h| (*h).to_owned()).collect()),
                    ..Default::default()
                },
            );
            let body = bollard::models::ContainerCreateBody {
                image: Some(clis.base.clone()),
                cmd: Some(vec![
                    "/usr/local/bin/mc-standin".into(),
                    "serve".into(),
                    "/ca".into(),
                    "/record".into(),
                ]),
                labels: Some(
                    labels
                        .iter()
                        .map(|(k, v)| (k.to_owned(), v.to_owned()))
                        .collect(),
                ),
                host_config: Some(bollard::models::HostConfig {
                    binds: Some(vec![
                        format!(
                            "{}:/usr/local/bin/mc-standin:ro",
                            clis.standin_binary.display()
                        ),
                        format!("{}:/ca:ro", clis.ca_dir.display()),
                        format!("{}:/record", record.path().display()),
                    ]),
                    network_mode: Some(network.clone()),
                    ..Default::default()
                }),
                networking_config: Some(bollard::models::NetworkingConfig {
                    endpoints_config: Some(endpoints),
                }),
                ..Default::default()
            };
            let options = bollard::query_parameters::CreateContainerOptionsBuilder::default()
                .name(&container)
                .build();
            docker.create_container(Some(options), body).await.unwrap();
            docker.start_container(&container, None).await.unwrap();
        });
        let stand_in = Self {
            network,
            container,
            record,
        };
        stand_in.wait_listening();
        stand_in
    }

    fn wait_listening(&self) {
        for _ in 0..100 {
            if self.requests().iter().any(|r| r["event"] == "listening") {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        panic!("the stand-in never listened");
    }

    /// Sets what the stand-in answers from now on.
    pub(crate) fn script(&self, script: &serde_json::Value) {
        fs_err::write(self.record.path().join("script.json"), script.to_string()).unwrap();
    }

    /// Every request so far (and the `listening` marker).
    pub(crate) fn requests(&self) -> Vec<serde_json::Value> {
        fs_err::read_to_string(self.record.path().join("requests.jsonl"))
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect()
    }

    /// Forgets the requests so far.
    pub(crate) fn clear(&self) {
        let _ = fs_err::remove_file(self.record.path().join("requests.jsonl"));
    }
}

impl Drop for StandIn {
    fn drop(&mut self) {
        block_on(async {
            let runtime = engine().await;
            let _ = runtime.remove(&ObjectRef::cell(&self.container)).await;
            let _ = runtime.remove(&ObjectRef::network(&self.network)).await;
        });
    }
}
