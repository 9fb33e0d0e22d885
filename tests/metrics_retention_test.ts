/**
 * Retention of metric points (issue #18): points go by whole (series, start
 * time) group once all of the group is past the cutoff, so a cumulative
 * series still reporting keeps its older points and its first point in the
 * window adds only its rise; the replica mirrors the deletions (tombstones),
 * both engines.
 */
import assert from "node:assert/strict";
import { engineTest, startTestServer } from "./_harness.ts";
import { readProductivityRows, referenceProductivity, windowOf } from "./_insights_reference.ts";
import { claudeExport, toolResult } from "./_otlp.ts";

const DAY = 86_400_000;
const NS = 1_000_000n;

function point(session: string, start: number | null, at: number, value: number) {
  return {
    ...(start === null ? {} : { startTimeUnixNano: String(BigInt(start) * NS) }),
    timeUnixNano: String(BigInt(at) * NS),
    asInt: String(value),
    attributes: [
      { key: "session.id", value: { stringValue: session } },
      { key: "type", value: { stringValue: "added" } },
    ],
  };
}

/** Claude Code-like `lines_of_code.count` sums of one temporality. */
function linesExport(temporality: 1 | 2, points: Record<string, unknown>[]) {
  return {
    resourceMetrics: [{
      resource: { attributes: [{ key: "service.name", value: { stringValue: "claude-code" } }] },
      scopeMetrics: [{
        scope: { name: "com.anthropic.claude_code" },
        metrics: [{
          name: "claude_code.lines_of_code.count",
          sum: { aggregationTemporality: temporality, isMonotonic: true, dataPoints: points },
        }],
      }],
    }],
  };
}

engineTest(
  "retention deletes whole metric series groups past the cutoff, and the replica follows",
  async () => {
    await using server = await startTestServer({ flags: { retentionDays: "90" } });
    const org = await server.createOrg();
    const now = Date.now();
    const at = (days: number) => now - days * DAY;
    const sent = [
      // Cumulative, all past the cutoff: goes.
      linesExport(2, [point("gone", at(120), at(119), 10), point("gone", at(120), at(100), 20)]),
      // Cumulative, still reporting: every point stays, so the window sees a rise of 5, not 65.
      linesExport(2, [
        point("live", at(120), at(119), 50),
        point("live", at(120), at(95), 60),
        point("live", at(120), at(5), 65),
      ]),
      // Cumulative with no start time, still reporting: its group is the series
      // alone (no start time), so its older points stay too: a rise of 2, not 33.
      linesExport(2, [
        point("nostart", null, at(119), 30),
        point("nostart", null, at(95), 31),
        point("nostart", null, at(5), 33),
      ]),
      // Delta: each point is its own group.
      linesExport(1, [point("delta", at(101), at(100), 7), point("delta", at(3), at(2), 4)]),
    ];
    for (const body of sent) {
      const response = await server.ingest("/v1/metrics", body, org.ingestKey);
      assert.equal(response.status, 200, await response.text());
    }
    // A recent Write in the session whose only lines metric ages out.
    const logs = await server.ingest(
      "/v1/logs",
      claudeExport([
        toolResult({
          session: "gone",
          id: "w1",
          tool: "Write",
          timeMs: at(1),
          input: { file_path: "a.txt", content: "one\ntwo\nthree\n" },
        }),
      ]),
      org.ingestKey,
    );
    await logs.body?.cancel();

    const get = async () => {
      const { status, body } = await server.getJson(
        "/v1/insights/productivity?window=90d",
        org.apiKey,
      );
      assert.equal(status, 200);
      return body;
    };
    const before = await get();
    assert.equal(
      before.summary.lines_added,
      5 + 2 + 4,
      "the Write is not counted: its session sent lines",
    );
    assert.equal(before.summary.lines_source, "metrics");

    const result = await server.server.runRetention();
    assert.equal(result.toolCalls + result.modelCalls, 0);
    const rows = await readProductivityRows(server);
    const kept = rows.points.map((p) => `${p.session_id}@${Math.round((now - p.ts) / DAY)}`).sort();
    assert.deepEqual(kept, [
      "delta@2",
      "live@119",
      "live@5",
      "live@95",
      "nostart@119",
      "nostart@5",
      "nostart@95",
    ]);

    const after = await get();
    assert.equal(
      after.summary.lines_added,
      5 + 2 + 4 + 3,
      "the Write now counts: the replica lost the old points",
    );
    assert.equal(after.summary.lines_source, "mixed");
    assert.deepEqual(
      after,
      {
        ...referenceProductivity(
          rows,
          org.orgId,
          windowOf(after),
          {},
          new Map([[org.actorId, "dev"]]),
        ),
      },
    );
    const again = await server.server.runRetention();
    assert.equal(again.toolCalls + again.modelCalls, 0);
    assert.equal(
      (await readProductivityRows(server)).points.length,
      7,
      "a second pass deletes nothing",
    );
  },
);
