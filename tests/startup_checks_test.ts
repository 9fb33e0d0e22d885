/**
 * Start-up on damaged files (finding 9 of issue #14): every refusal is one
 * line on stderr naming the file, exit code 2, and nothing created; an
 * emptied key store or a deleted `telemetry.db` is refused unless
 * `--allow-empty-store`; `--readonly` serves from read-only media; a
 * PostgreSQL node creates its `--data` directory; new files are 0600.
 *
 * @module
 */
import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { checkDataFiles, DataFileError } from "../src/store/sqlite/file_checks.ts";
import { listenerUrl, runCliProcess, serveArgs, spawnCli, startTestServer } from "./_harness.ts";
import { canMount, spawnNamespacedServer } from "./_faults.ts";
import { pgTestUrl } from "./_pg.ts";
import { loadScenario, T0 } from "./_scenario.ts";
import { claudeExport, toolResult } from "./_otlp.ts";

/** A data directory with the scenario's data, its keys, and a built replica. */
async function seedDataDir(): Promise<{ dir: string; apiKey: string; ingestKey: string }> {
  const dir = await Deno.makeTempDir({ prefix: "agent-telemetry-startup-" });
  await using server = await startTestServer({ dir });
  const { org } = await loadScenario(server);
  const insight = await server.getJson("/v1/insights/top-tools?window=30d", org.apiKey);
  assert.equal(insight.status, 200);
  return { dir, apiKey: org.apiKey, ingestKey: org.ingestKey };
}

/** `main.ts …args` as the unprivileged user `nobody` (the tests run as root), home in `dir`. */
function serveAsNobody(
  dir: string,
  args: string[],
  io: Pick<Deno.CommandOptions, "stdout" | "stderr">,
): Deno.Command {
  return new Deno.Command("setpriv", {
    args: [
      "--reuid=nobody",
      "--regid=nogroup",
      "--clear-groups",
      Deno.execPath(),
      "run",
      "--allow-all",
      new URL("../main.ts", import.meta.url).pathname,
      ...args,
    ],
    env: {
      NO_COLOR: "1",
      HOME: dir,
      // This user's module cache, so that nothing is fetched.
      DENO_DIR: Deno.env.get("DENO_DIR") ?? `${Deno.env.get("HOME")}/.cache/deno`,
    },
    ...io,
  });
}

function listing(dir: string): string[] {
  try {
    return [...Deno.readDirSync(dir)].map((entry) => entry.name).sort();
  } catch {
    return [];
  }
}

/** Asserts exit 2 and one stderr line naming `file` and `hint`, and nothing new in `dir`. */
async function assertRefused(
  args: string[],
  dir: string,
  file: string,
  hint: RegExp,
): Promise<void> {
  const before = listing(dir);
  const { code, stderr } = await runRefusedCli(args);
  const lines = stderr.trim().split("\n");
  assert.equal(code, 2, stderr);
  assert.equal(lines.length, 1, `more than one line:\n${stderr}`);
  assert.ok(lines[0]!.includes(file), `does not name ${file}: ${lines[0]}`);
  assert.match(lines[0]!, hint);
  assert.deepEqual(listing(dir), before, "files were created");
}

/** Runs the CLI like runCliProcess, killed after 20 s: a server that starts is no refusal. */
async function runRefusedCli(args: string[]): Promise<{ code: number; stderr: string }> {
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-all", new URL("../main.ts", import.meta.url).pathname, ...args],
    stdout: "null",
    stderr: "piped",
    env: { NO_COLOR: "1" },
    signal: AbortSignal.timeout(20_000),
  }).output();
  return { code: output.code, stderr: new TextDecoder().decode(output.stderr) };
}

function overwrite(path: string, offset: number, bytes: Uint8Array): void {
  const file = Deno.openSync(path, { write: true });
  try {
    file.seekSync(offset, Deno.SeekMode.Start);
    file.writeSync(bytes);
  } finally {
    file.close();
  }
}

Deno.test("serve refuses damaged or emptied data files with one line naming the file", async (t) => {
  const seed = await seedDataDir();
  const cases: {
    name: string;
    damage: (dir: string) => void;
    file: string;
    hint: RegExp;
    extra?: string[];
  }[] = [
    {
      name: "a corrupt telemetry.db header",
      damage: (dir) => overwrite(`${dir}/telemetry.db`, 0, new TextEncoder().encode("garbage!")),
      file: "telemetry.db",
      hint: /backup/,
    },
    {
      name: "a corrupt keys.db header",
      damage: (dir) => overwrite(`${dir}/keys.db`, 0, new TextEncoder().encode("garbage!")),
      file: "keys.db",
      hint: /backup/,
    },
    {
      name: "a corrupted page in the middle of telemetry.db",
      damage: (dir) => {
        const path = `${dir}/telemetry.db`;
        const db = new DatabaseSync(path);
        const { rootpage } = db.prepare(
          "SELECT rootpage FROM sqlite_master WHERE type = 'index' ORDER BY rootpage DESC LIMIT 1",
        ).get() as { rootpage: number };
        const pageSize = Number(
          (db.prepare("PRAGMA page_size").get() as { page_size: number })
            .page_size,
        );
        db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
        db.close();
        overwrite(path, (rootpage - 1) * pageSize, new Uint8Array(pageSize).fill(0xa5));
      },
      file: "telemetry.db",
      hint: /backup/,
    },
    {
      name: "a keys.db truncated to 0 bytes",
      damage: (dir) => Deno.truncateSync(`${dir}/keys.db`, 0),
      file: "keys.db",
      hint: /--allow-empty-store/,
    },
    {
      name: "a deleted telemetry.db while the replica shows data existed",
      damage: (dir) => Deno.removeSync(`${dir}/telemetry.db`),
      file: "telemetry.db",
      hint: /--allow-empty-store/,
    },
    {
      name: "a key store without organizations while telemetry exists",
      damage: (dir) => {
        const db = new DatabaseSync(`${dir}/keys.db`);
        db.exec("PRAGMA foreign_keys = OFF");
        for (const table of ["api_keys", "actors", "members", "orgs"]) {
          db.exec(`DELETE FROM ${table}`);
        }
        db.close();
      },
      file: "keys.db",
      hint: /--allow-empty-store/,
    },
  ];
  try {
    for (const scenario of cases) {
      await t.step(scenario.name, async () => {
        const dir = await Deno.makeTempDir({ prefix: "agent-telemetry-damaged-" });
        try {
          for (const name of listing(seed.dir)) {
            Deno.copyFileSync(`${seed.dir}/${name}`, `${dir}/${name}`);
          }
          scenario.damage(dir);
          await assertRefused(serveArgs(dir), dir, scenario.file, scenario.hint);
        } finally {
          await Deno.remove(dir, { recursive: true });
        }
      });
    }
    await t.step("check verifies every page and names a corrupted file", async () => {
      const ok = await runCliProcess(["check", "--data", seed.dir, "--json"]);
      assert.equal(ok.code, 0, ok.stderr);
      assert.equal(JSON.parse(ok.stdout).files[`${seed.dir}/telemetry.db`], "ok");
      const dir = await Deno.makeTempDir({ prefix: "agent-telemetry-check-" });
      try {
        for (const name of listing(seed.dir)) {
          Deno.copyFileSync(`${seed.dir}/${name}`, `${dir}/${name}`);
        }
        cases[2]!.damage(dir);
        await assertRefused(["check", "--data", dir], dir, "telemetry.db", /backup/);
      } finally {
        await Deno.remove(dir, { recursive: true });
      }
    });
  } finally {
    await Deno.remove(seed.dir, { recursive: true });
  }
});

Deno.test("--allow-empty-store starts over an emptied key store", async () => {
  const seed = await seedDataDir();
  try {
    Deno.truncateSync(`${seed.dir}/keys.db`, 0);
    const server = await spawnCli(
      serveArgs(seed.dir, "--allow-empty-store"),
      /OTLP ingest listening on \S+\n/,
    );
    try {
      assert.match(server.stdout, /OTLP ingest listening on/);
    } finally {
      server.child.kill("SIGTERM");
      await server.child.status;
    }
  } finally {
    await Deno.remove(seed.dir, { recursive: true });
  }
});

Deno.test("a port in use is one line naming it, and the data directory is not created", async () => {
  const base = await Deno.makeTempDir({ prefix: "agent-telemetry-port-" });
  const taken = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  try {
    const dir = `${base}/data`;
    const port = (taken.addr as Deno.NetAddr).port;
    const args = ["serve", "--data", dir, "--listen", `127.0.0.1:${port}`];
    const { code, stderr } = await runCliProcess([...args, "--ingest-listen", "127.0.0.1:0"]);
    assert.equal(code, 2, stderr);
    assert.equal(stderr.trim().split("\n").length, 1, stderr);
    assert.match(stderr, new RegExp(`127\\.0\\.0\\.1:${port}.*already in use`));
    assert.deepEqual(listing(base), [], "the data directory was created");
  } finally {
    taken.close();
    await Deno.remove(base, { recursive: true });
  }
});

Deno.test("every listener conflict is one line naming its flags, exit 2, nothing created", async () => {
  const base = await Deno.makeTempDir({ prefix: "agent-telemetry-listeners-" });
  const taken = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const free = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const freePort = (free.addr as Deno.NetAddr).port;
  free.close();
  try {
    const dir = `${base}/data`;
    const port = (taken.addr as Deno.NetAddr).port;
    const any = "127.0.0.1:0";
    const cases: [string[], RegExp][] = [
      // The gRPC listener's port is checked like the others' (it crashed after creating the store).
      [
        ["--listen", any, "--ingest-listen", any, "--grpc-listen", `127.0.0.1:${port}`],
        new RegExp(`127\\.0\\.0\\.1:${port}.*--grpc-listen.*already in use`),
      ],
      [[
        "--listen",
        `127.0.0.1:${freePort}`,
        "--ingest-listen",
        `127.0.0.1:${freePort}`,
        "--grpc-listen",
        any,
      ], /--listen and --ingest-listen both take port/],
      [[
        "--listen",
        `127.0.0.1:${freePort}`,
        "--ingest-listen",
        any,
        "--grpc-listen",
        `0.0.0.0:${freePort}`,
      ], /--listen and --grpc-listen both take port/],
    ];
    for (const [flags, message] of cases) {
      const { code, stderr } = await runCliProcess(["serve", "--data", dir, ...flags]);
      assert.equal(code, 2, stderr);
      assert.equal(stderr.trim().split("\n").length, 1, stderr);
      assert.match(stderr, message);
      assert.deepEqual(listing(base), [], `the data directory was created: ${flags.join(" ")}`);
    }
  } finally {
    taken.close();
    await Deno.remove(base, { recursive: true });
  }
});

Deno.test("a second server on one data directory is one line naming the first's pid, exit 2", async () => {
  const dir = await Deno.makeTempDir({ prefix: "agent-telemetry-lock-" });
  try {
    const first = await spawnCli(
      serveArgs(dir, "--log-level", "error"),
      /OTLP ingest listening on/,
    );
    try {
      const files = listing(dir);
      const { code, stderr } = await runCliProcess(serveArgs(dir));
      assert.equal(code, 2, stderr);
      assert.equal(stderr.trim().split("\n").length, 1, stderr);
      assert.match(stderr, new RegExp(`in use by another server \\(pid ${first.child.pid}\\)`));
      assert.deepEqual(listing(dir), files, "the second server created nothing");
    } finally {
      first.child.kill("SIGTERM");
      await first.child.status;
    }
    // The lock went with its holder: the directory serves again.
    const again = await spawnCli(
      serveArgs(dir, "--log-level", "error"),
      /OTLP ingest listening on/,
    );
    again.child.kill("SIGTERM");
    await again.child.status;
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("every command that opens a store names a damaged file in one line, exit 2", async () => {
  const seed = await seedDataDir();
  try {
    const damage = (file: string) => {
      const handle = Deno.openSync(`${seed.dir}/${file}`, { write: true });
      handle.writeSync(new TextEncoder().encode("not a sqlite header at all"));
      handle.close();
    };
    const expectRefused = async (args: string[], file: string) => {
      const { code, stderr } = await runCliProcess([...args, "--data", seed.dir]);
      assert.equal(code, 2, `${args.join(" ")}: ${stderr}`);
      assert.equal(stderr.trim().split("\n").length, 1, stderr);
      assert.match(stderr, new RegExp(`${file}.*not a database`), args.join(" "));
    };
    damage("telemetry.db");
    await expectRefused(["detect", "rescan"], "telemetry.db");
    await expectRefused(["backup", "--out", `${seed.dir}-backup`], "telemetry.db");
    damage("keys.db");
    for (
      const args of [["org", "list"], ["key", "list", "--org", "org_x"], [
        "actor",
        "list",
        "--org",
        "org_x",
      ]]
    ) {
      await expectRefused(args, "keys.db");
    }
    await expectRefused(["backup", "--out", `${seed.dir}-backup`], "keys.db");
    assert.equal(listing(`${seed.dir}-backup`).length, 0, "a backup target was created");
  } finally {
    await Deno.remove(seed.dir, { recursive: true });
  }
});

Deno.test({
  name: "read-only data files of another user are one line naming the file",
  ignore: !canMount,
  fn: async () => {
    const seed = await seedDataDir();
    try {
      for (const name of listing(seed.dir)) Deno.chmodSync(`${seed.dir}/${name}`, 0o444);
      Deno.chmodSync(seed.dir, 0o777);
      const before = listing(seed.dir);
      const output = await serveAsNobody(seed.dir, serveArgs(seed.dir), {
        stdout: "null",
        stderr: "piped",
      }).output();
      const stderr = new TextDecoder().decode(output.stderr).trim();
      assert.equal(output.code, 2, stderr);
      assert.equal(stderr.split("\n").length, 1, stderr);
      assert.match(stderr, /not writable: ".*keys\.db".*--readonly/);
      assert.deepEqual(listing(seed.dir), before);
    } finally {
      await Deno.remove(seed.dir, { recursive: true });
    }
  },
});

Deno.test({
  name: "--readonly serves lists and insights from a read-only bind mount",
  ignore: !canMount,
  fn: async () => {
    const seed = await seedDataDir();
    const mount = await Deno.makeTempDir({ prefix: "agent-telemetry-ro-" });
    try {
      await using server = await spawnNamespacedServer(
        'mount --bind "$1" "$2" && mount -o remount,ro,bind "$2" || exit 1\nshift 2',
        [seed.dir, mount],
        ["--data", mount, "--readonly", "--log-level", "error"],
      );
      const headers = { authorization: `Bearer ${seed.apiKey}` };
      const calls = await fetch(`${server.queryUrl}/v1/tool-calls`, { headers });
      assert.equal(calls.status, 200, server.stderr());
      assert.ok((await calls.json()).data.length > 0);
      const insight = await fetch(`${server.queryUrl}/v1/insights/top-tools?window=30d`, {
        headers,
      });
      assert.equal(insight.status, 200, server.stderr());
      assert.ok((await insight.json()).summary.total_calls > 0);
      const ready = await fetch(`${server.queryUrl}/readyz`);
      assert.equal(ready.status, 200, await ready.text());
    } finally {
      await Deno.remove(mount, { recursive: true });
      await Deno.remove(seed.dir, { recursive: true });
    }
  },
});

Deno.test({
  name: "a PostgreSQL node creates its --data directory",
  ignore: pgTestUrl() === null,
  fn: async () => {
    const { createTestDatabase } = await import("./_pg.ts");
    await using database = await createTestDatabase();
    const base = await Deno.makeTempDir({ prefix: "agent-telemetry-pgdata-" });
    try {
      const dir = `${base}/node/data`;
      const server = await spawnCli(
        serveArgs(dir, "--database", database.url),
        /OTLP ingest listening on \S+\n/,
      );
      try {
        assert.ok(listenerUrl(server.stdout, "OTLP ingest"));
        assert.ok(Deno.statSync(dir).isDirectory);
      } finally {
        server.child.kill("SIGTERM");
        await server.child.status;
      }
    } finally {
      await Deno.remove(base, { recursive: true });
    }
  },
});

Deno.test("data files and directories the CLI creates are its user's alone", async () => {
  const base = await Deno.makeTempDir({ prefix: "agent-telemetry-modes-" });
  try {
    const dir = `${base}/data`;
    const created = await runCliProcess(["org", "create", "--name", "Acme", "--data", dir]);
    assert.equal(created.code, 0, created.stderr);
    const server = await spawnCli(serveArgs(dir), /OTLP ingest listening on \S+\n/);
    server.child.kill("SIGTERM");
    await server.child.status;
    const backup = await runCliProcess(["backup", "--data", dir, "--out", `${base}/backup`]);
    assert.equal(backup.code, 0, backup.stderr);
    for (const path of [dir, `${base}/backup`]) {
      assert.equal(Deno.statSync(path).mode! & 0o777, 0o700, path);
    }
    const files = [`${dir}/keys.db`, `${dir}/telemetry.db`, `${dir}/analytics.duckdb`];
    for (const path of [...files, `${base}/backup/telemetry.db`]) {
      assert.equal(Deno.statSync(path).mode! & 0o777, 0o600, path);
    }
  } finally {
    await Deno.remove(base, { recursive: true });
  }
});

Deno.test("start-up verifies every page of a small file, only header and schema of a large one", async () => {
  const seed = await seedDataDir();
  const dir = await Deno.makeTempDir({ prefix: "agent-telemetry-large-" });
  try {
    for (const name of listing(seed.dir)) {
      Deno.copyFileSync(`${seed.dir}/${name}`, `${dir}/${name}`);
    }
    const path = `${dir}/telemetry.db`;
    const db = new DatabaseSync(path);
    const { rootpage } = db.prepare(
      "SELECT rootpage FROM sqlite_master WHERE type = 'index' ORDER BY rootpage DESC LIMIT 1",
    ).get() as { rootpage: number };
    const pageSize = Number(
      (db.prepare("PRAGMA page_size").get() as { page_size: number }).page_size,
    );
    db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
    db.close();
    overwrite(path, (rootpage - 1) * pageSize, new Uint8Array(pageSize).fill(0xa5));
    const size = Deno.statSync(path).size;
    // At the threshold the file still gets quick_check, which finds the page.
    assert.throws(
      () => checkDataFiles(dir, { quickCheckMaxBytes: size }),
      (error: Error) => error instanceof DataFileError && /quick_check/.test(error.message),
    );
    // One byte above it only the header and schema are read: start-up time does not grow
    // with the store, and `check` (full) still finds the damage.
    assert.equal(checkDataFiles(dir, { quickCheckMaxBytes: size - 1 })[path], "ok");
    assert.throws(
      () => checkDataFiles(dir, { quickCheckMaxBytes: size - 1, full: true }),
      (error: Error) => error instanceof DataFileError && error.message.includes(path),
    );
    // A damaged header is refused at any size.
    overwrite(path, 0, new TextEncoder().encode("garbage!"));
    assert.throws(() => checkDataFiles(dir, { quickCheckMaxBytes: 0 }), DataFileError);
  } finally {
    await Deno.remove(dir, { recursive: true });
    await Deno.remove(seed.dir, { recursive: true }).catch(() => {});
  }
});

// Issue #32, finding 3: data files made read-only (chmod 444) while the server runs as an
// unprivileged user. The open files still take writes, so every class of request is served:
// ingest commits, lists show it, and /readyz says ready; it must never name --readonly (a flag
// the operator did not set). After a restart the start-up check above refuses in one line.
// Catches: readiness probing the files' modes or reopening them for writing and reporting a
// refusal that did not happen, or ingest failing on files it holds open.
Deno.test({
  name: "data files made read-only under a running server: ingest still commits, /readyz ready",
  ignore: !canMount,
  fn: async () => {
    const seed = await seedDataDir();
    let child: Deno.ChildProcess | null = null;
    try {
      Deno.chmodSync(seed.dir, 0o777);
      for (const name of listing(seed.dir)) Deno.chmodSync(`${seed.dir}/${name}`, 0o666);
      child = serveAsNobody(seed.dir, serveArgs(seed.dir, "--log-level", "error"), {
        stdout: "piped",
        stderr: "null",
      }).spawn();
      const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
      let stdout = "";
      while (!/OTLP ingest listening on \S+\n/.test(stdout)) {
        const { value, done } = await reader.read();
        if (done) throw new Error(`serve as nobody did not start: ${stdout}`);
        stdout += value;
      }
      await reader.cancel();
      const queryUrl = listenerUrl(stdout, "query API");
      const ingestUrl = listenerUrl(stdout, "OTLP ingest");
      for (const name of listing(seed.dir)) Deno.chmodSync(`${seed.dir}/${name}`, 0o444);
      const sent = await fetch(`${ingestUrl}/v1/logs`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          authorization: `Bearer ${seed.ingestKey}`,
        },
        body: JSON.stringify(claudeExport([
          toolResult({ session: "after-chmod", id: "toolu_chmod", tool: "Bash", timeMs: T0 }),
        ])),
      });
      assert.equal(sent.status, 200, await sent.text());
      const headers = { authorization: `Bearer ${seed.apiKey}` };
      const listed = await fetch(`${queryUrl}/v1/tool-calls?session_id=after-chmod`, { headers });
      assert.equal((await listed.json()).data.length, 1);
      const ready = await fetch(`${queryUrl}/readyz`);
      const body = await ready.text();
      assert.doesNotMatch(body, /readonly/i, "readiness names a flag the operator did not set");
      assert.equal(ready.status, 200, body);
    } finally {
      if (child) {
        child.kill("SIGTERM");
        await child.status;
      }
      await Deno.remove(seed.dir, { recursive: true });
    }
  },
});
