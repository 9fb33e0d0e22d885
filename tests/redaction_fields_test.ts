/**
 * Redaction of every stored text of a tool call, end to end (issue #14,
 * finding 2): Claude Code's `error` (and `error_type`), a failed Codex call's
 * `output` (our `error_message` as well as `result`), Gemini CLI's `error`, a
 * GenAI span's status message and tool description, and secrets written with
 * JSON escapes in `tool_input`. Each response of the query API is searched
 * for every secret, a distinctive middle part of it and its escaped spelling.
 *
 * @module
 */
import assert from "node:assert/strict";
import { engineTest, startTestServer, type TestOrg, type TestServer } from "./_harness.ts";
import { claudeExport, genAiToolSpan, toolResult } from "./_otlp.ts";

// Fake secrets in their vendors' formats; none is a real credential.
const GITHUB = "ghp_FAKE7Zt4Vw9Xy3Bn6Lc1Pd5Fg0Hj2Sa4QeR8";
const SLACK = "xoxb-4815162342108-2718281828459-FAKEq3Zr8Nw2Lk5Tm7Vb1Xc4Y";
const JWT = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9" +
  ".eyJzdWIiOiJGQUtFLXVzZXItNDIiLCJpYXQiOjE3MDAwMDAwMDB9.FAKEq3Zr8Nw2Lk5Tm7Vb1Xc4Yd6Pe9Sf0Gh";
const DB_PASSWORD = "Pq81FAKEvz3Lm7Tw";
const KEY_LINES = [
  "MIIEpAIBAAKCAQEAFAKE3q8Zr2Nw7Lk5Tm1Vb9Xc4Yd6Pe0Sf8Gh3Jk7Lm2Np5Qr",
  "FAKEt9Uv4Wx6Yz1Ab3Cd5Ef7Gh9Ij2Kl4Mn6Op8Qr0St2Uv4Wx6Yz8Ab1Cd3Ef5",
  "Gh7Ij9Kl2Mn4Op6Qr8St0Uv3Wx5Yz7Ab9Cd2Ef4Gh6Ij8Kl1Mn3Op5Qr7St9Uv==",
];
const PRIVATE_KEY = `-----BEGIN RSA PRIVATE KEY-----\n${
  KEY_LINES.join("\n")
}\n-----END RSA PRIVATE KEY-----`;

/** What no response may contain: each secret whole, and a middle part of it. */
const FORBIDDEN: [string, string][] = [
  ["GitHub token", GITHUB],
  ["GitHub token middle", GITHUB.slice(12, 28)],
  ["Slack token", SLACK],
  ["Slack token middle", SLACK.slice(20, 44)],
  ["JWT", JWT],
  ["JWT signature", JWT.slice(-30)],
  ["JWT payload", JWT.slice(40, 70)],
  ["database password", DB_PASSWORD],
  ["database password middle", DB_PASSWORD.slice(3, 12)],
  ...KEY_LINES.map((line, i): [string, string] => [`private key line ${i + 1}`, line]),
  ...KEY_LINES.map((line, i): [string, string] => [
    `private key line ${i + 1} middle`,
    line.slice(20, 40),
  ]),
];

/** A failure text holding every kind of secret, as a failing deploy script might print it. */
const ERROR_TEXT = [
  "deploy failed: remote rejected",
  `  GITHUB_TOKEN=${GITHUB}`,
  `  slack notify with ${SLACK}`,
  `  session ${JWT}`,
  `  DATABASE_URL=postgres://app:${DB_PASSWORD}@db.internal:5432/app`,
  PRIVATE_KEY,
].join("\n");

const NOW = Date.now() - 3_600_000;
const nanos = (ms: number) => `${BigInt(ms) * 1_000_000n}`;
const str = (value: string) => ({ stringValue: value });
const attrs = (values: Record<string, unknown>) =>
  Object.entries(values).map(([key, value]) => ({
    key,
    value: typeof value === "boolean"
      ? { boolValue: value }
      : typeof value === "number"
      ? { intValue: String(value) }
      : str(value as string),
  }));

/** Every character as a JSON `\uXXXX` escape. */
function unicodeEscaped(text: string): string {
  return [...text].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`).join("");
}

/**
 * Claude Code: a failed Bash call whose `error` and `error_type` hold secrets,
 * and a call whose `tool_input` spells a token with `\u` escapes and a
 * database URL with `\/`.
 */
function claudeRecords() {
  return claudeExport([
    {
      ...toolResult({
        session: "claude-s",
        id: "toolu_err",
        tool: "Bash",
        timeMs: NOW,
        success: false,
        error: ERROR_TEXT,
        input: { command: "./deploy.sh", description: "Deploy" },
      }),
    },
    toolResult({
      session: "claude-s",
      id: "toolu_escaped",
      tool: "Bash",
      timeMs: NOW + 1,
      // Replaced below by a hand-written JSON text with escapes.
      input: { command: "placeholder" },
    }),
  ]);
}

/** The Claude export with its second call's `tool_input` written with escapes. */
function claudeExportWithEscapes() {
  const body = claudeRecords();
  const records = body.resourceLogs[0]!.scopeLogs[0]!.logRecords as {
    attributes: { key: string; value: { stringValue?: string } }[];
  }[];
  records[0]!.attributes.push({
    key: "error_type",
    value: str(`SlackApiError: invalid_auth for ${SLACK}`),
  });
  const input = records[1]!.attributes.find((a) => a.key === "tool_input")!;
  input.value = str(
    `{"command":"export GITHUB_TOKEN=${unicodeEscaped(GITHUB)} && ` +
      `psql postgres:\\/\\/app:${DB_PASSWORD}@db.internal\\/app -c \\"select 1\\""}`,
  );
  return body;
}

/** Codex: a failed `codex.tool_result` whose `output` holds the secrets. */
function codexExport() {
  return {
    resourceLogs: [{
      resource: {
        attributes: attrs({ "service.name": "codex_cli_rs", "service.version": "0.50.0" }),
      },
      scopeLogs: [{
        scope: { name: "codex_otel" },
        logRecords: [{
          timeUnixNano: nanos(NOW + 2),
          eventName: "codex.tool_result",
          attributes: attrs({
            "event.name": "codex.tool_result",
            "conversation.id": "codex-s",
            "tool_name": "shell",
            "call_id": "call_err",
            "arguments": JSON.stringify({ command: ["bash", "-lc", "./deploy.sh"] }),
            "duration_ms": "12",
            "success": "false",
            "output": ERROR_TEXT,
          }),
        }],
      }],
    }],
  };
}

/** Gemini CLI: a failed `gemini_cli.tool_call` whose `error` holds the secrets. */
function geminiExport() {
  return {
    resourceLogs: [{
      resource: { attributes: attrs({ "service.name": "gemini-cli" }) },
      scopeLogs: [{
        scope: { name: "gemini-cli" },
        logRecords: [{
          timeUnixNano: nanos(NOW + 3),
          attributes: attrs({
            "event.name": "gemini_cli.tool_call",
            "session.id": "gemini-s",
            "function_name": "run_shell_command",
            "function_args": JSON.stringify({ command: "./deploy.sh" }),
            "duration_ms": 40,
            "success": false,
            "error": ERROR_TEXT,
            "error_type": "unhandled_exception",
          }),
        }],
      }],
    }],
  };
}

/** A GenAI `execute_tool` span: error status message and tool description with secrets. */
function genAiExport() {
  return genAiToolSpan({
    timeMs: NOW + 4,
    attributes: {
      "gen_ai.conversation.id": "genai-s",
      "gen_ai.tool.call.id": "call_genai",
      "gen_ai.tool.description": `Deploys with the bot token ${SLACK}`,
      "error.type": "DeployError",
    },
    status: { code: 2, message: ERROR_TEXT },
  });
}

async function ingestAll(server: TestServer, org: TestOrg): Promise<void> {
  for (
    const [path, body] of [
      ["/v1/logs", claudeExportWithEscapes()],
      ["/v1/logs", codexExport()],
      ["/v1/logs", geminiExport()],
      ["/v1/traces", genAiExport()],
    ] as const
  ) {
    const response = await server.ingest(path, body, org.ingestKey);
    const text = await response.text();
    assert.equal(response.status, 200, text);
    assert.doesNotMatch(text, /rejected(?:LogRecords|Spans)":\s*"?[1-9]/, text);
  }
}

const SESSIONS = ["claude-s", "codex-s", "gemini-s", "genai-s"];

/** Every list, detail and session response for the ingested calls, as raw body texts. */
async function allBodies(server: TestServer, key: string): Promise<Map<string, string>> {
  const bodies = new Map<string, string>();
  const read = async (path: string) => {
    const response = await server.get(path, key);
    const text = await response.text();
    assert.equal(response.status, 200, `${path}: ${text}`);
    bodies.set(path, text);
    return JSON.parse(text);
  };
  const list = await read("/v1/tool-calls?limit=50");
  assert.equal(list.data.length, 5, "every call is stored");
  for (const call of list.data) await read(`/v1/tool-calls/${call.id}`);
  for (const session of SESSIONS) await read(`/v1/sessions/${session}`);
  return bodies;
}

/**
 * The text and its decodings: JSON escapes undone once, twice and three
 * times, so an escaped or twice-encoded secret is found too.
 */
function decodings(text: string): string[] {
  const forms = [text];
  let current = text;
  for (let i = 0; i < 3; i++) {
    current = current
      .replace(/\\u([0-9a-fA-F]{4})/g, (_, hex) => String.fromCharCode(parseInt(hex, 16)))
      .replace(/\\([/"\\])/g, "$1")
      .replace(/\\n/g, "\n");
    forms.push(current);
  }
  return forms;
}

function assertNoSecret(bodies: Map<string, string>): void {
  for (const [path, body] of bodies) {
    for (const form of decodings(body)) {
      for (const [name, secret] of FORBIDDEN) {
        assert.ok(!form.includes(secret), `${path} shows the ${name}`);
      }
    }
  }
}

// deno-lint-ignore no-explicit-any
async function detailOf(server: TestServer, key: string, session: string): Promise<any> {
  const list = (await server.getJson(`/v1/tool-calls?session_id=${session}&limit=10`, key)).body;
  assert.ok(list.data.length >= 1, session);
  return (await server.getJson(`/v1/tool-calls/${list.data[0].id}`, key)).body;
}

engineTest(
  "secrets in error texts, outputs, descriptions and escaped arguments never come back",
  async () => {
    await using server = await startTestServer();
    const org = await server.createOrg();
    await ingestAll(server, org);
    assertNoSecret(await allBodies(server, org.apiKey));

    // Each field is redacted in place, every kind of secret by its own marker.
    const markers = [
      "[REDACTED:github_pat]",
      "[REDACTED:slack_bot_token]",
      "[REDACTED:jwt]",
      "[REDACTED:database_url]",
      "[REDACTED:private_key]",
    ];
    const claude = (await server.getJson("/v1/tool-calls?session_id=claude-s", org.apiKey)).body
      .data;
    const failed = claude.find((call: { outcome: string }) => call.outcome === "error");
    const claudeDetail = (await server.getJson(`/v1/tool-calls/${failed.id}`, org.apiKey)).body;
    for (const marker of markers) {
      assert.ok(
        claudeDetail.error_message.includes(marker),
        `${marker} in ${claudeDetail.error_message}`,
      );
    }
    assert.ok(claudeDetail.error_message.startsWith("deploy failed: remote rejected\n"));
    assert.equal(
      claudeDetail.error_type,
      "SlackApiError: invalid_auth for [REDACTED:slack_bot_token]",
    );
    const escaped = claude.find((call: { outcome: string }) => call.outcome === "ok");
    const escapedDetail = (await server.getJson(`/v1/tool-calls/${escaped.id}`, org.apiKey)).body;
    assert.deepEqual(JSON.parse(escapedDetail.arguments), {
      command: "export GITHUB_TOKEN=[REDACTED:github_pat] && " +
        'psql postgres://app:[REDACTED:database_url]@db.internal/app -c "select 1"',
    });

    const codex = await detailOf(server, org.apiKey, "codex-s");
    for (const marker of markers) {
      assert.ok(codex.error_message.includes(marker), `codex error_message ${marker}`);
      assert.ok(codex.result.includes(marker), `codex result ${marker}`);
    }
    const gemini = await detailOf(server, org.apiKey, "gemini-s");
    for (const marker of markers) assert.ok(gemini.error_message.includes(marker), marker);
    const genAi = await detailOf(server, org.apiKey, "genai-s");
    for (const marker of markers) assert.ok(genAi.error_message.includes(marker), marker);
    assert.equal(genAi.tool_description, "Deploys with the bot token [REDACTED:slack_bot_token]");

    // Every call with a secret raises credential_detected, evidence as short as ever.
    const evidence: string[] = [];
    for (const session of SESSIONS) {
      const detail = (await server.getJson(`/v1/sessions/${session}`, org.apiKey)).body;
      for (const flag of detail.risk_flags) {
        if (flag.flag === "credential_detected") evidence.push(`${session} ${flag.evidence}`);
      }
    }
    assert.deepEqual(evidence, [
      "claude-s github_pat: ghp_…",
      "claude-s github_pat: ghp_…",
      "codex-s github_pat: ghp_…",
      "gemini-s github_pat: ghp_…",
      "genai-s github_pat: ghp_…",
    ]);
  },
);

engineTest("--keep-secrets stores every text verbatim, escapes included", async () => {
  await using server = await startTestServer({ flags: { keepSecrets: true } });
  const org = await server.createOrg();
  await ingestAll(server, org);
  const claude = (await server.getJson("/v1/tool-calls?session_id=claude-s", org.apiKey)).body
    .data;
  const failed = claude.find((call: { outcome: string }) => call.outcome === "error");
  const detail = (await server.getJson(`/v1/tool-calls/${failed.id}`, org.apiKey)).body;
  assert.equal(detail.error_message, ERROR_TEXT);
  const escaped = claude.find((call: { outcome: string }) => call.outcome === "ok");
  const escapedDetail = (await server.getJson(`/v1/tool-calls/${escaped.id}`, org.apiKey)).body;
  assert.ok(escapedDetail.arguments.includes(unicodeEscaped(GITHUB)), "escapes kept as sent");
  const codex = await detailOf(server, org.apiKey, "codex-s");
  assert.equal(codex.error_message, ERROR_TEXT);
  const genAi = await detailOf(server, org.apiKey, "genai-s");
  assert.equal(genAi.tool_description, `Deploys with the bot token ${SLACK}`);
  // Kept secrets are still detected, in the error text and behind escapes.
  const session = (await server.getJson("/v1/sessions/claude-s", org.apiKey)).body;
  assert.deepEqual(
    session.risk_flags.map((flag: { tool_call_id: string; evidence: string }) =>
      `${flag.tool_call_id} ${flag.evidence}`
    ),
    ["toolu_err github_pat: ghp_…", "toolu_escaped github_pat: ghp_…"],
  );
});
