//! `doctor`'s per-flavor checks: the identity cells run as, each flavor's login and base image
//! (built when missing and asked), and the base images this build does not use.

use super::{Checks, Target};
use crate::cell::images::{ImageSettings, base_specs, ensure_base};
use crate::creds::{Credentials, TokenStore};
use crate::runtime::{ImageSpec, Runtime};
use crate::settings::{self, Session};

/// The flavor's login: present, well-formed, and outliving its cells. True when usable.
pub(super) fn check_login(
    target: &Target,
    sources: &crate::creds::LoginSources,
    store: &dyn TokenStore,
    checks: &mut Checks,
) -> bool {
    let flavor = &target.flavor;
    if crate::creds::members(flavor).is_empty() {
        return true;
    }
    match Credentials::snapshot(&[(flavor.clone(), target.timeout_s)], sources, store) {
        Ok(logins) => {
            for (member, line) in logins.describe(jiff::Timestamp::now()) {
                checks.add("OK", format!("flavor `{flavor}`: {member} login: {line}"));
            }
            true
        }
        Err(error) => {
            let hint = crate::error::Hint::hint(&error).unwrap_or_default();
            checks.add(
                if target.strict { "FAIL" } else { "WARN" },
                one_line(&format!("flavor `{flavor}`: {error}; {hint}")),
            );
            false
        }
    }
}

/// A multi-line message (a list of logins) as one line of the table.
fn one_line(text: &str) -> String {
    let mut line = String::new();
    for part in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
        let part = part.trim_start_matches("- ");
        if !line.is_empty() {
            line.push_str(if line.ends_with(':') { " " } else { "; " });
        }
        line.push_str(part);
    }
    line
}

pub(super) fn check_user(env: &settings::Env, checks: &mut Checks) {
    match crate::settings::cell_user(env) {
        Ok(user) => checks.add(
            "OK",
            format!(
                "cells run as {} (launched code as {}:{}), ids no host account, group or process uses",
                user.spec(),
                user.uid + 1,
                user.gid + 1
            ),
        ),
        Err(problem) => checks.add("FAIL", format!("{problem:#}")),
    }
}

/// The flavor's base image: built, or builds now. True when usable.
pub(super) async fn check_flavor(
    runtime: &dyn Runtime,
    session: &Session,
    target: &Target,
    cook: Option<&std::path::Path>,
    no_build: bool,
    checks: &mut Checks,
) -> bool {
    let flavor = &target.flavor;
    let level = if target.strict { "FAIL" } else { "WARN" };
    let specs = session
        .image_settings()
        .and_then(|images| base_specs(std::slice::from_ref(flavor), cook, &images));
    let base = match specs {
        Ok(mut specs) => specs.remove(0),
        Err(error) => {
            checks.add(level, format!("flavor `{flavor}`: {error}"));
            return false;
        }
    };
    match runtime.image_exists(&base.tag).await {
        Ok(true) => {
            checks.add(
                "OK",
                format!("flavor `{flavor}`: base image `{}` is built", base.tag),
            );
            true
        }
        Ok(false) if no_build || !target.build => {
            let how = if no_build {
                "build skipped".to_owned()
            } else {
                format!(
                    "`multicooker doctor --flavors {flavor}` builds it; it needs network access to the vendor's registry"
                )
            };
            checks.add(
                "WARN",
                format!(
                    "flavor `{flavor}`: base image `{}` not built yet ({how})",
                    base.tag
                ),
            );
            false
        }
        Ok(false) => build_base(runtime, &base, target, checks).await,
        Err(error) => {
            checks.add("FAIL", format!("flavor `{flavor}`: {error}"));
            false
        }
    }
}

/// Builds a missing base image and says how long it took. True when it built.
async fn build_base(
    runtime: &dyn Runtime,
    base: &ImageSpec,
    target: &Target,
    checks: &mut Checks,
) -> bool {
    let flavor = &target.flavor;
    let started = std::time::Instant::now();
    match ensure_base(runtime, base).await {
        Ok(()) => {
            checks.add(
                "OK",
                format!(
                    "flavor `{flavor}`: base image `{}` builds ({:.1}s)",
                    base.tag,
                    started.elapsed().as_secs_f64()
                ),
            );
            true
        }
        Err(error) => {
            let level = if target.strict { "FAIL" } else { "WARN" };
            checks.add(level, format!("flavor `{flavor}`: {error}"));
            false
        }
    }
}

/// Base images this build of multicooker would not use (`cell::unused_bases`), listed with the
/// command that removes them; a cook's own `flavors/` images are listed too (they are rebuilt on
/// their next use).
pub(super) async fn check_stale_bases(
    runtime: &dyn Runtime,
    session: &Session,
    checks: &mut Checks,
) {
    const SHOWN: usize = 6;
    let Ok(images) = session.image_settings() else {
        return;
    };
    let namespace = session.namespace.as_deref();
    let stale = unused(runtime, &images, namespace).await;
    if stale.is_empty() {
        return;
    }
    checks.stale_bases.clone_from(&stale);
    let more = stale.len().saturating_sub(SHOWN);
    let (whose, flag) = namespace.map_or_else(
        || (String::new(), String::new()),
        |ns| {
            (
                format!(" of namespace `{ns}`"),
                format!(" --namespace {ns}"),
            )
        },
    );
    checks.add(
        "WARN",
        format!(
            "{} base image(s){whose} this build does not use (older builds, or cooks' own flavors): {}{}; `multicooker clean --all --base-images{flag}` removes every base image{whose} (the ones in use are rebuilt on their next use; other namespaces' are never touched)",
            stale.len(),
            stale.iter().take(SHOWN).map(|t| format!("`{t}`")).collect::<Vec<_>>().join(", "),
            if more > 0 { format!(" and {more} more") } else { String::new() }
        ),
    );
}

/// The unused base images, none when they cannot be told.
async fn unused(
    runtime: &dyn Runtime,
    images: &ImageSettings,
    namespace: Option<&str>,
) -> Vec<String> {
    crate::cell::unused_bases::unused_bases(runtime, images, namespace)
        .await
        .unwrap_or_default()
}
