/**
 * The replica's pooled, prepared reads see rows appended after the statement
 * was prepared exactly as a fresh query does. DuckDB 1.5.5's late
 * materialization returns damaged strings and numbers for them from a Top-N
 * over raw rows; the replica's settings turn it off.
 */
import assert from "node:assert/strict";
import { DuckDBInstance } from "@duckdb/node-api";
import { ReadPool } from "../src/analytics/read_pool.ts";
import { DUCKDB_SETTINGS } from "../src/analytics/replica.ts";

const TOP_N = {
  sql: "SELECT id, ts, outcome FROM calls ORDER BY ts DESC LIMIT 5",
  params: {},
};

Deno.test("a pooled Top-N prepared before an append returns the appended rows intact", async () => {
  const dir = await Deno.makeTempDir();
  const instance = await DuckDBInstance.create(`${dir}/replica.duckdb`, { ...DUCKDB_SETTINGS });
  const writer = await instance.connect();
  const pool = new ReadPool(instance);
  try {
    await writer.run(
      "CREATE TABLE calls (id VARCHAR NOT NULL, org_id VARCHAR NOT NULL, ts BIGINT NOT NULL, outcome VARCHAR NOT NULL)",
    );
    const append = async (first: number, count: number) => {
      await writer.run("BEGIN TRANSACTION");
      const appender = await writer.createAppender("calls");
      for (let i = first; i < first + count; i++) {
        appender.appendVarchar(`call-${i}`);
        appender.appendVarchar("org-a");
        appender.appendBigInt(BigInt(i));
        appender.appendVarchar(i % 2 === 0 ? "rejected" : "a-longer-outcome-than-twelve-bytes");
        appender.endRow();
      }
      appender.closeSync();
      await writer.run("COMMIT");
    };
    await append(0, 100);
    const deadline = () => Date.now() + 10_000;
    const [before] = await pool.read([TOP_N], deadline());
    assert.deepEqual(before!.map((row) => row.id), [
      "call-99",
      "call-98",
      "call-97",
      "call-96",
      "call-95",
    ]);
    await append(1_000_000, 3);
    const [after] = await pool.read([TOP_N], deadline());
    const fresh = (await writer.runAndReadAll(TOP_N.sql))
      .getRowObjectsJS().map((row) => ({ ...row, ts: Number(row.ts) }));
    assert.deepEqual(after, fresh);
    assert.deepEqual(after!.slice(0, 3), [
      { id: "call-1000002", ts: 1_000_002, outcome: "rejected" },
      { id: "call-1000001", ts: 1_000_001, outcome: "a-longer-outcome-than-twelve-bytes" },
      { id: "call-1000000", ts: 1_000_000, outcome: "rejected" },
    ]);
  } finally {
    pool.close();
    writer.closeSync();
    instance.closeSync();
    await Deno.remove(dir, { recursive: true });
  }
});
