/**
 * `GET /v1/export/tool-calls` and `GET /v1/export/sessions` (issue #34):
 * NDJSON, oldest first, equal to every page of the lists for the same
 * filters, resumable after any line, isolated per organization, refused
 * before the stream on bad parameters, and read from the store lazily: a
 * client that stops reading or goes away stops the reads.
 */
import assert from "node:assert/strict";
import { engineTest, startTestServer, type TestOrg, type TestServer } from "./_harness.ts";
import { claudeExport, toolResult } from "./_otlp.ts";
import { loadScenario, T0 } from "./_scenario.ts";
import type { TelemetryReader } from "../src/store/stores.ts";

// deno-lint-ignore no-explicit-any
type Json = any;

const iso = (ms: number) => new Date(ms).toISOString();

/** The lines of an export, after checking it answered 200 NDJSON. */
async function exportLines(server: TestServer, path: string, key: string): Promise<Json[]> {
  const response = await server.get(path, key);
  const text = await response.text();
  assert.equal(response.status, 200, text);
  assert.equal(response.headers.get("content-type"), "application/x-ndjson");
  assert.ok(text === "" || text.endsWith("\n"), "every line ends in a newline");
  return text.split("\n").filter((line) => line !== "").map((line) => JSON.parse(line));
}

/** Every page of a list for `query` (small pages, cursors followed), concatenated. */
async function listAll(
  server: TestServer,
  path: string,
  query: string,
  key: string,
  limit = 7,
): Promise<Json[]> {
  const rows: Json[] = [];
  let cursor: string | undefined;
  do {
    const url = `${path}?limit=${limit}${query ? `&${query}` : ""}${
      cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""
    }`;
    const { status, body } = await server.getJson(url, key);
    assert.equal(status, 200, JSON.stringify(body));
    rows.push(...body.data);
    cursor = body.next_cursor;
  } while (cursor);
  return rows;
}

/** A line without what the list form lacks. */
function listForm(line: Json): Json {
  const { risk_flags: _, external_domains: __, ...call } = line;
  return call;
}

/** Sends tool calls in exports of at most 1,000 records. */
async function sendCalls(server: TestServer, ingestKey: string, records: unknown[]) {
  for (let start = 0; start < records.length; start += 1000) {
    const body = claudeExport(records.slice(start, start + 1000));
    const response = await server.ingest("/v1/logs", body, ingestKey);
    assert.equal(response.status, 200, await response.text());
  }
}

/** `count` Grep calls, `perMs` to a millisecond from `startMs`, over three sessions. */
function manyCalls(count: number, perMs: number, startMs: number, prefix = "bulk") {
  return Array.from({ length: count }, (_, i) =>
    toolResult({
      session: `${prefix}-${i % 3}`,
      id: `${prefix}_${i}`,
      tool: i % 5 === 0 ? "Bash" : "Grep",
      timeMs: startMs + Math.floor(i / perMs),
      success: i % 7 !== 0,
    }));
}

/** Whether the lines are in strictly ascending (timestamp, id) order. */
function ascending(lines: Json[]): boolean {
  return lines.every((line, i) => {
    if (i === 0) return true;
    const before = lines[i - 1];
    return before.timestamp < line.timestamp ||
      (before.timestamp === line.timestamp && before.id < line.id);
  });
}

engineTest(
  "GET /v1/export/tool-calls is every page of /v1/tool-calls for the same filters, oldest first",
  async (t) => {
    await using server = await startTestServer();
    const { org, actorB } = await loadScenario(server);
    // Three calls to a millisecond: the order of ties is the id's.
    await sendCalls(server, org.ingestKey, manyCalls(60, 3, T0 + 30_000, "ties"));
    const filters = [
      "",
      "session_id=s1",
      `actor=${actorB.actorId}`,
      `team=${actorB.actorId},nobody&team=${org.actorId}`,
      "tool_name=Bash",
      "tool_type=mcp",
      "category=file_read",
      "outcome=rejected",
      "outcome=Error",
      "outcome=ok&tool_name=Grep&session_id=ties-1",
      // Both bounds are inclusive: the calls at T0 + 1 s and at T0 + 30.005 s are in.
      `after=${iso(T0 + 1000)}&before=${iso(T0 + 30_005)}`,
      `after=${encodeURIComponent(iso(T0 + 1000 + 5 * 3_600_000).replace(".000Z", "+05:00"))}`,
      `before=${iso(T0)}`,
      "tool_name=Nope",
      "agent=ignored&limit=1&cursor=ignored",
    ];
    for (const query of filters) {
      await t.step(query || "no filter", async () => {
        const lines = await exportLines(server, `/v1/export/tool-calls?${query}`, org.apiKey);
        const pages = await listAll(
          server,
          "/v1/tool-calls",
          query.replace(/&?limit=1&cursor=ignored/, ""),
          org.apiKey,
        );
        assert.deepEqual(lines.map(listForm), pages.reverse());
        assert.ok(ascending(lines));
      });
    }
    await t.step("the bounds are inclusive", async () => {
      const lines = await exportLines(
        server,
        `/v1/export/tool-calls?after=${iso(T0 + 1000)}&before=${iso(T0 + 10_000)}`,
        org.apiKey,
      );
      assert.deepEqual(lines.map((line) => line.tool_name), ["Read", "WebFetch", "Edit"]);
    });
    await t.step("each call carries its risk flags and external domains", async () => {
      const lines = await exportLines(server, "/v1/export/tool-calls", org.apiKey);
      const byName = (name: string) => lines.filter((line) => line.tool_name === name);
      const curl = byName("Bash").find((line) => line.session_id === "s2");
      assert.deepEqual(curl.risk_flags, [{ flag: "destructive_operation", evidence: "rm -rf" }]);
      assert.deepEqual(curl.external_domains, [{ domain: "api.github.com", scheme: "https" }]);
      assert.deepEqual(byName("WebFetch")[0].external_domains, [
        { domain: "docs.example.com", scheme: "https" },
      ]);
      assert.deepEqual(byName("Read")[0].risk_flags, []);
      assert.deepEqual(byName("Read")[0].external_domains, []);
    });
  },
);

engineTest(
  "GET /v1/export/tool-calls resumes after any line, across pages and ties, each call once",
  async (t) => {
    await using server = await startTestServer();
    const org = await server.createOrg();
    // 2,500 calls, 3 to a millisecond: pages of 1,000 end inside a millisecond.
    await sendCalls(server, org.ingestKey, manyCalls(2500, 3, T0));
    const lines = await exportLines(server, "/v1/export/tool-calls", org.apiKey);
    await t.step("the whole export is every page of the list, reversed", async () => {
      assert.equal(lines.length, 2500);
      assert.equal(new Set(lines.map((line) => line.id)).size, 2500);
      assert.ok(ascending(lines));
      const pages = await listAll(server, "/v1/tool-calls", "", org.apiKey, 500);
      assert.deepEqual(lines.map(listForm), pages.reverse());
    });
    const resume = (line: Json, query = "") =>
      `/v1/export/tool-calls?after=${line.timestamp}&after_id=${line.id}${query}`;
    for (const k of [0, 998, 999, 1000, 1500, 2498, 2499]) {
      await t.step(`after line ${k}: the rest, each once`, async () => {
        const rest = await exportLines(server, resume(lines[k]), org.apiKey);
        assert.deepEqual(rest, lines.slice(k + 1));
      });
    }
    await t.step("with the filters unchanged", async () => {
      const bash = lines.filter((line) => line.tool_name === "Bash");
      const rest = await exportLines(server, resume(bash[200], "&tool_name=Bash"), org.apiKey);
      assert.deepEqual(rest, bash.slice(201));
    });
    await t.step("a stream cut short resumes after its last whole line", async () => {
      const response = await server.get("/v1/export/tool-calls", org.apiKey);
      const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
      let text = "";
      while (text.length < 150_000) {
        const { value, done } = await reader.read();
        assert.ok(!done, "the export is longer than what is read");
        text += value;
      }
      await reader.cancel();
      const whole = text.slice(0, text.lastIndexOf("\n") + 1).split("\n").filter(Boolean)
        .map((line) => JSON.parse(line));
      assert.ok(whole.length > 0 && whole.length < 2500);
      const rest = await exportLines(server, resume(whole.at(-1)), org.apiKey);
      assert.deepEqual([...whole, ...rest], lines);
    });
  },
  // The stream this test cuts short leaves the server's side of its connection to close when the
  // server notices, which on a busy machine can be after the test ends (CI saw the "http"
  // resource once); that a client gone ends the reads is checked by "a big export is read page
  // by page…".
  { sanitizeResources: false },
);

engineTest(
  "GET /v1/export/sessions is whole sessions by last_seen, oldest first, resumable",
  async (t) => {
    await using server = await startTestServer();
    const { org, actorB } = await loadScenario(server);
    const lines = await exportLines(server, "/v1/export/sessions", org.apiKey);
    await t.step("without filters: every page of /v1/sessions, reversed", async () => {
      const pages = await listAll(server, "/v1/sessions", "", org.apiKey, 2);
      assert.deepEqual(lines, pages.reverse());
      assert.deepEqual(lines.map((line) => line.session_id), ["s1", "s2", "s3"]);
    });
    await t.step("each line is the session as its detail gives it", async () => {
      for (const line of lines) {
        const { body } = await server.getJson(`/v1/sessions/${line.session_id}`, org.apiKey);
        assert.deepEqual(line, body.session);
      }
    });
    const ids = async (query: string) =>
      (await exportLines(server, `/v1/export/sessions?${query}`, org.apiKey))
        .map((line) => line.session_id);
    const cases: [string, string[]][] = [
      [`actor=${actorB.actorId}`, ["s2"]],
      [`team=${actorB.actorId},${org.actorId}`, ["s1", "s2", "s3"]],
      [`team=nobody`, []],
      ["agent=claude-code", ["s1", "s2", "s3"]],
      ["agent=codex", []],
      ["domain=api.github.com", ["s2"]],
      [`actor=${org.actorId}&domain=github.com`, ["s3"]],
      // By last_seen, inclusive at both ends: s1's is T0 + 2 s, s2's T0 + 11 s.
      [`after=${iso(T0 + 2000)}`, ["s1", "s2", "s3"]],
      [`after=${iso(T0 + 2001)}`, ["s2", "s3"]],
      [`before=${iso(T0 + 11_000)}`, ["s1", "s2"]],
      [`after=${iso(T0 + 11_000)}&before=${iso(T0 + 11_000)}`, ["s2"]],
    ];
    for (const [query, expected] of cases) {
      await t.step(query, async () => assert.deepEqual(await ids(query), expected));
    }
    await t.step(
      "a window selects whole sessions: every figure covers all their calls",
      async () => {
        const [s1] = await exportLines(
          server,
          `/v1/export/sessions?after=${iso(T0 + 1500)}&before=${iso(T0 + 2000)}`,
          org.apiKey,
        );
        assert.deepEqual(s1, lines[0]);
        assert.equal(s1.tool_call_count, 3);
      },
    );
    await t.step("after a line: the rest", async () => {
      for (const [k, line] of lines.entries()) {
        const rest = await exportLines(
          server,
          `/v1/export/sessions?after=${line.last_seen}&after_id=${line.session_id}`,
          org.apiKey,
        );
        assert.deepEqual(rest, lines.slice(k + 1));
      }
    });
  },
);

engineTest("an export holds one organization's rows only", async () => {
  await using server = await startTestServer();
  const a = (await loadScenario(server, "Acme")).org;
  // The same session ids and tool-use ids, in another organization.
  const b = (await loadScenario(server, "Other")).org;
  const empty = await server.createOrg("Empty");
  const exported = async (org: TestOrg, path: string) =>
    await exportLines(server, path, org.apiKey);
  const callsA = await exported(a, "/v1/export/tool-calls");
  const callsB = await exported(b, "/v1/export/tool-calls");
  assert.equal(callsA.length, 6);
  assert.equal(callsB.length, 6);
  const idsA = new Set(callsA.map((line) => line.id));
  assert.ok(callsB.every((line) => !idsA.has(line.id)));
  const listB = await listAll(server, "/v1/tool-calls", "", b.apiKey);
  assert.deepEqual(callsB.map(listForm), listB.reverse());
  assert.deepEqual(await exported(empty, "/v1/export/tool-calls"), []);
  assert.deepEqual(await exported(empty, "/v1/export/sessions"), []);
  // Another organization's line as the place to resume after: only this one's rows follow.
  const first = callsB[0];
  const resumed = await exported(
    a,
    `/v1/export/tool-calls?after=${first.timestamp}&after_id=${first.id}`,
  );
  assert.ok(resumed.every((line) => idsA.has(line.id)));
  const sessionsA = await exported(a, "/v1/export/sessions");
  const sessionsB = await exported(b, "/v1/export/sessions");
  assert.deepEqual(sessionsA.map((line) => line.session_id), ["s1", "s2", "s3"]);
  assert.notDeepEqual(
    sessionsA.map((line) => line.actor_id),
    sessionsB.map((line) => line.actor_id),
  );
  const actorsB = new Set(callsB.map((line) => line.actor_id));
  assert.ok(sessionsA.every((line) => !actorsB.has(line.actor_id)));
});

engineTest(
  "GET /v1/export/* refuses bad parameters before the stream, in the spec's shape",
  async (t) => {
    await using server = await startTestServer();
    const org = await server.createOrg();
    const cases: [string, number, RegExp][] = [
      ["/v1/export/tool-calls?after=yesterday", 400, /^invalid after: "yesterday"/],
      ["/v1/export/tool-calls?before=2026-13-01T00:00:00Z", 400, /^invalid before/],
      ["/v1/export/tool-calls?outcome=maybe", 400, /^invalid outcome: "maybe"/],
      ["/v1/export/tool-calls?success=true", 400, /success filter is replaced by outcome/],
      ["/v1/export/tool-calls?after_id=tc_x", 400, /^invalid after_id: send it with after/],
      ["/v1/export/sessions?after=2026-11-20", 400, /^invalid after/],
      ["/v1/export/sessions?after_id=s1", 400, /^invalid after_id/],
    ];
    for (const [url, status, message] of cases) {
      await t.step(url, async () => {
        const response = await server.get(url, org.apiKey);
        assert.equal(response.status, status);
        assert.equal(response.headers.get("content-type"), "application/json");
        const body = await response.json();
        assert.deepEqual(Object.keys(body), ["error"]);
        assert.equal(body.error.code, "invalid_request");
        assert.match(body.error.message, message);
      });
    }
    await t.step("without a key: 401", async () => {
      for (const path of ["/v1/export/tool-calls", "/v1/export/sessions"]) {
        assert.deepEqual(await server.getJson(path, ""), {
          status: 401,
          body: {
            error: { code: "unauthenticated", message: "invalid or missing Bearer credential" },
          },
        });
      }
    });
    await t.step("another method: 405", async () => {
      const response = await server.get("/v1/export/tool-calls", org.apiKey, { method: "POST" });
      assert.equal(response.status, 405);
      await response.body?.cancel();
    });
  },
);

/** A reader that counts the batches the query API reads. */
function countingReader(counter: { reads: number }) {
  return (real: TelemetryReader): TelemetryReader => ({
    queries: real.queries,
    read(statements) {
      counter.reads++;
      return real.read(statements);
    },
    close: () => real.close(),
  });
}

engineTest(
  "a big export is read page by page as the client reads, and a client gone stops the reads",
  async (t) => {
    const counter = { reads: 0 };
    await using server = await startTestServer({
      overrides: { reader: countingReader(counter), readDeadlines: { drainMs: 500 } },
    });
    const org = await server.createOrg();
    const calls = 20_000;
    await sendCalls(server, org.ingestKey, manyCalls(calls, 4, T0));
    const pages = calls / 1000;
    const settle = () => new Promise((resolve) => setTimeout(resolve, 300));
    /** The reads once they stop: none for 300 ms (at most 10 s). */
    const steadyReads = async () => {
      for (let seen = -1, tries = 0; tries < 33; tries++) {
        if (counter.reads === seen) return seen;
        seen = counter.reads;
        await settle();
      }
      throw new Error(`The reads went on: ${counter.reads}`);
    };
    await t.step("a client that stops reading holds the reads back", async () => {
      counter.reads = 0;
      const response = await server.get("/v1/export/tool-calls", org.apiKey);
      const reader = response.body!.getReader();
      await reader.read();
      // The reads stop while the client waits, once the connection's buffers (a few MB) are
      // full: far from the whole export.
      const held = await steadyReads();
      assert.ok(held < pages, `${held} of ${pages} pages read before the client read on`);
      let bytes = 0;
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        bytes += value.length;
      }
      assert.ok(bytes > 0);
      assert.equal(counter.reads, pages + 1, "every page once, then the empty one after the last");
    });
    await t.step("a client that goes away stops the reads", async () => {
      counter.reads = 0;
      const response = await server.get("/v1/export/tool-calls", org.apiKey);
      const reader = response.body!.getReader();
      await reader.read();
      await reader.cancel();
      const stopped = await steadyReads();
      assert.ok(stopped < pages, `${stopped} of ${pages} pages read`);
    });
    await t.step("the whole export: every call once, in order", async () => {
      const lines = await exportLines(server, "/v1/export/tool-calls", org.apiKey);
      assert.equal(lines.length, calls);
      assert.equal(new Set(lines.map((line) => line.id)).size, calls);
      assert.ok(ascending(lines));
    });
    await t.step("stopping the server cuts an export whose client stopped reading", async () => {
      // A client of its own, closed after: the cut connection stays in no shared pool.
      using client = Deno.createHttpClient({});
      const response = await fetch(`${server.queryUrl}/v1/export/tool-calls`, {
        client,
        headers: { authorization: `Bearer ${org.apiKey}` },
      });
      const reader = response.body!.getReader();
      await reader.read();
      // The server's buffers to this client fill up: its answer waits on a socket.
      await settle();
      const started = performance.now();
      await server.close();
      assert.ok(performance.now() - started < 5000, "the shutdown waited for the client");
      // The body never ends as a whole export would.
      await assert.rejects(async () => {
        for (;;) if ((await reader.read()).done) break;
      });
    });
  },
);
