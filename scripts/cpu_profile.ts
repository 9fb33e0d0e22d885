/**
 * Takes a CPU profile of a running server's main thread through the V8
 * inspector and prints where its time went: self time by function and by
 * file, idle included. Start the server with `--inspect=127.0.0.1:9229` (the
 * bench does with `BENCH_SERVER_INSPECT=127.0.0.1:9229`), put load on it, and
 * run `deno run -A scripts/cpu_profile.ts [--inspect 127.0.0.1:9229]
 * [--seconds 10] [--top 35] [--out FILE.cpuprofile]`. Loopback only.
 *
 * @module
 */
import { parseArgs } from "node:util";
import { handleHelp, parseOrExit } from "./_script_args.ts";

const HELP =
  `deno run -A scripts/cpu_profile.ts [--inspect HOST:PORT] [--seconds N] [--top N] [--out FILE]
Profiles the main thread of a server started with --inspect=HOST:PORT (default 127.0.0.1:9229) for
N seconds (default 10) and prints its self time by function and by file; --out keeps the profile.`;

handleHelp(HELP);
const { values } = parseOrExit(HELP, () =>
  parseArgs({
    args: Deno.args,
    options: {
      inspect: { type: "string", default: "127.0.0.1:9229" },
      seconds: { type: "string", default: "10" },
      top: { type: "string", default: "35" },
      out: { type: "string" },
    },
  }));
const print = (line: string) => {
  // deno-lint-ignore no-console
  console.log(line);
};
const seconds = Number(values.seconds);
const top = Number(values.top);
if (!(seconds > 0 && seconds <= 600) || !Number.isInteger(top) || top < 1) {
  // deno-lint-ignore no-console
  console.error(`--seconds must be 0 to 600 and --top a whole number\n${HELP}`);
  Deno.exit(2);
}
if (!/^(127\.0\.0\.1|localhost|\[::1\]):\d+$/.test(values.inspect)) {
  // deno-lint-ignore no-console
  console.error(`--inspect must be a loopback HOST:PORT\n${HELP}`);
  Deno.exit(2);
}

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const targets = await (await fetch(`http://${values.inspect}/json/list`)).json() as {
  webSocketDebuggerUrl: string;
}[];
const socket = new WebSocket(targets[0]!.webSocketDebuggerUrl);
const answers = new Map<number, (result: unknown) => void>();
let lastId = 0;
socket.onmessage = (message) => {
  const data = JSON.parse(message.data);
  answers.get(data.id)?.(data.result ?? data.error);
  answers.delete(data.id);
};
await new Promise((resolve) => socket.onopen = resolve);
const call = (method: string, params: unknown = {}) =>
  new Promise<unknown>((resolve) => {
    const id = ++lastId;
    answers.set(id, resolve);
    socket.send(JSON.stringify({ id, method, params }));
  });

await call("Profiler.enable");
await call("Profiler.setSamplingInterval", { interval: 100 });
await call("Profiler.start");
await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
const { profile } = await call("Profiler.stop") as { profile: Profile };
socket.close();
if (values.out) await Deno.writeTextFile(values.out, JSON.stringify(profile));

const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
const byFunction = new Map<string, number>();
const byFile = new Map<string, number>();
let total = 0;
profile.samples.forEach((nodeId, i) => {
  const frame = nodes.get(nodeId)!.callFrame;
  const micros = profile.timeDeltas[i] ?? 0;
  const file = frame.url.replace(/^.*\/(src|node_modules|ext)\//, "$1/") ||
    frame.functionName;
  const name = `${frame.functionName || "(anonymous)"} ${file}:${frame.lineNumber + 1}`;
  byFunction.set(name, (byFunction.get(name) ?? 0) + micros);
  byFile.set(file, (byFile.get(file) ?? 0) + micros);
  total += micros;
});
const share = (micros: number) => `${((micros / total) * 100).toFixed(1).padStart(5)}%`;
print(`${(total / 1000).toFixed(0)} ms sampled on the main thread`);
for (const [name, micros] of [...byFunction].sort((a, b) => b[1] - a[1]).slice(0, top)) {
  print(`${share(micros)}  ${name}`);
}
print("by file:");
for (const [file, micros] of [...byFile].sort((a, b) => b[1] - a[1]).slice(0, 20)) {
  print(`${share(micros)}  ${file}`);
}
