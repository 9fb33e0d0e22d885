/**
 * Secrets behind JSON escapes (issue #14 finding 2): the escape views of
 * `src/detect/_escapes.ts` and what detection and redaction make of escaped
 * secrets in arguments, results and a call's other texts.
 *
 * @module
 */

import assert from "node:assert/strict";
import { escapeViews, unescapeOnce } from "../src/detect/_escapes.ts";
import { type DetectInput, detectToolCall } from "../src/detect/mod.ts";

// Obviously fake secrets in the vendors' formats.
const AWS_ID = "AKIAFAKE7QM2XR9VK4PL";
const GITHUB = "ghp_FAKE7Qm2xR9vK4pL8sN3dT6wY1zH5jC0bVqe";

/** Every character as a JSON `\uXXXX` escape. */
const unicodeEscaped = (text: string) =>
  [...text].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`).join("");

const bashArgs = (argumentsText: string): DetectInput => ({
  toolName: "Bash",
  toolType: "builtin",
  category: "code_exec",
  arguments: argumentsText,
});

Deno.test("a view maps each decoded character back to its whole escape", () => {
  const source = String.raw`a\u0042c\/d\"e\\f\ng`;
  const view = unescapeOnce(source)!;
  assert.equal(view.text, 'aBc/d"e\\f\ng');
  assert.equal(view.origin.length, view.text.length + 1);
  // "B" comes from `\u0042` (offsets 1..7), "/" from `\/`.
  assert.deepEqual([view.origin[1], view.origin[2]], [1, 7]);
  assert.equal(source.slice(view.origin[1]!, view.origin[2]!), String.raw`\u0042`);
  assert.equal(source.slice(view.origin[3]!, view.origin[4]!), String.raw`\/`);
  assert.equal(view.origin[view.text.length], source.length);
});

Deno.test("a text without escapes has no view, and a lone backslash stays as it is", () => {
  assert.equal(unescapeOnce("plain text"), undefined);
  assert.equal(unescapeOnce(String.raw`C:\Users\x \q \uZZZZ`), undefined);
  const view = unescapeOnce(String.raw`C:\Users\new`)!;
  assert.equal(view.text, "C:\\Users\new", "only the valid escape is decoded");
});

Deno.test("views decode twice-encoded text level by level, offsets into the original", () => {
  const once = JSON.stringify(`K=${unicodeEscaped("AKIA")}`).slice(1, -1); // K=\\u0041…
  const views = escapeViews(once);
  assert.deepEqual(views.map((view) => view.text), [`K=${unicodeEscaped("AKIA")}`, "K=AKIA"]);
  const last = views[1]!;
  assert.equal(once.slice(last.origin[2]!, last.origin[6]!), once.slice(2));
  assert.equal(escapeViews("x".repeat(10)).length, 0);
  let deep = "\\u0041";
  for (let i = 0; i < 5; i++) deep = JSON.stringify(deep).slice(1, -1);
  assert.equal(escapeViews(deep).length, 3, "at most three levels");
  assert.equal(escapeViews(deep, 6).at(-1)!.text, "A");
});

Deno.test("a unicode-escaped key in tool_input is detected and redacted, escapes and all", () => {
  const args = `{"command":"export AWS_ACCESS_KEY_ID=${unicodeEscaped(AWS_ID)} && aws s3 ls"}`;
  const detection = detectToolCall(bashArgs(args), { redact: true });
  assert.deepEqual(detection.flags, [{
    flag: "credential_detected",
    evidence: "aws_access_key_id: AKIA…",
  }]);
  assert.deepEqual(JSON.parse(detection.arguments!), {
    command: "export AWS_ACCESS_KEY_ID=[REDACTED:aws_access_key_id] && aws s3 ls",
  });
  assert.ok(!detection.arguments!.includes("\\u0041"));
});

Deno.test("escaped slashes do not hide a database password", () => {
  const args = String.raw`{"command":"psql postgres:\/\/app:Pq81FAKEvz3x@db.internal\/app"}`;
  const detection = detectToolCall(bashArgs(args), { redact: true });
  assert.equal(detection.flags[0]?.evidence, "database_url: Pq81…");
  assert.equal(
    JSON.parse(detection.arguments!).command,
    "psql postgres://app:[REDACTED:database_url]@db.internal/app",
  );
});

Deno.test("twice-encoded arguments stay a JSON string with the secret redacted inside", () => {
  const inner = JSON.stringify({ command: `export GH=${GITHUB}` });
  const escapedInner = inner.replace(GITHUB, unicodeEscaped(GITHUB));
  const detection = detectToolCall(bashArgs(JSON.stringify(escapedInner)), { redact: true });
  assert.equal(detection.flags[0]?.evidence, "github_pat: ghp_…");
  const decoded = JSON.parse(detection.arguments!);
  assert.equal(typeof decoded, "string");
  assert.deepEqual(JSON.parse(decoded), { command: "export GH=[REDACTED:github_pat]" });
});

Deno.test("escaped quotes in a text that is not JSON do not hide a quoted password", () => {
  const result = String.raw`config: {\"user\": \"app\", \"password\": \"Zx81FAKEqw09rt\"}`;
  const detection = detectToolCall(
    { ...bashArgs('{"command":"cat config.log"}'), result },
    { redact: true },
  );
  assert.equal(detection.flags[0]?.evidence, "generic_password: Zx81…");
  assert.equal(
    detection.result,
    String.raw`config: {\"user\": \"app\", \"password\": \"[REDACTED:generic_password]\"}`,
    "the escaped quotes around the secret stay",
  );
});

Deno.test("a secret escaped in a truncated JSON result is redacted in its escaped form", () => {
  const result = `{"env":{"AWS":"${unicodeEscaped("AKIA")}${AWS_ID.slice(4)}","more":"…`;
  const detection = detectToolCall(
    { ...bashArgs('{"command":"cat env.json"}'), result },
    { redact: true },
  );
  assert.equal(detection.flags[0]?.evidence, "aws_access_key_id: AKIA…");
  assert.equal(detection.result, `{"env":{"AWS":"[REDACTED:aws_access_key_id]","more":"…`);
});

Deno.test("an error text, error type and tool description are scanned and redacted", () => {
  const detection = detectToolCall({
    ...bashArgs('{"command":"./deploy.sh"}'),
    texts: {
      errorMessage: `push failed for ${unicodeEscaped("ghp_")}${GITHUB.slice(4)}`,
      errorType: `AuthError(${AWS_ID})`,
      toolDescription: "Deploys the app",
      cwd: "/repo",
    },
  }, { redact: true });
  assert.deepEqual(detection.flags, [{
    flag: "credential_detected",
    evidence: "github_pat: ghp_…",
  }]);
  assert.deepEqual(detection.texts, {
    errorMessage: "push failed for [REDACTED:github_pat]",
    errorType: "AuthError([REDACTED:aws_access_key_id])",
    toolDescription: "Deploys the app",
    cwd: "/repo",
  });
});

Deno.test("evidence comes from the arguments, then the result, then the other texts", () => {
  const detection = detectToolCall({
    ...bashArgs('{"command":"ls"}'),
    result: `found ${AWS_ID}`,
    texts: { errorMessage: `token ${GITHUB}` },
  }, { redact: false });
  assert.equal(detection.flags[0]?.evidence, "aws_access_key_id: AKIA…");
});

Deno.test("an error text equal to the result is redacted the same way", () => {
  const output = `fatal: ${GITHUB}`;
  const detection = detectToolCall({
    ...bashArgs('{"command":"git push"}'),
    result: output,
    texts: { errorMessage: output },
  }, { redact: true });
  assert.equal(detection.result, "fatal: [REDACTED:github_pat]");
  assert.equal(detection.texts?.errorMessage, "fatal: [REDACTED:github_pat]");
});

Deno.test("with redaction off escaped secrets and texts come back byte for byte, still flagged", () => {
  const input: DetectInput = {
    ...bashArgs(`{"command":"export K=${unicodeEscaped(AWS_ID)}"}`),
    texts: { errorMessage: `token ${GITHUB}` },
  };
  const detection = detectToolCall(input, { redact: false });
  assert.equal(detection.arguments, input.arguments);
  assert.deepEqual(detection.texts, input.texts);
  assert.equal(detection.flags[0]?.evidence, "aws_access_key_id: AKIA…");
  const onlyText = detectToolCall(
    { ...bashArgs('{"command":"x"}'), texts: { errorMessage: `token ${GITHUB}` } },
    { redact: false },
  );
  assert.equal(onlyText.flags[0]?.evidence, "github_pat: ghp_…");
});

Deno.test("backslashes without a secret leave the text untouched", () => {
  const result = String.raw`C:\Users\new\token\cache \u00e9 \"quoted\" \/path \uZZZZ \\`;
  const input: DetectInput = { ...bashArgs('{"command":"type notes.txt"}'), result };
  const detection = detectToolCall(input, { redact: true });
  assert.deepEqual(detection.flags, []);
  assert.equal(detection.result, result);
});
