/**
 * The Codex CLI MCP and multi-agent scenario: `codex exec` against a scripted
 * mock of the OpenAI Responses API (as in `codex.ts`), with the stdio MCP
 * server `tickets` (`_mcp_server.mjs`) configured in `config.toml` and the
 * multi-agent tools turned on (`[features] multi_agent_v2`). The mock makes
 * the root agent call an MCP tool, an MCP tool that fails, two
 * `exec_command`s in one response, then spawn a child agent (which runs one
 * `exec_command` and answers) and wait for it.
 *
 * Codex offers MCP tools only through its client-side `tool_search` (they are
 * deferred): the mock searches first, then calls each tool by the name and
 * namespace the search output (or the request's `tools`) gives it, so the
 * script follows whatever a release calls them.
 * `AGENT_HARNESS_VERBOSE=1` prints the model requests and Codex's output;
 * `CODEX_MCP_DUMP=<dir>` keeps every model request (headers and body) there.
 *
 * @module
 */
import { join } from "node:path";
import { decodeExport } from "../../src/ingest/otlp/mod.ts";
import { ClientRuns } from "./_client.ts";
import { CODEX_PACKAGE, CODEX_VARIANTS, prepareCodex, runCodex } from "./_codex_client.ts";
import { approvedCall, codexCallFields, codexRun } from "./_codex_expected.ts";
import {
  assistantMessage,
  type CodexScript,
  functionCall,
  type Item,
  type ScriptedRequest,
  startCodexMock,
  type ToolRef,
} from "./_codex_mock.ts";
import { REAL_FIXTURES } from "./_fixtures.ts";
import { MCP_SERVER_NAME, MCP_SERVER_PATH, mcpToolName } from "./_mcp.ts";
import type {
  AgentScenario,
  ExpectedRun,
  ExpectedToolCall,
  RunContext,
  Variant,
} from "./_scenario.ts";

/** The user prompt of the root agent. */
const PROMPT = "Run the scripted steps.";
/** The task the root agent gives its child; also how the mock tells the child's requests apart. */
const CHILD_TASK = "Child task: run the child step and answer.";
/** The child agent's task name (`spawn_agent` `task_name`). */
const CHILD_TASK_NAME = "checker";
const CHILD_ANSWER = "The child step is done.";
const FINAL_ANSWER = "All scripted steps are done.";

/** Call ids the mock gives its tool calls. */
const CALL = {
  search: "call_cxm_00_search",
  lookup: "call_cxm_01_lookup",
  fail: "call_cxm_02_fail",
  left: "call_cxm_03_left",
  right: "call_cxm_04_right",
  spawn: "call_cxm_05_spawn",
  wait: "call_cxm_06_wait",
  child: "call_cxm_10_child",
} as const;

const LOOKUP_ARGS = { id: "T-42" };
const FAIL_ARGS = { id: "T-13" };
const LEFT_ARGS = { cmd: "echo left branch" };
/** The second of the parallel pair sleeps so that it always finishes (and is listed) second. */
const RIGHT_ARGS = { cmd: "sleep 0.5 && echo right branch" };
const CHILD_ARGS = { cmd: "echo from the child" };
const SPAWN_ARGS = { "task_name": CHILD_TASK_NAME, message: CHILD_TASK, "fork_turns": "none" };
const SEARCH_ARGS = { query: "ticket lookup", limit: 8 };
const WAIT_ARGS = { "timeout_ms": 30_000 };

/** Root agent responses: search, lookup, fail, the parallel pair, spawn, wait, final answer. */
const ROOT_RESPONSES = 7;
/** Child agent responses: its `exec_command`, its answer. */
const CHILD_RESPONSES = 2;

/**
 * Codex CLI `version` over OTLP/HTTP logs (protobuf and JSON), with an MCP
 * server and a child agent. Registered at the pinned version and at each newer
 * one recorded, so the suite replays every recorded release.
 */
export function codexMcpAt(version: string): AgentScenario {
  return {
    agent: "codex-mcp",
    npmPackage: CODEX_PACKAGE,
    version,
    variants: CODEX_VARIANTS,
    run,
    expected: (variant) => expected(variant, version),
  };
}

/** At the pinned version. */
export const codexMcp = codexMcpAt("0.169.0");

async function run(context: RunContext): Promise<void> {
  const agents = scriptedAgents();
  await using model = await startCodexMock(agents.answer, Deno.env.get("CODEX_MCP_DUMP"));
  liveThreads.delete(context.variant.name);
  const dirs = await prepareCodex(context, model.url, {
    extraConfig: `
[features]
multi_agent_v2 = true

[mcp_servers.${MCP_SERVER_NAME}]
command = "node"
args = [${JSON.stringify(MCP_SERVER_PATH)}]
`,
  });
  const runs = new ClientRuns(model);
  await runCodex(runs, context, dirs, [PROMPT], { ephemeral: true });
  const { root, child } = agents.answered;
  if (root !== ROOT_RESPONSES || child !== CHILD_RESPONSES) {
    throw runs.failure(
      `Codex made ${root} root and ${child} child model requests, ${ROOT_RESPONSES} and ${CHILD_RESPONSES} scripted`,
    );
  }
  runs.report();
  liveThreads.set(context.variant.name, { ...agents.threads });
}

/** The two agents' conversation ids (Codex's thread ids), which Codex makes up per run. */
interface Threads {
  root: string;
  child: string;
}

/** The ids of the last live run of each variant, from the requests' `thread-id` headers. */
const liveThreads = new Map<string, Threads>();

/**
 * The script of the root agent and its child (see {@link isChild}), with what
 * each was answered and its thread id as its requests' `thread-id` headers
 * said (`""` if never seen). Each agent's next step is chosen by which of the
 * mock's call ids already have an output in the request, so a retried
 * request gets the same answer.
 */
function scriptedAgents(): {
  answer: CodexScript;
  answered: { root: number; child: number };
  threads: Threads;
} {
  const answered = { root: 0, child: 0 };
  const threads: Threads = { root: "", child: "" };
  let childDone = false;
  const answer: CodexScript = (request) => {
    const who = isChild(request) ? "child" : "root";
    answered[who]++;
    threads[who] ||= request.headers.get("thread-id") ?? "";
    const items = who === "child" ? childStep(request) : rootStep(request, childDone);
    if (who === "child" && items.some((item) => item.type === "message")) childDone = true;
    const id = `resp_cxm_${String(request.n).padStart(2, "0")}`;
    return {
      id,
      items: items.map((item, i) =>
        item.type === "message" ? { id: `msg_${id}_${i}`, ...item } : item
      ),
      note: `${who}: ${
        items.map((item) =>
          item.type === "message"
            ? "message"
            : `${item.type} ${item.namespace ? `${item.namespace}/` : ""}${item.name ?? ""} ${
              item.call_id ?? ""
            }`
        ).join(" + ")
      }`,
    };
  };
  return { answer, answered, threads };
}

/** The text of a message or agent message: its text parts and (mock-made, plain) encrypted ones. */
function messageText(item: Item): string {
  if (item.type !== "message" && item.type !== "agent_message") return "";
  const content = item.content;
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.map((part) =>
    [part?.text, part?.encrypted_content].filter((t) => typeof t === "string").join("\n")
  ).join("\n");
}

/**
 * Whether a request is the child agent's: Codex marks a spawned agent's
 * requests (`x-openai-subagent`), and its input carries the task it was given.
 */
function isChild({ headers, input }: ScriptedRequest): boolean {
  return headers.has("x-openai-subagent") ||
    input.some((item) => item.role !== "assistant" && messageText(item).includes(CHILD_TASK));
}

/**
 * Finds the tool `name` among the request's `tools` and the tools earlier
 * `tool_search` outputs exposed: a plain function whose name is `name` or ends
 * in `__name` (`mcp__tickets__lookup_ticket`), or a function inside a namespace.
 */
function findTool({ body, input }: ScriptedRequest, name: string): ToolRef | undefined {
  const offered: Item[] = [
    ...(Array.isArray(body.tools) ? body.tools as Item[] : []),
    ...input.filter((item) => item.type === "tool_search_output").flatMap((item) =>
      Array.isArray(item.tools) ? item.tools as Item[] : []
    ),
  ];
  const matches = (tool: Item) =>
    typeof tool.name === "string" && (tool.name === name || tool.name.endsWith(`__${name}`));
  for (const tool of offered) {
    if (tool.type === "function" && matches(tool)) return { name: tool.name as string };
    if (tool.type === "namespace" && Array.isArray(tool.tools)) {
      const inner = (tool.tools as Item[]).find(matches);
      if (inner) return { name: inner.name as string, namespace: tool.name as string };
    }
  }
  return undefined;
}

function offersToolSearch({ body }: ScriptedRequest): boolean {
  return Array.isArray(body.tools) &&
    (body.tools as Item[]).some((tool) => tool.type === "tool_search");
}

function required(request: ScriptedRequest, name: string): ToolRef {
  const tool = findTool(request, name);
  if (tool === undefined) {
    throw new Error(`The request offers no ${name} tool`);
  }
  return tool;
}

/** The root agent's next response. */
function rootStep(request: ScriptedRequest, childDone: boolean): Item[] {
  const done = request.answeredCalls;
  const exec = { name: "exec_command" };
  if (!done.has(CALL.search) && findTool(request, "lookup_ticket") === undefined) {
    if (!offersToolSearch(request)) throw new Error("No MCP tool and no tool_search offered");
    return [{
      type: "tool_search_call",
      id: `ts_${CALL.search}`,
      "call_id": CALL.search,
      execution: "client",
      status: "completed",
      arguments: SEARCH_ARGS,
    }];
  }
  if (!done.has(CALL.lookup)) {
    return [functionCall(CALL.lookup, required(request, "lookup_ticket"), LOOKUP_ARGS)];
  }
  if (!done.has(CALL.fail)) {
    return [functionCall(CALL.fail, required(request, "fail_ticket"), FAIL_ARGS)];
  }
  if (!done.has(CALL.left) || !done.has(CALL.right)) {
    return [functionCall(CALL.left, exec, LEFT_ARGS), functionCall(CALL.right, exec, RIGHT_ARGS)];
  }
  if (!done.has(CALL.spawn)) {
    return [functionCall(CALL.spawn, required(request, "spawn_agent"), SPAWN_ARGS)];
  }
  // One wait normally covers the child's whole run; wait again while it is still working.
  const waits = [...done].filter((id) => id.startsWith(CALL.wait)).length;
  if (waits === 0 || (!childDone && waits < 5)) {
    const id = waits === 0 ? CALL.wait : `${CALL.wait}_${waits + 1}`;
    return [functionCall(id, required(request, "wait_agent"), WAIT_ARGS)];
  }
  return [assistantMessage(FINAL_ANSWER)];
}

/** The child agent's next response. */
function childStep(request: ScriptedRequest): Item[] {
  if (!request.answeredCalls.has(CALL.child)) {
    return [functionCall(CALL.child, { name: "exec_command" }, CHILD_ARGS)];
  }
  return [assistantMessage(CHILD_ANSWER)];
}

/**
 * The two conversation ids of the run `expected()` describes: the live run's,
 * else the recorded run's (the replay test), read from its `codex.tool_result`
 * records: `agent_name` `/root` is the root agent, `/root/<task>` the child.
 */
function threadsOf(variant: Variant, version: string): Threads {
  const live = liveThreads.get(variant.name);
  if (live !== undefined) return live;
  const dir = join(REAL_FIXTURES, `codex-mcp-${version}`, variant.name);
  const threads: Threads = { root: "", child: "" };
  let manifest: { file: string; path: string; contentType: string }[];
  try {
    manifest = JSON.parse(Deno.readTextFileSync(join(dir, "requests.json")));
  } catch {
    return threads;
  }
  for (const request of manifest.filter((r) => r.path === "/v1/logs")) {
    const { records } = decodeExport(Deno.readFileSync(join(dir, request.file)), {
      encoding: request.contentType.includes("json") ? "json" : "protobuf",
      pathSignal: "logs",
    });
    for (const { attributes: a } of records) {
      if (a["event.name"] !== "codex.tool_result") continue;
      const conversation = typeof a["conversation.id"] === "string" ? a["conversation.id"] : "";
      if (a["agent_name"] === "/root") threads.root ||= conversation;
      else if (a["agent_name"] === `/root/${CHILD_TASK_NAME}`) threads.child ||= conversation;
    }
  }
  return threads;
}

/**
 * The API's view of every run, as it should be (the target, not what the
 * server does today): the root agent's session with its seven calls (Codex's
 * `tool_search`, the two MCP calls named `mcp__tickets__<tool>`, the parallel
 * pair, `spawn_agent`, `wait_agent`), then the child's own session, linked to
 * the root's by `parent_session_id`. Every call carries Codex's `agent_name`.
 * MCP calls and the collaboration tools get no `codex.tool_decision`, so no decision.
 */
function expected(variant: Variant, version: string): ExpectedRun {
  const threads = threadsOf(variant, version);
  const call = (
    agentName: string,
    callId: string,
    toolName: string,
    fields: Record<string, unknown>,
    more: Omit<ExpectedToolCall, "fields"> = {},
  ): ExpectedToolCall => ({
    fields: {
      ...codexCallFields(version),
      "agent_name": agentName,
      "tool_call_id": callId,
      "tool_name": toolName,
      "mcp_server_name": null,
      outcome: "ok",
      success: true,
      "error_message": null,
      decision: null,
      "decision_source": null,
      ...fields,
    },
    flags: [],
    ...more,
  });
  const exec = (agentName: string, callId: string, args: Record<string, unknown>) =>
    call(agentName, callId, "exec_command", approvedCall(version, callId, "exec_command", args));
  const mcp = (callId: string, tool: string, args: Record<string, unknown>, ok: boolean) => {
    const expected = call("/root", callId, mcpToolName(tool), {
      "tool_type": "mcp",
      category: "mcp",
      "mcp_server_name": MCP_SERVER_NAME,
      arguments: JSON.stringify(args),
      ...(ok ? {} : { outcome: "error", success: false }),
    });
    // A failed call's error message is its output, which starts with a measured wall time.
    if (!ok) delete expected.fields["error_message"];
    return expected;
  };
  const child = `/root/${CHILD_TASK_NAME}`;
  return codexRun(version, [
    {
      fields: {
        "session_id": threads.root,
        "parent_session_id": null,
        "tool_call_count": 7,
        "success_count": 6,
        "error_count": 1,
      },
      toolCalls: [
        // Codex's search for deferred tools; its `arguments` is the bare query.
        call("/root", CALL.search, "tool_search", { category: "other" }, {
          argumentsContain: [SEARCH_ARGS.query],
        }),
        mcp(CALL.lookup, "lookup_ticket", LOOKUP_ARGS, true),
        mcp(CALL.fail, "fail_ticket", FAIL_ARGS, false),
        exec("/root", CALL.left, LEFT_ARGS),
        exec("/root", CALL.right, RIGHT_ARGS),
        call("/root", CALL.spawn, "spawn_agent", {
          category: "other",
          arguments: JSON.stringify(SPAWN_ARGS),
        }),
        call("/root", CALL.wait, "wait_agent", {
          category: "other",
          arguments: JSON.stringify(WAIT_ARGS),
        }),
      ],
      domains: [],
    },
    {
      fields: {
        "session_id": threads.child,
        "parent_session_id": threads.root,
        "tool_call_count": 1,
        "success_count": 1,
        "error_count": 0,
      },
      toolCalls: [exec(child, CALL.child, CHILD_ARGS)],
      domains: [],
    },
  ], ROOT_RESPONSES + CHILD_RESPONSES);
}
