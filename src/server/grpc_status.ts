/**
 * gRPC status on the wire: the codes OTLP/gRPC answers with, `grpc-message`
 * percent-encoding, and `grpc-status-details-bin` carrying a `google.rpc.Status`
 * with a `google.rpc.RetryInfo`, the retry delay exporters honour (the Go
 * exporters read it for UNAVAILABLE and retry RESOURCE_EXHAUSTED only when it
 * is present).
 *
 * @module
 */
import { BinaryWriter, WireType } from "@bufbuild/protobuf/wire";
import { Buffer } from "node:buffer";

/** The gRPC status codes this server sends (grpc/doc/statuscodes.md). */
export const GRPC_STATUS = {
  OK: 0,
  CANCELLED: 1,
  INVALID_ARGUMENT: 3,
  RESOURCE_EXHAUSTED: 8,
  UNIMPLEMENTED: 12,
  INTERNAL: 13,
  UNAVAILABLE: 14,
  UNAUTHENTICATED: 16,
} as const;

/** The name of a status code this server sends. */
export type GrpcStatusName = keyof typeof GRPC_STATUS;

/** A non-OK answer: a status, a message for people, and an optional retry delay. */
export interface GrpcFailure {
  status: GrpcStatusName;
  message: string;
  retryAfterSeconds?: number;
}

const RETRY_INFO_TYPE_URL = "type.googleapis.com/google.rpc.RetryInfo";

/** The trailers (or trailers-only headers) that carry a status. */
export function statusTrailers(failure: GrpcFailure | null): Record<string, string> {
  if (failure === null) return { "grpc-status": "0" };
  const code = GRPC_STATUS[failure.status];
  const trailers: Record<string, string> = {
    "grpc-status": String(code),
    "grpc-message": percentEncode(failure.message),
  };
  if (failure.retryAfterSeconds !== undefined) {
    const details = encodeRpcStatus(code, failure.message, failure.retryAfterSeconds);
    trailers["grpc-status-details-bin"] = Buffer.from(details).toString("base64").replace(
      /=+$/,
      "",
    );
  }
  return trailers;
}

/**
 * `google.rpc.Status { code = 1; message = 2; details = 3 (Any) }` with one
 * `Any { type_url = 1; value = 2 }` holding
 * `google.rpc.RetryInfo { retry_delay = 1 (Duration { seconds = 1 }) }`.
 */
export function encodeRpcStatus(
  code: number,
  message: string,
  retryAfterSeconds: number,
): Uint8Array {
  const retryInfo = new BinaryWriter().tag(1, WireType.LengthDelimited).fork()
    .tag(1, WireType.Varint).int64(Math.max(0, Math.trunc(retryAfterSeconds))).join().finish();
  const any = new BinaryWriter()
    .tag(1, WireType.LengthDelimited).string(RETRY_INFO_TYPE_URL)
    .tag(2, WireType.LengthDelimited).bytes(retryInfo).finish();
  const status = new BinaryWriter().tag(1, WireType.Varint).int32(code);
  if (message !== "") status.tag(2, WireType.LengthDelimited).string(message);
  return status.tag(3, WireType.LengthDelimited).bytes(any).finish();
}

/**
 * `grpc-message` as the gRPC HTTP/2 protocol wants it: UTF-8, with every byte
 * outside printable ASCII, and `%` itself, written as `%XX`.
 */
export function percentEncode(message: string): string {
  let encoded = "";
  for (const byte of new TextEncoder().encode(message)) {
    encoded += byte >= 0x20 && byte <= 0x7e && byte !== 0x25
      ? String.fromCharCode(byte)
      : `%${byte.toString(16).toUpperCase().padStart(2, "0")}`;
  }
  return encoded;
}
