import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { ReaderPool } from "../src/store/sqlite/reader.ts";

const SLOW_WORKER = new URL("./fixtures/workers/slow_read_worker.ts", import.meta.url);

Deno.test("a reader thread's start-up does not count against a query's time limit", async () => {
  const dir = await Deno.makeTempDir();
  const path = `${dir}/t.db`;
  const db = new DatabaseSync(path);
  db.exec("CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (42);");
  db.close();
  const pool = new ReaderPool({ path, threads: 1, timeoutMs: 300, workerUrl: SLOW_WORKER });
  try {
    const [rows] = await pool.read([{ sql: "SELECT x FROM t", params: [] }]);
    assert.deepEqual(rows, [{ x: 42 }]);
    await pool.ready();
  } finally {
    pool.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("ready() resolves once every reader thread has started", async () => {
  const dir = await Deno.makeTempDir();
  const path = `${dir}/t.db`;
  new DatabaseSync(path).close();
  const pool = new ReaderPool({ path, threads: 2, timeoutMs: 1000, workerUrl: SLOW_WORKER });
  const started = performance.now();
  try {
    await pool.ready();
    assert.ok(performance.now() - started >= 550, "waited for the slow start");
  } finally {
    pool.close();
    await Deno.remove(dir, { recursive: true });
  }
});
