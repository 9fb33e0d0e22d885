/**
 * Test helpers for OTLP metrics: an OTLP/JSON metrics request written as
 * protobuf (optionally with every message's fields in reverse order, as the
 * wire allows), the recorded real-agent metrics requests, and totals of
 * kept samples per measure and dimension.
 */
import { BinaryWriter } from "@bufbuild/protobuf/wire";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import { readRecording, REAL_FIXTURES } from "../scripts/agents/_fixtures.ts";
import {
  type DecodedMetrics,
  decodeMetrics,
  intervalDeltas,
  type MetricSample,
} from "../src/ingest/metrics/mod.ts";
import { seriesIdOf } from "../src/store/metric_rows.ts";

type Json = Record<string, unknown>;

/** One field of a message: its number and how to write it. */
type Field = readonly [number, (writer: BinaryWriter) => void];

/**
 * Writes a message's fields in order or, reversed, by descending field
 * number (a repeated field's items keep their order: it is their meaning).
 */
function message(writer: BinaryWriter, fields: Field[], reverse: boolean): void {
  const ordered = reverse ? [...fields].sort((a, b) => b[0] - a[0]) : fields;
  for (const [, write] of ordered) write(writer);
}

function nested(field: number, build: (writer: BinaryWriter) => void): Field {
  return [field, (writer) => {
    writer.tag(field, 2).fork();
    build(writer);
    writer.join();
  }];
}

function scalar(field: number, write: (writer: BinaryWriter) => void): Field {
  return [field, write];
}

function anyValueFields(value: Json, reverse: boolean): Field[] {
  const [kind, inner] = Object.entries(value)[0] ?? [];
  switch (kind) {
    case "stringValue":
      return [scalar(1, (w) => w.tag(1, 2).string(inner as string))];
    case "boolValue":
      return [scalar(2, (w) => w.tag(2, 0).bool(inner as boolean))];
    case "intValue":
      return [scalar(3, (w) => w.tag(3, 0).int64(String(inner)))];
    case "doubleValue":
      return [scalar(4, (w) => w.tag(4, 1).double(inner as number))];
    case "arrayValue":
      return [nested(5, (w) =>
        message(
          w,
          ((inner as Json).values as Json[] ?? []).map((v) =>
            nested(1, (x) => message(x, anyValueFields(v, reverse), reverse))
          ),
          reverse,
        ))];
    case "kvlistValue":
      return [nested(6, (w) =>
        message(
          w,
          ((inner as Json).values as Json[] ?? []).map((kv) => keyValue(1, kv, reverse)),
          reverse,
        ))];
  }
  return [];
}

function keyValue(field: number, kv: Json, reverse: boolean): Field {
  return nested(field, (w) =>
    message(w, [
      scalar(1, (x) => x.tag(1, 2).string(kv.key as string)),
      nested(2, (x) => message(x, anyValueFields((kv.value ?? {}) as Json, reverse), reverse)),
    ], reverse));
}

function pointFields(point: Json, histogram: boolean, reverse: boolean): Field[] {
  const fields: Field[] = [];
  if (point.startTimeUnixNano !== undefined) {
    fields.push(scalar(2, (w) => w.tag(2, 1).fixed64(String(point.startTimeUnixNano))));
  }
  if (point.timeUnixNano !== undefined) {
    fields.push(scalar(3, (w) => w.tag(3, 1).fixed64(String(point.timeUnixNano))));
  }
  const attributeField = histogram ? 9 : 7;
  for (const kv of (point.attributes ?? []) as Json[]) {
    fields.push(keyValue(attributeField, kv, reverse));
  }
  if (histogram) {
    fields.push(scalar(4, (w) => w.tag(4, 1).fixed64(String(point.count ?? 0))));
    if (point.sum !== undefined) {
      fields.push(scalar(5, (w) => w.tag(5, 1).double(point.sum as number)));
    }
  } else if (point.asDouble !== undefined) {
    fields.push(scalar(4, (w) => w.tag(4, 1).double(point.asDouble as number)));
  } else if (point.asInt !== undefined) {
    fields.push(scalar(6, (w) => w.tag(6, 1).sfixed64(String(point.asInt))));
  }
  if (point.flags !== undefined) {
    const flags = histogram ? 10 : 8;
    fields.push(scalar(flags, (w) => w.tag(flags, 0).uint32(point.flags as number)));
  }
  return fields;
}

const DATA_FIELDS: Record<string, number> = { gauge: 5, sum: 7, histogram: 9 };

function metricFields(metric: Json, reverse: boolean): Field[] {
  const fields: Field[] = [scalar(1, (w) => w.tag(1, 2).string(metric.name as string))];
  if (metric.unit) fields.push(scalar(3, (w) => w.tag(3, 2).string(metric.unit as string)));
  for (const [kind, number] of Object.entries(DATA_FIELDS)) {
    const data = metric[kind] as Json | undefined;
    if (data === undefined) continue;
    const histogram = kind === "histogram";
    const dataFields: Field[] = ((data.dataPoints ?? []) as Json[]).map((point) =>
      nested(1, (w) => message(w, pointFields(point, histogram, reverse), reverse))
    );
    if (data.aggregationTemporality !== undefined) {
      dataFields.push(scalar(2, (w) => w.tag(2, 0).int32(data.aggregationTemporality as number)));
    }
    if (data.isMonotonic !== undefined) {
      dataFields.push(scalar(3, (w) => w.tag(3, 0).bool(data.isMonotonic as boolean)));
    }
    fields.push(nested(number, (w) => message(w, dataFields, reverse)));
  }
  return fields;
}

/** An OTLP/JSON `ExportMetricsServiceRequest` as protobuf bytes. */
export function metricsJsonToProtobuf(root: Json, options: { reverse?: boolean } = {}): Uint8Array {
  const reverse = options.reverse ?? false;
  const writer = new BinaryWriter();
  const resources = (root.resourceMetrics ?? []) as Json[];
  message(
    writer,
    resources.map((resourceEntry) =>
      nested(1, (w) => {
        const resource = (resourceEntry.resource ?? {}) as Json;
        const scopes = (resourceEntry.scopeMetrics ?? []) as Json[];
        message(w, [
          nested(1, (x) =>
            message(
              x,
              ((resource.attributes ?? []) as Json[]).map((kv) => keyValue(1, kv, reverse)),
              reverse,
            )),
          ...scopes.map((scoped) =>
            nested(2, (x) => {
              const scope = (scoped.scope ?? {}) as Json;
              message(x, [
                nested(1, (y) => y.tag(1, 2).string((scope.name ?? "") as string)),
                ...((scoped.metrics ?? []) as Json[]).map((metric) =>
                  nested(2, (y) => message(y, metricFields(metric, reverse), reverse))
                ),
              ], reverse);
            })
          ),
        ], reverse);
      })
    ),
    reverse,
  );
  return writer.finish();
}

/** One recorded metrics request, decoded (gRPC bodies are the Export message, maybe gzipped). */
export interface RecordedMetrics {
  encoding: "json" | "protobuf";
  body: Uint8Array;
  decoded: DecodedMetrics;
}

/** The metrics requests of one recorded run (`<agent>-<version>/<variant>`), in sending order. */
export async function recordedMetrics(run: string): Promise<RecordedMetrics[]> {
  const requests = await readRecording(join(REAL_FIXTURES, run));
  return requests
    .filter((request) => request.path.includes("metrics"))
    .map((request) => {
      const body = request.contentEncoding === "gzip"
        ? new Uint8Array(gunzipSync(request.body))
        : request.body;
      const encoding = request.contentType.includes("json") ? "json" : "protobuf";
      return { encoding, body, decoded: decodeMetrics(body, encoding) };
    });
}

/** A sender for the accounting: series ids need one. */
export const SENDER = { orgId: "org_test", actorId: "act_test" };

/**
 * Totals of kept samples through the accounting: `measure` or
 * `measure/dimension=value` keys (each sample adds to both), rounded to 1e-9.
 */
export function totalsOf(samples: readonly MetricSample[]): Record<string, number> {
  const deltas = intervalDeltas(
    samples.map((sample) => ({ ...sample, seriesId: seriesIdOf(SENDER, sample) })),
  );
  const totals: Record<string, number> = {};
  const add = (key: string, value: number) => totals[key] = (totals[key] ?? 0) + value;
  samples.forEach((sample, i) => {
    add(sample.measure, deltas[i]!);
    for (const [dimension, value] of Object.entries(sample.dimensions)) {
      if (value !== "") add(`${sample.measure}/${dimension}=${value}`, deltas[i]!);
    }
  });
  for (const key in totals) totals[key] = Math.round(totals[key]! * 1e9) / 1e9;
  return totals;
}
