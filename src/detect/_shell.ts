/**
 * A small, forgiving reader of POSIX shell commands, enough to see which
 * programs a command line runs and with which words: quoting, escapes, `&&`,
 * `||`, `;`, `|`, subshells, `$(…)`, backticks, redirections, here-documents,
 * and the wrappers agents put in front (`sudo`, `env X=1`, `sh -c '…'`,
 * `xargs`, `timeout`, …). It never throws; text it cannot make sense of simply
 * yields fewer commands.
 *
 * @module
 */

/** One simple command as written: its words unquoted, wrappers still in place. */
interface SimpleCommand {
  words: string[];
  /** Commands joined by `|` share a pipeline number. */
  pipeline: number;
  /** Bodies of here-documents fed to the command. */
  heredocs: string[];
}

/** A program the command line runs, with its wrappers removed. */
export interface Command {
  /** Base name of the program (`/usr/bin/rm` → `rm`). */
  name: string;
  /** Its words, program first, unquoted. */
  words: string[];
  /** True when `xargs` supplies further arguments to it. */
  viaXargs: boolean;
  /** Commands joined by `|` share a pipeline number. */
  pipeline: number;
  /** Bodies of here-documents fed to it. */
  heredocs: string[];
  /** A shell with no script: it runs what it reads from standard input. */
  readsScript: boolean;
}

const MAX_DEPTH = 6;
let pipelineCounter = 0;

const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*(?:\[[^\]]*\])?\+?=/;
const DIGITS = /^\d+$/;
/** A run of characters with no meaning to the shell. */
const PLAIN = /[^\s\\'"`$<>&|;()#]+/y;
/** A redirection operator word as the reader emits it (`>`, `2>>`, `<<`, `&>`, …). */
const REDIRECTION = /^(?:\d*(?:>>|>\||>&|<<<|<<-|<<|<>|<&|>|<)|&>>?)$/;
const REDIRECT_OPERATORS = [">>", ">|", ">&", "<<<", "<<-", "<<", "<>", "<&", ">", "<"];
/** Words that may precede a command without being it. */
const PREFIX_WORDS = new Set([
  "!",
  "{",
  "}",
  "if",
  "then",
  "else",
  "elif",
  "do",
  "while",
  "until",
  "exec",
  "command",
  "builtin",
  "nohup",
  "noglob",
  "fi",
  "done",
  "esac",
]);
const SHELLS = new Set(["sh", "bash", "zsh", "dash", "ksh", "ash", "mksh", "fish"]);

/** Options that take a value, for each wrapper whose options are skipped. */
const WRAPPER_VALUE_OPTIONS: Record<string, Set<string>> = {
  sudo: new Set([
    "-u",
    "-g",
    "-C",
    "-h",
    "-p",
    "-r",
    "-t",
    "-U",
    "-D",
    "-R",
    "-T",
    "--user",
    "--group",
    "--close-from",
    "--host",
    "--prompt",
    "--role",
    "--type",
    "--other-user",
    "--chdir",
    "--chroot",
    "--command-timeout",
  ]),
  doas: new Set(["-u", "-C"]),
  run0: new Set(["-u", "-g", "-D", "--user", "--group", "--chdir", "--unit", "--property"]),
  nice: new Set(["-n", "--adjustment"]),
  ionice: new Set(["-c", "-n", "-p", "-P", "-u", "--class", "--classdata"]),
  timeout: new Set(["-s", "-k", "--signal", "--kill-after"]),
  stdbuf: new Set(["-i", "-o", "-e", "--input", "--output", "--error"]),
  time: new Set(["-f", "-o", "--format", "--output"]),
  watch: new Set(["-n", "--interval"]),
  xargs: new Set([
    "-I",
    "-n",
    "-P",
    "-L",
    "-d",
    "-E",
    "-s",
    "-a",
    "--max-args",
    "--max-procs",
    "--max-lines",
    "--delimiter",
    "--eof",
    "--max-chars",
    "--arg-file",
    "--replace",
    "--process-slot-var",
  ]),
  busybox: new Set(),
  caffeinate: new Set(["-t", "-w"]),
};
/** Package runners: `npx prisma …`, `bundle exec rails …` (the words that make up the runner). */
const RUNNERS: Record<string, string[]> = {
  npx: [],
  bunx: [],
  pnpx: [],
  bundle: ["exec"],
  pnpm: ["exec", "dlx"],
  yarn: ["dlx", "exec"],
  uv: ["run"],
  uvx: [],
  poetry: ["run"],
  pipenv: ["run"],
};
const RUNNER_VALUE_OPTIONS = new Set(["-p", "--package", "--with", "--from", "--python"]);
/** Wrappers that take one positional argument before the command. */
const WRAPPER_POSITIONALS: Record<string, number> = { timeout: 1, chroot: 1, flock: 1 };
const SSH_VALUE_OPTIONS = new Set(
  [
    "b",
    "c",
    "D",
    "E",
    "e",
    "F",
    "I",
    "i",
    "J",
    "L",
    "l",
    "m",
    "O",
    "o",
    "p",
    "Q",
    "R",
    "S",
    "W",
    "w",
    "B",
  ],
);
const DOCKER_EXEC_VALUE_OPTIONS = new Set([
  "-e",
  "--env",
  "-u",
  "--user",
  "-w",
  "--workdir",
  "--env-file",
  "--detach-keys",
]);
const GIT_VALUE_OPTIONS = new Set([
  "-C",
  "-c",
  "--git-dir",
  "--work-tree",
  "--namespace",
  "--exec-path",
  "--config-env",
  "--super-prefix",
]);

/** The base name of a program word: `/usr/bin/rm` → `rm`. */
export function programName(word: string): string {
  const slash = word.lastIndexOf("/");
  return slash >= 0 ? word.slice(slash + 1) : word;
}

/** Index of the `)` closing a group opened just before `start`, or the text's length. */
function findClose(src: string, start: number): number {
  let depth = 1;
  const n = src.length;
  for (let j = start; j < n; j++) {
    const c = src[j];
    if (c === "\\") j++;
    else if (c === "'") {
      const end = src.indexOf("'", j + 1);
      if (end < 0) return n;
      j = end;
    } else if (c === '"') {
      j++;
      while (j < n && src[j] !== '"') j += src[j] === "\\" ? 2 : 1;
    } else if (c === "(") depth++;
    else if (c === ")" && --depth === 0) return j;
  }
  return n;
}

function findBrace(src: string, start: number): number {
  let depth = 1;
  for (let j = start; j < src.length; j++) {
    const c = src[j];
    if (c === "{") depth++;
    else if (c === "}" && --depth === 0) return j;
  }
  return src.length;
}

function findBacktick(src: string, start: number): number {
  for (let j = start; j < src.length; j++) {
    if (src[j] === "\\") j++;
    else if (src[j] === "`") return j;
  }
  return src.length;
}

/** Splits shell text into simple commands; substitutions become commands too. */
class ShellReader {
  #src: string;
  #out: SimpleCommand[];
  #depth: number;
  #i = 0;
  #word = "";
  #inWord = false;
  #command: SimpleCommand;
  #pending: { delimiter: string; stripTabs: boolean; command: SimpleCommand }[] = [];

  constructor(src: string, out: SimpleCommand[], depth: number) {
    this.#src = src;
    this.#out = out;
    this.#depth = depth;
    this.#command = { words: [], pipeline: ++pipelineCounter, heredocs: [] };
  }

  run(): void {
    const src = this.#src;
    const n = src.length;
    while (this.#i < n) {
      const c = src[this.#i]!;
      const next = src[this.#i + 1];
      switch (c) {
        case " ":
        case "\t":
        case "\r":
          this.#endWord();
          this.#i++;
          break;
        case "\n":
          this.#endWord();
          this.#i++;
          this.#readHeredocs();
          this.#endCommand(false);
          break;
        case "#":
          if (this.#inWord) this.#append(c, 1);
          else {
            const end = src.indexOf("\n", this.#i);
            this.#i = end < 0 ? n : end;
          }
          break;
        case "\\":
          if (next === "\n") this.#i += 2;
          else if (next === undefined) this.#i++;
          else this.#append(next, 2);
          break;
        case "'": {
          const end = src.indexOf("'", this.#i + 1);
          const stop = end < 0 ? n : end;
          this.#append(src.slice(this.#i + 1, stop), stop + 1 - this.#i);
          break;
        }
        case '"':
          this.#doubleQuoted();
          break;
        case "`":
          this.#backtick();
          break;
        case "$":
          this.#dollar();
          break;
        case "<":
        case ">":
          this.#redirect();
          break;
        case "&":
          if (next === "&") {
            this.#endCommand(false);
            this.#i += 2;
          } else if (next === ">") {
            this.#endWord();
            const op = src.startsWith("&>>", this.#i) ? "&>>" : "&>";
            this.#command.words.push(op);
            this.#i += op.length;
          } else {
            this.#endCommand(false);
            this.#i++;
          }
          break;
        case "|":
          if (next === "|") {
            this.#endCommand(false);
            this.#i += 2;
          } else {
            this.#endCommand(true);
            this.#i += next === "&" ? 2 : 1;
          }
          break;
        case ";":
        case "(":
        case ")":
          this.#endCommand(false);
          this.#i++;
          break;
        default: {
          PLAIN.lastIndex = this.#i;
          const run = PLAIN.exec(src);
          this.#append(run === null ? c : run[0], run === null ? 1 : run[0].length);
        }
      }
    }
    this.#endCommand(false);
  }

  #append(text: string, advance: number): void {
    this.#word += text;
    this.#inWord = true;
    this.#i += advance;
  }

  #endWord(): void {
    if (this.#inWord) {
      this.#command.words.push(this.#word);
      this.#word = "";
      this.#inWord = false;
    }
  }

  #endCommand(samePipeline: boolean): void {
    this.#endWord();
    const command = this.#command;
    if (command.words.length > 0 || command.heredocs.length > 0) this.#out.push(command);
    if (command.words.length > 0 || !samePipeline) {
      this.#command = {
        words: [],
        pipeline: samePipeline ? command.pipeline : ++pipelineCounter,
        heredocs: [],
      };
    }
  }

  #nested(text: string): void {
    if (this.#depth < MAX_DEPTH && text.trim() !== "") {
      new ShellReader(text, this.#out, this.#depth + 1).run();
    }
  }

  #doubleQuoted(): void {
    const src = this.#src;
    const n = src.length;
    this.#inWord = true;
    this.#i++;
    while (this.#i < n) {
      const c = src[this.#i]!;
      if (c === '"') {
        this.#i++;
        return;
      }
      if (c === "\\") {
        const next = src[this.#i + 1];
        if (next === "\n") this.#i += 2;
        else if (next === "$" || next === "`" || next === '"' || next === "\\") {
          this.#append(next, 2);
        } else this.#append(c, 1);
      } else if (c === "$") this.#dollar();
      else if (c === "`") this.#backtick();
      else this.#append(c, 1);
    }
  }

  #backtick(): void {
    const end = findBacktick(this.#src, this.#i + 1);
    this.#nested(this.#src.slice(this.#i + 1, end));
    this.#append(this.#src.slice(this.#i, end + 1), end + 1 - this.#i);
  }

  #dollar(): void {
    const src = this.#src;
    const i = this.#i;
    const next = src[i + 1];
    if (next === "(") {
      if (src[i + 2] === "(") {
        const end = findClose(src, i + 3);
        const close = src[end + 1] === ")" ? end + 1 : end;
        this.#append(src.slice(i, close + 1), close + 1 - i);
        return;
      }
      const end = findClose(src, i + 2);
      this.#nested(src.slice(i + 2, end));
      this.#append(src.slice(i, end + 1), end + 1 - i);
    } else if (next === "{") {
      const end = findBrace(src, i + 2);
      this.#append(src.slice(i, end + 1), end + 1 - i);
    } else if (next === "'") {
      let j = i + 2;
      while (j < src.length && src[j] !== "'") j += src[j] === "\\" ? 2 : 1;
      this.#append(src.slice(i + 2, j), j + 1 - i);
    } else this.#append("$", 1);
  }

  #redirect(): void {
    const src = this.#src;
    if (src[this.#i + 1] === "(") {
      // Process substitution: <(…) or >(…).
      this.#endWord();
      const end = findClose(src, this.#i + 2);
      this.#nested(src.slice(this.#i + 2, end));
      this.#append(src.slice(this.#i, end + 1), end + 1 - this.#i);
      this.#endWord();
      return;
    }
    let prefix = "";
    if (this.#inWord && DIGITS.test(this.#word)) {
      prefix = this.#word;
      this.#word = "";
      this.#inWord = false;
    } else this.#endWord();
    const op = REDIRECT_OPERATORS.find((candidate) => src.startsWith(candidate, this.#i))!;
    this.#command.words.push(prefix + op);
    this.#i += op.length;
    if (op === "<<" || op === "<<-") {
      while (src[this.#i] === " " || src[this.#i] === "\t") this.#i++;
      const start = this.#i;
      while (this.#i < src.length && !/[\s;&|<>()]/.test(src[this.#i]!)) this.#i++;
      const delimiter = src.slice(start, this.#i).replace(/["'\\]/g, "");
      if (delimiter !== "") {
        this.#pending.push({ delimiter, stripTabs: op === "<<-", command: this.#command });
      }
    }
  }

  #readHeredocs(): void {
    const src = this.#src;
    for (const { delimiter, stripTabs, command } of this.#pending) {
      const lines: string[] = [];
      while (this.#i < src.length) {
        const newline = src.indexOf("\n", this.#i);
        const end = newline < 0 ? src.length : newline;
        const line = src.slice(this.#i, end);
        this.#i = end + 1;
        if ((stripTabs ? line.replace(/^\t+/, "") : line) === delimiter) break;
        lines.push(line);
      }
      command.heredocs.push(lines.join("\n"));
    }
    this.#pending = [];
  }
}

/** Skips options (and their values) starting at `i`; returns the first operand's index. */
function skipOptions(words: string[], i: number, valueOptions: Set<string>): number {
  while (i < words.length) {
    const word = words[i]!;
    if (word === "--") return i + 1;
    if (!word.startsWith("-") || word === "-") return i;
    if (word.startsWith("--")) {
      i += !word.includes("=") && valueOptions.has(word) ? 2 : 1;
    } else {
      const short = word.slice(0, 2);
      i += valueOptions.has(short) && word.length === 2 ? 2 : 1;
    }
  }
  return i;
}

/** Removes git's global options so the subcommand follows `git`. */
function gitWords(words: string[]): string[] {
  const out = [words[0]!];
  let i = 1;
  while (i < words.length) {
    const word = words[i]!;
    if (!word.startsWith("-")) break;
    i += GIT_VALUE_OPTIONS.has(word) ? 2 : 1;
  }
  for (; i < words.length; i++) out.push(words[i]!);
  return out;
}

/** Turns one simple command into the commands it runs. */
function unwrap(
  words: string[],
  pipeline: number,
  heredocs: string[],
  depth: number,
  out: Command[],
): void {
  let i = 0;
  let viaXargs = false;
  for (;;) {
    while (i < words.length && (ASSIGNMENT.test(words[i]!) || PREFIX_WORDS.has(words[i]!))) i++;
    if (i >= words.length) return;
    const name = programName(words[i]!);
    const valueOptions = WRAPPER_VALUE_OPTIONS[name];
    if (valueOptions !== undefined) {
      i = skipOptions(words, i + 1, valueOptions) + (WRAPPER_POSITIONALS[name] ?? 0);
      if (name === "xargs") viaXargs = true;
      continue;
    }
    const runner = RUNNERS[name];
    if (runner !== undefined && (runner.length === 0 || runner.includes(words[i + 1] ?? ""))) {
      i = skipOptions(words, i + (runner.length === 0 ? 1 : 2), RUNNER_VALUE_OPTIONS);
      continue;
    }
    if (name in WRAPPER_POSITIONALS) {
      i = skipOptions(words, i + 1, new Set()) + WRAPPER_POSITIONALS[name]!;
      continue;
    }
    if (name === "env") {
      i++;
      while (i < words.length) {
        const word = words[i]!;
        if (ASSIGNMENT.test(word)) i++;
        else if (word === "--") {
          i++;
          break;
        } else if (
          word === "-S" || word === "--split-string" || word.startsWith("--split-string=")
        ) {
          const value = word.includes("=") ? word.slice(word.indexOf("=") + 1) : words[i + 1] ?? "";
          const split = value.split(/\s+/).filter((part) => part !== "");
          words = [
            ...words.slice(0, i),
            ...split,
            ...words.slice(i + (word.includes("=") ? 1 : 2)),
          ];
        } else if (["-u", "--unset", "-C", "--chdir"].includes(word)) i += 2;
        else if (word.startsWith("-")) i++;
        else break;
      }
      continue;
    }
    break;
  }
  const name = programName(words[i]!);
  const rest = words.slice(i);
  const nested = (text: string) => {
    if (depth < MAX_DEPTH) expand(text, depth + 1, out);
  };

  if (SHELLS.has(name)) {
    let j = i + 1;
    let runsString = false;
    let operand = -1;
    while (j < words.length) {
      const word = words[j]!;
      if (REDIRECTION.test(word)) {
        // `bash <<< "script"` runs the here-string; other redirections name files.
        if (word.endsWith("<<<")) nested(words[j + 1] ?? "");
        j += word.endsWith("<<") || word.endsWith("<<-") ? 1 : 2;
      } else if (operand >= 0 || word === "--" || word === "-") j++;
      else if (["-o", "+o", "-O", "+O", "--rcfile", "--init-file"].includes(word)) j += 2;
      else if (/^[-+][A-Za-z]+$/.test(word)) {
        if (word[0] === "-" && word.includes("c")) runsString = true;
        j++;
      } else if (word.startsWith("--")) j++;
      else {
        operand = j;
        j++;
      }
    }
    if (runsString) {
      if (operand >= 0) nested(words[operand]!);
      return;
    }
    const readsScript = operand < 0;
    out.push({ name, words: rest, viaXargs, pipeline, heredocs, readsScript });
    if (readsScript) {
      for (const body of heredocs) nested(body);
    }
    return;
  }
  if (name === "eval") {
    nested(rest.slice(1).join(" "));
    return;
  }
  if (name === "su") {
    for (let j = 1; j < rest.length; j++) {
      const word = rest[j]!;
      if (word === "-c" || word === "--command") nested(rest[j + 1] ?? "");
      else if (word.startsWith("--command=")) nested(word.slice("--command=".length));
    }
    return;
  }

  out.push({
    name,
    words: name === "git" ? gitWords(rest) : rest,
    viaXargs,
    pipeline,
    heredocs,
    readsScript: false,
  });

  if (depth >= MAX_DEPTH) return;
  if (name === "find") {
    for (let j = 1; j < rest.length; j++) {
      if (!["-exec", "-execdir", "-ok", "-okdir"].includes(rest[j]!)) continue;
      let end = j + 1;
      while (end < rest.length && rest[end] !== ";" && rest[end] !== "+") end++;
      unwrap(rest.slice(j + 1, end), pipeline, [], depth + 1, out);
      j = end;
    }
  } else if (name === "ssh") {
    let j = 1;
    while (j < rest.length && rest[j]!.startsWith("-")) {
      const word = rest[j]!;
      j += word.length === 2 && SSH_VALUE_OPTIONS.has(word[1]!) ? 2 : 1;
    }
    const remote = rest.slice(j + 1).join(" ");
    if (remote !== "") nested(remote);
  } else if ((name === "docker" || name === "podman") && rest[1] === "exec") {
    const j = skipOptions(rest, 2, DOCKER_EXEC_VALUE_OPTIONS) + 1;
    if (j < rest.length) unwrap(rest.slice(j), pipeline, [], depth + 1, out);
  } else if ((name === "kubectl" || name === "oc") && rest.includes("exec")) {
    const dashes = rest.indexOf("--");
    if (dashes > 0) unwrap(rest.slice(dashes + 1), pipeline, [], depth + 1, out);
  }
}

function expand(source: string, depth: number, out: Command[]): void {
  const simple: SimpleCommand[] = [];
  new ShellReader(source, simple, depth).run();
  const start = out.length;
  for (const command of simple) {
    unwrap(command.words, command.pipeline, command.heredocs, depth, out);
  }
  // `echo "…" | sh`: the shell runs what the other commands of its pipeline print.
  for (let k = start; k < out.length; k++) {
    const shell = out[k]!;
    if (!shell.readsScript || depth >= MAX_DEPTH) continue;
    for (let m = start; m < out.length; m++) {
      const feeder = out[m]!;
      if (
        feeder.pipeline === shell.pipeline && (feeder.name === "echo" || feeder.name === "printf")
      ) {
        expand(feeder.words.slice(1).join(" "), depth + 1, out);
      }
    }
  }
}

/** The commands a shell command line runs, in order, wrappers removed. */
export function shellCommands(source: string): Command[] {
  const out: Command[] = [];
  expand(source, 0, out);
  return out;
}

/**
 * The commands an argument vector runs, such as Codex's
 * `["bash", "-lc", "git status"]`; a single element is read as a command line.
 */
export function argvCommands(argv: string[]): Command[] {
  if (argv.length === 1) return shellCommands(argv[0]!);
  const out: Command[] = [];
  unwrap(argv, ++pipelineCounter, [], 0, out);
  return out;
}
