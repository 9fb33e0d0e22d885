/** The body cannot be read as an OTLP export request; the caller answers 400. */
export class OtlpDecodeError extends Error {
  override name = "OtlpDecodeError";
}

/** The body, after decompression, is larger than the cap; the caller answers 413. */
export class PayloadTooLargeError extends Error {
  override name = "PayloadTooLargeError";
}

/** The content type is neither JSON nor protobuf; the caller answers 415. */
export class UnsupportedMediaTypeError extends Error {
  override name = "UnsupportedMediaTypeError";
}
