/**
 * Per-series accounting of metric points: cumulative series differenced per
 * series and start time with restarts detected, delta series taken as they
 * are, the same figures whatever the arrival order or retries; and the
 * window query the replica will run (`sql/metrics/interval_deltas.sql`)
 * giving the same deltas as the TypeScript rule on DuckDB and SQLite.
 */
import { DuckDBInstance } from "@duckdb/node-api";
import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { parseNamedSql } from "../src/store/named_sql.ts";
import {
  intervalDeltas,
  type MetricSample,
  receiveMetrics,
  type SeriesPoint,
} from "../src/ingest/metrics/mod.ts";
import { recordedMetrics, totalsOf } from "./_metrics_otlp.ts";

const S = 1_000_000_000n;

/** A point of series `series` at second `t` (start second `start`, null for none). */
function point(
  series: string,
  start: number | null,
  t: number,
  value: number,
  options: Partial<Pick<SeriesPoint, "temporality" | "monotonic">> = {},
): SeriesPoint {
  return {
    seriesId: series,
    temporality: options.temporality ?? "cumulative",
    monotonic: options.monotonic ?? true,
    startTimeNs: start === null ? null : BigInt(start) * S,
    timeNs: BigInt(t) * S,
    value,
  };
}

const SCENARIOS: { name: string; points: SeriesPoint[]; deltas: number[] }[] = [
  {
    name: "a cumulative series is differenced, its first point counts whole",
    points: [point("a", 0, 10, 5), point("a", 0, 20, 8), point("a", 0, 30, 8)],
    deltas: [5, 3, 0],
  },
  {
    name: "a new start time is a restart: the new total counts whole, never negative",
    points: [
      point("a", 0, 10, 5),
      point("a", 0, 20, 8),
      point("a", 25, 30, 2),
      point("a", 25, 40, 6),
    ],
    deltas: [5, 3, 2, 4],
  },
  {
    name: "a monotonic total that goes down under the same start is a restart",
    points: [point("a", 0, 10, 5), point("a", 0, 20, 8), point("a", 0, 30, 3)],
    deltas: [5, 3, 3],
  },
  {
    name: "two processes reporting one series at once are not read as resets",
    points: [
      point("a", 0, 10, 5),
      point("a", 5, 15, 2),
      point("a", 0, 20, 8),
      point("a", 5, 25, 6),
    ],
    deltas: [5, 2, 3, 4],
  },
  {
    name: "a cumulative series without start times counts from its first point",
    points: [point("a", null, 10, 4), point("a", null, 20, 9)],
    deltas: [4, 5],
  },
  {
    name: "delta points count as they are, whatever their start",
    points: [
      point("d", 0, 10, 2, { temporality: "delta" }),
      point("d", 10, 20, 1, { temporality: "delta" }),
      point("d", 20, 30, 0, { temporality: "delta" }),
    ],
    deltas: [2, 1, 0],
  },
  {
    name: "a non-monotonic cumulative series may go down",
    points: [
      point("u", 0, 10, 5, { monotonic: false }),
      point("u", 0, 20, 3, { monotonic: false }),
    ],
    deltas: [5, -2],
  },
  {
    name: "series are differenced apart",
    points: [
      point("a", 0, 10, 5),
      point("b", 0, 10, 100),
      point("a", 0, 20, 6),
      point("b", 0, 20, 150),
    ],
    deltas: [5, 100, 1, 50],
  },
  {
    name: "points arriving out of order give the same deltas",
    points: [point("a", 0, 30, 8), point("a", 0, 10, 5), point("a", 0, 20, 7)],
    deltas: [1, 5, 2],
  },
  {
    name: "a retried point (same series, start and time) adds nothing the second time",
    points: [point("a", 0, 10, 5), point("a", 0, 10, 5), point("a", 0, 20, 8)],
    deltas: [5, 0, 3],
  },
];

for (const { name, points, deltas } of SCENARIOS) {
  Deno.test(`accounting: ${name}`, () => {
    assert.deepEqual(intervalDeltas(points), deltas);
  });
}

/** Gemini's recorded cumulative samples. */
async function geminiSamples(): Promise<MetricSample[]> {
  const requests = await recordedMetrics("gemini-cli-0.61.0/http");
  return requests.flatMap((request) => receiveMetrics(request.decoded).samples);
}

Deno.test("Gemini CLI restarted mid-session counts both runs once: no negative or doubled count", async () => {
  const first = await geminiSamples();
  const once = totalsOf(first);
  // The same client a minute later, restarted: new start times, totals from zero again.
  const minute = 60n * S;
  const restarted = first.map((sample) => ({
    ...sample,
    startTimeNs: sample.startTimeNs! + minute,
    timeNs: sample.timeNs + minute,
    value: sample.value,
  }));
  const twice = totalsOf([...first, ...restarted]);
  for (const key of ["sessions", "lines/type=added", "tool_calls", "tokens/type=input"]) {
    assert.equal(twice[key], 2 * once[key]!, key);
  }
  // The restarted process exported again later, with more work done.
  const later = restarted.map((sample) => ({
    ...sample,
    timeNs: sample.timeNs + minute,
    value: sample.measure === "lines" ? sample.value + 4 : sample.value,
  }));
  const totals = totalsOf([...first, ...restarted, ...later]);
  assert.equal(totals["lines/type=added"], 2 * once["lines/type=added"]! + 4);
  assert.equal(totals["tool_calls"], 2 * once["tool_calls"]!);
});

Deno.test("Gemini CLI's export retried, and replayed in reverse order, counts the same", async () => {
  const samples = await geminiSamples();
  const once = totalsOf(samples);
  assert.deepEqual(totalsOf([...samples, ...samples]), once);
  assert.deepEqual(totalsOf([...samples].reverse()), once);
});

/** A seeded generator (mulberry32), so a failure replays. */
function random(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Points of a few series with restarts, resets, gaps, both temporalities; one per (series, start, time). */
function randomPoints(seed: number, count: number): SeriesPoint[] {
  const next = random(seed);
  const points: SeriesPoint[] = [];
  const seen = new Set<string>();
  while (points.length < count) {
    const series = `s${Math.floor(next() * 6)}`;
    const start = next() < 0.15 ? null : Math.floor(next() * 4) * 100;
    const t = (start ?? 0) + 1 + Math.floor(next() * 90);
    const key = `${series}/${start}/${t}`;
    if (seen.has(key)) continue;
    seen.add(key);
    points.push(point(series, start, t, Math.floor(next() * 1000) / 4, {
      temporality: series === "s5" ? "delta" : "cumulative",
      monotonic: series !== "s4",
    }));
  }
  return points;
}

const DELTAS_SQL = parseNamedSql(
  await Deno.readTextFile(new URL("../sql/metrics/interval_deltas.sql", import.meta.url)),
).interval_deltas!;

/** The points as a `metric_points` table's rows, ids in input order. */
function valuesSql(points: readonly SeriesPoint[]): string {
  return points.map((p, i) =>
    `(${i}, '${p.seriesId}', '${p.temporality}', ${p.monotonic ? 1 : 0}, ${
      p.startTimeNs ?? "NULL"
    }, ${p.timeNs}, ${p.value})`
  ).join(",\n");
}

const CREATE_POINTS = `CREATE TABLE metric_points (id INTEGER, series_id TEXT, temporality TEXT,
  monotonic INTEGER, start_time_ns BIGINT, time_ns BIGINT, value DOUBLE)`;

Deno.test("the replica's window query gives the TypeScript rule's deltas on DuckDB and SQLite", async () => {
  const duck = await DuckDBInstance.create(":memory:");
  const connection = await duck.connect();
  const sqlite = new DatabaseSync(":memory:");
  try {
    for (const seed of [1, 2, 3, 4, 5]) {
      const points = randomPoints(seed, 400);
      const expected = intervalDeltas(points);
      assert.ok(expected.some((d) => d < 0), "the non-monotonic series goes down somewhere");

      await connection.run("DROP TABLE IF EXISTS metric_points");
      await connection.run(CREATE_POINTS);
      await connection.run(`INSERT INTO metric_points VALUES ${valuesSql(points)}`);
      const duckRows = (await connection.runAndReadAll(DELTAS_SQL)).getRowObjectsJS();
      assert.deepEqual(duckRows.map((row) => Number(row.delta)), expected, `DuckDB, seed ${seed}`);

      sqlite.exec("DROP TABLE IF EXISTS metric_points");
      sqlite.exec(CREATE_POINTS);
      sqlite.exec(`INSERT INTO metric_points VALUES ${valuesSql(points)}`);
      const sqliteRows = sqlite.prepare(DELTAS_SQL).all();
      assert.deepEqual(
        sqliteRows.map((row) => Number(row.delta)),
        expected,
        `SQLite, seed ${seed}`,
      );
    }
  } finally {
    sqlite.close();
    connection.closeSync();
    duck.closeSync();
  }
});
