/**
 * The live real-agent harness: `deno task agents [--agent NAME] [--variant NAME] [--record]`.
 *
 * Outside a network namespace it installs the pinned clients from npm (the
 * one thing reached over the network), then runs itself again inside a new
 * namespace that has only loopback. Inside, for each scenario variant: a
 * fresh server over a temporary data directory, an organization with keys,
 * the OTLP recorders in front of the HTTP and gRPC ingest listeners, the client run against
 * its scripted mock model, and a field-by-field comparison of the API's view
 * with the scenario's expectations. Any difference exits non-zero.
 * `--record` writes each run's requests under `tests/fixtures/agents/real/`.
 * `--latest` runs the same scenarios against the newest version npm serves
 * today instead of the pinned one (resolved and installed outside the
 * namespace), expecting the same view but for the reported `agent_version`:
 * a client release that changes what the server shows fails on the day it
 * ships.
 *
 * @module
 */
import { join } from "node:path";
import { parseArgs } from "node:util";
import { handleHelp, parseOrExit } from "../_script_args.ts";
import { resolveServeConfig } from "../../src/config.ts";
import { startServer } from "../../src/server/server.ts";
import { openKeyStoreFor } from "../../src/store/open_stores.ts";
import { REAL_FIXTURES, writeRecording } from "./_fixtures.ts";
import { installAgent, installDir } from "./_install.ts";
import { assertLoopbackOnly, runInLoopbackNamespace } from "./_netns.ts";
import { startGrpcRecorder } from "./_grpc_recorder.ts";
import { startRecorder } from "./_recorder.ts";
import type { AgentScenario, ExpectedRun, Variant } from "./_scenario.ts";
import { settledDifferences } from "./_wait.ts";
import { SCENARIOS } from "./scenarios.ts";

/** Set in the environment of the copy of this script that runs inside the namespace. */
const INSIDE_MARKER = "AGENT_TELEMETRY_HARNESS_NAMESPACE";
/** The versions `--latest` resolved outside, as JSON `{ package: version }`, for the copy inside. */
const VERSIONS_VARIABLE = "AGENT_TELEMETRY_HARNESS_VERSIONS";

/** The outcome of one scenario variant. */
interface RunResult {
  label: string;
  problems: string[];
}

function say(line: string): void {
  // deno-lint-ignore no-console
  console.log(line);
}

function selectRuns(
  agent: string | undefined,
  variant: string | undefined,
): { scenario: AgentScenario; variant: Variant }[] {
  const scenarios = SCENARIOS.filter((s) => agent === undefined || s.agent === agent);
  if (scenarios.length === 0) {
    throw new Error(
      `No scenario named ${JSON.stringify(agent)} (known: ${
        SCENARIOS.map((s) => s.agent).join(", ")
      })`,
    );
  }
  const runs = scenarios.flatMap((scenario) =>
    scenario.variants.filter((v) => variant === undefined || v.name === variant).map((v) => ({
      scenario,
      variant: v,
    }))
  );
  if (runs.length === 0) throw new Error(`No variant named ${JSON.stringify(variant)}`);
  return runs;
}

/** The newest version of `npmPackage` the registry serves (outside the namespace). */
async function latestVersion(npmPackage: string): Promise<string> {
  const out = await new Deno.Command("npm", {
    args: ["view", npmPackage, "version"],
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const version = new TextDecoder().decode(out.stdout).trim();
  if (!out.success || !/^\d+\.\d+\.\d+/.test(version)) {
    throw new Error(
      `npm view ${npmPackage} version failed: ${new TextDecoder().decode(out.stderr)}`,
    );
  }
  return version;
}

/** `expected` for another client version: every `agent_version` of the pinned one becomes `version`. */
function expectedAt(expected: ExpectedRun, pinned: string, version: string): ExpectedRun {
  if (version === pinned) return expected;
  const fields = (f: Record<string, unknown>) =>
    f.agent_version === pinned ? { ...f, agent_version: version } : f;
  return {
    ...expected,
    sessions: expected.sessions.map((session) => ({
      ...session,
      fields: fields(session.fields),
      toolCalls: session.toolCalls.map((call) => ({ ...call, fields: fields(call.fields) })),
    })),
  };
}

/** Runs one variant of one scenario against a fresh server; returns its differences. */
async function runOne(
  scenario: AgentScenario,
  variant: Variant,
  record: boolean,
  version = scenario.version,
): Promise<RunResult> {
  const label = `${scenario.agent}-${version} ${variant.name}`;
  const dataDir = await Deno.makeTempDir({ prefix: "agent-harness-data-" });
  const workDir = await Deno.makeTempDir({ prefix: "agent-harness-work-" });
  const server = await startServer(
    resolveServeConfig({
      data: dataDir,
      listen: "127.0.0.1:0",
      ingestListen: "127.0.0.1:0",
      grpcListen: "127.0.0.1:0",
      logLevel: "warn",
    }, () => undefined),
    { quiet: true },
  );
  try {
    const keys = await openKeyStoreFor(dataDir, null);
    let apiKey: string;
    let ingestKey: string;
    try {
      const org = await keys.createOrg("Harness");
      const member = await keys.addMember(org.id, "harness@example.test");
      apiKey = (await keys.createKey(org.id, member.id, "harness")).key;
      ingestKey = (await keys.createActor(org.id, scenario.agent)).ingest_key;
    } finally {
      await keys.close();
    }
    await using recorder = await startRecorder(server.ingestUrl);
    if (server.grpcUrl === null) throw new Error("The server runs no gRPC listener");
    await using grpcRecorder = await startGrpcRecorder(server.grpcUrl, server.ingestUrl);
    const started = performance.now();
    await scenario.run({
      otlpHttpUrl: recorder.url,
      otlpGrpcUrl: grpcRecorder.address,
      authorization: `Bearer ${ingestKey}`,
      workDir,
      installDir: installDir(scenario.npmPackage, version),
      variant,
    });
    // A variant exports over one transport, so the two lists do not interleave.
    const requests = [...recorder.requests, ...grpcRecorder.requests];
    say(
      `${label}: client done in ${
        Math.round(performance.now() - started)
      } ms, ${requests.length} OTLP requests (${
        summarize(requests.map((r) => `${r.path} ${r.status}`))
      })`,
    );
    const problems = await settledDifferences(
      server.queryUrl,
      apiKey,
      expectedAt(scenario.expected(variant), scenario.version, version),
    );
    // Telemetry that bypassed the recorders would match here and replay as nothing.
    if (requests.length === 0) problems.push("no OTLP request went through the recorders");
    const refused = requests.filter((r) => r.status !== 200);
    for (const request of refused) {
      problems.push(`ingest answered ${request.status} to ${request.path}`);
    }
    if (record) {
      const dir = join(REAL_FIXTURES, `${scenario.agent}-${version}`, variant.name);
      await writeRecording(dir, requests);
      say(`${label}: recorded ${requests.length} requests in ${dir}`);
    }
    return { label, problems };
  } finally {
    await server.close();
    await Deno.remove(dataDir, { recursive: true }).catch(() => {});
    await Deno.remove(workDir, { recursive: true }).catch(() => {});
  }
}

function summarize(items: string[]): string {
  const counts = new Map<string, number>();
  for (const item of items) counts.set(item, (counts.get(item) ?? 0) + 1);
  return [...counts].map(([item, n]) => `${n}× ${item}`).join(", ");
}

const USAGE = `deno task agents [--agent NAME] [--variant NAME] [--record] [--latest]
Runs the real agent CLIs (pinned, from npm; --latest: the newest npm serves) against scripted
models and a real server in a loopback-only network namespace, and compares the API's view field
by field. --record rewrites tests/fixtures/agents/real/. Scenarios: ${
  [...new Set(SCENARIOS.map((s) => s.agent))].join(", ")
}.`;

async function main(args: string[]): Promise<number> {
  handleHelp(USAGE, args);
  const { values } = parseOrExit(USAGE, () =>
    parseArgs({
      args,
      options: {
        agent: { type: "string" },
        variant: { type: "string" },
        record: { type: "boolean", default: false },
        latest: { type: "boolean", default: false },
      },
      strict: true,
    }));
  let runs = selectRuns(values.agent, values.variant);
  if (values.latest) {
    // A scenario registered at several recorded releases runs once at the newest.
    const seen = new Set<string>();
    runs = runs.filter(({ scenario, variant }) => {
      const key = `${scenario.agent}\u0000${variant.name}`;
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    });
  }
  if (Deno.env.get(INSIDE_MARKER) !== "1") {
    const versions: Record<string, string> = {};
    const installed = new Set<string>();
    for (const scenario of new Set(runs.map((r) => r.scenario))) {
      const version = values.latest
        ? versions[scenario.npmPackage] ??= await latestVersion(scenario.npmPackage)
        : scenario.version;
      if (installed.has(`${scenario.npmPackage}@${version}`)) continue;
      installed.add(`${scenario.npmPackage}@${version}`);
      say(
        `installing ${scenario.npmPackage}@${version}${
          version === scenario.version ? "" : ` (pinned: ${scenario.version})`
        }`,
      );
      await installAgent(scenario.npmPackage, version);
    }
    Deno.env.set(VERSIONS_VARIABLE, JSON.stringify(versions));
    Deno.env.set(INSIDE_MARKER, "1");
    return await runInLoopbackNamespace([
      Deno.execPath(),
      "run",
      "--allow-all",
      new URL(import.meta.url).pathname,
      ...args,
    ]);
  }
  assertLoopbackOnly();
  const latest = JSON.parse(Deno.env.get(VERSIONS_VARIABLE) ?? "{}") as Record<string, string>;
  const results: RunResult[] = [];
  for (const { scenario, variant } of runs) {
    const version = values.latest
      ? latest[scenario.npmPackage] ?? scenario.version
      : scenario.version;
    try {
      results.push(await runOne(scenario, variant, values.record, version));
    } catch (error) {
      results.push({
        label: `${scenario.agent}-${version} ${variant.name}`,
        problems: [`run failed: ${error instanceof Error ? error.stack : String(error)}`],
      });
    }
  }
  let failed = 0;
  for (const { label, problems } of results) {
    if (problems.length === 0) {
      say(`MATCH   ${label}`);
    } else {
      failed++;
      say(`DIFFERS ${label}: ${problems.length} difference(s)`);
      for (const problem of problems) say(`  - ${problem}`);
    }
  }
  say(`${results.length - failed} of ${results.length} runs match`);
  return failed === 0 ? 0 : 1;
}

if (import.meta.main) {
  Deno.exit(await main(Deno.args));
}
