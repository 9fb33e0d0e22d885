/**
 * A raw OTLP/gRPC client for tests: one unary call over `node:http2` with
 * full control of the frame, headers and compression, answered with the
 * HTTP/2 headers, trailers and decoded gRPC status; plus a protobuf encoder
 * for small OTLP log export requests and decoders for what the server sends.
 *
 * @module
 */
import { Buffer } from "node:buffer";
import http2 from "node:http2";
import { gzipSync } from "node:zlib";
import { BinaryReader, BinaryWriter, WireType } from "@bufbuild/protobuf/wire";

/** The OTLP logs export method. */
export const LOGS_EXPORT = "/opentelemetry.proto.collector.logs.v1.LogsService/Export";
/** The OTLP traces export method. */
export const TRACES_EXPORT = "/opentelemetry.proto.collector.trace.v1.TraceService/Export";
/** The OTLP metrics export method. */
export const METRICS_EXPORT = "/opentelemetry.proto.collector.metrics.v1.MetricsService/Export";

/** How to send one call. */
export interface GrpcCallOptions {
  /** The ingest key; null sends no `authorization`. */
  key: string | null;
  /** Compress the message with gzip and say so in `grpc-encoding`. */
  gzip?: boolean;
  /** Overrides: a `grpc-encoding` header, the frame's compressed flag, or the whole body. */
  grpcEncoding?: string;
  compressedFlag?: number;
  body?: Uint8Array;
  /** An open session to reuse (left open); otherwise one is opened and closed. */
  session?: http2.ClientHttp2Session;
  /** TLS roots for `https://` URLs. */
  ca?: string;
}

/** What came back. */
export interface GrpcAnswer {
  httpStatus: number;
  /** `grpc-status`, from the trailers or a trailers-only answer. */
  grpcStatus: number;
  grpcMessage: string;
  /** `grpc-status-details-bin`, decoded from base64, when sent. */
  details: Uint8Array | null;
  /** The response message (unframed), when one was sent. */
  message: Uint8Array | null;
}

/** One unary call of `method` carrying `message`. */
export async function grpcCall(
  url: string,
  method: string,
  message: Uint8Array,
  options: GrpcCallOptions,
): Promise<GrpcAnswer> {
  const session = options.session ?? http2.connect(url, options.ca ? { ca: options.ca } : {});
  try {
    const payload = options.gzip ? new Uint8Array(gzipSync(message)) : message;
    const body = options.body ?? frame(payload, options.compressedFlag ?? (options.gzip ? 1 : 0));
    const headers: http2.OutgoingHttpHeaders = {
      ":method": "POST",
      ":path": method,
      "content-type": "application/grpc",
      te: "trailers",
    };
    const encoding = options.grpcEncoding ?? (options.gzip ? "gzip" : undefined);
    if (encoding !== undefined) headers["grpc-encoding"] = encoding;
    if (options.key !== null) headers.authorization = `Bearer ${options.key}`;
    const stream = session.request(headers);
    const { promise, resolve, reject } = Promise.withResolvers<GrpcAnswer>();
    let responseHeaders: http2.IncomingHttpHeaders = {};
    let trailers: http2.IncomingHttpHeaders = {};
    const chunks: Buffer[] = [];
    stream.on("response", (h) => responseHeaders = h);
    stream.on("trailers", (t) => trailers = t);
    stream.on("data", (chunk: Buffer) => chunks.push(chunk));
    stream.on("error", reject);
    stream.on("close", () => {
      const all = { ...responseHeaders, ...trailers };
      const received = Buffer.concat(chunks);
      const details = all["grpc-status-details-bin"];
      resolve({
        httpStatus: Number(responseHeaders[":status"]),
        grpcStatus: Number(all["grpc-status"] ?? NaN),
        grpcMessage: decodeURIComponent(String(all["grpc-message"] ?? "")),
        details: typeof details === "string"
          ? new Uint8Array(Buffer.from(details, "base64"))
          : null,
        message: received.length >= 5 ? new Uint8Array(received.subarray(5)) : null,
      });
    });
    // A server that refuses early resets the stream: the write may then fail.
    stream.end(body, () => {});
    return await promise;
  } finally {
    if (!options.session) await closeSession(session);
  }
}

/** Closes a client session and waits until it is closed. */
export function closeSession(session: http2.ClientHttp2Session): Promise<void> {
  if (session.closed) return Promise.resolve();
  return new Promise((resolve) => session.close(() => resolve()));
}

/** A length-prefixed gRPC message. */
export function frame(message: Uint8Array, compressedFlag = 0): Uint8Array {
  const framed = new Uint8Array(5 + message.byteLength);
  framed[0] = compressedFlag;
  new DataView(framed.buffer).setUint32(1, message.byteLength);
  framed.set(message, 5);
  return framed;
}

/** A log record of an export request: string attributes only, as Claude Code sends them. */
export interface LogSpec {
  timeMs: number;
  body: string;
  attributes: Record<string, string>;
}

/** `ExportLogsServiceRequest` with one resource and its records, in protobuf. */
export function logsRequest(resource: Record<string, string>, records: LogSpec[]): Uint8Array {
  const writer = new BinaryWriter().tag(1, WireType.LengthDelimited).fork(); // resource_logs
  writer.tag(1, WireType.LengthDelimited).fork(); // resource
  keyValues(writer, 1, resource);
  writer.join();
  writer.tag(2, WireType.LengthDelimited).fork(); // scope_logs
  for (const record of records) {
    const nanos = BigInt(record.timeMs) * 1_000_000n;
    writer.tag(2, WireType.LengthDelimited).fork() // log_records
      .tag(1, WireType.Bit64).fixed64(nanos)
      .tag(5, WireType.LengthDelimited).fork().tag(1, WireType.LengthDelimited).string(
        record.body,
      ).join();
    keyValues(writer, 6, record.attributes);
    writer.tag(11, WireType.Bit64).fixed64(nanos).join();
  }
  return writer.join().join().finish();
}

function keyValues(writer: BinaryWriter, field: number, values: Record<string, string>): void {
  for (const [key, value] of Object.entries(values)) {
    writer.tag(field, WireType.LengthDelimited).fork()
      .tag(1, WireType.LengthDelimited).string(key)
      .tag(2, WireType.LengthDelimited).fork().tag(1, WireType.LengthDelimited).string(value)
      .join().join();
  }
}

/** `partial_success` of an `Export*ServiceResponse`, or null when absent. */
export function partialSuccess(
  response: Uint8Array,
): { rejected: bigint; message: string } | null {
  const reader = new BinaryReader(response);
  while (reader.pos < reader.len) {
    const [field, wireType] = reader.tag();
    if (field !== 1) {
      reader.skip(wireType);
      continue;
    }
    const inner = new BinaryReader(reader.bytes());
    const partial = { rejected: 0n, message: "" };
    while (inner.pos < inner.len) {
      const [f, w] = inner.tag();
      if (f === 1) partial.rejected = BigInt(inner.int64());
      else if (f === 2) partial.message = inner.string();
      else inner.skip(w);
    }
    return partial;
  }
  return null;
}

/** `google.rpc.Status` with the retry delay of its `google.rpc.RetryInfo` detail, if any. */
export function rpcStatus(
  bytes: Uint8Array,
): { code: number; message: string; retryDelaySeconds: number | null } {
  const reader = new BinaryReader(bytes);
  const status = { code: 0, message: "", retryDelaySeconds: null as number | null };
  while (reader.pos < reader.len) {
    const [field, wireType] = reader.tag();
    if (field === 1) status.code = reader.int32();
    else if (field === 2) status.message = reader.string();
    else if (field === 3) {
      const any = new BinaryReader(reader.bytes());
      let typeUrl = "";
      let value: Uint8Array = new Uint8Array(0);
      while (any.pos < any.len) {
        const [f, w] = any.tag();
        if (f === 1) typeUrl = any.string();
        else if (f === 2) value = any.bytes();
        else any.skip(w);
      }
      if (typeUrl === "type.googleapis.com/google.rpc.RetryInfo") {
        const retryInfo = new BinaryReader(value);
        retryInfo.tag();
        const duration = new BinaryReader(retryInfo.bytes());
        duration.tag();
        status.retryDelaySeconds = Number(duration.int64());
      }
    } else reader.skip(wireType);
  }
  return status;
}
