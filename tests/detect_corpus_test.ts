/**
 * Runs the labelled detection corpus (`fixtures/detect/corpus.jsonl`, written
 * by `fixtures/detect/generate_corpus.ts`) and holds every flag kind and the
 * domain finder to precision 0.98 and recall 0.95.
 *
 * @module
 */

import assert from "node:assert/strict";
import {
  type DetectInput,
  detectToolCall,
  type DomainFinding,
  type FlagKind,
} from "../src/detect/mod.ts";

interface Case {
  name: string;
  input: DetectInput;
  flags: Partial<Record<FlagKind, string | true>>;
  domains?: DomainFinding[];
  secrets?: string[];
}

interface Score {
  truePositives: number;
  falsePositives: number;
  falseNegatives: number;
  errors: string[];
}

const KINDS: FlagKind[] = ["credential_detected", "destructive_operation", "sensitive_path"];
const MIN_PRECISION = 0.98;
const MIN_RECALL = 0.95;

const corpus: Case[] = (await Deno.readTextFile(
  new URL("./fixtures/detect/corpus.jsonl", import.meta.url),
))
  .split("\n")
  .filter((line) => line.trim() !== "")
  .map((line) => JSON.parse(line));

const emptyScore = (): Score => ({
  truePositives: 0,
  falsePositives: 0,
  falseNegatives: 0,
  errors: [],
});
const precision = (score: Score) =>
  score.truePositives / Math.max(1, score.truePositives + score.falsePositives);
const recall = (score: Score) =>
  score.truePositives / Math.max(1, score.truePositives + score.falseNegatives);

function scoreCorpus(): Map<string, Score> {
  const scores = new Map<string, Score>([...KINDS, "domains"].map((kind) => [kind, emptyScore()]));
  for (const entry of corpus) {
    const detection = detectToolCall(entry.input, { redact: true });
    for (const kind of KINDS) {
      const score = scores.get(kind)!;
      const expected = entry.flags[kind];
      const actual = detection.flags.find((flag) => flag.flag === kind);
      if (expected !== undefined && actual !== undefined) {
        if (expected === true || expected === actual.evidence) score.truePositives++;
        else {
          score.falsePositives++;
          score.falseNegatives++;
          score.errors.push(`${entry.name}: evidence ${actual.evidence}, expected ${expected}`);
        }
      } else if (expected !== undefined) {
        score.falseNegatives++;
        score.errors.push(`${entry.name}: missed (expected ${expected})`);
      } else if (actual !== undefined) {
        score.falsePositives++;
        score.errors.push(`${entry.name}: unexpected ${actual.evidence}`);
      }
    }
    const score = scores.get("domains")!;
    const id = (domain: DomainFinding) => `${domain.scheme}://${domain.domain}`;
    const expected = new Set((entry.domains ?? []).map(id));
    const actual = new Set(detection.domains.map(id));
    for (const domain of actual) {
      if (expected.has(domain)) score.truePositives++;
      else {
        score.falsePositives++;
        score.errors.push(`${entry.name}: unexpected domain ${domain}`);
      }
    }
    for (const domain of expected) {
      if (!actual.has(domain)) {
        score.falseNegatives++;
        score.errors.push(`${entry.name}: missed domain ${domain}`);
      }
    }
  }
  return scores;
}

Deno.test("the detection corpus holds at least 400 cases, 60 of them negatives", () => {
  assert.ok(corpus.length >= 400, `only ${corpus.length} cases`);
  const negatives = corpus.filter((entry) =>
    Object.keys(entry.flags).length === 0 && (entry.domains ?? []).length === 0
  );
  assert.ok(negatives.length >= 60, `only ${negatives.length} negatives`);
  for (const kind of KINDS) {
    assert.ok(
      corpus.filter((entry) => entry.flags[kind] !== undefined).length >= 40,
      `too few positives for ${kind}`,
    );
  }
});

Deno.test("detection reaches precision 0.98 and recall 0.95 for every flag kind and for domains", () => {
  const scores = scoreCorpus();
  const failures: string[] = [];
  for (const [kind, score] of scores) {
    const p = precision(score);
    const r = recall(score);
    // deno-lint-ignore no-console
    console.log(
      `${kind.padEnd(22)} precision ${p.toFixed(4)}  recall ${r.toFixed(4)}  ` +
        `(tp ${score.truePositives}, fp ${score.falsePositives}, fn ${score.falseNegatives})`,
    );
    if (score.errors.length > 0) {
      // deno-lint-ignore no-console
      console.log(score.errors.map((error) => `  ${error}`).join("\n"));
    }
    if (p < MIN_PRECISION || r < MIN_RECALL) {
      failures.push(`${kind}: precision ${p.toFixed(3)}, recall ${r.toFixed(3)}`);
    }
  }
  assert.deepEqual(failures, []);
});

Deno.test("no evidence and no redacted text in the corpus contains a full secret", () => {
  for (const entry of corpus) {
    if (entry.secrets === undefined) continue;
    const detection = detectToolCall(entry.input, { redact: true });
    for (const secret of entry.secrets) {
      for (const flag of detection.flags) {
        assert.ok(!flag.evidence.includes(secret), `${entry.name}: evidence shows the secret`);
      }
      assert.ok(!detection.arguments?.includes(secret), `${entry.name}: arguments keep the secret`);
      assert.ok(!detection.result?.includes(secret), `${entry.name}: result keeps the secret`);
      for (const [name, text] of Object.entries(detection.texts ?? {})) {
        assert.ok(!text.includes(secret), `${entry.name}: ${name} keeps the secret`);
      }
    }
  }
});

Deno.test("redacted JSON arguments, results and texts in the corpus still parse", () => {
  for (const entry of corpus) {
    const detection = detectToolCall(entry.input, { redact: true });
    const texts = Object.entries(entry.input.texts ?? {}).map((
      [name, text],
    ) => [text, detection.texts?.[name as keyof typeof detection.texts]]);
    for (
      const [before, after] of [
        [entry.input.arguments, detection.arguments],
        [entry.input.result, detection.result],
        ...texts,
      ]
    ) {
      if (before === undefined) continue;
      let json = true;
      try {
        JSON.parse(before);
      } catch {
        json = false;
      }
      if (json) {
        assert.doesNotThrow(() => JSON.parse(after!), `${entry.name}: redaction broke JSON`);
      }
    }
  }
});

Deno.test("without redaction the corpus comes back unchanged and with the same flags", () => {
  for (const entry of corpus) {
    const plain = detectToolCall(entry.input, { redact: false });
    const redacted = detectToolCall(entry.input, { redact: true });
    assert.equal(plain.arguments, entry.input.arguments, entry.name);
    assert.equal(plain.result, entry.input.result, entry.name);
    assert.deepEqual(plain.texts, entry.input.texts, entry.name);
    assert.deepEqual(plain.flags, redacted.flags, entry.name);
    assert.deepEqual(plain.domains, redacted.domains, entry.name);
  }
});
