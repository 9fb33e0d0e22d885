/**
 * A loopback OTLP/gRPC recorder: agents export to it over h2c; it keeps each
 * unary `Export` call's message exactly as sent (the bytes inside the gRPC
 * frame, still gzip-compressed when the agent compressed it, with
 * `contentEncoding` = its `grpc-encoding`), with transport `grpc` and the
 * method path, and forwards the call to our real gRPC listener (or, where
 * none runs, to the ingest listener's `/v1/<signal>` as OTLP/HTTP protobuf:
 * the same `Export…ServiceRequest`), answering the agent with what that
 * answered.
 *
 * A recorded call's `status` is the HTTP status the same message gets on
 * `/v1/<signal>` (gRPC OK → 200, UNAUTHENTICATED → 401, …), so the replay
 * test can post it over OTLP/HTTP (with `Content-Encoding` = the recorded
 * encoding) and compare.
 *
 * @module
 */
import { Buffer } from "node:buffer";
import http2 from "node:http2";
import type { RecordedRequest, Recorder } from "./_recorder.ts";

/** The OTLP gRPC methods and the OTLP/HTTP path carrying the same message. */
export const GRPC_METHOD_PATHS: Record<string, string> = {
  "/opentelemetry.proto.collector.logs.v1.LogsService/Export": "/v1/logs",
  "/opentelemetry.proto.collector.trace.v1.TraceService/Export": "/v1/traces",
  "/opentelemetry.proto.collector.metrics.v1.MetricsService/Export": "/v1/metrics",
};

/** gRPC status codes and the HTTP status OTLP/HTTP answers in the same case. */
const HTTP_OF_GRPC: Record<number, number> = {
  0: 200,
  3: 400,
  7: 403,
  8: 413,
  13: 500,
  14: 503,
  16: 401,
};
const GRPC_OF_HTTP: Record<number, number> = {
  200: 0,
  400: 3,
  401: 16,
  403: 7,
  413: 8,
  429: 14,
  503: 14,
};

/** What a gRPC unary call answered: its status, message and response message bytes. */
export interface GrpcAnswer {
  grpcStatus: number;
  grpcMessage: string;
  body: Uint8Array;
}

/** A running gRPC recorder. */
export interface GrpcRecorder extends Recorder {
  /** `127.0.0.1:<port>`, as gRPC exporters take it (`http://` + it for those wanting a URL). */
  address: string;
}

/**
 * Starts a gRPC recorder forwarding to our gRPC listener at `grpcUrl`
 * (`http://host:port`), or to `ingestUrl` over OTLP/HTTP protobuf when
 * `grpcUrl` is null.
 */
export async function startGrpcRecorder(
  grpcUrl: string | null,
  ingestUrl: string,
): Promise<GrpcRecorder> {
  const requests: RecordedRequest[] = [];
  const server = http2.createServer();
  server.on("stream", (anyStream, headers) => {
    const stream = anyStream as http2.ServerHttp2Stream;
    const chunks: Buffer[] = [];
    stream.on("data", (chunk: Buffer) => chunks.push(chunk));
    stream.on("end", async () => {
      const path = String(headers[":path"] ?? "");
      const encoding = typeof headers["grpc-encoding"] === "string" &&
          headers["grpc-encoding"] !== "identity"
        ? headers["grpc-encoding"]
        : null;
      const authorization = typeof headers.authorization === "string"
        ? headers.authorization
        : undefined;
      let answer: GrpcAnswer;
      try {
        const message = unframe(Buffer.concat(chunks));
        answer = grpcUrl === null
          ? await forwardHttp(ingestUrl, path, message, encoding, authorization)
          : await grpcUnary(grpcUrl, path, {
            ...(authorization === undefined ? {} : { authorization }),
            ...(encoding === null ? {} : { "grpc-encoding": encoding }),
          }, message);
        requests.push({
          path,
          contentType: String(headers["content-type"] ?? "application/grpc"),
          contentEncoding: encoding,
          transport: "grpc",
          body: message,
          status: HTTP_OF_GRPC[answer.grpcStatus] ?? 500,
        });
      } catch (error) {
        answer = { grpcStatus: 13, grpcMessage: String(error), body: new Uint8Array() };
      }
      stream.respond({ ":status": 200, "content-type": "application/grpc" }, {
        waitForTrailers: true,
      });
      stream.on("wantTrailers", () => {
        stream.sendTrailers({
          "grpc-status": String(answer.grpcStatus),
          ...(answer.grpcMessage === "" ? {} : { "grpc-message": encodeURI(answer.grpcMessage) }),
        });
      });
      stream.end(answer.grpcStatus === 0 ? frame(answer.body, false) : undefined);
    });
  });
  const { promise, resolve, reject } = Promise.withResolvers<void>();
  server.once("error", reject);
  server.listen(0, "127.0.0.1", () => resolve());
  await promise;
  const port = (server.address() as { port: number }).port;
  const close = async () => {
    const closed = Promise.withResolvers<void>();
    server.close(() => closed.resolve());
    await closed.promise;
  };
  return {
    address: `127.0.0.1:${port}`,
    url: `http://127.0.0.1:${port}`,
    requests,
    close,
    [Symbol.asyncDispose]: close,
  };
}

/**
 * One unary gRPC call to `grpcUrl` (`http://host:port`): `message` goes in one
 * frame, flagged compressed when `headers` carry a `grpc-encoding` other than
 * identity (the bytes must then already be compressed that way).
 */
export async function grpcUnary(
  grpcUrl: string,
  path: string,
  headers: Record<string, string>,
  message: Uint8Array,
): Promise<GrpcAnswer> {
  const session = http2.connect(grpcUrl);
  try {
    const connected = Promise.withResolvers<void>();
    session.once("connect", () => connected.resolve());
    session.once("error", connected.reject);
    await connected.promise;
    const compressed = headers["grpc-encoding"] !== undefined &&
      headers["grpc-encoding"] !== "identity";
    const request = session.request({
      ":method": "POST",
      ":path": path,
      "content-type": "application/grpc",
      te: "trailers",
      ...headers,
    });
    const chunks: Buffer[] = [];
    let head: http2.IncomingHttpHeaders = {};
    let trailers: http2.IncomingHttpHeaders = {};
    request.on("response", (h) => head = h);
    request.on("trailers", (t) => trailers = t);
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    const done = Promise.withResolvers<void>();
    request.on("end", () => done.resolve());
    request.on("error", done.reject);
    request.end(frame(message, compressed));
    await done.promise;
    // A trailers-only answer carries its status in the headers.
    const status = trailers["grpc-status"] ?? head["grpc-status"];
    const text = trailers["grpc-message"] ?? head["grpc-message"];
    const body = Buffer.concat(chunks);
    return {
      grpcStatus: status === undefined ? 13 : Number(status),
      grpcMessage: typeof text === "string" ? decodeURIComponent(text) : "",
      body: body.length >= 5 ? new Uint8Array(body.subarray(5)) : new Uint8Array(),
    };
  } finally {
    // Closed before the caller goes on (and a test stops the server): a
    // client session still closing when the server's GOAWAY arrived aborted
    // the test process in an nghttp2 assertion now and then.
    if (!session.closed) await new Promise<void>((resolve) => session.close(() => resolve()));
  }
}

async function forwardHttp(
  ingestUrl: string,
  path: string,
  message: Uint8Array,
  encoding: string | null,
  authorization: string | undefined,
): Promise<GrpcAnswer> {
  const httpPath = GRPC_METHOD_PATHS[path];
  if (httpPath === undefined) {
    return { grpcStatus: 12, grpcMessage: `Unknown method ${path}`, body: new Uint8Array() };
  }
  const headers = new Headers({ "content-type": "application/x-protobuf" });
  if (authorization !== undefined) headers.set("authorization", authorization);
  if (encoding !== null) headers.set("content-encoding", encoding);
  const response = await fetch(ingestUrl + httpPath, {
    method: "POST",
    headers,
    body: message as Uint8Array<ArrayBuffer>,
  });
  const body = new Uint8Array(await response.arrayBuffer());
  const grpcStatus = GRPC_OF_HTTP[response.status] ?? 13;
  return {
    grpcStatus,
    grpcMessage: grpcStatus === 0 ? "" : new TextDecoder().decode(body).slice(0, 200),
    body,
  };
}

/** The message bytes of a one-message gRPC request body. */
function unframe(body: Buffer): Uint8Array {
  if (body.length < 5) throw new Error("A gRPC request shorter than its frame header");
  const length = body.readUInt32BE(1);
  if (length !== body.length - 5) throw new Error("A gRPC request that is not one message");
  return new Uint8Array(body.subarray(5));
}

/** A gRPC frame around `message`, flagged compressed or not. */
function frame(message: Uint8Array, compressed: boolean): Buffer {
  const out = Buffer.alloc(5 + message.length);
  out[0] = compressed ? 1 : 0;
  out.writeUInt32BE(message.length, 1);
  out.set(message, 5);
  return out;
}
