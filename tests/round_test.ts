import assert from "node:assert/strict";
import { roundStat, roundUsd } from "../src/round.ts";
import { engineTest, startTestServer } from "./_harness.ts";
import { apiRequest, claudeExport, toolResult } from "./_otlp.ts";
import { T0 } from "./_scenario.ts";

Deno.test("served dollars are rounded to 1e-9 and statistics to 1e-6", () => {
  assert.equal(roundUsd(0.5399419499999999), 0.53994195);
  assert.equal(roundUsd(0.1 + 0.2), 0.3);
  assert.equal(roundUsd(1234.0000000004), 1234);
  assert.equal(roundUsd(0.0000000006), 0.000000001);
  assert.equal(roundStat(105.14999999999982), 105.15);
  assert.equal(roundStat(2 / 3), 0.666667);
  assert.equal(roundStat(0), 0);
  assert.equal(roundUsd(Number.MAX_VALUE), Number.MAX_VALUE, "too large to scale: unchanged");
});

engineTest("costs are served without float noise in sessions and insights", async () => {
  await using server = await startTestServer();
  const org = await server.createOrg();
  const body = claudeExport([
    toolResult({ session: "s", id: "a", tool: "Bash", timeMs: T0 }),
    apiRequest({ session: "s", timeMs: T0, model: "m", costUsd: 0.1, requestId: "r1" }),
    apiRequest({ session: "s", timeMs: T0 + 1, model: "m", costUsd: 0.2, requestId: "r2" }),
  ]);
  const sent = await server.ingest("/v1/logs", body, org.ingestKey);
  assert.equal(sent.status, 200, await sent.text());
  const detail = await server.getJson("/v1/sessions/s", org.apiKey);
  assert.equal(detail.status, 200, JSON.stringify(detail.body));
  const session = detail.body.session;
  assert.equal(session.cost_usd, 0.3);
  const cost = (await server.getJson("/v1/insights/cost?window=7d", org.apiKey)).body;
  assert.equal(cost.summary.cost_usd, 0.3);
  assert.equal(cost.breakdown[0].cost_usd, 0.3);
});
