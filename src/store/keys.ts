/**
 * The key store (`keys.db`): organizations, members, API keys and actors with
 * their ingest keys. Every check reads the database, so a key works the moment
 * it is created and stops the moment it is revoked, also across processes.
 *
 * @module
 */
import type { DatabaseSync, StatementSync } from "node:sqlite";
import { keyStoreMigrations } from "./migrations.ts";
import { migrate, openDatabase, requireMigrated, tx } from "./sqlite.ts";
import {
  apiKeyHash,
  type ApiPrincipal,
  ingestKeyHash,
  type IngestPrincipal,
  keyNotFound,
  type ListedKey,
  listedKey,
  memberExists,
  memberNotFound,
  newApiKey,
  newIngestKey,
  newMemberId,
  newOrgId,
  orgNotFound,
  revokedKey,
  type StoredKey,
} from "./key_material.ts";
import type { KeyStoreApi } from "./stores.ts";

export {
  API_KEY_PREFIX,
  type ApiPrincipal,
  INGEST_KEY_PREFIX,
  type IngestPrincipal,
  KeyStoreInputError,
  type ListedKey,
} from "./key_material.ts";

/** The key store over one SQLite connection. */
export class KeyStore implements KeyStoreApi {
  readonly #db: DatabaseSync;
  readonly #findApiKey: StatementSync;
  readonly #findIngestKey: StatementSync;

  readonly #readOnly: boolean;

  constructor(db: DatabaseSync, options: { readOnly?: boolean } = {}) {
    this.#db = db;
    this.#readOnly = options.readOnly ?? false;
    this.#findApiKey = db.prepare(
      "SELECT id, org_id FROM api_keys WHERE key_hash = ? AND revoked_at IS NULL",
    );
    this.#findIngestKey = db.prepare(
      "SELECT id, org_id FROM actors WHERE ingest_key_hash = ? AND revoked_at IS NULL",
    );
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
    this.#db.prepare("SELECT count(*) FROM orgs").get();
    if (this.#readOnly || this.#db.isTransaction) return;
    this.#db.exec("BEGIN IMMEDIATE");
    this.#db.exec("ROLLBACK");
  }

  close(): void {
    if (this.#db.isOpen) this.#db.close();
  }

  verifyApiKey(key: string): ApiPrincipal | null {
    const hash = apiKeyHash(key);
    if (hash === null) return null;
    const row = this.#findApiKey.get(hash) as
      | { id: string; org_id: string }
      | undefined;
    return row ? { orgId: row.org_id, keyId: row.id } : null;
  }

  verifyIngestKey(key: string): IngestPrincipal | null {
    const hash = ingestKeyHash(key);
    if (hash === null) return null;
    const row = this.#findIngestKey.get(hash) as
      | { id: string; org_id: string }
      | undefined;
    return row ? { orgId: row.org_id, actorId: row.id } : null;
  }

  createOrg(name: string): { id: string; name: string } {
    const id = newOrgId();
    this.#db.prepare("INSERT INTO orgs (id, name, created_at) VALUES (?, ?, ?)")
      .run(id, name, Date.now());
    return { id, name };
  }

  addMember(org: string, email: string): { id: string; org: string; email: string } {
    return tx(this.#db, () => {
      this.#requireOrg(org);
      const taken = this.#db.prepare("SELECT 1 FROM members WHERE org_id = ? AND email = ?")
        .get(org, email);
      if (taken) throw memberExists(email);
      const id = newMemberId();
      this.#db.prepare("INSERT INTO members (id, org_id, email, created_at) VALUES (?, ?, ?, ?)")
        .run(id, org, email, Date.now());
      return { id, org, email };
    });
  }

  /** Removes a member and revokes every API key it created, in one transaction. */
  removeMember(org: string, member: string): { member: string; revoked_keys: number } {
    return tx(this.#db, () => {
      this.#requireMember(org, member);
      const revoked = this.#db.prepare(
        "UPDATE api_keys SET revoked_at = ? WHERE member_id = ? AND revoked_at IS NULL",
      ).run(Date.now(), member);
      this.#db.prepare("DELETE FROM members WHERE id = ?").run(member);
      return { member, revoked_keys: Number(revoked.changes) };
    });
  }

  createKey(
    org: string,
    member: string,
    name = "",
  ): { id: string; key: string; org: string; member: string } {
    return tx(this.#db, () => {
      this.#requireMember(org, member);
      const { id, key, hash } = newApiKey();
      this.#db.prepare(
        "INSERT INTO api_keys (id, org_id, member_id, name, key_hash, created_at) VALUES (?, ?, ?, ?, ?, ?)",
      ).run(id, org, member, name, hash, Date.now());
      return { id, key, org, member };
    });
  }

  revokeKey(id: string): { id: string; revoked_at: string } {
    return tx(this.#db, () => {
      const row = this.#db.prepare("SELECT revoked_at FROM api_keys WHERE id = ?").get(id) as
        | { revoked_at: number | null }
        | undefined;
      if (!row) throw keyNotFound(id);
      const revokedAt = row.revoked_at ?? Date.now();
      if (row.revoked_at === null) {
        this.#db.prepare("UPDATE api_keys SET revoked_at = ? WHERE id = ?").run(revokedAt, id);
      }
      return revokedKey(id, revokedAt);
    });
  }

  listKeys(org: string): { keys: ListedKey[] } {
    this.#requireOrg(org);
    const rows = this.#db.prepare(
      "SELECT id, name, member_id, created_at, revoked_at FROM api_keys WHERE org_id = ? ORDER BY created_at, id",
    ).all(org) as unknown as StoredKey[];
    return { keys: rows.map(listedKey) };
  }

  createActor(org: string, name = ""): { actor_id: string; ingest_key: string } {
    return tx(this.#db, () => {
      this.#requireOrg(org);
      const { id, key, hash } = newIngestKey();
      this.#db.prepare(
        "INSERT INTO actors (id, org_id, name, ingest_key_hash, created_at) VALUES (?, ?, ?, ?, ?)",
      ).run(id, org, name, hash, Date.now());
      return { actor_id: id, ingest_key: key };
    });
  }

  cursorSecret(): Uint8Array {
    const row = this.#db.prepare(
      "SELECT value FROM installation_secrets WHERE name = 'cursor'",
    ).get() as { value: Uint8Array } | undefined;
    if (!row) throw new Error("Key store has no cursor secret: keys.db lacks migration 2");
    return new Uint8Array(row.value);
  }

  #requireOrg(org: string): void {
    if (!this.#db.prepare("SELECT 1 FROM orgs WHERE id = ?").get(org)) {
      throw orgNotFound(org);
    }
  }

  #requireMember(org: string, member: string): void {
    this.#requireOrg(org);
    if (!this.#db.prepare("SELECT 1 FROM members WHERE id = ? AND org_id = ?").get(member, org)) {
      throw memberNotFound(member);
    }
  }
}
