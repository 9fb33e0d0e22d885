/**
 * What a real-agent scenario declares: the pinned client, how to run it, and
 * the API's expected view of the run, as data. The live harness
 * (`deno task agents`) and the replay test (`tests/agents_real_test.ts`)
 * compare the same expectations with {@link compareRun} in `_check.ts`.
 *
 * @module
 */

/** One tool call as the API must show it (oldest first within the session). */
export interface ExpectedToolCall {
  /** Fields of the tool call detail (spec 2.5) that must be equal; `null` means absent or null. */
  fields: Record<string, unknown>;
  /** Substrings the served `arguments` must contain (after JSON decoding is not needed). */
  argumentsContain?: string[];
  /** Substrings that must NOT appear in arguments, result or error_message (secrets). */
  absent?: string[];
  /** Risk flag kinds raised on this call, sorted. */
  flags?: string[];
  /** Detail fields that must be present whatever their value: ids a client makes up per run (`trace_id`). */
  present?: string[];
}

/** Fields of a call refused before it ran: no success either way, no duration, no result. */
export const REJECTED = {
  outcome: "rejected",
  success: null,
  "duration_ms": null,
  "result_size_bytes": null,
  decision: "reject",
};

/** A session's expected view. */
export interface ExpectedSession {
  /** Session fields (spec 2.3) that must be equal. */
  fields: Record<string, unknown>;
  toolCalls: ExpectedToolCall[];
  /** Domains of the session detail (`domain` values, sorted). */
  domains?: string[];
  /**
   * Page `/v1/tool-calls?session_id=…` this many at a time, following `cursor` to the
   * end: the ids, reversed, must be the session detail's `tool_calls` ids, none repeated.
   */
  pageThrough?: number;
}

/** The API's expected view of one run: every session the run made. */
export interface ExpectedRun {
  agentSystem: string;
  sessions: ExpectedSession[];
  /** `/v1/insights/cost` breakdown rows (subset of fields) for the run, any order. */
  cost?: Record<string, unknown>[];
}

/** One way of running a client (protocol, encoding, traces on or off). */
export interface Variant {
  /** Folder name of its recording, e.g. `http-protobuf`, `http-json-gzip`, `grpc`. */
  name: string;
  /** Environment for the client (OTEL_EXPORTER_OTLP_PROTOCOL, …). */
  env: Record<string, string>;
}

/** What the harness gives a scenario for one live run. */
export interface RunContext {
  /** Base URL of the OTLP/HTTP recorder the client must export to. */
  otlpHttpUrl: string;
  /** `host:port` of the OTLP/gRPC endpoint (when the variant uses gRPC). */
  otlpGrpcUrl: string;
  /** `Authorization` header value for OTLP (`Bearer wb_ingest_…`). */
  authorization: string;
  /** A fresh scratch directory: the client's HOME and working directory live under it. */
  workDir: string;
  /** The installed package's directory (`node_modules/.bin/<bin>` inside). */
  installDir: string;
  variant: Variant;
}

/** A real agent client and its scripted run. */
export interface AgentScenario {
  /** Fixture folder prefix, e.g. `claude-code`; recordings go to `<agent>-<version>/<variant>/`. */
  agent: string;
  npmPackage: string;
  version: string;
  variants: Variant[];
  /**
   * Runs the client once, non-interactively, against its scripted mock model
   * (started and stopped here, on loopback) until it exits and has flushed
   * its telemetry. Throws when the client fails in an unexpected way.
   */
  run(context: RunContext): Promise<void>;
  /** The API's expected view of one run of `variant`. */
  expected(variant: Variant): ExpectedRun;
}
