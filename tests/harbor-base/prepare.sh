#!/usr/bin/env bash
# Builds the Debian rootfs the Harbor test tasks (tests/fixtures/harbor/) start `FROM`
# (`multicooker-test-debian:bookworm`: no registry is reachable where the suite runs), into a
# cache keyed on its packages, and prints `rootfs=<tar>` and `key=<key>` for tests/it/harbor.rs.
# Safe to run by hand. Needs root and debootstrap (installed with apt-get when missing).
set -euo pipefail

CACHE="${MULTICOOKER_HARBOR_BASE_CACHE:-${HOME}/.cache/multicooker/harbor-base}"
PACKAGES="python3,python3-pytest"
SUITE=bookworm
MIRROR="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"

key="$(printf '%s %s %s' "${SUITE}" "${PACKAGES}" "${MIRROR}" | sha256sum | cut -c1-12)"
rootfs="${CACHE}/rootfs-${key}.tar"
if [ ! -f "${rootfs}" ]; then
  [ "$(id -u)" = 0 ] || { echo "debootstrap needs root (run the suite as root, as CI does)" >&2; exit 3; }
  if ! command -v debootstrap >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1; then
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap; } >&2
  fi
  command -v debootstrap >/dev/null 2>&1 || { echo "missing \`debootstrap\`: apt-get install -y debootstrap" >&2; exit 3; }
  mkdir -p "${CACHE}"
  work="$(mktemp -d "${CACHE}/debootstrap.XXXXXX")"
  trap 'rm -rf "${work}"' EXIT
  debootstrap --variant=minbase --include="${PACKAGES}" "${SUITE}" "${work}/root" "${MIRROR}" >&2
  rm -rf "${work}/root/var/cache/apt/archives/"*.deb "${work}/root/var/lib/apt/lists/"*
  tar --numeric-owner -C "${work}/root" -cf "${rootfs}.tmp" .
  mv "${rootfs}.tmp" "${rootfs}"
fi
echo "rootfs=${rootfs}"
echo "key=${key}"
