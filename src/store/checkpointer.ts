/**
 * Runs WAL checkpoints of `telemetry.db` on a thread of their own, every
 * `intervalMs`, instead of SQLite's automatic checkpoint inside the writer's
 * COMMIT (which the writer turns off). One checkpoint at a time; a thread
 * that fails is replaced and never leaves a caller waiting.
 *
 * @module
 */
import { log } from "../log.ts";

/** A background checkpointer; {@link stop} ends it. */
export class Checkpointer {
  readonly #path: string;
  readonly #intervalMs: number;
  #worker: Worker;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #running: Promise<void> | null = null;
  #finish: (() => void) | null = null;
  #stopped = false;

  constructor(path: string, intervalMs: number) {
    this.#path = path;
    this.#intervalMs = intervalMs;
    this.#worker = this.#spawn();
    this.#schedule();
  }

  /** Runs one checkpoint now (or joins the running one). */
  checkpoint(): Promise<void> {
    this.#running ??= new Promise<void>((resolve) => {
      this.#finish = resolve;
      this.#worker.postMessage({ path: this.#path });
    }).finally(() => {
      this.#running = null;
      this.#finish = null;
    });
    return this.#running;
  }

  /** Waits for a running checkpoint and ends the thread. */
  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    await this.#running;
    this.#worker.terminate();
  }

  #spawn(): Worker {
    const worker = new Worker(new URL("./checkpoint_worker.ts", import.meta.url), {
      type: "module",
    });
    worker.onmessage = (message: MessageEvent<{ ok: boolean; error?: string }>) => {
      if (!message.data.ok) log("warn", "WAL checkpoint failed", { error: message.data.error });
      this.#finish?.();
    };
    worker.onerror = (event) => {
      event.preventDefault();
      log("warn", "WAL checkpointer thread failed; restarting it", { error: event.message });
      worker.terminate();
      this.#finish?.();
      if (!this.#stopped) this.#worker = this.#spawn();
    };
    return worker;
  }

  #schedule(): void {
    if (this.#stopped) return;
    this.#timer = setTimeout(() => {
      this.checkpoint().finally(() => this.#schedule());
    }, this.#intervalMs);
  }
}
