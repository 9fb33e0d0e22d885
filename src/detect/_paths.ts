/**
 * Decides whether a path names a sensitive file, with the rules of
 * `rules/sensitive_paths.ts`, and picks the words of a command that may be
 * paths.
 *
 * @module
 */

import { sensitivePathRules } from "./rules/sensitive_paths.ts";

/** Longest path considered; anything longer is not a path an agent typed. */
const MAX_PATH = 1024;
const PATH_KEYWORD = new RegExp(
  [...new Set(sensitivePathRules.flatMap((rule) => rule.keywords))]
    .map((keyword) => keyword.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&"))
    .join("|"),
  "i",
);
const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*=/;
const BRACES = /\{([^{}]*)\}/;

/** True when some sensitive-path keyword occurs in the text (a cheap test before the rules). */
export function mayNameSensitivePath(text: string): boolean {
  return PATH_KEYWORD.test(text);
}

/** The path as the rules see it: lower case, `/` separators, `~` for the home directory. */
export function normalizePath(path: string): string {
  let out = path.trim().toLowerCase().replaceAll("\\", "/");
  if (out.startsWith("file://")) out = out.slice("file://".length);
  out = out.replace(/^(?:\$\{home\}|\$home|%userprofile%)(?=\/|$)/, "~").replace(/\/{2,}/g, "/");
  if (out.length > 1 && out.endsWith("/")) out = out.slice(0, -1);
  return out;
}

/** `*.{pem,key}` → `*.pem`, `*.key` (one level, a few alternatives). */
function expandBraces(path: string): string[] {
  const match = BRACES.exec(path);
  if (match === null) return [path];
  const head = path.slice(0, match.index);
  const tail = path.slice(match.index + match[0].length);
  return match[1]!.split(",").slice(0, 16).map((part) => head + part + tail);
}

/** True when the path (or glob) names a sensitive file or directory. */
export function isSensitivePath(path: string): boolean {
  if (path.length === 0 || path.length > MAX_PATH) return false;
  if (!PATH_KEYWORD.test(path) && !path.includes("{")) return false;
  for (const variant of expandBraces(normalizePath(path))) {
    for (const rule of sensitivePathRules) {
      if (!rule.keywords.some((keyword) => variant.includes(keyword))) continue;
      if (rule.pattern.test(variant) && !rule.allow?.some((allow) => allow.test(variant))) {
        return true;
      }
    }
  }
  return false;
}

/**
 * The parts of a command word that may be paths: the word itself, the value
 * of `--opt=value` or `NAME=value`, without a leading `@` (curl's `-d @file`),
 * split at `:` (`scp host:path`, `docker -v a:b`).
 */
export function pathCandidates(word: string): string[] {
  if (word === "" || word.length > MAX_PATH || /\s/.test(word)) return [];
  if (word.includes("://") || word.includes("$(") || word.includes("`")) return [];
  let value = word;
  if (value.startsWith("-")) {
    const equals = value.indexOf("=");
    if (equals < 0) return [];
    value = value.slice(equals + 1);
  } else if (ASSIGNMENT.test(value)) value = value.slice(value.indexOf("=") + 1);
  if (value.startsWith("@")) value = value.slice(1);
  const parts = value.includes(":") ? value.split(":") : [value];
  return parts.filter((part) => part !== "");
}

/** Quoted string literals in a line of code (`open('.env')`), for interpreter one-liners. */
export function stringLiterals(code: string): string[] {
  const out: string[] = [];
  for (const match of code.matchAll(/'([^'\n]{1,1024})'|"([^"\n]{1,1024})"/g)) {
    out.push(match[1] ?? match[2]!);
  }
  return out;
}

/**
 * Paths named by a patch in Codex's `apply_patch` format (`*** Update File:
 * path`) or a unified diff (`+++ b/path`).
 */
export function patchPaths(patch: string): string[] {
  const out: string[] = [];
  for (
    const match of patch.matchAll(
      /^(?:\*\*\* (?:Add|Update|Delete) File: |\*\*\* Move to: |(?:\+\+\+|---) (?:[ab]\/)?)([^\n\t]+?)[ \t]*$/gm,
    )
  ) {
    if (match[1] !== "/dev/null") out.push(match[1]!);
  }
  return out;
}
