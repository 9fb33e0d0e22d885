/**
 * OTLP/gRPC ingest (docs/design.md §4.1): the official OpenTelemetry JS gRPC exporters
 * deliver logs and spans (h2c, gzip, TLS), and raw HTTP/2 calls see the gRPC
 * statuses OTLP prescribes, with RetryInfo where a retry helps.
 */
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import http2 from "node:http2";
import { gzipSync } from "node:zlib";
import { credentials, Metadata } from "@grpc/grpc-js";
import { SpanStatusCode } from "@opentelemetry/api";
import { LoggerProvider, SimpleLogRecordProcessor } from "@opentelemetry/sdk-logs";
import { OTLPLogExporter } from "@opentelemetry/exporter-logs-otlp-grpc";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-grpc";
import { SimpleSpanProcessor, TracerProvider } from "@opentelemetry/sdk-trace";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { resolveServeConfig } from "../src/config.ts";
import {
  closeSession,
  frame,
  grpcCall,
  LOGS_EXPORT,
  type LogSpec,
  logsRequest,
  METRICS_EXPORT,
  partialSuccess,
  rpcStatus,
  TRACES_EXPORT,
} from "./_grpc.ts";
import {
  engineTest,
  serveArgs,
  spawnCli,
  startTestServer,
  type TestOrg,
  type TestServer,
} from "./_harness.ts";
import { T0 } from "./_scenario.ts";
import { makeCertificates } from "./_tls.ts";

// The exporters' grpc-js channels and the SDK's timers outlive a test's control.
const SDK = { sanitizeResources: false, sanitizeOps: false };

const CLAUDE = { "service.name": "claude-code", "service.version": "2.1.240" };

function toolResult(id: string, timeMs: number, session = "grpc-session"): LogSpec {
  return {
    timeMs,
    body: "claude_code.tool_result",
    attributes: {
      "event.name": "tool_result",
      "event.timestamp": new Date(timeMs).toISOString(),
      "session.id": session,
      "tool_name": "Bash",
      "tool_use_id": id,
      "success": "true",
      "duration_ms": "12",
      "tool_input": JSON.stringify({ command: "ls" }),
    },
  };
}

async function toolCalls(server: TestServer, org: TestOrg) {
  const list = await server.getJson("/v1/tool-calls", org.apiKey);
  assert.equal(list.status, 200);
  return list.body.data as Record<string, unknown>[];
}

function metadataFor(key: string): Metadata {
  const metadata = new Metadata();
  metadata.set("authorization", `Bearer ${key}`);
  return metadata;
}

for (const compression of ["none", "gzip"] as const) {
  engineTest(
    `the OpenTelemetry JS gRPC log exporter delivers Claude Code events (compression ${compression})`,
    async () => {
      await using server = await startTestServer();
      const org = await server.createOrg();
      assert.match(server.grpcUrl ?? "", /^http:\/\/127\.0\.0\.1:\d+$/);
      const exporter = new OTLPLogExporter({
        url: server.grpcUrl!,
        metadata: metadataFor(org.ingestKey),
        // The SDK's CompressionAlgorithm enum, whose values are these strings.
        compression: compression as never,
      });
      const provider = new LoggerProvider({
        resource: resourceFromAttributes({ ...CLAUDE, "os.type": "linux", "host.arch": "x64" }),
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
        "session.id": "grpc-session",
        "tool_name": "Bash",
        "tool_use_id": "toolu_grpc",
        "success": "false",
        "error": "exit 2",
        "duration_ms": "77",
        "tool_input": JSON.stringify({ command: "curl https://example.org/x" }),
        "prompt.id": "prompt-7",
        "terminal.type": "tmux",
      });
      emit("api_request", T0 + 10, {
        "session.id": "grpc-session",
        "model": "claude-sonnet-4-5",
        "input_tokens": "10",
        "output_tokens": "5",
        "cost_usd": "0.0125",
      });
      await provider.forceFlush();
      await provider.shutdown();

      const calls = await toolCalls(server, org);
      assert.equal(calls.length, 1);
      const call = calls[0]!;
      assert.equal(call.tool_name, "Bash");
      assert.equal(call.session_id, "grpc-session");
      assert.equal(call.actor_id, org.actorId);
      assert.equal(call.agent_system, "claude-code");
      assert.equal(call.duration_ms, 77);
      assert.equal(call.outcome, "error");
      assert.equal(call.timestamp, new Date(T0).toISOString());
      const detail = (await server.getJson(`/v1/tool-calls/${call.id}`, org.apiKey)).body;
      assert.equal(detail.os_type, "linux");
      assert.equal(detail.host_arch, "x64");
      assert.equal(detail.prompt_id, "prompt-7");
      assert.equal(detail.terminal_type, "tmux");
      assert.equal(detail.error_message, "exit 2");
      assert.deepEqual(JSON.parse(detail.arguments), { command: "curl https://example.org/x" });
      const session = (await server.getJson("/v1/sessions/grpc-session", org.apiKey)).body;
      assert.equal(session.session.cost_usd, 0.0125);
      const domains = session.session.external_domains ?? session.external_domains;
      assert.deepEqual(domains.map((d: { domain: string }) => d.domain), ["example.org"]);
    },
    SDK,
  );
}

engineTest(
  "the OpenTelemetry JS gRPC trace exporter delivers GenAI tool and model spans",
  async () => {
    await using server = await startTestServer();
    const org = await server.createOrg();
    const exporter = new OTLPTraceExporter({
      url: server.grpcUrl!,
      metadata: metadataFor(org.ingestKey),
    });
    const provider = new TracerProvider({
      resource: resourceFromAttributes({ "service.name": "my-agent", "service.version": "0.4.0" }),
      spanProcessors: [new SimpleSpanProcessor({ exporter })],
    });
    const tracer = provider.getTracer("my-agent");
    const tool = tracer.startSpan("execute_tool read_file", {
      startTime: T0,
      attributes: {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.conversation.id": "conv-1",
        "gen_ai.tool.name": "read_file",
        "gen_ai.tool.call.id": "call-1",
        "gen_ai.tool.call.arguments": JSON.stringify({ path: "/etc/hosts" }),
        "gen_ai.tool.call.result": "127.0.0.1 localhost",
      },
    });
    tool.setStatus({ code: SpanStatusCode.ERROR, message: "permission denied" });
    tool.end(T0 + 250);
    const chat = tracer.startSpan("chat gpt-5", {
      startTime: T0 + 300,
      attributes: {
        "gen_ai.operation.name": "chat",
        "gen_ai.conversation.id": "conv-1",
        "gen_ai.provider.name": "openai",
        "gen_ai.request.model": "gpt-5",
        "gen_ai.usage.input_tokens": 120,
        "gen_ai.usage.output_tokens": 30,
      },
    });
    chat.end(T0 + 900);
    await provider.forceFlush();
    await provider.shutdown();

    const calls = await toolCalls(server, org);
    assert.equal(calls.length, 1);
    const call = calls[0]!;
    assert.equal(call.tool_name, "read_file");
    assert.equal(call.session_id, "conv-1");
    assert.equal(call.agent_system, "my-agent");
    assert.equal(call.duration_ms, 250);
    assert.equal(call.outcome, "error");
    const detail = (await server.getJson(`/v1/tool-calls/${call.id}`, org.apiKey)).body;
    assert.equal(detail.tool_call_id, "call-1");
    assert.equal(detail.error_message, "permission denied");
    assert.equal(detail.trace_id, tool.spanContext().traceId);
    assert.equal(detail.span_id, tool.spanContext().spanId);
    assert.equal(detail.result, "127.0.0.1 localhost");
    assert.deepEqual(JSON.parse(detail.arguments), { path: "/etc/hosts" });
    const cost = await server.getJson("/v1/insights/cost?window=30d", org.apiKey);
    const models = JSON.stringify(cost.body);
    assert.match(models, /"gpt-5"/);
    assert.match(models, /"openai"/);
  },
  SDK,
);

engineTest(
  "OTLP/gRPC over TLS delivers logs to an exporter trusting a throwaway CA",
  async () => {
    const dir = await Deno.makeTempDir({ prefix: "agent-telemetry-grpc-tls-" });
    try {
      const { ca: pem, cert, key } = await makeCertificates(dir);
      assert.deepEqual(
        resolveServeConfig({ data: dir, tlsCert: cert, tlsKey: key }, () => undefined).grpcListen,
        { hostname: "0.0.0.0", port: 4317 },
      );
      await using server = await startTestServer({ flags: { tlsCert: cert, tlsKey: key } });
      const org = await server.createOrg();
      assert.match(server.grpcUrl ?? "", /^https:\/\/127\.0\.0\.1:\d+$/);

      // By name: grpc-js passes the host as TLS servername, which Deno's node:tls refuses for an IP.
      const exporter = new OTLPLogExporter({
        url: server.grpcUrl!.replace("127.0.0.1", "localhost"),
        metadata: metadataFor(org.ingestKey),
        credentials: credentials.createSsl(Buffer.from(pem)),
      });
      const provider = new LoggerProvider({
        resource: resourceFromAttributes(CLAUDE),
        processors: [new SimpleLogRecordProcessor({ exporter })],
      });
      const record = toolResult("toolu_tls", T0);
      provider.getLogger("tls").emit({
        body: record.body,
        timestamp: record.timeMs,
        attributes: record.attributes,
      });
      await provider.forceFlush();
      await provider.shutdown();
      const client = Deno.createHttpClient({ caCerts: [pem] });
      try {
        const list = await fetch(`${server.queryUrl}/v1/tool-calls`, {
          client,
          headers: { authorization: `Bearer ${org.apiKey}` },
        });
        const names = (await list.json()).data.map((c: { tool_name: string }) => c.tool_name);
        assert.deepEqual(names, ["Bash"]);
      } finally {
        client.close();
      }

      // Plain h2c is not served on the TLS port.
      const plain = await grpcCall(
        server.grpcUrl!.replace("https:", "http:"),
        LOGS_EXPORT,
        new Uint8Array(),
        { key: org.ingestKey },
      ).catch(() => null);
      assert.notEqual(plain?.grpcStatus, 0);
      const overTls = await grpcCall(server.grpcUrl!, LOGS_EXPORT, new Uint8Array(), {
        key: org.ingestKey,
        ca: pem,
      });
      assert.equal(overTls.grpcStatus, 0);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
  SDK,
);

engineTest("OTLP/gRPC answers each export with the status OTLP prescribes", async (t) => {
  await using server = await startTestServer();
  const org = await server.createOrg();
  const url = server.grpcUrl!;
  const one = logsRequest(CLAUDE, [toolResult("toolu_1", T0)]);

  await t.step("no key, a wrong key or an API key → UNAUTHENTICATED, nothing stored", async () => {
    for (const key of [null, "wb_ingest_nope", org.apiKey]) {
      const answer = await grpcCall(url, LOGS_EXPORT, one, { key });
      assert.equal(answer.httpStatus, 200);
      assert.equal(answer.grpcStatus, 16, `key ${key}`);
      assert.equal(answer.grpcMessage, "invalid or missing Bearer credential");
      assert.equal(answer.details, null);
    }
    assert.deepEqual(await toolCalls(server, org), []);
  });

  await t.step("bytes that are no protobuf → INVALID_ARGUMENT", async () => {
    const answer = await grpcCall(url, LOGS_EXPORT, new Uint8Array([0x0a, 0xff, 0x01]), {
      key: org.ingestKey,
    });
    assert.equal(answer.grpcStatus, 3);
    assert.match(answer.grpcMessage, /^Invalid OTLP protobuf/);
  });

  await t.step("a compressed flag without grpc-encoding → INVALID_ARGUMENT", async () => {
    const answer = await grpcCall(url, LOGS_EXPORT, one, {
      key: org.ingestKey,
      compressedFlag: 1,
    });
    assert.equal(answer.grpcStatus, 3);
  });

  await t.step("two messages in a unary call → INVALID_ARGUMENT", async () => {
    const framed = frame(one);
    const body = new Uint8Array(framed.length * 2);
    body.set(framed);
    body.set(framed, framed.length);
    const answer = await grpcCall(url, LOGS_EXPORT, one, { key: org.ingestKey, body });
    assert.equal(answer.grpcStatus, 3);
    assert.deepEqual(await toolCalls(server, org), []);
  });

  await t.step("an unknown method or encoding → UNIMPLEMENTED", async () => {
    for (
      const method of [
        "/opentelemetry.proto.collector.profiles.v1development.ProfilesService/Export",
        "/opentelemetry.proto.collector.logs.v1.LogsService/Send",
      ]
    ) {
      const answer = await grpcCall(url, method, one, { key: org.ingestKey });
      assert.equal(answer.grpcStatus, 12, method);
      assert.match(answer.grpcMessage, /^Unknown method/);
    }
    const snappy = await grpcCall(url, LOGS_EXPORT, one, {
      key: org.ingestKey,
      grpcEncoding: "snappy",
    });
    assert.equal(snappy.grpcStatus, 12);
  });

  await t.step("a gzip message is inflated and stored", async () => {
    const answer = await grpcCall(url, LOGS_EXPORT, one, { key: org.ingestKey, gzip: true });
    assert.equal(answer.grpcStatus, 0);
    assert.equal(answer.message?.length, 0, "an empty ExportLogsServiceResponse");
    assert.deepEqual((await toolCalls(server, org)).map((c) => c.tool_name), ["Bash"]);
  });

  await t.step("corrupt gzip → INVALID_ARGUMENT", async () => {
    const answer = await grpcCall(url, LOGS_EXPORT, one, {
      key: org.ingestKey,
      grpcEncoding: "gzip",
      compressedFlag: 1,
    });
    assert.equal(answer.grpcStatus, 3);
  });

  await t.step("a retried message stores nothing twice", async () => {
    for (let i = 0; i < 2; i++) {
      const answer = await grpcCall(url, LOGS_EXPORT, one, { key: org.ingestKey });
      assert.equal(answer.grpcStatus, 0);
    }
    assert.equal((await toolCalls(server, org)).length, 1);
  });

  await t.step("unusable records → OK with partial_success", async () => {
    const noSession = toolResult("toolu_2", T0 + 1);
    delete noSession.attributes["session.id"];
    const answer = await grpcCall(
      url,
      LOGS_EXPORT,
      logsRequest(CLAUDE, [toolResult("toolu_3", T0 + 2), noSession]),
      { key: org.ingestKey },
    );
    assert.equal(answer.grpcStatus, 0);
    const partial = partialSuccess(answer.message!);
    assert.equal(partial?.rejected, 1n);
    assert.match(partial?.message ?? "", /^1 unusable record\(s\): /);
    assert.equal((await toolCalls(server, org)).length, 2);
  });

  await t.step("traces and metrics services accept their requests", async () => {
    for (const method of [TRACES_EXPORT, METRICS_EXPORT]) {
      const answer = await grpcCall(url, method, new Uint8Array(), { key: org.ingestKey });
      assert.equal(answer.grpcStatus, 0, method);
    }
  });

  await t.step("/metrics counts gRPC requests by method and status", async () => {
    const text = await (await fetch(`${server.ingestUrl}/metrics`)).text();
    const count = (route: string, status: string) =>
      Number(
        new RegExp(
          `agent_telemetry_http_requests_total\\{listener="grpc",route="${
            route.replaceAll(".", "\\.")
          }",status="${status}"\\} (\\d+)`,
        ).exec(text)?.[1] ?? 0,
      );
    assert.equal(count(LOGS_EXPORT, "UNAUTHENTICATED"), 3);
    assert.equal(count(LOGS_EXPORT, "OK"), 4);
    assert.equal(count(TRACES_EXPORT, "OK"), 1);
    assert.equal(count("unmatched", "UNIMPLEMENTED"), 2);
  });
});

engineTest(
  "OTLP/gRPC refuses a message past --ingest-max-bytes with RESOURCE_EXHAUSTED, not retryable",
  async () => {
    await using server = await startTestServer({ flags: { ingestMaxBytes: "4096" } });
    const org = await server.createOrg();
    const session = http2.connect(server.grpcUrl!);
    try {
      const big = logsRequest(CLAUDE, [{
        ...toolResult("toolu_big", T0),
        attributes: { ...toolResult("toolu_big", T0).attributes, tool_input: "x".repeat(64_000) },
      }]);
      const plain = await grpcCall(server.grpcUrl!, LOGS_EXPORT, big, {
        key: org.ingestKey,
        session,
      });
      assert.equal(plain.grpcStatus, 8);
      assert.match(plain.grpcMessage, /larger than the limit: 4096 bytes/);
      assert.equal(plain.details, null, "no RetryInfo: the Go exporter would retry it forever");
      // Small on the wire, past the cap once inflated.
      assert.ok(gzipSync(big).length < 4096);
      const bomb = await grpcCall(server.grpcUrl!, LOGS_EXPORT, big, {
        key: org.ingestKey,
        gzip: true,
        session,
      });
      assert.equal(bomb.grpcStatus, 8);
      // The connection survives the refusals.
      const small = await grpcCall(
        server.grpcUrl!,
        LOGS_EXPORT,
        logsRequest(CLAUDE, [toolResult("toolu_small", T0)]),
        { key: org.ingestKey, session },
      );
      assert.equal(small.grpcStatus, 0);
      assert.deepEqual((await toolCalls(server, org)).map((c) => c.tool_name), ["Bash"]);
    } finally {
      await closeSession(session);
    }
  },
);

Deno.test("OTLP/gRPC on a read-only node answers UNAVAILABLE with RetryInfo", async () => {
  const dir = await Deno.makeTempDir({ prefix: "agent-telemetry-grpc-ro-" });
  try {
    let org: TestOrg;
    {
      await using primary = await startTestServer({ dir });
      org = await primary.createOrg();
    }
    await using server = await startTestServer({ dir, flags: { readOnly: true } });
    const answer = await grpcCall(
      server.grpcUrl!,
      LOGS_EXPORT,
      logsRequest(CLAUDE, [toolResult("toolu_ro", T0)]),
      { key: org.ingestKey },
    );
    assert.equal(answer.grpcStatus, 14);
    assert.match(answer.grpcMessage, /read-only/);
    assert.ok(answer.details, "grpc-status-details-bin is sent");
    const status = rpcStatus(answer.details);
    assert.equal(status.code, 14);
    assert.ok((status.retryDelaySeconds ?? 0) > 0, "RetryInfo carries a delay");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("OTLP/gRPC on a busy store answers UNAVAILABLE with a one-second RetryInfo and stores nothing", async () => {
  await using server = await startTestServer();
  const org = await server.createOrg();
  const { DatabaseSync } = await import("node:sqlite");
  const blocker = new DatabaseSync(`${server.dir}/telemetry.db`);
  try {
    blocker.exec("BEGIN EXCLUSIVE");
    const answer = await grpcCall(
      server.grpcUrl!,
      LOGS_EXPORT,
      logsRequest(CLAUDE, [toolResult("toolu_busy", T0)]),
      { key: org.ingestKey },
    );
    assert.equal(answer.grpcStatus, 14);
    assert.equal(rpcStatus(answer.details!).retryDelaySeconds, 1);
    blocker.exec("ROLLBACK");
  } finally {
    blocker.close();
  }
  assert.deepEqual(await toolCalls(server, org), []);
});

Deno.test("closing the server ends idle gRPC connections instead of waiting for them", async () => {
  const server = await startTestServer();
  let session: http2.ClientHttp2Session | null = null;
  try {
    const org = await server.createOrg();
    session = http2.connect(server.grpcUrl!);
    const closed = new Promise<void>((resolve) => session!.on("close", () => resolve()));
    const answer = await grpcCall(server.grpcUrl!, LOGS_EXPORT, new Uint8Array(), {
      key: org.ingestKey,
      session,
    });
    assert.equal(answer.grpcStatus, 0);
    const started = performance.now();
    await server.close();
    assert.ok(performance.now() - started < 5_000, "close did not wait for the idle connection");
    await closed;
  } finally {
    await server.close();
    if (session) await closeSession(session);
  }
});

Deno.test("--grpc-listen: default 127.0.0.1:4317, the environment, and off", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const none = () => undefined;
    assert.deepEqual(resolveServeConfig({ data: dir }, none).grpcListen, {
      hostname: "127.0.0.1",
      port: 4317,
    });
    assert.deepEqual(
      resolveServeConfig(
        { data: dir },
        (name) => name === "AGENT_TELEMETRY_GRPC_LISTEN" ? "127.0.0.2:14317" : undefined,
      ).grpcListen,
      { hostname: "127.0.0.2", port: 14317 },
    );
    assert.equal(resolveServeConfig({ data: dir, grpcListen: "off" }, none).grpcListen, null);
    assert.throws(
      () => resolveServeConfig({ data: dir, grpcListen: "4317" }, none),
      /Invalid listen address: "4317"/,
    );
    const off = await startTestServer({ dir: `${dir}/off`, flags: { grpcListen: "off" } });
    try {
      assert.equal(off.grpcUrl, null);
    } finally {
      await off.close();
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("serve announces the OTLP/gRPC listener before the OTLP/HTTP line", async () => {
  const dir = await Deno.makeTempDir();
  const { child, stdout } = await spawnCli(serveArgs(dir), /OTLP ingest listening on/);
  try {
    const grpc = /OTLP\/gRPC ingest listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(stdout)?.[1];
    assert.ok(grpc, stdout);
    const answer = await grpcCall(grpc, LOGS_EXPORT, new Uint8Array(), { key: null });
    assert.equal(answer.grpcStatus, 16);
  } finally {
    child.kill("SIGTERM");
    await child.status;
    await Deno.remove(dir, { recursive: true });
  }
});
