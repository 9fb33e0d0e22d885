/**
 * A call's decision must not depend on arrival order: Codex's automatic
 * reviewer reports a `denied` decision event and then a failed result whose
 * output reads as a refusal (which maps to `reject`/`config` on its own).
 */
import assert from "node:assert/strict";
import { engineTest, startTestServer } from "./_harness.ts";
import { T0 } from "./_scenario.ts";

const nano = (ms: number) => `${BigInt(ms) * 1_000_000n}`;
const attrs = (values: Record<string, string>) =>
  Object.entries(values).map(([key, value]) => ({ key, value: { stringValue: value } }));
const CONVERSATION = "01a20b73-0000-7223-87e3-4ce24c2d2360";

const decision = {
  timeUnixNano: nano(T0),
  eventName: "event otel/src/events/session_telemetry.rs:1225",
  attributes: attrs({
    "event.name": "codex.tool_decision",
    "conversation.id": CONVERSATION,
    "tool_name": "exec_command",
    "call_id": "call_review_1",
    "decision": "denied",
    "source": "AutomatedReviewer",
    "model": "gpt-5.5",
  }),
};
const result = {
  timeUnixNano: nano(T0 + 5),
  eventName: "event otel/src/tool_result.rs:54",
  attributes: attrs({
    "event.name": "codex.tool_result",
    "conversation.id": CONVERSATION,
    "tool_name": "exec_command",
    "call_id": "call_review_1",
    "arguments": '{"cmd":"git push --force"}',
    "duration_ms": "0",
    "success": "false",
    "output":
      'exec_command failed: CreateProcess { message: "Rejected(\\"denied by reviewer\\")" }',
  }),
};
const exportOf = (records: unknown[]) => ({
  resourceLogs: [{
    resource: { attributes: attrs({ "service.name": "codex_exec" }) },
    scopeLogs: [{ logRecords: records }],
  }],
});

for (const order of ["decision first", "result first", "one export"] as const) {
  engineTest(`a decision event wins over the decision its result implies (${order})`, async () => {
    await using server = await startTestServer();
    const org = await server.createOrg();
    const sends = order === "one export"
      ? [exportOf([decision, result])]
      : order === "decision first"
      ? [exportOf([decision]), exportOf([result])]
      : [exportOf([result]), exportOf([decision])];
    for (const body of sends) {
      const response = await server.ingest("/v1/logs", body, org.ingestKey);
      assert.equal(response.status, 200);
      await response.body?.cancel();
    }
    const { body } = await server.getJson(`/v1/sessions/${CONVERSATION}`, org.apiKey);
    assert.equal(body.tool_calls.length, 1);
    const call = body.tool_calls[0];
    assert.equal(call.outcome, "rejected");
    assert.equal(call.decision, "denied");
    assert.equal(call.decision_source, "automated_reviewer");
    assert.equal(body.session.tool_call_count, 1);
  });
}
