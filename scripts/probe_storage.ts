/**
 * A probe of what the tool-call table could cost (issue #30): the same
 * realistic calls (the bench generator's, through the real decode and
 * mapping) inserted with plain INSERTs into today's `tool_calls` and its
 * indexes (schema 11), and into a candidate layout with integer keys for the
 * organization, actor and session and a dictionary for every low-cardinality
 * text, the call id as 16 bytes, the same filters indexed. It prints bytes per
 * call by table and index (SQLite's `dbstat`) and inserts per second for each.
 * It measures SQLite on this machine, not the product: no detection, no
 * sessions, no replica; the writer does more per call.
 *
 * `deno run -A scripts/probe_storage.ts [--calls 300000] [--dir DIR]`
 *
 * @module
 */
import { parseArgs } from "node:util";
import { handleHelp, parseOrExit } from "./_script_args.ts";
import { DatabaseSync } from "node:sqlite";
import { encodeJson, generateExports } from "../src/demo/mod.ts";
import { receiveExport } from "../src/ingest/receive.ts";
import type { ToolCallEvent } from "../src/model/telemetry.ts";
import { eventRowIds } from "../src/store/row_ids.ts";

const HELP = `deno run -A scripts/probe_storage.ts [--calls N] [--dir DIR]
Inserts N realistic tool calls (default 300,000) into today's tool_calls layout and into a candidate
with integer keys and dictionary-encoded texts, and prints bytes per call and inserts per second.`;

handleHelp(HELP);
const { values } = parseOrExit(HELP, () =>
  parseArgs({
    args: Deno.args,
    options: {
      calls: { type: "string", default: "300000" },
      dir: { type: "string" },
    },
  }));
const target = Number(values.calls);
if (!Number.isInteger(target) || target < 1000) {
  // deno-lint-ignore no-console
  console.error(`--calls must be an integer of at least 1,000\n${HELP}`);
  Deno.exit(2);
}

const TODAY = `
CREATE TABLE tool_calls (
  id TEXT PRIMARY KEY, org_id TEXT NOT NULL, seq INTEGER NOT NULL, session_id TEXT NOT NULL,
  actor_id TEXT NOT NULL, ts INTEGER NOT NULL, tool_name TEXT NOT NULL, tool_type TEXT NOT NULL,
  category TEXT NOT NULL, outcome TEXT NOT NULL, duration_ms INTEGER, result_size_bytes INTEGER,
  agent_system TEXT NOT NULL, agent_version TEXT NOT NULL DEFAULT '', model TEXT,
  error_message TEXT, error_type TEXT, decision TEXT, decision_source TEXT, prompt_id TEXT,
  agent_name TEXT, provider_name TEXT, tool_call_id TEXT, tool_use_id TEXT,
  tool_description TEXT, source TEXT NOT NULL, arguments TEXT, result TEXT,
  mcp_server_name TEXT, mcp_server_scope TEXT, os_type TEXT, host_arch TEXT,
  terminal_type TEXT, cwd TEXT, trace_id TEXT, span_id TEXT);
CREATE INDEX tool_calls_by_seq ON tool_calls (seq);
CREATE INDEX tool_calls_by_time ON tool_calls (org_id, ts);
CREATE INDEX tool_calls_by_session ON tool_calls (org_id, session_id, ts);
CREATE INDEX tool_calls_by_tool_name ON tool_calls (org_id, tool_name, ts);
CREATE INDEX tool_calls_by_tool_type ON tool_calls (org_id, tool_type, ts);
CREATE INDEX tool_calls_by_category ON tool_calls (org_id, category, ts);
CREATE INDEX tool_calls_by_outcome ON tool_calls (org_id, outcome, ts);
CREATE INDEX tool_calls_by_actor ON tool_calls (org_id, actor_id, ts);`;

/** Integer keys: `texts` holds every low-cardinality value once; a session key is per organization. */
const CANDIDATE = `
CREATE TABLE texts (id INTEGER PRIMARY KEY, value TEXT NOT NULL UNIQUE);
CREATE TABLE session_keys (id INTEGER PRIMARY KEY, org INTEGER NOT NULL, session_id TEXT NOT NULL,
  UNIQUE (org, session_id));
CREATE TABLE tool_calls (
  rid INTEGER PRIMARY KEY, id BLOB NOT NULL, org INTEGER NOT NULL, seq INTEGER NOT NULL,
  session INTEGER NOT NULL, actor INTEGER NOT NULL, ts INTEGER NOT NULL, tool_name INTEGER NOT NULL,
  tool_type INTEGER NOT NULL, category INTEGER NOT NULL, outcome INTEGER NOT NULL,
  duration_ms INTEGER, result_size_bytes INTEGER, agent INTEGER NOT NULL, agent_version INTEGER,
  model INTEGER, error_message TEXT, error_type INTEGER, decision INTEGER, decision_source INTEGER,
  prompt_id TEXT, agent_name INTEGER, provider_name INTEGER, tool_call_id TEXT,
  tool_use_id_same INTEGER, tool_description TEXT, source INTEGER NOT NULL, arguments TEXT,
  result TEXT, mcp_server_name INTEGER, mcp_server_scope INTEGER, os_type INTEGER,
  host_arch INTEGER, terminal_type INTEGER, cwd INTEGER, trace_id TEXT, span_id TEXT);
CREATE UNIQUE INDEX tool_calls_by_id ON tool_calls (id);
CREATE INDEX tool_calls_by_seq ON tool_calls (seq);
CREATE INDEX tool_calls_by_time ON tool_calls (org, ts);
CREATE INDEX tool_calls_by_session ON tool_calls (session, ts);
CREATE INDEX tool_calls_by_tool_name ON tool_calls (org, tool_name, ts);
CREATE INDEX tool_calls_by_tool_type ON tool_calls (org, tool_type, ts);
CREATE INDEX tool_calls_by_category ON tool_calls (org, category, ts);
CREATE INDEX tool_calls_by_outcome ON tool_calls (org, outcome, ts);
CREATE INDEX tool_calls_by_actor ON tool_calls (actor, ts);`;

interface Call {
  id: string;
  orgId: string;
  actorId: string;
  event: ToolCallEvent;
}

/** The calls, generated and mapped once, in the order a fleet sends them. */
function realisticCalls(count: number): Call[] {
  const calls: Call[] = [];
  const orgs = ["org_B5L94khbZO2qY4D6e", "org_Q0Ypd7mA4dWx81LcJ"];
  for (
    const batch of generateExports({
      actors: Math.max(4, Math.ceil(count / 13_200)),
      days: 100,
      seed: 7,
      now: new Date(),
      batchRecords: 512,
      order: "time",
    })
  ) {
    const received = receiveExport(encodeJson(batch.body), {
      encoding: "json",
      pathSignal: "logs",
    });
    const orgId = orgs[batch.actor % orgs.length]!;
    const sender = { orgId, actorId: `act_${String(batch.actor).padStart(17, "x")}` };
    const ids = eventRowIds(sender, received.events);
    received.events.forEach((event, i) => {
      if (event.kind === "tool_call") calls.push({ id: ids[i]!, ...sender, event });
    });
    if (calls.length >= count) break;
  }
  return calls.slice(0, count);
}

function open(path: string, ddl: string): DatabaseSync {
  const db = new DatabaseSync(path);
  db.exec("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA cache_size = -65536");
  db.exec(ddl);
  return db;
}

/** Inserts in transactions of 512 calls; returns calls per second. */
function insertAll(
  db: DatabaseSync,
  calls: readonly Call[],
  row: (call: Call, seq: number) => unknown[],
  sql: string,
) {
  const insert = db.prepare(sql);
  const started = performance.now();
  for (let i = 0; i < calls.length; i += 512) {
    db.exec("BEGIN");
    for (let j = i; j < Math.min(i + 512, calls.length); j++) {
      insert.run(...(row(calls[j]!, j + 1) as never[]));
    }
    db.exec("COMMIT");
  }
  return (calls.length / (performance.now() - started)) * 1000;
}

function bytesPerCall(db: DatabaseSync, calls: number): [string, number][] {
  db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
  const rows = db.prepare(
    "SELECT name, sum(pgsize) AS bytes FROM dbstat GROUP BY name ORDER BY bytes DESC",
  ).all() as { name: string; bytes: number }[];
  return rows.map((r) => [r.name, r.bytes / calls]);
}

const dir = values.dir ?? await Deno.makeTempDir({ prefix: "probe-storage-" });
const calls = realisticCalls(target);

const todayDb = open(`${dir}/today.db`, TODAY);
const todayRate = insertAll(
  todayDb,
  calls,
  (c, seq) => {
    const e = c.event;
    return [
      c.id,
      c.orgId,
      seq,
      e.sessionId,
      c.actorId,
      e.timeMs,
      e.toolName,
      e.toolType,
      e.category,
      e.outcome,
      e.durationMs,
      e.resultSizeBytes,
      e.agentSystem,
      e.agentVersion ?? "",
      e.model ?? null,
      e.errorMessage ?? null,
      e.errorType ?? null,
      e.decision ?? null,
      e.decisionSource ?? null,
      e.promptId ?? null,
      e.agentName ?? null,
      e.providerName ?? null,
      e.toolCallId ?? null,
      e.toolUseId ?? null,
      e.toolDescription ?? null,
      e.source,
      e.arguments ?? null,
      e.result ?? null,
      e.mcpServerName ?? null,
      e.mcpServerScope ?? null,
      e.osType ?? null,
      e.hostArch ?? null,
      e.terminalType ?? null,
      e.cwd ?? null,
      e.traceId ?? null,
      e.spanId ?? null,
    ];
  },
  `INSERT OR IGNORE INTO tool_calls VALUES (${Array(36).fill("?").join(", ")})`,
);

const candidateDb = open(`${dir}/candidate.db`, CANDIDATE);
const texts = new Map<string, number>();
const sessions = new Map<string, number>();
const putText = candidateDb.prepare("INSERT INTO texts (value) VALUES (?)");
const putSession = candidateDb.prepare("INSERT INTO session_keys (org, session_id) VALUES (?, ?)");
const key = (value: string | undefined | null): number | null => {
  if (value === undefined || value === null) return null;
  let id = texts.get(value);
  if (id === undefined) {
    id = Number(putText.run(value).lastInsertRowid);
    texts.set(value, id);
  }
  return id;
};
const candidateRate = insertAll(
  candidateDb,
  calls,
  (c, seq) => {
    const e = c.event;
    const org = key(c.orgId)!;
    const sessionName = `${org}\u0000${e.sessionId}`;
    let session = sessions.get(sessionName);
    if (session === undefined) {
      session = Number(putSession.run(org, e.sessionId).lastInsertRowid);
      sessions.set(sessionName, session);
    }
    const hex = c.id.slice(3);
    const id = new Uint8Array(hex.length / 2);
    for (let i = 0; i < id.length; i++) id[i] = parseInt(hex.slice(2 * i, 2 * i + 2), 16);
    return [
      id,
      org,
      seq,
      session,
      key(c.actorId),
      e.timeMs,
      key(e.toolName),
      key(e.toolType),
      key(e.category),
      key(e.outcome),
      e.durationMs,
      e.resultSizeBytes,
      key(e.agentSystem),
      key(e.agentVersion),
      key(e.model),
      e.errorMessage ?? null,
      key(e.errorType),
      key(e.decision),
      key(e.decisionSource),
      e.promptId ?? null,
      key(e.agentName),
      key(e.providerName),
      e.toolCallId ?? null,
      e.toolUseId === undefined ? null : e.toolUseId === e.toolCallId ? 1 : 0,
      e.toolDescription ?? null,
      key(e.source),
      e.arguments ?? null,
      e.result ?? null,
      key(e.mcpServerName),
      key(e.mcpServerScope),
      key(e.osType),
      key(e.hostArch),
      key(e.terminalType),
      key(e.cwd),
      e.traceId ?? null,
      e.spanId ?? null,
    ];
  },
  `INSERT OR IGNORE INTO tool_calls (id, org, seq, session, actor, ts, tool_name, tool_type,
    category, outcome, duration_ms, result_size_bytes, agent, agent_version, model,
    error_message, error_type, decision, decision_source, prompt_id, agent_name, provider_name,
    tool_call_id, tool_use_id_same, tool_description, source, arguments, result,
    mcp_server_name, mcp_server_scope, os_type, host_arch, terminal_type, cwd, trace_id,
    span_id) VALUES (${Array(36).fill("?").join(", ")})`,
);

for (
  const [name, db, rate] of [["today (schema 11)", todayDb, todayRate], [
    "candidate (integer keys, dictionary texts)",
    candidateDb,
    candidateRate,
  ]] as const
) {
  const sizes = bytesPerCall(db, calls.length);
  const total = sizes.reduce((sum, [, b]) => sum + b, 0);
  // deno-lint-ignore no-console
  console.log(
    `${name}: ${Math.round(rate).toLocaleString("en-US")} calls/s, ${
      Math.round(total)
    } B per call (${sizes.map(([n, b]) => `${n} ${Math.round(b)}`).join("; ")})`,
  );
  db.close();
}
if (!values.dir) await Deno.remove(dir, { recursive: true });
