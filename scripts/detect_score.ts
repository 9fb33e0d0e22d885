/**
 * Scores credential detection on labelled corpora and on real benign text:
 *
 *   deno task detect-score [corpus.jsonl …] [--benign-mb N] [--misses N] [--json]
 *
 * A corpus line is either a placed case of our own corpus (`{"name","input",
 * "flags","secrets"?}`, run as it is) or a labelled text (`{"label":"tp"|"fp",
 * "text","family"?,"rule"?,"form"?,"secret"?,"vendor"?}`, such as the gitleaks
 * yardstick `scripts/_detect_yardstick.ts` writes), which is placed twice: in
 * a Bash command (a here-document writing a file) and in a Read result (line
 * numbered, as Claude Code shows a file). A text with a `secret` of a vendor
 * format is also placed standing alone (`printf` of the bare token; a file
 * holding only it). A true positive counts when `credential_detected` is
 * raised; a false alarm when it is raised on a false positive (reported also
 * without the false positives the corpus marks `arguable`). Redaction is
 * checked on every detected secret: no run of 8 of its characters may survive
 * (beyond what the text holds besides the secret, such as a key name that
 * repeats the secret's prefix).
 *
 * Then, unless `--benign-mb 0`, the real-text precision run: text files under
 * `node_modules` (sources and docs of our dependencies) and `/usr/share/doc`
 * (gzip decoded), cut at line ends into Read results of at most 8 KiB, until
 * N MB (default 40) are read; every flag raised there is a false flag.
 *
 * With no corpus argument: `.detect-yardstick/gitleaks.jsonl` when present
 * and `tests/fixtures/detect/corpus.jsonl`.
 *
 * @module
 */

// deno-lint-ignore-file no-console

import { handleHelp } from "./_script_args.ts";
import { type DetectInput, detectToolCall } from "../src/detect/mod.ts";

const root = new URL("..", import.meta.url).pathname;

interface Options {
  corpora: string[];
  benignMb: number;
  misses: number;
  json: boolean;
}

function parseArgs(args: string[]): Options {
  const options: Options = { corpora: [], benignMb: 40, misses: 0, json: false };
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === "--benign-mb") options.benignMb = Number(args[++i]);
    else if (arg === "--misses") options.misses = Number(args[++i]);
    else if (arg === "--json") options.json = true;
    else options.corpora.push(arg);
  }
  if (options.corpora.length === 0) {
    for (const path of [".detect-yardstick/gitleaks.jsonl", "tests/fixtures/detect/corpus.jsonl"]) {
      try {
        Deno.statSync(root + path);
        options.corpora.push(root + path);
      } catch {
        // Not generated here.
      }
    }
  }
  return options;
}

/** A labelled text of an outside corpus. */
interface LabelledText {
  label: "tp" | "fp";
  text: string;
  family?: string;
  rule?: string;
  form?: string;
  secret?: string;
  vendor?: boolean;
  /** Why a false positive is arguable (see `_detect_yardstick.ts`). */
  arguable?: string;
}

/** A case of our own corpus, already placed in a tool call. */
interface PlacedCase {
  name: string;
  input: DetectInput;
  flags: Record<string, string | true>;
  secrets?: string[];
}

type Placement = "bash" | "read" | "alone-bash" | "alone-read";

function placed(text: string, placement: Placement): DetectInput {
  switch (placement) {
    case "bash":
      return {
        toolName: "Bash",
        toolType: "builtin",
        category: "code_exec",
        arguments: JSON.stringify({
          command: `cat > config.txt <<'EOF'\n${text}\nEOF`,
          description: "Write the configuration",
        }),
      };
    case "alone-bash":
      return {
        toolName: "Bash",
        toolType: "builtin",
        category: "code_exec",
        arguments: JSON.stringify({ command: `printf '%s' '${text}' | wc -c` }),
      };
    case "read":
    case "alone-read":
      return {
        toolName: "Read",
        toolType: "builtin",
        category: "file_read",
        arguments: JSON.stringify({ file_path: "/repo/config.txt" }),
        result: text.split("\n").map((line, i) => `${String(i + 1).padStart(6)}\t${line}`)
          .join("\n") + "\n",
      };
  }
}

/** What a placement stores, decoded back to text: redacted, or as given. */
function stored(input: DetectInput, placement: Placement, redacted = true): string {
  const detection = redacted ? detectToolCall(input, { redact: true }) : input;
  if (placement === "bash" || placement === "alone-bash") {
    return (JSON.parse(detection.arguments!) as { command: string }).command;
  }
  return detection.result ?? "";
}

function occurrences(text: string, part: string): number {
  let count = 0;
  for (let at = text.indexOf(part); at >= 0; at = text.indexOf(part, at + 1)) count++;
  return count;
}

/**
 * True when some run of 8 characters of the secret (all of a shorter one)
 * survives redaction: it occurs in the stored text more often than in the
 * original text without the secret, with the redaction markers left out (a
 * key name `CLOJARS_TOKEN` or a marker `[REDACTED:duffel_token]` may repeat
 * the start of a secret without any of it surviving).
 */
function survives(secret: string, text: string, original: string): boolean {
  const kept = text.replace(/\[REDACTED:[a-z0-9_]+\]/g, "\u0000");
  const context = original.replaceAll(secret, "\u0000");
  const run = Math.min(8, secret.length);
  for (let i = 0; i + run <= secret.length; i++) {
    const part = secret.slice(i, i + run);
    if (occurrences(kept, part) > occurrences(context, part)) return true;
  }
  return false;
}

interface Tally {
  n: number;
  hit: number;
}
const tally = (): Tally => ({ n: 0, hit: 0 });
const pct = (t: Tally) => t.n === 0 ? "   —  " : `${((100 * t.hit) / t.n).toFixed(1).padStart(5)}%`;

function flagged(input: DetectInput): string | undefined {
  return detectToolCall(input, { redact: false }).flags.find((flag) =>
    flag.flag === "credential_detected"
  )?.evidence;
}

interface CorpusScore {
  path: string;
  recall: Record<"bash" | "read", Tally>;
  falseAlarms: Record<"bash" | "read", Tally>;
  /** False alarms on the false positives that are not arguable. */
  clearFalseAlarms: Record<"bash" | "read", Tally>;
  alone: Record<"alone-bash" | "alone-read", Tally>;
  aloneContext: Record<"alone-bash" | "alone-read", Tally>;
  redaction: Tally;
  families: Map<string, { tp: Tally; fp: Tally }>;
  forms: Map<string, Tally>;
  misses: string[];
  alarms: string[];
  leaks: string[];
  placedCases?: { tp: number; fp: number; fn: number; errors: string[] };
}

function scoreCorpus(path: string, lines: unknown[], options: Options): CorpusScore {
  const score: CorpusScore = {
    path,
    recall: { bash: tally(), read: tally() },
    falseAlarms: { bash: tally(), read: tally() },
    clearFalseAlarms: { bash: tally(), read: tally() },
    alone: { "alone-bash": tally(), "alone-read": tally() },
    aloneContext: { "alone-bash": tally(), "alone-read": tally() },
    redaction: tally(),
    families: new Map(),
    forms: new Map(),
    misses: [],
    alarms: [],
    leaks: [],
  };
  const aloneSeen = new Set<string>();
  for (const line of lines) {
    if ((line as PlacedCase).input !== undefined) {
      scorePlaced(line as PlacedCase, score);
      continue;
    }
    const entry = line as LabelledText;
    const family = entry.family ?? entry.rule ?? "all";
    let fam = score.families.get(family);
    if (fam === undefined) score.families.set(family, fam = { tp: tally(), fp: tally() });
    for (const placement of ["bash", "read"] as const) {
      const input = placed(entry.text, placement);
      const evidence = flagged(input);
      if (entry.label === "tp") {
        score.recall[placement].n++;
        fam.tp.n++;
        const form = entry.form ?? "literal";
        let forms = score.forms.get(form);
        if (forms === undefined) score.forms.set(form, forms = tally());
        forms.n++;
        if (evidence !== undefined) {
          score.recall[placement].hit++;
          fam.tp.hit++;
          forms.hit++;
          if (entry.secret !== undefined && entry.secret.length >= 8) {
            score.redaction.n++;
            if (
              survives(entry.secret, stored(input, placement), stored(input, placement, false))
            ) {
              score.leaks.push(`${entry.rule} [${placement}] ${evidence}: ${entry.text}`);
            } else score.redaction.hit++;
          }
        } else score.misses.push(`${entry.rule} [${placement}, ${form}]: ${entry.text}`);
      } else {
        score.falseAlarms[placement].n++;
        if (entry.arguable === undefined) score.clearFalseAlarms[placement].n++;
        fam.fp.n++;
        if (evidence !== undefined) {
          score.falseAlarms[placement].hit++;
          if (entry.arguable === undefined) score.clearFalseAlarms[placement].hit++;
          fam.fp.hit++;
          const why = entry.arguable === undefined ? "" : ` (arguable: ${entry.arguable})`;
          score.alarms.push(`${entry.rule} [${placement}] ${evidence}${why}: ${entry.text}`);
        }
      }
    }
    if (entry.label === "tp" && entry.secret !== undefined && !aloneSeen.has(entry.secret)) {
      aloneSeen.add(entry.secret);
      for (const placement of ["alone-bash", "alone-read"] as const) {
        const t = entry.vendor ? score.alone[placement] : score.aloneContext[placement];
        t.n++;
        if (flagged(placed(entry.secret, placement)) !== undefined) t.hit++;
        else if (entry.vendor) score.misses.push(`${entry.rule} [${placement}]: ${entry.secret}`);
      }
    }
  }
  if (options.misses === 0) {
    score.misses = score.misses.slice(0, 0);
  }
  return score;
}

function scorePlaced(entry: PlacedCase, score: CorpusScore): void {
  const placedCases = score.placedCases ??= { tp: 0, fp: 0, fn: 0, errors: [] };
  const expected = entry.flags["credential_detected"];
  const actual = flagged(entry.input);
  if (expected !== undefined && actual !== undefined) {
    if (expected === true || expected === actual) placedCases.tp++;
    else {
      placedCases.fp++;
      placedCases.fn++;
      placedCases.errors.push(`${entry.name}: evidence ${actual}, expected ${expected}`);
    }
  } else if (expected !== undefined) {
    placedCases.fn++;
    placedCases.errors.push(`${entry.name}: missed (expected ${expected})`);
  } else if (actual !== undefined) {
    placedCases.fp++;
    placedCases.errors.push(`${entry.name}: unexpected ${actual}`);
  }
  if (entry.secrets !== undefined && actual !== undefined) {
    const detection = detectToolCall(entry.input, { redact: true });
    const texts = [
      detection.arguments ?? "",
      detection.result ?? "",
      ...Object.values(detection.texts ?? {}),
    ]
      .join("\n");
    for (const secret of entry.secrets) {
      score.redaction.n++;
      if (texts.includes(secret)) score.leaks.push(`${entry.name}: ${secret.slice(0, 4)}…`);
      else score.redaction.hit++;
    }
  }
}

// --- Real benign text -----------------------------------------------------------

const TEXT_FILE =
  /\.(?:js|mjs|cjs|ts|mts|cts|d\.ts|md|markdown|txt|json|yml|yaml|toml|html|css|map|c|h|py|rst|sh)$|(?:^|\/)(?:README|CHANGELOG|LICENSE|copyright|NEWS|changelog|TODO|AUTHORS)[^/]*$/i;
const CHUNK = 8192;

async function* benignFiles(): AsyncGenerator<string> {
  for (const dir of [`${root}node_modules`, "/usr/share/doc"]) {
    const stack = [dir];
    while (stack.length > 0) {
      const current = stack.pop()!;
      let entries: Deno.DirEntry[];
      try {
        entries = [...Deno.readDirSync(current)].sort((a, b) => a.name.localeCompare(b.name));
      } catch {
        continue;
      }
      for (const entry of entries.reverse()) {
        const path = `${current}/${entry.name}`;
        if (entry.isDirectory) stack.push(path);
        else if (entry.isFile && (TEXT_FILE.test(path.replace(/\.gz$/, "")))) yield path;
      }
    }
  }
}

async function readText(path: string): Promise<string | undefined> {
  try {
    let bytes = await Deno.readFile(path);
    if (path.endsWith(".gz")) {
      const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
      bytes = new Uint8Array(await new Response(stream).arrayBuffer());
    }
    if (bytes.includes(0)) return undefined;
    return new TextDecoder().decode(bytes);
  } catch {
    return undefined;
  }
}

interface BenignScore {
  files: number;
  bytes: number;
  chunks: number;
  flags: { evidence: string; file: string; line: string }[];
  microsPerChunk: number;
}

async function scoreBenign(limitMb: number): Promise<BenignScore> {
  const score: BenignScore = { files: 0, bytes: 0, chunks: 0, flags: [], microsPerChunk: 0 };
  const limit = limitMb * 1_000_000;
  let spent = 0;
  for await (const path of benignFiles()) {
    if (score.bytes >= limit) break;
    const text = await readText(path);
    if (text === undefined || text.length === 0) continue;
    score.files++;
    // Minified bundles and source maps are single huge lines: cut them anyway.
    for (let at = 0; at < text.length && score.bytes < limit;) {
      let end = Math.min(text.length, at + CHUNK);
      const newline = text.lastIndexOf("\n", end);
      if (end < text.length && newline > at) end = newline + 1;
      const chunk = text.slice(at, end);
      at = end;
      score.chunks++;
      score.bytes += new TextEncoder().encode(chunk).length;
      const started = performance.now();
      const detection = detectToolCall({
        toolName: "Read",
        toolType: "builtin",
        category: "file_read",
        arguments: JSON.stringify({ file_path: path }),
        result: chunk,
      }, { redact: true });
      spent += performance.now() - started;
      for (const flag of detection.flags) {
        const secretAt = detection.result?.indexOf("[REDACTED:") ?? -1;
        const line = secretAt < 0 ? "" : detection.result!.slice(
          Math.max(0, detection.result!.lastIndexOf("\n", secretAt) + 1),
          secretAt + 60,
        );
        score.flags.push({ evidence: `${flag.flag} ${flag.evidence}`, file: path, line });
      }
    }
  }
  score.microsPerChunk = (spent * 1000) / Math.max(1, score.chunks);
  return score;
}

// --- Report ---------------------------------------------------------------------

handleHelp(
  `deno task detect-score [CORPUS.jsonl …] [--benign-mb N] [--misses N] [--json]
Scores credential detection on labelled JSONL corpora (default: the generated yardstick and
tests/fixtures/detect/corpus.jsonl) and counts false flags per 10 MB of benign text (DETECTION.md).`,
);
const options = parseArgs(Deno.args);
const results: CorpusScore[] = [];
for (const path of options.corpora) {
  const lines = (await Deno.readTextFile(path)).split("\n").filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line));
  results.push(scoreCorpus(path, lines, options));
}
const benign = options.benignMb > 0 ? await scoreBenign(options.benignMb) : undefined;

if (options.json) {
  console.log(JSON.stringify({
    corpora: results.map((r) => ({
      path: r.path,
      recall: r.recall,
      falseAlarms: r.falseAlarms,
      clearFalseAlarms: r.clearFalseAlarms,
      alone: r.alone,
      aloneContext: r.aloneContext,
      redaction: r.redaction,
      placedCases: r.placedCases && { ...r.placedCases, errors: undefined },
    })),
    benign: benign && { ...benign, flags: benign.flags.length },
  }));
  Deno.exit(0);
}

for (const r of results) {
  console.log(`\n== ${r.path.replace(root, "")}`);
  if (r.placedCases !== undefined) {
    const { tp, fp, fn, errors } = r.placedCases;
    console.log(
      `placed cases: credential precision ${(tp / Math.max(1, tp + fp)).toFixed(4)}, recall ${
        (tp / Math.max(1, tp + fn)).toFixed(4)
      } (tp ${tp}, fp ${fp}, fn ${fn})`,
    );
    for (const error of errors.slice(0, options.misses || 20)) console.log(`  ${error}`);
  }
  if (r.recall.bash.n > 0) {
    console.log(
      `recall        bash ${pct(r.recall.bash)}  read ${
        pct(r.recall.read)
      }  (${r.recall.bash.n} true positives each)`,
    );
    console.log(
      `false alarms  bash ${pct(r.falseAlarms.bash)}  read ${
        pct(r.falseAlarms.read)
      }  (${r.falseAlarms.bash.n} false positives each)`,
    );
    const arguable = r.falseAlarms.bash.n - r.clearFalseAlarms.bash.n;
    if (arguable > 0) {
      console.log(
        `  without the ${arguable} arguable ones  bash ${pct(r.clearFalseAlarms.bash)}  read ${
          pct(r.clearFalseAlarms.read)
        }  (${r.clearFalseAlarms.bash.n} each)`,
      );
    }
    console.log(
      `alone, vendor formats   bash ${pct(r.alone["alone-bash"])}  read ${
        pct(r.alone["alone-read"])
      }  (${r.alone["alone-bash"].n} distinct secrets)`,
    );
    console.log(
      `alone, keyword-only formats (not a target)  bash ${
        pct(r.aloneContext["alone-bash"])
      }  read ${pct(r.aloneContext["alone-read"])}  (${r.aloneContext["alone-bash"].n})`,
    );
    const forms = [...r.forms].filter(([, t]) => t.hit < t.n).sort((a, b) =>
      a[1].hit / a[1].n - b[1].hit / b[1].n
    );
    if (forms.length > 0) {
      console.log("recall by form, both placements (forms below 100%):");
      for (const [form, t] of forms) console.log(`  ${pct(t)}  ${form} (${t.n})`);
    }
    const families = [...r.families].filter(([, f]) => f.tp.hit < f.tp.n || f.fp.hit > 0)
      .sort((a, b) => (a[1].tp.hit - a[1].tp.n) - (b[1].tp.hit - b[1].tp.n));
    console.log(
      `families: ${r.families.size}, ${families.length} below 100% recall or with a false alarm:`,
    );
    for (const [family, f] of families) {
      console.log(
        `  ${family.padEnd(24)} recall ${pct(f.tp)} of ${
          String(f.tp.n).padStart(4)
        }  false alarms ${f.fp.hit}/${f.fp.n}`,
      );
    }
  }
  console.log(
    `redaction: ${r.redaction.hit}/${r.redaction.n} detected secrets removed whole${
      r.leaks.length > 0 ? "; leaks:" : ""
    }`,
  );
  for (const leak of r.leaks.slice(0, 10)) console.log(`  ${leak.slice(0, 200)}`);
  if (options.misses > 0) {
    console.log(`misses (${r.misses.length}):`);
    for (const miss of r.misses.slice(0, options.misses)) {
      console.log(`  ${miss.replaceAll("\n", "⏎").slice(0, 220)}`);
    }
    console.log(`false alarms (${r.alarms.length}):`);
    for (const alarm of r.alarms.slice(0, options.misses)) {
      console.log(`  ${alarm.replaceAll("\n", "⏎").slice(0, 220)}`);
    }
  }
}

if (benign !== undefined) {
  const mb = benign.bytes / 1_000_000;
  console.log(
    `\n== benign text: ${
      mb.toFixed(1)
    } MB read (${benign.files} files, ${benign.chunks} Read results of ≤ ${
      CHUNK / 1024
    } KiB) from node_modules and /usr/share/doc`,
  );
  console.log(
    `false flags: ${benign.flags.length} (${
      ((benign.flags.length * 10) / mb).toFixed(2)
    } per 10 MB); ${benign.microsPerChunk.toFixed(1)} µs per Read result`,
  );
  for (const flag of benign.flags.slice(0, options.misses || 30)) {
    console.log(
      `  ${flag.evidence}  ${flag.file.replace(root, "")}  ${
        flag.line.replaceAll("\n", " ").slice(0, 120)
      }`,
    );
  }
}
