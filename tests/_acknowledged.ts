/**
 * The check that follows a SIGKILL in the crash tests: every export the
 * server acknowledged is stored whole, nothing beyond what was sent is, and
 * no export is stored in part. Each export is one session named
 * `<prefix>-<n>` holding `callsPerExport` calls.
 *
 * @module
 */
import assert from "node:assert/strict";
import type { TestServer } from "./_harness.ts";

/** Reads every session of the organization and checks the acknowledged exports against them. */
export async function assertAcknowledgedStored(
  server: TestServer,
  apiKey: string,
  expected: {
    prefix: string;
    acknowledged: readonly number[];
    sent: number;
    callsPerExport: number;
  },
): Promise<void> {
  const seen = new Map<string, number>();
  let cursor: string | undefined;
  do {
    const { body } = await server.getJson(
      `/v1/sessions?limit=500${cursor ? `&cursor=${cursor}` : ""}`,
      apiKey,
    );
    for (const s of body.data) seen.set(s.session_id, s.tool_call_count);
    cursor = body.next_cursor;
  } while (cursor);
  for (const n of expected.acknowledged) {
    assert.equal(
      seen.get(`${expected.prefix}-${n}`),
      expected.callsPerExport,
      `export ${n} was acknowledged`,
    );
  }
  assert.ok(seen.size <= expected.sent, "nothing beyond what was sent");
  for (const count of seen.values()) assert.equal(count, expected.callsPerExport, "all or nothing");
}
