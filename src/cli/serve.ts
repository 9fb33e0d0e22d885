/**
 * `serve`: validated configuration, both listeners, graceful shutdown on
 * SIGINT/SIGTERM.
 *
 * @module
 */
import {
  type ListenAddress,
  resolveServeConfig,
  SERVE_SETTINGS,
  type ServeFlags,
  serveSettingDefault,
  settingEntries,
} from "../config.ts";
import { UserInputError } from "../errors.ts";
import { startServer } from "../server/server.ts";
import { log } from "../log.ts";
import { type CommandDef, type FlagDef, JSON_FLAG, type ParsedFlags } from "./flags.ts";

/**
 * The flags of `serve`, one per configuration setting (`SERVE_SETTINGS`):
 * the same table validates them, so help lists exactly what is accepted.
 * Environment variables and defaults are applied by `resolveServeConfig`.
 */
export const serveFlagDefs: readonly FlagDef[] = settingEntries().map(([key, setting]) => ({
  name: setting.flag,
  value: setting.value,
  env: setting.env,
  default: serveSettingDefault(key),
  ...(setting.repeatable ? { repeatable: true } : {}),
  description: setting.description,
}));

/** Flags of `serve` as `parseArgs` takes them. */
export const serveFlagSpec = Object.fromEntries(
  settingEntries().map(([, setting]) => [
    setting.flag,
    { type: setting.value === undefined ? "boolean" : "string" },
  ]),
) as Record<string, { type: "string" | "boolean" }>;

/** Configuration flags out of parsed `serve` flags (given on the command line only). */
export function serveFlags(
  values: Readonly<Record<string, string | boolean | undefined>>,
): ServeFlags {
  const flags: ServeFlags = {};
  for (const [key, setting] of settingEntries()) {
    const value = values[setting.flag];
    if (value !== undefined) flags[key] = value;
  }
  return flags;
}

/** `serve`: both listeners until SIGINT or SIGTERM. */
export const serveCommand: CommandDef = {
  name: "serve",
  summary: "serve the query API and the OTLP ingest listeners",
  details: [
    "Flags win over environment variables, which win over defaults. A bad value prints one",
    "line and exits with code 2, creating nothing. A switch's variable takes 1, true, yes or on",
    "(0, false, no, off or empty for off). Logs are JSON lines on stderr.",
  ],
  flags: [...serveFlagDefs, JSON_FLAG],
  run: runServe,
};

async function runServe(flags: ParsedFlags): Promise<void> {
  const config = resolveServeConfig(serveFlags(flags.given));
  const listeners: [ListenAddress, string][] = [
    [config.listen, `--${SERVE_SETTINGS.listen.flag}`],
    [config.ingestListen, `--${SERVE_SETTINGS.ingestListen.flag}`],
  ];
  if (config.grpcListen !== null) {
    listeners.push([config.grpcListen, `--${SERVE_SETTINGS.grpcListen.flag}`]);
  }
  requireDistinct(listeners);
  for (const [address, flag] of listeners) requirePortFree(address, flag);
  const server = await startServer(config);
  await waitForSignal();
  log("info", "shutting down: finishing in-flight requests");
  await server.close();
  log("info", "stopped");
}

/** Whether two addresses would take one port: the same port on the same or a wildcard host. */
function overlap(a: ListenAddress, b: ListenAddress): boolean {
  if (a.port === 0 || a.port !== b.port) return false;
  const wildcard = (host: string) => host === "0.0.0.0" || host === "::" || host === "";
  return a.hostname === b.hostname || wildcard(a.hostname) || wildcard(b.hostname);
}

/** Fails with one line naming both flags when two listeners would take one port. */
function requireDistinct(listeners: readonly [ListenAddress, string][]): void {
  for (const [i, [a, flagA]] of listeners.entries()) {
    for (const [b, flagB] of listeners.slice(i + 1)) {
      if (overlap(a, b)) {
        throw new UserInputError(
          `${flagA} and ${flagB} both take port ${a.port}; give each listener its own port`,
        );
      }
    }
  }
}

/**
 * Fails with one line when a fixed port cannot be bound (in use, not
 * permitted), before anything is opened or created.
 */
function requirePortFree(address: ListenAddress, flag: string): void {
  if (address.port === 0) return;
  let listener: Deno.Listener;
  try {
    listener = Deno.listen({ hostname: address.hostname, port: address.port });
  } catch (error) {
    const shown = address.hostname.includes(":")
      ? `[${address.hostname}]:${address.port}`
      : `${address.hostname}:${address.port}`;
    const reason = error instanceof Deno.errors.AddrInUse
      ? "already in use; stop the other process or choose another port"
      : `${error instanceof Error ? error.message : String(error)}; choose another address`;
    throw new UserInputError(`Cannot listen on "${shown}" (${flag}): ${reason}`);
  }
  listener.close();
}

/** Resolves on the first SIGINT or SIGTERM. */
export function waitForSignal(): Promise<void> {
  return new Promise((resolve) => {
    const stop = () => {
      Deno.removeSignalListener("SIGINT", stop);
      Deno.removeSignalListener("SIGTERM", stop);
      resolve();
    };
    Deno.addSignalListener("SIGINT", stop);
    Deno.addSignalListener("SIGTERM", stop);
  });
}
