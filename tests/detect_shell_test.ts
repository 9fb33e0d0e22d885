/**
 * The shell reader behind destructive-command, path and domain detection.
 *
 * @module
 */

import assert from "node:assert/strict";
import { argvCommands, shellCommands } from "../src/detect/_shell.ts";

const words = (source: string) => shellCommands(source).map((command) => command.words);

Deno.test("quotes, escapes and extra spaces are read the way the shell reads them", () => {
  assert.deepEqual(words(`rm   -r  "-f"   'my dir'  a\\ b`), [["rm", "-r", "-f", "my dir", "a b"]]);
  assert.deepEqual(words(`echo "a \\"b\\" $HOME"`), [["echo", 'a "b" $HOME']]);
});

Deno.test("&&, ||, ;, | and newlines separate commands", () => {
  assert.deepEqual(words("a 1 && b 2 || c 3; d 4 | e 5\nf 6").map((command) => command[0]), [
    "a",
    "b",
    "c",
    "d",
    "e",
    "f",
  ]);
});

Deno.test("sudo, env, nohup, timeout and assignments are removed", () => {
  assert.deepEqual(words("sudo -u root env -i A=1 B=2 nohup timeout -s KILL 5 rm -rf x"), [[
    "rm",
    "-rf",
    "x",
  ]]);
  assert.deepEqual(words("LC_ALL=C FOO=bar git push -f"), [["git", "push", "-f"]]);
});

Deno.test("sh -c, bash -lc, eval and su -c run their script", () => {
  assert.deepEqual(words(`sh -c "rm -rf a && echo ok"`), [["rm", "-rf", "a"], ["echo", "ok"]]);
  assert.deepEqual(words(`bash -lc 'git reset --hard'`), [["git", "reset", "--hard"]]);
  assert.deepEqual(words(`eval "rm -rf b"`), [["rm", "-rf", "b"]]);
  assert.deepEqual(words(`su - root -c "rm -rf c"`), [["rm", "-rf", "c"]]);
});

Deno.test("substitutions and subshells are commands too", () => {
  const names = shellCommands("echo $(cat a) `cat b` <(cat c) (cd d && ls)").map((c) => c.name);
  assert.deepEqual(names.sort(), ["cat", "cat", "cat", "cd", "echo", "ls"]);
});

Deno.test("xargs feeds the command after it and marks it", () => {
  const [command] = shellCommands("xargs -0 -n 1 rm -f").filter((c) => c.name === "rm");
  assert.deepEqual(command!.words, ["rm", "-f"]);
  assert.equal(command!.viaXargs, true);
});

Deno.test("find -exec, ssh, docker exec and kubectl exec run inner commands", () => {
  const names = (source: string) => shellCommands(source).map((command) => command.name);
  assert.deepEqual(names("find . -exec rm -f {} \\;"), ["find", "rm"]);
  assert.deepEqual(names("ssh -p 22 host 'rm -rf x'"), ["ssh", "rm"]);
  assert.deepEqual(names("docker exec -u app web rm -rf /x"), ["docker", "rm"]);
  assert.deepEqual(names("kubectl exec -n p pod -- rm -rf /x"), ["kubectl", "rm"]);
});

Deno.test("here-documents go to the command that reads them", () => {
  const [command] = shellCommands("psql app <<'SQL'\nDROP TABLE t;\nSQL\necho done");
  assert.equal(command!.name, "psql");
  assert.deepEqual(command!.heredocs, ["DROP TABLE t;"]);
});

Deno.test("a shell reading stdin runs what echo pipes into it", () => {
  const names = shellCommands(`echo "rm -rf x" | bash`).map((command) => command.name);
  assert.ok(names.includes("rm"));
});

Deno.test("git's global options are removed before the subcommand", () => {
  assert.deepEqual(words("git -C /repo -c a=b --no-pager push --force"), [[
    "git",
    "push",
    "--force",
  ]]);
});

Deno.test("program paths are reduced to base names", () => {
  assert.equal(shellCommands("/usr/bin/rm -rf x")[0]!.name, "rm");
});

Deno.test("an argument vector is read as words, a single element as a command line", () => {
  assert.deepEqual(argvCommands(["bash", "-lc", "rm -rf a; ls"]).map((c) => c.name), ["rm", "ls"]);
  assert.deepEqual(argvCommands(["rm", "-rf", "my dir"])[0]!.words, ["rm", "-rf", "my dir"]);
  assert.deepEqual(argvCommands(["git status && rm -rf x"]).map((c) => c.name), ["git", "rm"]);
});

Deno.test("unterminated quotes and substitutions do not throw", () => {
  for (
    const source of [`echo "abc`, "echo 'abc", "echo $(ls", "echo `ls", "cat <<EOF", "a |", "\\"]
  ) {
    shellCommands(source);
  }
});
