/**
 * An HTTP listener that cuts connections which hold a slot without sending:
 * `Deno.serve` (Deno 2.9) has no header, body or idle timeout of its own —
 * measured: a silent connection, one trickling its headers a byte a second and
 * one trickling its body all stayed open 130 s+ — so connections are accepted
 * here and each is served on its own, with an abort signal that closes it
 * when a deadline passes:
 *
 * - headers: a new connection must deliver a whole request head in time;
 * - body: a request with a body must be read and answered in time;
 * - idle: a kept-alive connection must start its next request in time (its
 *   head included);
 * - drain: at shutdown, a connection still answering is cut after a while.
 *
 * Serving one accepted connection uses the runtime's
 * `serveHttpOnConnection`, the function `Deno.serve` itself is built on; it
 * is not a public API, so when a runtime lacks it the listener falls back to
 * plain `Deno.serve` and says once that the deadlines are off (the tests of
 * `tests/read_timeouts_test.ts` fail then).
 *
 * @module
 */
import { log } from "../log.ts";

/** How long a connection may take for each part of a request, in milliseconds. */
export interface ReadDeadlines {
  /** From accepting a connection to a complete first request head. */
  headersMs: number;
  /** From a request with a body starting to its answer. */
  bodyMs: number;
  /** From an answer to the next request head on a kept-alive connection. */
  idleMs: number;
  /**
   * From the start of a shutdown to cutting a connection still answering: a
   * streamed answer (an export) waits on its client, which may have stopped
   * reading.
   */
  drainMs: number;
}

/** The deadlines of both listeners: well above any agent's exporter, far below a slot's worth. */
export const DEFAULT_READ_DEADLINES: ReadDeadlines = {
  headersMs: 10_000,
  bodyMs: 30_000,
  idleMs: 60_000,
  drainMs: 30_000,
};

/** Which deadline cut a connection. */
export type DeadlinePhase = "headers" | "body" | "idle";

/** What {@link serveWithDeadlines} needs. */
export interface DeadlineServeOptions {
  hostname: string;
  port: number;
  tls?: { cert: string; key: string } | null;
  deadlines: ReadDeadlines;
  onError: (error: unknown) => Response | Promise<Response>;
  /** Called each time a deadline closes a connection. */
  onCut?: (phase: DeadlinePhase) => void;
}

/** A listening server. */
export interface HttpListener {
  addr: Deno.NetAddr;
  /** Stops accepting, lets in-flight requests finish, closes idle connections. */
  shutdown(): Promise<void>;
}

type Handler = (request: Request) => Promise<Response>;

interface ConnectionServer {
  finished: Promise<void>;
  shutdown(): Promise<void>;
}

type ServeOnConnection = (
  conn: Deno.Conn,
  signal: AbortSignal,
  handler: (request: Request, info: Deno.ServeHandlerInfo) => Promise<Response>,
  onError: (error: unknown) => Response | Promise<Response>,
  onListen: () => void,
) => ConnectionServer;

function runtimeServeOnConnection(): ServeOnConnection | null {
  const deno = Deno as unknown as Record<symbol, Record<string, unknown> | undefined>;
  const internal = deno[(Deno as unknown as { internal: symbol }).internal];
  const serve = internal?.serveHttpOnConnection;
  return typeof serve === "function" ? serve as ServeOnConnection : null;
}

/** Serves `handler` on `hostname:port` with the read deadlines of `options`. */
export function serveWithDeadlines(
  options: DeadlineServeOptions,
  handler: Handler,
): HttpListener {
  const serveOnConnection = runtimeServeOnConnection();
  if (serveOnConnection === null) {
    log("warn", "this Deno runtime cannot serve one connection at a time: read timeouts are off");
    const server = Deno.serve({
      hostname: options.hostname,
      port: options.port,
      ...(options.tls ?? {}),
      onListen: () => {},
      onError: options.onError,
    }, handler);
    return { addr: server.addr, shutdown: () => server.shutdown() };
  }
  const listener: Deno.Listener<Deno.Conn, Deno.NetAddr> = options.tls
    ? Deno.listenTls({
      hostname: options.hostname,
      port: options.port,
      cert: options.tls.cert,
      key: options.tls.key,
      alpnProtocols: ["h2", "http/1.1"],
    })
    : Deno.listen({ hostname: options.hostname, port: options.port });
  const connections = new Set<{
    server: ConnectionServer;
    idle: () => boolean;
    cut: () => void;
    /** Resolves once the connection has no answer in progress or is cut (at shutdown). */
    settled: Promise<void>;
  }>();
  let closing = false;

  const serveConnection = (conn: Deno.Conn) => {
    const abort = new AbortController();
    let timer: ReturnType<typeof setTimeout> | undefined;
    let active = 0;
    const settled = Promise.withResolvers<void>();
    const cutAfter = (ms: number, phase: DeadlinePhase) => {
      clearTimeout(timer);
      timer = setTimeout(() => {
        log("debug", "connection closed by a read deadline", { phase });
        options.onCut?.(phase);
        abort.abort();
      }, ms);
    };
    cutAfter(options.deadlines.headersMs, "headers");
    const server = serveOnConnection(
      conn,
      abort.signal,
      async (request, info) => {
        active++;
        clearTimeout(timer);
        if (request.body !== null) cutAfter(options.deadlines.bodyMs, "body");
        try {
          return await handler(request);
        } finally {
          // The idle clock starts once the answer is sent, so a slow reader is timed as idle.
          info.completed.finally(() => {
            if (--active > 0) return;
            if (closing) {
              abort.abort();
              settled.resolve();
            } else {
              cutAfter(options.deadlines.idleMs, "idle");
            }
          });
        }
      },
      options.onError,
      () => {},
    );
    const entry = {
      server,
      idle: () => active === 0,
      cut: () => {
        abort.abort();
        settled.resolve();
      },
      settled: settled.promise,
    };
    connections.add(entry);
    server.finished.catch(() => {}).finally(() => {
      clearTimeout(timer);
      connections.delete(entry);
    });
  };

  const accepting = (async () => {
    for (;;) {
      let conn: Deno.Conn;
      try {
        conn = await listener.accept();
      } catch (error) {
        if (closing) return;
        if (error instanceof Deno.errors.BadResource) return;
        log("warn", "accepting a connection failed", { error: String(error) });
        continue;
      }
      serveConnection(conn);
    }
  })();

  return {
    addr: listener.addr,
    async shutdown() {
      closing = true;
      listener.close();
      await accepting;
      const open = [...connections];
      for (const connection of open) if (connection.idle()) connection.cut();
      // A connection still answering is cut when its answer is sent (above), or at the drain
      // deadline; only then is it shut down (the runtime cannot cut one shutting down).
      const drain = setTimeout(() => {
        for (const connection of open) connection.cut();
      }, options.deadlines.drainMs);
      await Promise.all(open.map(async (connection) => {
        await connection.settled;
        await connection.server.shutdown().catch(() => {});
      }));
      clearTimeout(drain);
    },
  };
}
