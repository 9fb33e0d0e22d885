/**
 * Remembers that the telemetry store refused writes for a lasting reason (a
 * full disk, a file or database made read-only), so that readiness says so
 * until a real write succeeds again: a read-only probe passes on a full disk.
 *
 * @module
 */
import { StoreUnavailableError } from "../errors.ts";

/** The write-outage state of one writer. */
export class WriteOutage {
  #current: StoreUnavailableError | null = null;

  /** The refusal in force, or null while writes succeed. */
  get current(): StoreUnavailableError | null {
    return this.#current;
  }

  /** Awaits a write: a lasting refusal starts an outage, a success ends it. */
  async track<T>(write: Promise<T>): Promise<T> {
    try {
      const value = await write;
      this.#current = null;
      return value;
    } catch (error) {
      if (error instanceof StoreUnavailableError && error.lasting) this.#current = error;
      throw error;
    }
  }

  /**
   * Readiness: the plain probe while writes succeed; during an outage a real
   * write, which ends the outage when it goes through.
   */
  async probe(plain: () => Promise<void>, write: () => Promise<void>): Promise<void> {
    if (this.#current === null) return await plain();
    await this.track(write());
  }
}
