import assert from "node:assert/strict";
import type { DecisionEvent, ToolCallEvent } from "../src/model/telemetry.ts";
import {
  callFindings,
  detectEventCall,
  detectionOf,
  exportFindings,
} from "../src/store/call_detection.ts";

const SECRET = "ghp_Kh0XzKIUoMJLUwIz2Ra1krYKa6DvzolI03g0";

function toolCall(overrides: Partial<ToolCallEvent>): ToolCallEvent {
  return {
    kind: "tool_call",
    sessionId: "s1",
    timeMs: 1_700_000_000_000,
    agentSystem: "claude_code",
    agentVersion: "1.0.0",
    identity: "t1",
    toolName: "Bash",
    toolType: "builtin",
    category: "code_exec",
    outcome: "ok",
    durationMs: 5,
    resultSizeBytes: 2,
    source: "otlp_logs",
    ...overrides,
  };
}

/** The detection the writer rebuilds from findings sent across threads, as detection says. */
function assertRoundTrip(event: ToolCallEvent | DecisionEvent, redact: boolean) {
  const detection = detectEventCall(event, redact);
  const findings = structuredClone(callFindings(event, detection));
  // A field absent or undefined is the same to the writer (stored as NULL).
  const plain = (value: unknown) => JSON.parse(JSON.stringify(value));
  assert.deepEqual(plain(detectionOf(event, findings)), plain(detection));
  return findings;
}

Deno.test("a clean call sends no findings and is rebuilt as detection saw it", () => {
  const event = toolCall({
    arguments: JSON.stringify({ command: "ls -la" }),
    result: "total 0",
    cwd: "/home/dev/project",
  });
  assert.equal(assertRoundTrip(event, true), null);
});

Deno.test("findings carry redacted arguments, result and texts, and only those", () => {
  const event = toolCall({
    arguments: JSON.stringify({ command: `export GITHUB_TOKEN=${SECRET}` }),
    result: `key ${SECRET}`,
    errorMessage: `failed with ${SECRET}`,
    cwd: "/home/dev/project",
  });
  const findings = assertRoundTrip(event, true)!;
  assert.equal(findings.flags[0]?.flag, "credential_detected");
  assert.ok(!findings.arguments!.includes(SECRET), String(findings.arguments));
  assert.ok(!findings.result!.includes(SECRET), String(findings.result));
  assert.deepEqual(Object.keys(findings.texts ?? {}), ["errorMessage"]);
});

Deno.test("without redaction the texts stay the event's and only the flag is sent", () => {
  const event = toolCall({
    arguments: JSON.stringify({ command: `export GITHUB_TOKEN=${SECRET}` }),
  });
  const findings = assertRoundTrip(event, false)!;
  assert.equal(findings.flags[0]?.flag, "credential_detected");
  assert.equal("arguments" in findings, false);
});

Deno.test("domains and destructive commands are findings of an unchanged call", () => {
  const event = toolCall({
    arguments: JSON.stringify({ command: "curl https://example.com/x && rm -rf build" }),
  });
  const findings = assertRoundTrip(event, true)!;
  assert.deepEqual(findings.flags.map((f) => f.flag), ["destructive_operation"]);
  assert.deepEqual(findings.domains.map((d) => d.domain), ["example.com"]);
});

Deno.test("an export's findings cover tool calls and rejecting decisions only", () => {
  const decision = (rejects: boolean): DecisionEvent => ({
    kind: "decision",
    sessionId: "s1",
    timeMs: 1_700_000_000_000,
    agentSystem: "claude_code",
    agentVersion: "1.0.0",
    identity: "d1",
    toolName: "Bash",
    toolType: "builtin",
    category: "code_exec",
    toolCallId: "c1",
    decision: rejects ? "reject" : "accept",
    rejects,
    arguments: JSON.stringify({ command: "rm -rf /" }),
    source: "otlp_logs",
  });
  const findings = exportFindings(
    [decision(false), decision(true), toolCall({ arguments: '{"command":"ls"}' })],
    true,
  );
  assert.equal(findings[0], null);
  assert.deepEqual(findings[1]?.flags.map((f) => f.flag), ["destructive_operation"]);
  assert.equal(findings[2], null);
});
