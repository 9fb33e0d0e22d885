import { OtlpDecodeError, PayloadTooLargeError, UnsupportedMediaTypeError } from "./_errors.ts";
import type { Encoding } from "./_types.ts";

/**
 * Largest piece of compressed input handed to the inflater at once. Deflate
 * expands at most about 1032:1, so one piece inflates to at most ~8.3 MiB
 * before the size check sees it, whatever the sender's chunking.
 */
const INFLATE_PIECE_BYTES = 8 * 1024;

/**
 * Reads the request body, gunzipping when `Content-Encoding` is gzip, and
 * stops as soon as the decompressed size passes `maxBytes`, so a gzip bomb is
 * never inflated past the cap.
 *
 * @throws {PayloadTooLargeError} when `Content-Length` or the decompressed size exceeds `maxBytes`
 * @throws {OtlpDecodeError} on an unsupported content encoding, invalid gzip or a failed read
 */
export async function readBody(request: Request, maxBytes: number): Promise<Uint8Array> {
  const gzip = isGzip(request.headers.get("content-encoding"));
  const declared = request.headers.get("content-length");
  if (declared !== null && Number(declared) > maxBytes) {
    await request.body?.cancel().catch(() => {});
    throw tooLarge(maxBytes);
  }
  const body = request.body;
  if (body === null) return new Uint8Array(0);
  const stream = gzip
    ? body.pipeThrough(inPieces()).pipeThrough(new DecompressionStream("gzip"))
    : body;
  return await readAtMost(stream, maxBytes);
}

/**
 * The body's encoding from `Content-Type`: `application/json` (any parameters)
 * or `application/x-protobuf` / `application/protobuf`.
 *
 * @throws {UnsupportedMediaTypeError} for anything else, or no content type
 */
export function encodingOf(contentType: string | null): Encoding {
  if (contentType === null) {
    throw new UnsupportedMediaTypeError(
      "Missing content type: expected application/json or application/x-protobuf",
    );
  }
  const mediaType = contentType.split(";", 1)[0]!.trim().toLowerCase();
  if (mediaType === "application/json") return "json";
  if (mediaType === "application/x-protobuf" || mediaType === "application/protobuf") {
    return "protobuf";
  }
  throw new UnsupportedMediaTypeError(
    `Unsupported content type: "${contentType}", expected application/json or application/x-protobuf`,
  );
}

function isGzip(contentEncoding: string | null): boolean {
  if (contentEncoding === null) return false;
  const codings = contentEncoding.split(",").map((coding) => coding.trim().toLowerCase())
    .filter((coding) => coding !== "" && coding !== "identity");
  if (codings.length === 0) return false;
  if (codings.length === 1 && (codings[0] === "gzip" || codings[0] === "x-gzip")) return true;
  throw new OtlpDecodeError(`Unsupported content encoding: "${contentEncoding}"`);
}

function tooLarge(maxBytes: number): PayloadTooLargeError {
  return new PayloadTooLargeError(`Request body is larger than the limit: ${maxBytes} bytes`);
}

/** Splits chunks into pieces of at most {@link INFLATE_PIECE_BYTES}, without copying. */
function inPieces(): TransformStream<Uint8Array<ArrayBuffer>, BufferSource> {
  return new TransformStream({
    transform(chunk, controller) {
      for (let start = 0; start < chunk.byteLength; start += INFLATE_PIECE_BYTES) {
        controller.enqueue(chunk.subarray(start, start + INFLATE_PIECE_BYTES));
      }
    },
  });
}

async function readAtMost(
  stream: ReadableStream<Uint8Array>,
  maxBytes: number,
): Promise<Uint8Array> {
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    let result: ReadableStreamReadResult<Uint8Array>;
    try {
      result = await reader.read();
    } catch (error) {
      throw new OtlpDecodeError(`Could not read the request body: ${messageOf(error)}`);
    }
    if (result.done) break;
    size += result.value.byteLength;
    if (size > maxBytes) {
      await reader.cancel().catch(() => {});
      throw tooLarge(maxBytes);
    }
    chunks.push(result.value);
  }
  if (chunks.length === 1) return chunks[0]!;
  const body = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    body.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return body;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
