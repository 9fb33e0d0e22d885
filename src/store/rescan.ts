/**
 * `detect rescan` over stored calls, engine-independent: detection again over
 * a call's stored texts, and which of them change.
 *
 * @module
 */
import {
  CALL_TEXT_NAMES,
  type CallTextName,
  callTexts,
  type Detection,
  detectToolCall,
  type RiskFinding,
} from "../detect/mod.ts";
import type { ToolCallEvent } from "../model/telemetry.ts";
import type { StoredCall } from "./detection_rows.ts";

/** A text's stored column: `errorMessage` → `error_message`. */
type ColumnOf<N extends string> = N extends `${infer Head}${infer Tail}`
  ? `${Head extends Lowercase<Head> ? Head : `_${Lowercase<Head>}`}${ColumnOf<Tail>}`
  : N;

/**
 * A stored call as `detect rescan` reads it: whose and which call, its
 * arguments and result, and the column of each of detection's texts
 * (`CALL_TEXT_NAMES`), so a text detection reads is rescanned without a
 * line here.
 */
export type RescanRow =
  & {
    id: string;
    "org_id": string;
    "session_id": string;
    ts: number;
    "tool_name": string;
    "tool_type": string;
    category: string;
    "tool_call_id": string | null;
    arguments: string | null;
    result: string | null;
  }
  & { [N in CallTextName as ColumnOf<N>]: string | null };

const TEXT_COLUMNS = CALL_TEXT_NAMES.map((name) =>
  [name, name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`) as ColumnOf<CallTextName>] as const
);

/** A rescanned call's stored texts, by their detection names. */
function rescanTexts(row: RescanRow): Record<CallTextName, string | undefined> {
  const texts = {} as Record<CallTextName, string | undefined>;
  for (const [name, column] of TEXT_COLUMNS) texts[name] = row[column] ?? undefined;
  return texts;
}

/**
 * The texts to store for a rescanned call, in the order of the update
 * statements (arguments, result, then the other texts), or null when
 * detection left every one of them as stored.
 */
export function rescannedTexts(row: RescanRow, detection: Detection): (string | null)[] | null {
  const texts = detection.texts ?? {};
  const stored = rescanTexts(row);
  const values = [
    detection.arguments ?? null,
    detection.result ?? null,
    ...CALL_TEXT_NAMES.map((name) => texts[name] ?? stored[name] ?? null),
  ];
  const before = [
    row.arguments,
    row.result,
    ...CALL_TEXT_NAMES.map((name) => stored[name] ?? null),
  ];
  return values.every((value, i) => value === before[i]) ? null : values;
}

/** The identity of a rescanned call. */
export function storedCallOf(row: RescanRow): StoredCall {
  return {
    id: row.id,
    orgId: row.org_id,
    sessionId: row.session_id,
    timeMs: row.ts,
    toolName: row.tool_name,
    toolCallId: row.tool_call_id ?? row.id,
  };
}

/**
 * Detection over a stored call again. A credential flag whose secret was
 * redacted at ingest (`keptEvidence`) is kept: the text no longer holds it.
 */
export function rescanDetection(
  row: RescanRow,
  keptEvidence: string | undefined,
  options: { redactSecrets: boolean },
): Detection {
  const detection = detectToolCall({
    toolName: row.tool_name,
    toolType: row.tool_type as ToolCallEvent["toolType"],
    category: row.category as ToolCallEvent["category"],
    ...(row.arguments === null ? {} : { arguments: row.arguments }),
    ...(row.result === null ? {} : { result: row.result }),
    texts: callTexts(rescanTexts(row)),
  }, { redact: options.redactSecrets });
  const redacted = [row.arguments, row.result, ...Object.values(rescanTexts(row))]
    .some((text) => text?.includes("[REDACTED:"));
  if (
    keptEvidence !== undefined && redacted &&
    !detection.flags.some((f) => f.flag === "credential_detected")
  ) {
    detection.flags.push({ flag: "credential_detected", evidence: keptEvidence });
    detection.flags.sort(byFlag);
  }
  return detection;
}

function byFlag(a: RiskFinding, b: RiskFinding): number {
  return a.flag < b.flag ? -1 : 1;
}
