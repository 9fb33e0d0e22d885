/**
 * The key store in PostgreSQL (docs/design.md §8): the same organizations, members,
 * API keys and actors as `keys.db`, shared by every node. Every check reads
 * the database, so a revocation through any node or the CLI holds on all
 * nodes at their next request.
 *
 * @module
 */
import keysSql from "../../../sql/postgres/keys.sql" with { type: "text" };
import {
  actorNotFound,
  apiKeyHash,
  ingestKeyHash,
  keyNotFound,
  listedActor,
  listedKey,
  listedMember,
  listedOrg,
  memberExists,
  memberNotFound,
  newApiKey,
  newIngestKey,
  newMemberId,
  newOrgId,
  orgNotFound,
  readOnlyWrite,
  revokedKey,
  type StoredKey,
  type StoredRow,
} from "../key_material.ts";
import { namedSql, parseNamedSql } from "../named_sql.ts";
import type {
  ApiPrincipal,
  IngestPrincipal,
  KeyStoreApi,
  ListedActor,
  ListedKey,
  ListedMember,
  ListedOrg,
} from "../stores.ts";
import {
  connectPostgres,
  numberPlaceholders,
  type PgParam,
  type Sql,
  type TransactionSql,
} from "./client.ts";
import { migrateOrEnd } from "./migrate.ts";

type Db = Sql | TransactionSql;

const parsed = parseNamedSql(keysSql);
const statement = (name: string) => numberPlaceholders(namedSql(parsed, name));
const SQL = {
  findApiKey: statement("find_api_key"),
  findIngestKey: statement("find_ingest_key"),
  probe: statement("probe"),
  findOrg: statement("find_org"),
  insertOrg: statement("insert_org"),
  insertMember: statement("insert_member"),
  lockMemberForKey: statement("lock_member_for_key"),
  lockMemberForRemoval: statement("lock_member_for_removal"),
  revokeMemberKeys: statement("revoke_member_keys"),
  deleteMember: statement("delete_member"),
  insertApiKey: statement("insert_api_key"),
  lockApiKey: statement("lock_api_key"),
  revokeApiKey: statement("revoke_api_key"),
  listApiKeys: statement("list_api_keys"),
  insertActor: statement("insert_actor"),
  listOrgs: statement("list_orgs"),
  listMembers: statement("list_members"),
  listActors: statement("list_actors"),
  lockActor: statement("lock_actor"),
  revokeActor: statement("revoke_actor"),
  actorNames: statement("actor_names"),
  cursorSecret: statement("cursor_secret"),
};

/** Connections of one key store: admin commands and key checks are short. */
const POOL_SIZE = 4;

async function query<T>(db: Db, text: string, params: PgParam[]): Promise<T[] & { count: number }> {
  return await db.unsafe(text, params, { prepare: true }) as unknown as T[] & { count: number };
}

/** The key store over a PostgreSQL pool; the results and refusals of the SQLite `KeyStore`. */
export class PgKeyStore implements KeyStoreApi {
  readonly #sql: Sql;
  readonly #readOnly: boolean;
  readonly #ownsPool: boolean;

  constructor(sql: Sql, options: { readOnly?: boolean; ownsPool?: boolean } = {}) {
    this.#sql = sql;
    this.#readOnly = options.readOnly ?? false;
    this.#ownsPool = options.ownsPool ?? false;
  }

  /** Connects to `url` and applies migrations; read-only stores require them applied. */
  static async open(url: string, options: { readOnly?: boolean } = {}): Promise<PgKeyStore> {
    const sql = connectPostgres(url, { max: POOL_SIZE, applicationName: "agent-telemetry keys" });
    await migrateOrEnd(sql, [sql], options);
    return new PgKeyStore(sql, { readOnly: options.readOnly, ownsPool: true });
  }

  /** Throws unless the key store answers. */
  async probe(): Promise<void> {
    await query(this.#sql, SQL.probe, []);
  }

  async close(): Promise<void> {
    if (this.#ownsPool) await this.#sql.end();
  }

  async verifyApiKey(key: string): Promise<ApiPrincipal | null> {
    const row = await this.#findLive(SQL.findApiKey, apiKeyHash(key));
    return row ? { orgId: row.org_id, keyId: row.id } : null;
  }

  async verifyIngestKey(key: string): Promise<IngestPrincipal | null> {
    const row = await this.#findLive(SQL.findIngestKey, ingestKeyHash(key));
    return row ? { orgId: row.org_id, actorId: row.id } : null;
  }

  async actorNames(orgId: string, actorIds: readonly string[]): Promise<Map<string, string>> {
    if (actorIds.length === 0) return new Map();
    const rows = await query<{ id: string; name: string }>(this.#sql, SQL.actorNames, [
      orgId,
      JSON.stringify(actorIds),
    ]);
    return new Map(rows.map((row) => [row.id, row.name]));
  }

  async listOrgs(): Promise<{ orgs: ListedOrg[] }> {
    const rows = await query<StoredRow>(this.#sql, SQL.listOrgs, []);
    return { orgs: rows.map(listedOrg) };
  }

  async listMembers(org: string): Promise<{ members: ListedMember[] }> {
    await requireOrg(this.#sql, org);
    const rows = await query<StoredRow>(this.#sql, SQL.listMembers, [org]);
    return { members: rows.map(listedMember) };
  }

  async listActors(org: string): Promise<{ actors: ListedActor[] }> {
    await requireOrg(this.#sql, org);
    const rows = await query<StoredRow>(this.#sql, SQL.listActors, [org]);
    return { actors: rows.map(listedActor) };
  }

  /** Revokes an actor's ingest key; revoking twice keeps the first time. */
  revokeActor(id: string): Promise<{ id: string; revoked_at: string }> {
    return this.#revoke(id, SQL.lockActor, SQL.revokeActor, actorNotFound);
  }

  async createOrg(name: string): Promise<{ id: string; name: string }> {
    this.#requireWritable();
    const id = newOrgId();
    await query(this.#sql, SQL.insertOrg, [id, name, Date.now()]);
    return { id, name };
  }

  addMember(org: string, email: string): Promise<{ id: string; org: string; email: string }> {
    return this.#tx(async (tx) => {
      await requireOrg(tx, org);
      this.#requireWritable();
      const id = newMemberId();
      const inserted = await query(tx, SQL.insertMember, [id, org, email, Date.now()]);
      if (inserted.count === 0) throw memberExists(email);
      return { id, org, email };
    });
  }

  /** Removes a member and revokes every API key it created, in one transaction. */
  removeMember(org: string, member: string): Promise<{ member: string; revoked_keys: number }> {
    return this.#tx(async (tx) => {
      await requireMember(tx, org, member, SQL.lockMemberForRemoval);
      this.#requireWritable();
      const revoked = await query(tx, SQL.revokeMemberKeys, [Date.now(), member]);
      await query(tx, SQL.deleteMember, [member]);
      return { member, revoked_keys: revoked.count };
    });
  }

  createKey(
    org: string,
    member: string,
    name = "",
  ): Promise<{ id: string; key: string; org: string; member: string }> {
    return this.#tx(async (tx) => {
      await requireMember(tx, org, member, SQL.lockMemberForKey);
      this.#requireWritable();
      const { id, key, hash } = newApiKey();
      await query(tx, SQL.insertApiKey, [id, org, member, name, hash, Date.now()]);
      return { id, key, org, member };
    });
  }

  revokeKey(id: string): Promise<{ id: string; revoked_at: string }> {
    return this.#revoke(id, SQL.lockApiKey, SQL.revokeApiKey, keyNotFound);
  }

  async listKeys(org: string): Promise<{ keys: ListedKey[] }> {
    await requireOrg(this.#sql, org);
    const rows = await query<StoredKey>(this.#sql, SQL.listApiKeys, [org]);
    return { keys: rows.map(listedKey) };
  }

  createActor(org: string, name = ""): Promise<{ actor_id: string; ingest_key: string }> {
    return this.#tx(async (tx) => {
      await requireOrg(tx, org);
      this.#requireWritable();
      const { id, key, hash } = newIngestKey();
      await query(tx, SQL.insertActor, [id, org, name, hash, Date.now()]);
      return { actor_id: id, ingest_key: key };
    });
  }

  async cursorSecret(): Promise<Uint8Array> {
    const [row] = await query<{ value: Uint8Array }>(this.#sql, SQL.cursorSecret, []);
    if (!row) {
      throw new Error(
        "Key store has no cursor secret: the installation secret migration is missing",
      );
    }
    return new Uint8Array(row.value);
  }

  /** The unrevoked API key or actor of this hash (`find`); none for a null hash. */
  async #findLive(
    find: string,
    hash: string | null,
  ): Promise<{ id: string; org_id: string } | undefined> {
    if (hash === null) return undefined;
    const [row] = await query<{ id: string; org_id: string }>(this.#sql, find, [hash]);
    return row;
  }

  /**
   * Revokes the API key or actor `lock` locks, with `revoke`; one that does
   * not exist is refused with `notFound`, and revoking twice keeps the first time.
   */
  #revoke(
    id: string,
    lock: string,
    revoke: string,
    notFound: (id: string) => Error,
  ): Promise<{ id: string; revoked_at: string }> {
    return this.#tx(async (tx) => {
      const [row] = await query<{ revoked_at: number | null }>(tx, lock, [id]);
      if (!row) throw notFound(id);
      if (row.revoked_at !== null) return revokedKey(id, row.revoked_at);
      this.#requireWritable();
      const revokedAt = Date.now();
      await query(tx, revoke, [revokedAt, id]);
      return revokedKey(id, revokedAt);
    });
  }

  async #tx<T>(fn: (tx: TransactionSql) => Promise<T>): Promise<T> {
    return await this.#sql.begin(fn) as T;
  }

  /**
   * Read-only stores refuse a write where the SQLite store's write statement
   * would fail, after the same lookups, so both refuse the same requests alike.
   */
  #requireWritable(): void {
    if (this.#readOnly) throw readOnlyWrite();
  }
}

async function requireOrg(db: Db, org: string): Promise<void> {
  if ((await query(db, SQL.findOrg, [org])).length === 0) throw orgNotFound(org);
}

/** Checks the member belongs to the organization, locking its row with `lock` (FOR SHARE/UPDATE). */
async function requireMember(db: Db, org: string, member: string, lock: string): Promise<void> {
  await requireOrg(db, org);
  if ((await query(db, lock, [member, org])).length === 0) throw memberNotFound(member);
}
