#!/usr/bin/env bash
# Runs a command inside a fresh network namespace that has only loopback, so that no test
# (real provider programs included) can send a byte off this machine. Fails loudly when the
# namespace cannot be created rather than running outside it.
set -euo pipefail
if [ "${PLANBRIDGE_IN_NETNS:-}" = "1" ]; then exec "$@"; fi
if ! command -v unshare >/dev/null || ! command -v ip >/dev/null; then
  echo "in-loopback-netns: unshare and ip (util-linux, iproute2) are required" >&2
  exit 1
fi
export PLANBRIDGE_IN_NETNS=1
exec unshare -rn -- bash -c 'ip link set lo up && exec "$@"' bash "$@"
