/**
 * Dimensions: the resource attributes an organization names (`--dimension
 * KEY`: `team.id`, `department`, `cost_center`, `repository`, …) kept per
 * session so that lists can be sliced by them, and the session's repository
 * taken from what agents send (docs/ingest-mapping.md §10). Values are
 * bounded in length here, and in number per key by the store.
 *
 * @module
 */
import { DIMENSION_LIMITS } from "../config.ts";
import type { Attributes, AttributeValue, OtlpRecord, TelemetryEvent } from "../model/telemetry.ts";
import type { SessionDimension } from "../model/dimensions.ts";

export type { SessionDimension };

/**
 * The key whose value is the session's repository. Its value comes from the
 * first of these resource attributes that is sent (docs/ingest-mapping.md §10).
 */
export const REPOSITORY_KEY = "repository";
export const REPOSITORY_ATTRIBUTES: readonly string[] = [
  "repository",
  "vcs.repository.url.full",
  "vcs.repository.name",
];

/** A resource attribute as a dimension value: strings, numbers and booleans; others are not kept. */
function valueText(value: AttributeValue | undefined): string | null {
  if (typeof value === "string") return value.trim();
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  return null;
}

/** The value of one key on a resource, `""` when not sent. */
export function dimensionValue(resource: Attributes, key: string): string {
  const names = key === REPOSITORY_KEY ? REPOSITORY_ATTRIBUTES : [key];
  for (const name of names) {
    const text = valueText(resource[name]);
    if (text) return text;
  }
  return "";
}

/**
 * Collects the dimensions of the sessions one record's events belong to,
 * once per session and key (the first value an export sends wins).
 */
export class DimensionCollector {
  readonly #keys: readonly string[];
  readonly #seen = new Map<string, SessionDimension>();

  constructor(keys: readonly string[]) {
    this.#keys = keys;
  }

  /** Notes the record's resource dimensions for each session its events name. */
  add(record: OtlpRecord, events: readonly TelemetryEvent[]): void {
    if (this.#keys.length === 0 || events.length === 0) return;
    for (const key of this.#keys) {
      const text = dimensionValue(record.resource, key);
      if (text === "") continue;
      const value = text.length > DIMENSION_LIMITS.valueChars ? null : text;
      for (const event of events) {
        const id = `${event.sessionId}\u0000${key}`;
        if (!this.#seen.has(id)) this.#seen.set(id, { sessionId: event.sessionId, key, value });
      }
    }
  }

  /** Everything collected, in the order first seen. */
  get dimensions(): SessionDimension[] {
    return [...this.#seen.values()];
  }
}
