/**
 * The shape of the product as data, checked against its import graph (issue
 * #19): `main.ts → cli → server → {api, analytics, ingest, store} → {http,
 * detect}`, nothing imports upward, no import cycle (type-only ones count:
 * they tie modules together as much for a reader), the product never imports
 * `scripts/` or `tests/`, the store never imports ingest (both stand on
 * `model`), and the store's engine-neutral modules import no engine.
 *
 * The graph is read from the source text of `main.ts` and `src/**`: static
 * imports and re-exports, dynamic `import("…")`, and modules named by
 * `new URL("….ts", import.meta.url)` (workers).
 */
import assert from "node:assert/strict";

const ROOT = new URL("..", import.meta.url).pathname;

/**
 * Layer → the layers its modules may import (its own is always allowed).
 * `shared` is the top level of `src/` (errors, log, time, round, version,
 * config): small leaves anyone may use. `ui` is the dashboard's static
 * assets, served by the server. Within the middle tier the order is
 * api → analytics → store: the insight routes (api) run the analytics
 * engine, which reads the store. The store and ingest both stand on `model`,
 * the domain types (events, metric points, unmapped records, text sizes):
 * ingest produces them, the store writes them, and neither imports the other.
 */
const LAYERS: Readonly<Record<string, readonly string[]>> = {
  main: ["cli"],
  cli: [
    "server",
    "demo",
    "api",
    "analytics",
    "ingest",
    "store",
    "model",
    "http",
    "detect",
    "shared",
  ],
  server: ["api", "analytics", "ingest", "store", "model", "ui", "http", "detect", "shared"],
  demo: ["shared"],
  ui: ["http", "shared"],
  api: ["analytics", "store", "model", "http", "detect", "shared"],
  analytics: ["store", "model", "http", "detect", "shared"],
  store: ["model", "http", "detect", "shared"],
  ingest: ["model", "http", "detect", "shared"],
  model: ["shared"],
  http: ["shared"],
  detect: ["shared"],
  shared: [],
};

/** The store's engine folders: what only the modules that open an engine may import. */
const STORE_ENGINES = ["src/store/sqlite/", "src/store/postgres/"];

/** Store modules outside the engine folders that open (choose) an engine. */
const STORE_ENGINE_OPENERS = ["src/store/open_stores.ts"];

/**
 * Modules whose upward imports are known and pending a move (none now). The
 * layer test fails when an entry here has no upward import left: delete it.
 */
const OPEN_UPWARD: readonly string[] = [];

/** One import of one module. */
interface ImportEdge {
  from: string;
  to: string;
  kind: "static" | "type" | "dynamic" | "worker";
}

const STATIC_IMPORT =
  /^[ \t]*(?:import|export)[ \t]+(type[ \t]+)?(\{[^}]*\}|\*(?:\s+as\s+\w+)?|\w+(?:\s*,\s*(?:\{[^}]*\}|\*\s+as\s+\w+))?)\s*from\s*["']([^"']+)["']/gm;
const BARE_IMPORT = /^[ \t]*import\s*["']([^"']+)["']/gm;
const DYNAMIC_IMPORT = /\bimport\(\s*["']([^"']+)["']\s*\)/g;
const MODULE_URL = /new\s+URL\(\s*["']([^"']+\.ts)["']\s*,\s*import\.meta\.url\s*\)/g;

/** The relative imports of one module's source, resolved to paths from the repository root. */
function importsOf(path: string, source: string): ImportEdge[] {
  const edges: ImportEdge[] = [];
  const add = (specifier: string, kind: ImportEdge["kind"]) => {
    if (!specifier.startsWith(".")) return;
    const to = new URL(specifier, `file:///${path}`).pathname.slice(1);
    edges.push({ from: path, to, kind });
  };
  for (const [, typeKeyword, clause, specifier] of source.matchAll(STATIC_IMPORT)) {
    add(specifier!, typeKeyword !== undefined || onlyTypes(clause!) ? "type" : "static");
  }
  for (const [, specifier] of source.matchAll(BARE_IMPORT)) add(specifier!, "static");
  for (const [, specifier] of source.matchAll(DYNAMIC_IMPORT)) add(specifier!, "dynamic");
  for (const [, specifier] of source.matchAll(MODULE_URL)) add(specifier!, "worker");
  return edges;
}

/** Whether an import clause names types only: `{ type A, type B }`. */
function onlyTypes(clause: string): boolean {
  if (!clause.startsWith("{")) return false;
  const names = clause.slice(1, -1).split(",").map((name) => name.trim()).filter((n) => n);
  return names.length > 0 && names.every((name) => name.startsWith("type "));
}

/** The layer of a module, by its folder (see {@link LAYERS}). */
function layerOf(path: string): string {
  if (path === "main.ts") return "main";
  const parts = path.split("/");
  if (parts[0] !== "src") return parts[0]!;
  return parts.length === 2 ? "shared" : parts[1]!;
}

/** Strongly connected components with more than one module, or a module importing itself. */
function cyclesOf(edges: readonly ImportEdge[]): string[][] {
  const next = new Map<string, string[]>();
  for (const { from, to } of edges) {
    if (!next.has(to)) next.set(to, []);
    next.set(from, [...(next.get(from) ?? []), to]);
  }
  // Tarjan's algorithm, iterative so a deep graph cannot overflow the stack.
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];
  let counter = 0;
  for (const start of [...next.keys()].sort()) {
    if (index.has(start)) continue;
    const work: { node: string; child: number }[] = [{ node: start, child: 0 }];
    index.set(start, counter);
    low.set(start, counter++);
    stack.push(start);
    onStack.add(start);
    while (work.length > 0) {
      const frame = work[work.length - 1]!;
      const children = next.get(frame.node)!;
      if (frame.child < children.length) {
        const child = children[frame.child++]!;
        if (!index.has(child)) {
          index.set(child, counter);
          low.set(child, counter++);
          stack.push(child);
          onStack.add(child);
          work.push({ node: child, child: 0 });
        } else if (onStack.has(child)) {
          low.set(frame.node, Math.min(low.get(frame.node)!, index.get(child)!));
        }
        continue;
      }
      work.pop();
      const parent = work[work.length - 1];
      if (parent) low.set(parent.node, Math.min(low.get(parent.node)!, low.get(frame.node)!));
      if (low.get(frame.node) !== index.get(frame.node)) continue;
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== frame.node);
      const selfLoop = children.includes(frame.node);
      if (component.length > 1 || selfLoop) components.push(component.sort());
    }
  }
  return components;
}

async function productModules(): Promise<string[]> {
  const paths = ["main.ts"];
  const walk = async (dir: string) => {
    for await (const entry of Deno.readDir(`${ROOT}${dir}`)) {
      const path = `${dir}/${entry.name}`;
      if (entry.isDirectory) await walk(path);
      else if (path.endsWith(".ts") && !path.endsWith("_test.ts")) paths.push(path);
    }
  };
  await walk("src");
  return paths.sort();
}

async function productGraph(): Promise<{ modules: string[]; edges: ImportEdge[] }> {
  const modules = await productModules();
  const edges: ImportEdge[] = [];
  for (const path of modules) {
    edges.push(...importsOf(path, await Deno.readTextFile(`${ROOT}${path}`)));
  }
  return { modules, edges };
}

const describe = (edge: ImportEdge) => `${edge.from} → ${edge.to} (${edge.kind})`;

Deno.test("the import reader finds static, type-only, dynamic, re-export and worker imports", () => {
  const source = [
    `import { a } from "./a.ts";`,
    `import type { B } from "../b/b.ts";`,
    `import {\n  type C,\n  type D,\n} from "./c.ts";`,
    `import { type E, f } from "./e.ts";`,
    `export { g } from "./g.ts";`,
    `import * as h from "./h.ts";`,
    `import "./side.ts";`,
    `import sql from "../../sql/x.sql" with { type: "text" };`,
    `import { z } from "zod";`,
    `const m = await import("./lazy.ts");`,
    `new Worker(new URL("./worker.ts", import.meta.url), { type: "module" });`,
    ` * import { notCode } from "./comment.ts";`,
  ].join("\n");
  const found = importsOf("src/x/y.ts", source).map((e) => `${e.to} ${e.kind}`).sort();
  assert.deepEqual(
    found,
    [
      "src/b/b.ts type",
      "src/x/a.ts static",
      "src/x/c.ts type",
      "src/x/e.ts static",
      "src/x/g.ts static",
      "src/x/h.ts static",
      "src/x/lazy.ts dynamic",
      "src/x/side.ts static",
      "src/x/worker.ts worker",
      "sql/x.sql static",
    ].sort(),
  );
});

Deno.test("the cycle finder reports a type-only ring and a self-import, not a diamond", () => {
  const edge = (from: string, to: string): ImportEdge => ({ from, to, kind: "type" });
  const cycles = cyclesOf([
    edge("a", "b"),
    edge("b", "c"),
    edge("c", "a"),
    edge("d", "e"),
    edge("d", "f"),
    edge("e", "g"),
    edge("f", "g"),
    edge("s", "s"),
  ]);
  assert.deepEqual(cycles.sort(), [["a", "b", "c"], ["s"]]);
});

Deno.test("the product has no import cycle, runtime or type-only", async () => {
  const { edges } = await productGraph();
  const modules = edges.filter((edge) => edge.to.endsWith(".ts"));
  const cycles = cyclesOf(modules).map((cycle) =>
    modules.filter((e) => cycle.includes(e.from) && cycle.includes(e.to)).map(describe)
  );
  assert.deepEqual(cycles, []);
});

Deno.test("no module imports a layer above its own", async () => {
  const { modules, edges } = await productGraph();
  for (const path of modules) {
    assert.ok(layerOf(path) in LAYERS, `${path}: folder missing from the layer table`);
  }
  const upward = edges.filter((edge) => {
    if (!edge.to.endsWith(".ts")) return false;
    const from = layerOf(edge.from);
    const to = layerOf(edge.to);
    return from !== to && !(LAYERS[from] ?? []).includes(to);
  });
  assert.deepEqual(upward.filter((edge) => !OPEN_UPWARD.includes(edge.from)).map(describe), []);
  const settled = OPEN_UPWARD.filter((path) => !upward.some((edge) => edge.from === path));
  assert.deepEqual(settled, [], "no upward import left: delete these from OPEN_UPWARD");
});

Deno.test("the store never imports ingest, and the model only shared leaves", async () => {
  const { edges } = await productGraph();
  const wrong = edges.filter((edge) =>
    (edge.from.startsWith("src/store/") && edge.to.startsWith("src/ingest/")) ||
    (edge.from.startsWith("src/model/") && edge.to.startsWith("src/") &&
      layerOf(edge.to) !== "model" && layerOf(edge.to) !== "shared")
  );
  assert.deepEqual(wrong.map(describe), []);
});

Deno.test("the product imports nothing from scripts/ or tests/", async () => {
  const { edges } = await productGraph();
  const outside = edges.filter((e) => e.to.startsWith("scripts/") || e.to.startsWith("tests/"));
  assert.deepEqual(outside.map(describe), []);
});

Deno.test("the store's engine-neutral modules import no engine", async () => {
  const { edges } = await productGraph();
  const inEngine = (path: string) => STORE_ENGINES.some((folder) => path.startsWith(folder));
  const wrong = edges.filter((edge) =>
    edge.from.startsWith("src/store/") && !inEngine(edge.from) &&
    !STORE_ENGINE_OPENERS.includes(edge.from) && inEngine(edge.to)
  );
  assert.deepEqual(wrong.map(describe), []);
});
