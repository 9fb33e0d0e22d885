/**
 * Invariants of the rule data in `src/detect/rules/`.
 *
 * @module
 */

import assert from "node:assert/strict";
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
