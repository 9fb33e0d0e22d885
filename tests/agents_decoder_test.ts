import assert from "node:assert/strict";
import { encodeJson, generateExports } from "../src/demo/mod.ts";
import { mapRecord } from "../src/ingest/agents/mod.ts";
import { decodeExport } from "../src/ingest/otlp/mod.ts";
import { fixtureRecords } from "./_otlp_json_records.ts";

// The mapping tests build records with a small test-only converter; these
// checks hold it to the real decoder, so both sides keep one record contract.

const fixtures = [
  ["claude_code.json", "logs"],
  ["claude_code_old_names.json", "logs"],
  ["codex.json", "logs"],
  ["gemini_cli.json", "logs"],
  ["genai_spans.json", "traces"],
] as const;

Deno.test("The OTLP decoder turns each agent fixture into the records the mapping tests use", async () => {
  for (const [name, signal] of fixtures) {
    const body = await Deno.readFile(new URL(`./fixtures/agents/${name}`, import.meta.url));
    const decoded = decodeExport(body, { encoding: "json", pathSignal: "logs" });
    assert.equal(decoded.signal, signal, name);
    assert.deepEqual(decoded.records, await fixtureRecords(name), name);
  }
});

Deno.test("Generated exports decode and map with no unusable record", () => {
  const now = new Date("2026-11-22T12:00:00Z");
  let records = 0;
  for (const e of generateExports({ actors: 2, days: 2, seed: 5, now })) {
    const decoded = decodeExport(encodeJson(e.body), { encoding: "json", pathSignal: "logs" });
    assert.equal(decoded.records.length, e.records);
    for (const record of decoded.records) {
      const result = mapRecord(record);
      assert.notEqual(result.status, "unusable", JSON.stringify(result));
      records++;
    }
  }
  assert.ok(records > 100);
});
