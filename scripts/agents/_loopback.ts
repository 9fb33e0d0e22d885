/**
 * HTTP servers on loopback for the harness: the OTLP recorder and the mock
 * models the clients talk to, each on a free port of its own.
 *
 * @module
 */

/** A running loopback server; disposing of it shuts it down. */
export interface LoopbackServer extends AsyncDisposable {
  /** `http://127.0.0.1:<port>`. */
  url: string;
  close(): Promise<void>;
}

/** Serves `handler` on 127.0.0.1 at a free port. */
export async function serveLoopback(handler: Deno.ServeHandler): Promise<LoopbackServer> {
  const { promise, resolve } = Promise.withResolvers<Deno.NetAddr>();
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: resolve }, handler);
  const addr = await promise;
  const close = () => server.shutdown();
  return { url: `http://127.0.0.1:${addr.port}`, close, [Symbol.asyncDispose]: close };
}
