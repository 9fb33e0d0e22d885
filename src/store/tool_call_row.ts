/**
 * The `tool_calls` row of a stored call, built from the column list
 * (`TOOL_CALLS`): each column holds the event's field of its name in
 * camelCase (`mcp_server_name` ← `mcpServerName`), as detection returns it
 * when detection redacts the column (its role's `rescanned`), else as the
 * event has it; absent is null. Only whose call it is, its `seq` and its
 * time (`ts` ← `timeMs`) come from elsewhere. A new column with an event
 * field of its name needs nothing here; one without does not compile.
 *
 * @module
 */
import { CALL_TEXT_NAMES, type Detection } from "../detect/mod.ts";
import type { ToolCallEvent } from "../model/telemetry.ts";
import { TOOL_CALL_ROLES, TOOL_CALLS, type ToolCallRow } from "./table_columns.ts";

/** A tool call as the batch stores it: the event, with the decision paired to it. */
export type PendingCall = Omit<ToolCallEvent, "kind" | "sessionId" | "identity"> & {
  sessionId: string;
};

/** Whose call a row is and when it was written; every other column is the call's. */
export interface CallIdentity {
  id: string;
  orgId: string;
  actorId: string;
  seq: number;
}

/** The columns not filled from the event field of their name, and what fills them. */
const OWN_COLUMNS = {
  id: "call.id",
  org_id: "call.orgId",
  seq: "call.seq",
  actor_id: "call.actorId",
  ts: "row.timeMs",
} as const;

/** `mcp_server_name` → `mcpServerName`. */
type FieldOf<C extends string> = C extends `${infer Head}_${infer Tail}`
  ? `${Head}${Capitalize<FieldOf<Tail>>}`
  : C;

/** A field's value as stored: absent is null. */
type Stored<T> = undefined extends T ? Exclude<T, undefined> | null : T;

/** The columns whose event field is missing or of another type (none, or this fails to compile). */
type Unfilled = {
  [C in Exclude<keyof ToolCallRow, keyof typeof OWN_COLUMNS>]: FieldOf<C> extends keyof PendingCall
    ? Stored<PendingCall[FieldOf<C>]> extends ToolCallRow[C] ? never : C
    : C;
}[Exclude<keyof ToolCallRow, keyof typeof OWN_COLUMNS>];

/** Compiles only when `T` is `never`: names the columns {@link Unfilled} finds otherwise. */
type NoneOf<T extends never> = T;
// A tool_calls column with no event field of its name is a type error here, naming it.
type _EveryColumnFilled = NoneOf<Unfilled>;

const TEXT_NAMES: readonly string[] = CALL_TEXT_NAMES;

/** What a column's value is read from, in the builder's terms. */
function sourceOf(column: keyof ToolCallRow): string {
  if (column in OWN_COLUMNS) return OWN_COLUMNS[column as keyof typeof OWN_COLUMNS];
  const field = column.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
  if (!TOOL_CALL_ROLES[column].rescanned) return `row.${field} ?? null`;
  return TEXT_NAMES.includes(field) ? `texts.${field} ?? null` : `detection.${field} ?? null`;
}

/**
 * The row of the call `row` as `call` stores it, with detection's texts.
 * Compiled once from the column list into one object literal, as
 * `TableColumns.values` is: a loop over the names costs a row a few µs more.
 */
export const toolCallRow = new Function(
  "call",
  "row",
  "detection",
  "const texts = detection.texts ?? {};\n" +
    `return { ${TOOL_CALLS.names.map((c) => `${c}: ${sourceOf(c)}`).join(", ")} };`,
) as (call: CallIdentity, row: PendingCall, detection: Detection) => ToolCallRow;
