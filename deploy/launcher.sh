#!/bin/sh
# bin/agent-telemetry of a release (scripts/release.ts): runs the program in ../app with the Deno
# runtime in ../runtime and the npm packages vendored in ../app/node_modules. Nothing is fetched:
# no registry, no remote modules, no update check; a lockfile that would change is an error.
set -eu
self=$(readlink -f "$0")
root=$(dirname "$(dirname "$self")")
# Deno keeps only its transpile cache in DENO_DIR (default ~/.cache/deno); an unwritable one is
# tolerated. The systemd unit points it at /var/cache/agent-telemetry. The V8 flags keep the heaps
# small (src/memory_budget.ts, SERVER_V8_FLAGS).
export DENO_NO_UPDATE_CHECK=1 DENO_NO_PROMPT=1
exec "$root/runtime/deno" run \
  --cached-only --frozen --no-remote \
  --config "$root/app/deno.json" \
  --allow-read --allow-write --allow-net --allow-env --allow-ffi --allow-sys \
  --v8-flags=--max-semi-space-size=4,--initial-old-space-size=32,--heap-growing-percent=100 \
  "$root/app/main.ts" "$@"
