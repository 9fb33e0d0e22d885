/**
 * Unit tests of the detection engine's contract: evidence order, one flag per
 * kind, redaction, domains, and that odd input never throws.
 *
 * @module
 */

import assert from "node:assert/strict";
import { type DetectInput, detectToolCall } from "../src/detect/mod.ts";

const bash = (command: string, result?: string): DetectInput => ({
  toolName: "Bash",
  toolType: "builtin",
  category: "code_exec",
  arguments: JSON.stringify({ command }),
  ...(result === undefined ? {} : { result }),
});

// Obviously fake secrets in the vendors' formats.
const GITHUB = "ghp_FAKE7Qm2xR9vK4pL8sN3dT6wY1zH5jC0bVqe";
const GITLAB = "glpat-FAKE7Qm2xR9vK4pL8sN3dT";
const NPM = "npm_FAKE7Qm2xR9vK4pL8sN3dT6wY1zH5jC0bVqe";
const AWS_ID = "AKIAFAKE7QM2XR9VK4PL";

Deno.test("evidence comes from the arguments before the result", () => {
  const detection = detectToolCall(
    { ...bash(`echo ${GITLAB} && cat .env`), result: `${GITHUB}\n~/.ssh/id_rsa` },
    { redact: false },
  );
  assert.deepEqual(detection.flags, [
    { flag: "credential_detected", evidence: "gitlab_pat: glpa…" },
    { flag: "sensitive_path", evidence: ".env" },
  ]);
});

Deno.test("a credential only in the result is found there", () => {
  const detection = detectToolCall(bash("cat notes.txt", `token is ${NPM}`), { redact: false });
  assert.deepEqual(detection.flags, [{
    flag: "credential_detected",
    evidence: "npm_access_token: npm_…",
  }]);
});

Deno.test("within a text the earliest match is the evidence, whatever the rule order", () => {
  // The generic rule comes last in the rule list but matches first in the text.
  const detection = detectToolCall(bash(`PASSWORD=Zx81FAKEqw09 && export GH=${GITHUB}`), {
    redact: false,
  });
  assert.equal(detection.flags[0]!.evidence, "generic_password: Zx81…");
});

Deno.test("within a JSON document the first string in document order wins", () => {
  const detection = detectToolCall({
    toolName: "mcp__vault__write",
    toolType: "mcp",
    category: "mcp",
    arguments: JSON.stringify({ first: { key: NPM }, second: GITHUB }),
  }, { redact: false });
  assert.equal(detection.flags[0]!.evidence, "npm_access_token: npm_…");
});

Deno.test("at most one flag per kind, sorted by kind", () => {
  const detection = detectToolCall(
    bash(
      `cat ~/.aws/credentials /etc/shadow; rm -rf a; git push --force; export A=${GITHUB} B=${NPM}`,
      `${AWS_ID}`,
    ),
    { redact: true },
  );
  assert.deepEqual(detection.flags.map((flag) => flag.flag), [
    "credential_detected",
    "destructive_operation",
    "sensitive_path",
  ]);
  assert.equal(detection.flags[1]!.evidence, "rm -rf");
  assert.equal(detection.flags[2]!.evidence, "~/.aws/credentials");
});

Deno.test("redaction replaces every secret in arguments and result and keeps JSON valid", () => {
  const input: DetectInput = {
    toolName: "mcp__deploy__run",
    toolType: "mcp",
    category: "mcp",
    arguments: JSON.stringify({ env: [{ TOKEN: GITHUB }, { NPM: `x ${NPM} y` }], note: "ok" }),
    result: JSON.stringify({ content: [{ type: "text", text: `aws ${AWS_ID}` }] }),
  };
  const detection = detectToolCall(input, { redact: true });
  assert.deepEqual(JSON.parse(detection.arguments!), {
    env: [{ TOKEN: "[REDACTED:github_pat]" }, { NPM: "x [REDACTED:npm_access_token] y" }],
    note: "ok",
  });
  assert.deepEqual(JSON.parse(detection.result!), {
    content: [{ type: "text", text: "aws [REDACTED:aws_access_key_id]" }],
  });
});

Deno.test("redaction replaces only the secret part of a URL or header", () => {
  const detection = detectToolCall(
    bash(
      `psql postgres://app:Pq81FAKEvz3@db.internal/app && curl -H "Authorization: Bearer Zm9vFAKE7Qm2xR9vK4pLs" https://api.example.org`,
    ),
    { redact: true },
  );
  const command = JSON.parse(detection.arguments!).command;
  assert.equal(
    command,
    `psql postgres://app:[REDACTED:database_url]@db.internal/app && curl -H "Authorization: Bearer [REDACTED:bearer_token]" https://api.example.org`,
  );
});

Deno.test("with redaction off the arguments and result come back unchanged", () => {
  const input = bash(`export GH=${GITHUB}`, `${NPM}`);
  const detection = detectToolCall(input, { redact: false });
  assert.equal(detection.arguments, input.arguments);
  assert.equal(detection.result, input.result);
  assert.equal(detection.flags.length, 1);
});

Deno.test("without a credential the input comes back byte for byte even with redaction on", () => {
  const input: DetectInput = {
    ...bash(""),
    arguments: '{ "command" : "ls -la",\n  "n": 1.50 }',
    result: "total 0",
  };
  const detection = detectToolCall(input, { redact: true });
  assert.equal(detection.arguments, input.arguments);
  assert.equal(detection.result, input.result);
});

Deno.test("arguments that are not JSON are scanned and redacted as text", () => {
  const detection = detectToolCall(
    {
      toolName: "Bash",
      toolType: "builtin",
      category: "code_exec",
      arguments: `GH=${GITHUB} rm -rf /x`,
    },
    { redact: true },
  );
  assert.equal(detection.arguments, "GH=[REDACTED:github_pat] rm -rf /x");
  assert.deepEqual(detection.flags.map((flag) => flag.evidence), ["github_pat: ghp_…", "rm -rf"]);
});

Deno.test("evidence shows at most four characters, and half of a short secret", () => {
  const long = detectToolCall(bash(`echo ${GITHUB}`), { redact: false });
  assert.equal(long.flags[0]!.evidence, "github_pat: ghp_…");
  const short = detectToolCall(bash("curl -u admin:Q7xp https://ci.example.org"), {
    redact: false,
  });
  assert.equal(short.flags[0]!.evidence, "curl_basic_auth: Q7…");
});

Deno.test("absent arguments and result stay absent", () => {
  const detection = detectToolCall(
    { toolName: "Read", toolType: "builtin", category: "file_read" },
    { redact: true },
  );
  assert.deepEqual(detection, { flags: [], domains: [] });
});

Deno.test("a domain reached twice on one scheme is one domain", () => {
  const detection = detectToolCall(
    bash(
      "curl https://API.example.com/a && wget https://api.example.com:443/b; curl http://api.example.com",
    ),
    { redact: false },
  );
  assert.deepEqual(detection.domains, [
    { domain: "api.example.com", scheme: "https" },
    { domain: "api.example.com", scheme: "http" },
  ]);
});

Deno.test("loopback hosts are not external domains", () => {
  for (
    const url of [
      "http://localhost:8080/x",
      "http://LOCALHOST/",
      "http://app.localhost/",
      "http://127.0.0.1/",
      "http://127.255.0.9:81/",
      "http://[::1]:3000/",
      "http://0.0.0.0:8000/",
      "http://2130706433/",
      "http://[::ffff:127.0.0.1]/",
    ]
  ) {
    assert.deepEqual(detectToolCall(bash(`curl ${url}`), { redact: false }).domains, [], url);
  }
  assert.deepEqual(detectToolCall(bash("curl http://10.1.2.3/"), { redact: false }).domains, [
    { domain: "10.1.2.3", scheme: "http" },
  ]);
});

Deno.test("malformed URLs are ignored without throwing", () => {
  for (
    const url of [
      "https://",
      "http://exa mple.com",
      "https://[zz::1]/",
      "http://a..b/",
      "://x.com",
      "https://$HOST/x",
    ]
  ) {
    assert.deepEqual(detectToolCall(bash(`curl "${url}"`), { redact: false }).domains, [], url);
    const fetch: DetectInput = {
      toolName: "WebFetch",
      toolType: "builtin",
      category: "web_fetch",
      arguments: JSON.stringify({ url }),
    };
    assert.deepEqual(detectToolCall(fetch, { redact: false }).domains, [], url);
  }
});

Deno.test("domains come from the arguments only, never the result", () => {
  const detection = detectToolCall(bash("cat links.txt", "curl https://result.example.com"), {
    redact: false,
  });
  assert.deepEqual(detection.domains, []);
});

Deno.test("scheme-less hosts are http for curl and https for web fetches", () => {
  assert.deepEqual(detectToolCall(bash("curl -s example.com/x"), { redact: false }).domains, [
    { domain: "example.com", scheme: "http" },
  ]);
  const fetch: DetectInput = {
    toolName: "WebFetch",
    toolType: "builtin",
    category: "web_fetch",
    arguments: JSON.stringify({ url: "docs.example.com/page" }),
  };
  assert.deepEqual(detectToolCall(fetch, { redact: false }).domains, [
    { domain: "docs.example.com", scheme: "https" },
  ]);
});

Deno.test("odd input never throws", () => {
  const odd = [
    "",
    "{",
    "null",
    "42",
    "[]",
    '"just a string"',
    '{"command": null}',
    '{"command": [1, {"a": 2}]}',
    '{"url": 5}',
    "\u0000\uffff\ud800",
    "[".repeat(10_000),
    `{"a":${"[".repeat(5000)}"x"${"]".repeat(5000)}}`,
  ];
  for (const text of odd) {
    for (const category of ["code_exec", "file_read", "web_fetch", "mcp"] as const) {
      detectToolCall(
        { toolName: "T", toolType: "mcp", category, arguments: text, result: text },
        { redact: true },
      );
    }
  }
});

Deno.test("a typical call takes a few microseconds (timing printed, not asserted)", () => {
  const code = Deno.readTextFileSync(new URL("../src/detect/_shell.ts", import.meta.url)).slice(
    0,
    2000,
  );
  const calls: [string, DetectInput][] = [
    ["Bash, 200-byte command", {
      toolName: "Bash",
      toolType: "builtin",
      category: "code_exec",
      arguments: JSON.stringify({
        command:
          "cd /work/repo && npm run build -- --mode production 2>&1 | tail -n 50 && git status --short && ls -la dist/assets | head -20 && echo done",
        description: "Build the project and show status",
      }),
    }],
    ["Read of a path", {
      toolName: "Read",
      toolType: "builtin",
      category: "file_read",
      arguments: JSON.stringify({ file_path: "/work/repo/src/detect/_shell.ts" }),
    }],
    ["Read with a 2 KB result", {
      toolName: "Read",
      toolType: "builtin",
      category: "file_read",
      arguments: JSON.stringify({ file_path: "/work/repo/src/detect/_shell.ts" }),
      result: code,
    }],
  ];
  for (const [name, input] of calls) {
    for (let i = 0; i < 2000; i++) detectToolCall(input, { redact: true });
    let best = Infinity;
    for (let batch = 0; batch < 5; batch++) {
      const start = performance.now();
      for (let i = 0; i < 1000; i++) detectToolCall(input, { redact: true });
      best = Math.min(best, (performance.now() - start) * 1000 / 1000);
    }
    // deno-lint-ignore no-console
    console.log(`${name}: ${best.toFixed(1)} µs/call`);
  }
});
