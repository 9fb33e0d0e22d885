import { StatementSync } from "node:sqlite";
import { openTelemetryWriter } from "../src/store/sqlite/data_dir.ts";
import { encodeJson, generateExports } from "../src/demo/mod.ts";
import { receiveExport } from "../src/ingest/receive.ts";
import { eventRowIds } from "../src/store/row_ids.ts";
import { exportFindings } from "../src/store/call_detection.ts";
import { DatabaseSync } from "node:sqlite";

const dir = Deno.args[0]!;
const times = new Map<string, { ms: number; n: number }>();
const wrap = (name: "run" | "get" | "all") => {
  const original = StatementSync.prototype[name] as (...a: unknown[]) => unknown;
  // deno-lint-ignore no-explicit-any
  (StatementSync.prototype as any)[name] = function (this: StatementSync, ...args: unknown[]) {
    const t0 = performance.now();
    try {
      return original.apply(this, args);
    } finally {
      const key = this.sourceSQL.replace(/\s+/g, " ").slice(0, 70);
      const e = times.get(key) ?? { ms: 0, n: 0 };
      e.ms += performance.now() - t0;
      e.n++;
      times.set(key, e);
    }
  };
};
wrap("run"); wrap("get"); wrap("all");
const execOrig = DatabaseSync.prototype.exec;
DatabaseSync.prototype.exec = function (this: DatabaseSync, sql: string) {
  const t0 = performance.now();
  try { return execOrig.call(this, sql); } finally {
    const key = "exec " + sql.slice(0, 30);
    const e = times.get(key) ?? { ms: 0, n: 0 };
    e.ms += performance.now() - t0; e.n++; times.set(key, e);
  }
};
const { writer, close } = openTelemetryWriter(dir, { redactSecrets: true });
const db = new DatabaseSync(`${dir}/keys.db`, { readOnly: true });
const actors = db.prepare("SELECT id, org_id FROM actors ORDER BY id").all() as { id: string; org_id: string }[];
db.close();
let calls = 0;
let total = 0;
let groups: { sender: { orgId: string; actorId: string }; events: unknown[] }[] = [];
const flush = () => {
  const t0 = performance.now();
  // deno-lint-ignore no-explicit-any
  writer.ingestGroup(groups.map((g) => ({ sender: g.sender, events: g.events, prepared: { ids: eventRowIds(g.sender as any, g.events as any), findings: exportFindings(g.events as any, true) } })) as any);
  total += performance.now() - t0;
  groups = [];
};
for (const batch of generateExports({ actors: 60, days: 20, seed: 99, now: new Date(), batchRecords: 512, order: "time" })) {
  const received = receiveExport(encodeJson(batch.body), { encoding: "json", pathSignal: "logs" });
  const a = actors[batch.actor % actors.length]!;
  groups.push({ sender: { orgId: a.org_id, actorId: a.id }, events: received.events });
  calls += received.events.filter((e: { kind: string }) => e.kind === "tool_call").length;
  if (groups.length === 4) flush();
  if (calls > 30000) break;
}
flush();
close();
console.log(`calls ${calls}, writer total ${(total * 1000 / calls).toFixed(1)} µs/call (ids+findings included)`);
const rows = [...times].sort((a, b) => b[1].ms - a[1].ms).slice(0, 22);
for (const [k, v] of rows) console.log(`${(v.ms * 1000 / calls).toFixed(1).padStart(6)} µs/call  ${String(v.n).padStart(7)}×  ${k}`);
