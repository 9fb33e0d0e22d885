import { NamedError } from "../../errors.ts";

/** The body cannot be read as an OTLP export request; the caller answers 400. */
export class OtlpDecodeError extends NamedError {}

/** The body, after decompression, is larger than the cap; the caller answers 413. */
export class PayloadTooLargeError extends NamedError {}

/** The content type is neither JSON nor protobuf; the caller answers 415. */
export class UnsupportedMediaTypeError extends NamedError {}
