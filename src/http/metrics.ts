/**
 * A small Prometheus registry: counters and histograms with labels, written
 * in the text exposition format at `/metrics`.
 *
 * @module
 */

type Labels = Record<string, string>;

function labelKey(labels: Labels): string {
  return Object.keys(labels).sort().map((k) => `${k}="${escape(labels[k]!)}"`).join(",");
}

function escape(value: string): string {
  return value.replaceAll("\\", "\\\\").replaceAll("\n", "\\n").replaceAll('"', '\\"');
}

/** A monotonically increasing count per label set. */
export class Counter {
  readonly #values = new Map<string, number>();
  constructor(readonly name: string, readonly help: string) {}

  inc(labels: Labels = {}, by = 1): void {
    const key = labelKey(labels);
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
    const key = labelKey(labels);
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
  );
  readonly rejected = new Counter(
    "agent_telemetry_rejected_records_total",
    "Unusable OTLP records skipped (partialSuccess).",
  );
  readonly unmapped = new Counter(
    "agent_telemetry_unmapped_records_total",
    "OTLP records that stored nothing, by agent (a mapper's, else other) and reason.",
  );
  readonly #gauges: Gauge[] = [];

  addGauge(gauge: Gauge): void {
    this.#gauges.push(gauge);
  }

  render(): string {
    return [this.requests, this.latency, this.ingested, this.rejected, this.unmapped].map((m) => m.render())
      .concat(this.#gauges.map(renderGauge)).join("\n") + "\n";
  }
}
