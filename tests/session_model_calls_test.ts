/**
 * `GET /v1/sessions/{id}`'s `model_calls` (issue #33, an extension): a
 * session's model requests with their tokens by kind, reported cost (null
 * when none) and duration, oldest first with ties by id, at most 5,000, and
 * only the asking organization's, though another organization has a session
 * of the same id. Loaded through the real ingest path, on both engines.
 */
import assert from "node:assert/strict";
import { engineTest, startTestServer } from "./_harness.ts";
import { apiRequest, toolResult } from "./_otlp.ts";
import { send, T0 } from "./_scenario.ts";

const iso = (ms: number) => new Date(ms).toISOString();

type ModelCall = Record<string, unknown> & { id: string; timestamp: string };

engineTest(
  "a session's model calls are listed oldest first, ties by id, with tokens by kind, cost and duration",
  async () => {
    await using server = await startTestServer();
    const a = await server.createOrg("A");
    const b = await server.createOrg("B");
    const tied = Array.from({ length: 8 }, (_, i) =>
      apiRequest({
        session: "shared",
        timeMs: T0 + 2000,
        model: "claude-haiku-4-5",
        costUsd: 0.001,
        requestId: `tie-${i}`,
      }));
    // Sent out of time order: the list's order is the time's, not the arrival's.
    await send(server, a.ingestKey, [
      toolResult({ session: "shared", id: "toolu_a", tool: "Bash", timeMs: T0 }),
      apiRequest({
        session: "shared",
        timeMs: T0 + 3000,
        model: "claude-sonnet-4-5",
        costUsd: 0.1234567891234,
        requestId: "late",
        tokens: { input: 11, output: 22, cacheRead: 33, cacheCreation: 44 },
        durationMs: 700,
      }),
      ...tied,
      apiRequest({
        session: "shared",
        timeMs: T0 + 1000,
        model: "claude-opus-4-1",
        requestId: "early",
        tokens: { input: 1, output: 2, cacheRead: 3, cacheCreation: 4 },
        durationMs: null,
      }),
      toolResult({ session: "quiet", id: "toolu_q", tool: "Read", timeMs: T0 }),
    ]);
    // Another organization, a session of the same id, a model call in between.
    await send(server, b.ingestKey, [
      toolResult({ session: "shared", id: "toolu_b", tool: "Bash", timeMs: T0 }),
      apiRequest({ session: "shared", timeMs: T0 + 1500, model: "b-model", requestId: "b" }),
    ]);

    const { status, body } = await server.getJson("/v1/sessions/shared", a.apiKey);
    assert.equal(status, 200, JSON.stringify(body));
    const calls: ModelCall[] = body.model_calls;
    assert.deepEqual(
      calls.map((call) => call.timestamp),
      [iso(T0 + 1000), ...tied.map(() => iso(T0 + 2000)), iso(T0 + 3000)],
      "oldest first, only this organization's",
    );
    const { id: earlyId, ...early } = calls[0]!;
    assert.match(earlyId, /^mc_/);
    assert.deepEqual(early, {
      timestamp: iso(T0 + 1000),
      provider_name: "anthropic",
      model: "claude-opus-4-1",
      input_tokens: 1,
      output_tokens: 2,
      cache_read_tokens: 3,
      cache_creation_tokens: 4,
      cost_usd: null,
      // Priced from the table (claude-opus-4-1: $15, $75, $1.50, $18.75 per million).
      estimated_cost_usd: 0.0002445,
      cost_source: "estimated",
      duration_ms: null,
    }, "cost and duration not reported are null, not 0");
    const { id: _, ...late } = calls.at(-1)!;
    assert.deepEqual(late, {
      timestamp: iso(T0 + 3000),
      provider_name: "anthropic",
      model: "claude-sonnet-4-5",
      input_tokens: 11,
      output_tokens: 22,
      cache_read_tokens: 33,
      cache_creation_tokens: 44,
      cost_usd: 0.123456789,
      estimated_cost_usd: null,
      cost_source: "reported",
      duration_ms: 700,
    }, "each kind of token in its field; cost rounded to 1e-9");
    const tiedIds = calls.slice(1, -1).map((call) => call.id);
    assert.deepEqual(tiedIds, [...tiedIds].sort(), "one millisecond's calls by id");
    assert.equal(new Set(calls.map((call) => call.id)).size, calls.length);

    const quiet = await server.getJson("/v1/sessions/quiet", a.apiKey);
    assert.deepEqual(quiet.body.model_calls, [], "a session without model calls has []");
    const theirs = await server.getJson("/v1/sessions/shared", b.apiKey);
    assert.deepEqual(
      theirs.body.model_calls.map((call: ModelCall) => [call.timestamp, call.model]),
      [[iso(T0 + 1500), "b-model"]],
    );
    assert.equal(theirs.body.model_calls[0].cost_source, "none", "a model the table lacks");
  },
);

engineTest("a session lists at most 5,000 model calls, the oldest", async () => {
  await using server = await startTestServer();
  const org = await server.createOrg();
  // Newest first, so that the calls kept are not simply the first stored.
  const records = Array.from({ length: 5001 }, (_, i) =>
    apiRequest({
      session: "long",
      timeMs: T0 + (5000 - i) * 10,
      model: "claude-sonnet-4-5",
      requestId: `r${i}`,
    }));
  await send(server, org.ingestKey, [
    toolResult({ session: "long", id: "toolu_1", tool: "Bash", timeMs: T0 }),
    ...records,
  ]);
  const { status, body } = await server.getJson("/v1/sessions/long", org.apiKey);
  assert.equal(status, 200);
  const times: string[] = body.model_calls.map((call: ModelCall) => call.timestamp);
  assert.equal(times.length, 5000);
  assert.equal(times[0], iso(T0));
  assert.equal(times.at(-1), iso(T0 + 4999 * 10), "the newest one is left out");
});
