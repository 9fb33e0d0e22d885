/**
 * The integer keys SQLite's `calls` and `keyed_model_calls` hold in place of
 * the organization's, session's and actor's ids (sql/sqlite/telemetry_0015_keyed_calls.sql):
 * found, or added, as a call is written; and the empty `tool_use_id` a tool
 * call stores when it equals its call id (telemetry_0016_tool_use_id.sql);
 * decisions are keyed by the session's key too (telemetry_0017_keyed_decisions.sql), and a
 * tool call's prompt by a key within its session (telemetry_0018_prompt_keys.sql).
 *
 * @module
 */
import { type BoundValue, KEYED_COLUMNS, MODEL_CALLS, TOOL_CALLS } from "../table_columns.ts";
import type { NamedStatements } from "./database.ts";

/** Where each keyed id sits in a call's row values: the same in both tables' column lists. */
const [ORG, SESSION, ACTOR] = ["org_id", "session_id", "actor_id"].map((column) => {
  const positions = [TOOL_CALLS, MODEL_CALLS].map((table) =>
    (table.names as readonly string[]).indexOf(column)
  );
  if (positions[0]! < 0 || positions[0] !== positions[1] || !(column in KEYED_COLUMNS)) {
    throw new Error(`tool_calls and model_calls must hold "${column}" at one position`);
  }
  return positions[0]!;
}) as [number, number, number];
const PROMPT_ID = (TOOL_CALLS.names as readonly string[]).indexOf("prompt_id");
const TOOL_CALL_ID = (TOOL_CALLS.names as readonly string[]).indexOf("tool_call_id");
const TOOL_USE_ID = (TOOL_CALLS.names as readonly string[]).indexOf("tool_use_id");

/**
 * Keys of one write transaction. A key is remembered only until {@link forget}
 * (called as each export starts): one added by an export that was rolled back
 * is gone from the file, and must not be bound again.
 */
export class CallKeys {
  readonly #statements: NamedStatements;
  readonly #known = new Map<string, number>();

  constructor(statements: NamedStatements) {
    this.#statements = statements;
  }

  forget(): void {
    this.#known.clear();
  }

  /** A tool call's or model call's row values (its column list's order), keys in place of ids. */
  keyed(values: BoundValue[]): BoundValue[] {
    const org = this.#key("org", String(values[ORG]), null);
    values[SESSION] = this.#key("session", String(values[SESSION]), org);
    values[ACTOR] = this.#key("actor", String(values[ACTOR]), org);
    values[ORG] = org;
    return values;
  }

  /**
   * A tool call's row values as `calls` stores them: {@link keyed}, its
   * prompt's key in place of the prompt id, and '' for a `tool_use_id` equal
   * to the call id (the `tool_calls` view gives the call id back).
   */
  keyedToolCall(values: BoundValue[]): BoundValue[] {
    const useId = values[TOOL_USE_ID];
    if (typeof useId === "string" && useId === values[TOOL_CALL_ID]) values[TOOL_USE_ID] = "";
    const promptId = values[PROMPT_ID];
    this.keyed(values);
    values[PROMPT_ID] = promptId === null || promptId === undefined
      ? null
      : this.#key("prompt", String(promptId), Number(values[SESSION]));
    return values;
  }

  /** The key of an organization's session, added when it has none (a decision's, schema 17). */
  sessionKey(orgId: string, sessionId: string): number {
    return this.#key("session", sessionId, this.#key("org", orgId, null));
  }

  /** The key of `id`, within `parent` (an organization's or a session's key; none for an organization). */
  #key(kind: "org" | "session" | "actor" | "prompt", id: string, parent: number | null): number {
    const memo = `${kind}\u0000${parent ?? ""}\u0000${id}`;
    const known = this.#known.get(memo);
    if (known !== undefined) return known;
    const params = parent === null ? [id] : [id, parent];
    const found = (this.#statements.run(`${kind}_key`, "get", ...params) ??
      this.#statements.run(`add_${kind}_key`, "get", ...params)) as Record<string, number>;
    const key = Number(found[`${kind}_key`]);
    this.#known.set(memo, key);
    return key;
  }
}
