/**
 * One table says which agent a record is (`src/agents.ts`): every record and
 * metric point of every recorded real run (logs, spans and metrics alike) is
 * recognised as the agent that sent it, by its service, and the records the
 * agent's mapping keeps are recognised by their own names or logger scope too
 * (a user may override `service.name`).
 */
import assert from "node:assert/strict";
import { gunzipSync } from "node:zlib";
import { join } from "node:path";
import { agentOfService, type KnownAgent, recogniseAgent } from "../src/agents.ts";
import { mapRecord } from "../src/ingest/agents/mod.ts";
import { decodeMetrics } from "../src/ingest/metrics/mod.ts";
import { decodeExport } from "../src/ingest/otlp/mod.ts";
import { readRecording, REAL_FIXTURES } from "../scripts/agents/_fixtures.ts";

const FOLDER_AGENTS: [string, KnownAgent][] = [
  ["claude-code", "claude-code"],
  ["codex", "codex"],
  ["gemini-cli", "gemini-cli"],
];

function agentOfFolder(name: string): KnownAgent {
  const found = FOLDER_AGENTS.find(([prefix]) => name.startsWith(`${prefix}-`));
  if (found === undefined) throw new Error(`a recording of no known agent: ${name}`);
  return found[1];
}

Deno.test("every recorded record and metric point is recognised as its agent's, on every signal", async () => {
  let records = 0;
  let points = 0;
  let byName = 0;
  for (const run of Deno.readDirSync(REAL_FIXTURES)) {
    if (!run.isDirectory) continue;
    const agent = agentOfFolder(run.name);
    for (const variant of Deno.readDirSync(join(REAL_FIXTURES, run.name))) {
      for (const request of await readRecording(join(REAL_FIXTURES, run.name, variant.name))) {
        // gRPC recordings hold framed messages: the HTTP ones are the same payloads.
        if (request.transport !== "http") continue;
        const body = request.contentEncoding === "gzip" ? gunzipSync(request.body) : request.body;
        const encoding = request.contentType.includes("json") ? "json" : "protobuf";
        const where = `${run.name}/${variant.name} ${request.path}`;
        if (request.path === "/v1/metrics") {
          for (const point of decodeMetrics(body, encoding).points) {
            assert.equal(agentOfService(point.resource["service.name"]), agent, where);
            // By name alone: the agent's own instruments are its; GenAI semconv ones are no one's.
            const byMetricName = recogniseAgent({ service: undefined, name: point.metric });
            if (point.metric.startsWith("gen_ai.")) assert.equal(byMetricName, undefined, where);
            else assert.equal(byMetricName, agent, `${where} ${point.metric}`);
            points++;
          }
          continue;
        }
        const signal = request.path === "/v1/traces" ? "traces" : "logs";
        for (const record of decodeExport(body, { encoding, pathSignal: signal }).records) {
          assert.equal(agentOfService(record.resource["service.name"]), agent, where);
          records++;
          if (mapRecord(record).status !== "mapped") continue;
          // A kept record is its agent's by its name or scope alone too.
          const anonymous = { ...record, resource: { ...record.resource } };
          delete anonymous.resource["service.name"];
          assert.equal(
            recogniseAgent({ service: undefined, scope: record.scopeName, name: record.eventName }),
            agent,
            `${where} ${record.eventName}`,
          );
          assert.equal(mapRecord(anonymous).status, "mapped", `${where} ${record.eventName}`);
          byName++;
        }
      }
    }
  }
  assert.ok(records > 1000 && points > 100 && byName > 300, `${records} ${points} ${byName}`);
});
