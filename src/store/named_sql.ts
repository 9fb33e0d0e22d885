/**
 * Reads a `.sql` file of named statements: each starts with a line
 * `-- name: some_name` and runs to the next such line.
 *
 * @module
 */

/** Splits the text into statements by their `-- name:` headers. */
export function parseNamedSql(text: string): Record<string, string> {
  const statements: Record<string, string> = {};
  let name: string | null = null;
  let lines: string[] = [];
  const flush = () => {
    if (name !== null) statements[name] = lines.join("\n").trim();
  };
  for (const line of text.split("\n")) {
    const header = /^--\s*name:\s*(\w+)\s*$/.exec(line);
    if (header) {
      flush();
      name = header[1]!;
      lines = [];
    } else if (name !== null && !line.startsWith("--")) {
      lines.push(line);
    }
  }
  flush();
  return statements;
}

/** Looks a statement up, failing loudly at start-up when a name is missing. */
export function namedSql(statements: Record<string, string>, name: string): string {
  const sql = statements[name];
  if (sql === undefined) throw new Error(`Missing SQL statement: "${name}"`);
  return sql;
}
