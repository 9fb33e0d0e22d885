/**
 * What the key store means on every engine: key formats and prefixes, new ids
 * and secrets, the hash a key is looked up by, stored rows as listed, and the
 * refusals. The SQLite (`keys.ts`) and PostgreSQL (`postgres/keys.ts`) stores
 * only store and fetch.
 *
 * @module
 */
import { hashSecret, newId, randomBase62 } from "./tokens.ts";
import { formatTimestamp } from "../time.ts";
import { UserInputError } from "../errors.ts";
import type { ListedActor, ListedKey, ListedMember, ListedOrg } from "./stores.ts";

/** Prefix of organization API keys (query API). */
export const API_KEY_PREFIX = "wb_api_";
/** Prefix of actors' ingest keys (OTLP listener). */
export const INGEST_KEY_PREFIX = "wb_ingest_";
const SECRET_BYTES = 32;

/** A request the key store refuses: unknown organization, member or key. */
export class KeyStoreInputError extends UserInputError {}

/** An API key row as stored: times in ms since the epoch. */
export interface StoredKey {
  id: string;
  name: string;
  "member_id": string;
  "created_at": number;
  "revoked_at": number | null;
}

/** An organization, member or actor row as stored: times in ms since the epoch. */
export interface StoredRow {
  id: string;
  name?: string;
  email?: string;
  "created_at": number;
  "revoked_at"?: number | null;
}

/** A new secret: the id it is stored under, the key shown once, and its hash. */
export interface NewSecret {
  id: string;
  key: string;
  hash: string;
}

/** A new organization id. */
export function newOrgId(): string {
  return newId("org");
}

/** A new member id. */
export function newMemberId(): string {
  return newId("mem");
}

/** A new API key with its id. */
export function newApiKey(): NewSecret {
  return newSecret("key", API_KEY_PREFIX);
}

/** A new actor id with its ingest key. */
export function newIngestKey(): NewSecret {
  return newSecret("act", INGEST_KEY_PREFIX);
}

function newSecret(idPrefix: string, keyPrefix: string): NewSecret {
  const key = keyPrefix + randomBase62(SECRET_BYTES);
  return { id: newId(idPrefix), key, hash: hashSecret(key) };
}

/** The hash to look a presented API key up by, or null when it cannot be one. */
export function apiKeyHash(key: string): string | null {
  return key.startsWith(API_KEY_PREFIX) ? hashSecret(key) : null;
}

/** The hash to look a presented ingest key up by, or null when it cannot be one. */
export function ingestKeyHash(key: string): string | null {
  return key.startsWith(INGEST_KEY_PREFIX) ? hashSecret(key) : null;
}

/** A stored API key as `key list` shows it. */
export function listedKey(row: StoredKey): ListedKey {
  return {
    id: row.id,
    name: row.name,
    member: row.member_id,
    created_at: formatTimestamp(row.created_at),
    ...(row.revoked_at === null ? {} : { revoked_at: formatTimestamp(row.revoked_at) }),
  };
}

/** A stored organization as `org list` shows it. */
export function listedOrg(row: StoredRow): ListedOrg {
  return { id: row.id, name: row.name ?? "", created_at: formatTimestamp(Number(row.created_at)) };
}

/** A stored member as `member list` shows it. */
export function listedMember(row: StoredRow): ListedMember {
  return {
    id: row.id,
    email: row.email ?? "",
    created_at: formatTimestamp(Number(row.created_at)),
  };
}

/** A stored actor as `actor list` shows it. */
export function listedActor(row: StoredRow): ListedActor {
  const revokedAt = row.revoked_at ?? null;
  return {
    id: row.id,
    name: row.name ?? "",
    created_at: formatTimestamp(Number(row.created_at)),
    ...(revokedAt === null ? {} : { revoked_at: formatTimestamp(Number(revokedAt)) }),
  };
}

/** The answer to `key revoke`. */
export function revokedKey(id: string, revokedAt: number): { id: string; revoked_at: string } {
  return { id, revoked_at: formatTimestamp(revokedAt) };
}

/** Refuses an organization id that does not exist. */
export function orgNotFound(org: string): KeyStoreInputError {
  return new KeyStoreInputError(`Organization not found: "${org}"`);
}

/** Refuses a member id that is not in the organization. */
export function memberNotFound(member: string): KeyStoreInputError {
  return new KeyStoreInputError(`Member not found in organization: "${member}"`);
}

/** Refuses an email already taken in the organization. */
export function memberExists(email: string): KeyStoreInputError {
  return new KeyStoreInputError(`Member already exists: "${email}"`);
}

/** Refuses an API key id that does not exist. */
export function keyNotFound(id: string): KeyStoreInputError {
  return new KeyStoreInputError(`Key not found: "${id}"`);
}

/** Refuses an actor id that does not exist. */
export function actorNotFound(id: string): KeyStoreInputError {
  return new KeyStoreInputError(`Actor not found: "${id}"`);
}

/**
 * The refusal of a write to a read-only key store: node:sqlite's own message,
 * so both engines fail alike.
 */
export function readOnlyWrite(): Error {
  return new Error("attempt to write a readonly database");
}
