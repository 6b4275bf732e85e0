//! The texts `new` writes into a cook made from nothing (and, for `JUDGE_BRIEF.md` and the judging
//! block, into a cook made from a Harbor task): `src/brief/template/`.

/// `brief.yaml` with `@NAME@` and `@PARTICIPANTS@` (one `  - {name, flavor}` line each) to fill.
pub const TEMPLATE_BRIEF: &str = include_str!("template/brief.yaml");
/// `BRIEF.md` to describe the task in.
pub const TEMPLATE_BRIEF_MD: &str = include_str!("template/BRIEF.md");
/// `JUDGE_BRIEF.md`: what the judges score.
pub const TEMPLATE_JUDGE_BRIEF_MD: &str = include_str!("template/JUDGE_BRIEF.md");
