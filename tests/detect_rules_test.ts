/**
 * Invariants of the rule data in `src/detect/rules/`.
 *
 * @module
 */

import assert from "node:assert/strict";
import { type DetectInput, detectToolCall } from "../src/detect/mod.ts";
import type { CredentialRule } from "../src/detect/_types.ts";
import { credentialRules } from "../src/detect/rules/credentials.ts";
import { destructiveRules } from "../src/detect/rules/destructive.ts";
import { sensitivePathRules } from "../src/detect/rules/sensitive_paths.ts";

const allRules = [...credentialRules, ...destructiveRules, ...sensitivePathRules];

Deno.test("rule ids are unique within each rule list", () => {
  for (const rules of [credentialRules, destructiveRules, sensitivePathRules]) {
    const ids = rules.map((rule) => rule.id);
    assert.equal(new Set(ids).size, ids.length);
  }
});

Deno.test("every rule has lower-case keywords and a label", () => {
  for (const rule of allRules) {
    assert.ok(rule.keywords.length > 0, rule.id);
    for (const keyword of rule.keywords) assert.equal(keyword, keyword.toLowerCase(), rule.id);
    assert.ok(rule.label.trim() !== "", rule.id);
  }
});

Deno.test("rule patterns carry no global or sticky flag, so they keep no state", () => {
  for (const rule of allRules) {
    assert.ok(!/[gy]/.test(rule.pattern.flags), rule.id);
    for (const allow of rule.allow ?? []) assert.ok(!/[gy]/.test(allow.flags), rule.id);
  }
});

Deno.test("credential rules cover at least 40 kinds, each named in snake_case", () => {
  const labels = new Set(credentialRules.map((rule) => rule.label));
  assert.ok(labels.size >= 40, `${labels.size} kinds`);
  for (const label of labels) assert.match(label, /^[a-z0-9]+(?:_[a-z0-9]+)*$/);
});

Deno.test("credential keywords each occur in what their rule matches", () => {
  // A keyword that cannot occur in a match would make its rule unreachable.
  const samples: Record<string, string> = {
    "github-pat": "ghp_FAKE7Qm2xR9vK4pL8sN3dT6wY1zH5jC0bVqe",
    "slack-bot-token": "xoxb-381946270518-2749163058274-FAKEq7Wm2Rx9Kv4Lp8Sn3Dt6",
    "database-url": "postgres://u:Pq81FAKEvz3@db/app",
    "aws-access-key-id": "AKIAFAKE7QM2XR9VK4PL",
  };
  for (const [id, sample] of Object.entries(samples)) {
    const rule = credentialRules.find((candidate) => candidate.id === id)!;
    assert.ok(rule.pattern.test(sample), id);
    assert.ok(rule.keywords.some((keyword) => sample.toLowerCase().includes(keyword)), id);
  }
});

/** Labels a rule that reads key names (`keyName: "any"`) gives, by the kind the name announces. */
const KEY_NAME_LABELS = new Set([
  "generic_password",
  "generic_token",
  "generic_api_key",
  "client_secret",
  "generic_secret",
]);

/**
 * Where an example is put: as a file written by a Bash here-document and as a
 * file a Read returns; a rule that reads JSON properties (`key`) gets its
 * example as an MCP tool's JSON arguments.
 */
function examplePlacements(rule: CredentialRule, text: string): [string, DetectInput][] {
  if (rule.key !== undefined) {
    return [["MCP arguments", {
      toolName: "mcp__vault__write",
      toolType: "mcp",
      category: "mcp",
      arguments: text,
    }]];
  }
  return [
    ["Bash here-document", {
      toolName: "Bash",
      toolType: "builtin",
      category: "code_exec",
      arguments: JSON.stringify({ command: `cat > notes.txt <<'EOF'\n${text}\nEOF` }),
    }],
    ["Read result", {
      toolName: "Read",
      toolType: "builtin",
      category: "file_read",
      arguments: JSON.stringify({ file_path: "/repo/notes.txt" }),
      result: text,
    }],
  ];
}

Deno.test("every credential rule carries examples of what it finds and of near misses", () => {
  for (const rule of credentialRules) {
    assert.ok(rule.examples.matches.length > 0, `${rule.id} has no matching example`);
    assert.ok(rule.examples.nonMatches.length > 0, `${rule.id} has no near miss`);
  }
});

Deno.test("every credential rule names the secret in each of its examples and redacts it", async (t) => {
  for (const rule of credentialRules) {
    await t.step(rule.id, () => {
      for (const text of rule.examples.matches) {
        for (const [where, input] of examplePlacements(rule, text)) {
          const detection = detectToolCall(input, { redact: true });
          const evidence = detection.flags.find((flag) => flag.flag === "credential_detected")
            ?.evidence;
          const label = evidence?.slice(0, evidence.indexOf(":"));
          const expected = rule.keyName === "any"
            ? KEY_NAME_LABELS.has(label ?? "")
            : label === rule.label;
          assert.ok(expected, `${where}: ${JSON.stringify(text)} gave ${evidence ?? "no flag"}`);
          const stored = `${detection.arguments ?? ""}${detection.result ?? ""}`;
          assert.ok(stored.includes(`[REDACTED:${label}]`), `${where}: not redacted`);
        }
      }
    });
  }
});

Deno.test("no credential rule flags the near misses among its examples", async (t) => {
  for (const rule of credentialRules) {
    await t.step(rule.id, () => {
      for (const text of rule.examples.nonMatches) {
        for (const [where, input] of examplePlacements(rule, text)) {
          const flag = detectToolCall(input, { redact: false }).flags.find((found) =>
            found.flag === "credential_detected"
          );
          assert.equal(flag, undefined, `${where}: ${JSON.stringify(text)}`);
        }
      }
    });
  }
});
