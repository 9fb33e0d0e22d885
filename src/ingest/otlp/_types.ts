/**
 * The words of the OTLP wire layer its private parts share; `mod.ts`
 * re-exports them, so no part imports the folder's public face.
 *
 * @module
 */

/** An OTLP signal, as named by the `/v1/<signal>` path. */
export type Signal = "logs" | "traces" | "metrics";

/** How a request body is encoded. */
export type Encoding = "json" | "protobuf";
