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
# A HOME of their own, removed afterwards: nothing in the user's home is read (their Codex and
# Claude logins, their shell profile) or written, and a login shell that a test kills (Codex runs
# commands in `bash -lc`) cannot leave a lock behind in it (a stale pyenv rehash lock in the real
# home made every later login shell wait 60 s).
test_home=$(mktemp -d -t planbridge-home-XXXXXX)
trap 'rm -rf "$test_home"' EXIT
# As real root, a network namespace alone (`-n`): the PostgreSQL tests run initdb and pg_ctl as
# the unprivileged `postgres` user (`runuser`), which a user namespace mapping only root (`-r`)
# cannot switch to. Anyone else gets the user namespace that lets them create the network one.
if [ "$(id -u)" = "0" ]; then namespaces=(-n); else namespaces=(-rn); fi
HOME="$test_home" unshare "${namespaces[@]}" -- bash -c 'ip link set lo up && exec "$@"' bash "$@"
