/**
 * Read deadlines on both HTTP listeners (issue #14, finding 7): silent,
 * trickling and idle kept-alive connections are closed within their bound;
 * a client inside the bounds is served. Deadlines are shortened for the test
 * through the server's test overrides; loopback only, every wait bounded.
 */
import assert from "node:assert/strict";
import { startTestServer, type TestServer } from "./_harness.ts";
import { claudeExport, toolResult } from "./_otlp.ts";
import { T0 } from "./_scenario.ts";

const DEADLINES = { headersMs: 800, bodyMs: 1200, idleMs: 1000 };
/** Slack for timers and a loaded machine: a cut must come within the bound plus this. */
const SLACK_MS = 1500;
/** How long a test waits at most for a connection to be closed. */
const GIVE_UP_MS = 8000;

const encoder = new TextEncoder();

/** A raw TCP client of one listener, reading everything the server sends. */
class RawClient {
  readonly conn: Deno.Conn;
  readonly opened = performance.now();
  received = "";
  closedAt: number | null = null;
  readonly #reading: Promise<void>;

  constructor(conn: Deno.Conn) {
    this.conn = conn;
    this.#reading = (async () => {
      const buffer = new Uint8Array(4096);
      const decoder = new TextDecoder();
      for (;;) {
        let n: number | null;
        try {
          n = await conn.read(buffer);
        } catch {
          n = null;
        }
        if (n === null) break;
        this.received += decoder.decode(buffer.subarray(0, n));
      }
      this.closedAt = performance.now();
    })();
  }

  static async connect(url: string): Promise<RawClient> {
    const { hostname, port } = new URL(url);
    assert.equal(hostname, "127.0.0.1", "loopback only");
    return new RawClient(await Deno.connect({ hostname, port: Number(port) }));
  }

  /** Writes `text` one byte every `everyMs` until the server closes or `text` ends. */
  async trickle(text: string, everyMs: number): Promise<void> {
    for (const byte of encoder.encode(text)) {
      if (this.closedAt !== null) return;
      try {
        await this.conn.write(Uint8Array.of(byte));
      } catch {
        return;
      }
      await delay(everyMs);
    }
  }

  async write(text: string): Promise<void> {
    await this.conn.write(encoder.encode(text));
  }

  /** Milliseconds from `since` to the server closing, or null if it stayed open `GIVE_UP_MS`. */
  async closedAfter(since: number): Promise<number | null> {
    while (this.closedAt === null && performance.now() - since < GIVE_UP_MS) await delay(50);
    return this.closedAt === null ? null : this.closedAt - since;
  }

  async close(): Promise<void> {
    try {
      this.conn.close();
    } catch {
      // Already closed by the server.
    }
    await this.#reading;
  }
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

async function withServer(fn: (server: TestServer) => Promise<void>): Promise<void> {
  await using server = await startTestServer({ overrides: { readDeadlines: DEADLINES } });
  await fn(server);
}

function assertCutWithin(elapsed: number | null, bound: number, what: string) {
  assert.notEqual(elapsed, null, `${what}: still open after ${GIVE_UP_MS} ms`);
  assert.ok(elapsed! <= bound + SLACK_MS, `${what}: closed after ${elapsed} ms, bound ${bound}`);
}

Deno.test("a connection that sends nothing is closed after the headers deadline on both listeners", async () => {
  await withServer(async (server) => {
    for (const url of [server.queryUrl, server.ingestUrl]) {
      const client = await RawClient.connect(url);
      try {
        assertCutWithin(await client.closedAfter(client.opened), DEADLINES.headersMs, url);
        assert.equal(client.received, "", "nothing is answered");
      } finally {
        await client.close();
      }
    }
  });
});

Deno.test("a client trickling its headers a byte at a time is cut off on both listeners", async () => {
  await withServer(async (server) => {
    for (const url of [server.queryUrl, server.ingestUrl]) {
      const client = await RawClient.connect(url);
      try {
        // 60 bytes at 100 ms: a whole head would take 6 s, the deadline is 0.8 s.
        const head = `GET /healthz HTTP/1.1\r\nHost: x\r\nX-Pad: ${"a".repeat(20)}\r\n\r\n`;
        const trickling = client.trickle(head, 100);
        assertCutWithin(await client.closedAfter(client.opened), DEADLINES.headersMs, url);
        await trickling;
        assert.equal(client.received, "", "the request never reached a handler");
      } finally {
        await client.close();
      }
    }
  });
});

Deno.test("an export whose body trickles in is cut off after the body deadline", async () => {
  await withServer(async (server) => {
    const org = await server.createOrg();
    const body = JSON.stringify(claudeExport([
      toolResult({ session: "s", id: "c", tool: "Read", timeMs: T0 }),
    ]));
    const client = await RawClient.connect(server.ingestUrl);
    try {
      await client.write(
        `POST /v1/logs HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n` +
          `Authorization: Bearer ${org.ingestKey}\r\nContent-Length: ${body.length}\r\n\r\n`,
      );
      const headSent = performance.now();
      const trickling = client.trickle(body, 100);
      assertCutWithin(await client.closedAfter(headSent), DEADLINES.bodyMs, "body");
      await trickling;
    } finally {
      await client.close();
    }
    const calls = await server.getJson("/v1/tool-calls", org.apiKey);
    assert.deepEqual(calls.body.data, [], "nothing of the cut export is stored");
  });
});

Deno.test("a kept-alive connection that stays idle after an answer is closed", async () => {
  await withServer(async (server) => {
    for (const url of [server.queryUrl, server.ingestUrl]) {
      const client = await RawClient.connect(url);
      try {
        await client.write("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n");
        while (!client.received.includes('{"status":"ok"}') && client.closedAt === null) {
          await delay(20);
        }
        const answered = performance.now();
        assert.match(client.received, /^HTTP\/1\.1 200/);
        assertCutWithin(await client.closedAfter(answered), DEADLINES.idleMs, url);
      } finally {
        await client.close();
      }
    }
  });
});

Deno.test("clients inside the deadlines are served, and cuts are counted in /metrics", async () => {
  await withServer(async (server) => {
    const client = await RawClient.connect(server.queryUrl);
    try {
      // A head in 0.4 s (deadline 0.8 s), then a second request 0.5 s later (idle deadline 1 s).
      await client.trickle("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n", 10);
      while (!client.received.includes("}") && client.closedAt === null) await delay(20);
      await delay(500);
      await client.write("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n");
      while (client.received.split('{"status":"ok"}').length < 3 && client.closedAt === null) {
        await delay(20);
      }
      assert.equal(client.received.split("HTTP/1.1 200").length - 1, 2, client.received);
    } finally {
      await client.close();
    }
    const silent = await RawClient.connect(server.ingestUrl);
    await silent.closedAfter(silent.opened);
    await silent.close();
    const metrics = await (await fetch(`${server.ingestUrl}/metrics`)).text();
    assert.match(metrics, /^agent_telemetry_connections_timed_out_total\{phase="headers"\} [1-9]/m);
  });
});
