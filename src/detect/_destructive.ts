/**
 * Matches commands and SQL statements against the rules of
 * `rules/destructive.ts`.
 *
 * @module
 */

import type { Command } from "./_shell.ts";
import type { DestructiveRule } from "./_types.ts";
import { destructiveRules } from "./rules/destructive.ts";

const shellRules = destructiveRules.filter((rule) => rule.scope === "shell");
const sqlRules = destructiveRules.filter((rule) => rule.scope === "sql");
const anyProgramRules = shellRules.filter((rule) => rule.keywords.includes("*"));
const SQL_KEYWORDS = [...new Set(sqlRules.flatMap((rule) => rule.keywords))];

/** Shell rules by program name, in rule order (rules for any program included). */
const rulesByProgram = new Map<string, DestructiveRule[]>();
for (const rule of shellRules) {
  for (const keyword of rule.keywords) {
    if (keyword === "*") continue;
    const list = rulesByProgram.get(keyword) ?? [];
    list.push(rule);
    rulesByProgram.set(keyword, list);
  }
}

/** Programs the shell rules are about, for a cheap test before parsing a command line. */
const PROGRAM_WORD = new RegExp(
  String.raw`(?:^|[^\w.-])(?:${[...rulesByProgram.keys()].join("|")})(?![\w-])|/dev/`,
);

/** Programs that run SQL (or a data store's commands) given as arguments or on stdin. */
export const SQL_CLIENTS = new Set([
  "psql",
  "mysql",
  "mariadb",
  "sqlite3",
  "sqlite",
  "duckdb",
  "clickhouse-client",
  "clickhouse",
  "sqlcmd",
  "cockroach",
  "usql",
  "pgcli",
  "mycli",
  "litecli",
  "snowsql",
  "bq",
  "trino",
  "presto",
  "spark-sql",
  "beeline",
  "cqlsh",
  "mongosh",
  "mongo",
  "redis-cli",
  "valkey-cli",
  "turso",
  "supabase",
  "wrangler",
]);

/** True when a command line may hold something a shell or SQL rule looks for. */
export function mayBeDestructiveCommand(text: string, lower: string): boolean {
  return PROGRAM_WORD.test(text) || mayBeDestructiveSql(lower);
}

/** True when the (lower-cased) text holds a keyword of some SQL rule. */
export function mayBeDestructiveSql(lower: string): boolean {
  for (const keyword of SQL_KEYWORDS) if (lower.includes(keyword)) return true;
  return false;
}

function rulesFor(name: string): DestructiveRule[] {
  const dot = name.indexOf(".");
  return rulesByProgram.get(name) ??
    (dot > 0 ? rulesByProgram.get(name.slice(0, dot)) : undefined) ??
    [];
}

function firstMatch(rules: DestructiveRule[], text: string): string | undefined {
  for (const rule of rules) {
    if (rule.pattern.test(text) && !rule.allow?.some((allow) => allow.test(text))) {
      return rule.label;
    }
  }
  return undefined;
}

/** The kind of destructive command this is, or undefined. */
export function destructiveCommand(command: Command): string | undefined {
  const text = [command.name, ...command.words.slice(1)].join(" ");
  const label = firstMatch(rulesFor(command.name), text) ?? firstMatch(anyProgramRules, text);
  if (label !== undefined || !command.viaXargs) return label;
  return firstMatch(rulesFor("xargs"), `xargs ${text}`);
}

/** SQL text split into statements, comments removed, quoted text kept whole. */
function statements(sql: string): string[] {
  const out: string[] = [];
  let current = "";
  const n = sql.length;
  for (let i = 0; i < n; i++) {
    const c = sql[i]!;
    if (c === "'" || c === '"' || c === "`") {
      const end = sql.indexOf(c, i + 1);
      const stop = end < 0 ? n - 1 : end;
      current += sql.slice(i, stop + 1);
      i = stop;
    } else if (c === "-" && sql[i + 1] === "-") {
      const end = sql.indexOf("\n", i);
      i = end < 0 ? n : end - 1;
    } else if (c === "/" && sql[i + 1] === "*") {
      const end = sql.indexOf("*/", i + 2);
      current += " ";
      i = end < 0 ? n : end + 1;
    } else if (c === ";") {
      out.push(current);
      current = "";
    } else current += c;
  }
  out.push(current);
  return out;
}

/** The kind of the first destructive statement in SQL text, or undefined. */
export function destructiveSql(sql: string): string | undefined {
  if (!mayBeDestructiveSql(sql.toLowerCase())) return undefined;
  for (const statement of statements(sql)) {
    const lower = statement.toLowerCase();
    for (const rule of sqlRules) {
      if (!rule.keywords.some((keyword) => lower.includes(keyword))) continue;
      if (rule.pattern.test(statement) && !rule.allow?.some((allow) => allow.test(statement))) {
        return rule.label;
      }
    }
  }
  return undefined;
}
