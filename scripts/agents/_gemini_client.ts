/**
 * Running the Gemini CLI (`gemini -p`, non-interactive, `--approval-mode
 * yolo`) for a scenario: a scratch HOME whose `.gemini/settings.json` turns
 * telemetry on, and an environment that points it at the mock Gemini API
 * (`_gemini_mock.ts`) and the harness's recorder.
 *
 * @module
 */
import { join } from "node:path";
import { clientBin, type ClientRuns, type ScratchDirs, scratchDirs } from "./_client.ts";
import { GEMINI_MODEL, type GeminiMock } from "./_gemini_mock.ts";
import type { RunContext } from "./_scenario.ts";

/** The npm package of the client. */
export const GEMINI_PACKAGE = "@google/gemini-cli";
/** A made-up Gemini API key: the mock model accepts anything. */
const FAKE_API_KEY = "AIza-mock-not-a-real-key";
/** The project's `notes.txt`, which the scenarios read: 18 bytes. */
export const NOTES = "remember the milk\n";

/** The user's `~/.gemini/settings.json`: API-key auth, no usage statistics, telemetry on. */
export function geminiSettings(
  endpoint: string,
  protocol: "http" | "grpc",
): Record<string, unknown> {
  return {
    security: { auth: { selectedType: "gemini-api-key" } },
    privacy: { usageStatisticsEnabled: false },
    general: { enableAutoUpdate: false, enableAutoUpdateNotification: false },
    telemetry: {
      enabled: true,
      target: "local",
      otlpEndpoint: endpoint,
      otlpProtocol: protocol,
      logPrompts: true,
    },
  };
}

/** Makes the run's directories: `settings` in HOME's `.gemini/`, {@link NOTES} in the project. */
export async function geminiDirs(workDir: string, settings: unknown): Promise<ScratchDirs> {
  const dirs = await scratchDirs(workDir);
  await Deno.mkdir(join(dirs.home, ".gemini"));
  await Deno.writeTextFile(join(dirs.project, "notes.txt"), NOTES);
  await Deno.writeTextFile(
    join(dirs.home, ".gemini", "settings.json"),
    JSON.stringify(settings, null, 2),
  );
  return dirs;
}

/**
 * Runs `gemini -p` in `dirs` against `model`; throws the detail unless it
 * exits 0 having made the `responses` scripted model requests and no other.
 */
export async function runGemini(
  runs: ClientRuns,
  context: RunContext,
  dirs: ScratchDirs,
  model: GeminiMock,
  responses: number,
): Promise<void> {
  await runs.run(clientBin(context, "gemini"), {
    args: [
      "--skip-trust",
      "--model",
      GEMINI_MODEL,
      "--approval-mode",
      "yolo",
      "-p",
      "Run the scripted steps.",
    ],
    cwd: dirs.project,
    env: {
      PATH: Deno.env.get("PATH") ?? "/usr/local/bin:/usr/bin:/bin",
      HOME: dirs.home,
      GEMINI_API_KEY: FAKE_API_KEY,
      GOOGLE_GEMINI_BASE_URL: model.url,
      OTEL_EXPORTER_OTLP_HEADERS: `Authorization=${context.authorization}`,
      LANG: "C.UTF-8",
      ...context.variant.env,
    },
  });
  if (model.answered() !== responses || model.unexpected.length > 0 || model.problems.length > 0) {
    throw runs.failure(
      `Gemini CLI made ${model.answered()} scripted model requests (${responses} scripted), ${
        JSON.stringify(model.unexpected)
      } others, problems ${JSON.stringify(model.problems)}`,
    );
  }
}
