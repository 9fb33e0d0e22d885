/**
 * The scripted OpenAI Responses API the Codex scenarios run against (a custom
 * model provider in `config.toml`): each `POST …/responses` gets the output
 * items the scenario's script answers, streamed with the same fixed token
 * usage. Anything else (Codex also posts turn costs) gets `{}`.
 *
 * @module
 */
import { join } from "node:path";
import { type LoopbackServer, serveLoopback } from "./_loopback.ts";

/**
 * Token usage of every response. OpenAI semantics: input includes the cached
 * tokens and output includes the reasoning tokens.
 */
export const CODEX_USAGE = { input: 3000, cached: 2048, output: 120, reasoning: 40 };

/** A JSON object of a request or of a response. */
export type Item = Record<string, unknown>;

function inputItems(body: Item): Item[] {
  return Array.isArray(body.input) ? body.input as Item[] : [];
}

function answeredCalls(input: Item[]): Set<string> {
  return new Set(
    input.filter((item) =>
      typeof item.type === "string" && item.type.endsWith("_output") &&
      typeof item.call_id === "string"
    ).map((item) => item.call_id as string),
  );
}

/** A tool as the model must call it: its name and, for a namespaced tool, the namespace. */
export interface ToolRef {
  name: string;
  namespace?: string;
}

/** A `function_call` output item. */
export function functionCall(callId: string, tool: ToolRef, args: Record<string, unknown>): Item {
  return {
    type: "function_call",
    id: `fc_${callId}`,
    "call_id": callId,
    name: tool.name,
    ...(tool.namespace === undefined ? {} : { namespace: tool.namespace }),
    arguments: JSON.stringify(args),
  };
}

/** An assistant `message` output item saying `text`. */
export function assistantMessage(text: string, id?: string): Item {
  return {
    type: "message",
    ...(id === undefined ? {} : { id }),
    role: "assistant",
    content: [{ type: "output_text", text }],
  };
}

/** A request as the script reads it. */
export interface ScriptedRequest {
  body: Item;
  headers: Headers;
  /** The request's number among those the mock got (0-based, counting those answered `{}`). */
  n: number;
  /** Its input items. */
  input: Item[];
  /** Call ids that already have an output (`function_call_output`, `tool_search_output`, …). */
  answeredCalls: Set<string>;
}

/** What the script answers one request with. */
export interface ScriptedResponse {
  /** The response's id. */
  id: string;
  /** Its output items, in order. */
  items: Item[];
  /** What the request's log line says after its number. */
  note: string;
}

/** Answers one request. */
export type CodexScript = (request: ScriptedRequest) => ScriptedResponse;

/** A running mock Responses API. */
export interface CodexMock extends LoopbackServer {
  /** One line per request, for diagnosis. */
  log: string[];
  /** Responses requests answered so far. */
  answered(): number;
}

/**
 * Starts the mock answering as `script` says; with `dumpDir`, every request
 * (headers and body) is also written there as `NNN.json`.
 */
export async function startCodexMock(script: CodexScript, dumpDir?: string): Promise<CodexMock> {
  const log: string[] = [];
  let answered = 0;
  let seq = 0;
  const server = await serveLoopback(async (request) => {
    const url = new URL(request.url);
    const body = await request.text();
    const n = seq++;
    if (dumpDir !== undefined) {
      await Deno.writeTextFile(
        join(dumpDir, `${String(n).padStart(3, "0")}.json`),
        JSON.stringify({
          method: request.method,
          path: url.pathname,
          headers: Object.fromEntries(request.headers),
          body,
        }),
      );
    }
    if (request.method !== "POST" || !url.pathname.endsWith("/responses")) {
      log.push(`${n} ${request.method} ${url.pathname}: {}`);
      return Response.json({});
    }
    answered++;
    const parsed = JSON.parse(body) as Item;
    const input = inputItems(parsed);
    const { id, items, note } = script({
      body: parsed,
      headers: request.headers,
      n,
      input,
      answeredCalls: answeredCalls(input),
    });
    log.push(`${n} ${note}`);
    return new Response(responseStream(id, items), {
      headers: { "content-type": "text/event-stream" },
    });
  });
  return { ...server, log, answered: () => answered };
}

/** The SSE body of one response: its output items, then the fixed usage. */
function responseStream(id: string, items: Item[]): string {
  const event = (type: string, data: Record<string, unknown>) =>
    `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
  return event("response.created", { response: { id } }) +
    items.map((item, i) => event("response.output_item.done", { "output_index": i, item }))
      .join("") +
    event("response.completed", {
      response: {
        id,
        usage: {
          "input_tokens": CODEX_USAGE.input,
          "input_tokens_details": { "cached_tokens": CODEX_USAGE.cached },
          "output_tokens": CODEX_USAGE.output,
          "output_tokens_details": { "reasoning_tokens": CODEX_USAGE.reasoning },
          "total_tokens": CODEX_USAGE.input + CODEX_USAGE.output,
        },
      },
    });
}
