//! Which CLIs a flavor runs (a composite runs several). Shared by source with multicooker
//! itself (`src/creds/mod.rs` includes this file), so the entrypoint seeds exactly the logins
//! the host snapshots.

/// The CLIs a flavor runs; empty for flavors without a managed login (dummy, custom).
pub fn members(flavor: &str) -> &'static [&'static str] {
    match flavor {
        "claude" => &["claude"],
        "codex" => &["codex"],
        "agy" => &["agy"],
        "grok" => &["grok"],
        "triad" => &["claude", "codex", "grok"],
        _ => &[],
    }
}
