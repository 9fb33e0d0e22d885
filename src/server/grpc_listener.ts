/**
 * The OTLP/gRPC listener (docs/design.md §4.1): the logs, traces and metrics `Export`
 * methods over HTTP/2 (`node:http2`; h2c without TLS), each request one
 * length-prefixed protobuf message, identity or gzip. The export itself is
 * `otlp_export.ts`, shared with OTLP/HTTP; this module only frames messages
 * and turns outcomes into gRPC statuses.
 *
 * @module
 */
import { NamedError } from "../errors.ts";
import { Buffer } from "node:buffer";
import http2 from "node:http2";
import type { ListenAddress } from "../config.ts";
import {
  encodeExportResponse,
  OtlpDecodeError,
  PayloadTooLargeError,
  readBody,
  type Signal,
} from "../ingest/otlp/mod.ts";
import { type GrpcFailure, type GrpcStatusName, statusTrailers } from "./grpc_status.ts";
import { recordRequest } from "../http/observe.ts";
import {
  type OtlpExportDeps,
  type OtlpExportOutcome,
  receiveOtlpExport,
  REFUSALS,
  retryAfterOf,
} from "./otlp_export.ts";

/** The OTLP services and the signal each one carries. */
const METHODS: Record<string, Signal> = {
  "/opentelemetry.proto.collector.logs.v1.LogsService/Export": "logs",
  "/opentelemetry.proto.collector.trace.v1.TraceService/Export": "traces",
  "/opentelemetry.proto.collector.metrics.v1.MetricsService/Export": "metrics",
};

const ACCEPT_ENCODING = "identity,gzip";

/**
 * A connection that has not sent the HTTP/2 client preface (with its SETTINGS)
 * this long after it was accepted is destroyed; with TLS, the TLS handshake
 * has as long again. Afterwards the idle rules below govern it.
 */
export const HANDSHAKE_TIMEOUT_MS = 10_000;
/** A stream that sends nothing for this long is cancelled (a trickling or stalled client). */
const STREAM_IDLE_MS = 30_000;
/** A connection without streams for this long is closed; exporters reconnect. */
const SESSION_IDLE_MS = 300_000;
/** How long `close()` lets in-flight exports finish before it cuts connections. */
const CLOSE_GRACE_MS = 10_000;

/** What the gRPC listener needs beyond the shared export. */
export interface GrpcListenerDeps extends OtlpExportDeps {
  /** The largest message accepted, compressed or not (`--ingest-max-bytes`). */
  maxBytes: number;
  logError: (error: unknown) => void;
}

/** A running gRPC listener. */
export interface GrpcListener {
  /** `http://host:port` (h2c) or `https://host:port`, as exporters are configured. */
  url: string;
  /** Stops accepting, lets in-flight exports finish (up to a grace period), closes connections. */
  close(): Promise<void>;
}

/** Starts the OTLP/gRPC listener on `address`, with TLS when given. */
export async function startGrpcListener(
  address: ListenAddress,
  tls: { cert: string; key: string } | null,
  deps: GrpcListenerDeps,
): Promise<GrpcListener> {
  const server = tls
    ? http2.createSecureServer({
      cert: tls.cert,
      key: tls.key,
      allowHTTP1: false,
      handshakeTimeout: HANDSHAKE_TIMEOUT_MS,
    })
    : http2.createServer();
  const sessions = new Set<http2.ServerHttp2Session>();
  server.on("session", (session) => {
    sessions.add(session);
    session.setTimeout(SESSION_IDLE_MS, () => session.close());
    const handshake = setTimeout(() => session.destroy(), HANDSHAKE_TIMEOUT_MS);
    session.once("remoteSettings", () => clearTimeout(handshake));
    session.on("close", () => {
      clearTimeout(handshake);
      sessions.delete(session);
    });
    // A client that resets its connection is no fault of ours.
    session.on("error", () => {});
  });
  server.on("stream", (stream, headers) => {
    stream.on("error", () => {});
    answer(stream as http2.ServerHttp2Stream, headers, deps).catch(deps.logError);
  });
  const { promise: listening, resolve, reject } = Promise.withResolvers<void>();
  server.once("error", reject);
  server.listen(address.port, address.hostname, () => resolve());
  await listening;
  server.off("error", reject);
  server.on("error", deps.logError);
  const bound = server.address();
  if (bound === null || typeof bound === "string") throw new Error("gRPC listener has no port");
  const host = bound.address.includes(":") ? `[${bound.address}]` : bound.address;
  let closing: Promise<void> | null = null;
  return {
    url: `${tls ? "https" : "http"}://${host}:${bound.port}`,
    close: () => closing ??= closeServer(server, sessions),
  };
}

async function closeServer(
  server: http2.Http2Server | http2.Http2SecureServer,
  sessions: Set<http2.ServerHttp2Session>,
): Promise<void> {
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  for (const session of sessions) session.close();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const grace = new Promise<void>((resolve) => timer = setTimeout(resolve, CLOSE_GRACE_MS));
  await Promise.race([closed, grace]);
  clearTimeout(timer);
  for (const session of sessions) session.destroy();
  await closed;
}

/** Answers one stream and counts it. */
async function answer(
  stream: http2.ServerHttp2Stream,
  headers: http2.IncomingHttpHeaders,
  deps: GrpcListenerDeps,
): Promise<void> {
  const started = performance.now();
  const path = headers[":path"] ?? "";
  const signal = METHODS[path];
  const status = await exchange(stream, headers, signal, deps);
  recordRequest(deps.metrics, {
    requestId: crypto.randomUUID(),
    listener: "grpc",
    method: headers[":method"] ?? "",
    route: signal === undefined ? "unmatched" : path,
    status,
    seconds: (performance.now() - started) / 1000,
  });
}

/** Runs the exchange; resolves with the status sent (a gRPC status name, or an HTTP status). */
async function exchange(
  stream: http2.ServerHttp2Stream,
  headers: http2.IncomingHttpHeaders,
  signal: Signal | undefined,
  deps: GrpcListenerDeps,
): Promise<GrpcStatusName | number> {
  if (headers[":method"] !== "POST") {
    respondHttp(stream, 405, { allow: "POST" });
    return 405;
  }
  if (!/^application\/grpc(\+proto)?(;|$)/.test(headers["content-type"] ?? "")) {
    respondHttp(stream, 415, {});
    return 415;
  }
  if (signal === undefined) {
    return fail(stream, {
      status: "UNIMPLEMENTED",
      message: `Unknown method: "${headers[":path"] ?? ""}"`,
    });
  }
  const encoding = String(headers["grpc-encoding"] ?? "identity").toLowerCase();
  if (encoding !== "identity" && encoding !== "gzip") {
    return fail(stream, {
      status: "UNIMPLEMENTED",
      message: `Unsupported grpc-encoding: "${encoding}" (supported: ${ACCEPT_ENCODING})`,
    });
  }
  stream.setTimeout(STREAM_IDLE_MS, () => stream.close(http2.constants.NGHTTP2_CANCEL));
  let outcome: OtlpExportOutcome;
  try {
    outcome = await receiveOtlpExport(deps, {
      authorization: headerValue(headers.authorization),
      pathSignal: signal,
      readBody: async () => ({
        encoding: "protobuf",
        body: await readMessage(stream, deps.maxBytes, encoding === "gzip"),
      }),
    });
  } catch (error) {
    if (error instanceof StreamClosedError) return "CANCELLED";
    deps.logError(error);
    return fail(stream, { status: "INTERNAL", message: "internal error; retry later" });
  }
  if (!outcome.accepted) {
    const retryAfterSeconds = retryAfterOf(outcome);
    return fail(stream, {
      status: REFUSALS[outcome.refusal].grpc,
      message: outcome.message,
      ...(retryAfterSeconds === undefined ? {} : { retryAfterSeconds }),
    });
  }
  const response = encodeExportResponse(outcome.signal, "protobuf", outcome.partial).body;
  if (stream.closed) return "CANCELLED";
  stream.respond({
    ":status": 200,
    "content-type": "application/grpc",
    "grpc-accept-encoding": ACCEPT_ENCODING,
  }, { waitForTrailers: true });
  stream.on("wantTrailers", () => stream.sendTrailers(statusTrailers(null)));
  stream.end(frame(response));
  return "OK";
}

/** A trailers-only answer; a request body not yet read is refused with RST_STREAM(NO_ERROR). */
function fail(stream: http2.ServerHttp2Stream, failure: GrpcFailure): GrpcStatusName {
  if (stream.closed) return "CANCELLED";
  stream.respond({
    ":status": 200,
    "content-type": "application/grpc",
    "grpc-accept-encoding": ACCEPT_ENCODING,
    ...statusTrailers(failure),
  }, { endStream: true });
  stopReading(stream);
  return failure.status;
}

function respondHttp(
  stream: http2.ServerHttp2Stream,
  status: number,
  headers: Record<string, string>,
): void {
  if (stream.closed) return;
  stream.respond({ ":status": status, ...headers }, { endStream: true });
  stopReading(stream);
}

function stopReading(stream: http2.ServerHttp2Stream): void {
  if (!stream.readableEnded) stream.close(http2.constants.NGHTTP2_NO_ERROR);
}

function headerValue(value: string | string[] | undefined): string | null {
  if (value === undefined) return null;
  return Array.isArray(value) ? (value.length === 1 ? value[0]! : null) : value;
}

/** One length-prefixed message: compressed flag, 4-byte big-endian length, payload. */
function frame(message: Uint8Array): Uint8Array {
  const framed = new Uint8Array(5 + message.byteLength);
  new DataView(framed.buffer).setUint32(1, message.byteLength);
  framed.set(message, 5);
  return framed;
}

/** The client went away before its message was read: there is no one to answer. */
class StreamClosedError extends NamedError {}

/**
 * Reads the request's one message under the cap: its declared length is
 * checked as soon as the 5-byte prefix arrives (nothing more is buffered past
 * the cap), and a gzip message is inflated with the same bomb-safe reader as
 * OTLP/HTTP bodies.
 */
async function readMessage(
  stream: http2.ServerHttp2Stream,
  maxBytes: number,
  gzipAllowed: boolean,
): Promise<Uint8Array> {
  const framed = await readFramed(stream, maxBytes);
  const compressed = framed[0];
  const payload = framed.subarray(5);
  if (compressed === 0) return payload;
  if (compressed !== 1) throw new OtlpDecodeError(`Invalid gRPC message flag: ${compressed}`);
  if (!gzipAllowed) {
    throw new OtlpDecodeError("Compressed gRPC message without grpc-encoding");
  }
  // readBody inflates a request body in bounded pieces and stops at the cap.
  return await readBody(
    new Request("http://grpc.invalid/", {
      method: "POST",
      body: payload as Uint8Array<ArrayBuffer>,
      headers: { "content-encoding": "gzip" },
    }),
    maxBytes,
  );
}

function readFramed(stream: http2.ServerHttp2Stream, maxBytes: number): Promise<Uint8Array> {
  const { promise, resolve, reject } = Promise.withResolvers<Uint8Array>();
  const chunks: Buffer[] = [];
  let size = 0;
  let declared: number | null = null;
  const finish = (error: Error | null) => {
    stream.off("data", onData);
    stream.off("end", onEnd);
    stream.off("close", onClose);
    if (error) {
      stream.pause();
      reject(error);
      return;
    }
    resolve(Buffer.concat(chunks, size));
  };
  const onData = (chunk: Buffer) => {
    chunks.push(chunk);
    size += chunk.byteLength;
    if (declared === null && size >= 5) {
      declared = Buffer.concat(chunks, size).readUInt32BE(1);
      if (declared > maxBytes) {
        finish(new PayloadTooLargeError(`Message is larger than the limit: ${maxBytes} bytes`));
        return;
      }
    }
    if (declared !== null && size > declared + 5) {
      finish(new OtlpDecodeError("Expected one gRPC message, got more"));
    }
  };
  const onEnd = () => {
    if (size === 0) finish(new OtlpDecodeError("Expected one gRPC message, got none"));
    else if (declared === null || size < declared + 5) {
      finish(new OtlpDecodeError("Truncated gRPC message"));
    } else finish(null);
  };
  const onClose = () => finish(new StreamClosedError("The client closed the stream"));
  stream.on("data", onData);
  stream.on("end", onEnd);
  stream.on("close", onClose);
  // The stream may have ended or closed while the key was checked: a HEADERS
  // frame with END_STREAM (no message) is ended before anyone reads it.
  if (stream.closed) onClose();
  else if (stream.readableEnded) onEnd();
  return promise;
}
