/**
 * What the synthetic agents do: their tools, how often they use them, how
 * long the tools take and the arguments they pass, per agent, in each agent's
 * own tool names and argument shapes. Argument texts are built once here so
 * that the generator only picks among them.
 */

/** One tool an agent calls. */
export interface ToolSpec {
  name: string;
  /** Relative frequency among the agent's tools. */
  weight: number;
  /** Typical run time; actual durations spread around it. */
  medianMs: number;
  /** Argument texts (JSON) to pick from. */
  args: readonly string[];
  /** Argument texts used rarely: destructive commands, secrets, sensitive paths. */
  risky?: readonly string[];
  /** Claude Code `tool_parameters` beside each of `args` (same index), for Bash. */
  params?: readonly string[];
  /** Same for `risky`. */
  riskyParams?: readonly string[];
  /** The MCP server, for MCP tools. */
  mcpServer?: string;
  /** `[message, type]` of a failure. */
  error: readonly [string, string];
  /** Typical result size in bytes. */
  resultBytes: number;
}

const REPOS = ["shop", "api", "web", "billing", "infra", "mobile"] as const;
const FILES = [
  "src/index.ts",
  "src/server.ts",
  "src/routes/orders.ts",
  "src/lib/auth.ts",
  "src/db/schema.sql",
  "tests/orders_test.ts",
  "README.md",
  "package.json",
  "src/main.rs",
  "app/models.py",
  "docker-compose.yml",
  "Makefile",
] as const;

/** Ordinary shell commands, curl and wget among them. */
const SHELL_COMMANDS: readonly string[] = [
  "npm test",
  "npm run build",
  "npm run lint -- --fix",
  "git status",
  "git diff --stat",
  "git log --oneline -n 20",
  "ls -la src",
  "cargo test",
  "cargo clippy --all-targets",
  "pytest -q tests",
  "go test ./...",
  "rg -n TODO src",
  "docker compose ps",
  "make lint",
  "npm install",
  "pip install -r requirements.txt",
  "git clone https://github.com/acme/shared-config.git",
  ...REPOS.map((r) => `curl -sSL https://api.github.com/repos/acme/${r}/pulls?state=open`),
  "curl -s https://registry.npmjs.org/zod | jq .version",
  "curl -fsSL https://raw.githubusercontent.com/acme/web/main/README.md -o /tmp/README.md",
  "wget -q https://pypi.org/simple/requests/ -O - | head",
  "npm test && curl -sSL https://api.github.com/repos/acme/shop/actions/runs?per_page=5",
  "curl -s http://localhost:8080/healthz",
];

/** Rare commands the risk rules should flag (the key is AWS's documented example key). */
const RISKY_COMMANDS: readonly string[] = [
  "rm -rf build",
  "rm -rf node_modules dist",
  "git push --force origin main",
  "git reset --hard origin/main",
  "cat .env",
  "export AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE && aws s3 ls s3://acme-backups",
];

const URLS: readonly string[] = [
  "https://docs.github.com/en/rest/pulls/pulls",
  "https://developer.mozilla.org/en-US/docs/Web/API/Fetch_API",
  "https://docs.python.org/3/library/asyncio-task.html",
  "https://stackoverflow.com/questions/4901633/manually-trigger-a-github-action",
  "https://pkg.go.dev/net/http",
  "https://docs.deno.com/runtime/fundamentals/testing/",
  "https://www.npmjs.com/package/zod",
  "https://docs.rs/tokio/latest/tokio/",
];

const QUERIES: readonly string[] = [
  "vitest mock timers example",
  "postgres upsert on conflict returning",
  "rust tokio select cancellation safety",
  "github actions cache node_modules",
  "sqlite wal checkpoint starvation",
];

function paths(home: string): string[] {
  const out: string[] = [];
  for (const repo of REPOS) for (const file of FILES) out.push(`${home}/${repo}/${file}`);
  return out;
}

const enc = JSON.stringify;

function bashParams(command: string, description: string): string {
  const space = command.indexOf(" ");
  return enc({
    "bash_command": space < 0 ? command : command.slice(0, space),
    "full_command": command,
    "timeout": 120000,
    "description": description,
  });
}

const claudePaths = paths("/home/dev");

/** Claude Code's tools and `tool_input` shapes. */
export const claudeTools: readonly ToolSpec[] = [
  {
    name: "Read",
    weight: 25,
    medianMs: 6,
    args: claudePaths.map((p) => enc({ "file_path": p })),
    risky: [enc({ "file_path": "/home/dev/shop/.env" })],
    error: ["File does not exist.", "Error:ENOENT"],
    resultBytes: 4000,
  },
  {
    name: "Bash",
    weight: 20,
    medianMs: 900,
    args: SHELL_COMMANDS.map((c) => enc({ "command": c, "description": "Run " + c.split(" ")[0] })),
    params: SHELL_COMMANDS.map((c) => bashParams(c, "Run " + c.split(" ")[0])),
    risky: RISKY_COMMANDS.map((c) => enc({ "command": c, "description": "Clean up" })),
    riskyParams: RISKY_COMMANDS.map((c) => bashParams(c, "Clean up")),
    error: ["Command failed with exit code 1", "ShellError"],
    resultBytes: 2500,
  },
  {
    name: "Edit",
    weight: 15,
    medianMs: 25,
    args: claudePaths.map((p) =>
      enc({ "file_path": p, "old_string": "const limit = 50;", "new_string": "const limit = 100;" })
    ),
    error: ["String to replace not found in file.", "Error"],
    resultBytes: 300,
  },
  {
    name: "Grep",
    weight: 10,
    medianMs: 60,
    args: ["TODO", "fetchOrders", "class .*Error", 'import .* from "zod"'].map((p) =>
      enc({ "pattern": p, "path": "src", "output_mode": "content" })
    ),
    error: ["Invalid regular expression", "Error"],
    resultBytes: 1800,
  },
  {
    name: "Glob",
    weight: 7,
    medianMs: 30,
    args: ["**/*.ts", "src/**/*_test.ts", "**/*.sql", "**/Cargo.toml"].map((p) =>
      enc({ "pattern": p })
    ),
    error: ["Glob pattern timed out", "Error"],
    resultBytes: 900,
  },
  {
    name: "Write",
    weight: 5,
    medianMs: 15,
    args: claudePaths.map((p) =>
      enc({ "file_path": p, "content": "export const enabled = true;\n" })
    ),
    error: ["Permission denied", "Error:EACCES"],
    resultBytes: 120,
  },
  {
    name: "WebFetch",
    weight: 5,
    medianMs: 1600,
    args: URLS.map((u) => enc({ "url": u, "prompt": "Summarize the relevant section" })),
    error: ["Request failed with status code 404", "AxiosError"],
    resultBytes: 12000,
  },
  {
    name: "WebSearch",
    weight: 3,
    medianMs: 2200,
    args: QUERIES.map((q) => enc({ "query": q })),
    error: ["Search failed", "Error"],
    resultBytes: 6000,
  },
  {
    name: "TodoWrite",
    weight: 4,
    medianMs: 4,
    args: [enc({ "todos": [{ "content": "Fix the flaky test", "status": "in_progress" }] })],
    error: ["Invalid todo list", "Error"],
    resultBytes: 200,
  },
  {
    name: "mcp__github__create_issue",
    weight: 2,
    medianMs: 1100,
    mcpServer: "github",
    args: REPOS.map((r) => enc({ "owner": "acme", "repo": r, "title": "Flaky test in CI" })),
    error: ["MCP error -32603: Validation Failed", "McpError"],
    resultBytes: 900,
  },
  {
    name: "mcp__github__list_pull_requests",
    weight: 2,
    medianMs: 800,
    mcpServer: "github",
    args: REPOS.map((r) => enc({ "owner": "acme", "repo": r, "state": "open" })),
    error: ["MCP error -32001: Request timed out", "McpError"],
    resultBytes: 5000,
  },
  {
    name: "mcp__linear__create_issue",
    weight: 1,
    medianMs: 700,
    mcpServer: "linear",
    args: [enc({ "team": "ENG", "title": "Follow up on checkout latency" })],
    error: ["MCP error -32603: Unauthorized", "McpError"],
    resultBytes: 400,
  },
  {
    name: "mcp__postgres__query",
    weight: 1,
    medianMs: 150,
    mcpServer: "postgres",
    args: [
      enc({ "sql": "SELECT count(*) FROM orders WHERE created_at > now() - interval '1 day'" }),
      enc({ "sql": "SELECT id, status FROM payments ORDER BY id DESC LIMIT 20" }),
    ],
    error: ['MCP error -32603: relation "payment" does not exist', "McpError"],
    resultBytes: 700,
  },
];

const codexPaths = paths("/home/dev");

function codexShell(command: string, repo: string): string {
  return enc({
    "command": ["bash", "-lc", command],
    "workdir": `/home/dev/${repo}`,
    "timeout_ms": 120000,
  });
}

/** Codex CLI's tools and `arguments` shapes. */
export const codexTools: readonly ToolSpec[] = [
  {
    name: "shell",
    weight: 60,
    medianMs: 1200,
    args: SHELL_COMMANDS.map((c, i) => codexShell(c, REPOS[i % REPOS.length]!)),
    risky: RISKY_COMMANDS.map((c) => codexShell(c, "infra")),
    error: ["", ""],
    resultBytes: 2000,
  },
  {
    name: "apply_patch",
    weight: 22,
    medianMs: 40,
    args: codexPaths.map((p) =>
      enc({
        "input":
          `*** Begin Patch\n*** Update File: ${p}\n@@\n-const retries = 1;\n+const retries = 3;\n*** End Patch\n`,
      })
    ),
    error: ["", ""],
    resultBytes: 150,
  },
  {
    name: "update_plan",
    weight: 8,
    medianMs: 3,
    args: [enc({ "plan": [{ "step": "Reproduce the failure", "status": "in_progress" }] })],
    error: ["", ""],
    resultBytes: 40,
  },
  {
    name: "web_search",
    weight: 4,
    medianMs: 2500,
    args: QUERIES.map((q) => enc({ "query": q })),
    error: ["", ""],
    resultBytes: 5000,
  },
  {
    name: "github__list_pull_requests",
    weight: 6,
    medianMs: 800,
    mcpServer: "github",
    args: REPOS.map((r) => enc({ "owner": "acme", "repo": r, "state": "open" })),
    error: ["", ""],
    resultBytes: 3000,
  },
];

const geminiPaths = paths("/home/dev");

/** Gemini CLI's tools and `function_args` shapes. */
export const geminiTools: readonly ToolSpec[] = [
  {
    name: "read_file",
    weight: 25,
    medianMs: 10,
    args: geminiPaths.map((p) => enc({ "absolute_path": p })),
    risky: [enc({ "absolute_path": "/home/dev/infra/.env" })],
    error: ["File not found", "file_not_found"],
    resultBytes: 3500,
  },
  {
    name: "run_shell_command",
    weight: 20,
    medianMs: 1400,
    args: SHELL_COMMANDS.map((c) => enc({ "command": c, "description": "Run " + c.split(" ")[0] })),
    risky: RISKY_COMMANDS.map((c) => enc({ "command": c })),
    error: ["Command exited with code 1", "shell_execute_error"],
    resultBytes: 2200,
  },
  {
    name: "replace",
    weight: 12,
    medianMs: 30,
    args: geminiPaths.map((p) =>
      enc({ "file_path": p, "old_string": "timeout: 5000", "new_string": "timeout: 15000" })
    ),
    error: ["Failed to edit, could not find the string to replace", "edit_no_occurrence_found"],
    resultBytes: 250,
  },
  {
    name: "write_file",
    weight: 6,
    medianMs: 20,
    args: geminiPaths.map((p) => enc({ "file_path": p, "content": "# Notes\n" })),
    error: ["Permission denied", "permission_denied"],
    resultBytes: 100,
  },
  {
    name: "glob",
    weight: 8,
    medianMs: 35,
    args: ["**/*.ts", "**/*.py", "src/**"].map((p) => enc({ "pattern": p })),
    error: ["Invalid glob", "invalid_tool_params"],
    resultBytes: 800,
  },
  {
    name: "search_file_content",
    weight: 8,
    medianMs: 80,
    args: ["TODO", "fetchOrders", "deprecated"].map((p) => enc({ "pattern": p })),
    error: ["Invalid regular expression", "invalid_tool_params"],
    resultBytes: 1500,
  },
  {
    name: "list_directory",
    weight: 6,
    medianMs: 8,
    args: REPOS.map((r) => enc({ "path": `/home/dev/${r}` })),
    error: ["Directory not found", "file_not_found"],
    resultBytes: 600,
  },
  {
    name: "web_fetch",
    weight: 6,
    medianMs: 2000,
    args: URLS.map((u) => enc({ "prompt": `Summarize ${u}` })),
    error: ["Error during fetch: 404 Not Found", "web_fetch_processing_error"],
    resultBytes: 9000,
  },
  {
    name: "google_web_search",
    weight: 4,
    medianMs: 2400,
    args: QUERIES.map((q) => enc({ "query": q })),
    error: ["Search failed", "web_search_failed"],
    resultBytes: 5000,
  },
  {
    name: "create_issue",
    weight: 5,
    medianMs: 1000,
    mcpServer: "github",
    args: REPOS.map((r) => enc({ "owner": "acme", "repo": r, "title": "Build fails on main" })),
    error: ["MCP tool error: Validation Failed", "mcp_tool_error"],
    resultBytes: 400,
  },
];

/** Codex shell output for a command, and the output of a failed one. */
export function codexOutput(tool: ToolSpec, failed: boolean): string {
  if (tool.name === "shell") {
    return failed
      ? "error: process exited with code 1\nFAILED tests/orders_test.ts > totals > rounds half up"
      : "running 12 tests\n............\ntest result: ok. 12 passed; 0 failed; 0 ignored";
  }
  if (tool.name === "apply_patch") {
    return failed
      ? "apply_patch failed: context mismatch"
      : "Success. Updated the following files:";
  }
  if (tool.mcpServer !== undefined) {
    return failed
      ? "tool call error: MCP server timed out"
      : '[{"number":412,"title":"Bump tokio"},{"number":415,"title":"Fix flaky test"}]';
  }
  return failed ? "error: tool failed" : "ok";
}

/** Cumulative weights for picking a tool with one random number. */
export function cumulativeWeights(tools: readonly ToolSpec[]): Float64Array {
  const out = new Float64Array(tools.length);
  let sum = 0;
  for (let i = 0; i < tools.length; i++) out[i] = sum += tools[i]!.weight;
  for (let i = 0; i < out.length; i++) out[i] = out[i]! / sum;
  return out;
}
