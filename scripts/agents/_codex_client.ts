/**
 * Running the Codex CLI (`codex exec`) for a scenario: its `[otel]` variants,
 * a scratch HOME and CODEX_HOME whose `config.toml` points it at the mock
 * Responses API (`_codex_mock.ts`) and the harness's recorder.
 *
 * @module
 */
import { join } from "node:path";
import { clientBin, type ClientRuns, type ScratchDirs, scratchDirs } from "./_client.ts";
import type { RunContext, Variant } from "./_scenario.ts";

/** The npm package of the client. */
export const CODEX_PACKAGE = "@openai/codex";
/**
 * A model in Codex's bundled catalogue, so the client offers its usual tools
 * (`exec_command` and the freeform `apply_patch`) instead of fallback ones.
 */
export const CODEX_MODEL = "gpt-5.5";
/** The custom model provider's id in `config.toml`. */
const PROVIDER = "mock";

/** `[otel]` exporter protocol per variant. */
const PROTOCOLS: Record<string, "binary" | "json"> = {
  "http-protobuf": "binary",
  "http-json": "json",
};

/** One variant per `[otel]` exporter protocol (set in `config.toml`, not the environment). */
export const CODEX_VARIANTS: Variant[] = Object.keys(PROTOCOLS).map((name) => ({ name, env: {} }));

function otelProtocol(variant: Variant): "binary" | "json" {
  const protocol = PROTOCOLS[variant.name];
  if (protocol === undefined) {
    throw new Error(`Unknown Codex variant: ${JSON.stringify(variant.name)}`);
  }
  return protocol;
}

/**
 * `config.toml`: the mock model provider at `modelUrl`, no approvals, and the
 * OTLP/HTTP exporters to the harness's recorder (metrics too unless turned off).
 */
function codexConfig(context: RunContext, modelUrl: string, metrics: boolean): string {
  const protocol = otelProtocol(context.variant);
  const q = JSON.stringify;
  // Each exporter posts to its endpoint as written: Codex appends no signal path.
  const otlpHttp = (path: string) =>
    `{ otlp-http = { endpoint = ${q(context.otlpHttpUrl + path)}, protocol = ${
      q(protocol)
    }, headers = { "Authorization" = ${q(context.authorization)} } } }`;
  return `model = ${q(CODEX_MODEL)}
model_provider = ${q(PROVIDER)}
approval_policy = "never"
sandbox_mode = "danger-full-access"

[model_providers.${PROVIDER}]
name = "Mock Responses API"
base_url = ${q(modelUrl + "/v1")}
wire_api = "responses"
env_key = "MOCK_MODEL_API_KEY"

[otel]
environment = "agents-harness"
log_user_prompt = false
exporter = ${otlpHttp("/v1/logs")}
metrics_exporter = ${metrics ? otlpHttp("/v1/metrics") : '"none"'}
`;
}

/** The scratch directories of a run: HOME, CODEX_HOME and the project Codex works in. */
export interface CodexDirs extends ScratchDirs {
  codexHome: string;
}

/**
 * Makes the run's directories and CODEX_HOME's `config.toml` for the mock
 * model at `modelUrl` (`metrics`: export metrics too; `extraConfig`: appended).
 */
export async function prepareCodex(
  context: RunContext,
  modelUrl: string,
  { metrics = true, extraConfig = "" } = {},
): Promise<CodexDirs> {
  const dirs = {
    ...await scratchDirs(context.workDir),
    codexHome: join(context.workDir, "codex-home"),
  };
  await Deno.mkdir(dirs.codexHome);
  await Deno.writeTextFile(
    join(dirs.codexHome, "config.toml"),
    codexConfig(context, modelUrl, metrics) + extraConfig,
  );
  return dirs;
}

/**
 * Runs `codex exec … <args>` in `dirs` (`--ephemeral`: no rollout kept);
 * throws the detail unless it exits 0.
 */
export async function runCodex(
  runs: ClientRuns,
  context: RunContext,
  dirs: CodexDirs,
  args: string[],
  { ephemeral = false } = {},
): Promise<void> {
  await runs.run(clientBin(context, "codex"), {
    args: [
      "exec",
      "--skip-git-repo-check",
      ...(ephemeral ? ["--ephemeral"] : []),
      "--color",
      "never",
      "--cd",
      dirs.project,
      ...args,
    ],
    cwd: dirs.project,
    env: {
      PATH: Deno.env.get("PATH") ?? "/usr/local/bin:/usr/bin:/bin",
      HOME: dirs.home,
      CODEX_HOME: dirs.codexHome,
      MOCK_MODEL_API_KEY: "sk-mock-not-a-real-key",
      LANG: "C.UTF-8",
      ...context.variant.env,
    },
  });
}
