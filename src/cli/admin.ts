/**
 * Admin commands over the key store (DESIGN §3): `org`, `member`, `key`,
 * `actor`. They open `keys.db` directly, so they work while `serve` runs and
 * the server sees their effect on its next request.
 *
 * @module
 */
import { announce } from "../log.ts";
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
  /** A list's text form (without `--json`): these columns of each row, under a header. */
  table?: { rows: string; columns: readonly string[] };
}

const text = { type: "string" } as const;

const commands: Record<string, AdminCommand> = {
  "org create": {
    flags: { name: text },
    run: (store, f) => store.createOrg(required(f.name, "name")),
  },
  "org list": {
    flags: {},
    run: (store) => store.listOrgs(),
    table: { rows: "orgs", columns: ["id", "name", "created_at"] },
  },
  "member add": {
    flags: { org: text, email: text },
    run: (store, f) => store.addMember(required(f.org, "org"), required(f.email, "email")),
  },
  "member remove": {
    flags: { org: text, member: text },
    run: (store, f) => store.removeMember(required(f.org, "org"), required(f.member, "member")),
  },
  "member list": {
    flags: { org: text },
    run: (store, f) => store.listMembers(required(f.org, "org")),
    table: { rows: "members", columns: ["id", "email", "created_at"] },
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
  "actor list": {
    flags: { org: text },
    run: (store, f) => store.listActors(required(f.org, "org")),
    table: { rows: "actors", columns: ["id", "name", "created_at", "revoked_at"] },
  },
  "actor revoke": {
    flags: { id: text },
    run: (store, f) => store.revokeActor(required(f.id, "id")),
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
    const result = await command.run(store, flags as Flags);
    if (command.table && !flags.json) printTable(result, command.table);
    else printResult(result, flags.json);
  } finally {
    await store.close();
  }
}

/** A list as tab-separated lines under a header; an absent value (not revoked) is `-`. */
function printTable(
  result: Record<string, unknown>,
  table: { rows: string; columns: readonly string[] },
): void {
  const rows = result[table.rows] as Record<string, unknown>[];
  announce(table.columns.join("\t"));
  for (const row of rows) {
    announce(table.columns.map((column) => String(row[column] ?? "-")).join("\t"));
  }
}
