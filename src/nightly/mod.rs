//! Nightly model comparison: every brief × repeat as a cook, judged and reported, then folded
//! into a history store with statistics pooled across briefs (the bootstrap's clusters are the
//! briefs: a brief's repeats and judges are resampled together) and the provenance of every
//! arm. The command (`commands::nightly`) runs the cooks; this module is the pure part:
//! cook folders, folding, comparability and the history document.

pub mod config;
pub mod store;

use std::collections::BTreeMap;
use std::path::Path;

use mc_stats::{Bootstrap, Comparison, Observation};
use serde_json::{Value, json};
use sha2::Digest as _;

use crate::fsx::{self, CopyOptions};
use config::Nightly;
use store::{ArmRecord, BriefRecord, CellRecord, EstimateRecord, NightRecord};

/// Bootstrap resamples of a night.
const RESAMPLES: usize = 2000;

/// The brief's template name (its folder name).
pub fn brief_name(template: &Path) -> String {
    template
        .file_name()
        .map_or_else(|| "brief".into(), |n| n.to_string_lossy().into_owned())
}

/// The cook folder of one brief and repeat: `<night>-<config>-<brief>-r<k>`.
pub fn cook_name(nightly: &Nightly, night: &str, template: &Path, repeat: u32) -> String {
    let night: String = night.chars().filter(char::is_ascii_alphanumeric).collect();
    let brief: String = brief_name(template)
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '-'
            }
        })
        .collect();
    format!("{night}-{}-{brief}-r{repeat}", nightly.name)
}

/// Writes a cook folder from a template with the nightly's arms and judging options.
/// brief.yaml is written as JSON, which YAML reads as is.
pub fn write_cook(
    nightly: &Nightly,
    template: &Path,
    dir: &Path,
    name: &str,
) -> anyhow::Result<()> {
    fs_err::create_dir_all(dir)?;
    for entry in fs_err::read_dir(template)? {
        let entry = entry?;
        let file = entry.file_name().to_string_lossy().into_owned();
        let keep = matches!(
            file.as_str(),
            "BRIEF.md" | "JUDGE_BRIEF.md" | "raw" | "flavors"
        ) || (file.starts_with("FEEDBACK")
            && Path::new(&file)
                .extension()
                .is_some_and(|e| e.eq_ignore_ascii_case("md")));
        if !keep {
            continue;
        }
        if entry.file_type()?.is_dir() {
            fsx::copy_tree_no_follow(
                &entry.path(),
                &dir.join(&file),
                &CopyOptions {
                    ignore: &[],
                    max_bytes: u64::MAX,
                    read_only: false,
                },
            )?;
        } else {
            fs_err::copy(entry.path(), dir.join(&file))?;
        }
    }
    fs_err::create_dir_all(dir.join("raw"))?;
    write_brief_yaml(nightly, template, dir, name)
}

/// (Re)writes the cook's brief.yaml from its template and the config: the config's arms and
/// judging options win, so a night resumed after fixing the config runs what it now says.
pub fn write_brief_yaml(
    nightly: &Nightly,
    template: &Path,
    dir: &Path,
    name: &str,
) -> anyhow::Result<()> {
    let text = fs_err::read_to_string(template.join("brief.yaml"))?;
    let options = serde_saphyr::options! { with_snippet: false, strict_booleans: true };
    let mut brief: Value = serde_saphyr::from_str_with_options(&text, options)?;
    let arms = |arms: &[config::Arm]| -> Vec<Value> {
        arms.iter()
            .map(|a| {
                let mut v = json!({"name": a.name, "flavor": a.flavor});
                if let Some(model) = &a.model {
                    v["model"] = json!(model);
                }
                if let Some(timeout) = a.timeout_s {
                    v["timeout_s"] = json!(timeout);
                }
                v
            })
            .collect()
    };
    brief["name"] = json!(name);
    brief["participants"] = json!(arms(&nightly.participants));
    brief["judges"] = json!(arms(&nightly.judges));
    if !nightly.judging.is_empty() {
        let mut judging = brief["judging"].as_object().cloned().unwrap_or_default();
        judging.extend(nightly.judging.clone());
        brief["judging"] = Value::Object(judging);
    }
    let yaml = format!(
        "# Written by `multicooker nightly` ({}) from {}; JSON is YAML.\n{}\n",
        nightly.name,
        template.display(),
        serde_json::to_string_pretty(&brief)?
    );
    fs_err::write(dir.join("brief.yaml"), yaml)?;
    Ok(())
}

fn sha256_file(path: &Path) -> String {
    fs_err::read(path).map_or_else(
        |_| "missing".into(),
        |bytes| {
            sha2::Sha256::digest(&bytes)
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect()
        },
    )
}

/// A brief template's hashes.
pub fn brief_record(template: &Path) -> BriefRecord {
    BriefRecord {
        brief: brief_name(template),
        brief_sha256: sha256_file(&template.join("brief.yaml")),
        brief_md_sha256: sha256_file(&template.join("BRIEF.md")),
        judge_brief_sha256: sha256_file(&template.join("JUDGE_BRIEF.md")),
    }
}

/// One cook of the night, as the fold reads it.
#[derive(Debug, Clone)]
pub struct NightCook {
    /// Folder.
    pub dir: std::path::PathBuf,
    /// Brief index (the cluster).
    pub brief: usize,
    /// Repeat, from 1.
    pub repeat: u32,
    /// Why the cook could not run, be judged or be reported, if it could not.
    pub error: Option<String>,
}

fn read(path: &Path) -> Value {
    fsx::read_capped(path, 64 << 20)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or(Value::Null)
}

#[expect(clippy::too_many_lines, reason = "one pass over the night's cooks")]
/// Folds the night's cooks into a record: cells, pooled estimates, provenance, comparability.
pub fn fold(
    nightly: &Nightly,
    night: &str,
    started_at: &str,
    seed: u64,
    cooks: &[NightCook],
    images: &BTreeMap<String, String>,
) -> NightRecord {
    let names: Vec<&str> = nightly
        .participants
        .iter()
        .map(|p| p.name.as_str())
        .collect();
    let pairwise = nightly.judging.get("mode").and_then(Value::as_str) == Some("pairwise");
    let mut cells = Vec::new();
    let mut observations = Vec::new();
    let mut comparisons = Vec::new();
    let mut run_results = Vec::new();
    for cook in cooks {
        let summary = read(&cook.dir.join("summary.json"));
        let run = read(&cook.dir.join("RUN_RESULT.json"));
        let brief = brief_name(&nightly.briefs[cook.brief]);
        for (item, name) in names.iter().enumerate() {
            let entry = summary["ranking"]
                .as_array()
                .and_then(|r| r.iter().find(|e| e["participant"] == *name));
            let score = entry.and_then(|e| e["mean_pct"].as_f64());
            if let (Some(value), false) = (score, pairwise) {
                observations.push(Observation {
                    cluster: cook.brief,
                    item,
                    value,
                });
            }
            let run_status = run["participants"]
                .as_array()
                .and_then(|p| p.iter().find(|e| e["name"] == *name))
                .and_then(|e| e["status"].as_str().map(str::to_owned));
            cells.push(CellRecord {
                cook: cook
                    .dir
                    .file_name()
                    .map_or_else(String::new, |n| n.to_string_lossy().into_owned()),
                brief: brief.clone(),
                repeat: cook.repeat,
                participant: (*name).to_owned(),
                run_status,
                score,
            });
        }
        if pairwise {
            for pair in summary["pairwise"]["pairs"]
                .as_array()
                .into_iter()
                .flatten()
            {
                let index = |key: &str| names.iter().position(|n| pair[key] == *n);
                if let (Some(a), Some(b)) = (index("a"), index("b")) {
                    let score_a = match pair["outcome"].as_str() {
                        Some("a") => 1.0,
                        Some("b") => 0.0,
                        _ => 0.5,
                    };
                    comparisons.push(Comparison {
                        cluster: cook.brief,
                        a,
                        b,
                        score_a,
                    });
                }
            }
        }
        run_results.push(run);
    }
    let boot = Bootstrap {
        resamples: RESAMPLES,
        level: 0.95,
        seed,
    };
    let intervals = if pairwise {
        mc_stats::bradley_terry_bootstrap(&comparisons, names.len(), &boot)
    } else {
        mc_stats::cluster_means(&observations, names.len(), &boot)
    };
    let mut ranked: Vec<(usize, mc_stats::Interval)> = intervals
        .iter()
        .enumerate()
        .filter_map(|(i, v)| Some((i, (*v)?)))
        .collect();
    ranked.sort_by(|x, y| y.1.estimate.total_cmp(&x.1.estimate).then(x.0.cmp(&y.0)));
    let tied_groups = mc_stats::tied_groups(&ranked).map(|groups| {
        groups
            .into_iter()
            .map(|g| g.into_iter().map(|i| names[i].to_owned()).collect())
            .collect()
    });
    let mut estimates: Vec<EstimateRecord> = ranked
        .iter()
        .map(|(i, interval)| estimate_record(names[*i], Some(interval), &cells))
        .collect();
    for name in &names {
        if !estimates.iter().any(|e| e.participant == *name) {
            estimates.push(estimate_record(name, None, &cells));
        }
    }
    let arms = arm_records(nightly, cooks, &run_results, images);
    let reasons = not_comparable(&arms);
    let scored = cells.iter().filter(|c| c.score.is_some()).count();
    let status = if ranked.is_empty() {
        "failed"
    } else if scored < cells.len() || cells.iter().any(|c| c.run_status.as_deref() != Some("ok")) {
        "partial"
    } else {
        "ok"
    };
    let failures = failures(cooks, &cells, ranked.is_empty());
    NightRecord {
        id: 0,
        config: nightly.name.clone(),
        night: night.to_owned(),
        started_at: started_at.to_owned(),
        finished_at: Some(crate::state::now_iso()),
        status: status.to_owned(),
        seed,
        method: if pairwise {
            "bradley_terry+cluster_bootstrap".into()
        } else {
            "mean+cluster_bootstrap".into()
        },
        comparable: reasons.is_empty(),
        reasons,
        tied_groups,
        failures,
        arms,
        briefs: nightly.briefs.iter().map(|b| brief_record(b)).collect(),
        cells,
        estimates,
    }
}

/// Why a night is not ok, one line each: the cooks that failed (with their error), then the
/// cells that were not scored (issue 17: a failed night used to say nothing about why).
fn failures(cooks: &[NightCook], cells: &[CellRecord], nothing_ranked: bool) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    for cook in cooks {
        if let Some(error) = &cook.error {
            let name = cook
                .dir
                .file_name()
                .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
            lines.push(format!("cook `{name}`: {error}"));
        }
    }
    for cell in cells.iter().filter(|c| c.score.is_none()) {
        if cooks.iter().any(|c| {
            c.error.is_some()
                && c.dir
                    .file_name()
                    .is_some_and(|n| n.to_string_lossy() == cell.cook)
        }) {
            continue;
        }
        let how = cell
            .run_status
            .as_deref()
            .map_or_else(|| "never ran".to_owned(), |s| format!("ended `{s}`"));
        lines.push(format!(
            "cook `{}`: `{}` not scored ({how})",
            cell.cook, cell.participant
        ));
    }
    if nothing_ranked && lines.is_empty() {
        lines.push("no participant was scored in any cook".into());
    }
    lines
}

fn estimate_record(
    name: &str,
    interval: Option<&mc_stats::Interval>,
    cells: &[CellRecord],
) -> EstimateRecord {
    let own: Vec<&CellRecord> = cells.iter().filter(|c| c.participant == name).collect();
    EstimateRecord {
        participant: name.to_owned(),
        estimate: interval.map(|i| i.estimate),
        lo: interval.and_then(|i| i.lo),
        hi: interval.and_then(|i| i.hi),
        clusters: interval.map_or(0, |i| i.clusters),
        scored_cells: own.iter().filter(|c| c.score.is_some()).count(),
        cells: own.len(),
    }
}

fn arm_records(
    nightly: &Nightly,
    cooks: &[NightCook],
    runs: &[Value],
    images: &BTreeMap<String, String>,
) -> Vec<ArmRecord> {
    let brief = cooks
        .first()
        .and_then(|c| crate::brief::load(&c.dir.join("brief.yaml")).ok())
        .map(|l| l.brief);
    nightly
        .participants
        .iter()
        .map(|arm| {
            let entries: Vec<&Value> = runs
                .iter()
                .filter_map(|r| r["participants"].as_array()?.iter().find(|e| e["name"] == arm.name.as_str()))
                .collect();
            let mut models: Vec<String> = entries
                .iter()
                .flat_map(|e| e["usage"]["models"].as_array().cloned().unwrap_or_default())
                .filter_map(|m| m.as_str().map(str::to_owned))
                .collect();
            models.sort();
            models.dedup();
            let versions: Vec<String> = runs
                .iter()
                .filter_map(|r| r["cli_versions"][arm.flavor.as_str()].as_str().map(str::to_owned))
                .collect();
            let limits = brief.as_ref().and_then(|b| b.participant(&arm.name)).map_or_else(
                || json!({}),
                |actor| {
                    let b = brief.as_ref().expect("checked above");
                    json!({"timeout_s": b.timeout_for(actor, false), "mem_limit": actor.resources.mem_limit, "cpus": actor.resources.cpus})
                },
            );
            let egress = brief
                .as_ref()
                .and_then(|b| b.participant(&arm.name).map(|a| b.network_for(a).mode.as_str().to_owned()));
            let web_tools = entries.iter().any(|e| e["egress"]["web_tools"] == true);
            ArmRecord {
                participant: arm.name.clone(),
                flavor: arm.flavor.clone(),
                model: arm.model.clone(),
                models_reported: models,
                cli_version: if versions.windows(2).all(|w| w[0] == w[1]) {
                    versions.first().cloned()
                } else {
                    Some(format!("mixed: {}", versions.join(", ")))
                },
                image: entries
                    .iter()
                    .find_map(|e| e["image"].as_str().map(str::to_owned))
                    .or_else(|| images.get(&arm.flavor).cloned()),
                limits: limits.to_string(),
                egress,
                web_tools,
            }
        })
        .collect()
}

/// Why the night's arms are not comparable (empty: they are).
pub fn not_comparable(arms: &[ArmRecord]) -> Vec<String> {
    let mut reasons = Vec::new();
    for arm in arms {
        if arm
            .cli_version
            .as_deref()
            .is_some_and(|v| v.starts_with("mixed"))
        {
            reasons.push(format!(
                "`{}` ran with different CLI versions within the night ({})",
                arm.participant,
                arm.cli_version.as_deref().unwrap_or("")
            ));
        }
    }
    let mut by_flavor: BTreeMap<&str, Vec<&ArmRecord>> = BTreeMap::new();
    for arm in arms {
        by_flavor.entry(arm.flavor.as_str()).or_default().push(arm);
    }
    for (flavor, group) in by_flavor {
        let versions: Vec<&Option<String>> = group.iter().map(|a| &a.cli_version).collect();
        if versions.windows(2).any(|w| w[0] != w[1]) {
            reasons.push(format!("arms of flavor `{flavor}` ran unequal CLI pins"));
        }
        let images: Vec<&Option<String>> = group.iter().map(|a| &a.image).collect();
        if images.windows(2).any(|w| w[0] != w[1]) {
            reasons.push(format!("arms of flavor `{flavor}` ran different images"));
        }
    }
    let differs = |what: &str, value: &dyn Fn(&ArmRecord) -> String| {
        let values: Vec<String> = arms.iter().map(value).collect();
        values.windows(2).any(|w| w[0] != w[1]).then(|| {
            format!(
                "arms differ in {what}: {}",
                arms.iter()
                    .zip(&values)
                    .map(|(a, v)| format!("{} {v}", a.participant))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        })
    };
    reasons.extend(differs("limits", &|a| a.limits.clone()));
    reasons.extend(differs("egress", &|a| a.egress.clone().unwrap_or_default()));
    reasons.extend(differs("web tools", &|a| a.web_tools.to_string()));
    reasons
}

/// The history document (see the report contract): nights oldest first, each with what
/// changed since the night before.
pub fn history_json(name: &str, store: &Path, nights: &[NightRecord]) -> Value {
    let mut out = Vec::new();
    for (index, night) in nights.iter().enumerate() {
        let previous = index.checked_sub(1).map(|i| &nights[i]);
        let participants: Vec<Value> = night
            .estimates
            .iter()
            .map(|e| {
                let arm = night.arms.iter().find(|a| a.participant == e.participant);
                json!({
                    "participant": e.participant,
                    "flavor": arm.map(|a| a.flavor.clone()),
                    "model": arm.and_then(|a| a.model.clone()),
                    "cli_version": arm.and_then(|a| a.cli_version.clone()),
                    "image": arm.and_then(|a| a.image.clone()),
                    "estimate": e.estimate, "lo": e.lo, "hi": e.hi,
                    "scored_cells": e.scored_cells, "cells": e.cells,
                })
            })
            .collect();
        out.push(json!({
            "id": night.id, "night": night.night, "started_at": night.started_at,
            "finished_at": night.finished_at, "status": night.status,
            "comparable": night.comparable, "not_comparable_reasons": night.reasons,
            "method": night.method, "seed": night.seed,
            "participants": participants, "tied_groups": night.tied_groups,
            "failures": night.failures,
            "changes": previous.map(|p| changes(p, night)).unwrap_or_default(),
        }));
    }
    json!({"nightly": name, "store": store, "nights": out})
}

/// What changed from one night to the next: CLI, model, image, brief, judge brief, and score
/// moves larger than the intervals' overlap allows.
pub fn changes(before: &NightRecord, after: &NightRecord) -> Vec<Value> {
    let mut found = Vec::new();
    let mut change = |participant: Option<&str>,
                      kind: &str,
                      from: Option<String>,
                      to: Option<String>| {
        if from != to {
            found.push(json!({"participant": participant, "kind": kind, "from": from, "to": to}));
        }
    };
    for arm in &after.arms {
        let Some(old) = before
            .arms
            .iter()
            .find(|a| a.participant == arm.participant)
        else {
            continue;
        };
        change(
            Some(&arm.participant),
            "cli_version",
            old.cli_version.clone(),
            arm.cli_version.clone(),
        );
        change(
            Some(&arm.participant),
            "model",
            old.model.clone(),
            arm.model.clone(),
        );
        change(
            Some(&arm.participant),
            "models_reported",
            Some(old.models_reported.join(",")),
            Some(arm.models_reported.join(",")),
        );
        change(
            Some(&arm.participant),
            "image",
            old.image.clone(),
            arm.image.clone(),
        );
    }
    for brief in &after.briefs {
        let old = before.briefs.iter().find(|b| b.brief == brief.brief);
        let old_brief = old.map(|b| {
            format!(
                "{}/{}",
                &b.brief_sha256[..12.min(b.brief_sha256.len())],
                &b.brief_md_sha256[..12.min(b.brief_md_sha256.len())]
            )
        });
        let new_brief = Some(format!(
            "{}/{}",
            &brief.brief_sha256[..12.min(brief.brief_sha256.len())],
            &brief.brief_md_sha256[..12.min(brief.brief_md_sha256.len())]
        ));
        if old.is_some() {
            let named = |hash: String| format!("{}@{hash}", brief.brief);
            change(None, "brief", old_brief.map(named), new_brief.map(named));
            change(
                None,
                "judge_brief",
                old.map(|b| {
                    named(b.judge_brief_sha256[..12.min(b.judge_brief_sha256.len())].to_owned())
                }),
                Some(named(
                    brief.judge_brief_sha256[..12.min(brief.judge_brief_sha256.len())].to_owned(),
                )),
            );
        }
    }
    for estimate in &after.estimates {
        let Some(old) = before
            .estimates
            .iter()
            .find(|e| e.participant == estimate.participant)
        else {
            continue;
        };
        if let (Some(a), Some(b)) = (old.estimate, estimate.estimate)
            && (a - b).abs() >= 0.05
        {
            change(
                Some(&estimate.participant),
                "score",
                Some(format!("{a:.1}")),
                Some(format!("{b:.1}")),
            );
        }
    }
    found
}
