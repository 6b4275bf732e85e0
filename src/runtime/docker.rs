//! The local Docker engine through bollard (no `docker` subprocess anywhere).
//!
//! Every cell gets the hardening baseline ([`super::hardening::Hardening`], rendered here as a
//! container's create request), whatever its spec says: its program runs as a
//! non-root user with no capability (its init is root with only `INIT_CAPABILITIES`, and
//! drops to that user), `no-new-privileges`, default seccomp, read-only root file system,
//! tmpfs HOME and /tmp, pids/memory/CPU limits, no privileged mode, no host namespaces, no
//! Docker socket, stdin closed, and the `none` log driver (output is read through the attach
//! API, attached before the cell starts, so the engine stores none of it). See SECURITY.md.

use std::collections::HashMap;

use bollard::Docker;
use bollard::errors::Error as BollardError;
use bollard::models::{
    ContainerCreateBody, HostConfig, HostConfigLogConfig, Ipam, IpamConfig, Mount as EngineMount,
    MountType, MountVolumeOptions, MountVolumeOptionsDriverConfig, NetworkCreateRequest,
    ResourcesUlimits,
};
use bollard::query_parameters::{
    AttachContainerOptionsBuilder, BuildImageOptionsBuilder, CreateContainerOptionsBuilder,
    DownloadFromContainerOptionsBuilder, KillContainerOptionsBuilder, ListContainersOptionsBuilder,
    ListImagesOptionsBuilder, ListNetworksOptionsBuilder, ListVolumesOptionsBuilder,
    LogsOptionsBuilder, RemoveContainerOptionsBuilder, RemoveImageOptionsBuilder,
    RemoveVolumeOptionsBuilder, UploadToContainerOptionsBuilder, WaitContainerOptionsBuilder,
};
use futures_util::FutureExt;
use futures_util::stream::{BoxStream, StreamExt};
use sha2::Digest;

use super::connect::DockerEnv;
use super::hardening::Hardening;
use super::{
    CellExit, CellSpec, EngineFuture, EngineInfo, ImageSpec, LogChunk, NetworkSpec, ObjectKind,
    ObjectRef, Runtime, RuntimeError, Selector,
};

/// Default pool for explicit per-cell subnets. The engine's default address pools allow only
/// about 30 user networks (docs/ENGINE.md §2.5), so every network gets an explicit /28 from here.
pub const DEFAULT_SUBNET_POOL: &str = "10.213.0.0/16";

/// The Docker backend.
#[derive(Debug, Clone)]
pub struct DockerRuntime {
    docker: Docker,
    /// Where the engine was looked for (`DOCKER_HOST`), for an error reaching it.
    endpoint: Option<String>,
    pool: SubnetPool,
    /// Each image's own entrypoint and command, asked once per image.
    programs: std::sync::Arc<std::sync::Mutex<HashMap<String, Vec<String>>>>,
    /// Each created cell's output, attached before it starts (cells log to the `none` driver:
    /// the engine keeps no copy of what a cell prints), until [`Runtime::cell_logs`] takes it.
    attached: std::sync::Arc<std::sync::Mutex<HashMap<String, Attached>>>,
}

/// A cell's output as it arrives.
type Attached = tokio::sync::mpsc::UnboundedReceiver<Result<LogChunk, RuntimeError>>;

impl DockerRuntime {
    /// Connects to the engine the standard Docker environment `env` names (see
    /// [`super::connect`]) and negotiates the API version; networks get subnets from
    /// [`DEFAULT_SUBNET_POOL`].
    pub async fn connect(env: &DockerEnv) -> Result<Self, RuntimeError> {
        Self::connect_with_pool(env, DEFAULT_SUBNET_POOL).await
    }

    /// An engine reached through an already connected client (a swarm node's own engine, at
    /// `endpoint`).
    pub(super) fn from_client(docker: Docker, endpoint: &str) -> Self {
        Self {
            docker,
            endpoint: Some(endpoint.to_owned()),
            pool: SubnetPool::parse(DEFAULT_SUBNET_POOL).expect("the default pool is a valid CIDR"),
            programs: std::sync::Arc::default(),
            attached: std::sync::Arc::default(),
        }
    }

    /// The bollard client.
    pub(super) fn client(&self) -> &Docker {
        &self.docker
    }

    /// As [`DockerRuntime::connect`], with subnets from `pool_text` (an IPv4 CIDR between /8
    /// and /28; settings read it from `MULTICOOKER_SUBNET_POOL`).
    pub async fn connect_with_pool(env: &DockerEnv, pool_text: &str) -> Result<Self, RuntimeError> {
        let (docker, _endpoint) = super::connect::connect_with(env).await?;
        let pool = SubnetPool::parse(pool_text).ok_or_else(|| RuntimeError::NoSubnet {
            network: "(any)".into(),
            pool: format!("{pool_text} (not an IPv4 CIDR between /8 and /28)"),
        })?;
        Ok(Self {
            docker,
            endpoint: env.host.clone(),
            pool,
            programs: std::sync::Arc::default(),
            attached: std::sync::Arc::default(),
        })
    }

    async fn create_network_once(
        &self,
        spec: &NetworkSpec,
        subnet: &str,
    ) -> Result<(), BollardError> {
        let mut options = HashMap::new();
        options.insert(
            "com.docker.network.bridge.name".to_owned(),
            bridge_name(&spec.name),
        );
        if spec.isolated {
            // Members of a shared egress network must not reach each other.
            options.insert(
                "com.docker.network.bridge.enable_icc".to_owned(),
                "false".to_owned(),
            );
        }
        let request = NetworkCreateRequest {
            name: spec.name.clone(),
            driver: Some("bridge".into()),
            internal: Some(spec.internal),
            ipam: Some(Ipam {
                driver: Some("default".into()),
                config: Some(vec![IpamConfig {
                    subnet: Some(subnet.to_owned()),
                    ..Default::default()
                }]),
                options: None,
            }),
            options: Some(options),
            labels: Some(spec.labels.to_map()),
            ..Default::default()
        };
        self.docker.create_network(request).await.map(drop)
    }
}

impl DockerRuntime {
    pub(super) async fn engine_info(&self) -> Result<EngineInfo, RuntimeError> {
        let unreachable = |e: BollardError| RuntimeError::Unreachable {
            endpoint: self.endpoint.clone(),
            message: e.to_string(),
        };
        let version = self.docker.version().await.map_err(unreachable)?;
        let info = self.docker.info().await.map_err(unreachable)?;
        Ok(EngineInfo {
            backend: "docker",
            version: version.version.unwrap_or_default(),
            api_version: self.docker.client_version().to_string(),
            mem_total: info
                .mem_total
                .and_then(|m| u64::try_from(m).ok())
                .unwrap_or(0),
            cpus: info.ncpu.and_then(|n| u64::try_from(n).ok()).unwrap_or(1),
            nodes: 1,
        })
    }

    pub(super) async fn engine_image_exists(&self, tag: &str) -> Result<bool, RuntimeError> {
        match self.docker.inspect_image(tag).await {
            Ok(_) => Ok(true),
            Err(e) if status(&e) == Some(404) => Ok(false),
            Err(e) => Err(operation("inspect", ObjectRef::image(tag), &e)),
        }
    }

    pub(super) async fn engine_image_labels(
        &self,
        tag: &str,
    ) -> Result<Option<std::collections::BTreeMap<String, String>>, RuntimeError> {
        match self.docker.inspect_image(tag).await {
            Ok(image) => Ok(Some(
                image
                    .config
                    .and_then(|c| c.labels)
                    .unwrap_or_default()
                    .into_iter()
                    .collect(),
            )),
            Err(e) if status(&e) == Some(404) => Ok(None),
            Err(e) => Err(operation("inspect", ObjectRef::image(tag), &e)),
        }
    }

    pub(super) async fn engine_image_id(&self, tag: &str) -> Result<Option<String>, RuntimeError> {
        match self.docker.inspect_image(tag).await {
            Ok(image) => Ok(image.id),
            Err(e) if status(&e) == Some(404) => Ok(None),
            Err(e) => Err(operation("inspect", ObjectRef::image(tag), &e)),
        }
    }

    /// [`Runtime::image_user`]: the image's `Config.User`.
    pub(super) async fn engine_image_user(&self, tag: &str) -> Result<String, RuntimeError> {
        let image = self
            .docker
            .inspect_image(tag)
            .await
            .map_err(|e| operation("inspect", ObjectRef::image(tag), &e))?;
        Ok(image.config.and_then(|c| c.user).unwrap_or_default())
    }

    pub(super) async fn engine_build_image(&self, spec: &ImageSpec) -> Result<(), RuntimeError> {
        let mut attempt = 1;
        loop {
            match self.build_once(spec).await {
                Err(RuntimeError::Build { message, .. })
                    if attempt < 3 && cached_layer_vanished(&message) =>
                {
                    attempt += 1;
                }
                done => return done,
            }
        }
    }

    async fn build_once(&self, spec: &ImageSpec) -> Result<(), RuntimeError> {
        let options = BuildImageOptionsBuilder::default()
            .dockerfile("Dockerfile")
            .t(&spec.tag)
            .rm(true)
            .forcerm(true)
            .build();
        let context =
            with_label_line(&spec.context, &spec.labels).map_err(|e| RuntimeError::Build {
                image: spec.tag.clone(),
                message: format!("cannot add labels to the build context: {e}"),
            })?;
        let body = bollard::body_full(bytes::Bytes::from(context));
        let mut stream = self.docker.build_image(options, None, Some(body));
        let mut tail: Vec<String> = Vec::new();
        while let Some(item) = stream.next().await {
            let failure = match item {
                Ok(info) => {
                    if let Some(line) = info
                        .stream
                        .as_deref()
                        .map(str::trim_end)
                        .filter(|l| !l.is_empty())
                    {
                        tail.push(line.to_owned());
                        if tail.len() > 8 {
                            tail.remove(0);
                        }
                    }
                    info.error_detail.and_then(|d| d.message)
                }
                Err(e) => Some(engine_message(&e)),
            };
            if let Some(message) = failure {
                let context = if tail.is_empty() {
                    String::new()
                } else {
                    format!("\n    {}", tail.join("\n    "))
                };
                return Err(RuntimeError::Build {
                    image: spec.tag.clone(),
                    message: format!("{message}{context}"),
                });
            }
        }
        Ok(())
    }

    pub(super) async fn engine_create_network(
        &self,
        spec: &NetworkSpec,
    ) -> Result<(), RuntimeError> {
        let object = ObjectRef::network(&spec.name);
        let mut replaced = false;
        for subnet in self.pool.candidates(&spec.name).take(64) {
            match self.create_network_once(spec, &subnet).await {
                Ok(()) => return Ok(()),
                Err(e) if is_overlap(&e) => {}
                Err(e) if status(&e) == Some(409) && !replaced => {
                    self.engine_remove(&object).await?;
                    replaced = true;
                }
                Err(e) => return Err(operation("create", object, &e)),
            }
        }
        Err(RuntimeError::NoSubnet {
            network: spec.name.clone(),
            pool: self.pool.text.clone(),
        })
    }

    pub(super) async fn engine_create_cell(&self, spec: &CellSpec) -> Result<(), RuntimeError> {
        let object = ObjectRef::cell(&spec.name);
        let options = CreateContainerOptionsBuilder::default()
            .name(&spec.name)
            .build();
        let program = match &spec.program {
            Some(program) => program.clone(),
            None => self.image_program(&spec.image).await?,
        };
        let mut body = container_body(spec, &program);
        // When init ends the cell at the latest (a second of slack for its start).
        let ends_by = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default()
            + spec.init.deadline
            + std::time::Duration::from_secs(1);
        body.labels
            .get_or_insert_default()
            .entry(super::LABEL_DEADLINE.to_owned())
            .or_insert_with(|| ends_by.as_secs().to_string());
        match self
            .create_replacing(&object, options.clone(), body.clone())
            .await?
        {
            Ok(()) => {}
            Err(e) if spec.task.is_some() && engine_message(&e).contains("storage-opt") => {
                // The storage driver cannot cap one container's root (overlay2 needs xfs with
                // `pquota`): the task's root is then bounded by the engine's disk alone, as
                // SECURITY.md ("The task profile") and `doctor --sandbox` say.
                let mut body = body;
                if let Some(host) = body.host_config.as_mut() {
                    host.storage_opt = None;
                }
                self.docker
                    .create_container(Some(options), body)
                    .await
                    .map_err(|e| operation("create", object.clone(), &e))?;
            }
            Err(e) => return Err(operation("create", object, &e)),
        }
        self.attach(&spec.name).await
    }

    /// Creates the container `object`; a stale namesake from a killed run (409) is removed and
    /// the create tried once more. The engine's refusal comes back as the inner error, for the
    /// caller to read; failing to remove the namesake is the outer one.
    async fn create_replacing(
        &self,
        object: &ObjectRef,
        options: bollard::query_parameters::CreateContainerOptions,
        body: ContainerCreateBody,
    ) -> Result<Result<(), BollardError>, RuntimeError> {
        match self
            .docker
            .create_container(Some(options.clone()), body.clone())
            .await
        {
            Err(e) if status(&e) == Some(409) => {
                self.engine_remove(object).await?;
                Ok(self
                    .docker
                    .create_container(Some(options), body)
                    .await
                    .map(|_| ()))
            }
            created => Ok(created.map(|_| ())),
        }
    }

    /// Attaches to a created cell's stdout and stderr before it starts (nothing it prints is
    /// missed, and the engine stores none of it) and buffers the output for `cell_logs`.
    pub(super) async fn attach(&self, name: &str) -> Result<(), RuntimeError> {
        let options = AttachContainerOptionsBuilder::default()
            .stream(true)
            .stdout(true)
            .stderr(true)
            .logs(false)
            .build();
        let object = ObjectRef::cell(name);
        let attached = self
            .docker
            .attach_container(name, Some(options))
            .await
            .map_err(|e| operation("attach to", object.clone(), &e))?;
        let (sender, receiver) = tokio::sync::mpsc::unbounded_channel();
        let mut output = log_chunks(attached.output, object);
        tokio::spawn(async move {
            let _input = attached.input;
            while let Some(chunk) = output.next().await {
                if sender.send(chunk).is_err() {
                    break;
                }
            }
        });
        self.lock_attached().insert(name.to_owned(), receiver);
        Ok(())
    }

    fn lock_attached(&self) -> std::sync::MutexGuard<'_, HashMap<String, Attached>> {
        self.attached
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The image's own entrypoint and command, which init runs when a cell names no program.
    pub(super) async fn image_program(&self, image: &str) -> Result<Vec<String>, RuntimeError> {
        if let Some(program) = self.lock_programs().get(image) {
            return Ok(program.clone());
        }
        let config = self
            .docker
            .inspect_image(image)
            .await
            .map_err(|e| operation("inspect", ObjectRef::image(image), &e))?
            .config
            .unwrap_or_default();
        let mut program = config.entrypoint.unwrap_or_default();
        program.extend(config.cmd.unwrap_or_default());
        if program.is_empty() {
            return Err(RuntimeError::Operation {
                operation: "run",
                object: ObjectRef::image(image),
                status: None,
                message: "the image has neither ENTRYPOINT nor CMD".into(),
            });
        }
        self.lock_programs()
            .insert(image.to_owned(), program.clone());
        Ok(program)
    }

    fn lock_programs(&self) -> std::sync::MutexGuard<'_, HashMap<String, Vec<String>>> {
        self.programs
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    pub(super) async fn engine_stage(
        &self,
        cell: &str,
        target: &str,
        archive: super::Archive,
    ) -> Result<(), RuntimeError> {
        let options = UploadToContainerOptionsBuilder::default()
            .path(target)
            .no_overwrite_dir_non_dir("true")
            .build();
        self.docker
            .upload_to_container(
                cell,
                Some(options),
                bollard::body_stream(archive.into_stream()),
            )
            .await
            .map_err(|e| operation("stage into", ObjectRef::cell(cell), &e))
    }

    pub(super) fn engine_collect(
        &self,
        cell: &str,
        source: &str,
    ) -> BoxStream<'static, Result<bytes::Bytes, RuntimeError>> {
        let options = DownloadFromContainerOptionsBuilder::default()
            .path(source)
            .build();
        let object = ObjectRef::cell(cell);
        self.docker
            .download_from_container(cell, Some(options))
            .map(move |item| item.map_err(|e| operation("collect from", object.clone(), &e)))
            .boxed()
    }

    pub(super) async fn engine_oom_killed(&self, name: &str) -> Result<bool, RuntimeError> {
        let state = self
            .docker
            .inspect_container(name, None)
            .await
            .map_err(|e| operation("inspect", ObjectRef::cell(name), &e))?
            .state
            .unwrap_or_default();
        Ok(state.oom_killed.unwrap_or(false))
    }

    /// Running cells past the deadline their label names.
    pub(super) async fn engine_overdue(
        &self,
        selector: &Selector,
    ) -> Result<Vec<String>, RuntimeError> {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default()
            .as_secs();
        Ok(self
            .running_containers(selector)
            .await?
            .into_iter()
            .filter(|c| {
                c.labels
                    .as_ref()
                    .and_then(|l| l.get(super::LABEL_DEADLINE))
                    .and_then(|d| d.parse::<u64>().ok())
                    .is_some_and(|deadline| deadline < now)
            })
            .filter_map(container_name)
            .collect())
    }

    pub(super) async fn engine_running(
        &self,
        selector: &Selector,
    ) -> Result<Vec<String>, RuntimeError> {
        Ok(self
            .running_containers(selector)
            .await?
            .into_iter()
            .filter_map(container_name)
            .collect())
    }

    /// The running containers whose labels match.
    async fn running_containers(
        &self,
        selector: &Selector,
    ) -> Result<Vec<bollard::models::ContainerSummary>, RuntimeError> {
        let mut filters = HashMap::new();
        filters.insert("label".to_owned(), selector.engine_filters());
        filters.insert("status".to_owned(), vec!["running".to_owned()]);
        let options = ListContainersOptionsBuilder::default()
            .filters(&filters)
            .build();
        self.docker
            .list_containers(Some(options))
            .await
            .map_err(|e| operation("list", ObjectRef::cell("running containers"), &e))
    }

    pub(super) async fn engine_connect_network(
        &self,
        network: &str,
        cell: &str,
    ) -> Result<(), RuntimeError> {
        let request = bollard::models::NetworkConnectRequest {
            container: cell.to_owned(),
            ..Default::default()
        };
        self.docker
            .connect_network(network, request)
            .await
            .map_err(|e| operation("connect", ObjectRef::network(network), &e))
    }

    pub(super) async fn engine_start_cell(&self, name: &str) -> Result<(), RuntimeError> {
        self.docker
            .start_container(name, None)
            .await
            .map_err(|e| operation("start", ObjectRef::cell(name), &e))
    }

    pub(super) async fn engine_wait_cell(&self, name: &str) -> Result<CellExit, RuntimeError> {
        let options = WaitContainerOptionsBuilder::default()
            .condition("not-running")
            .build();
        let mut stream = self.docker.wait_container(name, Some(options));
        let mut code = None;
        while let Some(item) = stream.next().await {
            match item {
                Ok(response) => code = Some(response.status_code),
                // bollard reports a non-zero exit as an error carrying the code.
                Err(BollardError::DockerContainerWaitError { code: exit, .. }) => code = Some(exit),
                Err(e) => return Err(operation("wait for", ObjectRef::cell(name), &e)),
            }
        }
        let state = self
            .docker
            .inspect_container(name, None)
            .await
            .map_err(|e| operation("inspect", ObjectRef::cell(name), &e))?
            .state
            .unwrap_or_default();
        Ok(CellExit {
            code: state.exit_code.or(code).unwrap_or(-1),
            oom_killed: state.oom_killed.unwrap_or(false),
        })
    }

    pub(super) async fn engine_kill_cell(&self, name: &str) -> Result<(), RuntimeError> {
        let options = KillContainerOptionsBuilder::default()
            .signal("SIGKILL")
            .build();
        match self.docker.kill_container(name, Some(options)).await {
            // 404: gone; 409: not running any more. Both mean it is stopped.
            Err(e) if !matches!(status(&e), Some(404 | 409)) => {
                Err(operation("kill", ObjectRef::cell(name), &e))
            }
            _ => Ok(()),
        }
    }

    /// A cell's output: the stream attached when this runtime created it, else (a cell a
    /// swarm created) the engine's log, followed.
    pub(super) fn engine_cell_logs(
        &self,
        name: &str,
    ) -> BoxStream<'static, Result<LogChunk, RuntimeError>> {
        if let Some(receiver) = self.lock_attached().remove(name) {
            return tokio_stream_of(receiver);
        }
        let options = LogsOptionsBuilder::default()
            .follow(true)
            .stdout(true)
            .stderr(true)
            .build();
        log_chunks(self.docker.logs(name, Some(options)), ObjectRef::cell(name))
    }

    /// Drops a cell's attached output nobody took (a swarm cell removed before its logs
    /// were read).
    pub(super) fn forget_attached(&self, name: &str) {
        self.lock_attached().remove(name);
    }

    pub(super) async fn engine_commit(
        &self,
        name: &str,
        tag: &str,
        labels: &super::Labels,
    ) -> Result<(), RuntimeError> {
        let (repo, version) = tag.rsplit_once(':').unwrap_or((tag, "latest"));
        let options = bollard::query_parameters::CommitContainerOptionsBuilder::default()
            .container(name)
            .repo(repo)
            .tag(version)
            .pause(true)
            .build();
        let config = bollard::models::ContainerConfig {
            labels: Some(labels.to_map()),
            ..Default::default()
        };
        self.docker
            .commit_container(options, config)
            .await
            .map(|_| ())
            .map_err(|e| operation("commit", ObjectRef::cell(name), &e))
    }

    /// [`Runtime::read_image_files`]: a container created from `image` and never started (its
    /// entrypoint names nothing, it has no network and no capability), read through the
    /// archive API, then removed whatever happened.
    pub(super) async fn engine_read_image_files(
        &self,
        image: &str,
        (cell, labels): (&str, &super::Labels),
        paths: &[&str],
        cap: u64,
    ) -> Result<Vec<Option<Vec<u8>>>, RuntimeError> {
        let object = ObjectRef::cell(cell);
        let options = CreateContainerOptionsBuilder::default().name(cell).build();
        let body = ContainerCreateBody {
            image: Some(image.to_owned()),
            entrypoint: Some(vec!["/multicooker-never-started".to_owned()]),
            cmd: Some(Vec::new()),
            labels: Some(labels.to_map()),
            network_disabled: Some(true),
            host_config: Some(HostConfig {
                network_mode: Some("none".to_owned()),
                cap_drop: Some(vec!["ALL".to_owned()]),
                readonly_rootfs: Some(true),
                security_opt: Some(vec!["no-new-privileges:true".into()]),
                log_config: Some(HostConfigLogConfig {
                    typ: Some("none".into()),
                    config: None,
                }),
                ..Default::default()
            }),
            ..Default::default()
        };
        self.create_replacing(&object, options, body)
            .await?
            .map_err(|e| operation("create", object.clone(), &e))?;
        let mut files = Vec::new();
        let mut failed = None;
        for path in paths {
            match self.read_one(cell, path, cap).await {
                Ok(file) => files.push(file),
                Err(error) => {
                    failed = Some(error);
                    break;
                }
            }
        }
        let removed = self.engine_remove(&object).await;
        match failed {
            Some(error) => Err(error),
            None => removed.map(|()| files),
        }
    }

    /// One regular file of a created cell, through the archive API (`None`: no such path).
    async fn read_one(
        &self,
        cell: &str,
        path: &str,
        cap: u64,
    ) -> Result<Option<Vec<u8>>, RuntimeError> {
        let object = ObjectRef::cell(cell);
        let refused = |message: String| RuntimeError::Operation {
            operation: "read a file of",
            object: object.clone(),
            status: None,
            message,
        };
        let options = DownloadFromContainerOptionsBuilder::default()
            .path(path)
            .build();
        let mut stream = self.docker.download_from_container(cell, Some(options));
        let mut tar = Vec::new();
        // The tar's headers and padding beside the file itself.
        let limit = cap.saturating_add(64 << 10);
        while let Some(chunk) = stream.next().await {
            match chunk {
                Ok(bytes) => tar.extend_from_slice(&bytes),
                Err(e) if status(&e) == Some(404) => return Ok(None),
                Err(e) => return Err(operation("read a file of", object.clone(), &e)),
            }
            if tar.len() as u64 > limit {
                return Err(refused(format!("`{path}` is over {cap} bytes")));
            }
        }
        let mut archive = tar::Archive::new(tar.as_slice());
        let mut entries = archive
            .entries()
            .map_err(|e| refused(format!("`{path}`: {e}")))?;
        let mut entry = match entries.next() {
            Some(Ok(entry)) => entry,
            Some(Err(e)) => return Err(refused(format!("`{path}`: {e}"))),
            None => return Ok(None),
        };
        if entry.header().entry_type() != tar::EntryType::Regular {
            return Err(refused(format!("`{path}` is not a regular file")));
        }
        let mut bytes = Vec::new();
        std::io::Read::read_to_end(&mut std::io::Read::take(&mut entry, cap + 1), &mut bytes)
            .map_err(|e| refused(format!("`{path}`: {e}")))?;
        if bytes.len() as u64 > cap {
            return Err(refused(format!("`{path}` is over {cap} bytes")));
        }
        Ok(Some(bytes))
    }

    pub(super) async fn engine_remove(&self, object: &ObjectRef) -> Result<(), RuntimeError> {
        let name = object.name.as_str();
        if object.kind == ObjectKind::Cell {
            self.lock_attached().remove(name);
        }
        let result = match object.kind {
            ObjectKind::Cell => {
                let options = RemoveContainerOptionsBuilder::default()
                    .force(true)
                    .v(true)
                    .build();
                self.docker.remove_container(name, Some(options)).await
            }
            ObjectKind::Network => self.docker.remove_network(name).await,
            ObjectKind::Image => {
                let options = RemoveImageOptionsBuilder::default().force(true).build();
                self.docker
                    .remove_image(name, Some(options), None)
                    .await
                    .map(drop)
            }
            ObjectKind::Volume => {
                let options = RemoveVolumeOptionsBuilder::default().force(true).build();
                self.docker.remove_volume(name, Some(options)).await
            }
        };
        match result {
            Err(e) if already_gone(object.kind, status(&e), &engine_message(&e)) => Ok(()),
            Err(e) => Err(operation("remove", object.clone(), &e)),
            Ok(()) => Ok(()),
        }
    }

    pub(super) async fn engine_list(
        &self,
        selector: &Selector,
    ) -> Result<Vec<ObjectRef>, RuntimeError> {
        let mut filters = HashMap::new();
        filters.insert("label".to_owned(), selector.engine_filters());
        let fail = |what: &str, e: &BollardError| {
            operation(
                "list",
                ObjectRef {
                    kind: ObjectKind::Cell,
                    name: what.into(),
                },
                e,
            )
        };
        let containers_options = ListContainersOptionsBuilder::default()
            .all(true)
            .filters(&filters)
            .build();
        let (containers, networks, images, volumes) = futures_util::join!(
            self.docker.list_containers(Some(containers_options)),
            self.docker.list_networks(Some(
                ListNetworksOptionsBuilder::default()
                    .filters(&filters)
                    .build()
            )),
            self.docker.list_images(Some(
                ListImagesOptionsBuilder::default()
                    .filters(&filters)
                    .build()
            )),
            self.docker.list_volumes(Some(
                ListVolumesOptionsBuilder::default()
                    .filters(&filters)
                    .build()
            )),
        );
        let mut found = Vec::new();
        for container in containers.map_err(|e| fail("containers", &e))? {
            let name = container
                .names
                .and_then(|n| n.into_iter().next())
                .or(container.id)
                .unwrap_or_default();
            found.push(ObjectRef::cell(name.trim_start_matches('/')));
        }
        found.extend(
            networks
                .map_err(|e| fail("networks", &e))?
                .into_iter()
                .filter_map(|n| n.name)
                .map(|n| ObjectRef::network(&n)),
        );
        for image in images.map_err(|e| fail("images", &e))? {
            let name = image
                .repo_tags
                .into_iter()
                .find(|t| t != "<none>:<none>")
                .unwrap_or(image.id);
            found.push(ObjectRef::image(&name));
        }
        let volumes = volumes
            .map_err(|e| fail("volumes", &e))?
            .volumes
            .unwrap_or_default();
        found.extend(volumes.into_iter().map(|v| ObjectRef {
            kind: ObjectKind::Volume,
            name: v.name,
        }));
        // Deterministic order (the engine lists anonymous volumes in no stable order).
        found.sort();
        Ok(found)
    }
}

impl Runtime for DockerRuntime {
    fn backend(&self) -> &'static str {
        "docker"
    }
    fn info(&self) -> EngineFuture<'_, EngineInfo> {
        self.engine_info().boxed()
    }
    fn image_exists<'a>(&'a self, tag: &'a str) -> EngineFuture<'a, bool> {
        self.engine_image_exists(tag).boxed()
    }
    fn image_labels<'a>(
        &'a self,
        tag: &'a str,
    ) -> EngineFuture<'a, Option<std::collections::BTreeMap<String, String>>> {
        self.engine_image_labels(tag).boxed()
    }
    fn image_id<'a>(&'a self, tag: &'a str) -> EngineFuture<'a, Option<String>> {
        self.engine_image_id(tag).boxed()
    }
    fn image_user<'a>(&'a self, image: &'a str) -> EngineFuture<'a, String> {
        self.engine_image_user(image).boxed()
    }
    fn build_image<'a>(&'a self, spec: &'a ImageSpec) -> EngineFuture<'a, ()> {
        self.engine_build_image(spec).boxed()
    }
    fn create_network<'a>(&'a self, spec: &'a NetworkSpec) -> EngineFuture<'a, ()> {
        self.engine_create_network(spec).boxed()
    }
    fn create_cell<'a>(&'a self, spec: &'a CellSpec) -> EngineFuture<'a, ()> {
        self.engine_create_cell(spec).boxed()
    }
    fn connect_network<'a>(&'a self, network: &'a str, cell: &'a str) -> EngineFuture<'a, ()> {
        self.engine_connect_network(network, cell).boxed()
    }
    fn start_cell<'a>(&'a self, name: &'a str) -> EngineFuture<'a, ()> {
        self.engine_start_cell(name).boxed()
    }
    fn stage<'a>(
        &'a self,
        cell: &'a str,
        target: &'a str,
        archive: super::Archive,
    ) -> EngineFuture<'a, ()> {
        self.engine_stage(cell, target, archive).boxed()
    }
    fn collect(
        &self,
        cell: &str,
        source: &str,
    ) -> BoxStream<'static, Result<bytes::Bytes, RuntimeError>> {
        self.engine_collect(cell, source)
    }
    fn wait_cell<'a>(&'a self, name: &'a str) -> EngineFuture<'a, CellExit> {
        self.engine_wait_cell(name).boxed()
    }
    fn oom_killed<'a>(&'a self, name: &'a str) -> EngineFuture<'a, bool> {
        self.engine_oom_killed(name).boxed()
    }
    fn kill_cell<'a>(&'a self, name: &'a str) -> EngineFuture<'a, ()> {
        self.engine_kill_cell(name).boxed()
    }
    fn cell_logs(&self, name: &str) -> BoxStream<'static, Result<LogChunk, RuntimeError>> {
        self.engine_cell_logs(name)
    }
    fn remove<'a>(&'a self, object: &'a ObjectRef) -> EngineFuture<'a, ()> {
        self.engine_remove(object).boxed()
    }
    fn list<'a>(&'a self, selector: &'a Selector) -> EngineFuture<'a, Vec<ObjectRef>> {
        self.engine_list(selector).boxed()
    }
    fn running<'a>(&'a self, selector: &'a Selector) -> EngineFuture<'a, Vec<String>> {
        self.engine_running(selector).boxed()
    }
    fn overdue<'a>(&'a self, selector: &'a Selector) -> EngineFuture<'a, Vec<String>> {
        self.engine_overdue(selector).boxed()
    }
    fn commit_cell<'a>(
        &'a self,
        name: &'a str,
        tag: &'a str,
        labels: &'a super::Labels,
    ) -> EngineFuture<'a, ()> {
        self.engine_commit(name, tag, labels).boxed()
    }
    fn read_image_files<'a>(
        &'a self,
        image: &'a str,
        cell: (&'a str, &'a super::Labels),
        paths: &'a [&'a str],
        cap: u64,
    ) -> EngineFuture<'a, Vec<Option<Vec<u8>>>> {
        self.engine_read_image_files(image, cell, paths, cap)
            .boxed()
    }
    fn program<'a>(&'a self, spec: &'a CellSpec) -> EngineFuture<'a, Vec<String>> {
        async move {
            match &spec.program {
                Some(program) => Ok(program.clone()),
                None => self.image_program(&spec.image).await,
            }
        }
        .boxed()
    }
}

/// The engine's output frames as log chunks (stdin frames dropped).
fn log_chunks<S>(stream: S, object: ObjectRef) -> BoxStream<'static, Result<LogChunk, RuntimeError>>
where
    S: futures_util::Stream<Item = Result<bollard::container::LogOutput, BollardError>>
        + Send
        + 'static,
{
    use bollard::container::LogOutput;
    stream
        .filter_map(move |item| {
            let mapped = match item {
                Ok(LogOutput::StdErr { message }) => Some(Ok(LogChunk::Stderr(message))),
                Ok(LogOutput::StdOut { message } | LogOutput::Console { message }) => {
                    Some(Ok(LogChunk::Stdout(message)))
                }
                Ok(LogOutput::StdIn { .. }) => None,
                Err(e) => Some(Err(operation("read logs of", object.clone(), &e))),
            };
            std::future::ready(mapped)
        })
        .boxed()
}

/// A receiver as a stream.
fn tokio_stream_of(mut receiver: Attached) -> BoxStream<'static, Result<LogChunk, RuntimeError>> {
    futures_util::stream::poll_fn(move |context| receiver.poll_recv(context)).boxed()
}

/// Appends every label to the context's Dockerfile as one `LABEL` instruction. The engine's
/// `labels` build parameter would add one build step per label, each a committed layer, and
/// concurrent builds sharing those cached steps race on the legacy builder.
fn with_label_line(context: &[u8], labels: &super::Labels) -> std::io::Result<Vec<u8>> {
    let quote = |s: &str| format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""));
    let line: Vec<String> = labels
        .iter()
        .map(|(k, v)| format!("{}={}", quote(k), quote(v)))
        .collect();
    let mut archive = tar::Archive::new(context);
    let mut builder = tar::Builder::new(Vec::new());
    for entry in archive.entries()? {
        let mut entry = entry?;
        let mut header = entry.header().clone();
        let mut bytes = Vec::new();
        std::io::Read::read_to_end(&mut entry, &mut bytes)?;
        if entry.path()?.as_os_str() == "Dockerfile" && !line.is_empty() {
            bytes.extend_from_slice(format!("\nLABEL {}\n", line.join(" ")).as_bytes());
            header.set_size(bytes.len() as u64);
            header.set_cksum();
        }
        builder.append(&header, bytes.as_slice())?;
    }
    builder.into_inner()
}

/// The create request of a cell: the spec plus the hardening baseline. The entrypoint is the
/// cell's init with the program after it.
pub fn container_body(spec: &CellSpec, program: &[String]) -> ContainerCreateBody {
    let hardening = Hardening::of(spec);
    ContainerCreateBody {
        image: Some(spec.image.clone()),
        entrypoint: Some(spec.init.argv(&spec.user, program)),
        cmd: None,
        env: Some(spec.env.iter().map(|(k, v)| format!("{k}={v}")).collect()),
        labels: Some(spec.labels.to_map()),
        // Init alone is root (with INIT_CAPABILITIES only); the program runs as `spec.user`.
        user: Some(hardening.user.into()),
        // Empty: the image's own WORKDIR (a Harbor task without `workdir`).
        working_dir: Some(spec.workdir.clone()).filter(|w| !w.is_empty()),
        hostname: Some(hardening.hostname.into()),
        open_stdin: Some(hardening.stdin),
        attach_stdin: Some(hardening.stdin),
        tty: Some(false),
        host_config: Some(render_host_config(spec, &hardening)),
        ..Default::default()
    }
}

/// Whether a build failed because a cached layer it reused vanished meanwhile. The legacy
/// builder reuses cached layers that another run's teardown may remove (removing an image
/// removes its untagged parents): the step that used one then fails to commit ("unknown parent
/// image ID") or to read it back ("failed to get digest … no such file or directory"). Building
/// again makes the layer anew.
fn cached_layer_vanished(message: &str) -> bool {
    message.contains("unknown parent image ID")
        || (message.contains("failed to get digest")
            && message.contains("no such file or directory"))
}

/// An area as an anonymous volume on an in-memory file system: capped by the engine while the
/// cell runs, reachable through the archive API, and removed with the container.
pub(super) fn area_mount(area: &super::Area, labels: &super::Labels) -> EngineMount {
    let (uid, gid) = area.owner;
    let mut options = HashMap::new();
    options.insert("type".to_owned(), "tmpfs".to_owned());
    options.insert("device".to_owned(), "tmpfs".to_owned());
    options.insert(
        "o".to_owned(),
        format!(
            "size={},uid={uid},gid={gid},mode={:o},nosuid,nodev",
            area.size_bytes.max(4096),
            area.mode
        ),
    );
    EngineMount {
        target: Some(area.target.clone()),
        typ: Some(MountType::VOLUME),
        read_only: Some(false),
        volume_options: Some(MountVolumeOptions {
            no_copy: Some(true),
            labels: Some(labels.to_map()),
            driver_config: Some(MountVolumeOptionsDriverConfig {
                name: Some("local".into()),
                options: Some(options),
            }),
            subpath: None,
        }),
        ..Default::default()
    }
}

/// The hardening baseline and limits. Nothing here is configurable by a brief except limits.
pub fn host_config(spec: &CellSpec) -> HostConfig {
    render_host_config(spec, &Hardening::of(spec))
}

/// `hardening` and the spec's limits, areas and network as a container's host config.
fn render_host_config(spec: &CellSpec, hardening: &Hardening) -> HostConfig {
    let mounts = spec
        .areas
        .iter()
        .map(|area| area_mount(area, &spec.labels))
        .collect();
    let tmpfs = spec
        .tmpfs
        .iter()
        .map(|t| {
            let mut options = format!(
                "rw,nosuid,nodev,exec,size={},mode={:o}",
                t.size_bytes, t.mode
            );
            if let Some((uid, gid)) = t.owner {
                options.push_str(&format!(",uid={uid},gid={gid}"));
            }
            (t.target.clone(), options)
        })
        .collect();
    #[expect(
        clippy::cast_possible_truncation,
        reason = "limits are far below i64::MAX"
    )]
    let nano_cpus = (spec.limits.cpus * 1e9).round() as i64;
    HostConfig {
        network_mode: Some(spec.network.clone().unwrap_or_else(|| "none".to_owned())),
        mounts: Some(mounts),
        tmpfs: Some(tmpfs),
        // The task profile (Harbor tasks) writes its root; every other cell cannot.
        readonly_rootfs: Some(hardening.read_only_root),
        cap_drop: Some(hardening.capabilities_dropped()),
        cap_add: Some(hardening.capabilities.clone()),
        storage_opt: hardening
            .root_storage_bytes
            .map(|bytes| HashMap::from([("size".to_owned(), bytes.to_string())])),
        security_opt: hardening
            .no_new_privileges
            .then(|| vec!["no-new-privileges:true".into()]),
        privileged: Some(hardening.privileged),
        memory: Some(i64::try_from(spec.limits.memory_bytes).unwrap_or(i64::MAX)),
        memory_swap: Some(i64::try_from(spec.limits.memory_swap_bytes).unwrap_or(i64::MAX)),
        nano_cpus: Some(nano_cpus),
        pids_limit: Some(hardening.pids_limit()),
        oom_score_adj: Some(hardening.oom_score_adj),
        ulimits: Some(ulimits(hardening)),
        // The engine keeps no copy of a cell's output (a login it prints would stay on the
        // host until `clean`): the output is read through the attach API only.
        log_config: Some(HostConfigLogConfig {
            typ: Some(hardening.log_driver.into()),
            config: None,
        }),
        restart_policy: None,
        auto_remove: Some(false),
        ..Default::default()
    }
}

/// The baseline's resource limits as the engine takes them (a swarm service's too).
pub(super) fn ulimits(hardening: &Hardening) -> Vec<ResourcesUlimits> {
    hardening
        .ulimits
        .iter()
        .map(|u| ResourcesUlimits {
            name: Some(u.name.into()),
            soft: Some(u.soft),
            hard: Some(u.hard),
        })
        .collect()
}

/// The Linux bridge name for a network: `mc-` and 12 hex digits (at most 15 characters), so a
/// host firewall rule can match every multicooker bridge with `mc-+`.
pub fn bridge_name(network: &str) -> String {
    let digest = sha2::Sha256::digest(network.as_bytes());
    let hex: String = digest.iter().take(6).map(|b| format!("{b:02x}")).collect();
    format!("mc-{hex}")
}

/// /28 subnets carved from a pool, starting at a point derived from the network name so that
/// concurrent cooks rarely try the same one first.
#[derive(Debug, Clone)]
pub(super) struct SubnetPool {
    text: String,
    base: u32,
    count: u32,
}

impl SubnetPool {
    pub(super) fn parse(text: &str) -> Option<Self> {
        let (address, prefix) = text.split_once('/')?;
        let prefix: u32 = prefix.parse().ok().filter(|p| (8..=28).contains(p))?;
        let address: std::net::Ipv4Addr = address.parse().ok()?;
        let mask = u32::MAX << (32 - prefix);
        Some(Self {
            text: text.to_owned(),
            base: u32::from(address) & mask,
            count: 1 << (28 - prefix),
        })
    }

    pub(super) fn candidates(&self, name: &str) -> impl Iterator<Item = String> + '_ {
        let digest = sha2::Sha256::digest(name.as_bytes());
        let start = u32::from_be_bytes([digest[0], digest[1], digest[2], digest[3]]) % self.count;
        (0..self.count).map(move |i| {
            let index = (start + i) % self.count;
            format!("{}/28", std::net::Ipv4Addr::from(self.base + (index << 4)))
        })
    }
}

pub(super) fn status(error: &BollardError) -> Option<u16> {
    match error {
        BollardError::DockerResponseServerError { status_code, .. } => Some(*status_code),
        _ => None,
    }
}

pub(super) fn engine_message(error: &BollardError) -> String {
    match error {
        BollardError::DockerResponseServerError { message, .. } => message.trim().to_owned(),
        other => other.to_string(),
    }
}

pub(super) fn is_overlap(error: &BollardError) -> bool {
    let message = engine_message(error);
    message.contains("overlaps") || message.contains("overlapping")
}

pub(super) fn operation(
    operation: &'static str,
    object: ObjectRef,
    error: &BollardError,
) -> RuntimeError {
    RuntimeError::Operation {
        operation,
        object,
        status: status(error),
        message: engine_message(error),
    }
}

/// A listed container's name, without the engine's leading `/`.
fn container_name(container: bollard::models::ContainerSummary) -> Option<String> {
    let name = container.names?.into_iter().next()?;
    Some(name.trim_start_matches('/').to_owned())
}

/// Whether a failed removal means the object is gone, or going, anyway: not found (404); a
/// container whose removal is already in progress (409); an image whose ID the engine no longer
/// recognizes, because another removal (a tag of the same image, a concurrent teardown) took it
/// first (issue 25: runs that left nothing warned "could not remove image … unrecognized image
/// ID" and advised `clean --all`).
fn already_gone(kind: ObjectKind, status: Option<u16>, message: &str) -> bool {
    status == Some(404)
        || (kind == ObjectKind::Cell && status == Some(409) && message.contains("in progress"))
        || (kind == ObjectKind::Image
            && (message.contains("unrecognized image ID") || message.contains("No such image")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::{Area, Init, Labels, Limits, Tmpfs};

    #[test]
    fn a_build_whose_cached_layer_vanished_is_tried_again_and_nothing_else() {
        // As CI saw them, both under load while another cook tore its images down.
        assert!(cached_layer_vanished(
            "Docker stream error: unknown parent image ID sha256:6b5bff08138e"
        ));
        assert!(cached_layer_vanished(
            "Docker stream error: failed to get digest sha256:0c8340f8ff8e: open \
             /var/lib/docker/image/fuse-overlayfs/imagedb/content/sha256/0c8340f8ff8e: no such \
             file or directory"
        ));
        assert!(!cached_layer_vanished(
            "The command '/bin/sh -c false' returned a non-zero code: 1"
        ));
        assert!(!cached_layer_vanished(
            "pull access denied for nosuch, repository does not exist"
        ));
    }

    #[test]
    fn a_removal_raced_by_another_is_gone_not_a_failure() {
        let raced = "unrecognized image ID sha256:0123abcd";
        assert!(already_gone(ObjectKind::Image, Some(500), raced));
        assert!(already_gone(
            ObjectKind::Image,
            Some(409),
            "No such image: mc-x:1"
        ));
        assert!(already_gone(ObjectKind::Network, Some(404), ""));
        assert!(!already_gone(
            ObjectKind::Image,
            Some(409),
            "image is being used by running container"
        ));
        assert!(!already_gone(ObjectKind::Cell, Some(500), raced));
    }

    fn spec() -> CellSpec {
        CellSpec {
            name: "mc-x-p-alpha".into(),
            image: "mc-x-dummy:latest".into(),
            network: Some("mc-x-p-alpha".into()),
            labels: Labels::new("x", "participant"),
            user: "1000:1000".into(),
            env: vec![("HOME".into(), "/home/mc".into())],
            areas: vec![Area {
                target: "/work/out".into(),
                size_bytes: 1 << 20,
                owner: (1000, 1000),
                mode: 0o700,
            }],
            tmpfs: vec![Tmpfs {
                target: "/home/mc".into(),
                size_bytes: 1 << 20,
                mode: 0o700,
                owner: Some((1000, 1000)),
            }],
            limits: Limits {
                memory_bytes: 1 << 30,
                memory_swap_bytes: 1 << 30,
                cpus: 1.5,
                pids: 256,
            },
            workdir: "/work".into(),
            program: Some(vec!["/usr/local/bin/mc-cell".into(), "dummy".into()]),
            init: Init {
                wait_for_go: true,
                launch: true,
                hold: true,
                timeout: Some(std::time::Duration::from_secs(30)),
                deadline: std::time::Duration::from_secs(90),
                task_root: false,
                go_dir: None,
            },
            task: None,
        }
    }

    #[test]
    fn every_cell_gets_the_hardening_baseline() {
        let host = host_config(&spec());
        assert_eq!(host.cap_drop, Some(vec!["ALL".to_owned()]));
        assert_eq!(
            host.cap_add,
            Some(vec![
                "SETUID".into(),
                "SETGID".into(),
                "SETPCAP".into(),
                "KILL".into()
            ])
        );
        assert_eq!(
            host.security_opt,
            Some(vec!["no-new-privileges:true".to_owned()])
        );
        assert_eq!(host.readonly_rootfs, Some(true));
        assert_eq!(host.log_config.unwrap().typ.as_deref(), Some("none"));
        assert_eq!(host.privileged, Some(false));
        assert_eq!(host.nano_cpus, Some(1_500_000_000));
        assert_eq!(host.pids_limit, Some(256));
        assert_eq!(host.memory, host.memory_swap);
        assert!(host.pid_mode.is_none() && host.ipc_mode.is_none() && host.userns_mode.is_none());
        assert_eq!(
            host.tmpfs.unwrap()["/home/mc"],
            "rw,nosuid,nodev,exec,size=1048576,mode=700,uid=1000,gid=1000"
        );
        let spec = spec();
        let body = container_body(&spec, spec.program.as_deref().unwrap_or_default());
        assert_eq!(body.open_stdin, Some(false));
        assert_eq!(body.user.as_deref(), Some("0:0"));
        assert_eq!(
            body.entrypoint.unwrap().join(" "),
            "/opt/multicooker/mc-cell init --user 1000:1000 --launch-as 1001:1001 --go /work/.mc-cell-go --timeout 30.000 --deadline 90.000 --hold -- /usr/local/bin/mc-cell dummy"
        );
        let area = &host.mounts.unwrap()[0];
        assert_eq!(area.typ, Some(MountType::VOLUME));
        assert!(
            area.source.is_none(),
            "an anonymous volume, removed with the cell"
        );
        let options = area.volume_options.as_ref().unwrap();
        assert_eq!(
            options
                .driver_config
                .as_ref()
                .unwrap()
                .options
                .as_ref()
                .unwrap()["o"],
            "size=1048576,uid=1000,gid=1000,mode=700,nosuid,nodev"
        );
    }

    #[test]
    fn labels_become_one_dockerfile_instruction() {
        let mut builder = tar::Builder::new(Vec::new());
        let mut header = tar::Header::new_gnu();
        header.set_size(12);
        builder
            .append_data(&mut header, "Dockerfile", &b"FROM scratch"[..])
            .unwrap();
        let labels = Labels::new("c\"x", "image");
        let context = with_label_line(&builder.into_inner().unwrap(), &labels).unwrap();
        let mut archive = tar::Archive::new(context.as_slice());
        let mut text = String::new();
        std::io::Read::read_to_string(
            &mut archive.entries().unwrap().next().unwrap().unwrap(),
            &mut text,
        )
        .unwrap();
        assert_eq!(
            text,
            "FROM scratch\nLABEL \"io.multicooker.cook\"=\"c\\\"x\" \"io.multicooker.role\"=\"image\"\n"
        );
    }

    #[test]
    fn bridge_names_fit_linux_limits() {
        let name = bridge_name("mc-251122-a-very-long-cook-name-participant-someone");
        assert_eq!(name.len(), 15);
        assert!(name.starts_with("mc-"));
    }

    #[test]
    fn subnets_are_distinct_slash_28s_inside_the_pool() {
        let pool = SubnetPool::parse("10.213.0.0/16").unwrap();
        let candidates: Vec<String> = pool.candidates("net").take(4096).collect();
        assert_eq!(candidates.len(), 4096);
        let unique: std::collections::HashSet<_> = candidates.iter().collect();
        assert_eq!(unique.len(), 4096);
        assert!(
            candidates
                .iter()
                .all(|c| c.starts_with("10.213.") && c.ends_with("/28"))
        );
        assert!(SubnetPool::parse("10.0.0.0/30").is_none());
    }
}
