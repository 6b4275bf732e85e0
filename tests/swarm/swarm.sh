#!/usr/bin/env bash
# A real 3-node Docker Swarm on one machine, for the swarm backend's tests (docs/ENGINE.md §4b):
# three extra dockerd (Debian's docker.io), each in its own network namespace with its own
# hostname, data root and unix socket, joined by veth pairs to a bridge in a "hub" namespace
# that also runs Debian's docker-registry (plain HTTP on :5000). The host joins the hub's
# bridge through one more veth pair, and multicooker reaches every node's engine over TCP
# (:2375) through that bridge, as on a real cluster: cutting a node's link cuts the manager's
# path to it and multicooker's too. The unix sockets stay for the test's own observations.
# The host's own engine and its state are never touched.
#
#   swarm.sh up   DIR   start everything; writes DIR/env (engine addresses, registry)
#   swarm.sh down DIR   stop everything started from DIR (safe to run twice, and on a half-up)
#   swarm.sh cut  DIR NODE   take a node's link down (a partition);  swarm.sh heal DIR NODE
#   swarm.sh kill DIR NODE   kill a node's dockerd (SIGKILL);  swarm.sh revive DIR NODE
#
# Needs root, iproute2, nsenter/unshare, dockerd; fetches docker-registry's .deb once (cached in
# ~/.cache/multicooker/swarm). Every name carries a tag derived from DIR, so two runs never
# collide.
set -euo pipefail

cmd=${1:?usage: swarm.sh up|down|cut|heal|kill|revive DIR [NODE]}
dir=${2:?usage: swarm.sh up|down|cut|heal|kill|revive DIR [NODE]}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
tag=$(printf '%s' "$dir" | sha256sum | cut -c1-6)
nodes=(n1 n2 n3)
ns() { echo "mcs$tag-$1"; }
cache=${MC_SWARM_CACHE:-$HOME/.cache/multicooker/swarm}
# A /24 per run from 10.77.x.0, derived from the tag, so parallel runs differ.
net="10.77.$(( 16#${tag:0:2} )).0"
prefix=${net%.0}
hub_ip="$prefix.1"
# The host's own address on the hub's bridge.
host_ip="$prefix.254"

log() { echo "[swarm $tag] $*" >&2; }

registry_binary() {
  local bin="$cache/docker-registry/usr/bin/docker-registry"
  if [ ! -x "$bin" ]; then
    mkdir -p "$cache"
    (cd "$cache" && apt-get download docker-registry >/dev/null 2>&1) \
      || { apt-get update -qq >/dev/null 2>&1 && (cd "$cache" && apt-get download docker-registry >/dev/null); }
    dpkg-deb -x "$cache"/docker-registry_*.deb "$cache/docker-registry"
  fi
  echo "$bin"
}

# Starts (or restarts) a node's dockerd in its namespace, with its hostname.
start_engine() {
  local home="$dir/$1"
  nsenter --net="/run/netns/$(ns "$1")" unshare --uts setsid sh -c \
    "hostname $1; exec dockerd --config-file $home/daemon.json" \
    >> "$home/dockerd.log" 2>&1 < /dev/null &
  echo $! > "$home/launcher.pid"
}

wait_engine() {
  local sock="$dir/$1/docker.sock"
  for _ in $(seq 1 300); do
    DOCKER_HOST="unix://$sock" docker info >/dev/null 2>&1 && return 0
    sleep 0.1
  done
  log "$1 did not start"; tail -20 "$dir/$1/dockerd.log" >&2; return 1
}

up() {
  [ -f "$dir/env" ] && { log "already up"; return; }
  local reg; reg=$(registry_binary)
  ip netns add "$(ns hub)"
  ip -n "$(ns hub)" link set lo up
  ip -n "$(ns hub)" link add br0 type bridge
  ip -n "$(ns hub)" addr add "$hub_ip/24" dev br0
  ip -n "$(ns hub)" link set br0 up
  # The host's leg on the bridge: multicooker reaches the nodes' engines through it.
  ip link add "mcs${tag}h" type veth peer name "mcs${tag}hb" netns "$(ns hub)"
  ip -n "$(ns hub)" link set "mcs${tag}hb" master br0 up
  ip addr add "$host_ip/24" dev "mcs${tag}h"
  ip link set "mcs${tag}h" up
  local i=10
  for node in "${nodes[@]}"; do
    i=$((i + 1))
    ip netns add "$(ns "$node")"
    ip -n "$(ns "$node")" link set lo up
    ip link add "mcs$tag$node" type veth peer name eth0 netns "$(ns "$node")"
    ip link set "mcs$tag$node" netns "$(ns hub)"
    ip -n "$(ns hub)" link set "mcs$tag$node" master br0 up
    ip -n "$(ns "$node")" addr add "$prefix.$i/24" dev eth0
    ip -n "$(ns "$node")" link set eth0 up
    ip -n "$(ns "$node")" route add default via "$hub_ip"
    echo "$prefix.$i" > "$dir/$node.ip"
  done
  # The registry, in the hub namespace.
  mkdir -p "$dir/registry/data"
  cat > "$dir/registry/config.yml" <<EOF
version: 0.1
storage:
  filesystem:
    rootdirectory: $dir/registry/data
  delete:
    enabled: true
http:
  addr: $hub_ip:5000
EOF
  nsenter --net="/run/netns/$(ns hub)" setsid "$reg" serve "$dir/registry/config.yml" \
    > "$dir/registry/log" 2>&1 < /dev/null &
  echo $! > "$dir/registry.pid"
  # One dockerd per node.
  for node in "${nodes[@]}"; do
    local home="$dir/$node"
    mkdir -p "$home/data" "$home/exec"
    cat > "$home/daemon.json" <<EOF
{
  "data-root": "$home/data",
  "exec-root": "$home/exec",
  "pidfile": "$home/docker.pid",
  "hosts": ["unix://$home/docker.sock", "tcp://$(cat "$dir/$node.ip"):2375"],
  "storage-driver": "overlay2",
  "cgroup-parent": "/mcs$tag-$node",
  "insecure-registries": ["$hub_ip:5000"],
  "log-driver": "json-file",
  "log-opts": {"max-size": "10m", "max-file": "2"}
}
EOF
    start_engine "$node"
  done
  for node in "${nodes[@]}"; do wait_engine "$node"; done
  for _ in $(seq 1 100); do
    nsenter --net="/run/netns/$(ns hub)" sh -c "exec 3<>/dev/tcp/$hub_ip/5000" 2>/dev/null && break
    sleep 0.1
  done
  local n1_ip; n1_ip=$(cat "$dir/n1.ip")
  DOCKER_HOST="unix://$dir/n1/docker.sock" docker swarm init \
    --advertise-addr "$n1_ip" --listen-addr "$n1_ip:2377" >/dev/null
  local token; token=$(DOCKER_HOST="unix://$dir/n1/docker.sock" docker swarm join-token -q worker)
  # Wait only on the joins (a bare `wait` would wait for the daemons forever).
  local joins=()
  for node in n2 n3; do
    DOCKER_HOST="unix://$dir/$node/docker.sock" docker swarm join --token "$token" "$n1_ip:2377" >/dev/null &
    joins+=($!)
  done
  for p in "${joins[@]}"; do wait "$p"; done
  for _ in $(seq 1 200); do
    ready=$(DOCKER_HOST="unix://$dir/n1/docker.sock" docker node ls --format '{{.Status}}' | grep -c Ready || true)
    [ "$ready" = 3 ] && break
    sleep 0.1
  done
  cat > "$dir/env" <<EOF
MULTICOOKER_SWARM_MANAGER=tcp://$(cat "$dir/n1.ip"):2375
MULTICOOKER_SWARM_NODES=n1=tcp://$(cat "$dir/n1.ip"):2375,n2=tcp://$(cat "$dir/n2.ip"):2375,n3=tcp://$(cat "$dir/n3.ip"):2375
MULTICOOKER_SWARM_REGISTRY=$hub_ip:5000
EOF
  log "up: 3 nodes Ready, registry $hub_ip:5000"
}

down() {
  for node in "${nodes[@]}"; do
    local sock="$dir/$node/docker.sock"
    [ -S "$sock" ] && DOCKER_HOST="unix://$sock" timeout 10 docker swarm leave --force >/dev/null 2>&1 || true
  done
  for node in "${nodes[@]}"; do
    for f in "$dir/$node/docker.pid" "$dir/$node/launcher.pid"; do
      [ -f "$f" ] && kill -TERM "$(cat "$f")" 2>/dev/null || true
    done
  done
  [ -f "$dir/registry.pid" ] && kill -TERM "$(cat "$dir/registry.pid")" 2>/dev/null || true
  for node in "${nodes[@]}"; do
    for _ in $(seq 1 100); do
      [ -f "$dir/$node/docker.pid" ] && kill -0 "$(cat "$dir/$node/docker.pid")" 2>/dev/null || break
      sleep 0.1
    done
    [ -f "$dir/$node/docker.pid" ] && kill -KILL "$(cat "$dir/$node/docker.pid")" 2>/dev/null || true
    # containerd shims of the node, by their exec root.
    pkill -KILL -f "$dir/$node/exec" 2>/dev/null || true
  done
  [ -f "$dir/registry.pid" ] && kill -KILL "$(cat "$dir/registry.pid")" 2>/dev/null || true
  # Leftover mounts under the state dir (overlay layers, netns bind mounts of the nodes).
  { grep " $dir/" /proc/mounts || true; } | awk '{print $2}' | sort -r | while read -r m; do umount -l "$m" 2>/dev/null || true; done
  ip link del "mcs${tag}h" 2>/dev/null || true
  for node in hub "${nodes[@]}"; do ip netns del "$(ns "$node")" 2>/dev/null || true; done
  for node in "${nodes[@]}"; do
    rmdir "/sys/fs/cgroup"/*/"mcs$tag-$node" 2>/dev/null || true
  done
  rm -rf "$dir"
  log "down"
}

cut_link() { ip -n "$(ns hub)" link set "mcs$tag$1" "$2"; }

# Kills a node's engine outright (its containers' shims go on, as on a crashed daemon).
kill_engine() {
  local pid; pid=$(cat "$dir/$1/docker.pid" 2>/dev/null || true)
  [ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null || true
  for _ in $(seq 1 100); do
    [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  rm -f "$dir/$1/docker.pid"
}

case "$cmd" in
  up) trap 'down' ERR; up ;;
  down) down ;;
  cut) cut_link "${3:?node}" down ;;
  heal) cut_link "${3:?node}" up ;;
  kill) kill_engine "${3:?node}" ;;
  revive) start_engine "${3:?node}"; wait_engine "$3" ;;
  *) echo "unknown command $cmd" >&2; exit 2 ;;
esac
