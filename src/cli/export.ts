/**
 * `export`: an organization's tool calls (or whole sessions) of a window to
 * a file, as NDJSON, CSV or Parquet, for a SIEM or a warehouse. It reads the
 * store page by page as `GET /v1/export/*` does (`exportPages`), writing
 * each page before it reads the next, so its memory stays flat at any size;
 * it works while the server runs. The file appears whole: it is written as
 * FILE.partial and renamed when done. CSV and Parquet take their columns,
 * and Parquet its types, from the schema of a line (`api/schemas.ts`);
 * Parquet is written by DuckDB from an NDJSON file beside it
 * (`COPY … TO … (FORMAT parquet)`), removed after.
 *
 * @module
 */
import { DuckDBInstance } from "@duckdb/node-api";
import { z } from "zod";
import { ActorNames } from "../api/actor_names.ts";
import {
  type ExportKind,
  exportPages,
  ndjsonLines,
  SESSION_EXPORT,
  TOOL_CALL_EXPORT,
} from "../api/export.ts";
import { parseRfc3339 } from "../api/params.ts";
import { KeyStoreInputError } from "../store/key_material.ts";
import { MEMORY_BUDGET } from "../memory_budget.ts";
import { openExportStores } from "../store/open_stores.ts";
import {
  type CommandDef,
  DATA_FLAG,
  DATABASE_FLAG,
  JSON_FLAG,
  type ParsedFlags,
  required,
} from "./flags.ts";
import { commandStore } from "./store_presence.ts";
import { printResult, UsageError } from "./usage.ts";

type Row = Record<string, unknown>;

/** The formats, by `--format`. */
const FORMATS = ["ndjson", "csv", "parquet"] as const;
type Format = (typeof FORMATS)[number];

/** What `--what` exports, by the kind's name. */
const KINDS: readonly ExportKind<{ after?: number; before?: number }>[] = [
  TOOL_CALL_EXPORT,
  SESSION_EXPORT,
];

/** Each page's query time limit, as the server's default. */
const PAGE_TIMEOUT_MS = 30_000;

/** One column of a CSV or Parquet export: a field of the line and its DuckDB type. */
export interface ExportColumn {
  name: string;
  duckdbType: string;
}

type JsonSchema = Record<string, unknown>;

/** The columns of an export's lines: the fields of its schema, in order. */
export function exportColumns(line: z.ZodObject): ExportColumn[] {
  const schema = z.toJSONSchema(line, { io: "output" }) as JsonSchema;
  const properties = schema.properties as Record<string, JsonSchema>;
  return Object.entries(properties).map(([name, field]) => ({
    name,
    duckdbType: duckdbType(field, name),
  }));
}

/** A field's DuckDB type from its JSON Schema (null allowed everywhere). */
function duckdbType(field: JsonSchema, name: string): string {
  // A nullable field is `anyOf` with null, or a `type` list with "null".
  const alternatives: JsonSchema[] = (field.anyOf as JsonSchema[] | undefined) ??
    (Array.isArray(field.type) ? field.type.map((type) => ({ ...field, type })) : [field]);
  const types = alternatives.filter((alternative) => alternative.type !== "null");
  const type: JsonSchema = types.length === 1 ? types[0]! : {};
  switch (type.type) {
    case "string":
      return type.format === "date-time" ? "TIMESTAMPTZ" : "VARCHAR";
    case "integer":
      return "BIGINT";
    case "number":
      return "DOUBLE";
    case "boolean":
      return "BOOLEAN";
    case "array":
      return `${duckdbType(type.items as JsonSchema, name)}[]`;
    case "object": {
      // A record (a session's dimensions: key to value) is a map.
      if (type.properties === undefined && typeof type.additionalProperties === "object") {
        return `MAP(VARCHAR, ${duckdbType(type.additionalProperties as JsonSchema, name)})`;
      }
      const fields = Object.entries(type.properties as Record<string, JsonSchema>)
        .map(([inner, schema]) => `${quoteIdentifier(inner)} ${duckdbType(schema, inner)}`);
      return `STRUCT(${fields.join(", ")})`;
    }
  }
  throw new Error(`No DuckDB type for the export field "${name}": ${JSON.stringify(field)}`);
}

function quoteIdentifier(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

function quoteLiteral(text: string): string {
  return `'${text.replaceAll("'", "''")}'`;
}

/** A value as a CSV field (RFC 4180): absent is empty, lists and objects are JSON. */
function csvField(value: unknown): string {
  if (value === null || value === undefined) return "";
  const text = typeof value === "object" ? JSON.stringify(value) : String(value);
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/** Rows as CSV lines of `columns`. */
export function csvLines(columns: readonly ExportColumn[], rows: readonly Row[]): string {
  let text = "";
  for (const row of rows) text += columns.map((c) => csvField(row[c.name])).join(",") + "\r\n";
  return text;
}

/** Writes the pages as text to `path`, one write per page; resolves with the rows written. */
async function writeText(
  path: string,
  header: string,
  pages: AsyncIterable<Row[]> | Iterable<Row[]>,
  format: (rows: Row[]) => string,
): Promise<number> {
  const file = await Deno.open(path, { write: true, create: true, truncate: true, mode: 0o600 });
  const writer = file.writable.getWriter();
  const encoder = new TextEncoder();
  let rows = 0;
  try {
    if (header !== "") await writer.write(encoder.encode(header));
    for await (const page of pages) {
      await writer.write(encoder.encode(format(page)));
      rows += page.length;
    }
    await writer.close();
  } catch (error) {
    await writer.abort(error).catch(() => {});
    throw error;
  }
  return rows;
}

/** Parquet at `path` from the NDJSON at `ndjson`, columns typed as `columns` say. */
async function ndjsonToParquet(
  ndjson: string,
  path: string,
  columns: readonly ExportColumn[],
): Promise<void> {
  const instance = await DuckDBInstance.create(":memory:", {
    "memory_limit": `${MEMORY_BUDGET.duckdbMiB}MiB`,
    "threads": "2",
  });
  try {
    const connection = await instance.connect();
    try {
      const types = columns.map((c) => `${quoteLiteral(c.name)}: ${quoteLiteral(c.duckdbType)}`);
      await connection.run(
        `COPY (SELECT ${columns.map((c) => quoteIdentifier(c.name)).join(", ")} FROM read_json(${
          quoteLiteral(ndjson)
        }, format = 'newline_delimited', columns = {${types.join(", ")}})) TO ${
          quoteLiteral(path)
        } (FORMAT parquet, COMPRESSION zstd)`,
      );
    } finally {
      connection.closeSync();
    }
  } finally {
    instance.closeSync();
  }
}

/** An instant of `--after`/`--before`, or undefined when not given. */
function instantOf(flags: ParsedFlags, name: "after" | "before"): number | undefined {
  const text = flags.text(name);
  if (text === undefined || text === "") return undefined;
  const ms = parseRfc3339(text);
  if (ms === null) {
    throw new UsageError(
      `Invalid --${name}: ${
        JSON.stringify(text)
      } (expected RFC 3339 with a time zone, e.g. 2026-11-22T10:00:00Z)`,
    );
  }
  return ms;
}

function oneOf<T extends string>(flags: ParsedFlags, name: string, values: readonly T[]): T {
  const value = required(flags, name);
  if (!(values as readonly string[]).includes(value)) {
    throw new UsageError(
      `Invalid --${name}: ${JSON.stringify(value)} (expected ${values.join(", ")})`,
    );
  }
  return value as T;
}

async function removeIfPresent(path: string): Promise<void> {
  await Deno.remove(path).catch((error) => {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  });
}

async function runExport(flags: ParsedFlags): Promise<void> {
  const orgId = required(flags, "org");
  const format = oneOf(flags, "format", FORMATS);
  const what = oneOf(flags, "what", KINDS.map((kind) => kind.name));
  const out = required(flags, "out");
  const after = instantOf(flags, "after");
  const before = instantOf(flags, "before");
  const { dir, database } = commandStore(flags, "keys");
  const stores = await openExportStores(dir, database, { timeoutMs: PAGE_TIMEOUT_MS });
  const partial = `${out}.partial`;
  const ndjson = format === "parquet" ? `${out}.partial.ndjson` : partial;
  try {
    const { orgs } = await stores.keys.listOrgs();
    if (!orgs.some((org) => org.id === orgId)) {
      throw new KeyStoreInputError(`Unknown organization: ${JSON.stringify(orgId)}`);
    }
    const kind = KINDS.find((candidate) => candidate.name === what)!;
    const pages = stores.reader === null ? [] : exportPages(
      { reader: stores.reader, actorNames: new ActorNames(stores.keys) },
      kind,
      orgId,
      { after, before },
      null,
    );
    const columns = exportColumns(kind.line);
    const rows = format === "csv"
      ? await writeText(
        ndjson,
        columns.map((c) => csvField(c.name)).join(",") + "\r\n",
        pages,
        (page) => csvLines(columns, page),
      )
      : await writeText(ndjson, "", pages, ndjsonLines);
    if (format === "parquet") await ndjsonToParquet(ndjson, partial, columns);
    await Deno.rename(partial, out);
    printResult({ rows, format, what, out }, flags.json);
  } catch (error) {
    await removeIfPresent(partial);
    throw error;
  } finally {
    if (ndjson !== partial) await removeIfPresent(ndjson);
    await stores.close();
  }
}

/** `export`: prints the rows written, the format, what was exported and the file. */
export const exportCommand: CommandDef = {
  name: "export",
  summary: "write an organization's tool calls or sessions of a window to a file (NDJSON, CSV, " +
    "Parquet)",
  details: [
    "The lines of GET /v1/export/tool-calls (or /v1/export/sessions), oldest first; CSV has a",
    "header and lists as JSON text, Parquet (written by DuckDB) typed columns. Read page by page",
    "while the server runs; FILE appears when it is whole (FILE.partial until then).",
  ],
  flags: [
    { name: "org", value: "ORG", required: true, description: "organization id" },
    {
      name: "format",
      value: "FORMAT",
      default: "ndjson",
      description: "ndjson, csv or parquet",
    },
    { name: "out", value: "FILE", required: true, description: "the file to write (replaced)" },
    {
      name: "after",
      value: "TIME",
      description: "only rows at or after this instant (RFC 3339 with a zone; sessions: last_seen)",
    },
    { name: "before", value: "TIME", description: "only rows at or before this instant" },
    {
      name: "what",
      value: "WHAT",
      default: "tool-calls",
      description: "tool-calls (with their risk flags and domains) or sessions (whole)",
    },
    { ...DATA_FLAG, description: "data directory holding keys.db (refused when it holds none)" },
    DATABASE_FLAG,
    JSON_FLAG,
  ],
  run: runExport,
};
