/**
 * Writes `deno.product.jsonc` and `deno.product.lock`: the config `deno task demo`, `start` and
 * `cli` run with, so that a fresh clone fetches the product's npm packages and nothing else.
 *
 * - Deno caches every package of the lockfile in effect before it runs anything (`deno run`
 *   fetches the lockfile's whole npm snapshot whatever the module graph needs, with or without a
 *   `node_modules` folder, in a workspace too), and `deno task` first installs every package of
 *   the config's import map when `nodeModulesDir` is `"auto"` or `"none"`. So the project's
 *   `deno.json` keeps every import (the tests', the benchmark's) with `nodeModulesDir: "manual"`,
 *   and the product runs with a config of its own: the import map entries the module graph of
 *   `main.ts` and its workers reaches, and `deno.lock` cut down to them (same versions, same
 *   integrities, frozen), read from the global cache (`nodeModulesDir: "none"`).
 * - Both files are derived, never edited: `tests/product_packages_test.ts` fails while they differ
 *   from what this script writes, e.g. after a package was bumped in `deno.json` and `deno.lock`.
 *
 * Usage: `deno run -A scripts/product_packages.ts`.
 *
 * @module
 */
// deno-lint-ignore-file no-console
import { parseArgs } from "node:util";
import { handleHelp, parseOrExit } from "./_script_args.ts";
import { importsFor, lockSubset, programGraph } from "./release.ts";

const ROOT = new URL("..", import.meta.url).pathname.replace(/\/$/, "");

/** The product's config and lockfile, relative to the repository root. */
export const PRODUCT_CONFIG = "deno.product.jsonc";
export const PRODUCT_LOCK = "deno.product.lock";

const USAGE = `deno run -A scripts/product_packages.ts
Writes ${PRODUCT_CONFIG} and ${PRODUCT_LOCK} (the npm packages main.ts's module graph reaches,
locked as deno.lock locks them) from deno.json, deno.lock and the program's sources.`;

/** The two files' texts as this checkout's sources, `deno.json` and `deno.lock` make them. */
export async function productFiles(
  root = ROOT,
): Promise<{ config: string; lock: string; imports: Record<string, string> }> {
  const graph = await programGraph(root);
  const project = JSON.parse(await Deno.readTextFile(`${root}/deno.json`));
  const imports = importsFor(project.imports, graph.bareSpecifiers);
  const lock = lockSubset(
    JSON.parse(await Deno.readTextFile(`${root}/deno.lock`)),
    Object.values(imports),
  );
  const config = {
    nodeModulesDir: "none",
    imports,
    lock: { path: `./${PRODUCT_LOCK}`, frozen: true },
  };
  const header = [
    "// The config `deno task demo`, `start` and `cli` run with: the npm packages main.ts's module",
    "// graph reaches, nothing the tests or tools import. Written by scripts/product_packages.ts",
    "// from deno.json, deno.lock and the sources; tests/product_packages_test.ts checks it.",
  ].join("\n");
  return {
    config: `${header}\n${JSON.stringify(config, null, 2)}\n`,
    lock: JSON.stringify(lock, null, 2) + "\n",
    imports,
  };
}

if (import.meta.main) {
  handleHelp(USAGE);
  parseOrExit(USAGE, () => parseArgs({ args: Deno.args, options: {}, strict: true }));
  const files = await productFiles();
  await Deno.writeTextFile(`${ROOT}/${PRODUCT_CONFIG}`, files.config);
  await Deno.writeTextFile(`${ROOT}/${PRODUCT_LOCK}`, files.lock);
  console.log(
    `wrote ${PRODUCT_CONFIG} and ${PRODUCT_LOCK}: ${Object.keys(files.imports).join(", ")}`,
  );
}
