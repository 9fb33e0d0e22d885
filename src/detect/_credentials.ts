/**
 * Finds secrets in texts with the rules of `rules/credentials.ts`: a keyword
 * pass over the whole document picks the rules worth running, then each
 * rule's pattern runs on each string of the document. Both passes also look
 * at the document and its strings with JSON escapes decoded (`_escapes.ts`),
 * so an escaped secret is found, and redacted where it is written.
 *
 * @module
 */

import { shannonEntropy } from "./_entropy.ts";
import { escapeViews, hasHidingEscape, MAX_ESCAPE_DEPTH } from "./_escapes.ts";
import type { CredentialRule } from "./_types.ts";
import { verifiers } from "./_verify.ts";
import { credentialRules } from "./rules/credentials.ts";
import {
  keyWords,
  type SecretKeyKind,
  secretKeyKind,
  VENDOR_KEY_NAMES,
} from "./rules/_key_names.ts";
import { fillerSecrets, MAX_RUN_CHECKED, repeatedRun } from "./rules/_placeholders.ts";

/** A secret found in one string. */
export interface SecretMatch {
  /** Offsets of the secret in the string. */
  start: number;
  end: number;
  /** The credential kind, e.g. `aws_access_key_id`. */
  label: string;
  /** Position of the rule in the rule list; lower wins ties. */
  rank: number;
  /** The secret as found, JSON escapes decoded (what evidence abbreviates). */
  secret: string;
}

interface CompiledRule {
  rule: CredentialRule;
  regex: RegExp;
  rank: number;
}

const compiled: CompiledRule[] = credentialRules.map((rule, rank) => ({
  rule,
  rank,
  regex: new RegExp(rule.pattern.source, withFlags(rule.pattern.flags, "gd")),
}));

function withFlags(flags: string, extra: string): string {
  let out = flags;
  for (const flag of extra) if (!out.includes(flag)) out += flag;
  return out;
}

/** Rule indexes by keyword, each keyword also standing for the keywords inside it. */
const rulesByKeyword = new Map<string, number[]>();
{
  const keywords = [...new Set(credentialRules.flatMap((rule) => rule.keywords))];
  for (const keyword of keywords) {
    const indexes: number[] = [];
    credentialRules.forEach((rule, index) => {
      if (rule.keywords.some((own) => keyword.includes(own))) indexes.push(index);
    });
    rulesByKeyword.set(keyword, indexes);
  }
}

/** A keyword of the prefilter: its characters after the first two, and the rules it calls for. */
interface KeywordEntry {
  rest: number[];
  rules: number[];
}
/**
 * Keywords by their first two characters (`c0 << 7 | c1`, both ASCII and
 * lower-case): the keyword pass reads a text once, one pair of characters at a
 * time, instead of running a pattern of every keyword over it, which costs
 * several times more on the short texts most tool calls hold.
 */
const keywordsByPair: (KeywordEntry[] | undefined)[] = new Array(128 * 128);
for (const [keyword, rules] of rulesByKeyword) {
  const codes = [...keyword].map((char) => char.charCodeAt(0));
  if (codes.length < 2 || codes.some((code) => code > 127)) {
    throw new Error(`Credential keyword must be two ASCII characters or more: "${keyword}"`);
  }
  const pair = (codes[0]! << 7) | codes[1]!;
  (keywordsByPair[pair] ??= []).push({ rest: codes.slice(2), rules });
}

/** The rules one document's keywords call for; reused (and cleared) by every document. */
const wantedScratch = new Uint8Array(compiled.length);

/** The character code lower-cased when it is an ASCII capital. */
function lowerCode(code: number): number {
  return code >= 65 && code <= 90 ? code | 32 : code;
}

/** Marks in `wanted` the rules whose keywords occur in the text (case-insensitive); true if any. */
function markKeywordRules(text: string, wanted: Uint8Array): boolean {
  let any = false;
  const last = text.length - 1;
  let next = last >= 0 ? lowerCode(text.charCodeAt(0)) : 0;
  for (let at = 0; at < last; at++) {
    const first = next;
    next = lowerCode(text.charCodeAt(at + 1));
    if (first > 127 || next > 127) continue;
    const entries = keywordsByPair[(first << 7) | next];
    if (entries === undefined) continue;
    for (const entry of entries) {
      const rest = entry.rest;
      if (at + 2 + rest.length > text.length) continue;
      let index = 0;
      while (index < rest.length && lowerCode(text.charCodeAt(at + 2 + index)) === rest[index]) {
        index++;
      }
      if (index < rest.length) continue;
      for (const rule of entry.rules) wanted[rule] = 1;
      any = true;
    }
  }
  return any;
}

/**
 * Least entropy of a secret of 16 characters or more when its rule sets none:
 * rejects documentation fillers such as `ghp_xxxxxxxx…` or `sk_test_000…`.
 */
const DEFAULT_MIN_ENTROPY = 2.5;

/** Evidence labels of the secrets a key name announces, for rules with `keyName: "any"`. */
const KIND_LABELS: Record<SecretKeyKind, string> = {
  "password": "generic_password",
  "token": "generic_token",
  "api_key": "generic_api_key",
  "client_secret": "client_secret",
  "secret": "generic_secret",
};

/** Vendor names that make a bare `key` a credential (`hubspotKey`). */
const vendorNames = new Set([
  ...VENDOR_KEY_NAMES,
  ...credentialRules.flatMap((rule) => rule.names ?? []),
]);
/** Vendor names whose every credential has its rule's format. */
const strictVendorNames = new Set(
  credentialRules.flatMap((rule) => rule.strictFormat ? rule.names ?? [] : []),
);
/** Characters of an identifier a key name is grown backwards over. */
const KEY_CHAR = /[\w.$-]/;

/** Trailing whitespace and JSON-escaped line breaks are never part of a secret. */
const TRAILING_BLANK = /(?:\s|\\[nrt])+$/;

/**
 * One document (a tool call's arguments or its result) being scanned: knows
 * which rules its keywords call for and which `requires` conditions it meets.
 */
export class CredentialDocument {
  /** The document as written, then decoded when escapes could hide a keyword in it. */
  #searchable: string[];
  #rules: CompiledRule[];
  #requires = new Map<number, boolean>();

  constructor(raw: string) {
    this.#searchable = [raw];
    if (hasHidingEscape(raw)) {
      // One level more than a string's: the document's own JSON encoding.
      for (const view of escapeViews(raw, MAX_ESCAPE_DEPTH + 1)) this.#searchable.push(view.text);
    }
    const wanted = wantedScratch;
    let any = false;
    for (const text of this.#searchable) any = markKeywordRules(text, wanted) || any;
    this.#rules = any ? compiled.filter((_, index) => wanted[index] === 1) : [];
    if (any) wanted.fill(0);
  }

  /** True when no rule can match anywhere in the document. */
  get empty(): boolean {
    return this.#rules.length === 0;
  }

  /** True when the rule's `requires` occurs in the string or anywhere in the document. */
  #meets(entry: CompiledRule, text: string): boolean {
    const requires = entry.rule.requires;
    if (requires === undefined || requires.test(text)) return true;
    let met = this.#requires.get(entry.rank);
    if (met === undefined) {
      met = this.#searchable.some((searchable) => requires.test(searchable));
      this.#requires.set(entry.rank, met);
    }
    return met;
  }

  /**
   * Secrets in one string of the document, by position (ties: rule order),
   * never overlapping. `key` is the JSON property the string is the value of.
   * The string is also read with its JSON escapes decoded (up to three levels
   * deep): a secret found there has the offsets of its escaped form. With
   * `all` false, stops at the earliest secret.
   */
  scan(text: string, key: string | undefined, all: boolean): SecretMatch[] {
    const found: SecretMatch[] = [];
    this.#scanText(text, key, all, found, undefined);
    if (this.#rules.length > 0 && hasHidingEscape(text)) {
      for (const view of escapeViews(text)) this.#scanText(view.text, key, all, found, view.origin);
    }
    found.sort((a, b) => a.start - b.start || a.rank - b.rank);
    if (!all) return found.slice(0, 1);
    // Overlapping finds (one in the text, one in its decoded view) become one
    // span, so no part of either survives redaction.
    const kept: SecretMatch[] = [];
    for (const match of found) {
      const last = kept.at(-1);
      if (last === undefined || match.start >= last.end) kept.push({ ...match });
      else if (match.end > last.end) last.end = match.end;
    }
    return kept;
  }

  /** Adds the secrets of `text` to `found`, offsets mapped through `origin` when it is a view. */
  #scanText(
    text: string,
    key: string | undefined,
    all: boolean,
    found: SecretMatch[],
    origin: Int32Array | undefined,
  ): void {
    for (const entry of this.#rules) {
      const { rule, regex } = entry;
      if (rule.key !== undefined && (key === undefined || !rule.key.test(key))) continue;
      if (!this.#meets(entry, text)) continue;
      regex.lastIndex = 0;
      for (let match = regex.exec(text); match !== null; match = regex.exec(text)) {
        if (match[0] === "") {
          regex.lastIndex++;
          continue;
        }
        const span = secretOf(match, rule, text, key);
        if (span !== undefined) {
          const [start, end] = span;
          found.push({
            start: origin === undefined ? start : origin[start]!,
            end: origin === undefined ? end : origin[end]!,
            label: span[2] ?? rule.label,
            rank: entry.rank,
            secret: text.slice(start, end),
          });
          if (!all) break;
        }
        if (regex.lastIndex <= match.index) regex.lastIndex = match.index + 1;
      }
    }
  }
}

/** The secret's offsets in a match, or undefined when the rule's checks reject it. */
function secretOf(
  match: RegExpExecArray,
  rule: CredentialRule,
  text: string,
  property: string | undefined,
): [number, number, string?] | undefined {
  let group = 0;
  // A named group `key` is the pattern's first group, never the secret.
  for (let index = match.groups?.key === undefined ? 1 : 2; index < match.length; index++) {
    if (match[index] !== undefined) {
      group = index;
      break;
    }
  }
  const [start, rawEnd] = match.indices![group]!;
  let secret = match[group]!;
  const trimmed = secret.replace(TRAILING_BLANK, "");
  const end = rawEnd - (secret.length - trimmed.length);
  secret = trimmed;
  if (secret === "") return undefined;
  if (rule.minLength !== undefined && secret.length < rule.minLength) return undefined;
  const minEntropy = rule.minEntropy ?? (secret.length >= 16 ? DEFAULT_MIN_ENTROPY : 0);
  if (minEntropy > 0 && shannonEntropy(secret) < minEntropy) return undefined;
  if (rule.allow?.some((allow) => allow.test(secret))) return undefined;
  if (fillerSecrets.some((filler) => filler.test(secret))) return undefined;
  if (secret.length <= MAX_RUN_CHECKED && repeatedRun.test(secret)) return undefined;
  if (rule.verify !== undefined && !verifiers[rule.verify](secret)) return undefined;
  if (rule.keyName !== undefined) {
    const name = rule.key !== undefined ? property : keyOf(match, text);
    const kind = name === undefined ? undefined : secretKeyKind(name, vendorNames);
    if (kind === undefined || (rule.keyName !== "any" && kind !== rule.keyName)) return undefined;
    if (keyWords(name!).some((word) => strictVendorNames.has(word))) return undefined;
    if (rule.keyName === "any") return [start, end, KIND_LABELS[kind]];
  }
  return [start, end];
}

/** The match's named group `key`, grown backwards over the rest of its identifier. */
function keyOf(match: RegExpExecArray, text: string): string | undefined {
  const span = match.indices?.groups?.key;
  if (span === undefined) return undefined;
  let start = span[0];
  while (start > 0 && KEY_CHAR.test(text[start - 1]!)) start--;
  return text.slice(start, span[1]);
}

/** Evidence for a secret: its kind and at most its first four characters. */
export function credentialEvidence(label: string, secret: string): string {
  const shown = Math.min(4, Math.floor(secret.length / 2));
  return `${label}: ${secret.slice(0, shown)}…`;
}

/** The text with each secret replaced by `[REDACTED:<kind>]`. */
export function redact(text: string, matches: SecretMatch[]): string {
  let out = "";
  let at = 0;
  for (const match of matches) {
    out += text.slice(at, match.start) + `[REDACTED:${match.label}]`;
    at = match.end;
  }
  return out + text.slice(at);
}
