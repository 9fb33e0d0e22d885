/**
 * Builders of OTLP/JSON export requests shaped like Claude Code's events, for
 * tests that load data through the real ingest path.
 *
 * @module
 */

type Value = string | number | boolean;

function attributes(values: Record<string, Value | undefined>) {
  return Object.entries(values).filter(([, v]) => v !== undefined).map(([key, value]) => ({
    key,
    value: typeof value === "string"
      ? { stringValue: value }
      : typeof value === "boolean"
      ? { boolValue: value }
      : Number.isInteger(value)
      ? { intValue: String(value) }
      : { doubleValue: value },
  }));
}

/** A Claude Code log record: body `claude_code.<event>`, string-typed numbers as Claude sends. */
export function claudeEvent(
  event: string,
  timeMs: number,
  attrs: Record<string, Value | undefined>,
) {
  return {
    timeUnixNano: `${BigInt(timeMs) * 1_000_000n}`,
    observedTimeUnixNano: `${BigInt(timeMs) * 1_000_000n}`,
    body: { stringValue: `claude_code.${event}` },
    attributes: attributes({
      "event.name": event,
      "event.timestamp": new Date(timeMs).toISOString(),
      ...attrs,
    }),
  };
}

/** Options of a Claude Code tool call. */
export interface ToolCallSpec {
  session: string;
  id: string;
  tool: string;
  timeMs: number;
  success?: boolean;
  durationMs?: number;
  input?: unknown;
  error?: string;
  mcpScope?: string;
}

/** A `tool_result` record. */
export function toolResult(spec: ToolCallSpec) {
  return claudeEvent("tool_result", spec.timeMs, {
    "session.id": spec.session,
    "tool_name": spec.tool,
    "tool_use_id": spec.id,
    "success": String(spec.success ?? true),
    "duration_ms": String(spec.durationMs ?? 10),
    "tool_input": spec.input === undefined ? undefined : JSON.stringify(spec.input),
    "error": spec.error,
    "mcp_server_scope": spec.mcpScope,
    "decision_type": "accept",
    "decision_source": "config",
    "prompt.id": "prompt-1",
    "terminal.type": "vscode",
    "app.version": "2.1.240",
  });
}

/** A `tool_decision` record. */
export function toolDecision(
  spec: { session: string; id: string; tool: string; timeMs: number; decision: string },
) {
  return claudeEvent("tool_decision", spec.timeMs, {
    "session.id": spec.session,
    "tool_name": spec.tool,
    "tool_use_id": spec.id,
    "decision": spec.decision,
    "source": "user_reject",
  });
}

/** An `api_request` record (a model call); tokens 100, 50, 10 and 5 and 900 ms unless given. */
export function apiRequest(
  spec: {
    session: string;
    timeMs: number;
    model: string;
    costUsd?: number;
    requestId: string;
    tokens?: { input: number; output: number; cacheRead: number; cacheCreation: number };
    /** null: not reported. */
    durationMs?: number | null;
  },
) {
  const tokens = spec.tokens ?? { input: 100, output: 50, cacheRead: 10, cacheCreation: 5 };
  const durationMs = spec.durationMs === undefined ? 900 : spec.durationMs;
  return claudeEvent("api_request", spec.timeMs, {
    "session.id": spec.session,
    "model": spec.model,
    "input_tokens": String(tokens.input),
    "output_tokens": String(tokens.output),
    "cache_read_tokens": String(tokens.cacheRead),
    "cache_creation_tokens": String(tokens.cacheCreation),
    "cost_usd": spec.costUsd === undefined ? undefined : String(spec.costUsd),
    "duration_ms": durationMs === null ? undefined : String(durationMs),
    "request_id": spec.requestId,
  });
}

/**
 * An ExportLogsServiceRequest from Claude Code with the given records; `resource` adds resource
 * attributes (an organization's dimensions, e.g. `department`).
 */
export function claudeExport(
  records: unknown[],
  service = "claude-code",
  resource: Record<string, Value> = {},
) {
  return {
    resourceLogs: [{
      resource: {
        attributes: attributes({
          "service.name": service,
          "service.version": "2.1.240",
          "os.type": "linux",
          "host.arch": "amd64",
          ...resource,
        }),
      },
      scopeLogs: [{ scope: { name: "com.anthropic.claude_code.events" }, logRecords: records }],
    }],
  };
}

/**
 * An OTLP/JSON traces export of one GenAI `execute_tool deploy` span (a
 * generic OpenTelemetry agent, service `my-agent`) at `timeMs`, lasting 50
 * ms: `attributes` and `resource` add to or replace its defaults.
 */
export function genAiToolSpan(spec: {
  timeMs: number;
  attributes?: Record<string, Value>;
  resource?: Record<string, Value>;
  status?: { code: number; message?: string };
}) {
  const nanos = (ms: number) => `${BigInt(ms) * 1_000_000n}`;
  return {
    resourceSpans: [{
      resource: { attributes: attributes({ "service.name": "my-agent", ...spec.resource }) },
      scopeSpans: [{
        scope: { name: "agent.tracer" },
        spans: [{
          traceId: "0af7651916cd43dd8448eb211c80319c",
          spanId: "b7ad6b7169203331",
          name: "execute_tool deploy",
          kind: 1,
          startTimeUnixNano: nanos(spec.timeMs),
          endTimeUnixNano: nanos(spec.timeMs + 50),
          attributes: attributes({
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.conversation.id": "genai-session",
            "gen_ai.tool.name": "deploy",
            "gen_ai.tool.call.id": "call_deploy",
            ...spec.attributes,
          }),
          status: spec.status ?? { code: 1 },
        }],
      }],
    }],
  };
}
