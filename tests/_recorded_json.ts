/**
 * Recorded real-agent runs replayed as if they had just happened: the OTLP/JSON
 * requests of a run (`tests/fixtures/agents/real/<agent>-<version>/<variant>`),
 * every time in them moved by the same amount, so a test that needs them
 * inside an insight window or a retention period passes on any date.
 *
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { readRecording, REAL_FIXTURES } from "../scripts/agents/_fixtures.ts";

const NS_PER_MS = 1_000_000n;
const RFC3339 = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/;

/** Every time in an OTLP/JSON body through `nanos` (`*UnixNano` fields) or `iso` (RFC 3339 values). */
function walkTimes(
  value: unknown,
  nanos: (ns: bigint) => bigint,
  iso: (text: string) => string,
): unknown {
  if (Array.isArray(value)) return value.map((item) => walkTimes(item, nanos, iso));
  if (typeof value === "string") return RFC3339.test(value) ? iso(value) : value;
  if (value === null || typeof value !== "object") return value;
  const out: Record<string, unknown> = {};
  for (const [key, inner] of Object.entries(value)) {
    const text = String(inner);
    out[key] = key.endsWith("UnixNano") && /^\d+$/.test(text) && text !== "0"
      ? String(nanos(BigInt(text)))
      : walkTimes(inner, nanos, iso);
  }
  return out;
}

/** Adds string attributes to every resource of an OTLP/JSON body (as `OTEL_RESOURCE_ATTRIBUTES` would). */
function withResource(json: Record<string, unknown>, resource: Record<string, string>): void {
  const added = Object.entries(resource).map(([key, value]) => ({
    key,
    value: { stringValue: value },
  }));
  if (added.length === 0) return;
  for (const list of ["resourceLogs", "resourceSpans", "resourceMetrics"]) {
    for (const entry of (json[list] ?? []) as { resource?: { attributes?: unknown[] } }[]) {
      entry.resource ??= {};
      entry.resource.attributes = [...(entry.resource.attributes ?? []), ...added];
    }
  }
}

/**
 * Posts a recorded run's JSON requests (`paths` containing `only`, else all)
 * with `ingestKey`, moved so its latest time is `endMs`, with `resource`
 * added to every resource's attributes.
 */
export async function replayRecordedJson(
  ingestUrl: string,
  ingestKey: string,
  run: string,
  endMs: number,
  only = "",
  resource: Record<string, string> = {},
): Promise<void> {
  const requests = (await readRecording(join(REAL_FIXTURES, run)))
    .filter((request) => request.path.includes(only));
  const bodies = requests.map((request) => {
    assert.ok(request.contentType.includes("json") && request.contentEncoding === null, run);
    return { path: request.path, json: JSON.parse(new TextDecoder().decode(request.body)) };
  });
  let last = 0n;
  for (const { json } of bodies) {
    walkTimes(json, (ns) => (ns > last ? last = ns : ns), (text) => text);
  }
  const shift = BigInt(endMs) * NS_PER_MS - last;
  const shiftMs = Number(shift / NS_PER_MS);
  for (const { path, json } of bodies) {
    const moved = walkTimes(
      json,
      (ns) => ns + shift,
      (text) => new Date(Date.parse(text) + shiftMs).toISOString(),
    ) as Record<string, unknown>;
    withResource(moved, resource);
    const response = await fetch(ingestUrl + path, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${ingestKey}` },
      body: JSON.stringify(moved),
    });
    assert.equal(response.status, 200, `${run} ${path}: ${await response.text()}`);
  }
}
