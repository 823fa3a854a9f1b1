#!/usr/bin/env bash
# Every test (`npm test`), inside the loopback-only namespace (in-loopback-netns.sh wraps this).
# With arguments, only `vitest run <arguments>`.
#
# The browser scenarios held to a wall-clock bound (webClient.replay.test.ts: a replayed session
# through the web client in under 2 s) run on their own, after the rest. The suite runs a file per
# core, so on a 2-core machine they ran beside another heavy file and measured their neighbour:
# 2.1–2.5 s beside the SIGKILL chaos test, 1.4–1.6 s alone on the same tree.
set -euo pipefail
if [ "$#" -gt 0 ]; then exec vitest run "$@"; fi
timed=apps/server/test/web/webClient.replay.test.ts
vitest run --exclude "$timed"
vitest run "$timed"
