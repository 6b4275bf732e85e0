//! A flavor's CLI layered on a Harbor task's environment (docs/HARBOR.md, §7): which files of
//! the flavor's own image the CLI is, the environment its image sets for it, and the build
//! context of the layer (`FROM` the task's environment, `COPY --from` the flavor's image, then
//! a check that the CLI runs there, so a task whose image cannot run it, such as a musl-only
//! image for a CLI built against glibc, fails its build with a sentence that says so).
//!
//! The dummy needs no layer: it is the cell's init itself, already in every task image.

use std::io;

/// What of a flavor's image a task's cell takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TaskLayer {
    /// The flavor.
    pub flavor: &'static str,
    /// Files copied from the flavor's image, at the same paths.
    pub files: &'static [&'static str],
    /// Environment the flavor's image sets for its CLI, set in the layer too.
    pub env: &'static [(&'static str, &'static str)],
    /// The command that shows the CLI runs (its version).
    pub check: &'static str,
    /// What the CLI needs of the image, for the error when it does not run.
    pub needs: &'static str,
}

/// The flavors whose CLI can work inside a task's environment, besides the dummy (the init).
/// Each copies what the flavor's own image installs outside HOME (images/<flavor>/Dockerfile);
/// its login and minimal config are written into HOME by the entrypoint at run time
/// (`mc-cell run`), as in any cell. triad (three CLIs, one lead) has no layer yet.
pub const TASK_LAYERS: [TaskLayer; 4] = [
    TaskLayer {
        flavor: "claude",
        files: &["/usr/local/bin/claude"],
        env: &[
            ("DISABLE_AUTOUPDATER", "1"),
            ("DISABLE_UPDATES", "1"),
            ("DISABLE_INSTALLATION_CHECKS", "1"),
            ("DISABLE_TELEMETRY", "1"),
            ("DISABLE_ERROR_REPORTING", "1"),
            ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1"),
            // A task's program runs as root (the task profile), where claude accepts its
            // permission bypass only in a sandbox; the cell is one.
            ("IS_SANDBOX", "1"),
        ],
        check: "claude --version",
        needs: "a glibc-based image (Debian, Ubuntu, Fedora…): claude's native build does not run on musl (Alpine)",
    },
    TaskLayer {
        flavor: "codex",
        files: &[
            "/usr/local/bin/codex",
            "/usr/local/bin/codex-code-mode-host",
            "/etc/codex/config.toml",
        ],
        env: &[],
        check: "codex --version",
        needs: "an x86-64 or arm64 Linux image with /bin/sh",
    },
    TaskLayer {
        flavor: "agy",
        files: &["/usr/local/bin/agy"],
        // `true`, not `1`: agy ignores `1` (google-antigravity/antigravity-cli#1046).
        env: &[("AGY_CLI_DISABLE_AUTO_UPDATE", "true")],
        check: "agy --version",
        needs: "a glibc-based image (Debian, Ubuntu, Fedora…): agy's Linux build is linked dynamically against glibc and has no musl build (Alpine)",
    },
    TaskLayer {
        flavor: "grok",
        files: &["/usr/local/bin/grok"],
        env: &[("GROK_DISABLE_AUTOUPDATER", "1")],
        check: "grok --version",
        needs: "a glibc-based image (Debian, Ubuntu, Fedora…) with the GCC runtime (libgcc_s): grok's Linux build is linked dynamically against them and does not run on musl (Alpine)",
    },
];

/// The flavor that needs no layer: the init itself runs it.
pub const INIT_FLAVOR: &str = "dummy";

/// The layer of `flavor`, if its CLI can work inside a task's environment.
pub fn task_layer(flavor: &str) -> Option<&'static TaskLayer> {
    TASK_LAYERS.iter().find(|l| l.flavor == flavor)
}

/// The flavors that can work inside a task's environment, for messages.
pub fn task_flavors() -> Vec<&'static str> {
    std::iter::once(INIT_FLAVOR)
        .chain(TASK_LAYERS.iter().map(|l| l.flavor))
        .collect()
}

/// The Dockerfile of `layer` on the environment image `environment`, taking the CLI from the
/// flavor's image `flavor_image`.
pub fn dockerfile(layer: &TaskLayer, environment: &str, flavor_image: &str) -> String {
    let mut text = format!(
        "# multicooker: the {} CLI layered on a Harbor task's environment\nFROM {environment}\n",
        layer.flavor
    );
    for file in layer.files {
        text.push_str(&format!("COPY --from={flavor_image} {file} {file}\n"));
    }
    if !layer.env.is_empty() {
        let pairs: Vec<String> = layer.env.iter().map(|(k, v)| format!("{k}={v}")).collect();
        text.push_str(&format!("ENV {}\n", pairs.join(" ")));
    }
    text.push_str(&format!(
        "RUN home=\"$(mktemp -d)\" && HOME=\"$home\" {check} >/dev/null 2>&1 || {{ echo 'multicooker: the {flavor} CLI does not run in this task'\"'\"'s environment: it needs {needs}' >&2; exit 1; }}; rm -rf \"$home\"\n",
        check = layer.check,
        flavor = layer.flavor,
        needs = layer.needs.replace('\'', "'\"'\"'"),
    ));
    text
}

/// The build context of [`dockerfile`]: the Dockerfile alone.
pub fn context(layer: &TaskLayer, environment: &str, flavor_image: &str) -> io::Result<Vec<u8>> {
    let mut builder = tar::Builder::new(Vec::new());
    super::append(
        &mut builder,
        "Dockerfile",
        dockerfile(layer, environment, flavor_image).as_bytes(),
        false,
    )?;
    builder.into_inner()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_layer_copies_the_cli_sets_its_environment_and_checks_it_runs() {
        let layer = task_layer("codex").unwrap();
        let text = dockerfile(layer, "env:1", "multicooker-base-codex:abc");
        assert!(text.contains("FROM env:1\n"), "{text}");
        assert!(
            text.contains("COPY --from=multicooker-base-codex:abc /usr/local/bin/codex-code-mode-host /usr/local/bin/codex-code-mode-host\n"),
            "{text}"
        );
        assert!(text.contains("codex --version"), "{text}");
        let claude = dockerfile(task_layer("claude").unwrap(), "e", "f");
        assert!(claude.contains("IS_SANDBOX=1"), "{claude}");
        assert!(claude.contains("it needs a glibc-based image"), "{claude}");
    }

    /// agy's and grok's layers copy their CLI and set what their images set.
    #[test]
    fn agy_and_grok_layers_copy_the_cli_and_its_settings() {
        let agy = dockerfile(task_layer("agy").unwrap(), "e", "f");
        assert!(
            agy.contains("COPY --from=f /usr/local/bin/agy /usr/local/bin/agy\n")
                && agy.contains("ENV AGY_CLI_DISABLE_AUTO_UPDATE=true\n"),
            "{agy}"
        );
        let grok = dockerfile(task_layer("grok").unwrap(), "e", "f");
        assert!(grok.contains("ENV GROK_DISABLE_AUTOUPDATER=1\n"), "{grok}");
    }

    #[test]
    fn flavors_without_a_layer_are_named() {
        assert!(task_layer("triad").is_none());
        assert!(task_layer("dummy").is_none());
        assert_eq!(task_flavors(), ["dummy", "claude", "codex", "agy", "grok"]);
    }
}
