/**
 * `--help` and errors of the command line, walked from the command table
 * itself: a command added without help, a flag parsed but not listed, or an
 * error that does not say which flag or variable was wrong fails here.
 */
import assert from "node:assert/strict";
import {
  resolveServeConfig,
  SERVE_SETTINGS,
  type ServeSettingKey,
  settingEntries,
} from "../src/config.ts";
import { commandGroups, COMMANDS } from "../src/cli/commands.ts";
import { parseCommandFlags, parseOptionsOf } from "../src/cli/flags.ts";
import { synopsis } from "../src/cli/help.ts";

const MAIN = new URL("../main.ts", import.meta.url).pathname;
const README = new URL("../README.md", import.meta.url).pathname;

interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** The CLI as a user runs it, with only `env` set beyond PATH and HOME. */
async function cli(
  args: string[],
  options: { env?: Record<string, string>; cwd?: string } = {},
): Promise<CliRun> {
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-all", MAIN, ...args],
    cwd: options.cwd,
    env: { NO_COLOR: "1", ...options.env },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const decoder = new TextDecoder();
  return {
    code: output.code,
    stdout: decoder.decode(output.stdout),
    stderr: decoder.decode(output.stderr),
  };
}

/** Runs `jobs` two at a time (the machine is shared). */
async function inPairs<T>(jobs: (() => Promise<T>)[]): Promise<T[]> {
  const results: T[] = [];
  for (let i = 0; i < jobs.length; i += 2) {
    results.push(...await Promise.all(jobs.slice(i, i + 2).map((job) => job())));
  }
  return results;
}

/** The flags a help text lists: each flag row starts with `--name` (or `-h, --help`). */
function listedFlags(help: string): Set<string> {
  const flags = new Set<string>();
  for (const line of help.split("\n")) {
    const match = /^ {2}(?:-h, )?--([a-z][a-z-]*)/.exec(line);
    if (match) flags.add(match[1]!);
  }
  return flags;
}

function listing(dir: string): string[] {
  try {
    return [...Deno.readDirSync(dir)].map((entry) => entry.name).sort();
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return ["<missing>"];
    throw error;
  }
}

Deno.test("every command and group answers --help and -h on stdout with exit 0, listing every flag its parser accepts", async () => {
  const groups = commandGroups();
  const asks: { args: string[]; usage: string; flags?: string[] }[] = [];
  for (const command of COMMANDS) {
    const flags = Object.keys(parseOptionsOf(command));
    for (const help of ["--help", "-h"]) {
      asks.push({
        args: [...command.name.split(" "), help],
        usage: `Usage: agent-telemetry ${synopsis(command)}\n`,
        flags,
      });
    }
  }
  for (const group of groups.keys()) {
    for (const help of ["--help", "-h"]) {
      asks.push({ args: [group, help], usage: `Usage: agent-telemetry ${group} <subcommand>` });
    }
  }
  for (const help of ["--help", "-h", "help"]) {
    asks.push({ args: [help], usage: "Usage: agent-telemetry <command> [flags]\n" });
  }
  const runs = await inPairs(asks.map((ask) => () => cli(ask.args)));
  asks.forEach((ask, i) => {
    const run = runs[i]!;
    const what = ask.args.join(" ");
    assert.equal(run.code, 0, `${what}: ${run.stderr}`);
    assert.equal(run.stderr, "", `${what} writes nothing on stderr`);
    assert.ok(run.stdout.startsWith(ask.usage), `${what} starts with its usage:\n${run.stdout}`);
    if (ask.flags) {
      const listed = listedFlags(run.stdout);
      for (const flag of ask.flags) {
        assert.ok(listed.has(flag), `${what} does not list --${flag}:\n${run.stdout}`);
      }
      // And the other way: every flag help lists is one the parser takes.
      assert.deepEqual([...listed].sort(), [...ask.flags].sort(), what);
    }
  });
  for (const [group, members] of groups) {
    const help = runs[asks.findIndex((ask) => ask.args.join(" ") === `${group} --help`)]!.stdout;
    for (const member of members) {
      assert.ok(help.includes(synopsis(member)), `${group} --help lists ${member.name}`);
    }
  }
});

Deno.test("the top-level usage lists every command with its required flags", async () => {
  const run = await cli(["--help"]);
  assert.equal(run.code, 0, run.stderr);
  for (const command of COMMANDS) {
    const required = command.flags.filter((flag) => flag.required).map((flag) => `--${flag.name}`);
    const line = run.stdout.split("\n").find((row) => row.startsWith(`  ${command.name} `));
    assert.ok(line, `usage lists ${command.name}:\n${run.stdout}`);
    for (const flag of required) assert.ok(line.includes(flag), `${command.name} shows ${flag}`);
  }
  const bare = await cli([]);
  assert.equal(bare.code, 2, "no command is a usage error");
  assert.ok(bare.stderr.startsWith("Usage: agent-telemetry"), bare.stderr);
});

Deno.test("serve --help shows every setting's flag, environment variable and the default validation uses", async () => {
  const run = await cli(["serve", "--help"]);
  assert.equal(run.code, 0, run.stderr);
  for (const [, setting] of settingEntries()) {
    assert.match(run.stdout, new RegExp(`^ {2}--${setting.flag}\\b`, "m"), setting.flag);
    assert.ok(run.stdout.includes(`env ${setting.env}`), setting.env);
  }
  // The defaults shown are the ones resolveServeConfig applies.
  const dir = await Deno.makeTempDir();
  const applied = resolveServeConfig({ data: dir }, () => undefined);
  await Deno.remove(dir, { recursive: true });
  assert.ok(run.stdout.includes(`default ${applied.retentionDays}\n`), "retention default");
  assert.ok(run.stdout.includes(`default ${applied.queryTimeoutMs}\n`), "query timeout default");
  assert.ok(run.stdout.includes(`default ${applied.ingestMaxBytes}\n`), "ingest cap default");
});

/** A bad value per setting and the bound its error must state. */
const BAD_VALUES: Record<ServeSettingKey, { value: string; bound: RegExp } | "file"> = {
  data: { value: "", bound: /expected a directory path/ },
  database: { value: "mysql://u:hunter2pw@h/db", bound: /postgres:\/\/USER@HOST:PORT\/DB/ },
  listen: { value: "8080", bound: /HOST:PORT with a port from 0 to 65535/ },
  ingestListen: { value: "h:70000", bound: /HOST:PORT with a port from 0 to 65535/ },
  grpcListen: { value: "nope", bound: /HOST:PORT with a port from 0 to 65535, or off/ },
  metricsToken: { value: "short", bound: /at least 16 characters/ },
  tlsCert: "file",
  tlsKey: "file",
  queryTimeoutMs: { value: "0", bound: /whole number of milliseconds, at least 1/ },
  ingestMaxBytes: { value: "1.5", bound: /whole number of bytes, at least 1/ },
  readerThreads: { value: "two", bound: /whole number of threads, at least 1/ },
  maxQueuedQueries: { value: "-1", bound: /whole number of queries, at least 1/ },
  keepSecrets: { value: "maybe", bound: /1, true, yes or on/ },
  readOnly: { value: "sometimes", bound: /0, false, no, off or empty/ },
  allowEmptyStore: { value: "y", bound: /1, true, yes or on/ },
  logLevel: { value: "loud", bound: /allowed: debug, info, warn, error, silent/ },
  retentionDays: { value: "89", bound: /whole number of days, at least 90/ },
  maxDiskBytes: { value: "10MB", bound: /whole number of bytes, at least 1/ },
  dimension: { value: "team id", bound: /at most 20 keys of 1 to 64 letters/ },
};

Deno.test("an invalid environment variable is named in the error with the real bound; the same value by flag names the flag", async (t) => {
  const dir = await Deno.makeTempDir();
  const pem = `${dir}/cert.pem`;
  await Deno.writeTextFile(pem, "-----BEGIN CERTIFICATE-----\n");
  try {
    for (const [key, setting] of settingEntries()) {
      await t.step(setting.env, () => {
        const bad = BAD_VALUES[key];
        if (bad === "file") {
          // The other half of the pair is a readable file, this one is missing.
          const other = key === "tlsCert" ? SERVE_SETTINGS.tlsKey.env : SERVE_SETTINGS.tlsCert.env;
          const env: Record<string, string> = { [setting.env]: `${dir}/missing.pem`, [other]: pem };
          assert.throws(
            () => resolveServeConfig({ data: dir }, (name) => env[name]),
            (error: Error) => error.message.includes(setting.env),
          );
          return;
        }
        const env: Record<string, string> = { [setting.env]: bad.value };
        const flags = key === "data" ? {} : { data: dir };
        assert.throws(() => resolveServeConfig(flags, (name) => env[name]), (error: Error) => {
          assert.ok(error.message.includes(` from ${setting.env} `), error.message);
          assert.match(error.message, bad.bound);
          assert.ok(!error.message.includes("hunter2pw"), `no password shown: ${error.message}`);
          return true;
        });
        assert.throws(
          () => resolveServeConfig({ ...flags, [key]: bad.value }, () => undefined),
          (error: Error) => error.message.includes(` from --${setting.flag} `),
        );
      });
    }
    await t.step("the token itself is never echoed", () => {
      const token = "tooShortToken";
      assert.throws(
        () => resolveServeConfig({ data: dir, metricsToken: token }, () => undefined),
        (error: Error) => !error.message.includes(token),
      );
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("serve with AGENT_TELEMETRY_RETENTION_DAYS=abc prints one line naming the variable and its minimum, exit 2, nothing created", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const run = await cli(["serve", "--data", `${dir}/data`], {
      env: { AGENT_TELEMETRY_RETENTION_DAYS: "abc" },
    });
    assert.equal(run.code, 2, run.stderr);
    assert.equal(
      run.stderr,
      'error: Invalid retention: "abc" from AGENT_TELEMETRY_RETENTION_DAYS (expected a whole number of days, at least 90)\n',
    );
    assert.deepEqual(listing(dir), []);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("with --json every refusal is one JSON object on stderr, nothing on stdout, exit 2", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.mkdir(`${dir}/store`);
    const created = await cli(["org", "create", "--name", "Acme", "--data", `${dir}/store`]);
    assert.equal(created.code, 0, created.stderr);
    const cases: { args: string[]; env?: Record<string, string>; code: string; says: RegExp }[] = [
      { args: ["nope"], code: "invalid_argument", says: /Unknown command/ },
      { args: ["org", "list", "--bogus"], code: "invalid_argument", says: /--bogus/ },
      { args: ["member", "add", "--org", "o"], code: "invalid_argument", says: /--email/ },
      { args: ["org", "create", "--name"], code: "invalid_argument", says: /--name/ },
      {
        args: ["serve", "--data", `${dir}/serve`],
        env: { AGENT_TELEMETRY_LOG_LEVEL: "loud" },
        code: "invalid_argument",
        says: /AGENT_TELEMETRY_LOG_LEVEL/,
      },
      { args: ["org", "list", "--data", `${dir}/typo`], code: "data_unusable", says: /typo/ },
      {
        args: ["key", "list", "--org", "org_missing", "--data", `${dir}/store`],
        code: "rejected",
        says: /org_missing/,
      },
    ];
    const runs = await inPairs(
      cases.map((c) => () => cli([...c.args, "--json"], { env: c.env })),
    );
    cases.forEach((c, i) => {
      const run = runs[i]!;
      const what = c.args.join(" ");
      assert.equal(run.code, 2, `${what}: ${run.stderr}`);
      assert.equal(run.stdout, "", `${what}: stdout stays for results`);
      const lines = run.stderr.trim().split("\n");
      assert.equal(lines.length, 1, `${what}: one line: ${run.stderr}`);
      const body = JSON.parse(lines[0]!);
      assert.deepEqual(Object.keys(body), ["error"]);
      assert.deepEqual(Object.keys(body.error).sort(), ["code", "message"]);
      assert.equal(body.error.code, c.code, what);
      assert.match(body.error.message, c.says, what);
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("admin commands refuse a --data that holds no store, with one line naming it and exit 2, creating nothing", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.mkdir(`${dir}/empty`);
    await Deno.mkdir(`${dir}/other`);
    await Deno.writeTextFile(`${dir}/other/notes.txt`, "not a store");
    const cases: { args: string[]; data: string }[] = [
      { args: ["org", "list"], data: `${dir}/typo` },
      { args: ["org", "list"], data: `${dir}/empty` },
      { args: ["member", "add", "--org", "o", "--email", "a@b.c"], data: `${dir}/typo` },
      { args: ["member", "list", "--org", "o"], data: `${dir}/empty` },
      { args: ["key", "create", "--org", "o", "--member", "m"], data: `${dir}/typo` },
      { args: ["actor", "create", "--org", "o"], data: `${dir}/empty` },
      { args: ["actor", "revoke", "--id", "act_x"], data: `${dir}/typo` },
      { args: ["org", "create", "--name", "Acme"], data: `${dir}/other` },
      { args: ["detect", "rescan"], data: `${dir}/typo` },
      { args: ["export", "--org", "o", "--out", `${dir}/calls.ndjson`], data: `${dir}/empty` },
      { args: ["check"], data: `${dir}/empty` },
    ];
    const runs = await inPairs(cases.map((c) => () => cli([...c.args, "--data", c.data])));
    cases.forEach((c, i) => {
      const run = runs[i]!;
      const what = `${c.args.slice(0, 2).join(" ")} on ${c.data.slice(dir.length + 1)}`;
      assert.equal(run.code, 2, `${what}: ${run.stderr}`);
      const lines = run.stderr.trim().split("\n");
      assert.equal(lines.length, 1, `${what}: ${run.stderr}`);
      assert.ok(lines[0]!.startsWith(`error: No store in "${c.data}" (--data)`), run.stderr);
    });
    assert.deepEqual(listing(dir), ["empty", "other"], "no directory was created");
    assert.deepEqual(listing(`${dir}/empty`), [], "nothing was created in the empty directory");
    assert.deepEqual(listing(`${dir}/other`), ["notes.txt"]);

    const byEnv = await cli(["org", "list"], { env: { AGENT_TELEMETRY_DATA: `${dir}/typo` } });
    assert.equal(byEnv.code, 2);
    assert.match(byEnv.stderr, /\(AGENT_TELEMETRY_DATA\)/, "names where the directory came from");
    assert.deepEqual(listing(`${dir}/typo`), ["<missing>"]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("org create starts a store in an empty or a missing directory, and the store is then usable", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.mkdir(`${dir}/empty`);
    for (const data of [`${dir}/empty`, `${dir}/missing/nested`]) {
      const created = await cli(["org", "create", "--name", "Acme", "--data", data, "--json"]);
      assert.equal(created.code, 0, created.stderr);
      const org = JSON.parse(created.stdout);
      const listed = await cli(["org", "list", "--data", data, "--json"]);
      assert.equal(listed.code, 0, listed.stderr);
      assert.deepEqual(JSON.parse(listed.stdout).orgs.map((row: { id: string }) => row.id), [
        org.id,
      ]);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("parsing by a command's table accepts what its help lists and nothing else", () => {
  for (const command of COMMANDS) {
    const unknown = () => parseCommandFlags(command, ["--not-a-flag"], () => undefined);
    assert.throws(unknown, /Unknown flag: --not-a-flag/, command.name);
    for (const flag of command.flags) {
      const args = flag.value === undefined ? [`--${flag.name}`] : [`--${flag.name}`, "x"];
      const required = command.flags.filter((other) => other.required && other !== flag)
        .flatMap((other) => [`--${other.name}`, "x"]);
      const parsed = parseCommandFlags(command, [...args, ...required], () => undefined);
      assert.notEqual(parsed.given[flag.name], undefined, `${command.name} --${flag.name}`);
    }
  }
});

Deno.test("README's Configuration and Command line sections name every serve setting and every command", async () => {
  const readme = await Deno.readTextFile(README);
  const section = (title: string) => {
    const start = readme.indexOf(`\n## ${title}\n`);
    assert.ok(start >= 0, `README has a ${title} section`);
    const end = readme.indexOf("\n## ", start + 1);
    return readme.slice(start, end < 0 ? undefined : end);
  };
  const configuration = section("Configuration");
  for (const [, setting] of settingEntries()) {
    assert.ok(configuration.includes(`\`--${setting.flag}`), `README lists --${setting.flag}`);
    assert.ok(configuration.includes(setting.env), `README lists ${setting.env}`);
  }
  const commandLine = section("Command line");
  for (const command of COMMANDS) {
    assert.ok(commandLine.includes(`\`${command.name}`), `README lists ${command.name}`);
  }
  assert.ok(commandLine.includes("--help"), "README mentions --help");
});

Deno.test("every script a user runs answers --help, and an unknown flag in one line with exit 2", async () => {
  const run = async (script: string, args: string[]) => {
    const output = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "--allow-all",
        new URL(`../scripts/${script}`, import.meta.url).pathname,
        ...args,
      ],
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
      env: { NO_COLOR: "1" },
    }).output();
    const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
    return { code: output.code, stdout: text(output.stdout), stderr: text(output.stderr) };
  };
  const scripts: [string, string][] = [
    ["bench.ts", "deno task bench"],
    ["agents/main.ts", "deno task agents"],
    ["detect_score.ts", "deno task detect-score"],
    ["release.ts", "deno task release"],
    ["compile.ts", "deno task compile"],
    ["calendar_guard.ts", "deno task calendar-guard"],
    ["openapi.ts", "deno task openapi"],
    ["screenshots.ts", "deno task screenshots"],
    ["probe_storage.ts", "deno run -A scripts/probe_storage.ts"],
    ["cpu_profile.ts", "deno run -A scripts/cpu_profile.ts"],
    ["product_packages.ts", "deno run -A scripts/product_packages.ts"],
  ];
  for (const [script, usage] of scripts) {
    const help = await run(script, ["--help"]);
    assert.equal(help.code, 0, `${script}: ${help.stderr}`);
    assert.ok(help.stdout.startsWith(usage), `${script}: ${help.stdout}`);
  }
  for (
    const script of [
      "bench.ts",
      "agents/main.ts",
      "release.ts",
      "openapi.ts",
      "screenshots.ts",
      "probe_storage.ts",
      "cpu_profile.ts",
      "product_packages.ts",
    ]
  ) {
    const bad = await run(script, ["--no-such-flag"]);
    assert.equal(bad.code, 2, `${script}: ${bad.stderr}`);
    assert.match(bad.stderr, /^error: .*no-such-flag/m, script);
    assert.doesNotMatch(bad.stderr, /\n\s+at /, `${script}: a stack trace`);
  }
});
