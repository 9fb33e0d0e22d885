import assert from "node:assert/strict";
import {
  encodingOf,
  OtlpDecodeError,
  PayloadTooLargeError,
  readBody,
  UnsupportedMediaTypeError,
} from "../src/ingest/otlp/mod.ts";

const MiB = 1024 * 1024;
const URL = "http://127.0.0.1/v1/logs";

async function gzip(bytes: Uint8Array<ArrayBuffer>): Promise<Uint8Array<ArrayBuffer>> {
  const stream = new Blob([bytes]).stream().pipeThrough(new CompressionStream("gzip"));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

function post(body: BodyInit | null, headers: Record<string, string> = {}): Request {
  return new Request(URL, { method: "POST", body, headers });
}

/** A stream of `total` zero bytes made on demand, counting what was pulled. */
function zeros(total: number, chunk: number) {
  const state = { pulled: 0, cancelled: false };
  const stream = new ReadableStream<Uint8Array<ArrayBuffer>>({
    pull(controller) {
      if (state.pulled >= total) return controller.close();
      const size = Math.min(chunk, total - state.pulled);
      state.pulled += size;
      controller.enqueue(new Uint8Array(size));
    },
    cancel() {
      state.cancelled = true;
    },
  });
  return { stream, state };
}

const payload = new TextEncoder().encode(JSON.stringify({ resourceLogs: [] }).repeat(100));

Deno.test("readBody returns an uncompressed body as sent", async () => {
  assert.deepEqual(await readBody(post(payload), MiB), payload);
  assert.deepEqual(
    await readBody(post(payload, { "content-encoding": "identity" }), MiB),
    payload,
  );
});

Deno.test("readBody joins a body sent in many chunks", async () => {
  const { stream } = zeros(100_000, 1000);
  const body = await readBody(post(stream), MiB);
  assert.equal(body.length, 100_000);
  assert.ok(body.every((byte) => byte === 0));
});

Deno.test("readBody returns no bytes for a request without a body", async () => {
  assert.equal((await readBody(post(null), MiB)).length, 0);
});

Deno.test("readBody gunzips gzip and x-gzip bodies", async () => {
  const compressed = await gzip(payload);
  for (const encoding of ["gzip", "x-gzip", "GZIP", "gzip, identity"]) {
    const body = await readBody(post(compressed, { "content-encoding": encoding }), MiB);
    assert.deepEqual(body, payload, encoding);
  }
});

Deno.test("readBody rejects an unsupported content encoding with OtlpDecodeError", async () => {
  for (const encoding of ["br", "deflate", "gzip, br"]) {
    await assert.rejects(
      () => readBody(post(payload, { "content-encoding": encoding }), MiB),
      OtlpDecodeError,
    );
  }
});

Deno.test("readBody rejects a corrupt gzip body with OtlpDecodeError", async () => {
  const compressed = await gzip(payload);
  const corrupt = compressed.slice();
  corrupt.fill(0x55, 10, 30);
  for (const body of [payload, corrupt, compressed.subarray(0, compressed.length - 12)]) {
    await assert.rejects(
      () => readBody(post(body.slice(), { "content-encoding": "gzip" }), MiB),
      OtlpDecodeError,
    );
  }
});

Deno.test("readBody accepts a body at the cap and rejects one byte more", async () => {
  const { stream: atCap } = zeros(1000, 300);
  assert.equal((await readBody(post(atCap), 1000)).length, 1000);
  const { stream: overCap, state } = zeros(1001, 300);
  await assert.rejects(() => readBody(post(overCap), 1000), PayloadTooLargeError);
  assert.ok(state.cancelled);
});

Deno.test("readBody rejects a Content-Length over the cap without reading the body", async () => {
  const { stream, state } = zeros(16 * MiB + 1, 64 * 1024);
  const request = post(stream, { "content-length": String(16 * MiB + 1) });
  await assert.rejects(() => readBody(request, 16 * MiB), PayloadTooLargeError);
  assert.equal(state.pulled, 0);
});

Deno.test("readBody stops a gzip bomb at a 16 MiB cap without inflating it all", async () => {
  // 1 GiB of zeros, compressed as it is generated (about 1 MiB on the wire).
  const { stream, state } = zeros(1024 * MiB, MiB);
  const bomb = stream.pipeThrough(new CompressionStream("gzip"));
  const started = performance.now();
  await assert.rejects(
    () => readBody(post(bomb, { "content-encoding": "gzip" }), 16 * MiB),
    PayloadTooLargeError,
  );
  const elapsed = performance.now() - started;
  assert.ok(state.pulled <= 64 * MiB, `generated ${state.pulled / MiB} MiB before stopping`);
  assert.ok(elapsed < 10_000, `took ${elapsed} ms`);
});

Deno.test("readBody inflates a bomb that arrives in one chunk only piece by piece", async () => {
  // 256 MiB of zeros in one ~260 KiB chunk: inflating it whole takes over a second here.
  const { stream } = zeros(256 * MiB, MiB);
  const bomb = await new Response(stream.pipeThrough(new CompressionStream("gzip"))).bytes();
  const started = performance.now();
  await assert.rejects(
    () => readBody(post(bomb, { "content-encoding": "gzip" }), 16 * MiB),
    PayloadTooLargeError,
  );
  const elapsed = performance.now() - started;
  assert.ok(elapsed < 600, `took ${elapsed} ms`);
});

Deno.test("readBody inflates a gzip body just under the cap", async () => {
  const body = new Uint8Array(4 * MiB).fill(0x61);
  const compressed = await gzip(body);
  const read = await readBody(post(compressed, { "content-encoding": "gzip" }), 4 * MiB);
  assert.equal(read.length, 4 * MiB);
  assert.ok(read.every((byte) => byte === 0x61));
});

Deno.test("encodingOf reads JSON and protobuf content types", async (t) => {
  const cases: [string, "json" | "protobuf"][] = [
    ["application/json", "json"],
    ["application/json; charset=utf-8", "json"],
    ["Application/JSON", "json"],
    ["application/x-protobuf", "protobuf"],
    ["application/protobuf", "protobuf"],
    [" application/x-protobuf ; proto=opentelemetry", "protobuf"],
  ];
  for (const [contentType, encoding] of cases) {
    await t.step(contentType, () => assert.equal(encodingOf(contentType), encoding));
  }
});

Deno.test("encodingOf rejects other content types with UnsupportedMediaTypeError", async (t) => {
  for (const contentType of [null, "", "text/plain", "application/jsonl", "application/grpc"]) {
    await t.step(String(contentType), () => {
      assert.throws(() => encodingOf(contentType), UnsupportedMediaTypeError);
    });
  }
});
