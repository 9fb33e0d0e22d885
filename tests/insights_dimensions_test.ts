/**
 * Insights narrowed by the dimension filters (docs/api.md §4.22): every
 * insight with `dim.<key>=<value>` (repeatable, AND) and `repository` counts
 * only the sessions with those dimensions, in the caller's organization, and
 * the cache never serves one slice's answer for another.
 */
import assert from "node:assert/strict";
import { engineTest } from "./_harness.ts";
import { INSIGHT_NAMES } from "../src/analytics/mod.ts";
import type { SessionDimension } from "../src/model/dimensions.ts";
import type { TelemetryEvent } from "../src/model/telemetry.ts";
import {
  assertInsightEqual,
  generateTelemetry,
  type InsightsEnv,
  type InsightsOrg,
  type RawRows,
  readStoredRows,
  referenceInsight,
  startInsightsEnv,
  windowOf,
} from "./_insights_reference.ts";

const SESSIONS = 60;

/** Session `i`'s dimensions: even ones platform, odd ones web; every third in acme/api. */
function dimensionsOf(sessionId: string, i: number): SessionDimension[] {
  const dims = [{ sessionId, key: "team.id", value: i % 2 === 0 ? "platform" : "web" }];
  if (i % 3 === 0) dims.push({ sessionId, key: "repository", value: "acme/api" });
  return dims;
}

/** Ingests `events` as `org`'s with each session's dimensions; `keep` picks the sessions. */
async function ingestWithDimensions(
  env: InsightsEnv,
  org: InsightsOrg,
  batches: readonly TelemetryEvent[][],
  dims: (sessionId: string) => SessionDimension[],
  keep: (sessionId: string) => boolean = () => true,
): Promise<void> {
  for (const batch of batches) {
    const events = batch.filter((event) => keep(event.sessionId));
    const sessions = [...new Set(events.map((event) => event.sessionId))];
    await env.stores.writer!.ingest(
      { orgId: org.orgId, actorId: org.actorId },
      events,
      [],
      [],
      sessions.flatMap(dims),
    );
  }
}

/** `raw` with `orgId`'s rows of other sessions than `sessions` left out. */
function onlySessions(raw: RawRows, orgId: string, sessions: ReadonlySet<string>): RawRows {
  const keep = <T extends { org_id: string }>(rows: readonly T[]) =>
    rows.filter((row) =>
      row.org_id !== orgId || sessions.has((row as unknown as { session_id: string }).session_id)
    );
  return {
    toolCalls: keep(raw.toolCalls),
    modelCalls: keep(raw.modelCalls),
    riskFlags: keep(raw.riskFlags),
    domainHits: keep(raw.domainHits),
  };
}

/** Productivity without who: the twin organization's actor differs. */
// deno-lint-ignore no-explicit-any
function withoutActors(body: any): unknown {
  return {
    summary: body.summary,
    series: body.series,
    // deno-lint-ignore no-explicit-any
    breakdown: body.breakdown.map(({ actor_id: _, actor_name: __, ...rest }: any) => rest),
  };
}

engineTest(
  "insights take dim.<key> and repository: each equals the insight over only those sessions",
  async (t) => {
    await using env = await startInsightsEnv();
    const a = await env.createOrg("Acme");
    const b = await env.createOrg("Beta");
    // Acme's platform sessions alone, to compare productivity with (its actor differs).
    const twin = await env.createOrg("Twin");
    const data = generateTelemetry({ seed: 33, sessions: SESSIONS, days: 80, now: Date.now() });
    const ids = [...new Set(data.batches.flat().map((event) => event.sessionId))].sort();
    const index = new Map(ids.map((id, i) => [id, i]));
    const dims = (sessionId: string) => dimensionsOf(sessionId, index.get(sessionId)!);
    const has = (key: string, value: string) => (sessionId: string) =>
      dims(sessionId).some((dim) => dim.key === key && dim.value === value);
    await ingestWithDimensions(env, a, data.batches, dims);
    // Beta holds the same session ids, every one on the platform team and in acme/api.
    await ingestWithDimensions(env, b, data.batches, (sessionId) => [
      { sessionId, key: "team.id", value: "platform" },
      { sessionId, key: "repository", value: "acme/api" },
    ]);
    await ingestWithDimensions(env, twin, data.batches, dims, has("team.id", "platform"));
    const raw = await readStoredRows(env);

    const slices: { query: string; sessions: (id: string) => boolean }[] = [
      { query: "dim.team.id=platform", sessions: has("team.id", "platform") },
      { query: "dim.team.id=web", sessions: has("team.id", "web") },
      { query: "repository=acme%2Fapi", sessions: has("repository", "acme/api") },
      {
        query: "dim.team.id=web&repository=acme%2Fapi",
        sessions: (id) => has("team.id", "web")(id) && has("repository", "acme/api")(id),
      },
      { query: "dim.team.id=nobody", sessions: () => false },
    ];
    for (const { query, sessions } of slices) {
      await t.step(query, async () => {
        const expected = onlySessions(raw, a.orgId, new Set(ids.filter(sessions)));
        for (const name of INSIGHT_NAMES) {
          for (const window of ["7d", "30d", "90d"]) {
            const path = `/v1/insights/${name}?window=${window}&${query}`;
            const { status, body } = await env.get(path, a.apiKey);
            assert.equal(status, 200, JSON.stringify(body));
            assertInsightEqual(
              body,
              referenceInsight(expected, name, a.orgId, windowOf(body)),
              path,
            );
          }
        }
      });
    }

    await t.step(
      "the slices are not the whole organization (the data tells them apart)",
      async () => {
        for (const name of ["activity", "cost", "top-tools"]) {
          const all = await env.get(`/v1/insights/${name}?window=90d`, a.apiKey);
          const platform = await env.get(
            `/v1/insights/${name}?window=90d&dim.team.id=platform`,
            a.apiKey,
          );
          assert.notDeepEqual(platform.body.summary, all.body.summary, name);
        }
      },
    );

    await t.step(
      "productivity over platform equals a twin organization of only those",
      async () => {
        for (const window of ["7d", "30d", "90d"]) {
          const sliced = await env.get(
            `/v1/insights/productivity?window=${window}&dim.team.id=platform`,
            a.apiKey,
          );
          const alone = await env.get(`/v1/insights/productivity?window=${window}`, twin.apiKey);
          assert.equal(sliced.status, 200, JSON.stringify(sliced.body));
          assert.ok(alone.body.summary.sessions > 0);
          assert.deepEqual(withoutActors(sliced.body), withoutActors(alone.body), window);
          // The twin holds the platform sessions only: filtering it changes nothing.
          const twinSliced = await env.get(
            `/v1/insights/productivity?window=${window}&dim.team.id=platform`,
            twin.apiKey,
          );
          assert.deepEqual(withoutActors(twinSliced.body), withoutActors(alone.body), window);
        }
      },
    );

    await t.step("Beta's sessions with the same ids and values never count for Acme", async () => {
      // Beta: every session is platform and acme/api, so its slice is the whole of it.
      for (const name of INSIGHT_NAMES) {
        const sliced = await env.get(
          `/v1/insights/${name}?window=90d&dim.team.id=platform`,
          b.apiKey,
        );
        assertInsightEqual(
          sliced.body,
          referenceInsight(raw, name, b.orgId, windowOf(sliced.body)),
          name,
        );
        const web = await env.get(`/v1/insights/${name}?window=90d&dim.team.id=web`, b.apiKey);
        assertInsightEqual(
          web.body,
          referenceInsight(
            onlySessions(raw, b.orgId, new Set()),
            name,
            b.orgId,
            windowOf(web.body),
          ),
          name,
        );
      }
    });

    await t.step("a bad dimension key or value is 400, as on lists", async () => {
      const bad = await env.get("/v1/insights/activity?dim.bad%20key=x", a.apiKey);
      assert.equal(bad.status, 400);
      assert.equal(bad.body.error.code, "invalid_request");
      const long = await env.get(`/v1/insights/cost?dim.team.id=${"x".repeat(300)}`, a.apiKey);
      assert.equal(long.status, 400);
      // An empty value is no filter, as on lists.
      const empty = await env.get("/v1/insights/activity?window=90d&dim.team.id=", a.apiKey);
      const all = await env.get("/v1/insights/activity?window=90d", a.apiKey);
      assert.deepEqual(empty.body.summary, all.body.summary);
    });
  },
);

engineTest(
  "the insight cache keys on the dimension filters: one slice's answer never serves another",
  async () => {
    await using env = await startInsightsEnv();
    const a = await env.createOrg("Acme");
    const data = generateTelemetry({ seed: 7, sessions: 40, days: 20, now: Date.now() });
    const ids = [...new Set(data.batches.flat().map((event) => event.sessionId))].sort();
    const index = new Map(ids.map((id, i) => [id, i]));
    await ingestWithDimensions(env, a, data.batches, (id) => dimensionsOf(id, index.get(id)!));
    const raw = await readStoredRows(env);
    const reference = (
      name: string,
      sessions: (i: number) => boolean,
      body: { window: Record<string, string> },
    ) =>
      referenceInsight(
        onlySessions(raw, a.orgId, new Set(ids.filter((_, i) => sessions(i)))),
        name,
        a.orgId,
        windowOf(body),
      );
    for (const name of INSIGHT_NAMES) {
      // Unfiltered first, so its answer is cached; then each slice, each twice.
      const all = await env.get(`/v1/insights/${name}?window=30d`, a.apiKey);
      assertInsightEqual(all.body, referenceInsight(raw, name, a.orgId, windowOf(all.body)), name);
      for (let round = 0; round < 2; round++) {
        const platform = await env.get(
          `/v1/insights/${name}?window=30d&dim.team.id=platform`,
          a.apiKey,
        );
        assertInsightEqual(platform.body, reference(name, (i) => i % 2 === 0, platform.body), name);
        const web = await env.get(`/v1/insights/${name}?window=30d&dim.team.id=web`, a.apiKey);
        assertInsightEqual(web.body, reference(name, (i) => i % 2 === 1, web.body), name);
        const repo = await env.get(
          `/v1/insights/${name}?window=30d&repository=acme%2Fapi`,
          a.apiKey,
        );
        assertInsightEqual(repo.body, reference(name, (i) => i % 3 === 0, repo.body), name);
      }
    }
    // A session that gains the dimension later is counted at once (the cached slice is not reused).
    const before = await env.get("/v1/insights/activity?window=30d&dim.team.id=ops", a.apiKey);
    assert.equal(before.body.summary.total_calls, 0);
    const extra = generateTelemetry({
      seed: 8,
      sessions: 1,
      days: 5,
      now: Date.now(),
      prefix: "x",
    });
    await ingestWithDimensions(env, a, extra.batches, (sessionId) => [
      { sessionId, key: "team.id", value: "ops" },
    ]);
    const after = await env.get("/v1/insights/activity?window=30d&dim.team.id=ops", a.apiKey);
    const calls = extra.batches.flat().filter((event) => event.kind !== "model_call").length;
    assert.ok(after.body.summary.total_calls > 0 && after.body.summary.total_calls <= calls);
    assert.equal(after.body.summary.session_count, 1);
  },
);
