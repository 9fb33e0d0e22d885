/**
 * The agents the server knows and how a record says it is theirs: one table
 * for logs, spans and metrics alike. A record is an agent's when its
 * resource's `service.name` is one of the agent's, else when its logger
 * scope is, else when its event, span or metric name carries the agent's
 * prefix (a user may override `service.name`; the names stay).
 *
 * @module
 */

/** An agent with a mapping of its own. */
export type KnownAgent = "claude-code" | "codex" | "gemini-cli";

/**
 * Who a record is counted and mapped as: a known agent, or `genai`, any other
 * sender that follows the OpenTelemetry GenAI conventions.
 */
export type TelemetryAgent = KnownAgent | "genai";

/** How one agent's records are recognised. */
interface AgentRecognition {
  agent: KnownAgent;
  /** `service.name` values: exact names and prefixes. */
  services: { exact: readonly string[]; prefixes: readonly string[] };
  /** Logger (instrumentation) scope names its events are emitted under. */
  scopes: readonly string[];
  /** Prefixes of its event, span and metric names. */
  namePrefixes: readonly string[];
  /** Where its metric points put their session id: point attributes first, then the resource. */
  metricSessionKeys: readonly string[];
}

const AGENTS: readonly AgentRecognition[] = [
  {
    agent: "claude-code",
    services: { exact: [], prefixes: ["claude-code"] },
    scopes: [
      "com.anthropic.claude_code.events",
      "com.anthropic.claude_code.tracing",
      "com.anthropic.claude_code",
    ],
    namePrefixes: ["claude_code."],
    metricSessionKeys: ["session.id"],
  },
  {
    // `codex_exec`, `codex_cli_rs`, `codex_vscode`…: the client's originator.
    agent: "codex",
    services: { exact: ["codex"], prefixes: ["codex_", "codex-"] },
    scopes: [],
    namePrefixes: ["codex."],
    metricSessionKeys: ["conversation.id", "session.id"],
  },
  {
    agent: "gemini-cli",
    services: { exact: [], prefixes: ["gemini-cli"] },
    scopes: [],
    namePrefixes: ["gemini_cli."],
    metricSessionKeys: ["session.id"],
  },
];

/** Every `agent` label value of the server's own metrics (bounded: anything else is `other`). */
export const AGENT_LABELS: readonly (TelemetryAgent | "other")[] = [
  ...AGENTS.map((a) => a.agent),
  "genai",
  "other",
];

/** The agent whose `service.name` this is, if any. */
export function agentOfService(service: unknown): KnownAgent | undefined {
  if (typeof service !== "string") return undefined;
  return AGENTS.find(({ services }) =>
    services.exact.includes(service) || services.prefixes.some((p) => service.startsWith(p))
  )?.agent;
}

/** The agent whose event, span or metric name this is, by prefix, if any. */
export function agentOfName(name: string): KnownAgent | undefined {
  return AGENTS.find((a) => a.namePrefixes.some((p) => name.startsWith(p)))?.agent;
}

/** The agent a record belongs to: by service, else logger scope, else name. */
export function recogniseAgent(
  record: { service: unknown; scope?: string; name: string },
): KnownAgent | undefined {
  return agentOfService(record.service) ??
    AGENTS.find((a) => record.scope !== undefined && a.scopes.includes(record.scope))?.agent ??
    agentOfName(record.name);
}

/** Prefix of the OpenTelemetry GenAI conventions' metric names (any service). */
export const GENAI_METRIC_PREFIX = "gen_ai.";

/** Where each agent's metric points put their session id, point attributes first, then the resource. */
export const METRIC_SESSION_KEYS: Readonly<Record<TelemetryAgent, readonly string[]>> = {
  ...Object.fromEntries(AGENTS.map((a) => [a.agent, a.metricSessionKeys])) as Record<
    KnownAgent,
    readonly string[]
  >,
  genai: ["gen_ai.conversation.id", "session.id"],
};
