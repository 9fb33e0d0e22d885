/**
 * `demo`: a demo organization with synthetic telemetry sent through the real
 * ingest path, then served until SIGINT/SIGTERM.
 *
 * @module
 */
import { generateExports } from "../../scripts/gen.ts";
import { resolveServeConfig } from "../config.ts";
import { startServer } from "../http/server.ts";
import { announce, log } from "../log.ts";
import { openKeyStoreFor } from "../store/open_stores.ts";
import { serveFlags, serveFlagSpec, waitForSignal } from "./serve.ts";
import { parseFlags, UsageError } from "./usage.ts";

function count(value: string | undefined, flag: string, fallback: number, max: number): number {
  if (value === undefined) return fallback;
  const number = Number(value);
  if (!Number.isInteger(number) || number < 1 || number > max) {
    throw new UsageError(`Invalid --${flag}: "${value}" (expected an integer from 1 to ${max})`);
  }
  return number;
}

/** Runs the demo: seed, serve, print a key and example requests. */
export async function runDemo(args: string[]): Promise<void> {
  const flags = parseFlags(args, {
    ...serveFlagSpec,
    actors: { type: "string" },
    days: { type: "string" },
  });
  const actors = count(flags.actors, "actors", 5, 1000);
  const days = count(flags.days, "days", 30, 400);
  const config = resolveServeConfig(serveFlags(flags));
  const server = await startServer(config);
  try {
    const store = await openKeyStoreFor(config.dataDir, config.database);
    let apiKey: string;
    let ingestKeys: string[];
    try {
      const org = await store.createOrg("Demo");
      const member = await store.addMember(org.id, "demo@example.com");
      apiKey = (await store.createKey(org.id, member.id, "demo")).key;
      ingestKeys = [];
      for (let i = 0; i < actors; i++) {
        ingestKeys.push((await store.createActor(org.id, `demo-actor-${i + 1}`)).ingest_key);
      }
    } finally {
      await store.close();
    }
    let toolCalls = 0;
    for (const batch of generateExports({ actors, days, seed: 42, now: new Date() })) {
      const response = await fetch(`${server.ingestUrl}/v1/logs`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          authorization: `Bearer ${ingestKeys[batch.actor]}`,
        },
        body: JSON.stringify(batch.body),
      });
      if (!response.ok) throw new Error(`Demo ingest failed: ${response.status}`);
      await response.body?.cancel();
      toolCalls += batch.toolCalls;
    }
    log("info", "demo telemetry ingested", { actors, days, tool_calls: toolCalls });
    const base = server.queryUrl;
    announce(`Demo API key: ${apiKey}`);
    announce(`  curl -s -H "Authorization: Bearer ${apiKey}" ${base}/v1/sessions?limit=5`);
    announce(`  curl -s -H "Authorization: Bearer ${apiKey}" ${base}/v1/tool-calls?outcome=error`);
    announce(
      `  curl -s -H "Authorization: Bearer ${apiKey}" ${base}/v1/insights/top-tools?window=30d`,
    );
    announce("Press Ctrl-C to stop.");
    await waitForSignal();
  } finally {
    await server.close();
  }
}
