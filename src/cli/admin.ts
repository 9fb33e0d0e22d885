/**
 * Admin commands over the key store (DESIGN §3): `org`, `member`, `key`,
 * `actor`. They open `keys.db` directly, so they work while `serve` runs and
 * the server sees their effect on its next request.
 *
 * @module
 */
import { openKeyStoreFor } from "../store/open_stores.ts";
import type { Awaitable, KeyStoreApi } from "../store/stores.ts";
import {
  databaseOf,
  dataDirOf,
  type FlagSpec,
  parseFlags,
  printResult,
  required,
  UsageError,
} from "./usage.ts";

type Flags = Record<string, string | undefined>;

interface AdminCommand {
  flags: FlagSpec;
  run(store: KeyStoreApi, flags: Flags): Awaitable<Record<string, unknown>>;
}

const text = { type: "string" } as const;

const commands: Record<string, AdminCommand> = {
  "org create": {
    flags: { name: text },
    run: (store, f) => store.createOrg(required(f.name, "name")),
  },
  "member add": {
    flags: { org: text, email: text },
    run: (store, f) => store.addMember(required(f.org, "org"), required(f.email, "email")),
  },
  "member remove": {
    flags: { org: text, member: text },
    run: (store, f) => store.removeMember(required(f.org, "org"), required(f.member, "member")),
  },
  "key create": {
    flags: { org: text, member: text, name: text },
    run: (store, f) =>
      store.createKey(required(f.org, "org"), required(f.member, "member"), f.name ?? ""),
  },
  "key revoke": {
    flags: { id: text },
    run: (store, f) => store.revokeKey(required(f.id, "id")),
  },
  "key list": {
    flags: { org: text },
    run: (store, f) => store.listKeys(required(f.org, "org")),
  },
  "actor create": {
    flags: { org: text, name: text },
    run: (store, f) => store.createActor(required(f.org, "org"), f.name ?? ""),
  },
};

/** Names of the admin commands, for usage text. */
export const adminCommandNames = Object.keys(commands);

/** Whether `group` starts an admin command (`org`, `member`, `key`, `actor`). */
export function isAdminGroup(group: string): boolean {
  return adminCommandNames.some((name) => name.startsWith(`${group} `));
}

/** Runs `group action …flags`; usage errors before anything is opened. */
export async function runAdminCommand(
  group: string,
  action: string | undefined,
  args: string[],
): Promise<void> {
  const name = `${group} ${action ?? ""}`.trim();
  const command = commands[name];
  if (!command) throw new UsageError(`Unknown command: "${name}"`);
  const flags = parseFlags(args, { ...command.flags, database: text });
  const store = await openKeyStoreFor(dataDirOf(flags), databaseOf(flags));
  try {
    printResult(await command.run(store, flags as Flags), flags.json);
  } finally {
    await store.close();
  }
}
