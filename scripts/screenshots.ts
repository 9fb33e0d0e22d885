/**
 * `deno task screenshots`: remakes the README's pictures of the dashboard in `docs/screenshots/`.
 * They are taken by the dashboard's browser test (`tests/ui_dashboard_test.ts`: the `demo` server
 * and headless Chromium in a loopback-only network namespace) with
 * `AGENT_TELEMETRY_UI_SCREENSHOTS=docs`; afterwards every picture README names must have been
 * written by this run.
 *
 * @module
 */
// deno-lint-ignore-file no-console
import { parseArgs } from "node:util";
import { handleHelp, parseOrExit } from "./_script_args.ts";

const USAGE =
  "deno task screenshots: remakes docs/screenshots/*.png (the README's pictures) with the dashboard's browser test";

const ROOT = new URL("..", import.meta.url).pathname;
const DIR = `${ROOT}docs/screenshots`;

/** The pictures README shows (`docs/screenshots/<name>.png`). */
export function readmePictures(readme: string): string[] {
  return [...new Set([...readme.matchAll(/docs\/screenshots\/([\w-]+\.png)/g)].map((m) => m[1]!))]
    .sort();
}

if (import.meta.main) {
  handleHelp(USAGE);
  parseOrExit(USAGE, () => parseArgs({ args: Deno.args, options: {}, strict: true }));
  const started = Date.now();
  const status = await new Deno.Command(Deno.execPath(), {
    args: ["test", "--allow-all", `${ROOT}tests/ui_dashboard_test.ts`],
    env: { AGENT_TELEMETRY_UI_SCREENSHOTS: "docs" },
    stdout: "inherit",
    stderr: "inherit",
  }).spawn().status;
  if (!status.success) {
    console.error("The dashboard's browser test failed: the pictures may be incomplete.");
    Deno.exit(1);
  }
  const pictures = readmePictures(await Deno.readTextFile(`${ROOT}README.md`));
  let stale = 0;
  for (const name of pictures) {
    const info = await Deno.stat(`${DIR}/${name}`).catch(() => null);
    const fresh = info !== null && (info.mtime?.getTime() ?? 0) >= started;
    if (!fresh) stale++;
    console.log(
      `${fresh ? "written" : "NOT WRITTEN"}  docs/screenshots/${name}${
        info ? `  ${Math.round(info.size / 1024)} KB` : ""
      }`,
    );
  }
  if (stale > 0) {
    console.error(`${stale} of README's pictures were not written by the browser test.`);
    Deno.exit(1);
  }
}
