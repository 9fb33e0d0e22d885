/**
 * One OTLP export, whatever the transport: authenticate the ingest key, read
 * and decode the body, map its records, write them in one transaction and
 * count them. OTLP/HTTP (`ingest_app.ts`) and OTLP/gRPC (`grpc_listener.ts`)
 * both call {@link receiveOtlpExport} and only translate its outcome into
 * their own answers (an HTTP status, a gRPC status), so the two listeners
 * cannot drift apart in what they accept, store or refuse.
 *
 * @module
 */
import { StoreUnavailableError } from "../errors.ts";
import { decodeMetrics, type ReceivedMetrics, receiveMetrics } from "../ingest/metrics/mod.ts";
import { receiveExport } from "../ingest/receive.ts";
import {
  type Encoding,
  OtlpDecodeError,
  PayloadTooLargeError,
  type Signal,
  UnsupportedMediaTypeError,
} from "../ingest/otlp/mod.ts";
import type { TelemetryEvent } from "../model/telemetry.ts";
import type { KeyVerifier, TelemetryWriterApi } from "../store/stores.ts";
import { bearerToken } from "../http/auth.ts";
import type { ServiceMetrics } from "../http/metrics.ts";
import type { GrpcStatusName } from "./grpc_status.ts";
import { countCommitted } from "./organization_metrics.ts";
import { reportUnmapped } from "./unmapped.ts";

/** What an export needs from the server. */
export interface OtlpExportDeps {
  keys: KeyVerifier;
  /** Null on a read-only node: exports are refused. */
  writer: TelemetryWriterApi | null;
  metrics: ServiceMetrics;
  /** The resource attributes kept per session (`--dimension`); none when absent. */
  dimensionKeys?: readonly string[];
  /** Called after a request's events are committed. */
  onCommitted?: () => void;
}

/** One export request as a transport hands it over. */
export interface OtlpExportRequest {
  /** The `authorization` header (HTTP) or metadata entry (gRPC), if any. */
  authorization: string | null;
  /** The signal the path or gRPC method names. */
  pathSignal: Signal;
  /** Reads the (decompressed) body under the size cap; called only once the sender is known. */
  readBody: () => Promise<{ body: Uint8Array; encoding: Encoding }>;
}

/** Why an export was refused, in the transport-neutral words both listeners translate. */
export type ExportRefusal =
  | "readOnly"
  | "unauthenticated"
  | "keyStoreUnavailable"
  | "unsupportedMediaType"
  | "tooLarge"
  | "undecodable"
  | "storeUnavailable";

/** The outcome of one export: stored (perhaps partly), or refused with nothing stored. */
export type OtlpExportOutcome =
  | {
    accepted: true;
    signal: Signal;
    encoding: Encoding;
    /** Present when some records were unusable: OTLP's `partial_success`. */
    partial?: { rejected: number; message: string };
  }
  | {
    accepted: false;
    refusal: ExportRefusal;
    message: string;
    /** When to try again, for refusals a retry can cure. */
    retryAfterSeconds?: number;
  };

/**
 * How each refusal is answered on each transport, from one table so that the
 * two listeners cannot drift apart (as the OpenTelemetry Collector keeps one
 * mapping from an error to its gRPC status and derives the HTTP answer): the
 * HTTP status and error code, the gRPC status, and for the retryable ones the
 * delay to ask for (HTTP `Retry-After`, gRPC `RetryInfo`) when the refusal
 * brings none of its own.
 */
export const REFUSALS: Readonly<
  Record<
    ExportRefusal,
    { http: number; code: string; grpc: GrpcStatusName; retryAfterSeconds?: number }
  >
> = {
  readOnly: { http: 503, code: "read_only", grpc: "UNAVAILABLE", retryAfterSeconds: 30 },
  unauthenticated: { http: 401, code: "unauthenticated", grpc: "UNAUTHENTICATED" },
  keyStoreUnavailable: {
    http: 503,
    code: "keystoreUnavailable",
    grpc: "UNAVAILABLE",
    retryAfterSeconds: 5,
  },
  unsupportedMediaType: { http: 415, code: "invalid_request", grpc: "INVALID_ARGUMENT" },
  tooLarge: { http: 413, code: "invalid_request", grpc: "RESOURCE_EXHAUSTED" },
  undecodable: { http: 400, code: "invalid_request", grpc: "INVALID_ARGUMENT" },
  storeUnavailable: { http: 503, code: "unavailable", grpc: "UNAVAILABLE", retryAfterSeconds: 1 },
};

/** The delay a refused export should wait before its retry, if it is retryable. */
export function retryAfterOf(
  outcome: { refusal: ExportRefusal; retryAfterSeconds?: number },
): number | undefined {
  return outcome.retryAfterSeconds ?? REFUSALS[outcome.refusal].retryAfterSeconds;
}

const REFUSAL_MESSAGES = {
  readOnly: "this node is read-only; send telemetry to the primary",
  unauthenticated: "invalid or missing Bearer credential",
  keyStoreUnavailable: "the key store is unavailable; retry later",
} as const;

/**
 * Runs one export to its outcome. Unexpected faults (a bug, a broken disk the
 * store did not classify) are thrown for the transport to log and answer as
 * an internal error.
 */
export async function receiveOtlpExport(
  deps: OtlpExportDeps,
  request: OtlpExportRequest,
): Promise<OtlpExportOutcome> {
  if (deps.writer === null) return refused("readOnly", REFUSAL_MESSAGES.readOnly);
  const writer = deps.writer;
  const token = bearerToken(request.authorization);
  let sender;
  try {
    sender = token === null ? null : await deps.keys.verifyIngestKey(token);
  } catch {
    return refused("keyStoreUnavailable", REFUSAL_MESSAGES.keyStoreUnavailable);
  }
  if (sender === null) return refused("unauthenticated", REFUSAL_MESSAGES.unauthenticated);
  let received;
  let encoding: Encoding;
  let metricPoints: ReceivedMetrics | null = null;
  try {
    const read = await request.readBody();
    encoding = read.encoding;
    received = receiveExport(read.body, {
      encoding,
      pathSignal: request.pathSignal,
      ...(deps.dimensionKeys ? { dimensionKeys: deps.dimensionKeys } : {}),
    });
    // A JSON body is routed by its top key: decoded as metrics only when that says metrics.
    if (received.signal === "metrics") {
      metricPoints = receiveMetrics(decodeMetrics(read.body, encoding));
    }
  } catch (error) {
    if (error instanceof PayloadTooLargeError) return refused("tooLarge", error.message);
    if (error instanceof UnsupportedMediaTypeError) {
      return refused("unsupportedMediaType", error.message);
    }
    if (error instanceof OtlpDecodeError) return refused("undecodable", error.message);
    throw error;
  }
  let summary;
  try {
    summary = await writer.ingest(
      sender,
      received.events,
      metricPoints?.samples ?? [],
      received.unmapped,
      received.dimensions,
    );
  } catch (error) {
    if (error instanceof StoreUnavailableError) {
      return refused("storeUnavailable", error.message, error.retryAfterSeconds);
    }
    throw error;
  }
  deps.onCommitted?.();
  countCommitted(deps.metrics, sender.orgId, summary, Date.now());
  countIngested(deps.metrics, received.events, received.unusable);
  reportUnmapped(deps.metrics, received.unmapped);
  if (metricPoints !== null) countMetricPoints(deps.metrics, metricPoints);
  const unusable = received.unusable + (metricPoints?.unusable ?? 0);
  const partial = unusable > 0
    ? {
      rejected: unusable,
      message: metricPoints !== null && metricPoints.unusable > 0
        ? `${metricPoints.unusable} unusable data point(s): ${metricPoints.firstReason}`
        : `${received.unusable} unusable record(s): ${received.firstReason}`,
    }
    : undefined;
  return { accepted: true, signal: received.signal, encoding, ...(partial ? { partial } : {}) };
}

function refused(
  refusal: ExportRefusal,
  message: string,
  retryAfterSeconds?: number,
): OtlpExportOutcome {
  return {
    accepted: false,
    refusal,
    message,
    ...(retryAfterSeconds === undefined ? {} : { retryAfterSeconds }),
  };
}

function countIngested(metrics: ServiceMetrics, events: TelemetryEvent[], unusable: number) {
  const counts = new Map<string, { agent: string; kind: string; n: number }>();
  for (const event of events) {
    const key = `${event.agentSystem}\u0000${event.kind}`;
    const entry = counts.get(key);
    if (entry) entry.n++;
    else counts.set(key, { agent: event.agentSystem, kind: event.kind, n: 1 });
  }
  for (const { agent, kind, n } of counts.values()) metrics.ingested.inc({ agent, kind }, n);
  if (unusable > 0) metrics.rejected.inc({}, unusable);
}

/**
 * Kept metric points count as `ingested{kind="metric_point"}` (a retry's
 * again, as a retried log record's does); points that stored nothing as
 * `unmapped` by agent and reason (an instrument we do not keep, a data type
 * we do not read), and unusable ones as `rejected`.
 */
function countMetricPoints(metrics: ServiceMetrics, received: ReceivedMetrics) {
  const kept = new Map<string, number>();
  for (const sample of received.samples) {
    kept.set(sample.agentSystem, (kept.get(sample.agentSystem) ?? 0) + 1);
  }
  for (const [agent, n] of kept) metrics.ingested.inc({ agent, kind: "metric_point" }, n);
  for (const { agent, reason, count } of received.unkept) {
    if (reason !== "unusable") metrics.unmapped.inc({ agent, reason }, count);
  }
  if (received.unusable > 0) metrics.rejected.inc({}, received.unusable);
}
