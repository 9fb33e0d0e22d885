/**
 * Ingest through the official OpenTelemetry JS SDK exporters, a real client
 * we did not write: OTLP/HTTP protobuf and OTLP/HTTP JSON.
 */
import assert from "node:assert/strict";
import { LoggerProvider, SimpleLogRecordProcessor } from "@opentelemetry/sdk-logs";
import { OTLPLogExporter as ProtoExporter } from "@opentelemetry/exporter-logs-otlp-proto";
import { OTLPLogExporter as JsonExporter } from "@opentelemetry/exporter-logs-otlp-http";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { engineTest, startTestServer } from "./_harness.ts";
import { T0 } from "./_scenario.ts";

for (const [name, Exporter] of [["protobuf", ProtoExporter], ["JSON", JsonExporter]] as const) {
  engineTest(
    `the OpenTelemetry SDK's ${name} log exporter delivers Claude Code events`,
    async () => {
      await using server = await startTestServer();
      const org = await server.createOrg();
      const exporter = new Exporter({
        url: `${server.ingestUrl}/v1/logs`,
        headers: { Authorization: `Bearer ${org.ingestKey}` },
      });
      const provider = new LoggerProvider({
        resource: resourceFromAttributes({
          "service.name": "claude-code",
          "service.version": "2.1.240",
          "os.type": "darwin",
          "host.arch": "arm64",
        }),
        processors: [new SimpleLogRecordProcessor({ exporter })],
      });
      const logger = provider.getLogger("com.anthropic.claude_code.events", "2.1.240");
      const emit = (event: string, timeMs: number, attributes: Record<string, string>) =>
        logger.emit({
          body: `claude_code.${event}`,
          timestamp: timeMs,
          attributes: {
            "event.name": event,
            "event.timestamp": new Date(timeMs).toISOString(),
            ...attributes,
          },
        });
      emit("tool_result", T0, {
        "session.id": "sdk-session",
        "tool_name": "Bash",
        "tool_use_id": "toolu_sdk",
        "success": "true",
        "duration_ms": "77",
        "tool_input": JSON.stringify({ command: "git status" }),
      });
      emit("api_request", T0 + 10, {
        "session.id": "sdk-session",
        "model": "claude-sonnet-4-5",
        "input_tokens": "10",
        "output_tokens": "5",
        "cost_usd": "0.0125",
      });
      await provider.forceFlush();
      await provider.shutdown();

      const list = await server.getJson("/v1/tool-calls", org.apiKey);
      assert.equal(list.body.data.length, 1);
      const call = list.body.data[0];
      assert.equal(call.tool_name, "Bash");
      assert.equal(call.duration_ms, 77);
      assert.equal(call.session_id, "sdk-session");
      assert.equal(call.timestamp, new Date(T0).toISOString());
      const detail = await server.getJson(`/v1/tool-calls/${call.id}`, org.apiKey);
      assert.equal(detail.body.os_type, "darwin");
      assert.equal(detail.body.host_arch, "arm64");
      assert.deepEqual(JSON.parse(detail.body.arguments), { command: "git status" });
      const session = await server.getJson("/v1/sessions/sdk-session", org.apiKey);
      assert.equal(session.body.session.cost_usd, 0.0125);
    },
    // The SDK's HTTP agent keeps sockets for reuse beyond the test's control.
    { sanitizeResources: false, sanitizeOps: false },
  );
}
