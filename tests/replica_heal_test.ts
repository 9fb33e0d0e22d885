/**
 * A replica that fails to read heals by itself (finding 5 of issue #14): a
 * data block of `analytics.duckdb` is overwritten while the server is
 * stopped; after a restart the insights answer as before, without an
 * operator deleting the file.
 *
 * @module
 */
import assert from "node:assert/strict";
import { DuckDBInstance } from "@duckdb/node-api";
import { engineTest, startTestServer, testDatabase, type TestServer } from "./_harness.ts";
import { loadScenario } from "./_scenario.ts";

/** DuckDB's file layout: three 4 KiB headers, then 256 KiB blocks. */
const HEADER_BYTES = 3 * 4096;
const BLOCK_BYTES = 256 * 1024;

/** The file offset of a block holding `tool_calls` column data (not metadata). */
async function toolCallsDataBlockOffset(path: string): Promise<number> {
  const instance = await DuckDBInstance.create(path);
  try {
    const connection = await instance.connect();
    try {
      const reader = await connection.runAndReadAll(
        `SELECT DISTINCT block_id FROM pragma_storage_info('tool_calls')
          WHERE block_id IS NOT NULL AND block_id >= 0 ORDER BY block_id`,
      );
      const blocks = reader.getRowObjectsJS().map((row) => Number(row.block_id));
      assert.ok(blocks.length > 0, "tool_calls has no data block");
      return HEADER_BYTES + blocks[0]! * BLOCK_BYTES;
    } finally {
      connection.closeSync();
    }
  } finally {
    instance.closeSync();
  }
}

/**
 * The three insights' answers. While the replica is rebuilt they answer the
 * retryable `503 insights_unavailable` (docs/api.md): asked again, as a
 * client would, until the rebuild ends (it takes longer on a busy machine).
 */
async function insightShapes(server: TestServer, apiKey: string) {
  const out: Record<string, unknown> = {};
  const deadline = Date.now() + 120_000;
  for (const name of ["top-tools", "activity", "domains"]) {
    let { status, body } = await server.getJson(`/v1/insights/${name}?window=30d`, apiKey);
    while (
      status === 503 && body?.error?.code === "insights_unavailable" && Date.now() < deadline
    ) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      ({ status, body } = await server.getJson(`/v1/insights/${name}?window=30d`, apiKey));
    }
    assert.equal(status, 200, `${name}: ${JSON.stringify(body)}`);
    out[name] = { summary: body.summary, series: body.series, breakdown: body.breakdown };
  }
  return out;
}

engineTest(
  "a replica corrupted in a data block is rebuilt and insights answer as before",
  async () => {
    const dir = await Deno.makeTempDir({ prefix: "agent-telemetry-heal-" });
    const database = await testDatabase();
    const url = database?.url;
    try {
      let before: Record<string, unknown>;
      let apiKey: string;
      {
        await using server = await startTestServer({ dir, ...(url ? { database: url } : {}) });
        const { org } = await loadScenario(server);
        apiKey = org.apiKey;
        before = await insightShapes(server, apiKey);
      }
      const path = `${dir}/analytics.duckdb`;
      const offset = await toolCallsDataBlockOffset(path);
      const file = await Deno.open(path, { write: true });
      try {
        await file.seek(offset + 8, Deno.SeekMode.Start); // past the block's checksum
        await file.write(new Uint8Array(4096).fill(0xa5));
      } finally {
        file.close();
      }
      await using server = await startTestServer({ dir, ...(url ? { database: url } : {}) });
      assert.deepEqual(await insightShapes(server, apiKey), before);
      const ready = await server.get("/readyz");
      assert.equal(ready.status, 200, await ready.text());
    } finally {
      await database?.drop();
      await Deno.remove(dir, { recursive: true });
    }
  },
);
