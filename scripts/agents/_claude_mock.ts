/**
 * The scripted Anthropic Messages API the Claude Code scenarios run against
 * (`ANTHROPIC_BASE_URL`): each `POST /v1/messages` gets what the scenario's
 * script answers, streamed (tool calls, or the closing text) or, for a
 * non-streamed side query, a plain text message; anything else is a 404.
 * Every response carries the same fixed token usage, so tokens and cost are
 * known exactly.
 *
 * @module
 */
import { type LoopbackServer, serveLoopback } from "./_loopback.ts";

/** Token usage of every mock response (input, output, cache read, cache creation). */
export const CLAUDE_USAGE = {
  "input_tokens": 1000,
  "output_tokens": 200,
  "cache_read_input_tokens": 2000,
  "cache_creation_input_tokens": 400,
};

interface ContentBlock {
  type: string;
  text?: string;
  id?: string;
  name?: string;
  "tool_use_id"?: string;
  content?: string | ContentBlock[];
  "is_error"?: boolean;
}

interface Message {
  role: string;
  content: string | ContentBlock[];
}

/** The parts of a Messages API request the scripts read. */
export interface MessagesRequest {
  model: string;
  stream?: boolean;
  tools?: { name: string; "input_schema"?: unknown }[];
  messages: Message[];
}

/** The text of a message: its text blocks, joined. */
function messageText(message: Message): string {
  if (typeof message.content === "string") return message.content;
  return message.content.map((block) => block.text ?? "").join("\n");
}

/** The tool_use ids the assistant already sent in this conversation. */
function toolUseIds(messages: Message[]): Set<string> {
  const ids = new Set<string>();
  for (const message of messages) {
    if (message.role !== "assistant" || typeof message.content === "string") continue;
    for (const block of message.content) {
      if (block.type === "tool_use" && block.id !== undefined) ids.add(block.id);
    }
  }
  return ids;
}

/** The tool results of the conversation's last message, one line each, for diagnosis. */
function lastToolResults(messages: Message[]): string[] {
  const last = messages.at(-1);
  if (last === undefined || typeof last.content === "string") return [];
  return last.content.filter((block) => block.type === "tool_result").map((block) => {
    const content = typeof block.content === "string"
      ? block.content
      : (block.content ?? []).map((part) => part.text ?? `[${part.type}]`).join(" ");
    return `  result ${block.tool_use_id}${block.is_error ? " (error)" : ""}: ${
      content.slice(0, 300).replaceAll("\n", "\\n")
    }`;
  });
}

/** A tool call the model asks for; its input may name files of the run's project directory. */
export interface ScriptedCall {
  id: string;
  name: string;
  input: (project: string) => Record<string, unknown>;
}

/** A `Bash` tool call running `command`. */
export function bash(id: string, command: string, description: string): ScriptedCall {
  return { id, name: "Bash", input: () => ({ command, description }) };
}

/** A request as the script reads it. */
export interface ScriptedRequest {
  body: MessagesRequest;
  /** The `request-id` its answer carries. */
  id: string;
  /** The texts of the conversation's user messages, oldest first. */
  userTexts: string[];
  /** The tool_use ids the assistant already sent in the conversation. */
  toolUseIds: Set<string>;
}

/** What the script answers one request with. */
export interface ScriptedAnswer {
  /** The conversation the request belongs to (`main`, `subagent`, `side`): counted and logged. */
  conversation: string;
  /** What the request's log line ends with: the turn the script chose. */
  note: string;
  /** The id of the streamed message. */
  messageId: string;
  /** The turn's tool calls (several run in parallel); none: the turn is `text`. */
  calls: ScriptedCall[];
  text: string;
  /** The text of a non-streamed answer (a side query); `text` when not given. */
  sideText?: string;
  /** More lines for the log, after the request's tool results. */
  notes?: string[];
}

/** Answers one request. */
export type ClaudeScript = (request: ScriptedRequest) => ScriptedAnswer;

/** A running mock Messages API. */
export interface ClaudeMock extends LoopbackServer {
  /** Lines about each request the client made, for diagnosis. */
  log: string[];
  /** Requests answered per conversation. */
  counts: Record<string, number>;
}

/** Starts the mock answering as `script` says, on `project` (the client's working directory). */
export async function startClaudeMock(project: string, script: ClaudeScript): Promise<ClaudeMock> {
  const log: string[] = [];
  const counts: Record<string, number> = {};
  let served = 0;
  const server = await serveLoopback(async (request) => {
    const url = new URL(request.url);
    if (request.method !== "POST" || url.pathname !== "/v1/messages") {
      log.push(`${request.method} ${url.pathname} -> 404`);
      await request.body?.cancel();
      return Response.json({ type: "error", error: { type: "not_found_error" } }, {
        status: 404,
      });
    }
    const body = await request.json() as MessagesRequest;
    const requestId = `req_harness_${String(served++).padStart(3, "0")}`;
    const answer = script({
      body,
      id: requestId,
      userTexts: body.messages.filter((m) => m.role === "user").map(messageText),
      toolUseIds: toolUseIds(body.messages),
    });
    counts[answer.conversation] = (counts[answer.conversation] ?? 0) + 1;
    log.push(
      `POST /v1/messages ${requestId} ${answer.conversation} model=${body.model} stream=${
        body.stream ?? false
      } tools=${body.tools?.length ?? 0} messages=${body.messages.length} ${answer.note}`,
      ...lastToolResults(body.messages),
      ...(answer.notes ?? []),
    );
    const headers = { "request-id": requestId };
    if (body.stream) {
      return new Response(streamedTurn(answer, project, body.model), {
        headers: { ...headers, "content-type": "text/event-stream" },
      });
    }
    return Response.json({
      id: `msg_harness_side_${requestId}`,
      type: "message",
      role: "assistant",
      model: body.model,
      content: [{ type: "text", text: answer.sideText ?? answer.text }],
      "stop_reason": "end_turn",
      "stop_sequence": null,
      usage: CLAUDE_USAGE,
    }, { headers });
  });
  return { ...server, log, counts };
}

/** The streamed message of one turn: a content block per tool call, or the text. */
function streamedTurn(answer: ScriptedAnswer, project: string, model: string): string {
  const message = {
    id: answer.messageId,
    type: "message",
    role: "assistant",
    model,
    content: [],
    "stop_reason": null,
    "stop_sequence": null,
    usage: { ...CLAUDE_USAGE, "output_tokens": 1 },
  };
  const blocks = answer.calls.length > 0
    ? answer.calls.map((call) => ({
      start: { type: "tool_use", id: call.id, name: call.name, input: {} },
      delta: { type: "input_json_delta", "partial_json": JSON.stringify(call.input(project)) },
    }))
    : [{ start: { type: "text", text: "" }, delta: { type: "text_delta", text: answer.text } }];
  const events: [string, unknown][] = [["message_start", { type: "message_start", message }]];
  for (const [index, { start, delta }] of blocks.entries()) {
    events.push(
      ["content_block_start", { type: "content_block_start", index, "content_block": start }],
      ["content_block_delta", { type: "content_block_delta", index, delta }],
      ["content_block_stop", { type: "content_block_stop", index }],
    );
  }
  events.push(
    ["message_delta", {
      type: "message_delta",
      delta: {
        "stop_reason": answer.calls.length > 0 ? "tool_use" : "end_turn",
        "stop_sequence": null,
      },
      usage: CLAUDE_USAGE,
    }],
    ["message_stop", { type: "message_stop" }],
  );
  return events.map(([event, data]) => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`)
    .join("");
}
