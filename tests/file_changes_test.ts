/**
 * Lines derived from file-writing tool calls' stored arguments
 * (`src/analytics/file_changes.ts`), one case per rule, with the arguments
 * as the agents' recordings store them.
 */
import assert from "node:assert/strict";
import { deriveLineColumns, lineChanges, lineCount } from "../src/analytics/file_changes.ts";

const json = (value: unknown) => JSON.stringify(value);

Deno.test("lineCount: a final newline ends the last line, it does not start one", () => {
  assert.equal(lineCount(""), 0);
  assert.equal(lineCount("a"), 1);
  assert.equal(lineCount("a\n"), 1);
  assert.equal(lineCount("a\nb"), 2);
  assert.equal(lineCount("a\n\n"), 2);
  assert.equal(lineCount("\n"), 1);
});

Deno.test("lineChanges: each file-writing tool's arguments", async (t) => {
  const cases: { name: string; tool: string; args: string | null; want: unknown }[] = [
    {
      name: "Claude Code Write (the recorded run's)",
      tool: "Write",
      args: json({ file_path: "/p/out.txt", content: "written by harness\n" }),
      want: { added: 1, removed: 0 },
    },
    {
      name: "Gemini CLI write_file, pretty-printed as it logs it",
      tool: "write_file",
      args: '{\n  "file_path": "hello.txt",\n  "content": "hello from the mock model\\n"\n}',
      want: { added: 1, removed: 0 },
    },
    {
      name: "Edit: lines both texts share at the ends are not changes",
      tool: "Edit",
      args: json({ file_path: "a.ts", old_string: "a\nb\nc\n", new_string: "a\nB\nB2\nc\n" }),
      want: { added: 2, removed: 1 },
    },
    {
      name: "Edit of one line",
      tool: "Edit",
      args: json({ old_string: "const limit = 50;", new_string: "const limit = 100;" }),
      want: { added: 1, removed: 1 },
    },
    {
      name: "Gemini replace, expected_replacements times",
      tool: "replace",
      args: json({ old_string: "x", new_string: "y\nz", expected_replacements: 3 }),
      want: { added: 6, removed: 3 },
    },
    {
      name: "MultiEdit sums its edits",
      tool: "MultiEdit",
      args: json({
        edits: [{ old_string: "a", new_string: "b" }, { old_string: "", new_string: "c\nd\n" }],
      }),
      want: { added: 3, removed: 1 },
    },
    {
      name: "NotebookEdit adds its new source",
      tool: "NotebookEdit",
      args: json({ notebook_path: "n.ipynb", new_source: "x = 1\ny = 2" }),
      want: { added: 2, removed: 0 },
    },
    {
      name: "Codex apply_patch stored as the JSON-encoded raw patch (the recording's)",
      tool: "apply_patch",
      args: json(
        "*** Begin Patch\n*** Add File: hello.txt\n+hello from the mock model\n*** End Patch\n",
      ),
      want: { added: 1, removed: 0 },
    },
    {
      name: "apply_patch {input}: + and - lines, context and headers not",
      tool: "apply_patch",
      args: json({
        input:
          "*** Begin Patch\n*** Update File: a.ts\n@@\n ctx\n-const r = 1;\n+const r = 3;\n+// more\n*** End Patch\n",
      }),
      want: { added: 2, removed: 1 },
    },
    { name: "no stored arguments", tool: "Write", args: null, want: null },
    {
      name: "capped arguments (not whole JSON)",
      tool: "Write",
      args: '{"content":"ab',
      want: null,
    },
    { name: "a field missing", tool: "Edit", args: json({ new_string: "a" }), want: null },
    { name: "not a file-writing tool", tool: "Bash", args: json({ command: "ls" }), want: null },
  ];
  for (const c of cases) {
    await t.step(c.name, () => assert.deepEqual(lineChanges(c.tool, c.args), c.want));
  }
});

Deno.test("deriveLineColumns puts a source row's lines where its arguments were", () => {
  const row = (tool: string, args: string | null) => [
    "id",
    "org",
    "s",
    1,
    tool,
    "builtin",
    "ok",
    null,
    "claude-code",
    null,
    7,
    "act",
    args,
    null,
  ];
  const rows = [
    row("Write", json({ content: "a\nb\n" })),
    row("Bash", null),
    row("Write", "{"),
  ];
  deriveLineColumns(rows);
  assert.deepEqual(rows.map((r) => r.slice(11)), [
    ["act", 2, 0],
    ["act", null, null],
    ["act", null, null],
  ]);
});
