import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { QueryTimeoutError } from "../src/errors.ts";
import { ReaderPool } from "../src/store/sqlite/reader.ts";

/** A database with one table `t` holding 1..n. */
async function numbers(n: number): Promise<{ dir: string; path: string }> {
  const dir = await Deno.makeTempDir();
  const path = `${dir}/t.db`;
  const db = new DatabaseSync(path);
  db.exec("CREATE TABLE t (x INTEGER)");
  const insert = db.prepare("INSERT INTO t VALUES (?)");
  for (let i = 1; i <= n; i++) insert.run(i);
  db.close();
  return { dir, path };
}

/** Counts to a billion: runs far past any test's time limit unless interrupted. */
const ENDLESS =
  "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 1000000000) SELECT count(*) AS n FROM c";

Deno.test("reader threads answer each of many batches sent ahead with its own rows", async () => {
  const { dir, path } = await numbers(50);
  const pool = new ReaderPool({ path, threads: 2, timeoutMs: 10_000 });
  try {
    await pool.ready();
    const answers = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        pool.read([
          { sql: "SELECT x FROM t WHERE x = ?", params: [i + 1] },
          { sql: "SELECT ? AS tag", params: [`batch-${i}`] },
        ])),
    );
    answers.forEach(([rows, tag], i) => {
      assert.deepEqual(rows, [{ x: i + 1 }]);
      assert.deepEqual(tag, [{ tag: `batch-${i}` }]);
    });
  } finally {
    pool.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a batch stopped at the time limit fails alone: the batches sent behind it are answered", async () => {
  const { dir, path } = await numbers(3);
  const pool = new ReaderPool({ path, threads: 1, timeoutMs: 500 });
  try {
    await pool.ready();
    const slow = pool.read([{ sql: ENDLESS, params: [] }]);
    const behind = Array.from(
      { length: 3 },
      (_, i) => pool.read([{ sql: "SELECT x FROM t WHERE x = ?", params: [i + 1] }]),
    );
    await assert.rejects(slow, QueryTimeoutError);
    const answers = await Promise.all(behind);
    assert.deepEqual(answers.map(([rows]) => rows), [[{ x: 1 }], [{ x: 2 }], [{ x: 3 }]]);
  } finally {
    pool.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a batch's time limit starts when its thread begins it, not while it waits behind another", async () => {
  const { dir, path } = await numbers(3);
  const pool = new ReaderPool({ path, threads: 1, timeoutMs: 1_500 });
  try {
    await pool.ready();
    // Each takes about 0.4 s: five together are past one limit, each is well
    // within its own (3.75 times over: a loaded machine slows a query too).
    const second =
      "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < ?) SELECT count(*) AS n FROM c";
    const probe = performance.now();
    await pool.read([{ sql: second, params: [2_000_000] }]);
    const ms = performance.now() - probe;
    const rows = Math.max(100_000, Math.round((2_000_000 * 400) / ms));
    const batches = await Promise.all(
      [0, 1, 2, 3, 4].map(() => pool.read([{ sql: second, params: [rows] }])),
    );
    for (const [result] of batches) assert.deepEqual(result, [{ n: rows }]);
  } finally {
    pool.close();
    await Deno.remove(dir, { recursive: true });
  }
});
