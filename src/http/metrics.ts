/**
 * A small Prometheus registry: counters and histograms with labels, written
 * in the text exposition format at `/metrics`.
 *
 * @module
 */

import { agentOfService, type TelemetryAgent } from "../agents.ts";

type Labels = Record<string, string>;

/** A bounded `agent` label value: every other `service.name` is counted as `other`. */
export type AgentLabel = TelemetryAgent | "other";

/**
 * The `agent` label of a raw `service.name` (or a mapper's agent name): one
 * of `AGENT_LABELS` (`src/agents.ts`), so that senders cannot grow `/metrics` with made-up
 * names, nor read other organizations' service names there. The prefixes are
 * those the agent mappers dispatch on (`src/ingest/agents/mod.ts`).
 */
export function agentLabel(serviceName: string): AgentLabel {
  return agentOfService(serviceName) ?? (serviceName === "genai" ? "genai" : "other");
}

/** Label values a metric bounds on the way in, e.g. `{ agent: agentLabel }`. */
type LabelBounds = Record<string, (value: string) => string>;

/**
 * Series one metric keeps at most. Every label is bounded by its callers or
 * by {@link LabelBounds}; this is the backstop should a caller pass a raw
 * value: later label sets are counted in one series whose values are `other`.
 */
const MAX_SERIES = 1_000;

function bounded(labels: Labels, bounds: LabelBounds): Labels {
  const out: Labels = {};
  for (const [name, value] of Object.entries(labels)) out[name] = bounds[name]?.(value) ?? value;
  return out;
}

function overflowKey(labels: Labels): string {
  return labelKey(Object.fromEntries(Object.keys(labels).map((name) => [name, "other"])));
}

function labelKey(labels: Labels): string {
  return Object.keys(labels).sort().map((k) => `${k}="${escape(labels[k]!)}"`).join(",");
}

function escape(value: string): string {
  return value.replaceAll("\\", "\\\\").replaceAll("\n", "\\n").replaceAll('"', '\\"');
}

/** A monotonically increasing count per label set. */
export class Counter {
  readonly #values = new Map<string, number>();
  constructor(
    readonly name: string,
    readonly help: string,
    readonly bounds: LabelBounds = {},
  ) {}

  inc(labels: Labels = {}, by = 1): void {
    const label = bounded(labels, this.bounds);
    let key = labelKey(label);
    if (!this.#values.has(key) && this.#values.size >= MAX_SERIES) key = overflowKey(label);
    this.#values.set(key, (this.#values.get(key) ?? 0) + by);
  }

  render(): string {
    const lines = [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} counter`];
    for (const [key, value] of this.#values) {
      lines.push(`${this.name}${key ? `{${key}}` : ""} ${value}`);
    }
    return lines.join("\n");
  }
}

/** A distribution of observations over fixed buckets, per label set. */
export class Histogram {
  readonly #series = new Map<string, { counts: number[]; sum: number; count: number }>();
  constructor(readonly name: string, readonly help: string, readonly buckets: number[]) {}

  observe(labels: Labels, value: number): void {
    let key = labelKey(labels);
    if (!this.#series.has(key) && this.#series.size >= MAX_SERIES) key = overflowKey(labels);
    let series = this.#series.get(key);
    if (!series) {
      series = { counts: this.buckets.map(() => 0), sum: 0, count: 0 };
      this.#series.set(key, series);
    }
    for (let i = 0; i < this.buckets.length; i++) {
      if (value <= this.buckets[i]!) series.counts[i]!++;
    }
    series.sum += value;
    series.count++;
  }

  render(): string {
    const lines = [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} histogram`];
    for (const [key, series] of this.#series) {
      const sep = key ? "," : "";
      this.buckets.forEach((bound, i) => {
        lines.push(`${this.name}_bucket{${key}${sep}le="${bound}"} ${series.counts[i]}`);
      });
      lines.push(`${this.name}_bucket{${key}${sep}le="+Inf"} ${series.count}`);
      lines.push(`${this.name}_sum${key ? `{${key}}` : ""} ${series.sum}`);
      lines.push(`${this.name}_count${key ? `{${key}}` : ""} ${series.count}`);
    }
    return lines.join("\n");
  }
}

/** A value read when scraped. */
export interface Gauge {
  name: string;
  help: string;
  read(): { labels: Labels; value: number }[];
}

/** A gauge whose values are set as things happen, per label set; a set value stays until replaced. */
export class SetGauge implements Gauge {
  readonly #values = new Map<string, { labels: Labels; value: number }>();
  constructor(readonly name: string, readonly help: string) {}

  set(labels: Labels, value: number): void {
    let key = labelKey(labels);
    let kept = labels;
    if (!this.#values.has(key) && this.#values.size >= MAX_SERIES) {
      key = overflowKey(labels);
      kept = Object.fromEntries(Object.keys(labels).map((name) => [name, "other"]));
    }
    this.#values.set(key, { labels: kept, value });
  }

  read(): { labels: Labels; value: number }[] {
    return [...this.#values.values()];
  }
}

function renderGauge(gauge: Gauge): string {
  const lines = [`# HELP ${gauge.name} ${gauge.help}`, `# TYPE ${gauge.name} gauge`];
  for (const { labels, value } of gauge.read()) {
    const key = labelKey(labels);
    lines.push(`${gauge.name}${key ? `{${key}}` : ""} ${value}`);
  }
  return lines.join("\n");
}

/** The service's metrics. */
export class ServiceMetrics {
  readonly requests = new Counter(
    "agent_telemetry_http_requests_total",
    "HTTP requests by listener, route and status.",
  );
  readonly latency = new Histogram(
    "agent_telemetry_http_request_duration_seconds",
    "HTTP request latency by listener and route.",
    [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
  );
  readonly ingested = new Counter(
    "agent_telemetry_ingested_records_total",
    "Telemetry events stored, by agent and kind.",
    { agent: agentLabel },
  );
  readonly rejected = new Counter(
    "agent_telemetry_rejected_records_total",
    "Unusable OTLP records skipped (partialSuccess).",
  );
  readonly unmapped = new Counter(
    "agent_telemetry_unmapped_records_total",
    "OTLP records that stored nothing, by agent (a mapper's, else other) and reason.",
    { agent: agentLabel },
  );
  readonly connectionsCut = new Counter(
    "agent_telemetry_connections_timed_out_total",
    "Connections closed by a read deadline, by phase (headers, body, idle).",
  );
  // Per organization (`org`, its id: the series grow with organizations, never with senders,
  // actors or sessions), from what each export committed (`src/server/organization_metrics.ts`).
  readonly modelCost = new Counter(
    "agent_telemetry_model_cost_usd_total",
    "Reported model cost in USD of the model calls stored, by organization.",
  );
  readonly riskFlags = new Counter(
    "agent_telemetry_risk_flags_total",
    "Risk flags stored with tool calls, by organization and kind.",
  );
  readonly toolCallErrors = new Counter(
    "agent_telemetry_tool_call_errors_total",
    "Tool calls stored with outcome error, by organization.",
  );
  readonly lastExport = new SetGauge(
    "agent_telemetry_last_export_timestamp_seconds",
    "When this node last accepted an export from the organization (Unix seconds).",
  );
  readonly #gauges: Gauge[] = [];

  addGauge(gauge: Gauge): void {
    this.#gauges.push(gauge);
  }

  render(): string {
    return [
      this.requests,
      this.latency,
      this.ingested,
      this.rejected,
      this.unmapped,
      this.connectionsCut,
      this.modelCost,
      this.riskFlags,
      this.toolCallErrors,
    ].map((m) => m.render())
      .concat([this.lastExport, ...this.#gauges].map(renderGauge)).join("\n") + "\n";
  }
}
