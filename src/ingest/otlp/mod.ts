/**
 * The OTLP/HTTP wire layer: reads (and gunzips) export request bodies under a
 * size cap, decodes OTLP logs and traces from JSON or protobuf into
 * {@link OtlpRecord}s, and encodes the OTLP success answers.
 *
 * @module
 */

import type { OtlpRecord } from "../../model/telemetry.ts";
import { OtlpDecodeError } from "./_errors.ts";
import { decodeJson } from "./_json.ts";
import { decodeProtobuf } from "./_protobuf.ts";
import type { Encoding, Signal } from "./_types.ts";

export { encodingOf, readBody } from "./_body.ts";
export { OtlpDecodeError, PayloadTooLargeError, UnsupportedMediaTypeError } from "./_errors.ts";
export { encodeExportResponse } from "./_response.ts";
export type { Encoding, Signal } from "./_types.ts";

/**
 * Decodes an OTLP export request. JSON is routed by its top key
 * (`resourceLogs`, `resourceSpans`, `resourceMetrics`) whatever the path, since
 * some agents post every signal to one URL; protobuf, which carries no such
 * key, by the path's signal. Metrics are recognised but not decoded (no
 * records), and an empty body is an empty request.
 *
 * Records of one resource share its `resource` object: treat it as read-only.
 * `nulPossible` is false when no text of the request may put U+0000 into a
 * record or event (`nul_policy.ts`).
 *
 * @throws {OtlpDecodeError} for any body that is not a well-formed export request
 */
export function decodeExport(
  body: Uint8Array,
  options: { encoding: Encoding; pathSignal: Signal },
): { signal: Signal; records: OtlpRecord[]; nulPossible: boolean } {
  const { encoding, pathSignal } = options;
  if (body.length === 0) return { signal: pathSignal, records: [], nulPossible: false };
  try {
    if (encoding === "json") return decodeJson(body, pathSignal);
    return { signal: pathSignal, ...decodeProtobuf(body, pathSignal) };
  } catch (error) {
    if (error instanceof OtlpDecodeError) throw error;
    const detail = error instanceof Error ? error.message : String(error);
    throw new OtlpDecodeError(
      `Invalid OTLP ${encoding === "json" ? "JSON" : "protobuf"}: ${detail}`,
    );
  }
}
