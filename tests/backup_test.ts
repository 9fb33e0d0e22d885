import assert from "node:assert/strict";
import { runCliProcess, startTestServer } from "./_harness.ts";
import { loadScenario } from "./_scenario.ts";

const ENDPOINTS = [
  "/v1/sessions",
  "/v1/sessions/facets",
  "/v1/sessions/s1",
  "/v1/sessions/s2",
  "/v1/tool-calls",
  "/v1/tool-calls?outcome=rejected",
  "/v1/tool-calls/facets",
];

Deno.test("backup while serving, restore into a new directory: every endpoint answers the same", async () => {
  const root = await Deno.makeTempDir();
  try {
    await using server = await startTestServer({ dir: `${root}/live` });
    const { org } = await loadScenario(server);
    const before = await Promise.all(ENDPOINTS.map((path) => server.getJson(path, org.apiKey)));
    const backup = await runCliProcess([
      "backup",
      "--data",
      `${root}/live`,
      "--out",
      `${root}/bak`,
      "--json",
    ]);
    assert.equal(backup.code, 0, backup.stderr);
    assert.ok(JSON.parse(backup.stdout).bytes > 0);
    const again = await runCliProcess(["backup", "--data", `${root}/live`, "--out", `${root}/bak`]);
    assert.equal(again.code, 2, "a backup never overwrites another");
    const restore = await runCliProcess([
      "restore",
      "--from",
      `${root}/bak`,
      "--data",
      `${root}/copy`,
      "--json",
    ]);
    assert.equal(restore.code, 0, restore.stderr);
    const twice = await runCliProcess([
      "restore",
      "--from",
      `${root}/bak`,
      "--data",
      `${root}/copy`,
    ]);
    assert.equal(twice.code, 2, "restore needs an empty data directory");
    await using copy = await startTestServer({ dir: `${root}/copy` });
    const after = await Promise.all(ENDPOINTS.map((path) => copy.getJson(path, org.apiKey)));
    for (let i = 0; i < ENDPOINTS.length; i++) {
      assert.equal(before[i]!.status, 200, String(ENDPOINTS[i]));
      assert.deepEqual(after[i], before[i], String(ENDPOINTS[i]));
    }
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});
