/**
 * Comments and documents cite the project's own docs (issue #29): a citation
 * `docs/<file>.md §N` (also `§N–M`, `§N, §M`, `§N and §M`, and a quoted row
 * or heading after it, `§6.2 "Token counts"`) must name a file in `docs/`
 * with a heading numbered N (and hold the quoted text), and nothing may cite
 * the design notes or the API specification this project was started from,
 * which a clone does not have. Inside `docs/*.md` a bare `§N` is a section of
 * the same file; anywhere else a `§` must belong to a `docs/…` citation.
 *
 * Read: the product, SQL, scripts, tests (not the recorded fixtures, which
 * are data) and every Markdown file of the repository.
 */
import assert from "node:assert/strict";

const ROOT = new URL("..", import.meta.url).pathname;
const SELF = "tests/docs_links_test.ts";

/** Folders read (recursively) and the file endings read there. */
const FOLDERS = ["src", "sql", "scripts", "tests", "docs", "deploy", ".ci"];
const TEXT_FILE = /\.(?:ts|js|sql|md|sh|service)$|^\.ci\/run$/;
/** Recorded payloads and corpora: data, not prose (their Markdown is read). */
const DATA_FOLDERS = ["tests/fixtures/"];
const SKIPPED_FOLDERS = new Set(["node_modules", ".git", "dist", "data", ".bench", ".agents"]);

/** What cites a file outside the repository: the old design notes and spec, the shared folder. */
const OUTSIDE = [
  { pattern: /\bDESIGN\b/, what: "DESIGN (use docs/design.md)" },
  { pattern: /\bspec(?:ification)? §/i, what: "a spec section (use docs/api.md §N)" },
  { pattern: /telemetry-query-api(?:\.md)?/, what: "the spec file (use docs/api.md)" },
  { pattern: /\/work\/shared\b|\.\.\/shared\//, what: "a path outside the repository" },
];

const NUMBER = String.raw`\d+(?:\.\d+)*`;
/** A section or a range of sections: `4.2`, `4.8–4.14`. */
const SECTION = String.raw`§(${NUMBER})(?:[–-](${NUMBER}))?`;
/** `docs/api.md §4.2`, `[docs/api.md](api.md) §4.2`, `` `docs/api.md` §4.2 ``, then more sections. */
const CITATION = new RegExp(
  String.raw`docs/([\w.-]+\.md)` + "`?" + String.raw`(?:\]\([^)\s]*\))?\s+` +
    String.raw`(${SECTION}(?:(?:,\s*|\s+and\s+|\s+or\s+)${SECTION})*)` +
    String.raw`(?:\s+"([^"\n]+)")?`,
  "g",
);
const SECTION_GLOBAL = new RegExp(SECTION, "g");
const HEADING = new RegExp(String.raw`^#{1,6}\s+(${NUMBER})\.?\s`, "gm");
/** A mention of a docs file, cited by section or not. */
const DOCS_FILE = /(?<![\w./-])docs\/([A-Za-z][\w.-]*\.md)\b/g;

interface Problem {
  file: string;
  line: number;
  problem: string;
}

async function repositoryFiles(): Promise<string[]> {
  const files: string[] = [];
  for await (const entry of Deno.readDir(ROOT)) {
    if (entry.isFile && entry.name.endsWith(".md")) files.push(entry.name);
  }
  const walk = async (dir: string): Promise<void> => {
    for await (const entry of Deno.readDir(`${ROOT}${dir}`)) {
      const path = `${dir}/${entry.name}`;
      if (entry.isDirectory) {
        if (!SKIPPED_FOLDERS.has(entry.name)) await walk(path);
      } else if (entry.isFile && TEXT_FILE.test(path)) {
        const data = DATA_FOLDERS.some((folder) => path.startsWith(folder));
        if (!data || path.endsWith(".md")) files.push(path);
      }
    }
  };
  for (const folder of FOLDERS) {
    try {
      await walk(folder);
    } catch (error) {
      if (!(error instanceof Deno.errors.NotFound)) throw error;
    }
  }
  return files.filter((file) => file !== SELF).sort();
}

/** The section numbers of a Markdown text's headings. */
function headingNumbers(text: string): Set<string> {
  return new Set([...text.matchAll(HEADING)].map((match) => match[1]!));
}

/** Each docs file's text and heading numbers. */
async function docsIndex(): Promise<Map<string, { text: string; sections: Set<string> }>> {
  const index = new Map<string, { text: string; sections: Set<string> }>();
  for await (const entry of Deno.readDir(`${ROOT}docs`)) {
    if (!entry.isFile || !entry.name.endsWith(".md")) continue;
    const text = await Deno.readTextFile(`${ROOT}docs/${entry.name}`);
    index.set(entry.name, { text, sections: headingNumbers(text) });
  }
  return index;
}

function lineOf(text: string, offset: number): number {
  let line = 1;
  for (let i = 0; i < offset; i++) if (text.charCodeAt(i) === 10) line++;
  return line;
}

/** The problems of one file's citations. */
export function citationProblems(
  file: string,
  text: string,
  docs: ReadonlyMap<string, { text: string; sections: ReadonlySet<string> }>,
): Problem[] {
  const problems: Problem[] = [];
  const report = (offset: number, problem: string) =>
    problems.push({ file, line: lineOf(text, offset), problem });

  for (const { pattern, what } of OUTSIDE) {
    for (const match of text.matchAll(new RegExp(pattern.source, pattern.flags + "g"))) {
      report(match.index, `cites ${what}: "${match[0]}"`);
    }
  }
  for (const match of text.matchAll(DOCS_FILE)) {
    if (!docs.has(match[1]!)) report(match.index, `names docs/${match[1]}, which does not exist`);
  }

  /** Offsets of the `§` signs that belong to a citation of a named file. */
  const cited = new Set<number>();
  for (const match of text.matchAll(CITATION)) {
    const [whole, name, sections, , , , , quoted] = match;
    const doc = docs.get(name!);
    const start = match.index + whole.indexOf(sections!);
    for (const section of sections!.matchAll(SECTION_GLOBAL)) {
      cited.add(start + section.index);
      if (doc === undefined) continue;
      for (const number of [section[1], section[2]]) {
        if (number !== undefined && !doc.sections.has(number)) {
          report(match.index, `cites docs/${name} §${number}, which has no such heading`);
        }
      }
    }
    if (doc !== undefined && quoted !== undefined && !doc.text.includes(quoted)) {
      report(match.index, `cites docs/${name} ${sections} "${quoted}", which it does not hold`);
    }
  }

  // A bare `§N`: a section of this file in docs/, else a citation that names no file.
  const own = file.startsWith("docs/") ? docs.get(file.slice("docs/".length)) : undefined;
  for (const match of text.matchAll(SECTION_GLOBAL)) {
    if (cited.has(match.index)) continue;
    if (own === undefined) {
      report(match.index, `cites "${match[0]}" without naming its docs/… file`);
      continue;
    }
    for (const number of [match[1], match[2]]) {
      if (number !== undefined && !own.sections.has(number)) {
        report(match.index, `cites §${number} of this file, which has no such heading`);
      }
    }
  }
  return problems;
}

Deno.test("every docs/… § citation in the repository names a heading of that file", async () => {
  const docs = await docsIndex();
  assert.ok(docs.has("api.md") && docs.has("design.md") && docs.has("ingest-mapping.md"));
  const problems: Problem[] = [];
  let citations = 0;
  for (const file of await repositoryFiles()) {
    const text = await Deno.readTextFile(`${ROOT}${file}`);
    citations += [...text.matchAll(CITATION)].length;
    problems.push(...citationProblems(file, text, docs));
  }
  assert.deepEqual(
    problems.map(({ file, line, problem }) => `${file}:${line}: ${problem}`),
    [],
  );
  // The comments do cite the docs: a walk that read nothing would pass too.
  assert.ok(citations > 50, `only ${citations} citations found`);
});

Deno.test("the citation check refuses what it should", () => {
  const docs = new Map([
    ["api.md", { text: "## 4.2 GET /v1/sessions\n", sections: new Set(["4", "4.2"]) }],
  ]);
  const problems = (file: string, text: string) =>
    citationProblems(file, text, docs).map(({ problem }) => problem);
  assert.deepEqual(problems("src/a.ts", "// docs/api.md §4.2 and §4"), []);
  assert.deepEqual(problems("src/a.ts", "// [`docs/api.md`](api.md) §4.2–4"), []);
  assert.deepEqual(problems("src/a.ts", '// docs/api.md §4.2 "GET /v1/sessions"'), []);
  assert.deepEqual(problems("src/a.ts", "// docs/api.md §4.3"), [
    "cites docs/api.md §4.3, which has no such heading",
  ]);
  assert.deepEqual(problems("src/a.ts", "// docs/api.md §4.2, §9"), [
    "cites docs/api.md §9, which has no such heading",
  ]);
  assert.deepEqual(problems("src/a.ts", '// docs/api.md §4.2 "Rows"'), [
    'cites docs/api.md §4.2 "Rows", which it does not hold',
  ]);
  assert.deepEqual(problems("src/a.ts", "// docs/nope.md"), [
    "names docs/nope.md, which does not exist",
  ]);
  assert.deepEqual(problems("src/a.ts", "// (§4.2)"), [
    'cites "§4.2" without naming its docs/… file',
  ]);
  assert.deepEqual(problems("docs/api.md", "see §4.2 and §5"), [
    "cites §5 of this file, which has no such heading",
  ]);
  assert.equal(problems("src/a.ts", "// DESIGN §4").length, 2);
  assert.deepEqual(problems("src/a.ts", "// spec §4.2"), [
    'cites a spec section (use docs/api.md §N): "spec §"',
    'cites "§4.2" without naming its docs/… file',
  ]);
  assert.equal(problems("README.md", "[x](../shared/spec/telemetry-query-api.md)").length, 2);
});
