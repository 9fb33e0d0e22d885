/**
 * A tiny MCP server over stdio for the live agent scenarios: server `tickets`
 * with one tool, `lookup_ticket` (`{ id }` → a line of made-up ticket text),
 * and a second, `fail_ticket`, whose every call is a tool error. It speaks
 * newline-delimited JSON-RPC 2.0 on stdin/stdout, needs nothing but Node.js,
 * and touches no network. Run it as `node _mcp_server.mjs`.
 *
 * @module
 */
import { createInterface } from "node:readline";

const TOOLS = [
  {
    name: "lookup_ticket",
    description: "Looks up a ticket by id",
    inputSchema: {
      type: "object",
      properties: { id: { type: "string", description: "The ticket id" } },
      required: ["id"],
    },
  },
  {
    name: "fail_ticket",
    description: "Always fails",
    inputSchema: {
      type: "object",
      properties: { id: { type: "string" } },
      required: ["id"],
    },
  },
];

function send(message) {
  process.stdout.write(`${JSON.stringify({ jsonrpc: "2.0", ...message })}\n`);
}

function answer(request) {
  const params = request.params ?? {};
  switch (request.method) {
    case "initialize":
      return {
        protocolVersion: params.protocolVersion ?? "2025-06-18",
        capabilities: { tools: { listChanged: false } },
        serverInfo: { name: "tickets", version: "1.0.0" },
      };
    case "ping":
      return {};
    case "tools/list":
      return { tools: TOOLS };
    case "tools/call": {
      const id = String(params.arguments?.id ?? "");
      if (params.name === "lookup_ticket") {
        return { content: [{ type: "text", text: `ticket ${id}: open, owner harness` }] };
      }
      if (params.name === "fail_ticket") {
        return { content: [{ type: "text", text: `ticket ${id} is locked` }], isError: true };
      }
      return undefined;
    }
    default:
      return undefined;
  }
}

const lines = createInterface({ input: process.stdin });
lines.on("line", (line) => {
  let request;
  try {
    request = JSON.parse(line);
  } catch {
    return;
  }
  if (request === null || typeof request !== "object" || request.id === undefined) return;
  const result = answer(request);
  if (result === undefined) {
    send({ id: request.id, error: { code: -32601, message: `unknown: ${request.method}` } });
  } else {
    send({ id: request.id, result });
  }
});
lines.on("close", () => process.exit(0));
