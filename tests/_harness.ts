/**
 * Test harness: a real server on ephemeral loopback ports over a temporary
 * data directory, keys made through the same key store code the CLI uses,
 * and small HTTP helpers. Always shut down with `await using`.
 *
 * Engines: a test declared with {@link engineTest} runs on the embedded
 * SQLite store and, when `AGENT_TELEMETRY_TEST_DATABASE_URL` names a
 * PostgreSQL server, once more on a fresh PostgreSQL database of its own
 * (named `… [postgres]`): the parity run of docs/design.md §8.
 *
 * @module
 */
import { resolveServeConfig, type ServeFlags } from "../src/config.ts";
import { type RunningServer, type ServeOverrides, startServer } from "../src/server/server.ts";
import { openKeyStoreFor } from "../src/store/open_stores.ts";
import type { KeyStoreApi } from "../src/store/stores.ts";
import { createTestDatabase, pgTestUrl, type TestDatabase } from "./_pg.ts";

/** The storage engines a server can run on. */
export type Engine = "sqlite" | "postgres";

/** The engine the running {@link engineTest} variant uses (files run their tests one at a time). */
let currentEngine: Engine = "sqlite";

/** The engine of the test running now. */
export function testEngine(): Engine {
  return currentEngine;
}

/** Registers `fn` once per available engine; servers it starts use that engine. */
export function engineTest(
  name: string,
  fn: (t: Deno.TestContext) => Promise<void> | void,
  options: Omit<Deno.TestDefinition, "name" | "fn"> = {},
): void {
  const engines: Engine[] = pgTestUrl() ? ["sqlite", "postgres"] : ["sqlite"];
  for (const engine of engines) {
    Deno.test({
      ...options,
      name: engine === "sqlite" ? name : `${name} [postgres]`,
      fn: async (t) => {
        currentEngine = engine;
        try {
          await fn(t);
        } finally {
          currentEngine = "sqlite";
        }
      },
    });
  }
}

/** A store for a test server: a fresh PostgreSQL database on that engine, else none. */
export async function testDatabase(engine = currentEngine): Promise<TestDatabase | null> {
  return engine === "postgres" ? await createTestDatabase() : null;
}

/** An organization with a member, an API key and one actor. */
export interface TestOrg {
  orgId: string;
  memberId: string;
  apiKey: string;
  keyId: string;
  actorId: string;
  ingestKey: string;
}

/** A running test server and its data directory. */
export interface TestServer extends AsyncDisposable {
  dir: string;
  /** The PostgreSQL URL the server stores in, or null on the embedded store. */
  database: string | null;
  server: RunningServer;
  queryUrl: string;
  ingestUrl: string;
  /** The OTLP/gRPC listener (`http://127.0.0.1:<port>`, h2c), or null when turned off. */
  grpcUrl: string | null;
  /** GET on the query API with an optional Bearer key. */
  get(path: string, key?: string, init?: RequestInit): Promise<Response>;
  /** GET returning status and parsed JSON body. */
  // deno-lint-ignore no-explicit-any
  getJson(path: string, key: string): Promise<{ status: number; body: any }>;
  /** POSTs an OTLP/JSON body to the ingest listener. */
  ingest(path: string, body: unknown, ingestKey: string): Promise<Response>;
  createOrg(name?: string): Promise<TestOrg>;
  /** The server's key store, as the admin commands open it (close it after use). */
  keyStore(): Promise<KeyStoreApi>;
  close(): Promise<void>;
}

/** Starts a server on 127.0.0.1 with ephemeral ports over a fresh temp dir. */
export async function startTestServer(
  options: {
    flags?: ServeFlags;
    overrides?: ServeOverrides;
    dir?: string;
    /** An existing PostgreSQL database to use (kept), e.g. to restart over the same data. */
    database?: string;
  } = {},
): Promise<TestServer> {
  const dir = options.dir ?? await Deno.makeTempDir({ prefix: "agent-telemetry-test-" });
  const ownDatabase = options.database === undefined ? await testDatabase() : null;
  const database = options.database ?? ownDatabase?.url ?? null;
  const config = resolveServeConfig({
    data: dir,
    listen: "127.0.0.1:0",
    ingestListen: "127.0.0.1:0",
    grpcListen: "127.0.0.1:0",
    logLevel: "error",
    ...(database === null ? {} : { database }),
    ...options.flags,
  }, () => undefined);
  let server: RunningServer;
  try {
    // No background catch-up after writes unless a test asks for one: tests that
    // count catch-ups and cache hits must not race a timer.
    server = await startServer(config, {
      quiet: true,
      replicaFollowMs: null,
      ...options.overrides,
    });
  } catch (error) {
    await ownDatabase?.drop();
    throw error;
  }
  const get = (path: string, key?: string, init: RequestInit = {}) =>
    fetch(server.queryUrl + path, {
      ...init,
      headers: { ...(key ? { authorization: `Bearer ${key}` } : {}), ...init.headers },
    });
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    await server.close();
    await ownDatabase?.drop();
    if (!options.dir) await Deno.remove(dir, { recursive: true });
  };
  return {
    dir,
    database,
    server,
    queryUrl: server.queryUrl,
    ingestUrl: server.ingestUrl,
    grpcUrl: server.grpcUrl,
    get,
    async getJson(path, key) {
      const response = await get(path, key);
      const text = await response.text();
      return { status: response.status, body: text === "" ? null : JSON.parse(text) };
    },
    ingest(path, body, ingestKey) {
      return fetch(server.ingestUrl + path, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${ingestKey}` },
        body: JSON.stringify(body),
      });
    },
    createOrg(name = "Acme") {
      return createTestOrg(dir, name, database);
    },
    keyStore() {
      return openKeyStoreFor(dir, database);
    },
    close,
    [Symbol.asyncDispose]: close,
  };
}

/** Creates an org, member, API key and actor through the CLI's key store code. */
export async function createTestOrg(
  dir: string,
  name = "Acme",
  database: string | null = null,
): Promise<TestOrg> {
  const store = await openKeyStoreFor(dir, database);
  try {
    const org = await store.createOrg(name);
    const member = await store.addMember(org.id, `admin@${name.toLowerCase()}.test`);
    const key = await store.createKey(org.id, member.id, "test");
    const actor = await store.createActor(org.id, "dev");
    return {
      orgId: org.id,
      memberId: member.id,
      apiKey: key.key,
      keyId: key.id,
      actorId: actor.actor_id,
      ingestKey: actor.ingest_key,
    };
  } finally {
    await store.close();
  }
}

/** Runs the CLI in a subprocess, as a user would. */
export async function runCliProcess(
  args: string[],
): Promise<{ code: number; stdout: string; stderr: string }> {
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-all", new URL("../main.ts", import.meta.url).pathname, ...args],
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1" },
  }).output();
  const decoder = new TextDecoder();
  return {
    code: output.code,
    stdout: decoder.decode(output.stdout),
    stderr: decoder.decode(output.stderr),
  };
}

/** A CLI subprocess and what it printed on stdout until it was ready. */
export interface CliProcess {
  child: Deno.ChildProcess;
  stdout: string;
}

/**
 * Spawns the CLI (`main.ts …args`) and reads its stdout until `ready`
 * matches, e.g. the ingest listener line of `serve`. Stdout is then closed;
 * stderr is piped only when asked.
 */
export async function spawnCli(
  args: string[],
  ready: RegExp,
  options: { stderr?: "piped" | "null" } = {},
): Promise<CliProcess> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-all", new URL("../main.ts", import.meta.url).pathname, ...args],
    stdout: "piped",
    stderr: options.stderr ?? "null",
  }).spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let stdout = "";
  while (!ready.test(stdout)) {
    const { value, done } = await reader.read();
    if (done) break;
    stdout += value;
  }
  await reader.cancel();
  return { child, stdout };
}

/** The arguments of `serve` on ephemeral loopback ports over `dir`. */
export function serveArgs(dir: string, ...extra: string[]): string[] {
  return [
    "serve",
    "--data",
    dir,
    "--listen",
    "127.0.0.1:0",
    "--ingest-listen",
    "127.0.0.1:0",
    "--grpc-listen",
    "127.0.0.1:0",
    ...extra,
  ];
}

/** A listener URL from `serve`'s stdout. */
export function listenerUrl(stdout: string, listener: "query API" | "OTLP ingest"): string {
  const url = new RegExp(`${listener} listening on (\\S+)`).exec(stdout)?.[1];
  if (!url) throw new Error(`No ${listener} line in: ${stdout}`);
  return url;
}
