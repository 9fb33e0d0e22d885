/**
 * `GET /v1/insights/productivity` (issue #18): the real agents' recorded runs
 * (Claude Code's delta metrics and logs, Gemini CLI's cumulative metrics and
 * logs, Codex's logs with its apply_patch), moved to just before now and
 * replayed over OTLP/HTTP JSON into a test server on each engine, give the
 * figures the clients reported; Codex, which sends no lines metric, gets its
 * lines from its patch. Synthetic series check resets, the window's edge,
 * filters, null ratios and organizations; every body equals the TypeScript
 * reference (`tests/_insights_reference.ts`) over the store's raw rows.
 */
import assert from "node:assert/strict";
import { engineTest, startTestServer, type TestOrg, type TestServer } from "./_harness.ts";
import {
  assertInsightEqual,
  readProductivityRows,
  referenceProductivity,
  windowOf,
} from "./_insights_reference.ts";
import { replayRecordedJson } from "./_recorded_json.ts";
import { generateExports } from "../src/demo/mod.ts";

const DAY = 86_400_000;
const NS_PER_MS = 1_000_000n;

const CLAUDE = "claude-code-2.1.330/http-json";
const GEMINI = "gemini-cli-0.61.0/http";
const CODEX = "codex-0.169.0/http-json";

/** Replays a recorded run's JSON requests as `org`'s, its last time moved to `endMs`. */
function replay(server: TestServer, org: TestOrg, run: string, endMs: number) {
  return replayRecordedJson(server.ingestUrl, org.ingestKey, run, endMs);
}

/** One Gemini-like cumulative `lines.changed` point of series `series`. */
function linesPoint(session: string, start: number, at: number, value: number) {
  return {
    startTimeUnixNano: String(BigInt(start) * NS_PER_MS),
    timeUnixNano: String(BigInt(at) * NS_PER_MS),
    asInt: String(value),
    attributes: [
      { key: "session.id", value: { stringValue: session } },
      { key: "type", value: { stringValue: "added" } },
      { key: "function_name", value: { stringValue: "write_file" } },
    ],
  };
}

function geminiLines(points: Record<string, unknown>[]) {
  return {
    resourceMetrics: [{
      resource: { attributes: [{ key: "service.name", value: { stringValue: "gemini-cli" } }] },
      scopeMetrics: [{
        scope: { name: "gemini-cli" },
        metrics: [{
          name: "gemini_cli.lines.changed",
          sum: { aggregationTemporality: 2, isMonotonic: true, dataPoints: points },
        }],
      }],
    }],
  };
}

/** A second actor (and its ingest key) in `org`. */
async function addActor(server: TestServer, org: TestOrg, name: string): Promise<TestOrg> {
  const keys = await server.keyStore();
  try {
    const actor = await keys.createActor(org.orgId, name);
    return { ...org, actorId: actor.actor_id, ingestKey: actor.ingest_key };
  } finally {
    await keys.close();
  }
}

// deno-lint-ignore no-explicit-any
type Body = any;

/** GETs the insight and checks it against the reference over the store's rows. */
async function productivity(
  server: TestServer,
  org: TestOrg,
  query = "",
  filters: { actor?: string; team?: string[] } = {},
  names: Map<string, string> = new Map([[org.actorId, "dev"]]),
): Promise<Body> {
  const { status, body } = await server.getJson(`/v1/insights/productivity${query}`, org.apiKey);
  assert.equal(status, 200, JSON.stringify(body));
  const expected = referenceProductivity(
    await readProductivityRows(server),
    org.orgId,
    windowOf(body),
    filters,
    names,
  );
  assertInsightEqual(body, expected);
  return body;
}

engineTest("productivity: the recorded runs give what the clients reported", async () => {
  await using server = await startTestServer();
  const claude = await server.createOrg();
  const gemini = await addActor(server, claude, "gemini-user");
  const codex = await addActor(server, claude, "codex-user");
  const end = Date.now() - 60_000;
  await replay(server, claude, CLAUDE, end);
  await replay(server, gemini, GEMINI, end);
  await replay(server, codex, CODEX, end);
  const names = new Map([[claude.actorId, "dev"], [gemini.actorId, "gemini-user"], [
    codex.actorId,
    "codex-user",
  ]]);
  const body = await productivity(server, claude, "", {}, names);
  const row = (actorId: string) => body.breakdown.find((r: Body) => r.actor_id === actorId);

  // Claude Code: the scripted Write of "written by harness\n", which it counts as 2 lines.
  const c = row(claude.actorId);
  assert.equal(c.agent, "claude-code");
  assert.equal(c.actor_name, "dev");
  assert.equal(c.sessions, 1);
  assert.equal(c.lines_added, 2);
  assert.equal(c.lines_source, "metrics", "the Write call is not counted again");
  assert.equal(c.cost_usd, 0.0567, "the cost metric, not the model calls' cost as well");
  assert.equal(c.cost_per_1k_lines, 28.35);
  assert.equal(c.commits, 0);
  assert.equal(c.cost_per_commit, null, "no commits");
  assert.equal(c.edits_accepted, 1);
  assert.equal(c.acceptance_rate, 1);
  assert.deepEqual(c.decisions, [
    { tool: "Write", language: "Plain text", accepted: 1, rejected: 0 },
  ]);
  assert.ok(c.active_time_cli_s > 0);

  // Gemini CLI: cumulative points; "hello from the mock model\n" is 1 line; no cost reported.
  const g = row(gemini.actorId);
  assert.equal(g.agent, "gemini-cli");
  assert.equal(g.sessions, 1);
  assert.equal(g.lines_added, 1);
  assert.equal(g.lines_source, "metrics");
  assert.equal(g.cost_usd, null);
  assert.equal(g.cost_per_1k_lines, null, "no cost");
  assert.equal(g.acceptance_rate, null, "no edit decisions");
  assert.deepEqual(g.decisions, []);

  // Codex: no lines metric and no session id on its points; its apply_patch adds 1 line.
  const x = row(codex.actorId);
  assert.equal(x.sessions, 1);
  assert.equal(x.lines_added, 1);
  assert.equal(x.lines_removed, 0);
  assert.equal(x.lines_source, "tool_calls");

  assert.equal(body.summary.sessions, 3);
  assert.equal(body.summary.lines_added, 4);
  assert.equal(body.summary.lines_source, "mixed");
  assert.equal(body.summary.cost_usd, c.cost_usd + (x.cost_usd ?? 0));
  assert.equal(body.breakdown.length, 3);

  // Filters: one actor, a team, and both (they intersect).
  const alone = await productivity(server, claude, `?actor=${claude.actorId}`, {
    actor: claude.actorId,
  }, names);
  assert.deepEqual(alone.breakdown, [c]);
  assert.equal(alone.summary.sessions, 1);
  assert.equal(alone.summary.lines_added, 2);
  assert.equal(alone.summary.lines_source, "metrics");
  const team = [gemini.actorId, codex.actorId].sort();
  const pair = await productivity(
    server,
    claude,
    `?team=${gemini.actorId}&team=${codex.actorId},${gemini.actorId}`,
    { team },
    names,
  );
  assert.equal(pair.summary.sessions, 2);
  assert.equal(pair.summary.lines_added, 2);
  assert.equal(pair.summary.lines_source, "mixed");
  const none = await productivity(server, claude, `?actor=${claude.actorId}&team=${team}`, {
    actor: claude.actorId,
    team,
  });
  assert.equal(none.summary.sessions, 0);
  assert.deepEqual(none.breakdown, []);
  assert.deepEqual(none.series, []);

  // Another organization replaying the same run counts nothing here, and sees only its own.
  const other = await server.createOrg("Other");
  await replay(server, other, CLAUDE, end);
  const again = await productivity(server, claude, "", {}, names);
  assert.deepEqual(again.summary, body.summary);
  const theirs = await productivity(server, other, "", {}, new Map([[other.actorId, "dev"]]));
  assert.equal(theirs.summary.lines_added, 2);
  assert.equal(theirs.summary.sessions, 1);
});

engineTest(
  "productivity: a cumulative series counts through restarts and the window's edge",
  async () => {
    await using server = await startTestServer();
    const org = await server.createOrg();
    const now = Date.now();
    const old = now - 9 * DAY; // before a 7-day window
    const fresh = now - 2 * DAY;
    const response = await server.ingest(
      "/v1/metrics",
      geminiLines([
        // Since `old`: 100 lines before the window, 3 more inside it.
        linesPoint("s1", old, old + 1000, 100),
        linesPoint("s1", old, now - DAY, 103),
        // A restart (new start time) inside the window: its whole value counts.
        linesPoint("s1", fresh, fresh + 1000, 5),
        linesPoint("s1", fresh, fresh + 2000, 8),
        // A drop without a new start time (an unmarked restart): 2 counts, not -6.
        linesPoint("s1", fresh, fresh + 3000, 2),
      ]),
      org.ingestKey,
    );
    assert.equal(response.status, 200, await response.text());
    const week = await productivity(server, org);
    assert.equal(week.summary.lines_added, 3 + 8 + 2);
    assert.equal(week.summary.sessions, 1);
    const wide = await productivity(server, org, "?window=30d&granularity=weekly");
    assert.equal(wide.summary.lines_added, 103 + 8 + 2);
    assert.equal(
      wide.series.reduce((total: number, point: Body) => total + point.lines_added, 0),
      103 + 8 + 2,
    );
  },
);

/** One Claude Code-like delta point (no start time: each point is its own interval). */
function claudePoint(at: number, value: number, attributes: Record<string, string>) {
  return {
    timeUnixNano: String(BigInt(at) * NS_PER_MS),
    asInt: String(value),
    attributes: Object.entries(attributes).map(([key, value]) => ({
      key,
      value: { stringValue: value },
    })),
  };
}

function claudeDeltas(metrics: { name: string; points: Record<string, unknown>[] }[]) {
  return {
    resourceMetrics: [{
      resource: { attributes: [{ key: "service.name", value: { stringValue: "claude-code" } }] },
      scopeMetrics: [{
        scope: { name: "com.anthropic.claude_code" },
        metrics: metrics.map(({ name, points }) => ({
          name,
          sum: { aggregationTemporality: 1, isMonotonic: true, dataPoints: points },
        })),
      }],
    }],
  };
}

engineTest(
  "productivity: repeated delta points add up, an idle counter adds nothing, rejected edits count",
  async () => {
    await using server = await startTestServer();
    const org = await server.createOrg();
    const now = Date.now();
    const edit = (decision: string) => ({
      "session.id": "d1",
      decision,
      tool_name: "Edit",
      language: "TypeScript",
    });
    for (
      const body of [
        claudeDeltas([
          {
            // The same delta twice: 4 + 4, not a counter standing still.
            name: "claude_code.lines_of_code.count",
            points: [
              claudePoint(now - 3 * DAY, 4, { "session.id": "d1", type: "added" }),
              claudePoint(now - 2 * DAY, 4, { "session.id": "d1", type: "added" }),
            ],
          },
          {
            name: "claude_code.code_edit_tool.decision",
            points: [
              claudePoint(now - 3 * DAY, 2, edit("reject")),
              claudePoint(now - 2 * DAY, 1, edit("accept")),
            ],
          },
        ]),
        // A cumulative counter idle at 10 since its start: 10 in all, not 10 per point.
        geminiLines([
          linesPoint("g1", now - 4 * DAY, now - 3 * DAY, 10),
          linesPoint("g1", now - 4 * DAY, now - 2 * DAY, 10),
          linesPoint("g1", now - 4 * DAY, now - DAY, 10),
        ]),
      ]
    ) {
      const response = await server.ingest("/v1/metrics", body, org.ingestKey);
      assert.equal(response.status, 200, await response.text());
    }
    const week = await productivity(server, org);
    assert.equal(week.summary.lines_added, 4 + 4 + 10);
    assert.equal(week.summary.edits_rejected, 2);
    assert.equal(week.summary.edits_accepted, 1);
    assert.deepEqual(week.breakdown[0].decisions, [
      { tool: "Edit", language: "TypeScript", accepted: 1, rejected: 2 },
    ]);
  },
);

engineTest(
  "productivity: ratios are null without their inputs, and lines derive per session",
  async () => {
    await using server = await startTestServer();
    const org = await server.createOrg();
    const empty = await productivity(server, org);
    assert.deepEqual(empty.summary, {
      sessions: 0,
      active_time_user_s: 0,
      active_time_cli_s: 0,
      lines_added: 0,
      lines_removed: 0,
      commits: 0,
      pull_requests: 0,
      edits_accepted: 0,
      edits_rejected: 0,
      cost_usd: null,
      estimated_cost_usd: null,
      lines_source: null,
      acceptance_rate: null,
      cost_per_1k_lines: null,
      cost_per_commit: null,
    });
    assert.deepEqual(empty.series, []);
    assert.deepEqual(empty.breakdown, []);

    // Codex alone: lines derived from its patch, no cost, no commits.
    await replay(server, org, CODEX, Date.now() - 60_000);
    const codex = await productivity(server, org, "", {}, new Map([[org.actorId, "dev"]]));
    assert.equal(codex.summary.lines_added, 1);
    assert.equal(codex.summary.lines_source, "tool_calls");
    assert.equal(codex.summary.cost_per_commit, null);
    assert.equal(codex.summary.acceptance_rate, null);
  },
);

engineTest("productivity: parameters are checked as the other insights'", async () => {
  await using server = await startTestServer();
  const org = await server.createOrg();
  const cases: [string, number, string | null][] = [
    ["?window=7d&granularity=weekly", 400, "granularity not allowed for this window"],
    ["?window=1y", 400, "invalid window"],
    ["?window=30D&granularity=WEEKLY&actor=", 200, null],
  ];
  for (const [query, status, message] of cases) {
    const { status: got, body } = await server.getJson(
      `/v1/insights/productivity${query}`,
      org.apiKey,
    );
    assert.equal(got, status, query);
    if (message !== null) assert.match(JSON.stringify(body), new RegExp(message));
  }
  const anonymous = await server.get("/v1/insights/productivity");
  assert.equal(anonymous.status, 401);
  await anonymous.body?.cancel();
});

engineTest(
  "productivity: generated telemetry of several actors equals the reference in every window",
  async () => {
    await using server = await startTestServer();
    const org = await server.createOrg();
    const keys = await server.keyStore();
    const actors = [org];
    try {
      for (const name of ["second", "third"]) {
        const actor = await keys.createActor(org.orgId, name);
        actors.push({ ...org, actorId: actor.actor_id, ingestKey: actor.ingest_key });
      }
    } finally {
      await keys.close();
    }
    // Claude Code, Codex and Gemini CLI logs with Write/Edit/apply_patch/write_file arguments,
    // over 40 days, and one actor's recorded metrics: lines from both sources.
    for (const batch of generateExports({ actors: 3, days: 40, seed: 18, now: new Date() })) {
      const response = await server.ingest("/v1/logs", batch.body, actors[batch.actor]!.ingestKey);
      assert.equal(response.status, 200, await response.text());
    }
    await replay(server, actors[1]!, CLAUDE, Date.now() - 3 * DAY);
    await replay(server, actors[2]!, GEMINI, Date.now() - 20 * DAY);
    const names = new Map([[org.actorId, "dev"], [actors[1]!.actorId, "second"], [
      actors[2]!.actorId,
      "third",
    ]]);
    for (const query of ["", "?window=30d&granularity=weekly", "?window=90d"]) {
      const body = await productivity(server, org, query, {}, names);
      assert.ok(body.summary.lines_added > 0 && body.series.length > 1, query);
    }
    const one = await productivity(server, org, `?window=30d&actor=${actors[1]!.actorId}`, {
      actor: actors[1]!.actorId,
    }, names);
    assert.equal(one.summary.lines_source, "mixed");
  },
);
