/**
 * The two storage interfaces (docs/design.md §8) — the key store and the telemetry
 * store — that endpoints, ingest and detection use without knowing which
 * engine runs: the embedded SQLite files (`sqlite/`) or PostgreSQL
 * (`postgres/`). Engine-neutral: nothing here imports an engine, each engine
 * imports this.
 *
 * @module
 */
import type { FlagKind } from "../detect/mod.ts";
import type { MetricSample } from "../model/metrics.ts";
import type { UnmappedRecords } from "../model/unmapped.ts";
import type { TelemetryEvent } from "../model/telemetry.ts";
import type { SessionDimension } from "../model/dimensions.ts";
import type { ReadStatement, TelemetryQueries } from "./telemetry_queries.ts";

/**
 * What one export request stored, as committed: a retried export, or a call
 * already stored, adds nothing (the per-organization counters of `/metrics`
 * are summed from these).
 */
export interface IngestSummary {
  toolCalls: number;
  modelCalls: number;
  /** Reported cost (USD) the stored model calls added: new calls', and costs filled in later. */
  costUsd: number;
  /** Tool calls stored as errors (a row replacing an error row is not counted again). */
  toolCallErrors: number;
  /** Risk flags stored with new calls, and with a log's row replacing its span's, by kind. */
  riskFlags: Partial<Record<FlagKind, number>>;
}

/** The sender of a batch: an organization and one of its actors. */
export interface Sender {
  orgId: string;
  actorId: string;
}

/** Retention settings. */
export interface RetentionOptions {
  retentionDays: number;
  /** Upper bound for the telemetry store's used bytes; null for none. */
  maxDiskBytes: number | null;
  /** Rows of each kind deleted per transaction. */
  batchSize: number;
}

/** What one retention pass removed. */
export interface RetentionResult {
  toolCalls: number;
  modelCalls: number;
  reclaimedBytes: number;
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

/** An organization as `org list` shows it. */
export interface ListedOrg {
  id: string;
  name: string;
  "created_at": string;
}

/** A member as `member list` shows it. */
export interface ListedMember {
  id: string;
  email: string;
  "created_at": string;
}

/** An actor as `actor list` shows it, never with its ingest key. */
export interface ListedActor {
  id: string;
  name: string;
  "created_at": string;
  "revoked_at"?: string;
}

/** A value, or a promise of it: the SQLite key store answers at once. */
export type Awaitable<T> = T | Promise<T>;

/** The lookups the servers make on every request (no cache: a revocation holds at once). */
export interface KeyVerifier {
  verifyApiKey(key: string): Awaitable<ApiPrincipal | null>;
  verifyIngestKey(key: string): Awaitable<IngestPrincipal | null>;
}

/** Actors' names, for the API's `actor_name` beside each `actor_id`, and an organization's actors. */
export interface ActorDirectory {
  /**
   * The names of those of `actorIds` that are actors of `orgId` (another
   * organization's actor is never found); ids not found are left out.
   */
  actorNames(orgId: string, actorIds: readonly string[]): Awaitable<Map<string, string>>;
  /** The organization's actors, revoked ones too (the fleet lists those that never sent). */
  listActors(org: string): Awaitable<{ actors: ListedActor[] }>;
}

/** The key store: the verifier, the actor directory and the admin commands (docs/design.md §3). */
export interface KeyStoreApi extends KeyVerifier, ActorDirectory {
  /** Throws unless the store answers. */
  probe(): Awaitable<void>;
  close(): Awaitable<void>;
  createOrg(name: string): Awaitable<{ id: string; name: string }>;
  listOrgs(): Awaitable<{ orgs: ListedOrg[] }>;
  addMember(org: string, email: string): Awaitable<{ id: string; org: string; email: string }>;
  removeMember(org: string, member: string): Awaitable<{ member: string; revoked_keys: number }>;
  listMembers(org: string): Awaitable<{ members: ListedMember[] }>;
  createKey(
    org: string,
    member: string,
    name?: string,
  ): Awaitable<{ id: string; key: string; org: string; member: string }>;
  revokeKey(id: string): Awaitable<{ id: string; revoked_at: string }>;
  listKeys(org: string): Awaitable<{ keys: ListedKey[] }>;
  createActor(org: string, name?: string): Awaitable<{ actor_id: string; ingest_key: string }>;
  /** Revokes an actor's ingest key: its next export is refused (401), on every node. */
  revokeActor(id: string): Awaitable<{ id: string; revoked_at: string }>;
  /**
   * The installation's cursor secret (32 bytes, made by a migration, shared
   * by every node of one store): keys the HMAC of page cursors. Never served.
   */
  cursorSecret(): Awaitable<Uint8Array>;
}

/** The read side of the telemetry store: statements run in one snapshot, under the time limit. */
export interface TelemetryReader {
  /** The statement builders of this engine's SQL dialect. */
  readonly queries: TelemetryQueries;
  read(statements: ReadStatement[]): Promise<unknown[][]>;
  close(): Awaitable<void>;
}

/** The write side of the telemetry store. */
export interface TelemetryWriterApi {
  /** The telemetry `seq` after the last write this process made (replica lag metric). */
  readonly lastSeq: number;
  /**
   * Stores the events (logs, traces) or kept metric points of one export
   * request in one transaction; a point already stored is not stored again.
   */
  ingest(
    sender: Sender,
    events: TelemetryEvent[],
    points?: readonly MetricSample[],
    /** What the export sent that stored nothing, added to `unmapped_events` in the same transaction. */
    unmapped?: readonly UnmappedRecords[],
    /** Its sessions' dimensions, kept within their bounds in the same transaction (docs/api.md §4.22). */
    dimensions?: readonly SessionDimension[],
  ): Promise<IngestSummary>;
  /** Rejects unless the store takes a write transaction. */
  probe(): Promise<void>;
  /** One retention pass. */
  runRetention(now?: number): Promise<RetentionResult>;
  close(): Promise<void>;
}
