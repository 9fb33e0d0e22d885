/**
 * Admin commands over the key store (docs/design.md §3): `org`, `member`, `key`,
 * `actor`. They open `keys.db` directly, so they work while `serve` runs and
 * the server sees their effect on its next request. They refuse a data
 * directory without a key store, except `org create` in a missing or empty
 * one: the first command of a setup.
 *
 * @module
 */
import { announce } from "../log.ts";
import { openKeyStoreFor } from "../store/open_stores.ts";
import type { Awaitable, KeyStoreApi } from "../store/stores.ts";
import {
  type CommandDef,
  DATA_FLAG,
  DATABASE_FLAG,
  type FlagDef,
  JSON_FLAG,
  type ParsedFlags,
  required,
} from "./flags.ts";
import { commandStore } from "./store_presence.ts";
import { printResult } from "./usage.ts";

interface AdminCommand {
  name: string;
  summary: string;
  /** Flags besides `--data`, `--database` and `--json`. */
  flags: readonly FlagDef[];
  /** `org create` may start a new store in a missing or empty directory. */
  createsStore?: boolean;
  run(store: KeyStoreApi, flags: ParsedFlags): Awaitable<Record<string, unknown>>;
  /** A list's text form (without `--json`): these columns of each row, under a header. */
  table?: { rows: string; columns: readonly string[] };
}

const org: FlagDef = { name: "org", value: "ORG", required: true, description: "organization id" };

const adminCommands: readonly AdminCommand[] = [
  {
    name: "org create",
    summary: "create an organization (in a missing or empty --data, a new store)",
    flags: [{ name: "name", value: "NAME", required: true, description: "organization name" }],
    createsStore: true,
    run: (store, f) => store.createOrg(required(f, "name")),
  },
  {
    name: "org list",
    summary: "list the organizations",
    flags: [],
    run: (store) => store.listOrgs(),
    table: { rows: "orgs", columns: ["id", "name", "created_at"] },
  },
  {
    name: "member add",
    summary: "add a member to an organization",
    flags: [org, { name: "email", value: "EMAIL", required: true, description: "member's email" }],
    run: (store, f) => store.addMember(required(f, "org"), required(f, "email")),
  },
  {
    name: "member remove",
    summary: "remove a member and revoke every API key it created",
    flags: [org, { name: "member", value: "MEMBER", required: true, description: "member id" }],
    run: (store, f) => store.removeMember(required(f, "org"), required(f, "member")),
  },
  {
    name: "member list",
    summary: "list an organization's members",
    flags: [org],
    run: (store, f) => store.listMembers(required(f, "org")),
    table: { rows: "members", columns: ["id", "email", "created_at"] },
  },
  {
    name: "key create",
    summary: "create a query API key (wb_api_…) for a member; the key is shown only here",
    flags: [
      org,
      {
        name: "member",
        value: "MEMBER",
        required: true,
        description: "member id the key speaks for",
      },
      { name: "name", value: "NAME", description: "label shown by key list" },
    ],
    run: (store, f) =>
      store.createKey(required(f, "org"), required(f, "member"), f.text("name") ?? ""),
  },
  {
    name: "key revoke",
    summary: "revoke a query API key at once",
    flags: [{ name: "id", value: "KEY", required: true, description: "key id (key_…)" }],
    run: (store, f) => store.revokeKey(required(f, "id")),
  },
  {
    name: "key list",
    summary: "list an organization's API keys (never the keys themselves)",
    flags: [org],
    run: (store, f) => store.listKeys(required(f, "org")),
  },
  {
    name: "actor create",
    summary: "create an actor (one agent, machine or person) and its ingest key (wb_ingest_…)",
    flags: [org, { name: "name", value: "NAME", description: "actor name, e.g. alice-laptop" }],
    run: (store, f) => store.createActor(required(f, "org"), f.text("name") ?? ""),
  },
  {
    name: "actor list",
    summary: "list an organization's actors, revoked ones included",
    flags: [org],
    run: (store, f) => store.listActors(required(f, "org")),
    table: { rows: "actors", columns: ["id", "name", "created_at", "revoked_at"] },
  },
  {
    name: "actor revoke",
    summary: "revoke an actor's ingest key: its next export is refused",
    flags: [{ name: "id", value: "ACTOR", required: true, description: "actor id (act_…)" }],
    run: (store, f) => store.revokeActor(required(f, "id")),
  },
];

/** The admin commands as entries of the command table. */
export const adminCommandDefs: readonly CommandDef[] = adminCommands.map((command) => ({
  name: command.name,
  summary: command.summary,
  details: command.table
    ? ["Without --json: a header line and one tab-separated line per row (absent values are -)."]
    : undefined,
  flags: [
    ...command.flags,
    {
      ...DATA_FLAG,
      description: command.createsStore
        ? "data directory; a missing or empty one gets a new store"
        : "data directory holding keys.db (refused when it holds none)",
    },
    DATABASE_FLAG,
    JSON_FLAG,
  ],
  run: (flags) => runAdminCommand(command, flags),
}));

async function runAdminCommand(command: AdminCommand, flags: ParsedFlags): Promise<void> {
  const { dir, database } = commandStore(flags, command.createsStore ? "keys or new" : "keys");
  const store = await openKeyStoreFor(dir, database);
  try {
    const result = await command.run(store, flags);
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
