/**
 * A loopback OTLP/HTTP recorder: agents export to it, it keeps every request
 * exactly as sent (path, content type and encoding, body bytes) and forwards
 * it to the real ingest listener, answering with the listener's answer.
 *
 * @module
 */
import { type LoopbackServer, serveLoopback } from "./_loopback.ts";

/** One OTLP request as an agent sent it. */
export interface RecordedRequest {
  /** `/v1/logs`, `/v1/traces`, `/v1/metrics` (or a gRPC method path). */
  path: string;
  contentType: string;
  /** `gzip` or null. */
  contentEncoding: string | null;
  /** `http` or `grpc`: how the agent sent it. */
  transport: "http" | "grpc";
  body: Uint8Array;
  /** The status the ingest listener answered. */
  status: number;
}

/** A running recorder: agents export to its `url`. */
export interface Recorder extends LoopbackServer {
  requests: RecordedRequest[];
}

/** Starts a recorder forwarding to `ingestUrl` with the agent's own headers. */
export async function startRecorder(ingestUrl: string): Promise<Recorder> {
  const requests: RecordedRequest[] = [];
  const server = await serveLoopback(async (request) => {
    const url = new URL(request.url);
    const body = new Uint8Array(await request.arrayBuffer());
    const headers = new Headers();
    for (const name of ["content-type", "content-encoding", "authorization"]) {
      const value = request.headers.get(name);
      if (value !== null) headers.set(name, value);
    }
    const answer = await fetch(ingestUrl + url.pathname, {
      method: request.method,
      headers,
      body,
    });
    const answerBody = new Uint8Array(await answer.arrayBuffer());
    requests.push({
      path: url.pathname,
      contentType: request.headers.get("content-type") ?? "",
      contentEncoding: request.headers.get("content-encoding"),
      transport: "http",
      body,
      status: answer.status,
    });
    return new Response(answerBody, {
      status: answer.status,
      headers: { "content-type": answer.headers.get("content-type") ?? "" },
    });
  });
  return { ...server, requests };
}
