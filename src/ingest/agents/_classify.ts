/**
 * Tool type and category rules (docs/ingest-mapping.md §3, §3.1): `tool_type` is `mcp` when the
 * agent says so or the name is an MCP name, else `builtin`; `category` comes
 * from a table of the agents' built-in tool names, every MCP tool being `mcp`.
 */

import type { ToolCallEvent } from "../../model/telemetry.ts";

/** `builtin` or `mcp`. */
export type ToolType = ToolCallEvent["toolType"];
/** One of the spec's categories. */
export type Category = ToolCallEvent["category"];

/**
 * Built-in tool names by category, lower-cased. Claude Code (`Bash`, `Read`…),
 * Codex (`shell`, `exec_command`, `apply_patch`…), Gemini CLI
 * (`run_shell_command`, `read_file`, `replace`…) and common names used by
 * GenAI SDK agents.
 */
const categoryNames: Record<Exclude<Category, "mcp" | "other">, readonly string[]> = {
  "code_exec": [
    "bash",
    "bashoutput",
    "killbash",
    "killshell",
    "powershell",
    "shell",
    "local_shell",
    "exec",
    "exec_command",
    "container.exec",
    "unified_exec",
    "write_stdin",
    "run_shell_command",
    "execute_command",
    "run_command",
    "terminal",
    "code_interpreter",
  ],
  "file_read": [
    "read",
    "glob",
    "grep",
    "ls",
    "notebookread",
    "read_file",
    "read_many_files",
    "list_dir",
    "list_directory",
    "grep_files",
    "grep_search",
    "search_file_content",
    "file_search",
    "view_image",
    "find_files",
    "list_files",
  ],
  "file_write": [
    "write",
    "edit",
    "multiedit",
    "notebookedit",
    "apply_patch",
    "replace",
    "smart_edit",
    "write_file",
    "edit_file",
    "create_file",
    "delete_file",
  ],
  "web_fetch": [
    "webfetch",
    "websearch",
    "web_fetch",
    "web_search",
    "web_search_preview",
    "google_web_search",
    "fetch",
    "fetch_url",
    "browse",
  ],
};

const categoryByName: ReadonlyMap<string, Category> = (() => {
  const map = new Map<string, Category>();
  for (const [category, names] of Object.entries(categoryNames)) {
    for (const name of names) map.set(name, category as Category);
  }
  return map;
})();

/** Whether a tool name is an MCP tool name (`mcp__server__tool`, or Claude's redacted `mcp_tool`). */
export function isMcpName(toolName: string): boolean {
  return toolName.startsWith("mcp__") || toolName === "mcp_tool";
}

/**
 * The server part of an `mcp__<server>__<tool>` name, or undefined. Server
 * names may contain single underscores, so the split is at the next `__`.
 */
export function mcpServerFromName(toolName: string): string | undefined {
  if (!toolName.startsWith("mcp__")) return undefined;
  const end = toolName.indexOf("__", 5);
  if (end <= 5) return undefined;
  return toolName.slice(5, end);
}

/**
 * An MCP tool's one name across agents: `mcp__<server>__<tool>`, Claude
 * Code's own convention (also its permission-rule syntax). `toolName` is what
 * the agent sent, `ownName` the tool's own name when the agent reports it
 * apart (Claude Code's `mcp_tool_name`). Gemini CLI's `mcp_<server>_<tool>`
 * loses its prefix; Codex's bare tool name is kept as the tool. Without a
 * server, or a tool name the agent withheld (`mcp_tool` alone), the name is
 * kept as sent.
 */
export function mcpToolName(
  toolName: string,
  server: string | undefined,
  ownName: string | undefined,
): string {
  if (toolName.startsWith("mcp__") || server === undefined || server === "") return toolName;
  const prefix = `mcp_${server}_`;
  const own = ownName ??
    (toolName.startsWith(prefix) && toolName.length > prefix.length
      ? toolName.slice(prefix.length)
      : toolName === "mcp_tool"
      ? undefined
      : toolName);
  return own === undefined || own === "" ? toolName : `mcp__${server}__${own}`;
}

/** The tool's category; every MCP tool is `mcp`. */
export function toolCategory(toolName: string, toolType: ToolType): Category {
  if (toolType === "mcp") return "mcp";
  return categoryByName.get(toolName) ?? categoryByName.get(toolName.toLowerCase()) ?? "other";
}

/**
 * Decisions that deny a call: Claude Code `reject`, Codex `denied`/`abort`
 * (and its newer timed-out variant), Gemini CLI `reject`, plus the obvious
 * spellings of the same (`deny`, `rejected`, `aborted`, `cancelled`,
 * `blocked`, `declined`). Every other value (`accept`, `approved*`,
 * `auto_accept`, `modify`, unknown words) lets the call run.
 */
const rejectingDecisions: ReadonlySet<string> = new Set([
  "reject",
  "rejected",
  "user_reject",
  "deny",
  "denied",
  "abort",
  "aborted",
  "user_abort",
  "cancel",
  "canceled",
  "cancelled",
  "timed_out",
  "timed-out",
  "timedout",
  "timeout",
  "block",
  "blocked",
  "decline",
  "declined",
]);

/** Whether a reported decision denies the call (case-insensitive). */
export function decisionRejects(decision: string): boolean {
  return rejectingDecisions.has(decision) || rejectingDecisions.has(decision.toLowerCase());
}
