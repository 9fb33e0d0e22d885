/**
 * Actors' names for the API's `actor_name` field. Actors live in the key store
 * and telemetry in the telemetry store, so a page's names are looked up in
 * one call per page, through a small cache: a name is at most
 * {@link ACTOR_NAME_TTL_MS} old, and an actor is only ever found within the
 * organization that asks. The fleet reads an organization's actors whole, uncached.
 *
 * @module
 */
import { ApiError } from "../http/responses.ts";
import type { ActorDirectory, ListedActor } from "../store/stores.ts";

/** The actor ids of telemetry rows, each once. */
export function actorIdsOf(rows: readonly Record<string, unknown>[]): Set<string> {
  return new Set(rows.map((row) => String(row.actor_id ?? "")));
}

/** How long a looked-up name (or its absence) is served before it is looked up again. */
export const ACTOR_NAME_TTL_MS = 30_000;
/** Cached names at most; the oldest go first. */
const MAX_ENTRIES = 10_000;

interface Entry {
  /** The actor's name; `""` when the organization has no such actor. */
  name: string;
  /** When it was looked up (ms). */
  at: number;
}

/** An actor of an organization, as the key store holds it. */
export interface OrgActor {
  id: string;
  /** `""` when it has none. */
  name: string;
  /** Its ingest key is revoked: it can send nothing more. */
  revoked: boolean;
}

/** The names of a request's actors, cached per organization and actor. */
export class ActorNames {
  readonly #directory: ActorDirectory;
  readonly #now: () => number;
  readonly #entries = new Map<string, Entry>();

  constructor(directory: ActorDirectory, options: { now?: () => number } = {}) {
    this.#directory = directory;
    this.#now = options.now ?? Date.now;
  }

  /**
   * Each of `actorIds` to its name within `orgId` (`""` when the actor has
   * none or is not one of the organization's); 503 when the key store fails.
   */
  async resolve(orgId: string, actorIds: Iterable<string>): Promise<ReadonlyMap<string, string>> {
    const now = this.#now();
    const names = new Map<string, string>();
    const missing: string[] = [];
    for (const id of actorIds) {
      if (names.has(id)) continue;
      const entry = this.#entries.get(entryKey(orgId, id));
      if (entry !== undefined && now - entry.at < ACTOR_NAME_TTL_MS) {
        names.set(id, entry.name);
      } else {
        names.set(id, "");
        missing.push(id);
      }
    }
    if (missing.length === 0) return names;
    let found: Map<string, string>;
    try {
      found = await this.#directory.actorNames(orgId, missing);
    } catch {
      throw new ApiError("keystore_unavailable", "the key store is unavailable; retry later");
    }
    for (const id of missing) {
      const name = found.get(id) ?? "";
      names.set(id, name);
      this.#remember(entryKey(orgId, id), { name, at: now });
    }
    return names;
  }

  /** The organization's actors as the key store holds them now; 503 when it fails. */
  async actorsOf(orgId: string): Promise<OrgActor[]> {
    let actors: ListedActor[];
    try {
      actors = (await this.#directory.listActors(orgId)).actors;
    } catch {
      throw new ApiError("keystore_unavailable", "the key store is unavailable; retry later");
    }
    return actors.map((actor) => ({
      id: actor.id,
      name: actor.name,
      revoked: actor.revoked_at !== undefined,
    }));
  }

  #remember(key: string, entry: Entry): void {
    this.#entries.delete(key);
    this.#entries.set(key, entry);
    if (this.#entries.size <= MAX_ENTRIES) return;
    const oldest = this.#entries.keys().next().value;
    if (oldest !== undefined) this.#entries.delete(oldest);
  }
}

function entryKey(orgId: string, actorId: string): string {
  return `${orgId}\u0000${actorId}`;
}
