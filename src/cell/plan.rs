//! Planning cells: the user a cell runs as, its resource limits, its environment, egress and
//! files. A plan is everything the runner needs; nothing here talks to the engine, and nothing
//! here knows a role's modes: each role's files come from [`super::files`].

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::files::{CellFiles, INPUT_AREA};
use super::names::Names;
use crate::brief::{Actor, Brief, NetworkMode, Profile, Resources};
use crate::flavor::{CELL_HOME, api_hosts};
use crate::runtime::{
    CellSpec, Init, LABEL_ACTOR, LABEL_FLAVOR, LABEL_ROOT, LABEL_RUN, Labels, Limits, NetworkSpec,
    Tmpfs,
};
use crate::state::{CookPaths, Role};

/// Default process limit per cell.
pub const DEFAULT_PIDS: u64 = 512;
/// Size of the HOME tmpfs.
pub const HOME_TMPFS_BYTES: u64 = 512 << 20;
/// Size of the /tmp tmpfs.
pub const TMP_TMPFS_BYTES: u64 = 1 << 30;
/// Default cap on a participant's `out/` while it runs (`resources.out_limit` changes it).
pub const DEFAULT_OUT_BYTES: u64 = 1 << 30;
/// Cap on a judge's or reviewer's outbox.
pub const OUTBOX_BYTES: u64 = 64 << 20;
/// How long a cell may outlive its program's timeout, for staging and collection, unless
/// `MULTICOOKER_CELL_GRACE_S` says otherwise. Past it the cell's init ends the cell even when
/// multicooker is gone.
pub const CELL_GRACE: Duration = Duration::from_secs(120);

/// The non-root identity cells run as. Host files never belong to it: cells get copies
/// through the engine, and what they give back belongs to whoever runs multicooker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CellUser {
    /// Container uid (never 0).
    pub uid: u32,
    /// Container gid.
    pub gid: u32,
}

impl CellUser {
    /// Parses `override_text` (`MULTICOOKER_HARDENING_USER`); without one, the host user when
    /// it is not root, else `1000:1000` (fixtures; commands pick an id the host does not use,
    /// `settings::cell_user`).
    pub fn resolve(override_text: Option<&str>) -> Result<Self, String> {
        let (host_uid, host_group) =
            std::fs::metadata("/proc/self").map_or((1000, 1000), |m| (m.uid(), m.gid()));
        let (uid, gid) = match override_text.map(str::trim).filter(|t| !t.is_empty()) {
            Some(text) => parse_user(text)?,
            None if host_uid != 0 => (host_uid, host_group),
            None => (1000, 1000),
        };
        Ok(Self { uid, gid })
    }

    /// `uid:gid` for the engine.
    pub fn spec(&self) -> String {
        format!("{}:{}", self.uid, self.gid)
    }
}

fn parse_user(text: &str) -> Result<(u32, u32), String> {
    let (uid, gid) = text.split_once(':').unwrap_or((text, text));
    let parse = |s: &str| {
        s.trim()
            .parse::<u32>()
            .map_err(|_| format!("`{text}` is not `uid:gid` with numbers"))
    };
    let (uid, gid) = (parse(uid)?, parse(gid)?);
    if uid == 0 {
        return Err(format!(
            "`{text}` would run cells as root, which multicooker never does"
        ));
    }
    Ok((uid, gid))
}

/// Resource limits of one cell: actor, then cook-wide resources, then the host profile.
pub fn limits_for(actor: &Actor, brief: &Brief, profile: Profile) -> Limits {
    let (profile_mem, profile_cpus) = profile_defaults(profile);
    let pick =
        |f: fn(&Resources) -> Option<u64>| f(&actor.resources).or_else(|| f(&brief.resources));
    let memory_bytes = pick(|r| r.mem_limit).unwrap_or(profile_mem);
    let memory_swap_bytes = pick(|r| r.memswap_limit)
        .unwrap_or(memory_bytes)
        .max(memory_bytes);
    let cpus = actor
        .resources
        .cpus
        .or(brief.resources.cpus)
        .unwrap_or(profile_cpus);
    let pids = pick(|r| r.pids_limit).unwrap_or(DEFAULT_PIDS);
    Limits {
        memory_bytes,
        memory_swap_bytes,
        cpus,
        pids,
    }
}

/// Memory and CPUs per profile tier. Unlike the reference's `large`, every tier has limits.
fn profile_defaults(profile: Profile) -> (u64, f64) {
    match profile {
        Profile::Large => (8 << 30, 4.0),
        Profile::Medium | Profile::Auto => (2 << 30, 1.0),
        Profile::Small => (1 << 30, 0.5),
    }
}

/// The host profile: brief (unless `auto`), then `MULTICOOKER_PROFILE`, then the engine's
/// memory (≥ 32 GiB large, ≥ 8 GiB medium, else small).
pub fn choose_profile(brief: &Brief, env_value: Option<&str>, engine_mem: u64) -> Profile {
    let explicit = brief.resources.profile.filter(|p| *p != Profile::Auto);
    let from_env = env_value
        .and_then(Profile::parse)
        .filter(|p| *p != Profile::Auto);
    explicit.or(from_env).unwrap_or(match engine_mem {
        m if m >= 32 << 30 => Profile::Large,
        m if m >= 8 << 30 => Profile::Medium,
        _ => Profile::Small,
    })
}

/// Everything the runner needs for one cell.
#[derive(Debug, Clone)]
pub struct CellPlan {
    /// Participant or judge name.
    pub actor: String,
    /// Its role.
    pub role: Role,
    /// Its flavor.
    pub flavor: String,
    /// The cell itself (its areas are set when its files are staged).
    pub spec: CellSpec,
    /// What it reads and writes.
    pub files: CellFiles,
    /// The cell's own network: only for cells that reach something (`open`, or a proxy with
    /// targets); a cell that reaches nothing has no network at all (issue 28).
    pub network: Option<NetworkSpec>,
    /// How the cell reaches the outside.
    pub egress: Egress,
    /// Killed after this long.
    pub timeout: Duration,
    /// Where its standard output goes.
    pub stdout_log: PathBuf,
    /// Where its standard error goes.
    pub stderr_log: PathBuf,
    /// Its own spending cap (`budget:` of its brief entry).
    pub budget: Option<crate::brief::Budget>,
    /// Judge it when it finished its turn over a budget (`judging.over_budget: score`); else
    /// it ends `budget_exhausted` with its output kept.
    pub score_over_budget: bool,
    /// Keep its file system as this image (tag, labels) once its program and everything it
    /// started have ended: a Harbor participant's final state, which the verifier runs on.
    pub commit: Option<(String, Labels)>,
    /// The identity its program runs as and its files are staged for, when it is not the
    /// run's cell user (a Harbor task's `[verifier] user`, set by [`CellPlan::in_task_as`]).
    pub user: Option<CellUser>,
}

/// How a cell reaches the network, from its brief policy and its flavor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Egress {
    /// No network at all (only loopback).
    None,
    /// Its own bridge network with a route out.
    Open,
    /// `allowlist` with nothing allowed: no proxy and no network at all (only loopback), the
    /// same isolation as [`Egress::None`]; recorded as `allowlist`.
    Closed,
    /// Its own internal network and a proxy allowing exactly these targets.
    Proxy {
        /// `host:port` targets.
        allow: Vec<String>,
        /// Allowed names may resolve to private addresses.
        allow_private: bool,
    },
}

impl Egress {
    /// The egress of one cell: judges get only their vendor's API, participants also the
    /// brief's `allow` list, verifiers only `verify.network`'s.
    pub fn of(brief: &Brief, actor: &Actor, role: Role) -> Self {
        let network = brief.network_for(actor);
        match network.mode {
            NetworkMode::None => Self::None,
            NetworkMode::Open => Self::Open,
            NetworkMode::Allowlist => {
                let mut allow: Vec<String> = api_hosts(&actor.flavor)
                    .iter()
                    .map(|h| (*h).to_owned())
                    .collect();
                // A verifier's network comes from `verify.network`; judges and reviewers never
                // get more than their vendor's API.
                if matches!(role, Role::Participant | Role::Verifier) {
                    allow.extend(network.allow.iter().cloned());
                }
                allow.dedup();
                if allow.is_empty() {
                    Self::Closed
                } else {
                    Self::Proxy {
                        allow,
                        allow_private: network.allow_private,
                    }
                }
            }
        }
    }

    /// Whether the cell reaches anything beyond loopback (its own network is created only then).
    pub fn reaches_something(&self) -> bool {
        matches!(self, Self::Open | Self::Proxy { .. })
    }

    /// The name recorded in results: `none`, `open`, `allowlist`.
    pub fn mode(&self) -> &'static str {
        match self {
            Self::None => "none",
            Self::Open => "open",
            Self::Closed | Self::Proxy { .. } => "allowlist",
        }
    }

    /// The allowed targets (empty unless a proxy runs).
    pub fn allowed(&self) -> &[String] {
        match self {
            Self::Proxy { allow, .. } => allow,
            _ => &[],
        }
    }
}

/// Port the egress proxy listens on.
pub const PROXY_PORT: u16 = 3128;

/// The environment variable naming, in a verifier cell, the command line that starts the code
/// under test as the cell's launch identity (docs/BEHAVIOR.md, verification).
pub const LAUNCH_ENV: &str = "MULTICOOKER_LAUNCH";
/// Its value: `mc-cell launch` from init's layer, then `--`; the runner appends CMD ARGS….
pub const LAUNCH_COMMAND: &str = "/opt/multicooker/mc-cell launch --";

/// Shared inputs of every plan in one command run.
#[derive(Debug, Clone)]
pub struct PlanContext<'a> {
    /// The cook.
    pub paths: &'a CookPaths,
    /// Its engine names.
    pub names: &'a Names,
    /// The brief.
    pub brief: &'a Brief,
    /// Cell identity.
    pub user: CellUser,
    /// Host profile.
    pub profile: Profile,
    /// Id of this command run (a label).
    pub run_id: &'a str,
    /// How long a cell may outlive its timeout.
    pub grace: Duration,
}

impl PlanContext<'_> {
    /// A cell plan with the common parts filled in; the caller adds mounts and environment.
    pub fn base(&self, actor: &Actor, role: Role, logs: &Path) -> CellPlan {
        let name = self.names.cell(role, &actor.name);
        let root = self.paths.root_id();
        let labels = Labels::new(self.paths.name(), role.as_str())
            .with(LABEL_ROOT, &root)
            .with(LABEL_ACTOR, &actor.name)
            .with(LABEL_FLAVOR, &actor.flavor)
            .with(LABEL_RUN, self.run_id);
        let network_labels = Labels::new(self.paths.name(), "network")
            .with(LABEL_ROOT, &root)
            .with(LABEL_ACTOR, &actor.name)
            .with(LABEL_RUN, self.run_id);
        let mut env = vec![
            ("HOME".to_owned(), CELL_HOME.to_owned()),
            ("PATH".to_owned(), "/usr/local/bin:/usr/bin:/bin".to_owned()),
            ("LANG".to_owned(), "C.UTF-8".to_owned()),
            ("MULTICOOKER_FLAVOR".to_owned(), actor.flavor.clone()),
            ("MULTICOOKER_ROLE".to_owned(), role.as_str().to_owned()),
        ];
        if let Some(model) = &actor.model {
            env.push(("MULTICOOKER_MODEL".to_owned(), model.clone()));
        }
        let timeout = Duration::from_secs(self.brief.timeout_for(actor, role));
        env.push((
            "MULTICOOKER_TIMEOUT_S".to_owned(),
            timeout.as_secs().to_string(),
        ));
        if role == Role::Verifier {
            // The documented way for a runner to start the code under test with less power.
            env.push((LAUNCH_ENV.to_owned(), LAUNCH_COMMAND.to_owned()));
        }
        if self.brief.network_for(actor).web_tools && role == Role::Participant {
            env.push(("MULTICOOKER_WEB_TOOLS".to_owned(), "1".to_owned()));
        }
        let egress = Egress::of(self.brief, actor, role);
        if !egress.allowed().is_empty() {
            let proxy = format!("http://{}:{PROXY_PORT}", proxy_name(&name));
            for key in ["HTTPS_PROXY", "HTTP_PROXY", "https_proxy", "http_proxy"] {
                env.push((key.to_owned(), proxy.clone()));
            }
            env.push(("NO_PROXY".to_owned(), "localhost,127.0.0.1".to_owned()));
        }
        let denied = crate::flavor::denied_env();
        env.retain(|(key, _)| !denied.contains(&key.as_str()));
        // A cell that reaches nothing gets no network: an internal network with nothing on it
        // isolates no better than none, and the engine creates networks one at a time.
        let network_name = egress
            .reaches_something()
            .then(|| self.names.network(role, &actor.name));
        let spec = CellSpec {
            name: name.clone(),
            image: self.names.image(&actor.flavor),
            network: network_name.clone(),
            labels,
            user: self.user.spec(),
            env,
            areas: Vec::new(),
            tmpfs: vec![
                Tmpfs {
                    target: CELL_HOME.to_owned(),
                    size_bytes: HOME_TMPFS_BYTES,
                    mode: 0o700,
                    owner: Some((self.user.uid, self.user.gid)),
                },
                Tmpfs {
                    target: "/tmp".to_owned(),
                    size_bytes: TMP_TMPFS_BYTES,
                    mode: 0o1777,
                    owner: None,
                },
            ],
            limits: limits_for(actor, self.brief, self.profile),
            workdir: INPUT_AREA.to_owned(),
            program: None,
            init: Init {
                wait_for_go: true,
                // Only a verifier's runner starts code under test with less power.
                launch: role == Role::Verifier,
                timeout: Some(timeout),
                deadline: timeout + self.grace,
                ..Init::default()
            },
            task: None,
        };
        CellPlan {
            actor: actor.name.clone(),
            role,
            flavor: actor.flavor.clone(),
            network: network_name.map(|name| NetworkSpec {
                name,
                labels: network_labels,
                internal: egress != Egress::Open,
                isolated: false,
            }),
            egress,
            spec,
            files: CellFiles::default(),
            timeout,
            stdout_log: logs.join(format!("{}.stdout.log", actor.flavor)),
            stderr_log: logs.join(format!("{}.stderr.log", actor.flavor)),
            budget: actor.budget,
            score_over_budget: self.brief.judging.over_budget == crate::brief::OverBudget::Score,
            commit: None,
            user: None,
        }
    }
}

impl CellPlan {
    /// Makes this a cell of a Harbor task (docs/HARBOR.md): it runs `image` in the task
    /// profile ([`crate::runtime::TaskProfile`]: a writable root capped at `storage_mb` where
    /// the engine can, the program root with a few capabilities), in `workdir` (else the
    /// image's own), with the image's HOME, PATH and `/tmp` instead of the cell's tmpfs ones.
    pub fn in_task(&mut self, image: String, storage_mb: u64, workdir: Option<&str>) {
        self.spec.image = image;
        self.spec.task = Some(crate::runtime::TaskProfile {
            storage_bytes: storage_mb << 20,
        });
        self.spec.init.task_root = true;
        self.spec.tmpfs.clear();
        self.spec
            .env
            .retain(|(key, _)| key != "HOME" && key != "PATH");
        workdir
            .unwrap_or_default()
            .clone_into(&mut self.spec.workdir);
    }
}

impl CellPlan {
    /// Makes this task cell's program run as `user` (a Harbor task's `[verifier] user` that
    /// is not root) instead of root: with no capability, as any cell user, in the task
    /// profile's writable root, its files staged for `user` (the hidden tests readable by its
    /// group, the writable areas its own), with `home` as `HOME` when the image names one. It
    /// serves no `mc-cell launch`: a Harbor test.sh does not use it, and the launch identity
    /// (the next uid) could be a user of the task's image.
    pub fn in_task_as(&mut self, user: CellUser, home: Option<&str>) {
        self.spec.init.task_root = false;
        self.spec.init.launch = false;
        self.spec.user = user.spec();
        self.spec
            .env
            .retain(|(key, _)| key != LAUNCH_ENV && key != "HOME");
        if let Some(home) = home {
            self.spec.env.push(("HOME".to_owned(), home.to_owned()));
        }
        self.user = Some(user);
    }
}

/// The name of a cell's egress proxy.
pub fn proxy_name(cell: &str) -> String {
    super::names::fit(&format!("{cell}-proxy"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn brief() -> Brief {
        crate::brief::parse(
            Path::new("b.yaml"),
            b"name: t\nresources: {cpus: 2}\nparticipants:\n  - {name: a, flavor: dummy, resources: {mem_limit: 1g}}\n  - {name: b, flavor: dummy}\n",
        )
        .unwrap()
        .brief
    }

    #[test]
    fn limits_resolve_actor_then_brief_then_profile() {
        let brief = brief();
        let a = limits_for(&brief.participants[0], &brief, Profile::Small);
        assert_eq!(
            (a.memory_bytes, a.memory_swap_bytes, a.cpus, a.pids),
            (1 << 30, 1 << 30, 2.0, DEFAULT_PIDS)
        );
        let b = limits_for(&brief.participants[1], &brief, Profile::Large);
        assert_eq!((b.memory_bytes, b.cpus), (8 << 30, 2.0));
    }

    #[test]
    fn profile_comes_from_brief_env_then_engine_memory() {
        let brief = brief();
        assert_eq!(choose_profile(&brief, None, 24 << 30), Profile::Medium);
        assert_eq!(
            choose_profile(&brief, Some("small"), 64 << 30),
            Profile::Small
        );
        assert_eq!(
            choose_profile(&brief, Some("auto"), 64 << 30),
            Profile::Large
        );
    }

    #[test]
    fn cells_never_run_as_root() {
        assert!(parse_user("0:0").is_err());
        assert_eq!(parse_user("1001:1002"), Ok((1001, 1002)));
        assert!(parse_user("me").is_err());
    }
}

#[cfg(test)]
mod task_user_tests {
    use super::*;

    /// A Harbor verifier whose `[verifier] user` is not root: its program runs as that user
    /// through init's `--user` with no launch identity and no task capability, its files are
    /// staged for it, HOME is its home, and the root stays writable.
    #[test]
    fn a_task_cell_run_as_the_verifier_user_has_no_capability_and_no_launcher() {
        let brief = crate::brief::parse(
            Path::new("b.yaml"),
            b"name: t\nparticipants:\n  - {name: a, flavor: dummy}\n",
        )
        .unwrap()
        .brief;
        let paths = CookPaths::new("/cooks/251122-t".into());
        let names = Names::for_paths(&paths);
        let context = PlanContext {
            paths: &paths,
            names: &names,
            brief: &brief,
            user: CellUser::resolve(Some("1000:1000")).unwrap(),
            profile: Profile::Medium,
            run_id: "r",
            grace: CELL_GRACE,
        };
        let mut plan = context.base(&brief.participants[0], Role::Verifier, Path::new("/l"));
        plan.in_task("final:r".into(), 2048, Some("/app"));
        let program = ["bash".to_owned(), "/tests/test.sh".to_owned()];
        let as_root = plan.spec.init.argv(&plan.spec.user, &program);
        assert!(as_root.contains(&"--task-root".to_owned()), "{as_root:?}");
        let tester = CellUser {
            uid: 2345,
            gid: 2346,
        };
        plan.in_task_as(tester, Some("/home/tester"));
        let argv = plan.spec.init.argv(&plan.spec.user, &program);
        let at = argv.iter().position(|a| a == "--user").unwrap();
        assert_eq!(argv[at + 1], "2345:2346", "{argv:?}");
        assert!(
            !argv
                .iter()
                .any(|a| a == "--task-root" || a == "--launch-as"),
            "{argv:?}"
        );
        assert_eq!(plan.user, Some(tester), "its files are staged for it");
        let hardening = crate::runtime::Hardening::of(&plan.spec);
        assert_eq!(hardening.capabilities, crate::runtime::INIT_CAPABILITIES);
        assert!(
            !hardening.read_only_root,
            "the task profile's writable root"
        );
        let env: Vec<(&str, &str)> = plan
            .spec
            .env
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        assert!(env.contains(&("HOME", "/home/tester")), "{env:?}");
        assert!(!env.iter().any(|(k, _)| *k == LAUNCH_ENV), "{env:?}");
    }
}

#[cfg(test)]
mod egress_tests {
    use super::*;

    fn brief_with_allow() -> Brief {
        brief(
            "name: t\nnetwork: {allow: [\"registry.npmjs.org:443\"]}\nparticipants:\n  - {name: d, flavor: dummy}\n",
        )
    }

    fn context_for<'a>(
        brief: &'a Brief,
        paths: &'a CookPaths,
        names: &'a Names,
        user: CellUser,
    ) -> PlanContext<'a> {
        PlanContext {
            paths,
            names,
            brief,
            user,
            profile: Profile::Medium,
            run_id: "r",
            grace: CELL_GRACE,
        }
    }

    fn brief(yaml: &str) -> Brief {
        crate::brief::parse(Path::new("b.yaml"), yaml.as_bytes())
            .unwrap()
            .brief
    }

    #[test]
    fn judges_get_only_their_vendor_api_and_participants_also_the_brief_list() {
        let brief = brief(
            "name: t\nnetwork: {allow: [\"registry.npmjs.org:443\"]}\nparticipants:\n  - {name: a, flavor: codex}\n  - {name: d, flavor: dummy}\n\
judges:\n  - {name: j, flavor: grok}\nrubric: {dimensions: [{id: c, weight: 100}]}\n",
        );
        let participant = Egress::of(&brief, &brief.participants[0], Role::Participant);
        assert_eq!(
            participant.allowed(),
            [
                "api.openai.com:443",
                "chatgpt.com:443",
                "auth.openai.com:443",
                "registry.npmjs.org:443"
            ]
        );
        assert_eq!(
            Egress::of(&brief, &brief.judges[0], Role::Judge).allowed(),
            ["api.x.ai:443", "auth.x.ai:443"]
        );
        assert_eq!(
            Egress::of(&brief, &brief.participants[1], Role::Participant).allowed(),
            ["registry.npmjs.org:443"]
        );
    }

    #[test]
    fn a_dummy_cell_with_nothing_allowed_is_closed_and_neither_closed_nor_none_has_a_network() {
        let brief = brief(
            "name: t\nparticipants:\n  - {name: d, flavor: dummy}\n  - {name: n, flavor: dummy, network: none}\n",
        );
        assert_eq!(
            Egress::of(&brief, &brief.participants[0], Role::Participant),
            Egress::Closed
        );
        assert_eq!(
            Egress::of(&brief, &brief.participants[1], Role::Participant),
            Egress::None
        );
        let paths = CookPaths::new("/cooks/251122-t".into());
        let names = Names::for_paths(&paths);
        let user = CellUser::resolve(Some("1000:1000")).unwrap();
        let context = PlanContext {
            paths: &paths,
            names: &names,
            brief: &brief,
            user,
            profile: Profile::Medium,
            run_id: "r",
            grace: CELL_GRACE,
        };
        let closed = context.base(
            &brief.participants[0],
            Role::Participant,
            Path::new("/logs"),
        );
        assert!(
            closed.network.is_none() && closed.spec.network.is_none(),
            "an allowlist cell that reaches nothing has no network at all (issue 28)"
        );
        let proxied = brief_with_allow();
        let behind = context_for(&proxied, &paths, &names, user).base(
            &proxied.participants[0],
            Role::Participant,
            Path::new("/logs"),
        );
        assert!(
            behind.network.as_ref().unwrap().internal,
            "a cell behind a proxy is on an internal network"
        );
        assert!(
            context
                .base(
                    &brief.participants[1],
                    Role::Participant,
                    Path::new("/logs")
                )
                .network
                .is_none()
        );
    }
}

#[cfg(test)]
mod deny_tests {
    use super::*;

    #[test]
    fn no_cell_gets_a_denied_variable_or_a_host_path() {
        let yaml = "name: t\nparticipants:\n  - {name: a, flavor: claude}\n  - {name: b, flavor: codex}\n  - {name: c, flavor: agy}\n  - {name: d, flavor: grok}\n  - {name: e, flavor: triad}\n";
        let brief = crate::brief::parse(Path::new("b.yaml"), yaml.as_bytes())
            .unwrap()
            .brief;
        let paths = CookPaths::new("/cooks/251122-t".into());
        let names = Names::for_paths(&paths);
        let user = CellUser::resolve(Some("1000:1000")).unwrap();
        let context = PlanContext {
            paths: &paths,
            names: &names,
            brief: &brief,
            user,
            profile: Profile::Medium,
            run_id: "r",
            grace: CELL_GRACE,
        };
        for actor in &brief.participants {
            let plan = context.base(actor, Role::Participant, Path::new("/logs"));
            let denied = crate::flavor::denied_env();
            for (key, _) in &plan.spec.env {
                assert!(!denied.contains(&key.as_str()), "{} gets {key}", actor.name);
            }
            assert!(
                plan.spec.areas.is_empty() && plan.spec.tmpfs.len() == 2,
                "a cell spec names no host path at all: only areas the engine gives"
            );
        }
        assert!(crate::flavor::denied_env().contains(&"ANTHROPIC_API_KEY"));
        assert!(
            crate::flavor::denied_env().contains(&"ANTHROPIC_API_KEY"),
            "other vendors' keys too"
        );
    }
}
