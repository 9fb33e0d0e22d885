/**
 * One refusal table (`REFUSALS`, `src/server/otlp_export.ts`) answers every
 * refused export on both ingest transports: per class, OTLP/HTTP's status,
 * error code and `Retry-After`, and OTLP/gRPC's status and `RetryInfo`, as
 * the table says and as OTLP prescribes (retryable refusals ask for a delay
 * on both). A store that refuses writes is `faults_disk_test.ts`'s.
 */
import assert from "node:assert/strict";
import { type ExportRefusal, REFUSALS } from "../src/server/otlp_export.ts";
import { GRPC_STATUS } from "../src/server/grpc_status.ts";
import { startTestServer, type TestServer } from "./_harness.ts";
import { grpcCall, LOGS_EXPORT, rpcStatus } from "./_grpc.ts";
import { loadScenario } from "./_scenario.ts";

/** What each class must be, written out: a typo in the table fails here. */
const EXPECTED: Record<
  ExportRefusal,
  { http: number; code: string; grpc: keyof typeof GRPC_STATUS; retry?: number }
> = {
  readOnly: { http: 503, code: "read_only", grpc: "UNAVAILABLE", retry: 30 },
  unauthenticated: { http: 401, code: "unauthenticated", grpc: "UNAUTHENTICATED" },
  keyStoreUnavailable: { http: 503, code: "keystoreUnavailable", grpc: "UNAVAILABLE", retry: 5 },
  unsupportedMediaType: { http: 415, code: "invalid_request", grpc: "INVALID_ARGUMENT" },
  tooLarge: { http: 413, code: "invalid_request", grpc: "RESOURCE_EXHAUSTED" },
  undecodable: { http: 400, code: "invalid_request", grpc: "INVALID_ARGUMENT" },
  storeUnavailable: { http: 503, code: "unavailable", grpc: "UNAVAILABLE", retry: 1 },
};

Deno.test("the refusal table says what OTLP prescribes for each class", () => {
  for (
    const [refusal, want] of Object.entries(EXPECTED) as [
      ExportRefusal,
      typeof EXPECTED[ExportRefusal],
    ][]
  ) {
    const got = REFUSALS[refusal];
    assert.deepEqual(
      { http: got.http, code: got.code, grpc: got.grpc, retry: got.retryAfterSeconds },
      { http: want.http, code: want.code, grpc: want.grpc, retry: want.retry },
      refusal,
    );
  }
});

/** A protobuf body of `bytes` bytes that is no ExportLogsServiceRequest (field 1, wire type 7). */
function garbage(bytes = 8): Uint8Array {
  return new Uint8Array(bytes).fill(0x0f);
}

async function checkBoth(
  server: TestServer,
  refusal: ExportRefusal,
  key: string | null,
  body: Uint8Array,
): Promise<void> {
  const want = EXPECTED[refusal];
  const http = await fetch(`${server.ingestUrl}/v1/logs`, {
    method: "POST",
    headers: {
      "content-type": "application/x-protobuf",
      ...(key === null ? {} : { authorization: `Bearer ${key}` }),
    },
    body: body as Uint8Array<ArrayBuffer>,
  });
  const answer = await http.json();
  assert.equal(http.status, want.http, `${refusal} over HTTP: ${JSON.stringify(answer)}`);
  assert.equal(answer.error.code, want.code, refusal);
  assert.equal(
    http.headers.get("retry-after"),
    want.retry === undefined ? null : String(want.retry),
    `${refusal}: Retry-After`,
  );
  const grpc = await grpcCall(server.grpcUrl!, LOGS_EXPORT, body, { key });
  assert.equal(
    grpc.grpcStatus,
    GRPC_STATUS[want.grpc],
    `${refusal} over gRPC: ${grpc.grpcMessage}`,
  );
  const retry = grpc.details === null ? null : rpcStatus(grpc.details).retryDelaySeconds;
  assert.equal(retry, want.retry ?? null, `${refusal}: RetryInfo`);
}

Deno.test("each refusal class answers alike on OTLP/HTTP and OTLP/gRPC", async (t) => {
  await using server = await startTestServer({ flags: { ingestMaxBytes: "4096" } });
  const org = await server.createOrg();
  await t.step(
    "unauthenticated",
    () => checkBoth(server, "unauthenticated", "wb_ingest_nope", garbage()),
  );
  await t.step("undecodable", () => checkBoth(server, "undecodable", org.ingestKey, garbage()));
  await t.step("too large", () => checkBoth(server, "tooLarge", org.ingestKey, garbage(8192)));
});

Deno.test("a key store that fails and a read-only node are retryable on both transports", async (t) => {
  const dir = await Deno.makeTempDir({ prefix: "agent-telemetry-refusals-" });
  try {
    let ingestKey: string;
    {
      await using primary = await startTestServer({ dir });
      ingestKey = (await loadScenario(primary)).org.ingestKey;
    }
    await t.step("key store unavailable", async () => {
      await using server = await startTestServer({
        dir,
        overrides: {
          keys: (real) => ({
            verifyApiKey: (key) => real.verifyApiKey(key),
            verifyIngestKey: () => Promise.reject(new Error("key store down")),
          }),
        },
      });
      await checkBoth(server, "keyStoreUnavailable", ingestKey, garbage());
    });
    await t.step("read-only node", async () => {
      await using replica = await startTestServer({ dir, flags: { readOnly: true } });
      await checkBoth(replica, "readOnly", ingestKey, garbage());
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
