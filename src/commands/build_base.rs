//! `multicooker build-base [flavor…] [--force]`: builds the shared base images ahead of a cook
//! (e.g. before a nightly run), so the first cook does not pay for them. An image whose build
//! context is unchanged is already built (its tag names the context's digest).

use serde_json::json;

use super::connect;
use crate::brief::KNOWN_FLAVORS;
use crate::cell::images;
use crate::cli::BuildBaseArgs;
use crate::error::{ExitCode, UserError};
use crate::settings;

pub(super) async fn run(args: &BuildBaseArgs) -> anyhow::Result<ExitCode> {
    let session = settings::session(&args.global)?;
    let flavors = flavors_to_build(args)?;
    let specs = images::base_specs(&flavors, None, &session.image_settings()?)?;
    let (runtime, _) = connect(&session).await?;
    let mut results = Vec::new();
    let mut failed = 0;
    for spec in &specs {
        let flavor = spec
            .labels
            .to_map()
            .get(crate::runtime::LABEL_FLAVOR)
            .cloned()
            .unwrap_or_default();
        let state = if !args.force && runtime.image_exists(&spec.tag).await? {
            "already built".to_owned()
        } else {
            session
                .printer
                .info(&format!("building {} ({flavor})", spec.tag));
            match runtime.build_image(spec).await {
                Ok(()) => "built".to_owned(),
                Err(error) => {
                    failed += 1;
                    format!("FAILED: {error}")
                }
            }
        };
        session
            .printer
            .data(&format!("{flavor:<8} {:<48} {state}", spec.tag));
        results.push(json!({"flavor": flavor, "image": spec.tag, "state": state}));
    }
    session.printer.json(&json!({"images": results}));
    Ok(if failed == 0 {
        ExitCode::Success
    } else {
        ExitCode::Precondition
    })
}

/// The flavors asked for, or every packaged one; a flavor without a packaged image is refused.
fn flavors_to_build(args: &BuildBaseArgs) -> Result<Vec<String>, UserError> {
    let packaged = || {
        KNOWN_FLAVORS
            .iter()
            .filter(|f| crate::flavor::has_image(f))
            .copied()
    };
    let flavors: Vec<String> = if args.flavors.is_empty() {
        packaged().map(str::to_owned).collect()
    } else {
        args.flavors.clone()
    };
    if let Some(unknown) = flavors.iter().find(|f| !crate::flavor::has_image(f)) {
        return Err(UserError::new(
            format!("no packaged image for flavor `{unknown}`"),
            format!(
                "packaged flavors: {}; a cook's own flavors are built by `cook`",
                packaged().collect::<Vec<_>>().join(", ")
            ),
        ));
    }
    Ok(flavors)
}
