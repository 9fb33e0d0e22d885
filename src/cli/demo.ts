/**
 * `demo`: a demo organization with synthetic telemetry sent through the real
 * ingest path, then served until SIGINT/SIGTERM. A rerun on the same
 * directory reuses its "Demo" organization and data, and prints a new API key
 * (keys are stored as hashes only, so earlier ones cannot be shown again).
 *
 * @module
 */
import { generateExports, generateMetricExports } from "../demo/mod.ts";
import { resolveServeConfig } from "../config.ts";
import { startServer } from "../server/server.ts";
import { announce, log } from "../log.ts";
import { openKeyStoreFor } from "../store/open_stores.ts";
import type { KeyStoreApi } from "../store/stores.ts";
import type { ParsedFlags } from "./flags.ts";
import { serveFlags, waitForSignal } from "./serve.ts";
import { UsageError } from "./usage.ts";

/** Name of the demo's organization: found again on a rerun. */
export const DEMO_ORG = "Demo";
const DEMO_MEMBER = "demo@example.com";

/** The demo's API key and, on a first run, the ingest keys of new actors to send with. */
interface DemoSetup {
  apiKey: string;
  /** Empty when the organization already had actors: its data is served as it is. */
  ingestKeys: string[];
}

function count(flags: ParsedFlags, name: string, what: string, max: number): number {
  const value = flags.text(name)!;
  const number = value.trim() === "" ? NaN : Number(value);
  if (!Number.isInteger(number) || number < 1 || number > max) {
    throw new UsageError(
      `Invalid ${what}: ${JSON.stringify(value)} from ${
        flags.source(name)
      } (expected a whole number from 1 to ${max})`,
    );
  }
  return number;
}

/** Runs the demo: seed (first run only), serve, print a key and example requests. */
export async function runDemo(flags: ParsedFlags): Promise<void> {
  const actors = count(flags, "actors", "actor count", 1000);
  const days = count(flags, "days", "day count", 400);
  const config = resolveServeConfig({ ...serveFlags(flags.given), data: flags.text("data") });
  const server = await startServer(config, { quiet: true });
  try {
    const store = await openKeyStoreFor(config.dataDir, config.database);
    let setup: DemoSetup;
    try {
      setup = await setUpDemo(store, actors);
    } finally {
      await store.close();
    }
    // The key and the dashboard first, so that a newcomer sees them before anything else (the
    // data follows within seconds; the dashboard shows it as it lands).
    const base = server.queryUrl;
    announce(`Demo API key: ${setup.apiKey}`);
    announce(`Dashboard: ${base}/ui/ (paste the key above when it asks)`);
    announce(`query API listening on ${base}`);
    if (server.grpcUrl) announce(`OTLP/gRPC ingest listening on ${server.grpcUrl}`);
    announce(`OTLP ingest listening on ${server.ingestUrl}`);
    if (setup.ingestKeys.length === 0) {
      log("info", "demo organization found: serving its data as it is", {
        data: config.dataDir,
        hint: "remove the data directory for a fresh demo",
      });
    } else {
      await sendDemoTelemetry(server.ingestUrl, setup.ingestKeys, days);
    }
    announce(`  curl -s -H "Authorization: Bearer ${setup.apiKey}" ${base}/v1/sessions?limit=5`);
    announce(
      `  curl -s -H "Authorization: Bearer ${setup.apiKey}" ${base}/v1/tool-calls?outcome=error`,
    );
    announce(
      `  curl -s -H "Authorization: Bearer ${setup.apiKey}" ${base}/v1/insights/top-tools?window=30d`,
    );
    announce("Press Ctrl-C to stop.");
    await waitForSignal();
  } finally {
    await server.close();
  }
}

/**
 * The "Demo" organization, its member and a new API key; actors with ingest
 * keys only when the organization has none yet (a first run).
 */
async function setUpDemo(store: KeyStoreApi, actors: number): Promise<DemoSetup> {
  const existing = (await store.listOrgs()).orgs.find((org) => org.name === DEMO_ORG);
  const org = existing ?? await store.createOrg(DEMO_ORG);
  const members = existing ? (await store.listMembers(org.id)).members : [];
  const member = members.find((row) => row.email === DEMO_MEMBER) ??
    await store.addMember(org.id, DEMO_MEMBER);
  const apiKey = (await store.createKey(org.id, member.id, "demo")).key;
  const hasActors = existing !== undefined && (await store.listActors(org.id)).actors.length > 0;
  const ingestKeys: string[] = [];
  if (!hasActors) {
    for (let i = 0; i < actors; i++) {
      ingestKeys.push((await store.createActor(org.id, `demo-actor-${i + 1}`)).ingest_key);
    }
  }
  return { apiKey, ingestKeys };
}

async function sendDemoTelemetry(ingestUrl: string, ingestKeys: string[], days: number) {
  const actors = ingestKeys.length;
  const send = async (path: string, actor: number, body: unknown) => {
    const response = await fetch(`${ingestUrl}${path}`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        authorization: `Bearer ${ingestKeys[actor]}`,
      },
      body: JSON.stringify(body),
    });
    if (!response.ok) throw new Error(`Demo ingest failed: ${path} ${response.status}`);
    await response.body?.cancel();
  };
  let toolCalls = 0;
  for (const batch of generateExports({ actors, days, seed: 42, now: new Date() })) {
    await send("/v1/logs", batch.actor, batch.body);
    toolCalls += batch.toolCalls;
  }
  // Claude Code's productivity metrics too, so that every dashboard panel has figures.
  let points = 0;
  for (const metrics of generateMetricExports({ actors, days, seed: 42, now: new Date() })) {
    await send("/v1/metrics", metrics.actor, metrics.body);
    points++;
  }
  log("info", "demo telemetry ingested", {
    actors,
    days,
    tool_calls: toolCalls,
    metric_exports: points,
  });
}
