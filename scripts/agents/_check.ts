/**
 * Compares the query API's view of a run with a scenario's expectations,
 * field by field, and lists every difference (empty when they match).
 *
 * @module
 */
import type { ExpectedRun } from "./_scenario.ts";

type Json = Record<string, unknown>;

/** Reads what the API serves for `agentSystem`'s sessions and compares it with `expected`. */
export async function compareRun(
  queryUrl: string,
  apiKey: string,
  expected: ExpectedRun,
): Promise<string[]> {
  const get = async (path: string): Promise<Json> => {
    const response = await fetch(queryUrl + path, {
      headers: { authorization: `Bearer ${apiKey}` },
    });
    const body = await response.json();
    if (response.status !== 200) {
      throw new Error(`GET ${path}: ${response.status} ${JSON.stringify(body)}`);
    }
    return body as Json;
  };
  const problems: string[] = [];
  const list = await get(
    `/v1/sessions?agent=${encodeURIComponent(expected.agentSystem)}&limit=500`,
  );
  const sessions = (list.data as Json[]).slice().sort((a, b) =>
    String(a.first_seen).localeCompare(String(b.first_seen))
  );
  if (sessions.length !== expected.sessions.length) {
    problems.push(`sessions: ${sessions.length} served, ${expected.sessions.length} expected`);
  }
  for (const [i, want] of expected.sessions.entries()) {
    const session = sessions[i];
    if (!session) break;
    const where = `session ${i}`;
    const detail = await get(`/v1/sessions/${encodeURIComponent(String(session.session_id))}`);
    compareFields(where, detail.session as Json, want.fields, problems);
    const calls = detail.tool_calls as Json[];
    if (calls.length !== want.toolCalls.length) {
      problems.push(
        `${where}: ${calls.length} tool calls served (${
          calls.map((c) => `${c.tool_name}:${c.outcome}`).join(", ")
        }), ${want.toolCalls.length} expected`,
      );
    }
    const flags = detail.risk_flags as Json[];
    for (const [j, wantCall] of want.toolCalls.entries()) {
      const call = calls[j];
      if (!call) break;
      const callWhere = `${where} call ${j} (${call.tool_name})`;
      const full = await get(`/v1/tool-calls/${encodeURIComponent(String(call.id))}`);
      compareFields(callWhere, full, wantCall.fields, problems);
      for (const key of wantCall.present ?? []) {
        if (full[key] === undefined || full[key] === null) problems.push(`${callWhere}: no ${key}`);
      }
      const args = typeof full.arguments === "string" ? full.arguments : "";
      for (const part of wantCall.argumentsContain ?? []) {
        if (!args.includes(part)) {
          problems.push(
            `${callWhere}: arguments lack ${JSON.stringify(part)}: ${args.slice(0, 300)}`,
          );
        }
      }
      const served = JSON.stringify(full);
      for (const secret of wantCall.absent ?? []) {
        if (served.includes(secret)) {
          problems.push(`${callWhere}: serves ${JSON.stringify(secret)}`);
        }
      }
      if (wantCall.flags !== undefined) {
        // A flag names the agent's call id, else the call's row id (Gemini CLI sends no call id).
        const id = full.tool_call_id ?? full.tool_use_id ?? full.id;
        const kinds = flags.filter((f) => f.tool_call_id === id).map((f) => String(f.flag)).sort();
        const wanted = [...new Set(wantCall.flags)].sort();
        const got = [...new Set(kinds)];
        if (JSON.stringify(got) !== JSON.stringify(wanted)) {
          problems.push(
            `${callWhere}: flags ${JSON.stringify(got)}, expected ${JSON.stringify(wanted)}`,
          );
        }
      }
    }
    if (want.pageThrough !== undefined) {
      await comparePages(where, get, String(session.session_id), want.pageThrough, calls, problems);
    }
    if (want.domains !== undefined) {
      const domains = (detail.external_domains as Json[]).map((d) => String(d.domain)).sort();
      if (JSON.stringify(domains) !== JSON.stringify([...want.domains].sort())) {
        problems.push(
          `${where}: domains ${JSON.stringify(domains)}, expected ${JSON.stringify(want.domains)}`,
        );
      }
    }
  }
  if (expected.cost !== undefined) {
    const cost = await get(`/v1/insights/cost?window=7d`);
    const rows = (cost.breakdown as Json[]) ?? [];
    for (const want of expected.cost) {
      const match = rows.find((row) => Object.entries(want).every(([k, v]) => equal(row[k], v)));
      if (!match) {
        problems.push(`cost: no row ${JSON.stringify(want)} in ${JSON.stringify(rows)}`);
      }
    }
  }
  return problems;
}

/**
 * Pages the session's tool calls `limit` at a time (newest first) to the end and
 * checks that they are the detail's calls (oldest first) in reverse, none repeated.
 */
async function comparePages(
  where: string,
  get: (path: string) => Promise<Json>,
  sessionId: string,
  limit: number,
  calls: Json[],
  problems: string[],
) {
  const ids: string[] = [];
  let cursor: string | undefined;
  let pages = 0;
  // More pages than the detail's calls can fill means the cursor does not advance.
  const maxPages = Math.ceil(calls.length / limit) + 2;
  do {
    const body = await get(
      `/v1/tool-calls?session_id=${encodeURIComponent(sessionId)}&limit=${limit}${
        cursor === undefined ? "" : `&cursor=${encodeURIComponent(cursor)}`
      }`,
    );
    pages++;
    ids.push(...(body.data as Json[]).map((call) => String(call.id)));
    cursor = typeof body.next_cursor === "string" ? body.next_cursor : undefined;
  } while (cursor !== undefined && pages < maxPages);
  const paging = `${where}: paging by ${limit}`;
  if (cursor !== undefined) problems.push(`${paging}: still a next_cursor after ${pages} pages`);
  const repeated = [...new Set(ids.filter((id, i) => ids.indexOf(id) !== i))];
  if (repeated.length > 0) problems.push(`${paging}: ids served twice: ${repeated.join(", ")}`);
  const paged = ids.slice().reverse();
  const detail = calls.map((call) => String(call.id));
  if (JSON.stringify(paged) !== JSON.stringify(detail)) {
    const at = detail.findIndex((id, i) => paged[i] !== id);
    const first = at === -1 ? Math.min(paged.length, detail.length) : at;
    problems.push(
      `${paging}: ${ids.length} ids in ${pages} pages, reversed, differ from the detail's ${detail.length} from position ${first} (paged ${
        JSON.stringify(paged.slice(first, first + 3))
      }, detail ${JSON.stringify(detail.slice(first, first + 3))})`,
    );
  }
}

function compareFields(
  where: string,
  actual: Json,
  wanted: Record<string, unknown>,
  problems: string[],
) {
  for (const [key, value] of Object.entries(wanted)) {
    const got = actual[key] ?? null;
    if (!equal(got, value)) {
      problems.push(`${where}: ${key} = ${JSON.stringify(got)}, expected ${JSON.stringify(value)}`);
    }
  }
}

/** Equality for JSON values; numbers compare to 9 significant digits (float sums vary by order). */
function equal(a: unknown, b: unknown): boolean {
  if (typeof a === "number" && typeof b === "number") {
    return a === b || Math.abs(a - b) <= 1e-9 * Math.max(Math.abs(a), Math.abs(b));
  }
  return JSON.stringify(a) === JSON.stringify(b ?? null);
}
