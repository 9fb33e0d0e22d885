import { BinaryWriter, WireType } from "@bufbuild/protobuf/wire";
import type { Encoding, Signal } from "./_types.ts";

/** The rejected-count field of each signal's `Export*PartialSuccess`, in OTLP/JSON. */
const REJECTED_KEY: Record<Signal, string> = {
  logs: "rejectedLogRecords",
  traces: "rejectedSpans",
  metrics: "rejectedDataPoints",
};

const CONTENT_TYPE: Record<Encoding, string> = {
  json: "application/json",
  protobuf: "application/x-protobuf",
};

const EMPTY_JSON = new TextEncoder().encode("{}");

/**
 * The OTLP success answer in the request's encoding: an empty
 * `Export*ServiceResponse`, or one carrying `partial_success` when records were
 * rejected (which tells the exporter not to retry).
 */
export function encodeExportResponse(
  signal: Signal,
  encoding: Encoding,
  partial?: { rejected: number; message: string },
): { body: Uint8Array; contentType: string } {
  const contentType = CONTENT_TYPE[encoding];
  if (partial === undefined || partial.rejected <= 0) {
    return { body: encoding === "json" ? EMPTY_JSON.slice() : new Uint8Array(0), contentType };
  }
  if (encoding === "json") {
    const partialSuccess = {
      [REJECTED_KEY[signal]]: partial.rejected,
      errorMessage: partial.message,
    };
    return { body: new TextEncoder().encode(JSON.stringify({ partialSuccess })), contentType };
  }
  // Export*ServiceResponse.partial_success (1) { rejected_* int64 (1), error_message (2) }
  const writer = new BinaryWriter().tag(1, WireType.LengthDelimited).fork()
    .tag(1, WireType.Varint).int64(Math.trunc(partial.rejected));
  if (partial.message !== "") writer.tag(2, WireType.LengthDelimited).string(partial.message);
  return { body: writer.join().finish(), contentType };
}
