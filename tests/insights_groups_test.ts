/**
 * Insights with `group_by` (docs/api.md §4.23): one summary per actor, agent
 * or dimension value, each equal to the insight's summary over that group's
 * rows only, in the caller's organization, biggest first with the null group
 * last, at most 100; filters first; the whole window's figures unchanged.
 */
import assert from "node:assert/strict";
import { engineTest } from "./_harness.ts";
import { type GroupBy, INSIGHT_NAMES, runSqliteInsight } from "../src/analytics/mod.ts";
import type { SessionDimension } from "../src/model/dimensions.ts";
import type { TelemetryEvent } from "../src/model/telemetry.ts";
import type { TelemetryReader } from "../src/store/stores.ts";
import { DatabaseSync } from "node:sqlite";
import {
  assertInsightEqual,
  bashCall,
  generateTelemetry,
  type InsightsEnv,
  type InsightsOrg,
  type ProductivityRows,
  type RawRows,
  readStoredRows,
  referenceGroupedInsight,
  type ReferenceGrouping,
  referenceProductivity,
  startInsightsEnv,
  windowOf,
} from "./_insights_reference.ts";

const WINDOWS = ["7d", "30d", "90d"] as const;

/** A group as served. */
interface Group {
  value: string | null;
  label?: string;
  summary: Record<string, number>;
}

/**
 * Session `i`'s dimensions: teams platform, web and ops by `i % 3`, none for
 * every fifth (the null group); session 7 alone in team "solo", 11 in a team
 * whose name JSON and SQL must escape; every other one in acme/api.
 */
function acmeDimensions(sessionId: string, i: number): SessionDimension[] {
  const dims: SessionDimension[] = [];
  if (i === 7) dims.push({ sessionId, key: "team.id", value: "solo" });
  else if (i === 11) dims.push({ sessionId, key: "team.id", value: '"odd", \\ [välue]' });
  else if (i % 5 !== 0) {
    dims.push({ sessionId, key: "team.id", value: ["platform", "web", "ops"][i % 3]! });
  }
  if (i % 2 === 0) dims.push({ sessionId, key: "repository", value: "acme/api" });
  return dims;
}

/** One organization with three actors (one without a name), each sending a third of the sessions. */
interface GroupedOrg extends InsightsOrg {
  actors: { id: string; name: string }[];
}

async function groupedOrg(env: InsightsEnv, name: string): Promise<GroupedOrg> {
  const org = await env.createOrg(name);
  const actors = [{ id: org.actorId, name: "dev" }];
  for (const actorName of [`${name.toLowerCase()}-ana`, ""]) {
    const actor = await env.stores.keys.createActor(org.orgId, actorName || undefined);
    actors.push({ id: actor.actor_id, name: actorName });
  }
  return { ...org, actors };
}

/** Ingests `batches` as `org`'s, session `i` by actor `i % 3`, with `dims` per session. */
async function ingestGrouped(
  env: InsightsEnv,
  org: GroupedOrg,
  batches: readonly TelemetryEvent[][],
  dims: (sessionId: string, i: number) => SessionDimension[],
): Promise<void> {
  const ids = [...new Set(batches.flat().map((event) => event.sessionId))].sort();
  const index = new Map(ids.map((id, i) => [id, i]));
  for (const batch of batches) {
    for (let a = 0; a < org.actors.length; a++) {
      const events = batch.filter((event) => index.get(event.sessionId)! % 3 === a);
      if (events.length === 0) continue;
      const sessions = [...new Set(events.map((event) => event.sessionId))];
      await env.stores.writer!.ingest(
        { orgId: org.orgId, actorId: org.actors[a]!.id },
        events,
        [],
        [],
        sessions.flatMap((id) => dims(id, index.get(id)!)),
      );
    }
  }
}

/** Each session's value of `key` in `orgId`, as the store holds it. */
async function sessionValues(
  reader: TelemetryReader,
  orgId: string,
  key: string,
): Promise<Map<string, string>> {
  const [rows] = await reader.read([{
    sql: "SELECT session_id, value FROM session_dimensions WHERE org_id = ? AND key = ?",
    params: [orgId, key],
  }]);
  return new Map((rows as { session_id: string; value: string }[]).map((row) => [
    row.session_id,
    row.value,
  ]));
}

/** The grouping the reference takes for `by`. */
async function referenceGrouping(
  env: InsightsEnv,
  orgId: string,
  by: string,
): Promise<ReferenceGrouping> {
  if (!by.startsWith("dim.")) return { by };
  return { by, dimension: await sessionValues(env.stores.reader, orgId, by.slice(4)) };
}

/** A reference body with each actor group's `label` where the actor has a name. */
function labelled(body: Record<string, unknown>, actors: GroupedOrg["actors"]) {
  if (body.group_by !== "actor") return body;
  const names = new Map(actors.map((actor) => [actor.id, actor.name]));
  return {
    ...body,
    groups: (body.groups as { value: string | null; summary: unknown }[]).map((group) => {
      const name = group.value === null ? "" : names.get(group.value) ?? "";
      return name === "" ? group : { value: group.value, label: name, summary: group.summary };
    }),
  };
}

/** `raw` with `orgId`'s rows of other sessions than `sessions` left out. */
function onlySessions(raw: RawRows, orgId: string, sessions: ReadonlySet<string>): RawRows {
  const keep = <T extends { org_id: string; session_id: string }>(rows: readonly T[]) =>
    rows.filter((row) => row.org_id !== orgId || sessions.has(row.session_id));
  return {
    toolCalls: keep(raw.toolCalls),
    modelCalls: keep(raw.modelCalls),
    riskFlags: keep(raw.riskFlags),
    domainHits: keep(raw.domainHits),
  };
}

/** What productivity reads, through the store's reader (either engine), numbers as numbers. */
async function productivityRows(reader: TelemetryReader): Promise<ProductivityRows> {
  const selects = {
    points: `SELECT org_id, actor_id, agent_system, session_id, measure, type, tool, decision,
      language, temporality, monotonic, series_id, CAST(start_time_ns AS TEXT) AS start_time_ns,
      CAST(time_ns AS TEXT) AS time_ns, ts, value FROM metric_points`,
    toolCalls: `SELECT org_id, actor_id, agent_system, session_id, ts, tool_name, category,
      arguments FROM tool_calls`,
    modelCalls:
      "SELECT org_id, actor_id, agent_system, session_id, ts, cost_usd, estimated_cost_usd FROM model_calls",
  };
  const results = await reader.read(
    Object.values(selects).map((sql) => ({ sql, params: [] })),
  );
  const numbers = ["ts", "value", "monotonic", "cost_usd", "estimated_cost_usd"];
  const [points, toolCalls, modelCalls] = results.map((rows) =>
    (rows as Record<string, unknown>[]).map((row) => {
      const plain = { ...row };
      for (const column of numbers) {
        if (plain[column] !== undefined && plain[column] !== null) {
          plain[column] = Number(plain[column]);
        }
      }
      return plain;
    })
  );
  return { points, toolCalls, modelCalls } as unknown as ProductivityRows;
}

engineTest(
  "group_by gives each actor's, agent's and dimension value's summary, as a reference computes it",
  async (t) => {
    await using env = await startInsightsEnv();
    const acme = await groupedOrg(env, "Acme");
    const beta = await groupedOrg(env, "Beta");
    const now = Date.now();
    const data = generateTelemetry({ seed: 33, sessions: 90, days: 80, now });
    await ingestGrouped(env, acme, data.batches, acmeDimensions);
    // Beta: the same session ids, in teams of its own and no repository.
    await ingestGrouped(env, beta, data.batches, (sessionId, i) => [
      { sessionId, key: "team.id", value: `beta-${i % 4}` },
    ]);
    await env.ingest(acme, data.laterResults);
    const raw = await readStoredRows(env);
    const sqlite = env.telemetryPath === null
      ? null
      : new DatabaseSync(env.telemetryPath, { readOnly: true });
    try {
      for (const by of ["actor", "agent", "dim.team.id", "dim.repository"]) {
        await t.step(`group_by=${by}`, async () => {
          for (const org of [acme, beta]) {
            const grouping = await referenceGrouping(env, org.orgId, by);
            for (const name of INSIGHT_NAMES) {
              for (const window of WINDOWS) {
                // Ungrouped first: its cached answer must not serve the grouped one.
                const plain = await env.get(`/v1/insights/${name}?window=${window}`, org.apiKey);
                assert.equal(plain.status, 200);
                assert.ok(!("groups" in plain.body) && !("group_by" in plain.body));
                const path = `/v1/insights/${name}?window=${window}&group_by=${by}`;
                const { status, body } = await env.get(path, org.apiKey);
                assert.equal(status, 200, `${path}: ${JSON.stringify(body)}`);
                const expected = referenceGroupedInsight(
                  raw,
                  name,
                  org.orgId,
                  windowOf(body),
                  grouping,
                );
                assertInsightEqual(body, labelled(expected, org.actors), `${org.orgId} ${path}`);
                if (sqlite === null) continue;
                const resolved = windowOf(body);
                const viaSqlite = runSqliteInsight(sqlite, name, org.orgId, {
                  window,
                  granularity: "daily",
                  start: resolved.start,
                  end: resolved.end,
                }, { by: by as GroupBy });
                assertInsightEqual(viaSqlite, expected, `SQLite ${org.orgId} ${path}`);
              }
            }
          }
        });
      }
    } finally {
      sqlite?.close();
    }

    await t.step("the data has what each grouping must handle", async () => {
      const body =
        (await env.get("/v1/insights/activity?window=90d&group_by=dim.team.id", acme.apiKey))
          .body;
      const values = body.groups.map((group: { value: string | null }) => group.value);
      assert.ok(values.includes("solo"), "a value of one session");
      assert.ok(values.includes('"odd", \\ [välue]'), "a value to escape");
      assert.ok(values.includes(null), "the null group: sessions without a team");
      assert.ok(
        values.every((value: string | null) => value === null || !value.startsWith("beta")),
      );
      const solo = body.groups.find((group: { value: string | null }) => group.value === "solo");
      assert.equal(solo.summary.session_count, 1);
      const actors = (await env.get("/v1/insights/activity?window=90d&group_by=actor", acme.apiKey))
        .body.groups;
      assert.equal(actors.length, 3);
      assert.equal(
        actors.filter((group: { label?: string }) => group.label !== undefined).length,
        2,
      );
      const total = (await env.get("/v1/insights/activity?window=90d", acme.apiKey)).body.summary;
      assert.equal(
        actors.reduce((sum: number, group: Group) => sum + group.summary.total_calls!, 0),
        total.total_calls,
        "the actors' calls add up to the whole",
      );
    });

    await t.step("filters apply first: dim.<key> with group_by", async () => {
      const repo = await sessionValues(env.stores.reader, acme.orgId, "repository");
      const narrowed = onlySessions(raw, acme.orgId, new Set(repo.keys()));
      const grouping = await referenceGrouping(env, acme.orgId, "dim.team.id");
      for (const name of INSIGHT_NAMES) {
        const path = `/v1/insights/${name}?window=90d&repository=acme%2Fapi&group_by=dim.team.id`;
        const { status, body } = await env.get(path, acme.apiKey);
        assert.equal(status, 200, JSON.stringify(body));
        assertInsightEqual(
          body,
          referenceGroupedInsight(narrowed, name, acme.orgId, windowOf(body), grouping),
          path,
        );
      }
    });

    await t.step("productivity: per group, and with actor and team first", async () => {
      const rows = await productivityRows(env.stores.reader);
      const names = new Map(acme.actors.map((actor) => [actor.id, actor.name]));
      const cases: { query: string; filters: { actor?: string; team?: string[] } }[] = [
        { query: "", filters: {} },
        { query: `&actor=${acme.actors[1]!.id}`, filters: { actor: acme.actors[1]!.id } },
        {
          query: `&team=${acme.actors[0]!.id},${acme.actors[2]!.id}`,
          filters: { team: [acme.actors[0]!.id, acme.actors[2]!.id].sort() },
        },
      ];
      for (const by of ["actor", "agent", "dim.team.id"]) {
        const grouping = await referenceGrouping(env, acme.orgId, by);
        for (const { query, filters } of cases) {
          for (const window of WINDOWS) {
            const path = `/v1/insights/productivity?window=${window}&group_by=${by}${query}`;
            const { status, body } = await env.get(path, acme.apiKey);
            assert.equal(status, 200, JSON.stringify(body));
            const expected = referenceProductivity(
              rows,
              acme.orgId,
              windowOf(body),
              filters,
              names,
              grouping,
            );
            assertInsightEqual(body, labelled(expected, acme.actors), path);
          }
        }
      }
    });

    await t.step("a bad group_by is 400 naming the values allowed", async () => {
      for (const value of ["team.id", "dim.unknown", "Actor", "dim.", "actor,agent"]) {
        for (const name of ["activity", "productivity"]) {
          const { status, body } = await env.get(
            `/v1/insights/${name}?group_by=${encodeURIComponent(value)}`,
            acme.apiKey,
          );
          assert.equal(status, 400, value);
          assert.equal(body.error.code, "invalid_request");
          assert.equal(
            body.error.message,
            `invalid group_by: ${
              JSON.stringify(value)
            } (allowed: actor, agent, dim.team.id, dim.department, dim.cost_center, dim.repository)`,
          );
        }
      }
      const empty = await env.get("/v1/insights/activity?window=90d&group_by=", acme.apiKey);
      assert.equal(empty.status, 200);
      assert.ok(!("groups" in empty.body));
    });
  },
);

engineTest(
  "group_by answers at most 100 groups, biggest first, and says when it left some out",
  async () => {
    await using env = await startInsightsEnv();
    const org = await env.createOrg("Many");
    const now = Date.now();
    // Session i: i + 1 calls for the first 3 (the biggest), 1 for the rest.
    const session = (i: number) => {
      const calls = i < 3 ? i + 1 : 1;
      return Array.from(
        { length: calls },
        (_, c) => ({
          ...bashCall(`m${String(i).padStart(3, "0")}-${c}`, now - 60_000 - c),
          sessionId: `m${i}`,
        }),
      );
    };
    const ingest = async (from: number, to: number, withTeam: boolean) => {
      const ids = Array.from({ length: to - from }, (_, k) => from + k);
      await env.stores.writer!.ingest(
        { orgId: org.orgId, actorId: org.actorId },
        ids.flatMap(session),
        [],
        [],
        withTeam
          ? ids.map((i) => ({
            sessionId: `m${i}`,
            key: "team.id",
            value: `t${String(i).padStart(3, "0")}`,
          }))
          : [],
      );
    };
    const groups = async () => {
      const { status, body } = await env.get(
        "/v1/insights/activity?window=7d&group_by=dim.team.id",
        org.apiKey,
      );
      assert.equal(status, 200, JSON.stringify(body));
      return body;
    };
    await ingest(0, 100, true);
    const hundred = await groups();
    assert.equal(hundred.groups.length, 100);
    assert.equal(hundred.groups_truncated, false);
    // Most calls first (t002: 3, t001: 2), then the ties by value.
    assert.deepEqual(
      hundred.groups.slice(0, 5).map((group: Group) => [group.value, group.summary.total_calls]),
      [["t002", 3], ["t001", 2], ["t000", 1], ["t003", 1], ["t004", 1]],
    );
    assert.equal(hundred.groups.at(-1).value, "t099");
    // A 101st group, with no team: the null group is the one left out.
    await ingest(100, 101, false);
    const more = await groups();
    assert.equal(more.groups.length, 100);
    assert.equal(more.groups_truncated, true);
    assert.equal(more.groups.at(-1).value, "t099");
    assert.equal(more.summary.total_calls, 104);
    assert.equal(more.summary.session_count, 101);
    // Another grouping of the same rows: one agent, nothing left out.
    const agents = await env.get("/v1/insights/activity?window=7d&group_by=agent", org.apiKey);
    assert.deepEqual(agents.body.groups, [{
      value: "claude-code",
      summary: { total_calls: 104, error_count: 0, session_count: 101 },
    }]);
    assert.equal(agents.body.groups_truncated, false);
  },
);
