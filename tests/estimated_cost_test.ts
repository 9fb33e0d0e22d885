/**
 * Estimated cost (issue #33, docs/design.md §9): the real agents' recorded
 * runs replayed into a test server on each engine. Codex CLI and Gemini CLI
 * report no cost: each model call is estimated from the price table, and the
 * figures are checked against prices written out by hand here (not read from
 * the table). Claude Code reports its cost: it stays in `cost_usd`, nothing
 * estimated. A second organization sees none of the first's estimates.
 */
import assert from "node:assert/strict";
import { engineTest, startTestServer, type TestOrg, type TestServer } from "./_harness.ts";
import { replayRecordedJson } from "./_recorded_json.ts";

type Body = Record<string, unknown>;
type Call = {
  model: string;
  "input_tokens": number;
  "output_tokens": number;
  "cache_read_tokens": number;
  "cache_creation_tokens": number;
  "cost_usd": number | null;
  "estimated_cost_usd": number | null;
  "cost_source": string;
};

/**
 * US dollars per million tokens as the vendors' pages list them: input,
 * output, cache read, cache write.
 */
const BY_HAND: Record<string, [number, number, number, number]> = {
  "gpt-5.5": [5, 30, 0.5, 5],
  "gemini-2.5-pro": [1.25, 10, 0.125, 1.25],
};

function handPriced(call: Call): number {
  const [input, output, cacheRead, cacheWrite] = BY_HAND[call.model]!;
  return (call.input_tokens * input + call.output_tokens * output +
    call.cache_read_tokens * cacheRead + call.cache_creation_tokens * cacheWrite) / 1e6;
}

const close = (a: number, b: number, what: string) =>
  assert.ok(Math.abs(a - b) < 1e-9, `${what}: ${a} is not ${b}`);

async function get(server: TestServer, org: TestOrg, path: string): Promise<Body> {
  const { status, body } = await server.getJson(path, org.apiKey);
  assert.equal(status, 200, JSON.stringify(body));
  return body as Body;
}

/** The detail of the org's one session of `agent`. */
async function sessionOf(server: TestServer, org: TestOrg, agent: string) {
  const page = await get(server, org, "/v1/sessions?limit=500");
  const sessions = (page.data as Body[]).filter((session) =>
    String(session.agent_system).startsWith(agent)
  );
  assert.equal(sessions.length, 1, `${agent}: ${JSON.stringify(page.data)}`);
  const listed = sessions[0]!;
  const detail = await get(server, org, `/v1/sessions/${listed.session_id}`);
  return { listed, detail: detail.session as Body, calls: detail.model_calls as Call[] };
}

engineTest(
  "estimated cost: the recorded runs are priced as by hand, reported cost untouched",
  async () => {
    await using server = await startTestServer();
    const acme = await server.createOrg("Acme");
    const other = await server.createOrg("Other");
    const end = Date.now() - 60_000;
    await replayRecordedJson(server.ingestUrl, acme.ingestKey, "codex-0.169.0/http-json", end);
    await replayRecordedJson(server.ingestUrl, acme.ingestKey, "gemini-cli-0.61.0/http", end);
    await replayRecordedJson(
      server.ingestUrl,
      acme.ingestKey,
      "claude-code-2.1.330/http-json",
      end,
    );
    await replayRecordedJson(
      server.ingestUrl,
      other.ingestKey,
      "claude-code-2.1.330/http-json",
      end,
    );

    // Codex: 8 calls of input 3000 (2048 cached) and output 120, none with a cost.
    const codex = await sessionOf(server, acme, "codex");
    assert.equal(codex.calls.length, 8);
    for (const call of codex.calls) {
      assert.deepEqual(
        [call.model, call.input_tokens, call.cache_read_tokens, call.output_tokens],
        ["gpt-5.5", 952, 2048, 120],
      );
      assert.equal(call.cost_usd, null);
      assert.equal(call.cost_source, "estimated");
      // 952 × $5 + 2048 × $0.50 + 120 × $30, per million.
      close(call.estimated_cost_usd!, 0.009384, "a Codex call");
    }
    for (const session of [codex.listed, codex.detail]) {
      assert.equal(session.cost_usd, 0);
      assert.equal(session.cost_source, "estimated");
      close(session.estimated_cost_usd as number, 8 * 0.009384, "the Codex session");
    }

    // Gemini CLI: gemini-2.5-pro, no cost reported.
    const gemini = await sessionOf(server, acme, "gemini");
    assert.ok(gemini.calls.length > 0);
    let geminiTotal = 0;
    for (const call of gemini.calls) {
      assert.equal(call.model, "gemini-2.5-pro");
      assert.equal(call.cost_source, "estimated");
      close(call.estimated_cost_usd!, handPriced(call), "a Gemini call");
      geminiTotal += handPriced(call);
    }
    assert.equal(gemini.detail.cost_source, "estimated");
    close(gemini.detail.estimated_cost_usd as number, geminiTotal, "the Gemini session");

    // Claude Code reports a cost for each call: kept as reported, nothing estimated.
    const claude = await sessionOf(server, acme, "claude");
    assert.ok(claude.calls.length > 0);
    let claudeReported = 0;
    for (const call of claude.calls) {
      assert.equal(call.cost_source, "reported");
      assert.equal(call.estimated_cost_usd, null);
      claudeReported += call.cost_usd!;
    }
    assert.equal(claude.detail.cost_source, "reported");
    assert.equal(claude.detail.estimated_cost_usd, 0);
    close(claude.detail.cost_usd as number, claudeReported, "Claude Code's reported cost");

    // The cost insight: reported and estimated side by side, never mixed.
    const cost = await get(server, acme, "/v1/insights/cost?window=7d");
    const summary = cost.summary as Body;
    close(summary.cost_usd as number, claudeReported, "the reported cost");
    close(
      summary.estimated_cost_usd as number,
      8 * 0.009384 + geminiTotal,
      "the estimated cost",
    );
    const series = cost.series as Body[];
    close(
      series.reduce((total, bucket) => total + (bucket.estimated_cost_usd as number), 0),
      8 * 0.009384 + geminiTotal,
      "the series' estimates",
    );
    const byModel = new Map((cost.breakdown as Body[]).map((row) => [row.model, row]));
    close(byModel.get("gpt-5.5")!.estimated_cost_usd as number, 8 * 0.009384, "gpt-5.5");
    assert.equal(byModel.get("gpt-5.5")!.cost_usd, 0);
    close(byModel.get("gemini-2.5-pro")!.estimated_cost_usd as number, geminiTotal, "gemini");

    const productivity = await get(server, acme, "/v1/insights/productivity?window=7d");
    close(
      (productivity.summary as Body).estimated_cost_usd as number,
      8 * 0.009384 + geminiTotal,
      "productivity's estimate",
    );

    // The other organization has Claude Code only: nothing of Acme's estimates.
    const otherCost = await get(server, other, "/v1/insights/cost?window=7d");
    assert.equal((otherCost.summary as Body).estimated_cost_usd, 0);
    const otherClaude = await sessionOf(server, other, "claude");
    assert.equal(otherClaude.listed.cost_source, "reported");
    assert.equal(otherClaude.listed.estimated_cost_usd, 0);
    const otherProductivity = await get(server, other, "/v1/insights/productivity?window=7d");
    assert.equal((otherProductivity.summary as Body).estimated_cost_usd, null);
  },
);
