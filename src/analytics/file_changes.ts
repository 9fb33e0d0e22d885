/**
 * Lines changed by a file-writing tool call, derived from its stored
 * arguments: the productivity insight's figure for agents that send no lines
 * metric (issue #18). Computed while the replica copies a tool call (so a
 * change of these rules only needs a replica schema version, never a store
 * migration), for the tools listed in {@link LINE_RULES}; any other tool, or
 * arguments that are absent or not whole JSON (a capped value), give null:
 * nothing is counted for that call.
 *
 * A text's lines are its `\n`-separated parts, a final newline ending the
 * last line rather than starting another (`"a\n"` is one line). An edit
 * counts the lines of the old and new text after dropping the lines both
 * share at the start and the end: what a line diff of one contiguous change
 * reports. A patch counts its `+` and `-` lines.
 *
 * @module
 */

/** Lines one tool call added and removed. */
export interface LineChanges {
  added: number;
  removed: number;
}

type Rule = (args: unknown) => LineChanges | null;

/** A new file's content: every line added (what it replaced is not in the arguments). */
const writeRule = (field: string): Rule => (args) => {
  const content = stringField(args, field);
  return content === undefined ? null : { added: lineCount(content), removed: 0 };
};

/** One replacement of `old_string` by `new_string`, `times` over (Gemini's `expected_replacements`). */
const editRule = (timesField?: string): Rule => (args) => {
  const changes = editChanges(args);
  if (changes === null || timesField === undefined) return changes;
  const times = (args as Record<string, unknown>)[timesField];
  const n = Number.isSafeInteger(times) && (times as number) > 0 ? times as number : 1;
  return { added: changes.added * n, removed: changes.removed * n };
};

const multiEditRule: Rule = (args) => {
  const edits = isRecord(args) ? args["edits"] : undefined;
  if (!Array.isArray(edits)) return null;
  const total = { added: 0, removed: 0 };
  for (const edit of edits) {
    const changes = editChanges(edit);
    if (changes === null) return null;
    total.added += changes.added;
    total.removed += changes.removed;
  }
  return total;
};

const notebookRule: Rule = (args) => {
  if (isRecord(args) && args["edit_mode"] === "delete") return { added: 0, removed: 0 };
  const source = stringField(args, "new_source");
  return source === undefined ? null : { added: lineCount(source), removed: 0 };
};

/** Codex sends the raw patch (stored as a JSON string), or `{input}` / `{patch}`. */
const patchRule: Rule = (args) => {
  const patch = typeof args === "string"
    ? args
    : stringField(args, "input") ?? stringField(args, "patch");
  if (patch === undefined) return null;
  let added = 0;
  let removed = 0;
  for (const line of patch.split("\n")) {
    if (line.startsWith("+")) added++;
    else if (line.startsWith("-")) removed++;
  }
  return { added, removed };
};

/** The file-writing tools whose arguments we count, by tool name, per agent. */
export const LINE_RULES: Readonly<Record<string, Rule>> = {
  // Claude Code
  "Write": writeRule("content"),
  "Edit": editRule(),
  "MultiEdit": multiEditRule,
  "NotebookEdit": notebookRule,
  // Codex
  "apply_patch": patchRule,
  // Gemini CLI
  "write_file": writeRule("content"),
  "replace": editRule("expected_replacements"),
};

/** The tool names of {@link LINE_RULES}, for the replica's source reads. */
export const LINE_TOOLS: readonly string[] = Object.keys(LINE_RULES);

/** Lines a call of `toolName` with these stored arguments changed, or null when unknown. */
export function lineChanges(toolName: string, args: string | null): LineChanges | null {
  const rule = Object.hasOwn(LINE_RULES, toolName) ? LINE_RULES[toolName]! : undefined;
  if (rule === undefined || args === null) return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(args);
  } catch {
    return null;
  }
  return rule(parsed);
}

/** Lines of a text: `""` has none, and a final newline ends the last line. */
export function lineCount(text: string): number {
  if (text === "") return 0;
  let count = 1;
  for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) count++;
  return text.endsWith("\n") ? count - 1 : count;
}

function editChanges(args: unknown): LineChanges | null {
  const before = stringField(args, "old_string");
  const after = stringField(args, "new_string");
  if (before === undefined || after === undefined) return null;
  const old = linesOf(before);
  const next = linesOf(after);
  let head = 0;
  while (head < old.length && head < next.length && old[head] === next[head]) head++;
  let tail = 0;
  while (
    tail < old.length - head && tail < next.length - head &&
    old[old.length - 1 - tail] === next[next.length - 1 - tail]
  ) tail++;
  return { added: next.length - head - tail, removed: old.length - head - tail };
}

function linesOf(text: string): string[] {
  if (text === "") return [];
  const lines = text.split("\n");
  if (text.endsWith("\n")) lines.pop();
  return lines;
}

function stringField(value: unknown, field: string): string | undefined {
  if (!isRecord(value)) return undefined;
  const text = value[field];
  return typeof text === "string" ? text : undefined;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Where a replica `tool_calls` source row holds the tool name and the lines (see the sources' SQL). */
const TOOL_NAME = 4;
const LINES_ADDED = 12;
const LINES_REMOVED = 13;

/**
 * Turns the `tool_calls` rows a replica source read into replica rows: the
 * sources read a file-writing call's arguments where `lines_added` goes (and
 * null for `lines_removed`); this puts the lines in their place, in place.
 */
export function deriveLineColumns(rows: readonly (readonly unknown[])[]): void {
  for (const row of rows as unknown[][]) {
    const args = row[LINES_ADDED];
    if (args === null || args === undefined) continue;
    const changes = lineChanges(String(row[TOOL_NAME]), String(args));
    row[LINES_ADDED] = changes?.added ?? null;
    row[LINES_REMOVED] = changes?.removed ?? null;
  }
}
