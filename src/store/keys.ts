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
import { hashSecret, newId, randomBase62 } from "./tokens.ts";
import { formatTimestamp } from "../time.ts";
import { UserInputError } from "../errors.ts";
import type { KeyStoreApi } from "./stores.ts";

/** Prefix of organization API keys (query API). */
export const API_KEY_PREFIX = "wb_api_";
/** Prefix of actors' ingest keys (OTLP listener). */
export const INGEST_KEY_PREFIX = "wb_ingest_";
const SECRET_BYTES = 32;

/** A request the key store refuses: unknown organization, member or key. */
export class KeyStoreInputError extends UserInputError {
  override name = "KeyStoreInputError";
}

/** Who an API key speaks for. */
export interface ApiPrincipal {
  orgId: string;
  keyId: string;
}

/** Who an ingest key speaks for. */
export interface IngestPrincipal {
  orgId: string;
  actorId: string;
}

/** A listed API key, never with its secret. */
export interface ListedKey {
  id: string;
  name: string;
  member: string;
  "created_at": string;
  "revoked_at"?: string;
}

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
    if (!key.startsWith(API_KEY_PREFIX)) return null;
    const row = this.#findApiKey.get(hashSecret(key)) as
      | { id: string; org_id: string }
      | undefined;
    return row ? { orgId: row.org_id, keyId: row.id } : null;
  }

  verifyIngestKey(key: string): IngestPrincipal | null {
    if (!key.startsWith(INGEST_KEY_PREFIX)) return null;
    const row = this.#findIngestKey.get(hashSecret(key)) as
      | { id: string; org_id: string }
      | undefined;
    return row ? { orgId: row.org_id, actorId: row.id } : null;
  }

  createOrg(name: string): { id: string; name: string } {
    const id = newId("org");
    this.#db.prepare("INSERT INTO orgs (id, name, created_at) VALUES (?, ?, ?)")
      .run(id, name, Date.now());
    return { id, name };
  }

  addMember(org: string, email: string): { id: string; org: string; email: string } {
    return tx(this.#db, () => {
      this.#requireOrg(org);
      const taken = this.#db.prepare("SELECT 1 FROM members WHERE org_id = ? AND email = ?")
        .get(org, email);
      if (taken) throw new KeyStoreInputError(`Member already exists: "${email}"`);
      const id = newId("mem");
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
      const id = newId("key");
      const key = API_KEY_PREFIX + randomBase62(SECRET_BYTES);
      this.#db.prepare(
        "INSERT INTO api_keys (id, org_id, member_id, name, key_hash, created_at) VALUES (?, ?, ?, ?, ?, ?)",
      ).run(id, org, member, name, hashSecret(key), Date.now());
      return { id, key, org, member };
    });
  }

  revokeKey(id: string): { id: string; revoked_at: string } {
    return tx(this.#db, () => {
      const row = this.#db.prepare("SELECT revoked_at FROM api_keys WHERE id = ?").get(id) as
        | { revoked_at: number | null }
        | undefined;
      if (!row) throw new KeyStoreInputError(`Key not found: "${id}"`);
      const revokedAt = row.revoked_at ?? Date.now();
      if (row.revoked_at === null) {
        this.#db.prepare("UPDATE api_keys SET revoked_at = ? WHERE id = ?").run(revokedAt, id);
      }
      return { id, revoked_at: formatTimestamp(revokedAt) };
    });
  }

  listKeys(org: string): { keys: ListedKey[] } {
    this.#requireOrg(org);
    const rows = this.#db.prepare(
      "SELECT id, name, member_id, created_at, revoked_at FROM api_keys WHERE org_id = ? ORDER BY created_at, id",
    ).all(org) as {
      id: string;
      name: string;
      member_id: string;
      created_at: number;
      revoked_at: number | null;
    }[];
    return {
      keys: rows.map((row) => ({
        id: row.id,
        name: row.name,
        member: row.member_id,
        created_at: formatTimestamp(row.created_at),
        ...(row.revoked_at === null ? {} : { revoked_at: formatTimestamp(row.revoked_at) }),
      })),
    };
  }

  createActor(org: string, name = ""): { actor_id: string; ingest_key: string } {
    return tx(this.#db, () => {
      this.#requireOrg(org);
      const id = newId("act");
      const key = INGEST_KEY_PREFIX + randomBase62(SECRET_BYTES);
      this.#db.prepare(
        "INSERT INTO actors (id, org_id, name, ingest_key_hash, created_at) VALUES (?, ?, ?, ?, ?)",
      ).run(id, org, name, hashSecret(key), Date.now());
      return { actor_id: id, ingest_key: key };
    });
  }

  #requireOrg(org: string): void {
    if (!this.#db.prepare("SELECT 1 FROM orgs WHERE id = ?").get(org)) {
      throw new KeyStoreInputError(`Organization not found: "${org}"`);
    }
  }

  #requireMember(org: string, member: string): void {
    this.#requireOrg(org);
    if (!this.#db.prepare("SELECT 1 FROM members WHERE id = ? AND org_id = ?").get(member, org)) {
      throw new KeyStoreInputError(`Member not found in organization: "${member}"`);
    }
  }
}
