/**
 * A small known data set loaded through the real ingest path: three sessions
 * over two actors with ok, error and rejected calls, an MCP tool, a web fetch
 * and a curl command, and model calls with and without cost.
 *
 * @module
 */
import assert from "node:assert/strict";
import type { TestOrg, TestServer } from "./_harness.ts";
import { apiRequest, claudeExport, toolDecision, toolResult } from "./_otlp.ts";
import { type Clock, clockFrom } from "../src/time.ts";

const HOUR = 3_600_000;
const DAY = 86_400_000;

/**
 * Base time of the scenario: the start of the hour a day before the suite
 * started, so that its data (T0 to T0 + 99 s, never across a UTC midnight)
 * sits inside every insight window ending now, on whatever day the suite runs.
 */
export const T0 = Math.floor(Date.now() / HOUR) * HOUR - DAY;

/**
 * The day the hand-written agent fixtures (`tests/fixtures/agents/*.json`) and
 * some fixed-date tests stamp their records with: 2026-11-20T10:00:00.000Z.
 */
export const FIXTURE_T0 = Date.UTC(2026, 10, 20, 10, 0, 0);

/**
 * The server clock of a test whose data sits at {@link FIXTURE_T0}: it reads a
 * day after it and runs on, so insight windows ending "now" hold the data and
 * the server's own retention pass keeps it, whatever day the suite runs.
 */
export function fixtureClock(): Clock {
  return clockFrom(FIXTURE_T0 + DAY);
}

/** What the scenario loaded. */
export interface Scenario {
  org: TestOrg;
  actorB: { actorId: string; ingestKey: string };
}

/** Loads the scenario for a new organization. */
export async function loadScenario(server: TestServer, name = "Acme"): Promise<Scenario> {
  const org = await server.createOrg(name);
  const store = await server.keyStore();
  const actor = await store.createActor(org.orgId, "second");
  await store.close();
  const actorB = { actorId: actor.actor_id, ingestKey: actor.ingest_key };
  await send(server, org.ingestKey, [
    toolResult({
      session: "s1",
      id: "toolu_1",
      tool: "Bash",
      timeMs: T0,
      durationMs: 120,
      input: { command: "npm test" },
    }),
    toolResult({
      session: "s1",
      id: "toolu_2",
      tool: "Read",
      timeMs: T0 + 1000,
      success: false,
      error: "ENOENT: no such file",
      input: { file_path: "/repo/missing.ts" },
    }),
    toolResult({
      session: "s1",
      id: "toolu_3",
      tool: "WebFetch",
      timeMs: T0 + 2000,
      durationMs: 300,
      input: { url: "https://docs.example.com/guide", prompt: "summarize" },
    }),
    apiRequest({
      session: "s1",
      timeMs: T0 + 500,
      model: "claude-sonnet-4-5",
      costUsd: 0.5,
      requestId: "r1",
    }),
  ]);
  await send(server, actorB.ingestKey, [
    toolDecision({
      session: "s2",
      id: "toolu_4",
      tool: "Edit",
      timeMs: T0 + 10_000,
      decision: "reject",
    }),
    toolResult({
      session: "s2",
      id: "toolu_5",
      tool: "Bash",
      timeMs: T0 + 11_000,
      input: { command: "curl -sSL https://api.github.com/repos/x/y && rm -rf build" },
    }),
    apiRequest({
      session: "s2",
      timeMs: T0 + 9000,
      model: "claude-opus-4-1",
      costUsd: 0.25,
      requestId: "r2",
    }),
    apiRequest({ session: "s2", timeMs: T0 + 9500, model: "claude-opus-4-1", requestId: "r3" }),
  ]);
  await send(server, org.ingestKey, [
    toolResult({
      session: "s3",
      id: "toolu_6",
      tool: "mcp__github__create_issue",
      timeMs: T0 + 20_000,
      mcpScope: "user",
      input: { repo: "acme/app", url: "https://github.com/acme/app/issues" },
    }),
  ]);
  return { org, actorB };
}

/** Sends one Claude Code export and expects a 200. */
export async function send(server: TestServer, ingestKey: string, records: unknown[]) {
  const response = await server.ingest("/v1/logs", claudeExport(records), ingestKey);
  const text = await response.text();
  assert.equal(response.status, 200, text);
  return text;
}
