/**
 * The key store (`keys.db`): organizations, members, API keys and actors with
 * their ingest keys. Every check reads the database, so a key works the moment
 * it is created and stops the moment it is revoked, also across processes.
 *
 * @module
 */
import type { DatabaseSync } from "node:sqlite";
import keysSql from "../../../sql/sqlite/keys.sql" with { type: "text" };
import { keyStoreMigrations } from "./migrations.ts";
import { parseNamedSql } from "../named_sql.ts";
import { migrate, NamedStatements, openDatabase, requireMigrated, tx } from "./database.ts";
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
  revokedKey,
  type StoredKey,
  type StoredRow,
} from "../key_material.ts";
import type {
  ApiPrincipal,
  IngestPrincipal,
  KeyStoreApi,
  ListedActor,
  ListedKey,
  ListedMember,
  ListedOrg,
} from "../stores.ts";

export { KeyStoreInputError } from "../key_material.ts";

const SQL = parseNamedSql(keysSql);

/** The key store over one SQLite connection. */
export class KeyStore implements KeyStoreApi {
  readonly #db: DatabaseSync;
  /** The statements of `sql/sqlite/keys.sql` on this connection. */
  readonly #statements: NamedStatements;
  readonly #readOnly: boolean;

  constructor(db: DatabaseSync, options: { readOnly?: boolean } = {}) {
    this.#db = db;
    this.#statements = new NamedStatements(db, SQL);
    this.#readOnly = options.readOnly ?? false;
    // The two lookups every request makes are prepared up front.
    this.#statements.statement("find_api_key");
    this.#statements.statement("find_ingest_key");
  }

  /** Opens `keys.db` at `path`, applying migrations; read-only opens require them applied. */
  static open(path: string, options: { readOnly?: boolean } = {}): KeyStore {
    const db = openDatabase(path, { readOnly: options.readOnly ?? false });
    if (options.readOnly) requireMigrated(db, keyStoreMigrations, path);
    else migrate(db, keyStoreMigrations);
    return new KeyStore(db, options);
  }

  /** Throws unless the key store can be read (and, unless read-only, written). */
  probe(): void {
    this.#statements.statement("probe").get();
    if (this.#readOnly || this.#db.isTransaction) return;
    this.#db.exec("BEGIN IMMEDIATE");
    this.#db.exec("ROLLBACK");
  }

  close(): void {
    if (this.#db.isOpen) this.#db.close();
  }

  verifyApiKey(key: string): ApiPrincipal | null {
    const row = this.#findLive("find_api_key", apiKeyHash(key));
    return row ? { orgId: row.org_id, keyId: row.id } : null;
  }

  verifyIngestKey(key: string): IngestPrincipal | null {
    const row = this.#findLive("find_ingest_key", ingestKeyHash(key));
    return row ? { orgId: row.org_id, actorId: row.id } : null;
  }

  actorNames(orgId: string, actorIds: readonly string[]): Map<string, string> {
    if (actorIds.length === 0) return new Map();
    const rows = this.#statements.statement("actor_names").all(JSON.stringify(actorIds), orgId) as {
      id: string;
      name: string;
    }[];
    return new Map(rows.map((row) => [row.id, row.name]));
  }

  createOrg(name: string): { id: string; name: string } {
    const id = newOrgId();
    this.#statements.statement("insert_org").run(id, name, Date.now());
    return { id, name };
  }

  listOrgs(): { orgs: ListedOrg[] } {
    const rows = this.#statements.statement("list_orgs").all() as unknown as StoredRow[];
    return { orgs: rows.map(listedOrg) };
  }

  addMember(org: string, email: string): { id: string; org: string; email: string } {
    return tx(this.#db, () => {
      this.#requireOrg(org);
      if (this.#statements.statement("find_member_email").get(org, email)) {
        throw memberExists(email);
      }
      const id = newMemberId();
      this.#statements.statement("insert_member").run(id, org, email, Date.now());
      return { id, org, email };
    });
  }

  /** Removes a member and revokes every API key it created, in one transaction. */
  removeMember(org: string, member: string): { member: string; revoked_keys: number } {
    return tx(this.#db, () => {
      this.#requireMember(org, member);
      const revoked = this.#statements.statement("revoke_member_keys").run(Date.now(), member);
      this.#statements.statement("delete_member").run(member);
      return { member, revoked_keys: Number(revoked.changes) };
    });
  }

  listMembers(org: string): { members: ListedMember[] } {
    this.#requireOrg(org);
    const rows = this.#statements.statement("list_members").all(org) as unknown as StoredRow[];
    return { members: rows.map(listedMember) };
  }

  createKey(
    org: string,
    member: string,
    name = "",
  ): { id: string; key: string; org: string; member: string } {
    return tx(this.#db, () => {
      this.#requireMember(org, member);
      const { id, key, hash } = newApiKey();
      this.#statements.statement("insert_api_key").run(id, org, member, name, hash, Date.now());
      return { id, key, org, member };
    });
  }

  revokeKey(id: string): { id: string; revoked_at: string } {
    return this.#revoke(id, "find_api_key_revocation", "revoke_api_key", keyNotFound);
  }

  listKeys(org: string): { keys: ListedKey[] } {
    this.#requireOrg(org);
    const rows = this.#statements.statement("list_api_keys").all(org) as unknown as StoredKey[];
    return { keys: rows.map(listedKey) };
  }

  createActor(org: string, name = ""): { actor_id: string; ingest_key: string } {
    return tx(this.#db, () => {
      this.#requireOrg(org);
      const { id, key, hash } = newIngestKey();
      this.#statements.statement("insert_actor").run(id, org, name, hash, Date.now());
      return { actor_id: id, ingest_key: key };
    });
  }

  listActors(org: string): { actors: ListedActor[] } {
    this.#requireOrg(org);
    const rows = this.#statements.statement("list_actors").all(org) as unknown as StoredRow[];
    return { actors: rows.map(listedActor) };
  }

  /** Revokes an actor's ingest key; revoking twice keeps the first time. */
  revokeActor(id: string): { id: string; revoked_at: string } {
    return this.#revoke(id, "find_actor_revocation", "revoke_actor", actorNotFound);
  }

  cursorSecret(): Uint8Array {
    const row = this.#statements.statement("cursor_secret").get() as
      | { value: Uint8Array }
      | undefined;
    if (!row) throw new Error("Key store has no cursor secret: keys.db lacks migration 2");
    return new Uint8Array(row.value);
  }

  /** The unrevoked API key or actor of this hash (`find`); none for a null hash. */
  #findLive(find: string, hash: string | null): { id: string; org_id: string } | undefined {
    if (hash === null) return undefined;
    return this.#statements.statement(find).get(hash) as { id: string; org_id: string } | undefined;
  }

  /**
   * Revokes the API key or actor `find` reads, with `revoke`; one that does
   * not exist is refused with `notFound`, and revoking twice keeps the first time.
   */
  #revoke(
    id: string,
    find: string,
    revoke: string,
    notFound: (id: string) => Error,
  ): { id: string; revoked_at: string } {
    return tx(this.#db, () => {
      const row = this.#statements.statement(find).get(id) as
        | { revoked_at: number | null }
        | undefined;
      if (!row) throw notFound(id);
      const revokedAt = row.revoked_at ?? Date.now();
      if (row.revoked_at === null) this.#statements.statement(revoke).run(revokedAt, id);
      return revokedKey(id, revokedAt);
    });
  }

  #requireOrg(org: string): void {
    if (!this.#statements.statement("find_org").get(org)) throw orgNotFound(org);
  }

  #requireMember(org: string, member: string): void {
    this.#requireOrg(org);
    if (!this.#statements.statement("find_member").get(member, org)) throw memberNotFound(member);
  }
}
