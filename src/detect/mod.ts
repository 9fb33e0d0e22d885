/**
 * Risk detection for tool calls, run once when a call is stored: which risk
 * flags it raises (credential_detected, destructive_operation, sensitive_path),
 * which external domains it reaches, and its arguments and result with the
 * secrets redacted. Rules are data in `rules/`; this module decides which
 * rules apply to which strings of a call:
 *
 * - credentials: every string of the arguments (JSON decoded, recursively),
 *   the tool name, the result and the call's other stored texts (error
 *   message and type, tool description, …), each also read with its JSON
 *   escapes decoded (`\u0041KIA…`, JSON inside a JSON string, truncated
 *   JSON), so an escaped secret is found and redacted as it was written;
 * - destructive commands: strings under command keys (`command`, `cmd`,
 *   `script`, …, including argument vectors such as Codex's
 *   `["bash", "-lc", "…"]`), and for `code_exec` tools also arguments that are
 *   plain text; SQL statements under SQL keys (`sql`, `query`, …) of any tool
 *   but web fetches, every string of MCP database tools, and the words and
 *   here-documents of SQL clients (`psql -c "…"`);
 * - sensitive paths: path keys (`file_path`, `path`, `notebook_path`,
 *   `absolute_path`, `glob`, Glob's `pattern`, …), paths in patches, and the
 *   words of commands (redirections included; `echo`/`printf` text and grep
 *   patterns excluded);
 * - domains: URLs given to curl and wget, the URL of web-fetch tools, and
 *   URL-valued arguments of MCP tools; arguments only.
 *
 * Results are scanned for credentials only: a result is output, so a command
 * or path that appears in it was not run or opened by the call (a README that
 * says "copy .env.example to .env" touches nothing).
 *
 * Judgement calls, each with a corpus case:
 * - Any recursive delete counts (`rm -r dir` is `rm -r`, with -f `rm -rf`),
 *   whatever the target, /tmp included; `rm -f file` and `rm file` do not.
 * - Text handed to `echo`/`printf` is not run (`echo "rm -rf /"` is clean),
 *   unless it is piped into a shell (`echo "…" | sh`).
 * - SQL counts where it is executed: SQL keys, MCP database tools and SQL
 *   clients on the command line; not a migration file being written, a grep
 *   pattern, a web search or an issue body.
 * - `id_rsa.pub`, `known_hosts` and certificate `.pem`s are public; the whole
 *   `~/.ssh/` and `~/.aws/` (config included) are sensitive; `.env.example`,
 *   `.sample`, `.template`, `.dist`, … are safe; `.envrc` (direnv) is
 *   sensitive but `docs/.envrc.md` is not. Grep's `pattern` is a regex, not a
 *   path; Glob's is.
 * - A scheme-less host given to curl or wget is `http` (what they use); to a
 *   web-fetch tool, `https`. Loopback is `localhost`, `*.localhost`,
 *   127.0.0.0/8, `::1` and also `0.0.0.0`/`::`; private addresses (10/8, …)
 *   are reported. IPv6 hosts lose their brackets. A URL with an unusable host
 *   is ignored. MCP arguments count when the whole value is an http(s), ws(s)
 *   or ftp(s) URL (or a bare host under a URL key).
 * - Evidence shows at most the first four characters of a secret, and at most
 *   half of a short one, so it never holds a whole secret.
 *
 * @module
 */

import {
  CredentialDocument,
  credentialEvidence,
  redact,
  type SecretMatch,
} from "./_credentials.ts";
import {
  destructiveCommand,
  destructiveSql,
  mayBeDestructiveCommand,
  SQL_CLIENTS,
} from "./_destructive.ts";
import {
  type DomainFinding,
  domainOf,
  fetchCommandUrls,
  MCP_URL_SCHEMES,
  urlsInText,
} from "./_domains.ts";
import {
  isSensitivePath,
  mayNameSensitivePath,
  patchPaths,
  pathCandidates,
  stringLiterals,
} from "./_paths.ts";
import { argvCommands, type Command, shellCommands } from "./_shell.ts";
import type { FlagKind } from "./_types.ts";

export type { DomainFinding } from "./_domains.ts";
export type { FlagKind } from "./_types.ts";
export { FLAG_KINDS } from "./_types.ts";

/** What the store knows about a tool call when it is ingested. */
export interface DetectInput {
  toolName: string;
  toolType: "builtin" | "mcp";
  category: "code_exec" | "file_read" | "file_write" | "web_fetch" | "mcp" | "other";
  /** JSON-encoded tool input; text that is not JSON is scanned as text. */
  arguments?: string;
  /** Tool output text. */
  result?: string;
  /** The call's other free-form texts that are stored, scanned and redacted like the result. */
  texts?: CallTexts;
}

/**
 * The free-form texts a call stores besides its arguments and result: what an
 * agent or a failing tool can fill with anything, a secret included. Ids,
 * names of enumerations and times are not among them.
 */
export const CALL_TEXT_NAMES = [
  "errorMessage",
  "errorType",
  "toolDescription",
  "agentName",
  "mcpServerName",
  "mcpServerScope",
  "cwd",
] as const;

/** One of {@link CALL_TEXT_NAMES}. */
export type CallTextName = typeof CALL_TEXT_NAMES[number];

/** Free-form texts of a call, by name. */
export type CallTexts = Partial<Record<CallTextName, string>>;

/** The free-form texts a call (or anything with the same field names) holds. */
export function callTexts(call: { [name in CallTextName]?: string | undefined }): CallTexts {
  const texts: CallTexts = {};
  for (const name of CALL_TEXT_NAMES) {
    const text = call[name];
    if (text !== undefined) texts[name] = text;
  }
  return texts;
}

/** One risk flag of a call, with short evidence. */
export interface RiskFinding {
  flag: FlagKind;
  evidence: string;
}

/** Everything detection says about one call. */
export interface Detection {
  /** At most one per kind, sorted by kind; evidence from the first match. */
  flags: RiskFinding[];
  /** Unique per (domain, scheme), from the arguments only. */
  domains: DomainFinding[];
  /** The arguments, secrets redacted when asked; otherwise unchanged. */
  arguments?: string;
  /** The result, secrets redacted when asked; otherwise unchanged. */
  result?: string;
  /** The input's `texts`, secrets redacted when asked; present when the input had them. */
  texts?: CallTexts;
}

/** Keys whose string (or argument vector) is a shell command line. */
const SHELL_KEYS = new Set([
  "command",
  "cmd",
  "commands",
  "script",
  "shell_command",
  "bash_command",
  // Claude Code's `tool_parameters` carry the whole line in `full_command`.
  "full_command",
  "cmdline",
  "command_line",
  "commandline",
]);
/** More keys that hold what a code_exec tool runs (Codex `write_stdin` sends `chars`). */
const CODE_EXEC_SHELL_KEYS = new Set(["input", "chars", "code", "script_content"]);
const SQL_KEYS = new Set([
  "sql",
  "query",
  "queries",
  "statement",
  "statements",
  "stmt",
  "sql_query",
]);
const PATH_KEYS = new Set([
  "file_path",
  "filepath",
  "path",
  "paths",
  "notebook_path",
  "absolute_path",
  "file",
  "files",
  "filename",
  "file_name",
  "target_file",
  "target_path",
  "source_path",
  "destination_path",
  "source",
  "destination",
  "dest",
  "src",
  "dir",
  "dir_path",
  "directory",
  "directory_path",
  "relative_path",
  "relative_workspace_path",
  "target_directory",
  "old_path",
  "new_path",
  "include",
  "glob",
]);
const URL_KEYS = new Set([
  "url",
  "urls",
  "uri",
  "href",
  "link",
  "links",
  "website",
  "page_url",
  "target_url",
]);
/** Keys that describe a call rather than carry its input. */
const DESCRIPTIVE_KEYS = new Set([
  "description",
  "title",
  "summary",
  "explanation",
  "reason",
  "name",
]);
const DATABASE_TOOL =
  /sql|postgres|mysql|mariadb|sqlite|database|(?:^|[_-])db(?:[_-]|$)|supabase|bigquery|snowflake|clickhouse|duckdb|mongo|redis|neon|planetscale|turso|cockroach/i;
const PATCH_HINT = /^(?:\*\*\* (?:Add|Update|Delete) File: |\+\+\+ |--- )/m;
const GREP_PROGRAMS = new Set(["grep", "egrep", "fgrep", "zgrep", "rg", "ag", "ack"]);
const INTERPRETERS = new Set([
  "python",
  "python3",
  "python2",
  "node",
  "nodejs",
  "deno",
  "bun",
  "ruby",
  "perl",
  "php",
]);
const FILE_REDIRECT = /^(?:\d*(?:>|>>|>\||<|<>)|&>>?)$/;
const FD_REDIRECT = /^\d*(?:>&|<&|<<<)$/;
const PATTERN_OPTION = /^-[a-zA-Z]*[ef]$|^--(?:regexp|file)$/;
const MAX_DEPTH = 64;

/** What decides which rules apply to a call's strings. */
interface CallContext {
  category: DetectInput["category"];
  toolType: DetectInput["toolType"];
  globTool: boolean;
  databaseTool: boolean;
  /** Top-level arguments include a URL key (so a fetch prompt's URLs are not the target). */
  hasUrlKey: boolean;
}

/** Findings so far; the first of each kind wins. */
interface Findings {
  destructive?: string;
  path?: string;
  domains: DomainFinding[];
  domainKeys: Set<string>;
}

/** A string somewhere in a decoded document, and where to put its redacted form. */
interface Entry {
  text: string;
  /** The JSON property it is the value of (array elements take their array's). */
  key: string | undefined;
  parent: Record<string, unknown> | unknown[] | undefined;
  slot: string | number;
  /** An argument vector under a command key; its strings follow as entries too. */
  argv?: string[];
}

/** A tool call's arguments or result, decoded. */
interface Document {
  raw: string;
  /** Decoded from JSON (so redaction re-encodes it). */
  json: boolean;
  root: unknown;
  entries: Entry[];
}

function decode(raw: string, alwaysTryJson: boolean): Document {
  const first = raw.trimStart()[0];
  if (alwaysTryJson || first === "{" || first === "[") {
    try {
      const root: unknown = JSON.parse(raw);
      const entries: Entry[] = [];
      collect(root, undefined, undefined, 0, entries, 0);
      return { raw, json: true, root, entries };
    } catch {
      // Not JSON: scanned as text.
    }
  }
  return {
    raw,
    json: false,
    root: raw,
    entries: [{ text: raw, key: undefined, parent: undefined, slot: 0 }],
  };
}

function collect(
  value: unknown,
  key: string | undefined,
  parent: Entry["parent"],
  slot: string | number,
  entries: Entry[],
  depth: number,
): void {
  if (typeof value === "string") {
    entries.push({ text: value, key, parent, slot });
  } else if (Array.isArray(value)) {
    if (depth >= MAX_DEPTH) return;
    if (key !== undefined && isArgv(key, value)) {
      entries.push({ text: "", key, parent, slot, argv: value as string[] });
    }
    value.forEach((element, index) => collect(element, key, value, index, entries, depth + 1));
  } else if (value !== null && typeof value === "object") {
    if (depth >= MAX_DEPTH) return;
    const record = value as Record<string, unknown>;
    for (const name of Object.keys(record)) {
      collect(record[name], name, record, name, entries, depth + 1);
    }
  }
}

/**
 * An argument vector (`["bash", "-lc", "…"]`) rather than a list of command
 * lines: strings under a command key, the first a program name without blanks.
 */
function isArgv(key: string, value: unknown[]): value is string[] {
  const name = key.toLowerCase();
  return SHELL_KEYS.has(name) && name !== "commands" && value.length > 1 &&
    value.every((element) => typeof element === "string") && !/\s/.test(value[0] as string);
}

/**
 * Most domains recorded for one call. Each is a row with three index entries
 * that repeat the session id: a 64 KiB command of 2,000 `curl`s stored 50
 * times the bytes received without this bound (issue #14 finding 3).
 */
export const MAX_DOMAINS_PER_CALL = 64;

function addDomain(findings: Findings, domain: DomainFinding | undefined): void {
  if (domain === undefined || findings.domains.length >= MAX_DOMAINS_PER_CALL) return;
  const id = `${domain.domain}\u0000${domain.scheme}`;
  if (findings.domainKeys.has(id)) return;
  findings.domainKeys.add(id);
  findings.domains.push(domain);
}

/** The first sensitive path a command touches. */
function commandPath(command: Command): string | undefined {
  const { name, words } = command;
  if (name === "apply_patch" || name === "applypatch") {
    for (const text of [...words.slice(1), ...command.heredocs]) {
      for (const path of patchPaths(text)) if (isSensitivePath(path)) return path;
    }
  }
  const textOnly = name === "echo" || name === "printf";
  const gitGrep = name === "git" && words[1] === "grep";
  const grep = GREP_PROGRAMS.has(name) || gitGrep;
  let patternPending = grep && !words.some((word) => PATTERN_OPTION.test(word));
  const interpreter = INTERPRETERS.has(name);
  for (let i = gitGrep ? 2 : 1; i < words.length; i++) {
    const word = words[i]!;
    if (FILE_REDIRECT.test(word)) {
      const target = words[++i];
      if (target === undefined) break;
      for (const candidate of pathCandidates(target)) {
        if (isSensitivePath(candidate)) return candidate;
      }
      continue;
    }
    if (FD_REDIRECT.test(word)) {
      i++;
      continue;
    }
    if (textOnly) continue;
    if (grep && PATTERN_OPTION.test(word) && word.endsWith("e")) {
      i++;
      continue;
    }
    if (patternPending && !word.startsWith("-")) {
      patternPending = false;
      continue;
    }
    for (const candidate of pathCandidates(word)) if (isSensitivePath(candidate)) return candidate;
    if (interpreter && /[('"]/.test(word)) {
      for (const literal of stringLiterals(word)) if (isSensitivePath(literal)) return literal;
    }
  }
  return undefined;
}

/** What a command line may hold, by cheap tests before it is parsed. */
interface Wanted {
  destructive: boolean;
  path: boolean;
  domains: boolean;
}

function wantedIn(text: string, findings: Findings): Wanted {
  const lower = text.toLowerCase();
  return {
    destructive: findings.destructive === undefined && mayBeDestructiveCommand(text, lower),
    path: findings.path === undefined && mayNameSensitivePath(text),
    domains: lower.includes("curl") || lower.includes("wget"),
  };
}

function analyzeCommands(commands: Command[], findings: Findings, wanted: Wanted): void {
  const sqlPipelines = new Set<number>();
  for (const command of commands) {
    if (SQL_CLIENTS.has(command.name)) sqlPipelines.add(command.pipeline);
  }
  for (const command of commands) {
    if (wanted.destructive && findings.destructive === undefined) {
      findings.destructive = destructiveCommand(command);
      if (findings.destructive === undefined && sqlPipelines.has(command.pipeline)) {
        for (const text of [...command.words.slice(1), ...command.heredocs]) {
          findings.destructive = destructiveSql(text);
          if (findings.destructive !== undefined) break;
        }
      }
    }
    if (wanted.path && findings.path === undefined) findings.path = commandPath(command);
    if (wanted.domains && (command.name === "curl" || command.name === "wget")) {
      for (const url of fetchCommandUrls(command.name, command.words)) {
        addDomain(findings, domainOf(url, "http"));
      }
    }
  }
}

function analyzeCommandLine(text: string, findings: Findings): void {
  const wanted = wantedIn(text, findings);
  if (wanted.destructive || wanted.path || wanted.domains) {
    analyzeCommands(shellCommands(text), findings, wanted);
  }
}

function analyzeArgument(entry: Entry, context: CallContext, findings: Findings): void {
  const key = entry.key?.toLowerCase() ?? "";
  if (entry.argv !== undefined) {
    const wanted = wantedIn(entry.argv.join(" "), findings);
    if (wanted.destructive || wanted.path || wanted.domains) {
      analyzeCommands(argvCommands(entry.argv), findings, wanted);
    }
    return;
  }
  const text = entry.text;
  if (text === "") return;
  // An element of an argument vector was analyzed with its vector.
  if (Array.isArray(entry.parent) && entry.key !== undefined && isArgv(entry.key, entry.parent)) {
    return;
  }

  const plain = entry.key === undefined;
  if (
    SHELL_KEYS.has(key) ||
    (context.category === "code_exec" && (plain || CODE_EXEC_SHELL_KEYS.has(key)))
  ) {
    analyzeCommandLine(text, findings);
  }
  if (
    findings.destructive === undefined &&
    ((SQL_KEYS.has(key) && context.category !== "web_fetch") ||
      (context.databaseTool && !DESCRIPTIVE_KEYS.has(key)))
  ) {
    findings.destructive = destructiveSql(text);
  }
  if (findings.path === undefined) {
    const pathValued = PATH_KEYS.has(key) || (key === "pattern" && context.globTool) ||
      (plain && (context.category === "file_read" || context.category === "file_write"));
    if (pathValued && isSensitivePath(text)) findings.path = text.trim();
    else if (context.category === "file_write" && PATCH_HINT.test(text)) {
      findings.path = patchPaths(text).find(isSensitivePath);
    }
  }
  if (context.category === "web_fetch" || context.toolType === "mcp") {
    const mcp = context.toolType === "mcp";
    const reached: (DomainFinding | undefined)[] = [];
    if (URL_KEYS.has(key) || (plain && context.category === "web_fetch")) {
      reached.push(domainOf(text, "https"));
    } else if (context.category === "web_fetch" && key === "prompt" && !context.hasUrlKey) {
      for (const url of urlsInText(text)) reached.push(domainOf(url));
    } else if (mcp && !/\s/.test(text.trim())) reached.push(domainOf(text));
    for (const domain of reached) {
      if (domain !== undefined && (!mcp || MCP_URL_SCHEMES.has(domain.scheme))) {
        addDomain(findings, domain);
      }
    }
  }
}

interface CredentialScan {
  first?: RiskFinding;
  /** The document with its secrets redacted, when some were found and redaction is on. */
  redacted?: string;
}

/**
 * The document's first secret and, with `redactSecrets`, the document with
 * its secrets redacted. `secrets` is the keyword pass to use when one pass
 * served several documents (the call's short texts).
 */
function scanCredentials(
  document: Document,
  redactSecrets: boolean,
  secrets = new CredentialDocument(document.raw),
): CredentialScan {
  if (secrets.empty) return {};
  let first: RiskFinding | undefined;
  const found: [Entry, SecretMatch[]][] = [];
  for (const entry of document.entries) {
    if (entry.argv !== undefined) continue;
    const matches = secrets.scan(entry.text, entry.key, redactSecrets);
    if (matches.length === 0) continue;
    if (first === undefined) {
      const match = matches[0]!;
      first = {
        flag: "credential_detected",
        evidence: credentialEvidence(match.label, match.secret),
      };
    }
    if (!redactSecrets) break;
    found.push([entry, matches]);
  }
  if (found.length === 0) return { first };
  if (!document.json) return { first, redacted: redact(document.raw, found[0]![1]) };
  let root = document.root;
  for (const [entry, matches] of found) {
    const value = redact(entry.text, matches);
    if (entry.parent === undefined) root = value;
    else (entry.parent as Record<string | number, unknown>)[entry.slot] = value;
  }
  return { first, redacted: JSON.stringify(root) };
}

function callContext(input: DetectInput, args: Document | undefined): CallContext {
  const root = args?.root;
  const hasUrlKey = root !== null && typeof root === "object" && !Array.isArray(root) &&
    Object.keys(root).some((key) => URL_KEYS.has(key.toLowerCase()));
  return {
    category: input.category,
    toolType: input.toolType,
    globTool: /glob/i.test(input.toolName),
    databaseTool: input.toolType === "mcp" && DATABASE_TOOL.test(input.toolName),
    hasUrlKey,
  };
}

/**
 * Detects risk flags and external domains in one tool call and, with
 * `redact`, replaces each secret found in its arguments, result and other
 * texts by `[REDACTED:<kind>]` (JSON stays valid JSON). Never throws on odd
 * input.
 */
export function detectToolCall(input: DetectInput, options: { redact: boolean }): Detection {
  const findings: Findings = { domains: [], domainKeys: new Set() };
  const args = input.arguments === undefined || input.arguments === ""
    ? undefined
    : decode(input.arguments, true);
  const context = callContext(input, args);

  let credential: RiskFinding | undefined;
  let argumentsOut = input.arguments;
  if (args !== undefined) {
    for (const entry of args.entries) analyzeArgument(entry, context, findings);
    const scan = scanCredentials(args, options.redact);
    credential = scan.first;
    if (scan.redacted !== undefined) argumentsOut = scan.redacted;
  }
  if (credential === undefined && input.toolName !== "") {
    credential = scanCredentials(decode(input.toolName, false), false).first;
  }
  let resultOut = input.result;
  if (
    input.result !== undefined && input.result !== "" &&
    (credential === undefined || options.redact)
  ) {
    const scan = scanCredentials(decode(input.result, false), options.redact);
    credential ??= scan.first;
    if (scan.redacted !== undefined) resultOut = scan.redacted;
  }
  let textsOut: CallTexts | undefined;
  if (input.texts !== undefined) {
    textsOut = {};
    const texts = Object.entries(input.texts).filter((entry): entry is [CallTextName, string] =>
      typeof entry[1] === "string"
    );
    // A failed Codex call's error message is its output: scanned once.
    const unscanned = texts.filter(([, text]) => text !== "" && text !== input.result);
    // One keyword pass over all the short texts: most calls have none worth a rule.
    const secrets = unscanned.length > 0 && (credential === undefined || options.redact)
      ? new CredentialDocument(unscanned.map(([, text]) => text).join("\n"))
      : undefined;
    for (const [name, text] of texts) {
      let out = text;
      if (text === input.result) out = resultOut!;
      else if (
        secrets !== undefined && !secrets.empty && text !== "" &&
        (credential === undefined || options.redact)
      ) {
        const scan = scanCredentials(decode(text, false), options.redact, secrets);
        credential ??= scan.first;
        if (scan.redacted !== undefined) out = scan.redacted;
      }
      textsOut[name] = out;
    }
  }

  const flags: RiskFinding[] = [];
  if (credential !== undefined) flags.push(credential);
  if (findings.destructive !== undefined) {
    flags.push({ flag: "destructive_operation", evidence: findings.destructive });
  }
  if (findings.path !== undefined) flags.push({ flag: "sensitive_path", evidence: findings.path });

  const detection: Detection = { flags, domains: findings.domains };
  if (argumentsOut !== undefined) detection.arguments = argumentsOut;
  if (resultOut !== undefined) detection.result = resultOut;
  if (textsOut !== undefined) detection.texts = textsOut;
  return detection;
}
