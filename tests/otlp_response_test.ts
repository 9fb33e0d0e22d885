import assert from "node:assert/strict";
import { BinaryReader, WireType } from "@bufbuild/protobuf/wire";
import { encodeExportResponse, type Signal } from "../src/ingest/otlp/mod.ts";

const SIGNALS: Signal[] = ["logs", "traces", "metrics"];

/** Reads `Export*ServiceResponse { partial_success (1) { rejected (1), error_message (2) } }`. */
function readPartialSuccess(body: Uint8Array): { rejected: bigint; message: string } | null {
  const response = new BinaryReader(body);
  let partial: { rejected: bigint; message: string } | null = null;
  while (response.pos < response.len) {
    const [field, wireType] = response.tag();
    if (field !== 1 || wireType !== WireType.LengthDelimited) {
      response.skip(wireType, field);
      continue;
    }
    const inner = new BinaryReader(response.bytes());
    partial = { rejected: 0n, message: "" };
    while (inner.pos < inner.len) {
      const [innerField, innerWireType] = inner.tag();
      if (innerField === 1 && innerWireType === WireType.Varint) {
        partial.rejected = BigInt(inner.int64());
      } else if (innerField === 2 && innerWireType === WireType.LengthDelimited) {
        partial.message = inner.string();
      } else inner.skip(innerWireType, innerField);
    }
  }
  return partial;
}

Deno.test("encodeExportResponse answers success with an empty response in each encoding", () => {
  for (const signal of SIGNALS) {
    const json = encodeExportResponse(signal, "json");
    assert.equal(json.contentType, "application/json");
    assert.deepEqual(JSON.parse(new TextDecoder().decode(json.body)), {});
    const protobuf = encodeExportResponse(signal, "protobuf");
    assert.equal(protobuf.contentType, "application/x-protobuf");
    assert.equal(protobuf.body.length, 0);
  }
});

Deno.test("encodeExportResponse leaves partialSuccess unset when nothing was rejected", () => {
  const partial = { rejected: 0, message: "all good" };
  assert.equal(new TextDecoder().decode(encodeExportResponse("logs", "json", partial).body), "{}");
  assert.equal(encodeExportResponse("logs", "protobuf", partial).body.length, 0);
});

Deno.test("encodeExportResponse reports rejected records in OTLP/JSON", () => {
  const expected: Record<Signal, string> = {
    logs: "rejectedLogRecords",
    traces: "rejectedSpans",
    metrics: "rejectedDataPoints",
  };
  for (const signal of SIGNALS) {
    const { body, contentType } = encodeExportResponse(signal, "json", {
      rejected: 3,
      message: "3 records had no session id",
    });
    assert.equal(contentType, "application/json");
    assert.deepEqual(JSON.parse(new TextDecoder().decode(body)), {
      partialSuccess: { [expected[signal]]: 3, errorMessage: "3 records had no session id" },
    });
  }
});

Deno.test("encodeExportResponse reports rejected records in protobuf", () => {
  for (const signal of SIGNALS) {
    const { body, contentType } = encodeExportResponse(signal, "protobuf", {
      rejected: 2,
      message: "2 records were unusable: “no session id”",
    });
    assert.equal(contentType, "application/x-protobuf");
    assert.deepEqual(readPartialSuccess(body), {
      rejected: 2n,
      message: "2 records were unusable: “no session id”",
    });
  }
  const large = encodeExportResponse("logs", "protobuf", { rejected: 2 ** 40, message: "" });
  assert.deepEqual(readPartialSuccess(large.body), { rejected: 2n ** 40n, message: "" });
});
