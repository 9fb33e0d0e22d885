/**
 * `deno task calendar-guard [--days N]`: runs the tests that build dated data
 * with the machine's clock moved N days ahead (400 by default: past every
 * insight window and the default retention), under Debian's `faketime`. A test
 * whose data is stamped at fixed dates while the server's "now" is the real
 * one (a test that rides the calendar) fails here today instead of on the day
 * its data leaves a window.
 *
 * Only the embedded store's variants run: PostgreSQL's server keeps its own
 * clock, and the product reads no time from it.
 *
 * @module
 */
// deno-lint-ignore-file no-console

const DATED = [
  /Date\.UTC\(\s*\d{4}/, // a fixed instant
  /new Date\(\s*["'`]\d{4}/, // a fixed date string
  /_scenario\.ts/, // the scenario's data and fixture clocks
  /fixtures\/agents/, // recorded or hand-written agent payloads
  /_recorded_json\.ts/, // recorded runs moved to a chosen time
];

/** The test files under `dir` whose source builds dated data, sorted. */
export function datedTestFiles(dir: string): string[] {
  const files: string[] = [];
  for (const entry of Deno.readDirSync(dir)) {
    if (!entry.isFile || !entry.name.endsWith("_test.ts")) continue;
    const text = Deno.readTextFileSync(`${dir}/${entry.name}`);
    if (DATED.some((pattern) => pattern.test(text))) files.push(`${dir}/${entry.name}`);
  }
  return files.sort();
}

function usage(): never {
  console.error("usage: deno task calendar-guard [--days N]   (N: 1 to 3650, default 400)");
  Deno.exit(2);
}

if (import.meta.main) {
  let days = 400;
  for (let i = 0; i < Deno.args.length; i++) {
    const arg = Deno.args[i];
    if (arg === "--help" || arg === "-h") {
      console.log(
        "deno task calendar-guard [--days N]: the dated tests with the clock N days ahead (faketime)",
      );
      Deno.exit(0);
    } else if (arg === "--days") {
      days = Number(Deno.args[++i]);
      if (!Number.isInteger(days) || days < 1 || days > 3650) usage();
    } else {
      usage();
    }
  }
  const root = new URL("..", import.meta.url).pathname;
  const files = datedTestFiles(`${root}tests`);
  console.error(`${files.length} test files with dated data, the clock ${days} days ahead`);
  const env = { ...Deno.env.toObject() };
  delete env.AGENT_TELEMETRY_TEST_DATABASE_URL;
  let status: Deno.CommandStatus;
  try {
    status = await new Deno.Command("faketime", {
      // -m: the multi-threaded library (the single-threaded one crashes now and then in a
      // process with many threads, as the test runner is); --exclude-monotonic: only the wall
      // clock moves, timers and timeouts keep real time.
      args: [
        "-m",
        "--exclude-monotonic",
        "-f",
        `+${days}d`,
        Deno.execPath(),
        "test",
        "--allow-all",
        "--parallel",
        ...files,
      ],
      cwd: root,
      env,
      clearEnv: true,
      stdin: "null",
    }).spawn().status;
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
    console.error("faketime is not installed: apt-get install faketime");
    Deno.exit(1);
  }
  if (status.signal) console.error(`the test runner ended by signal ${status.signal}`);
  Deno.exit(status.code);
}
