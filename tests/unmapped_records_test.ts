import assert from "node:assert/strict";
import { engineTest, startTestServer } from "./_harness.ts";
import { claudeEvent, claudeExport, toolResult } from "./_otlp.ts";
import { T0 } from "./_scenario.ts";

const nano = (ms: number) => `${BigInt(ms) * 1_000_000n}`;
const attr = (key: string, value: string) => ({ key, value: { stringValue: value } });

/** A Codex CLI 0.169.0 record: `eventName` is a source location, the name is in `event.name`. */
function codexToolResult(conversation: string, callId: string, timeMs: number) {
  return {
    timeUnixNano: nano(timeMs),
    eventName: "event otel/src/tool_result.rs:54",
    attributes: [
      attr("event.name", "codex.tool_result"),
      attr("conversation.id", conversation),
      attr("tool_name", "shell"),
      attr("call_id", callId),
      attr("arguments", '{"command":["ls"]}'),
      attr("duration_ms", "12"),
      attr("success", "true"),
      attr("output", "README.md"),
    ],
  };
}

engineTest("a log's event.name attribute wins over LogRecord.eventName (Codex CLI)", async () => {
  await using server = await startTestServer();
  const org = await server.createOrg();
  const body = {
    resourceLogs: [{
      resource: { attributes: [attr("service.name", "codex_exec")] },
      scopeLogs: [{ logRecords: [codexToolResult("conv-1", "call_1", T0)] }],
    }],
  };
  const sent = await server.ingest("/v1/logs", body, org.ingestKey);
  assert.equal(sent.status, 200);
  await sent.body?.cancel();
  const { status, body: page } = await server.getJson(
    "/v1/tool-calls?session_id=conv-1",
    org.apiKey,
  );
  assert.equal(status, 200);
  assert.equal(page.data.length, 1);
  assert.equal(page.data[0].tool_name, "shell");
  assert.equal(page.data[0].agent_system, "codex_exec");
});

engineTest("/metrics counts records that stored nothing by agent and reason", async () => {
  await using server = await startTestServer();
  const org = await server.createOrg();
  const claude = claudeExport([
    toolResult({ session: "s", id: "a", tool: "Bash", timeMs: T0 }),
    claudeEvent("made_up_event", T0 + 1, { "session.id": "s" }),
    claudeEvent("made_up_event", T0 + 2, { "session.id": "s" }),
    claudeEvent("tool_result", T0 + 3, { "tool_name": "Read" }), // no session id: unusable
  ]);
  const unknown = {
    resourceLogs: [{
      resource: { attributes: [attr("service.name", "my-own-agent")] },
      scopeLogs: [{
        logRecords: [{
          timeUnixNano: nano(T0),
          attributes: [attr("event.name", "my.event")],
        }],
      }],
    }],
  };
  for (const body of [claude, unknown]) {
    const sent = await server.ingest("/v1/logs", body, org.ingestKey);
    assert.equal(sent.status, 200);
    await sent.body?.cancel();
  }
  const text = await (await fetch(`${server.ingestUrl}/metrics`)).text();
  const count = (labels: string) =>
    Number(
      text.match(new RegExp(`agent_telemetry_unmapped_records_total\\{${labels}\\} (\\d+)`))?.[1],
    );
  assert.equal(count('agent="claude-code",reason="unmapped_event"'), 2);
  assert.equal(count('agent="claude-code",reason="unusable"'), 1);
  assert.equal(count('agent="other",reason="unknown_agent"'), 1);
  assert.doesNotMatch(text, /my-own-agent|made_up_event/);
});
