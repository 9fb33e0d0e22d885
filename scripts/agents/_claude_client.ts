/**
 * Running Claude Code (`claude -p`) for a scenario: the OTLP variants, the
 * environment that points it at the mock Messages API (`_claude_mock.ts`) and
 * the harness's recorder, and its scratch HOME.
 *
 * @module
 */
import { join } from "node:path";
import { clientBin, type ClientRuns, type ScratchDirs, scratchDirs } from "./_client.ts";
import type { RunContext, Variant } from "./_scenario.ts";

/** The npm package of the client. */
export const CLAUDE_PACKAGE = "@anthropic-ai/claude-code";
/** The model the client is told to use; its price is in Claude Code's own table. */
export const CLAUDE_MODEL = "claude-sonnet-4-5-20250929";

const PROTOBUF = { OTEL_EXPORTER_OTLP_PROTOCOL: "http/protobuf" };
/** The beta traces on. */
const TRACES = { CLAUDE_CODE_ENHANCED_TELEMETRY_BETA: "1", OTEL_TRACES_EXPORTER: "otlp" };
const HTTP_JSON: Variant = { name: "http-json", env: { OTEL_EXPORTER_OTLP_PROTOCOL: "http/json" } };
const HTTP_PROTOBUF_TRACES: Variant = {
  name: "http-protobuf-traces",
  env: { ...PROTOBUF, ...TRACES },
};

/** JSON logs and metrics, and protobuf with the beta traces on. */
export const JSON_AND_TRACES_VARIANTS: Variant[] = [HTTP_JSON, HTTP_PROTOBUF_TRACES];

/** Protobuf, JSON, gzip, protobuf with the beta traces on, and gRPC with traces. */
export const ALL_VARIANTS: Variant[] = [
  { name: "http-protobuf", env: PROTOBUF },
  HTTP_JSON,
  { name: "http-protobuf-gzip", env: { ...PROTOBUF, OTEL_EXPORTER_OTLP_COMPRESSION: "gzip" } },
  HTTP_PROTOBUF_TRACES,
  { name: "grpc-traces", env: { OTEL_EXPORTER_OTLP_PROTOCOL: "grpc", ...TRACES } },
];

/** Environment that keeps the client from reaching anything but the mock and the recorder. */
function claudeEnv(context: RunContext, home: string, modelUrl: string): Record<string, string> {
  return {
    PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
    HOME: home,
    TERM: "dumb",
    ANTHROPIC_BASE_URL: modelUrl,
    ANTHROPIC_API_KEY: "sk-ant-harness-made-up-key-not-real",
    DISABLE_AUTOUPDATER: "1",
    DISABLE_ERROR_REPORTING: "1",
    DISABLE_TELEMETRY: "1",
    CLAUDE_CODE_ENABLE_TELEMETRY: "1",
    OTEL_LOGS_EXPORTER: "otlp",
    OTEL_METRICS_EXPORTER: "otlp",
    OTEL_EXPORTER_OTLP_ENDPOINT: context.variant.env.OTEL_EXPORTER_OTLP_PROTOCOL === "grpc"
      ? `http://${context.otlpGrpcUrl}`
      : context.otlpHttpUrl,
    OTEL_EXPORTER_OTLP_HEADERS: `Authorization=${context.authorization}`,
    OTEL_LOG_TOOL_DETAILS: "1",
    OTEL_LOGS_EXPORT_INTERVAL: "1000",
    OTEL_METRIC_EXPORT_INTERVAL: "1000",
    OTEL_TRACES_EXPORT_INTERVAL: "1000",
    CLAUDE_CODE_OTEL_SHUTDOWN_TIMEOUT_MS: "10000",
    CLAUDE_CODE_OTEL_FLUSH_TIMEOUT_MS: "10000",
    ...context.variant.env,
  };
}

/** Makes the run's directories, with `settings` as the user's `~/.claude/settings.json`. */
export async function claudeDirs(workDir: string, settings: unknown): Promise<ScratchDirs> {
  const dirs = await scratchDirs(workDir);
  await Deno.mkdir(join(dirs.home, ".claude"));
  await Deno.writeTextFile(join(dirs.home, ".claude", "settings.json"), JSON.stringify(settings));
  return dirs;
}

/** The client's `--output-format json` result. */
export interface ClaudeResult {
  "session_id"?: string;
  result?: string;
}

/**
 * Runs `claude -p <prompt>` (then `args`) in `dirs` against the mock model at
 * `modelUrl`; throws the detail unless it exits 0 with `finalText` as its result.
 */
export async function runClaude(
  runs: ClientRuns,
  context: RunContext,
  dirs: ScratchDirs & { modelUrl: string },
  prompt: string,
  finalText: string,
  args: string[] = [],
): Promise<ClaudeResult> {
  const output = await runs.run(clientBin(context, "claude"), {
    args: ["-p", prompt, "--model", CLAUDE_MODEL, "--output-format", "json", ...args],
    cwd: dirs.project,
    env: claudeEnv(context, dirs.home, dirs.modelUrl),
  });
  let result: ClaudeResult = {};
  try {
    result = JSON.parse(output.stdout) as ClaudeResult;
  } catch {
    // Reported below.
  }
  if (result.result !== finalText) {
    throw runs.failure(`claude's result is not ${JSON.stringify(finalText)}`);
  }
  return result;
}
