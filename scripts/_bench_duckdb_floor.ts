/**
 * The fixed cost of one insight on the DuckDB replica, in-process, on a data
 * directory a `deno task bench --keep DIR` run left (the server stopped):
 * what `Replica.read` spends besides the queries themselves — a new
 * connection per read, `BEGIN`/`COMMIT`, one round trip per statement — set
 * against the same statements on one persistent connection, and a trivial
 * `SELECT 1` both ways.
 *
 * `deno run -A scripts/_bench_duckdb_floor.ts DIR [--runs N]`
 *
 * Imports `src/` read-only; opens the replica as the server does.
 *
 * @module
 */
import { BIGINT, DuckDBInstance, type DuckDBType, VARCHAR } from "@duckdb/node-api";
import { parseArgs } from "node:util";
import { INSIGHT_NAMES, insightWindow } from "../src/analytics/mod.ts";
import { DUCKDB_INSIGHT_SQL, INSIGHTS, insightStatements } from "../src/analytics/insights.ts";
import { Replica } from "../src/analytics/replica.ts";
import { percentile } from "./_bench_measure.ts";

const { positionals, values } = parseArgs({
  args: Deno.args,
  allowPositionals: true,
  options: { runs: { type: "string", default: "30" } },
});
const dir = positionals[0];
if (!dir) throw new Error("usage: _bench_duckdb_floor.ts DIR");
const runs = Number(values.runs);
const meta = JSON.parse(await Deno.readTextFile(`${dir}/bench-meta.json`)) as { orgId: string };

// deno-lint-ignore no-console
const say = (line: string) => console.log(line);
async function p50(fn: () => Promise<unknown>): Promise<number> {
  for (let i = 0; i < 3; i++) await fn();
  const samples: number[] = [];
  for (let i = 0; i < runs; i++) {
    const started = performance.now();
    await fn();
    samples.push(performance.now() - started);
  }
  return percentile(samples, 50);
}
const f = (value: number) => `${value.toFixed(2)} ms`.padStart(10);

const replica = await Replica.open({
  path: `${dir}/analytics.duckdb`,
  source: { engine: "sqlite", path: `${dir}/telemetry.db` },
  quiet: true,
});
await replica.catchUp();
const far = () => Date.now() + 600_000;
say(`Replica.read (new connection, BEGIN, statements, COMMIT), p50 of ${runs}:`);
say(
  `  SELECT 1                         ${
    f(await p50(() => replica.read([{ sql: "SELECT 1", params: {} }], far())))
  }`,
);
say(
  `  3 × SELECT 1                     ${
    f(await p50(() => replica.read(Array(3).fill({ sql: "SELECT 1", params: {} }), far())))
  }`,
);
await replica.close();

// The same on one persistent connection of a separate instance.
const instance = await DuckDBInstance.create(`${dir}/analytics.duckdb`);
const connection = await instance.connect();
say("one persistent connection:");
say(
  `  connect() + closeSync()          ${
    f(await p50(async () => (await instance.connect()).closeSync()))
  }`,
);
say(
  `  SELECT 1                         ${f(await p50(() => connection.runAndReadAll("SELECT 1")))}`,
);
say(`  BEGIN + COMMIT                   ${
  f(
    await p50(async () => {
      await connection.run("BEGIN TRANSACTION");
      await connection.run("COMMIT");
    }),
  )
}`);
const threads = await connection.runAndReadAll("SELECT current_setting('threads') AS t");
say(`  DuckDB threads: ${threads.getRowObjectsJS()[0]!.t}`);
say("insight statements, 90d, persistent connection: sum of statements vs each");
for (const name of INSIGHT_NAMES) {
  const statements = insightStatements(
    INSIGHTS[name],
    DUCKDB_INSIGHT_SQL[name],
    meta.orgId,
    insightWindow("90d", "daily", Date.now()),
  );
  const parts: string[] = [];
  let total = 0;
  for (const statement of statements) {
    const params: Record<string, string | bigint> = {};
    const types: Record<string, DuckDBType> = {};
    for (const [key, value] of Object.entries(statement.params)) {
      params[key] = typeof value === "number" ? BigInt(value) : value;
      types[key] = typeof value === "number" ? BIGINT : VARCHAR;
    }
    const t = await p50(() => connection.runAndReadAll(statement.sql, params, types));
    total += t;
    parts.push(`${statement.section} ${t.toFixed(2)}`);
  }
  say(`  ${name.padEnd(10)} ${f(total)}  (${parts.join(", ")})`);
}
connection.closeSync();
instance.closeSync();
