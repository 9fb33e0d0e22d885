import assert from "node:assert/strict";
import { postgresBinaries } from "../scripts/test.ts";

/** Creates `names` in `dir` (mode 0755, or 0644 when `executable` is false). */
async function tools(dir: string, names: string[], executable = true): Promise<void> {
  await Deno.mkdir(dir, { recursive: true });
  for (const name of names) {
    await Deno.writeTextFile(`${dir}/${name}`, "#!/bin/sh\n", { mode: executable ? 0o755 : 0o644 });
  }
}

Deno.test("deno task test finds PostgreSQL's initdb and pg_ctl on PATH or in /usr/lib/postgresql/*/bin", async () => {
  const root = await Deno.makeTempDir({ prefix: "agent-telemetry-test-" });
  try {
    await tools(`${root}/only-initdb`, ["initdb"]);
    await tools(`${root}/not-executable`, ["initdb", "pg_ctl"], false);
    await tools(`${root}/path-bin`, ["initdb", "pg_ctl"]);
    await tools(`${root}/versions/9/bin`, ["initdb", "pg_ctl"]);
    await tools(`${root}/versions/15/bin`, ["initdb", "pg_ctl"]);
    const none = `${root}/none`;
    assert.equal(postgresBinaries(`${root}/only-initdb:${root}/not-executable`, none), null);
    assert.equal(
      postgresBinaries(`${root}/only-initdb:${root}/path-bin`, `${root}/versions`),
      `${root}/path-bin`,
      "PATH first",
    );
    assert.equal(
      postgresBinaries("/nonexistent", `${root}/versions`),
      `${root}/versions/15/bin`,
      "the newest installed version, by number",
    );
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});
