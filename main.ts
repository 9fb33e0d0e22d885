/**
 * Agent Telemetry: receives coding agents' OpenTelemetry and serves a
 * read-only query API over it. Entry point of `deno task cli` and of the
 * compiled `agent-telemetry` binary.
 *
 * @module
 */
import { runCli } from "./src/cli/mod.ts";

if (import.meta.main) {
  Deno.exit(await runCli(Deno.args));
}
