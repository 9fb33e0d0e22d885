/**
 * Claude Code (`@anthropic-ai/claude-code`) in a long session that is then
 * resumed, driven by a scripted Anthropic Messages API on loopback:
 *
 * 1. `claude -p` makes 42 tool calls, one per turn, cycling Bash
 *    `echo step-N`, Read `notes-N.txt` and Write `out-N.txt`, where every 7th
 *    step is instead a Bash `ls` of a missing directory (fails), then answers;
 * 2. `claude -p --resume <session_id>` (the id the first run printed with
 *    `--output-format json`) continues that conversation with a second
 *    prompt: 2 more calls (steps 43 and 44 of the same cycle), then answers.
 *
 * The mock picks the next step by the scripted tool_use ids already in the
 * conversation; the second part's steps are offered only once the second
 * prompt is in it. Every response carries the same fixed token usage.
 *
 * Claude Code 2.1.330 keeps the conversation's `session.id` when resuming:
 * the API shows one session of 44 calls.
 *
 * @module
 */
import { join } from "node:path";
import {
  CLAUDE_PACKAGE,
  claudeDirs,
  JSON_AND_TRACES_VARIANTS,
  runClaude,
} from "./_claude_client.ts";
import { ACCEPTED, ClaudeView, OK, SHELL_FAILED } from "./_claude_expected.ts";
import { bash, type ClaudeScript, type ScriptedCall, startClaudeMock } from "./_claude_mock.ts";
import { ClientRuns } from "./_client.ts";
import type { AgentScenario, ExpectedRun, RunContext, Variant } from "./_scenario.ts";

const VERSION = "2.1.330";

/** The first run's prompt: marks the scripted conversation. */
const FIRST_PROMPT = "Run the long harness session.";
/** The resumed run's prompt: unlocks the last steps. */
const RESUME_PROMPT = "Continue the long harness session with two more steps.";
const FIRST_TEXT = "Long harness session: 42 steps done.";
const RESUME_TEXT = "Long harness session: resumed steps done.";

/** Tool calls of the first run, and of both runs. */
const FIRST_CALLS = 42;
const ALL_CALLS = 44;

type Kind = "echo" | "read" | "write" | "fail";

interface Step extends ScriptedCall {
  /** 1-based. */
  n: number;
  kind: Kind;
}

/** Step `n` (1-based): every 7th a failing Bash, else Bash echo, Read, Write in turn. */
function step(n: number): Step {
  const id = `toolu_01HarnessLongStep${String(n).padStart(5, "0")}`;
  if (n % 7 === 0) {
    return {
      n,
      kind: "fail",
      ...bash(id, `ls /nonexistent-long-step-${n}`, "List a missing directory"),
    };
  }
  const kind = (["echo", "read", "write"] as const)[(n - 1) % 3]!;
  switch (kind) {
    case "echo":
      return { n, kind, ...bash(id, `echo step-${n}`, "Print a marker") };
    case "read":
      return {
        n,
        kind,
        id,
        name: "Read",
        input: (project) => ({ "file_path": join(project, `notes-${n}.txt`) }),
      };
    case "write":
      return {
        n,
        kind,
        id,
        name: "Write",
        input: (project) => ({
          "file_path": join(project, `out-${n}.txt`),
          content: `written at step ${n}\n`,
        }),
      };
  }
}

const STEPS: Step[] = Array.from({ length: ALL_CALLS }, (_, i) => step(i + 1));

/**
 * The scripted conversation starts with {@link FIRST_PROMPT}; its next step is
 * the first scripted call not in it yet, the last two only once
 * {@link RESUME_PROMPT} is in it. Any other request (a side query) gets a
 * plain text answer.
 */
const answer: ClaudeScript = ({ body, id, userTexts, toolUseIds }) => {
  const main = (body.tools?.length ?? 0) > 0 && (userTexts[0] ?? "").includes(FIRST_PROMPT);
  const resumed = userTexts.some((text) => text.includes(RESUME_PROMPT));
  const script = STEPS.slice(0, resumed ? ALL_CALLS : FIRST_CALLS);
  const next = main ? script.find((s) => !toolUseIds.has(s.id)) : undefined;
  return {
    conversation: main ? "main" : "side",
    note: `resumed=${resumed} next=${next ? `${next.n} ${next.kind}` : "text"}`,
    messageId: `msg_harness_long_${next ? String(next.n).padStart(2, "0") : `text_${id}`}`,
    calls: next ? [next] : [],
    text: resumed ? RESUME_TEXT : FIRST_TEXT,
  };
};

const SETTINGS = { permissions: { allow: ["Bash", "Read", "Write"] } };

async function run(context: RunContext): Promise<void> {
  const dirs = await claudeDirs(context.workDir, SETTINGS);
  for (const s of STEPS.filter((s) => s.kind === "read")) {
    await Deno.writeTextFile(join(dirs.project, `notes-${s.n}.txt`), `notes for step ${s.n}\n`);
  }
  await using model = await startClaudeMock(dirs.project, answer);
  const runs = new ClientRuns(model);
  const setup = { ...dirs, modelUrl: model.url };
  const first = await runClaude(runs, context, setup, FIRST_PROMPT, FIRST_TEXT);
  if (typeof first.session_id !== "string" || first.session_id === "") {
    throw runs.failure("The first run printed no session_id");
  }
  await runClaude(runs, context, setup, RESUME_PROMPT, RESUME_TEXT, ["--resume", first.session_id]);
  runs.report();
}

/** What the API must show for one run of both parts. */
function expected(variant: Variant): ExpectedRun {
  const view = new ClaudeView(variant, VERSION);
  const toolCalls = STEPS.map((s) => {
    const call = {
      "tool_name": s.name,
      "tool_type": "builtin",
      "tool_use_id": s.id,
      "error_message": null,
    };
    switch (s.kind) {
      case "echo":
        return view.call({
          ...OK,
          ...call,
          category: "code_exec",
          "result_size_bytes": `step-${s.n}`.length,
        }, { argumentsContain: [`echo step-${s.n}`], flags: [] });
      case "read":
        return view.call({ ...OK, ...call, category: "file_read" }, {
          argumentsContain: [`notes-${s.n}.txt`],
          flags: [],
        });
      case "write":
        return view.call({ ...OK, ...call, category: "file_write" }, {
          argumentsContain: [`out-${s.n}.txt`],
          flags: [],
        });
      case "fail":
        return view.call({ ...ACCEPTED, ...call, ...SHELL_FAILED, category: "code_exec" }, {
          argumentsContain: [`ls /nonexistent-long-step-${s.n}`],
          flags: [],
        });
    }
  });
  const errors = STEPS.filter((s) => s.kind === "fail").length;
  return view.run({ toolCalls, domains: [], pageThrough: 10 }, {
    successes: ALL_CALLS - errors,
    errors,
    // One request per call and one answer, in each part.
    modelCalls: ALL_CALLS + 2,
  });
}

/** Claude Code 2.1.330: a 42-call session, resumed for 2 more calls. */
export const claudeCodeLong: AgentScenario = {
  agent: "claude-code-long",
  npmPackage: CLAUDE_PACKAGE,
  version: VERSION,
  variants: JSON_AND_TRACES_VARIANTS,
  run,
  expected,
};
