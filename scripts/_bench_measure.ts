/**
 * Measuring and reporting for the benchmark: timed HTTP GETs, latency runs
 * at a given concurrency under a sample and time budget, percentiles, number
 * formats and the Markdown table of figures with their targets.
 *
 * @module
 */

/** Nearest-rank percentile of `values` (not modified); NaN when empty. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))]!;
}

/** Milliseconds, two decimals below 100 ms, one below 10 s, else seconds. */
export function ms(value: number): string {
  if (!Number.isFinite(value)) return "—";
  if (value < 100) return `${value.toFixed(2)} ms`;
  if (value < 10_000) return `${value.toFixed(0)} ms`;
  return `${(value / 1000).toFixed(1)} s`;
}

/** An integer with thousands separators. */
export function int(value: number): string {
  return Number.isFinite(value) ? Math.round(value).toLocaleString("en-US") : "—";
}

/** Bytes as MiB or GiB. */
export function bytes(value: number): string {
  return value >= 2 ** 30
    ? `${(value / 2 ** 30).toFixed(2)} GiB`
    : `${(value / 2 ** 20).toFixed(0)} MiB`;
}

/** A ratio such as `12.3×`. */
export function times(value: number): string {
  if (!Number.isFinite(value)) return "—";
  return value >= 10 ? `${value.toFixed(0)}×` : `${value.toFixed(1)}×`;
}

// ------------------------------------------------------------------------------- HTTP

/** GETs `url` with the API key; returns milliseconds to the whole body; throws unless 200. */
export async function timedGet(url: string, apiKey: string): Promise<number> {
  const started = performance.now();
  const response = await fetch(url, { headers: { authorization: `Bearer ${apiKey}` } });
  const body = await response.arrayBuffer();
  const elapsed = performance.now() - started;
  if (response.status !== 200) {
    throw new Error(`GET ${url}: ${response.status} ${new TextDecoder().decode(body)}`);
  }
  return elapsed;
}

/** GETs `url` and returns its JSON body; throws unless 200. */
export async function getJson<T>(url: string, apiKey: string): Promise<T> {
  const response = await fetch(url, { headers: { authorization: `Bearer ${apiKey}` } });
  if (response.status !== 200) {
    throw new Error(`GET ${url}: ${response.status} ${await response.text()}`);
  }
  return await response.json() as T;
}

/** Latencies and throughput of one run. */
export interface LatencyRun {
  /** Milliseconds of the answers with status 200. */
  samples: number[];
  /** Answers with a 5xx status (query time limit, overload), by status: measured, not fatal. */
  failures: Record<number, number>;
  /** The server's own durations of the same requests (its request log), when known. */
  server?: number[];
  /** Requests per second over the run's wall time. */
  rps: number;
  /** Whether the time budget cut the run short. */
  capped: boolean;
}

/**
 * Sends requests from `concurrency` clients, each waiting for its answer
 * before the next, until `samples` answers or `budgetMs` have passed (at
 * least `concurrency` answers either way). `url()` gives each request's URL.
 */
export async function latencyRun(
  url: () => string,
  apiKey: string,
  options: { concurrency: number; samples: number; budgetMs: number },
): Promise<LatencyRun> {
  const samples: number[] = [];
  const started = performance.now();
  const deadline = started + options.budgetMs;
  let issued = 0;
  let capped = false;
  const failures: Record<number, number> = {};
  await Promise.all(Array.from({ length: options.concurrency }, async (_, client) => {
    for (;;) {
      if (issued >= options.samples) return;
      if (performance.now() > deadline && samples.length > client) {
        capped = true;
        return;
      }
      issued++;
      const target = url();
      const t0 = performance.now();
      const response = await fetch(target, { headers: { authorization: `Bearer ${apiKey}` } });
      const body = await response.arrayBuffer();
      const elapsed = performance.now() - t0;
      if (response.status === 200) {
        samples.push(elapsed);
      } else if (response.status >= 500) {
        failures[response.status] = (failures[response.status] ?? 0) + 1;
      } else {
        throw new Error(
          `GET ${target}: ${response.status} ${new TextDecoder().decode(body).slice(0, 300)}`,
        );
      }
    }
  }));
  if (samples.length === 0) {
    throw new Error(`GET ${url()}: no request answered 200 (${JSON.stringify(failures)})`);
  }
  const seconds = (performance.now() - started) / 1000;
  return { samples, failures, rps: samples.length / seconds, capped };
}

/** `p50 …, p99 …, N req/s` of a run. */
export function describeRun(run: LatencyRun): string {
  const server = run.server && run.server.length > 0
    ? `; server-side p50 ${ms(percentile(run.server, 50))}, p99 ${ms(percentile(run.server, 99))}`
    : "";
  const failed = Object.entries(run.failures).map(([status, n]) => `${n} × ${status}`).join(", ");
  return `p50 ${ms(percentile(run.samples, 50))}, p99 ${ms(percentile(run.samples, 99))}, ${
    int(run.rps)
  } req/s (n=${run.samples.length}${run.capped ? ", time-capped" : ""}${server}${
    failed ? `; failed: ${failed}` : ""
  })`;
}

// ----------------------------------------------------------------------------- report

/** A target and whether the figure meets it; `met` null when it does not apply to this run. */
export interface Target {
  text: string;
  met: boolean | null;
}

/** One row of the report. */
export interface Figure {
  area: string;
  figure: string;
  value: string;
  target?: Target;
}

/** The order of areas in the table. */
const AREA_ORDER = [
  "Ingest",
  "Metrics",
  "Replica",
  "Lists",
  "Details",
  "Insights",
  "Export",
  "Mixed",
  "Footprint",
  "Detection",
  "Machine",
];

/** The report's rows, printed as they are recorded. */
export class Report {
  readonly figures: Figure[] = [];

  add(area: string, figure: string, value: string, target?: Target): void {
    this.figures.push({ area, figure, value, ...(target ? { target } : {}) });
    const check = target ? `  [${target.text}: ${verdict(target)}]` : "";
    // deno-lint-ignore no-console
    console.log(`${area} | ${figure} | ${value}${check}`);
  }

  /** The rows as a Markdown table, grouped by area in {@link AREA_ORDER}, else as recorded. */
  table(): string {
    const escape = (text: string) => text.replaceAll("|", "\\|");
    const rank = (area: string) => {
      const i = AREA_ORDER.indexOf(area);
      return i < 0 ? AREA_ORDER.length : i;
    };
    const figures = this.figures.map((f, i) => ({ f, i })).sort((a, b) =>
      rank(a.f.area) - rank(b.f.area) || a.i - b.i
    ).map(({ f }) => f);
    const lines = [
      "| Area | Figure | Value | Target |",
      "| --- | --- | --- | --- |",
      ...figures.map((f) =>
        `| ${escape(f.area)} | ${escape(f.figure)} | ${escape(f.value)} | ${
          f.target ? escape(`${f.target.text}: ${verdict(f.target)}`) : ""
        } |`
      ),
    ];
    return lines.join("\n");
  }

  /** The figures that carry a target. */
  targets(): Figure[] {
    return this.figures.filter((f) => f.target !== undefined);
  }
}

/** `met`, `NOT MET` or `n/a at this size`. */
export function verdict(target: Target): string {
  return target.met === null ? "n/a at this size" : target.met ? "met" : "NOT MET";
}
