/**
 * One NUL policy on both engines (issue #15 item 7): PostgreSQL text cannot
 * hold U+0000, so ingest replaces it with U+FFFD before either store sees it,
 * and both serve, filter and look up the same text.
 */
import assert from "node:assert/strict";
import { engineTest, startTestServer } from "./_harness.ts";
import { claudeEvent, claudeExport, toolResult } from "./_otlp.ts";
import { decodeExport } from "../src/ingest/otlp/mod.ts";
import { type JsonLogsRequest, protobufLogs } from "../scripts/otlp_protobuf.ts";
import { FIXTURE_T0, fixtureClock, send } from "./_scenario.ts";

const NUL = "\u0000";
const FFFD = "\ufffd";
const T = FIXTURE_T0;

engineTest("a NUL in tool names, ids, errors and arguments is served as U+FFFD", async (t) => {
  await using server = await startTestServer({ overrides: { clock: fixtureClock() } });
  const org = await server.createOrg();
  await send(server, org.ingestKey, [
    claudeEvent("tool_result", T, {
      "session.id": `s${NUL}nul`,
      "tool_name": `Ba${NUL}sh`,
      "tool_use_id": `call${NUL}1`,
      "success": "false",
      "duration_ms": "10",
      "error": `bad${NUL}thing`,
      // Plain text, not JSON: stored JSON-encoded, from the replaced text.
      "tool_input": `echo a${NUL}b`,
    }),
    toolResult({
      session: `s${NUL}nul`,
      id: "call-2",
      tool: "Read",
      timeMs: T + 1000,
      // JSON text whose string holds the escape `\u0000`: no NUL in the text, kept as sent.
      input: { file_path: `/tmp/a${NUL}b` },
    }),
  ]);
  const session = `s${FFFD}nul`;
  const list = await server.getJson("/v1/tool-calls", org.apiKey);
  assert.equal(list.status, 200);
  const [read, bash] = list.body.data;
  assert.equal(bash.tool_name, `Ba${FFFD}sh`);
  assert.equal(bash.session_id, session);
  assert.equal(bash.error_message, `bad${FFFD}thing`);
  assert.equal(JSON.stringify(list.body).includes("\\u0000"), false, "no NUL served in lists");

  await t.step("detail", async () => {
    const detail = await server.getJson(`/v1/tool-calls/${bash.id}`, org.apiKey);
    assert.equal(detail.status, 200);
    assert.equal(detail.body.tool_name, `Ba${FFFD}sh`);
    assert.equal(detail.body.tool_use_id, `call${FFFD}1`);
    assert.equal(detail.body.arguments, JSON.stringify(`echo a${FFFD}b`));
    const other = await server.getJson(`/v1/tool-calls/${read.id}`, org.apiKey);
    assert.equal(other.body.arguments, JSON.stringify({ file_path: `/tmp/a${NUL}b` }));
  });
  await t.step("filters, facets and session lookup match the replaced text", async () => {
    const byName = await server.getJson(
      `/v1/tool-calls?tool_name=${encodeURIComponent(`Ba${FFFD}sh`)}`,
      org.apiKey,
    );
    assert.deepEqual(byName.body.data.map((c: { id: string }) => c.id), [bash.id]);
    const facets = await server.getJson("/v1/tool-calls/facets", org.apiKey);
    assert.deepEqual(facets.body.tool_names.sort(), [`Ba${FFFD}sh`, "Read"].sort());
    const found = await server.getJson(`/v1/sessions/${encodeURIComponent(session)}`, org.apiKey);
    assert.equal(found.status, 200);
    assert.equal(found.body.session.tool_call_count, 2);
  });
});

Deno.test("a request says whether any of its texts may hold a NUL, so that one without skips the replacement", () => {
  const request = (attrs: Record<string, string>, resource: Record<string, string> = {}) =>
    claudeExport(
      [claudeEvent("tool_result", T, { "session.id": "s1", ...attrs })],
      "claude-code",
      resource,
    );
  const cases: [string, ReturnType<typeof request>, boolean][] = [
    ["plain texts", request({ tool_name: "Read", tool_input: '{"file_path":"/a\\\\b"}' }), false],
    ["a NUL in a value", request({ tool_name: `Ba${NUL}sh` }), true],
    ["a NUL in a key", request({ [`tool${NUL}name`]: "Bash" }), true],
    ["a NUL in the resource", request({}, { "host.name": `h${NUL}` }), true],
    ["JSON text holding the escape", request({ tool_input: JSON.stringify({ a: NUL }) }), true],
    // `\\` then `\u0075`: the text `\u0000` parsed once, a NUL parsed twice.
    ["an escape spelled with escapes", request({ tool_input: "\\\\\\u00750000" }), true],
  ];
  for (const [name, body, expected] of cases) {
    const json = new TextEncoder().encode(JSON.stringify(body));
    assert.equal(
      decodeExport(json, { encoding: "json", pathSignal: "logs" }).nulPossible,
      expected,
      `JSON: ${name}`,
    );
    assert.equal(
      decodeExport(protobufLogs(body as JsonLogsRequest), {
        encoding: "protobuf",
        pathSignal: "logs",
      }).nulPossible,
      expected,
      `protobuf: ${name}`,
    );
  }
});
