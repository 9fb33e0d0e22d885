/**
 * The server's per-record work on the main thread, measured alone and
 * in-process: decoding an OTLP log export (JSON or protobuf) into records,
 * then mapping the records to events (the agents' mappers, limits, NUL
 * policy) — the same functions the ingest listener runs, on the bodies the
 * ingest phase sends.
 *
 * @module
 */
import { encodeJson, generateExports } from "../src/demo/mod.ts";
import { decodeExport } from "../src/ingest/otlp/mod.ts";
import { receiveExport } from "../src/ingest/receive.ts";
import { type JsonLogsRequest, protobufLogs } from "./otlp_protobuf.ts";

/** Microseconds per record of one encoding. */
export interface DecodeFigures {
  records: number;
  decodeUs: number;
  decodeAndMapUs: number;
}

/** Times decoding and decoding + mapping of `records` records (512 a body), best of `rounds`. */
export function measureDecode(
  options: { records: number; rounds: number; seed: number; now: Date },
): Record<"json" | "protobuf", DecodeFigures> {
  const json: Uint8Array[] = [];
  const protobuf: Uint8Array[] = [];
  let records = 0;
  for (
    const batch of generateExports({
      actors: 40,
      days: 2,
      seed: options.seed,
      now: options.now,
      batchRecords: 512,
      order: "time",
    })
  ) {
    json.push(encodeJson(batch.body));
    protobuf.push(protobufLogs(batch.body as JsonLogsRequest));
    records += batch.records;
    if (records >= options.records) break;
  }
  const time = (bodies: Uint8Array[], fn: (body: Uint8Array) => unknown) => {
    let best = Infinity;
    for (let round = 0; round < options.rounds; round++) {
      const t0 = performance.now();
      for (const body of bodies) fn(body);
      best = Math.min(best, performance.now() - t0);
    }
    return (best * 1000) / records;
  };
  const figures = (encoding: "json" | "protobuf", bodies: Uint8Array[]): DecodeFigures => {
    const options = { encoding, pathSignal: "logs" } as const;
    return {
      records,
      decodeUs: time(bodies, (body) => decodeExport(body, options)),
      decodeAndMapUs: time(bodies, (body) => receiveExport(body, options)),
    };
  };
  return { json: figures("json", json), protobuf: figures("protobuf", protobuf) };
}
