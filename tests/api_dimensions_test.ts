/**
 * Dimensions (docs/api.md §4.22): resource attributes named by `--dimension`
 * kept per session through the real OTLP path, served on sessions and tool
 * calls, filtered with `dim.<key>=<value>` and `repository`, listed by
 * `GET /v1/dimensions`, bounded, and kept apart per organization.
 */
import assert from "node:assert/strict";
import { parseCommandFlags } from "../src/cli/flags.ts";
import { serveCommand, serveFlags } from "../src/cli/serve.ts";
import { ConfigError, DEFAULT_DIMENSION_KEYS, resolveServeConfig } from "../src/config.ts";
import { DIMENSION_FEW } from "../src/store/telemetry_queries.ts";
import { engineTest, startTestServer, type TestServer } from "./_harness.ts";
import { claudeExport, genAiToolSpan, toolResult } from "./_otlp.ts";
import { replayRecordedJson } from "./_recorded_json.ts";

const NOW = Date.now();
const T = NOW - 60 * 60 * 1000;

/** A Claude Code export whose resource carries `resource` beside the usual attributes. */
function exportWith(resource: Record<string, string>, records: unknown[]) {
  const body = claudeExport(records);
  body.resourceLogs[0]!.resource.attributes.push(
    ...Object.entries(resource).map(([key, value]) => ({ key, value: { stringValue: value } })),
  );
  return body;
}

async function send(
  server: TestServer,
  key: string,
  resource: Record<string, string>,
  session: string,
  at: number,
) {
  const records = [0, 1].map((i) =>
    toolResult({ session, id: `${session}-call-${at}-${i}`, tool: "Read", timeMs: at + i })
  );
  const response = await server.ingest("/v1/logs", exportWith(resource, records), key);
  assert.deepEqual(response.status, 200, await response.text());
}

function sessionIds(body: { data: { session_id: string }[] }): string[] {
  return body.data.map((session) => session.session_id).sort();
}

async function ndjson(server: TestServer, path: string, key: string) {
  const response = await server.get(path, key);
  assert.deepEqual(response.status, 200);
  return (await response.text()).trim().split("\n").filter(Boolean).map((line) => JSON.parse(line));
}

engineTest(
  "dimensions are kept per session, served, filtered and listed per organization",
  async () => {
    await using server = await startTestServer();
    const a = await server.createOrg("Acme");
    const b = await server.createOrg("Globex");
    await send(
      server,
      a.ingestKey,
      {
        "team.id": "platform",
        department: "engineering",
        "vcs.repository.url.full": "https://github.com/acme/app",
        "host.name": "laptop-1",
      },
      "s-platform",
      T,
    );
    await send(server, a.ingestKey, { "team.id": "web", cost_center: "eng-123" }, "s-web", T + 10);
    await send(server, a.ingestKey, {}, "s-none", T + 20);
    // A later export of a session with another value: the first value stays.
    await send(server, a.ingestKey, { "team.id": "web" }, "s-platform", T + 30);
    await send(server, b.ingestKey, { "team.id": "platform", repository: "globex/api" }, "s-b", T);

    const all = await server.getJson("/v1/sessions", a.apiKey);
    assert.deepEqual(all.status, 200);
    // deno-lint-ignore no-explicit-any
    const byId = new Map(all.body.data.map((s: any) => [s.session_id, s]));
    // deno-lint-ignore no-explicit-any
    const platform = byId.get("s-platform") as any;
    assert.deepEqual(platform.dimensions, {
      "team.id": "platform",
      department: "engineering",
      repository: "https://github.com/acme/app",
    });
    assert.deepEqual(platform.repository, "https://github.com/acme/app");
    // deno-lint-ignore no-explicit-any
    assert.deepEqual((byId.get("s-web") as any).dimensions, {
      "team.id": "web",
      cost_center: "eng-123",
    });
    // deno-lint-ignore no-explicit-any
    assert.deepEqual((byId.get("s-none") as any).dimensions, {});
    // deno-lint-ignore no-explicit-any
    assert.deepEqual((byId.get("s-none") as any).repository, "");

    const cases: [string, string[]][] = [
      ["?dim.team.id=platform", ["s-platform"]],
      ["?dim.team.id=web", ["s-web"]],
      ["?dim.team.id=platform&dim.department=engineering", ["s-platform"]],
      ["?dim.team.id=platform&dim.department=sales", []],
      ["?dim.team.id=platform&dim.team.id=web", []],
      ["?dim.cost_center=eng-123&agent=claude-code", ["s-web"]],
      ["?repository=https%3A%2F%2Fgithub.com%2Facme%2Fapp", ["s-platform"]],
      ["?dim.team.id=", ["s-none", "s-platform", "s-web"]],
    ];
    for (const [query, expected] of cases) {
      const page = await server.getJson(`/v1/sessions${query}`, a.apiKey);
      assert.deepEqual(page.status, 200, query);
      assert.deepEqual(sessionIds(page.body), expected, query);
    }
    // Another organization's values match nothing here, and its own sessions only there.
    assert.deepEqual(
      sessionIds((await server.getJson("/v1/sessions?repository=globex/api", a.apiKey)).body),
      [],
    );
    assert.deepEqual(
      sessionIds((await server.getJson("/v1/sessions?dim.team.id=platform", b.apiKey)).body),
      ["s-b"],
    );

    const calls = await server.getJson("/v1/tool-calls?dim.team.id=web&limit=1", a.apiKey);
    assert.deepEqual(calls.status, 200);
    assert.deepEqual(calls.body.data.length, 1);
    assert.deepEqual(calls.body.data[0].session_id, "s-web");
    assert.deepEqual(calls.body.data[0].dimensions, { "team.id": "web", cost_center: "eng-123" });
    const next = await server.getJson(
      `/v1/tool-calls?dim.team.id=web&limit=1&cursor=${calls.body.next_cursor}`,
      a.apiKey,
    );
    assert.deepEqual(next.body.data.map((call: { session_id: string }) => call.session_id), [
      "s-web",
    ]);
    assert.deepEqual(next.body.next_cursor, undefined);
    // The cursor is bound to its filters.
    const foreign = await server.getJson(
      `/v1/tool-calls?dim.team.id=platform&limit=1&cursor=${calls.body.next_cursor}`,
      a.apiKey,
    );
    assert.deepEqual(foreign.status, 400);

    const detail = await server.getJson(`/v1/tool-calls/${calls.body.data[0].id}`, a.apiKey);
    assert.deepEqual(detail.body.dimensions, { "team.id": "web", cost_center: "eng-123" });
    const session = await server.getJson("/v1/sessions/s-platform", a.apiKey);
    assert.deepEqual(session.body.session.repository, "https://github.com/acme/app");

    const exported = await ndjson(
      server,
      "/v1/export/sessions?dim.department=engineering",
      a.apiKey,
    );
    assert.deepEqual(exported.map((line) => [line.session_id, line.dimensions["team.id"]]), [[
      "s-platform",
      "platform",
    ]]);
    const exportedCalls = await ndjson(server, "/v1/export/tool-calls?dim.team.id=web", a.apiKey);
    assert.deepEqual(exportedCalls.length, 2);
    assert(exportedCalls.every((line) => line.dimensions.cost_center === "eng-123"));

    const facets = await server.getJson("/v1/sessions/facets", a.apiKey);
    assert.deepEqual(facets.body.repositories, ["https://github.com/acme/app"]);
    assert.deepEqual((await server.getJson("/v1/sessions/facets", b.apiKey)).body.repositories, [
      "globex/api",
    ]);

    const dimensions = await server.getJson("/v1/dimensions", a.apiKey);
    assert.deepEqual(dimensions.status, 200);
    assert.deepEqual(dimensions.body, {
      data: [
        { key: "cost_center", values: ["eng-123"], dropped_values: 0 },
        { key: "department", values: ["engineering"], dropped_values: 0 },
        { key: "repository", values: ["https://github.com/acme/app"], dropped_values: 0 },
        { key: "team.id", values: ["platform", "web"], dropped_values: 0 },
      ],
    });
    assert.deepEqual((await server.getJson("/v1/dimensions", b.apiKey)).body, {
      data: [
        { key: "repository", values: ["globex/api"], dropped_values: 0 },
        { key: "team.id", values: ["platform"], dropped_values: 0 },
      ],
    });
  },
);

engineTest(
  "dim.<key> filters with a bad key or an over-long value are 400 invalid_request",
  async () => {
    await using server = await startTestServer();
    const a = await server.createOrg("Acme");
    for (
      const path of [
        "/v1/sessions?dim.team%20id=x",
        "/v1/tool-calls?dim.=x",
        `/v1/sessions?dim.team.id=${"x".repeat(257)}`,
        "/v1/export/sessions?dim.a%2Fb=x",
      ]
    ) {
      const { status, body } = await server.getJson(path, a.apiKey);
      assert.deepEqual(status, 400, path);
      assert.deepEqual(body.error.code, "invalid_request", path);
    }
  },
);

engineTest(
  "dimension values over their bounds are dropped and counted, the export still stored",
  async () => {
    await using server = await startTestServer({ flags: { dimension: "team.id" } });
    const a = await server.createOrg("Acme");
    // Not a configured key: not kept.
    await send(
      server,
      a.ingestKey,
      { department: "sales", "team.id": "x".repeat(257) },
      "s-long",
      T,
    );
    // 1,001 distinct values of one key in one export: 1,000 kept, one dropped.
    const body = claudeExport([]);
    body.resourceLogs = Array.from({ length: 1001 }, (_, i) => {
      const one = exportWith(
        { "team.id": `team-${String(i).padStart(4, "0")}` },
        [toolResult({ session: `s-${i}`, id: `c-${i}`, tool: "Read", timeMs: T + i })],
      );
      return one.resourceLogs[0]!;
    });
    const response = await server.ingest("/v1/logs", body, a.ingestKey);
    assert.deepEqual(response.status, 200, await response.text());

    const listed = await server.getJson("/v1/dimensions", a.apiKey);
    assert.deepEqual(listed.body.data.length, 1);
    assert.deepEqual(listed.body.data[0].key, "team.id");
    assert.deepEqual(listed.body.data[0].values.length, 1000);
    assert.deepEqual(listed.body.data[0].dropped_values, 2);
    const long = await server.getJson("/v1/sessions/s-long", a.apiKey);
    assert.deepEqual(long.body.session.dimensions, {});
    const kept = await server.getJson("/v1/sessions?dim.team.id=team-0999", a.apiKey);
    assert.deepEqual(sessionIds(kept.body), ["s-999"]);
    const dropped = await server.getJson("/v1/sessions/s-1000", a.apiKey);
    assert.deepEqual(dropped.body.session.dimensions, {});
  },
);

Deno.test("--dimension repeats, takes commas and none, and refuses a bad key", () => {
  const parse = (args: string[], env: Record<string, string> = {}) =>
    resolveServeConfig(
      serveFlags(parseCommandFlags(serveCommand, ["--readonly", ...args], () => undefined).given),
      (name) => env[name],
    ).dimensionKeys;
  assert.deepEqual(parse([]), DEFAULT_DIMENSION_KEYS);
  assert.deepEqual(parse(["--dimension", "team.id", "--dimension", "env,team.id"]), [
    "team.id",
    "env",
  ]);
  assert.deepEqual(parse([], { AGENT_TELEMETRY_DIMENSIONS: "a, b" }), ["a", "b"]);
  assert.deepEqual(parse(["--dimension", "none"]), []);
  assert.throws(() => parse(["--dimension", "bad key"]), (error: unknown) => {
    assert(error instanceof ConfigError);
    assert.match(error.message, /"bad key"/);
    return true;
  });
});

engineTest(
  "retention drops a dropped session's dimensions and the values no session has",
  async () => {
    await using server = await startTestServer({ flags: { retentionDays: "90" } });
    const a = await server.createOrg("Acme");
    const old = NOW - 120 * 86_400_000;
    await send(server, a.ingestKey, { "team.id": "gone-team" }, "s-old", old);
    await send(server, a.ingestKey, { "team.id": "kept-team" }, "s-new", T);
    await server.server.runRetention();
    const listed = await server.getJson("/v1/dimensions", a.apiKey);
    assert.deepEqual(listed.body.data, [{
      key: "team.id",
      values: ["kept-team"],
      dropped_values: 0,
    }]);
    assert.deepEqual(
      sessionIds((await server.getJson("/v1/sessions?dim.team.id=gone-team", a.apiKey)).body),
      [],
    );
  },
);

engineTest("every agent's recorded logs and a span keep their resource's dimensions", async () => {
  await using server = await startTestServer();
  const a = await server.createOrg("Acme");
  const b = await server.createOrg("Globex");
  const runs: [string, string][] = [
    ["claude-code-2.1.330/http-json", "claude-code"],
    ["codex-0.169.0/http-json", "codex"],
    ["gemini-cli-0.61.0/http", "gemini-cli"],
  ];
  const seen = new Set<string>();
  for (const [run, agent] of runs) {
    await replayRecordedJson(server.ingestUrl, a.ingestKey, run, T, "", {
      "team.id": `team-${agent}`,
      "vcs.repository.name": `acme/${agent}`,
    });
    // The sessions this run added.
    const listed = (await server.getJson("/v1/sessions?limit=500", a.apiKey)).body.data;
    // deno-lint-ignore no-explicit-any
    const mine = listed.filter((s: any) => !seen.has(s.session_id));
    assert.ok(mine.length > 0, agent);
    for (const session of mine) {
      seen.add(session.session_id);
      assert.deepEqual(session.dimensions, {
        "team.id": `team-${agent}`,
        repository: `acme/${agent}`,
      }, agent);
      assert.equal(session.repository, `acme/${agent}`);
    }
    const filtered = await server.getJson(`/v1/sessions?dim.team.id=team-${agent}`, a.apiKey);
    assert.deepEqual(
      sessionIds(filtered.body),
      mine.map((s: { session_id: string }) => s.session_id).sort(),
    );
  }
  const span = await server.ingest(
    "/v1/traces",
    genAiToolSpan({ timeMs: T, resource: { department: "ops" } }),
    b.ingestKey,
  );
  assert.equal(span.status, 200, await span.text());
  const facets = await server.getJson("/v1/sessions/facets", a.apiKey);
  assert.deepEqual(facets.body.repositories, ["acme/claude-code", "acme/codex", "acme/gemini-cli"]);
  const spanned = await server.getJson("/v1/tool-calls?dim.department=ops", b.apiKey);
  assert.deepEqual(
    spanned.body.data.map((
      call: { session_id: string; dimensions: object },
    ) => [call.session_id, call.dimensions]),
    [["genai-session", { department: "ops" }]],
  );
  assert.deepEqual(
    (await server.getJson("/v1/tool-calls?dim.department=ops", a.apiKey)).body.data,
    [],
  );
});

engineTest(
  "a tool-call page narrowed by a rare or a common dimension value reads the same calls either way",
  async () => {
    await using server = await startTestServer();
    const a = await server.createOrg("Acme");
    const b = await server.createOrg("Globex");
    const sendCalls = async (key: string, team: string, session: string, at: number, n: number) => {
      for (let start = 0; start < n; start += 500) {
        const records = Array.from({ length: Math.min(500, n - start) }, (_, i) =>
          toolResult({
            session,
            id: `${session}-${start + i}`,
            tool: "Read",
            timeMs: at + start + i,
          }));
        const response = await server.ingest(
          "/v1/logs",
          exportWith({ "team.id": team }, records),
          key,
        );
        assert.deepEqual(response.status, 200, await response.text());
      }
    };
    // The rare value: one session, older than every other call; the common
    // one: more calls than a page reads along the session index.
    await sendCalls(a.ingestKey, "rare", "s-rare", T - 60_000, 3);
    const common = DIMENSION_FEW.calls + 200;
    await sendCalls(a.ingestKey, "common", "s-common-1", T, common / 2);
    await sendCalls(a.ingestKey, "common", "s-common-2", T + common, common / 2);
    // Another organization's session of the same value, newer than all of them.
    await sendCalls(b.ingestKey, "rare", "s-b", T + 2 * common, 5);

    const ids = (body: { data: { id: string }[] }) => body.data.map((call) => call.id);
    const rare = await server.getJson("/v1/tool-calls?dim.team.id=rare&limit=2", a.apiKey);
    assert.deepEqual(rare.status, 200);
    const next = await server.getJson(
      `/v1/tool-calls?dim.team.id=rare&limit=2&cursor=${rare.body.next_cursor}`,
      a.apiKey,
    );
    const bySession = await server.getJson("/v1/tool-calls?session_id=s-rare", a.apiKey);
    assert.deepEqual([...ids(rare.body), ...ids(next.body)], ids(bySession.body));
    assert.deepEqual(ids(bySession.body).length, 3);
    assert.deepEqual(next.body.next_cursor ?? null, null);

    // The common value's pages are the organization's newest calls.
    const unfiltered = await server.getJson("/v1/tool-calls?limit=500", a.apiKey);
    const page = await server.getJson("/v1/tool-calls?dim.team.id=common&limit=500", a.apiKey);
    assert.deepEqual(ids(page.body), ids(unfiltered.body));

    const exported = await ndjson(server, "/v1/export/tool-calls?dim.team.id=rare", a.apiKey);
    assert.deepEqual(exported.map((call) => call.id), ids(bySession.body).reverse());
    const theirs = await ndjson(server, "/v1/export/tool-calls?dim.team.id=rare", b.apiKey);
    assert.deepEqual(theirs.length, 5);
  },
);

engineTest(
  "every page of sessions and tool calls serves its own organization's dimensions of a shared session id",
  async () => {
    await using server = await startTestServer();
    const orgs = [await server.createOrg("Acme"), await server.createOrg("Globex")];
    // The same session id, at the same times, with other values in each organization.
    const dims: Record<string, Record<string, string>>[] = [
      { "s-shared": { "team.id": "alpha", department: "eng" }, "s-plain": {} },
      { "s-shared": { "team.id": "beta", cost_center: "b-1" } },
    ];
    const sendSession = async (key: string, resource: Record<string, string>, session: string) => {
      const at = session === "s-plain" ? T + 5000 : T;
      const records = [
        toolResult({ session, id: `${session}-read`, tool: "Read", timeMs: at }),
        toolResult({
          session,
          id: `${session}-fetch`,
          tool: "WebFetch",
          timeMs: at + 1000,
          input: { url: "https://docs.example.com/guide" },
        }),
      ];
      const response = await server.ingest("/v1/logs", exportWith(resource, records), key);
      assert.deepEqual(response.status, 200, await response.text());
    };
    for (const [i, org] of orgs.entries()) {
      for (const [session, values] of Object.entries(dims[i]!)) {
        await sendSession(org.ingestKey, values, session);
      }
    }
    const iso = (ms: number) => new Date(ms).toISOString();
    for (const [i, org] of orgs.entries()) {
      const expected = dims[i]!;
      const team = i === 0 ? "alpha" : "beta";
      // One query per statement a page is read with (src/store/telemetry_queries.ts).
      const sessionQueries = [
        "", // sessions_page
        `after=${iso(T - 1000)}`, // recent_sessions_page, whole sessions
        `after=${iso(T + 500)}`, // recent_sessions_page, s-shared from its calls since
        `actor=${org.actorId}`, // rollup_sessions_by_actor
        `team=${org.actorId}`,
        "agent=claude-code", // rollup_sessions_by_agent
        "domain=docs.example.com", // rollup_sessions_by_domain
        `before=${iso(NOW)}`, // filtered_sessions_page
        `dim.team.id=${team}`,
      ];
      for (const query of sessionQueries) {
        const { status, body } = await server.getJson(`/v1/sessions?${query}`, org.apiKey);
        assert.deepEqual(status, 200, query);
        const served = Object.fromEntries(
          body.data.map((s: { session_id: string; dimensions: object }) => [
            s.session_id,
            s.dimensions,
          ]),
        );
        const wanted = query.startsWith("dim.") ? { "s-shared": expected["s-shared"] } : expected;
        assert.deepEqual(served, wanted, `org ${i}: /v1/sessions?${query}`);
      }
      const callQueries = [
        "", // tool_calls_page
        "session_id=s-shared",
        "tool_name=WebFetch",
        `dim.team.id=${team}`, // tool_calls_by_dimension
      ];
      for (const query of callQueries) {
        const { status, body } = await server.getJson(`/v1/tool-calls?${query}`, org.apiKey);
        assert.deepEqual(status, 200, query);
        assert.ok(body.data.length > 0, query);
        for (const call of body.data) {
          assert.deepEqual(
            call.dimensions,
            expected[call.session_id],
            `org ${i}: /v1/tool-calls?${query}`,
          );
        }
      }
      for (const what of ["sessions", "tool-calls"]) {
        const lines = await ndjson(server, `/v1/export/${what}`, org.apiKey);
        assert.ok(lines.length > 0, what);
        for (const line of lines) {
          assert.deepEqual(line.dimensions, expected[line.session_id], `org ${i}: export ${what}`);
        }
      }
      const session = await server.getJson("/v1/sessions/s-shared", org.apiKey);
      assert.deepEqual(session.body.session.dimensions, expected["s-shared"]);
      const calls = await server.getJson("/v1/tool-calls?session_id=s-shared", org.apiKey);
      const call = await server.getJson(`/v1/tool-calls/${calls.body.data[0].id}`, org.apiKey);
      assert.deepEqual(call.status, 200);
      assert.deepEqual(call.body.dimensions, expected["s-shared"]);
    }
  },
);

engineTest(
  "a session detail's child sessions carry their own organization's dimensions",
  async () => {
    await using server = await startTestServer();
    const orgs = [await server.createOrg("Acme"), await server.createOrg("Globex")];
    // A recorded Codex session that spawns a subagent: the same session ids in both.
    for (const [i, org] of orgs.entries()) {
      await replayRecordedJson(
        server.ingestUrl,
        org.ingestKey,
        "codex-mcp-0.169.0/http-json",
        T,
        "",
        {
          "team.id": `team-${i}`,
        },
      );
    }
    for (const [i, org] of orgs.entries()) {
      const listed = (await server.getJson("/v1/sessions", org.apiKey)).body.data;
      const parent = listed.find((s: { parent_session_id: string | null }) =>
        s.parent_session_id === null
      );
      const detail = await server.getJson(`/v1/sessions/${parent.session_id}`, org.apiKey);
      assert.deepEqual(detail.body.child_sessions.length, 1);
      assert.deepEqual(detail.body.session.dimensions, { "team.id": `team-${i}` });
      assert.deepEqual(detail.body.child_sessions[0].dimensions, { "team.id": `team-${i}` });
    }
  },
);
