/**
 * Turns the true- and false-positive examples of gitleaks' rule definitions
 * (`cmd/generate/config/rules/*.go` in a snapshot of github.com/gitleaks/gitleaks)
 * into a labelled JSONL corpus for `scripts/detect_score.ts`:
 *
 *   deno run --allow-all scripts/_detect_yardstick.ts <gitleaks git dir> [out dir]
 *
 * The corpus is an outside yardstick, not our data: it is written into the
 * git-ignored `.detect-yardstick/` and never committed, and nothing of it is
 * copied into our rules. The examples are Go expressions; this evaluates the
 * small part of Go they use (string literals, `+`, `[]string{…}`, `append`,
 * `fmt.Sprintf`, `utils.GenerateSampleSecrets`, `secrets.NewSecret` with a
 * seeded generator of strings matching a regular expression).
 *
 * One line per example: `{"source","family","rule","label":"tp"|"fp","form",
 * "text","secret"?,"vendor"?,"arguable"?}`. `form` is the template of
 * `GenerateSampleSecrets` (`ini - quoted1`, `go - backticks`, …) or `literal`;
 * `secret` is known for generated samples; `vendor` is true when the rule
 * finds the secret by its own format rather than by a keyword beside it
 * (those are the secrets counted "standing alone").
 *
 * @module
 */

// deno-lint-ignore-file no-console

const gitDir = Deno.args[0];
const outDir = Deno.args[1] ?? new URL("../.detect-yardstick/", import.meta.url).pathname;
if (gitDir === undefined) {
  console.error("usage: _detect_yardstick.ts <gitleaks git dir> [out dir]");
  Deno.exit(2);
}

function git(...args: string[]): string {
  const out = new Deno.Command("git", { args: ["--git-dir", gitDir!, ...args], stdout: "piped" })
    .outputSync();
  if (!out.success) throw new Error(`git ${args.join(" ")} failed`);
  return new TextDecoder().decode(out.stdout);
}

// --- Seeded randomness ----------------------------------------------------------

let seed = 0x6c65616b;
function random(): number {
  seed = (seed + 0x6d2b79f5) | 0;
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}
const pick = <T>(items: T[]): T => items[Math.floor(random() * items.length)]!;
const between = (min: number, max: number) => min + Math.floor(random() * (max - min + 1));

// --- Strings from a regular expression (what reggen does with limit 1) ----------

type Node =
  | { t: "alt"; options: Node[][] }
  | { t: "set"; chars: string }
  | { t: "lit"; char: string }
  | { t: "rep"; node: Node; min: number; max: number };

const PRINTABLE = Array.from({ length: 95 }, (_, i) => String.fromCharCode(32 + i)).join("");
const WORD = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_";
const CLASS_ESCAPES: Record<string, string> = {
  d: "0123456789",
  w: WORD,
  s: " ",
  D: "abcXYZ",
  W: "-.,",
  S: WORD,
};

function parseRegex(source: string): Node[] {
  let at = 0;
  let caseless = false;
  function alternation(): Node {
    const options: Node[][] = [[]];
    while (at < source.length && source[at] !== ")") {
      if (source[at] === "|") {
        at++;
        options.push([]);
        continue;
      }
      const atom = parseAtom();
      if (atom === undefined) continue;
      options.at(-1)!.push(quantified(atom));
    }
    return { t: "alt", options };
  }
  function quantified(atom: Node): Node {
    const c = source[at];
    let min = 1;
    let max = 1;
    if (c === "*") [min, max] = [0, 1];
    else if (c === "+") [min, max] = [1, 2];
    else if (c === "?") [min, max] = [0, 1];
    else if (c === "{") {
      const m = /^\{(\d+)(,(\d*))?\}/.exec(source.slice(at));
      if (m === null) return atom;
      min = Number(m[1]);
      max = m[2] === undefined ? min : m[3] === "" ? min + 1 : Number(m[3]);
      at += m[0].length - 1;
    } else return atom;
    at++;
    if (source[at] === "?") at++;
    return { t: "rep", node: atom, min, max };
  }
  function parseAtom(): Node | undefined {
    const c = source[at++]!;
    if (c === "(") {
      if (source.startsWith("?i)", at)) {
        at += 3;
        caseless = true;
        return undefined;
      }
      if (source.startsWith("?P<", at)) at = source.indexOf(">", at) + 1;
      else if (source[at] === "?") at = source.indexOf(":", at) + 1;
      const inner = alternation();
      at++;
      return inner;
    }
    if (c === "[") return parseSet();
    if (c === "^" || c === "$") return undefined;
    if (c === ".") return { t: "set", chars: WORD };
    if (c === "\\") {
      const e = source[at++]!;
      if (e === "b" || e === "B" || e === "A" || e === "z") return undefined;
      if (CLASS_ESCAPES[e] !== undefined) return { t: "set", chars: CLASS_ESCAPES[e]! };
      if (e === "n") return { t: "lit", char: "\n" };
      if (e === "r") return { t: "lit", char: "\r" };
      if (e === "t") return { t: "lit", char: "\t" };
      return { t: "lit", char: e };
    }
    return { t: "lit", char: c };
  }
  function parseSet(): Node {
    let negate = false;
    if (source[at] === "^") {
      negate = true;
      at++;
    }
    let chars = "";
    let first = true;
    while (at < source.length && (source[at] !== "]" || first)) {
      first = false;
      let c = source[at++]!;
      if (c === "[" && source.startsWith(":", at)) {
        const end = source.indexOf(":]", at);
        const name = source.slice(at + 1, end);
        at = end + 2;
        chars += name === "alnum" ? WORD.slice(0, 62) : name === "digit" ? "0123456789" : "";
        continue;
      }
      if (c === "\\") {
        const e = source[at++]!;
        if (CLASS_ESCAPES[e] !== undefined) {
          chars += CLASS_ESCAPES[e];
          continue;
        }
        c = e === "n" ? "\n" : e === "r" ? "\r" : e === "t" ? "\t" : e;
      }
      if (source[at] === "-" && source[at + 1] !== "]" && at + 1 < source.length) {
        let end = source[at + 1]!;
        at += 2;
        if (end === "\\") end = source[at++]!;
        for (let code = c.charCodeAt(0); code <= end.charCodeAt(0); code++) {
          chars += String.fromCharCode(code);
        }
      } else chars += c;
    }
    at++;
    if (negate) chars = [...WORD.slice(0, 62)].filter((ch) => !chars.includes(ch)).join("");
    if (caseless) chars = [...new Set(chars + chars.toUpperCase() + chars.toLowerCase())].join("");
    return { t: "set", chars: chars === "" ? PRINTABLE : chars };
  }
  const root = alternation();
  return [root];
}

function generate(nodes: Node[]): string {
  let out = "";
  for (const node of nodes) {
    switch (node.t) {
      case "alt":
        out += generate(pick(node.options));
        break;
      case "set":
        out += node.chars[Math.floor(random() * node.chars.length)];
        break;
      case "lit":
        out += node.char;
        break;
      case "rep": {
        const count = between(node.min, node.max);
        for (let i = 0; i < count; i++) out += generate([node.node]);
      }
    }
  }
  return out;
}

const newSecret = (regex: string) => generate(parseRegex(regex));

// --- A small Go expression evaluator --------------------------------------------

type Token = { k: "str" | "id" | "num" | "op"; v: string };

function tokenize(source: string): Token[] {
  const tokens: Token[] = [];
  let at = 0;
  while (at < source.length) {
    const c = source[at]!;
    if (/\s/.test(c)) {
      at++;
    } else if (source.startsWith("//", at)) {
      at = source.indexOf("\n", at);
      if (at < 0) break;
    } else if (source.startsWith("/*", at)) {
      at = source.indexOf("*/", at) + 2;
    } else if (c === "`") {
      const end = source.indexOf("`", at + 1);
      tokens.push({ k: "str", v: source.slice(at + 1, end).replaceAll("\r", "") });
      at = end + 1;
    } else if (c === '"' || c === "'") {
      let value = "";
      at++;
      while (source[at] !== c) {
        if (source[at] === "\\") {
          const e = source[at + 1]!;
          if (e === "x") {
            value += String.fromCharCode(parseInt(source.slice(at + 2, at + 4), 16));
            at += 4;
            continue;
          }
          if (e === "u") {
            value += String.fromCharCode(parseInt(source.slice(at + 2, at + 6), 16));
            at += 6;
            continue;
          }
          value += ({ n: "\n", t: "\t", r: "\r", "\\": "\\", '"': '"', "'": "'" } as Record<
            string,
            string
          >)[e] ?? e;
          at += 2;
        } else value += source[at++];
      }
      at++;
      tokens.push({ k: "str", v: value });
    } else if (/[A-Za-z_]/.test(c)) {
      const m = /^[A-Za-z_][\w]*(?:\.[A-Za-z_][\w]*)*/.exec(source.slice(at))!;
      tokens.push({ k: "id", v: m[0] });
      at += m[0].length;
    } else if (/\d/.test(c)) {
      const m = /^\d+/.exec(source.slice(at))!;
      tokens.push({ k: "num", v: m[0] });
      at += m[0].length;
    } else {
      const m = /^(?:\.\.\.|:=|\+=|==|!=|&&|\|\||[^\s])/.exec(source.slice(at))!;
      tokens.push({ k: "op", v: m[0] });
      at += m[0].length;
    }
  }
  return tokens;
}

type Value = string | string[] | number;

/** A sample secret of `GenerateSampleSecrets`, with where it came from. */
interface Sample {
  text: string;
  form: string;
  secret?: string;
}

/** The templates of gitleaks' `GenerateSampleSecrets` (issue gitleaks#1222), by name. */
const SAMPLE_FORMS: Record<string, string> = {
  "ini - quoted1": '{i}Token="{s}"',
  "ini - quoted2": '{i}Token = "{s}"',
  "ini - unquoted1": "{i}Token={s}",
  "ini - unquoted2": "{i}Token = {s}",
  "json - string": '{\n    "{i}_token": "{s}"\n}',
  "json - escaped newline in string": '{"config.ini": "{I}_TOKEN={s}\\nBACKUP_ENABLED=true"}',
  "xml - element multiline": "<{i}Token>\n    {s}\n</{i}Token>",
  "yaml - singleline - unquoted": "{i}_token: {s}",
  "yaml - singleline - single quote": "{i}_token: '{s}'",
  "yaml - singleline - double quote": '{i}_token: "{s}"',
  "C#": 'string {i}Token = "{s}";',
  "go - normal": 'var {i}Token string = "{s}"',
  "go - short": '{i}Token := "{s}"',
  "go - backticks": "{i}Token := `{s}`",
  "java": 'String {i}Token = "{s}";',
  "kotlin - notype": 'var {i}Token = "{s}"',
  "php - string concat": '${i}Token .= "{s}"',
  "python - single quote": "{i}Token = '{s}'",
  "python - double quote": '{i}Token = "{s}"',
  "misc - comma operator": 'System.setProperty("{I}_TOKEN", "{s}")',
  "logstash": '  "{i}Token" => "{s}"',
  "make - recursive assignment": '{i}_TOKEN = "{s}"',
  "make - simple assignment": '{i}_TOKEN := "{s}"',
  "make - shell assignment": '{i}_TOKEN ::= "{s}"',
  "make - evaluated shell assignment": '{i}_TOKEN :::= "{s}"',
  "make - conditional assignment": '{i}_TOKEN ?= "{s}"',
};

function sampleSecrets(identifier: string, secret: string): Sample[] {
  return Object.entries(SAMPLE_FORMS).map(([form, template]) => ({
    form,
    secret,
    text: template.replaceAll("{i}", identifier).replaceAll("{I}", identifier.toUpperCase())
      .replaceAll("{s}", secret),
  }));
}

/** Samples made by GenerateSampleSecrets, by their text: they keep their form and secret. */
const samplesByText = new Map<string, Sample>();

class Evaluator {
  at = 0;
  constructor(
    readonly tokens: Token[],
    readonly env: Map<string, Value>,
    readonly helpers: Map<string, () => Value>,
  ) {}
  peek(offset = 0): Token | undefined {
    return this.tokens[this.at + offset];
  }
  expect(v: string): void {
    const token = this.tokens[this.at++];
    if (token?.v !== v) throw new Error(`expected ${v}, got ${token?.v}`);
  }
  expression(): Value {
    let value = this.primary();
    while (this.peek()?.v === "+") {
      this.at++;
      const right = this.primary();
      if (typeof value !== "string" || typeof right !== "string") throw new Error("bad +");
      value += right;
    }
    return value;
  }
  args(): Value[] {
    this.expect("(");
    const values: Value[] = [];
    while (this.peek()?.v !== ")") {
      let value = this.expression();
      if (this.peek()?.v === "...") {
        this.at++;
        value = [...(value as string[])];
        values.push(...(value as string[]).map((v) => [v]));
        if (this.peek()?.v === ",") this.at++;
        continue;
      }
      values.push(value);
      if (this.peek()?.v === ",") this.at++;
    }
    this.expect(")");
    return values;
  }
  primary(): Value {
    const token = this.tokens[this.at++];
    if (token === undefined) throw new Error("end of input");
    if (token.k === "str") return token.v;
    if (token.k === "num") return Number(token.v);
    if (token.v === "map" && this.peek()?.v === "[") {
      // map[string]string{"path": `text`, …}: the texts (paths only steer gitleaks' allowlists)
      while (this.tokens[this.at]?.v !== "{") this.at++;
      this.at++;
      const list: string[] = [];
      while (this.peek()?.v !== "}") {
        this.expression();
        this.expect(":");
        const value = this.expression();
        if (typeof value !== "string") throw new Error("map of non-strings");
        list.push(value);
        if (this.peek()?.v === ",") this.at++;
      }
      this.expect("}");
      return list;
    }
    if (token.v === "[" && this.peek()?.v === "]") {
      this.at++;
      const type = this.tokens[this.at++]!.v;
      if (type === "byte") {
        const args = this.args();
        return args[0] as string;
      }
      this.expect("{");
      const list: string[] = [];
      while (this.peek()?.v !== "}") {
        const value = this.expression();
        if (typeof value !== "string") throw new Error("list of non-strings");
        list.push(value);
        if (this.peek()?.v === ",") this.at++;
      }
      this.expect("}");
      return list;
    }
    if (token.k === "id") {
      if (this.peek()?.v !== "(") {
        if (token.v === "nil") return [];
        const value = this.env.get(token.v);
        if (value === undefined) throw new Error(`unknown ${token.v}`);
        return value;
      }
      return this.call(token.v);
    }
    throw new Error(`unexpected ${token.v}`);
  }
  call(name: string): Value {
    const args = this.args();
    const str = (i: number) => {
      const value = args[i];
      if (typeof value === "string") return value;
      if (typeof value === "number") return String(value);
      throw new Error(`${name}: argument ${i} not a string`);
    };
    switch (name) {
      case "secrets.NewSecret":
        return newSecret(str(0));
      case "utils.Numeric":
        return `[0-9]{${str(0)}}`;
      case "utils.Hex":
        return `[a-f0-9]{${str(0)}}`;
      case "utils.AlphaNumeric":
        return `[a-z0-9]{${str(0)}}`;
      case "utils.AlphaNumericExtendedShort":
        return `[a-z0-9_-]{${str(0)}}`;
      case "utils.AlphaNumericExtended":
        return `[a-z0-9=_\\-]{${str(0)}}`;
      case "utils.AlphaNumericExtendedLong":
        return `[a-z0-9\\/=_\\+\\-]{${str(0)}}`;
      case "utils.Hex8_4_4_4_12":
        return `[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`;
      case "fmt.Sprintf": {
        let i = 1;
        return str(0).replace(/%[sdvq%]/g, (m) => m === "%%" ? "%" : str(i++));
      }
      case "newPlausibleSecret": {
        // gitleaks retries until the secret has a digit 1-9 (and no stop word)
        let secret = newSecret(str(0));
        while (!/[1-9]/.test(secret)) secret = newSecret(str(0));
        return secret;
      }
      case "strings.Repeat":
        return str(0).repeat(Number(args[1]));
      case "utils.GenerateSampleSecret": {
        const text = `${str(0)}_api_token = "${str(1)}"`;
        samplesByText.set(text, { text, form: "sample", secret: str(1) });
        return text;
      }
      case "utils.GenerateSampleSecrets": {
        const samples = sampleSecrets(str(0), str(1));
        for (const sample of samples) samplesByText.set(sample.text, sample);
        return samples.map((sample) => sample.text);
      }
      case "append": {
        const base = args[0] as string[];
        const rest = args.slice(1).flatMap((v) => Array.isArray(v) ? v : [v as string]);
        return [...base, ...rest];
      }
      case "b64.StdEncoding.EncodeToString":
      case "base64.StdEncoding.EncodeToString":
        return btoa(str(0));
      case "b64.RawStdEncoding.EncodeToString":
        return btoa(str(0)).replace(/=+$/, "");
      case "b64.URLEncoding.EncodeToString":
        return btoa(str(0)).replaceAll("+", "-").replaceAll("/", "_");
      case "b64.RawURLEncoding.EncodeToString":
        return btoa(str(0)).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
    }
    const helper = this.helpers.get(name);
    if (helper !== undefined) return helper();
    throw new Error(`unknown function ${name}`);
  }
}

// --- Rules ----------------------------------------------------------------------

interface Example {
  source: "gitleaks";
  family: string;
  rule: string;
  label: "tp" | "fp";
  form: string;
  text: string;
  secret?: string;
  vendor?: boolean;
  /**
   * Why a false positive is arguable, if it is: it holds a value the rule
   * rejects only by listing it (an allowlisted literal such as Firebase's
   * published example keys), or it is (or holds the secret of) another rule's
   * true positive. The scorer reports false alarms with and without these.
   */
  arguable?: string;
}

/**
 * Values a rule's allowlist names one by one: regular expressions of a rule's
 * `Allowlists` with no operator in them, 16 characters or more.
 */
function allowlistedLiterals(ruleText: string): string[] {
  const start = ruleText.search(/Allowlists?:/);
  if (start < 0) return [];
  const end = ruleText.search(/\/\/ validate|\btps\s*:?=/);
  const literals: string[] = [];
  for (
    const m of ruleText.slice(start, end < start ? undefined : end).matchAll(
      /MustCompile\(`([^`]*)`\)/g,
    )
  ) {
    const literal = m[1]!.replaceAll("\\.", ".");
    if (literal.length >= 16 && /^[\w\-.~+/=]+$/.test(literal) && !/\.[*+?]/.test(m[1]!)) {
      literals.push(literal);
    }
  }
  return literals;
}

/** gitleaks' jwt-base64 examples: each JOSE header value, base64-wrapped four ways. */
function jwtBase64Examples(source: string): string[] {
  const body = source.slice(source.indexOf("func generateTestValues"));
  const suffix = /jwtSuffix := "([^"]+)"/.exec(body)![1]!;
  const examples: string[] = [];
  const mapText = body.slice(body.indexOf("map[string][]string{"));
  const entry = /"([\w#]+)":\s*\{((?:`[^`]*`\s*,?\s*)+)\}/g;
  for (let m = entry.exec(mapText); m !== null; m = entry.exec(mapText)) {
    for (const vm of m[2]!.matchAll(/`([^`]*)`/g)) {
      const header = `{"${m[1]}":${vm[1]}}`;
      const b64 = (s: string) => btoa(unescape(encodeURIComponent(s)));
      const raw = b64(header).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
      const jwt = raw + suffix;
      const std = b64(jwt);
      examples.push(std, std.replace(/=+$/, ""));
      const url = std.replaceAll("+", "-").replaceAll("/", "_");
      examples.push(url, url.replace(/=+$/, ""));
    }
    if (m.index > mapText.indexOf("\n\t}\n")) break;
  }
  return examples;
}

function functionsOf(source: string): { name: string; body: Token[]; text: string }[] {
  const out: { name: string; body: Token[]; text: string }[] = [];
  const re = /^func (\w+)\([^)]*\)[^{]*\{/gm;
  for (let m = re.exec(source); m !== null; m = re.exec(source)) {
    let depth = 1;
    let at = m.index + m[0].length;
    // Braces inside strings are rare in these files except in raw strings; skip those.
    while (depth > 0 && at < source.length) {
      const c = source[at]!;
      if (c === "`") at = source.indexOf("`", at + 1);
      else if (c === '"') {
        at++;
        while (source[at] !== '"') at += source[at] === "\\" ? 2 : 1;
      } else if (c === "/" && source[at + 1] === "/") at = source.indexOf("\n", at);
      else if (c === "{") depth++;
      else if (c === "}") depth--;
      at++;
    }
    const text = source.slice(m.index + m[0].length, at - 1);
    out.push({ name: m[1]!, text, body: tokenize(text) });
  }
  return out;
}

const files = git("ls-tree", "--name-only", "HEAD", "cmd/generate/config/rules/").split("\n")
  .filter((path) => path.endsWith(".go") && !path.endsWith("_test.go"));
const examples: Example[] = [];
const skipped: string[] = [];
for (const path of files) {
  const source = git("show", `HEAD:${path}`);
  const family = path.split("/").at(-1)!.replace(/\.go$/, "");
  const helpers = new Map<string, () => Value>();
  if (source.includes("func generateTestValues")) {
    helpers.set("generateTestValues", () => jwtBase64Examples(source));
  }
  const globals = new Map<string, Value>();
  {
    // Package-level `var name = …` (before and between the functions).
    const tokens = tokenize(source.replace(/^func [\s\S]*?^}$/gm, ""));
    for (let i = 0; i + 2 < tokens.length; i++) {
      if (tokens[i]!.v === "var" && tokens[i + 1]!.k === "id" && tokens[i + 2]!.v === "=") {
        try {
          const evaluator = new Evaluator(tokens, globals, helpers);
          evaluator.at = i + 3;
          globals.set(tokens[i + 1]!.v, evaluator.expression());
        } catch {
          // Not an example list.
        }
      }
    }
  }
  for (const fn of functionsOf(source)) {
    const ruleId = /RuleID:\s*"([^"]+)"/.exec(fn.text)?.[1];
    if (ruleId === undefined || !/utils\.Validate/.test(fn.text)) continue;
    const vendor = !/GenerateSemiGenericRegex|RuleID:\s*"generic/.test(fn.text);
    // The rule itself (`r := config.Rule{…}`) is not needed: only its examples are.
    const env = new Map<string, Value>([...globals, ["r", 0]]);
    const tokens = fn.body;
    let validated: [Value, Value] | undefined;
    for (let i = 0; i < tokens.length; i++) {
      const token = tokens[i]!;
      const next = tokens[i + 1];
      try {
        if (
          token.k === "id" && (next?.v === ":=" || next?.v === "=") && token.v !== "r" &&
          !/^&?config\./.test(tokens[i + 2]?.v ?? "")
        ) {
          const evaluator = new Evaluator(tokens, env, helpers);
          evaluator.at = i + 2;
          env.set(token.v, evaluator.expression());
        } else if (token.k === "id" && /^utils\.Validate(?:WithPaths)?$/.test(token.v)) {
          const evaluator = new Evaluator(tokens, env, helpers);
          evaluator.at = i + 1;
          const args = evaluator.args();
          validated = [args[1] ?? [], args[2] ?? []];
        }
      } catch (error) {
        skipped.push(`${ruleId}: ${token.v}: ${(error as Error).message}`);
      }
    }
    if (validated === undefined) {
      skipped.push(`${ruleId}: no examples evaluated`);
      continue;
    }
    const allowlisted = allowlistedLiterals(fn.text);
    for (const [label, list] of [["tp", validated[0]], ["fp", validated[1]]] as const) {
      if (!Array.isArray(list)) continue;
      for (const text of list) {
        const sample = samplesByText.get(text);
        const example: Example = {
          source: "gitleaks",
          family,
          rule: ruleId,
          label,
          form: sample?.form ?? "literal",
          text,
        };
        if (sample?.secret !== undefined) {
          example.secret = sample.secret;
          example.vendor = vendor;
        }
        const literal = allowlisted.find((value) => text.includes(value));
        if (label === "fp" && literal !== undefined) {
          example.arguable = `allowlisted value ${literal.slice(0, 12)}…`;
        }
        examples.push(example);
      }
    }
  }
}

// A false positive that is another rule's true positive, or holds its secret.
{
  const truePositives = examples.filter((e) => e.label === "tp");
  for (const example of examples) {
    if (example.label !== "fp" || example.arguable !== undefined) continue;
    const other = truePositives.find((tp) =>
      tp.rule !== example.rule &&
      (tp.text === example.text ||
        (tp.secret !== undefined && tp.secret.length >= 16 && example.text.includes(tp.secret)))
    );
    if (other !== undefined) example.arguable = `true positive of ${other.rule}`;
  }
}

await Deno.mkdir(outDir, { recursive: true });
const commit = git("rev-parse", "HEAD").trim();
const out = `${outDir.replace(/\/$/, "")}/gitleaks.jsonl`;
await Deno.writeTextFile(out, examples.map((e) => JSON.stringify(e)).join("\n") + "\n");
const rules = new Set(examples.map((e) => e.rule));
const tps = examples.filter((e) => e.label === "tp").length;
const arguable = examples.filter((e) => e.arguable !== undefined).length;
console.log(
  `gitleaks ${commit.slice(0, 7)}: ${rules.size} rules, ${tps} true positives, ${
    examples.length - tps
  } false positives (${arguable} arguable) → ${out}`,
);
if (skipped.length > 0) {
  console.log(`${skipped.length} statements not evaluated:\n  ${skipped.join("\n  ")}`);
}
