/**
 * Times each insight's statements over the replica's per-day rollups against
 * its raw-row statements, alternated on one replica (issue #31): the
 * statements alone, without catch-up or HTTP. Over a data directory a bench
 * run kept (`--keep`, or a copy of one: the replica is caught up, and rebuilt
 * if its schema is older; never point it at a directory a server is using).
 *
 * ```sh
 * deno run -A scripts/insights_days_probe.ts DIR [activity,top-tools,cost] [runs]
 * ```
 *
 * @module
 */
import { Replica } from "../src/analytics/replica.ts";
import { type AnyInsightName, replicaInsightQuery } from "../src/analytics/insights.ts";
import { insightWindow, WINDOW_NAMES } from "../src/analytics/window.ts";
import type { ReplicaStatement } from "../src/analytics/read_pool.ts";
import type { InsightStatement } from "../src/analytics/insights.ts";

const [dir, names = "activity,top-tools,cost", runsText = "21"] = Deno.args;
if (dir === undefined) {
  Deno.stderr.writeSync(
    new TextEncoder().encode("usage: insights_days_probe.ts DIR [names] [runs]\n"),
  );
  Deno.exit(2);
}
const runs = Number(runsText);
const { orgId } = JSON.parse(await Deno.readTextFile(`${dir}/bench-meta.json`));
const replica = await Replica.open({
  path: `${dir}/analytics.duckdb`,
  source: { engine: "sqlite", path: `${dir}/telemetry.db` },
  quiet: true,
});

function bound(statements: readonly InsightStatement[]): ReplicaStatement[] {
  return statements.map(({ sql, params }) => ({
    sql,
    params: Object.fromEntries(
      Object.entries(params).map(([k, v]) => [k, typeof v === "number" ? BigInt(v) : v]),
    ),
  }));
}

const median = (values: number[]) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const lines: string[] = [];
try {
  await replica.catchUp();
  lines.push(`days rolled up before ${new Date(replica.daysThrough).toISOString()}`);
  for (const name of names.split(",") as AnyInsightName[]) {
    for (const window of WINDOW_NAMES) {
      const times = { days: [] as number[], raw: [] as number[] };
      for (let i = 0; i < runs; i++) {
        for (const path of ["days", "raw"] as const) {
          const request = { name, orgId, window: insightWindow(window, "daily", Date.now()) };
          const query = replicaInsightQuery(request, path === "days" ? replica.daysThrough : null);
          const started = performance.now();
          query.body(await replica.read(bound(query.statements), Date.now() + 60_000));
          times[path].push(performance.now() - started);
        }
      }
      lines.push(
        `${name} ${window}: rollups ${median(times.days).toFixed(2)} ms, raw rows ${
          median(times.raw).toFixed(2)
        } ms (p50 of ${runs})`,
      );
    }
  }
} finally {
  await replica.close();
}
Deno.stdout.writeSync(new TextEncoder().encode(lines.join("\n") + "\n"));
