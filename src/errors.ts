/**
 * The errors every layer shares: {@link NamedError}, the base of the
 * service's own; {@link UserInputError}, the base of every error a person
 * fixes by changing the input (the CLI prints its message as one line and
 * exits with code 2); and the neutral refusals the engines raise.
 *
 * @module
 */

/**
 * The base of the service's own errors: `name` is the class's name, as logs
 * and the CLI print it (`StoreUnavailableError: …`).
 */
export class NamedError extends Error {
  constructor(message?: string, options?: ErrorOptions) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** A refusal caused by the input (flags, configuration, ids), not by a fault. */
export class UserInputError extends NamedError {}

/** A batch of reads ran past the query time limit and was stopped (either engine). */
export class QueryTimeoutError extends NamedError {}

/** Too many read batches are waiting: the caller should retry later. */
export class QueryQueueFullError extends NamedError {}

/** A batch of reads failed inside the engine. */
export class QueryFailedError extends NamedError {}

/**
 * The server is stopping: an answer still streaming (an export) is cut, and
 * its client sees a body that did not end.
 */
export class ServerStoppingError extends Error {
  override name = "ServerStoppingError";
}

/** Why a store refused a write it may take later. */
export type UnavailableReason = "busy" | "full" | "readOnly" | "io" | "unreachable";

const UNAVAILABLE_MESSAGES: Record<UnavailableReason, string> = {
  busy: "the store is busy; retry later",
  full: "the store is out of disk space; retry later",
  readOnly: "the store cannot be written; retry later",
  io: "the store had an I/O error; retry later",
  unreachable: "the store is unreachable; retry later",
};

/** Seconds a client waits before retrying, by reason: a full disk is not freed in one second. */
const RETRY_AFTER_SECONDS: Record<UnavailableReason, number> = {
  busy: 1,
  full: 30,
  readOnly: 30,
  io: 10,
  unreachable: 5,
};

/**
 * A store refused a write for a reason that passes (a lock, a full disk, a
 * file or database made read-only, a lost connection): nothing was stored, and
 * the same request may succeed later. Engines raise it instead of their own
 * error codes, so that the listeners answer `503` with `Retry-After` without
 * knowing the engine (STYLE.md, "Layers").
 */
export class StoreUnavailableError extends NamedError {
  /** Seconds to send as `Retry-After`. */
  readonly retryAfterSeconds: number;
  /** The engine's own error text, for logs and `/readyz` (never sent to exporters). */
  readonly detail: string;

  constructor(readonly reason: UnavailableReason, detail: string) {
    super(UNAVAILABLE_MESSAGES[reason]);
    this.retryAfterSeconds = RETRY_AFTER_SECONDS[reason];
    this.detail = detail;
  }

  /** Whether the store stays unwritable until something outside changes (space, permissions). */
  get lasting(): boolean {
    return this.reason === "full" || this.reason === "readOnly" || this.reason === "io";
  }
}

/**
 * Insights cannot be answered yet: the analytics replica is being built (its
 * first build, a rebuild after damage, or a catch-up over a large backlog).
 * The same request succeeds once the build ends.
 */
export class ReplicaBuildingError extends NamedError {}

/**
 * The analytics replica cannot write what it must copy (no disk space, a
 * read-only or failing file system): insights wait until it can; nothing of
 * the telemetry store is lost, and the next insight after space returns
 * catches the replica up. The message is the replica's own words (for logs
 * and `/readyz`), never sent to API clients.
 */
export class ReplicaUnwritableError extends NamedError {}
