/**
 * The real-agent harness runs third-party CLIs: they must not reach anything
 * but loopback. The harness re-executes itself inside a new network namespace
 * (`unshare -n`, then `ip link set lo up`) and refuses to run anywhere else.
 *
 * @module
 */

/** The network interfaces of this process's namespace, from `/proc/self/net/dev`. */
export function interfaces(): string[] {
  const text = Deno.readTextFileSync("/proc/self/net/dev");
  return text.split("\n").slice(2).map((line) => line.split(":")[0]!.trim()).filter((name) =>
    name !== ""
  );
}

/** Throws unless this process sees no network interface but loopback. */
export function assertLoopbackOnly(): void {
  const names = interfaces();
  const others = names.filter((name) => name !== "lo");
  if (others.length > 0 || !names.includes("lo")) {
    throw new Error(
      `Refusing to run agents outside a loopback-only network namespace: interfaces ${
        JSON.stringify(names)
      }`,
    );
  }
}

/** Whether this process already runs in a namespace with loopback alone. */
export function inLoopbackNamespace(): boolean {
  const names = interfaces();
  return names.length === 1 && names[0] === "lo";
}

/**
 * Runs `command` inside a new network namespace with only loopback up; resolves
 * with its exit code. Stdout and stderr are inherited.
 */
export async function runInLoopbackNamespace(command: string[]): Promise<number> {
  const child = new Deno.Command("unshare", {
    args: ["-n", "--", "sh", "-c", 'ip link set lo up && exec "$@"', "sh", ...command],
    stdin: "null",
    stdout: "inherit",
    stderr: "inherit",
  }).spawn();
  return (await child.status).code;
}
