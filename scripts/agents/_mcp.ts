/**
 * The harness's stdio MCP server (`_mcp_server.mjs`) as the MCP scenarios
 * configure it, and the name the API gives its tools whatever the agent.
 *
 * @module
 */
import { fileURLToPath } from "node:url";

/** The server's script, run as `node <absolute path>`. */
export const MCP_SERVER_PATH = fileURLToPath(new URL("./_mcp_server.mjs", import.meta.url));
/** The server's name in every client's configuration (and its `serverInfo.name`). */
export const MCP_SERVER_NAME = "tickets";

/** The name the API gives the server's tool `tool`, whatever the agent: `mcp__<server>__<tool>`. */
export function mcpToolName(tool: string): string {
  return `mcp__${MCP_SERVER_NAME}__${tool}`;
}
