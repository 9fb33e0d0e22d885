/**
 * A loopback OTLP/HTTP recorder: agents export to it, it keeps every request
 * exactly as sent (path, content type and encoding, body bytes) and forwards
 * it to the real ingest listener, answering with the listener's answer.
 *
 * @module
 */

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

/** A running recorder. */
export interface Recorder extends AsyncDisposable {
  /** Base URL agents export to (`http://127.0.0.1:<port>`). */
  url: string;
  requests: RecordedRequest[];
  close(): Promise<void>;
}

/** Starts a recorder forwarding to `ingestUrl` with the agent's own headers. */
export async function startRecorder(ingestUrl: string): Promise<Recorder> {
  const requests: RecordedRequest[] = [];
  const { promise, resolve } = Promise.withResolvers<Deno.NetAddr>();
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: resolve },
    async (request) => {
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
    },
  );
  const addr = await promise;
  const close = () => server.shutdown();
  return {
    url: `http://127.0.0.1:${addr.port}`,
    requests,
    close,
    [Symbol.asyncDispose]: close,
  };
}
