/**
 * The benchmark's server under test: `main.ts serve` as a child process on
 * loopback ports it picks, with its stderr log written to a file, and what
 * the benchmark reads about it from `/proc` (peak RSS, CPU time).
 *
 * @module
 */
import { SERVER_V8_FLAGS } from "../src/memory_budget.ts";

const MAIN = new URL("../main.ts", import.meta.url).pathname;

/** A resident-set sample, bytes. */
export interface RssSample {
  total: number;
  anon: number;
  file: number;
  shmem: number;
}

/** Every server started and not yet stopped, for cleanup on error or signal. */
const running = new Set<BenchServer>();

/** A running `main.ts serve` child. */
export class BenchServer {
  #exited = false;

  private constructor(
    readonly child: Deno.ChildProcess,
    readonly queryUrl: string,
    readonly ingestUrl: string,
    /** Milliseconds from spawn to the first answered `/v1/ping`. */
    readonly startupMs: number,
    readonly logPath: string,
    readonly status: Promise<Deno.CommandStatus>,
  ) {
    status.finally(() => this.#exited = true);
  }

  /**
   * Spawns the server on `dir` (plus `serveArgs`, e.g. `--database URL`) and
   * waits until `/v1/ping` answers 200 with `apiKey`. The log (JSON lines,
   * `--log-level` as given) goes to `logPath`.
   */
  static async start(
    dir: string,
    options: {
      apiKey: string;
      logPath: string;
      logLevel?: string;
      timeoutMs?: number;
      serveArgs?: readonly string[];
    },
  ): Promise<BenchServer> {
    const started = performance.now();
    // The shell only redirects stderr to the log file and execs the server:
    // the child's pid is the server's, and no log byte passes through here.
    const child = new Deno.Command("/bin/sh", {
      args: [
        "-c",
        'log="$1"; shift; exec "$@" 2>>"$log"',
        "sh",
        options.logPath,
        Deno.execPath(),
        "run",
        // BENCH_SERVER_INSPECT=127.0.0.1:9229 opens the V8 inspector, so that a
        // CPU profile of the main thread can be taken while a phase runs.
        ...(Deno.env.get("BENCH_SERVER_INSPECT")
          ? [`--inspect=${Deno.env.get("BENCH_SERVER_INSPECT")}`]
          : []),
        "--allow-all",
        // The V8 flags every launch of the product passes (deno.json, deploy/launcher.sh, compile).
        `--v8-flags=${SERVER_V8_FLAGS.join(",")}`,
        MAIN,
        "serve",
        "--data",
        dir,
        ...(options.serveArgs ?? []),
        "--listen",
        "127.0.0.1:0",
        "--ingest-listen",
        "127.0.0.1:0",
        // The gRPC listener runs as by default, on a port of its own (runs may overlap).
        "--grpc-listen",
        "127.0.0.1:0",
        "--log-level",
        options.logLevel ?? "info",
      ],
      // The flags alone pick the store: never a database named by the environment.
      clearEnv: true,
      env: serverEnv(),
      stdin: "null",
      stdout: "piped",
      stderr: "null",
    }).spawn();
    const status = child.status;
    const placeholder = { kill: () => child.kill("SIGKILL"), status };
    startingChildren.add(placeholder);
    try {
      const deadline = started + (options.timeoutMs ?? 120_000);
      const out = await readUntil(child.stdout, "OTLP ingest listening on", deadline, status);
      const queryUrl = /query API listening on (\S+)/.exec(out)?.[1];
      const ingestUrl = /OTLP ingest listening on (\S+)/.exec(out)?.[1];
      if (!queryUrl || !ingestUrl) throw new Error(`Unexpected server output: ${out}`);
      for (;;) {
        const response = await fetch(`${queryUrl}/v1/ping`, {
          headers: { authorization: `Bearer ${options.apiKey}` },
        }).catch(() => null);
        const ok = response?.status === 200;
        await response?.body?.cancel();
        if (ok) break;
        if (performance.now() > deadline) throw new Error("Server did not answer /v1/ping");
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      const server = new BenchServer(
        child,
        queryUrl,
        ingestUrl,
        performance.now() - started,
        options.logPath,
        status,
      );
      running.add(server);
      return server;
    } catch (error) {
      child.kill("SIGKILL");
      await status.catch(() => {});
      throw new Error(`${errorText(error)}\n${await tail(options.logPath)}`);
    } finally {
      startingChildren.delete(placeholder);
    }
  }

  get pid(): number {
    return this.child.pid;
  }

  /** Fails when the server has exited (it must not during a run). */
  assertAlive(): void {
    if (this.#exited) throw new Error("The server exited during the benchmark");
  }

  /** `VmHWM` (peak resident set) in bytes. */
  async peakRss(): Promise<number> {
    return await procStatusBytes(this.pid, "VmHWM");
  }

  /** `VmRSS` (current resident set) in bytes. */
  async rss(): Promise<number> {
    return await procStatusBytes(this.pid, "VmRSS");
  }

  /** Resets `VmHWM` to the current RSS (Linux `clear_refs` 5); false when refused. */
  async resetPeakRss(): Promise<boolean> {
    try {
      await Deno.writeTextFile(`/proc/${this.pid}/clear_refs`, "5");
      return true;
    } catch {
      return false;
    }
  }

  /**
   * Samples the server's resident set every `everyMs` until stopped; returns
   * the sample with the largest total, split into anonymous memory (heaps,
   * SQLite and DuckDB caches), file-backed pages and shared memory (SQLite's
   * `-shm` WAL index).
   */
  sampleRss(everyMs = 500): { stop(): Promise<RssSample> } {
    let peak: RssSample = { total: 0, anon: 0, file: 0, shmem: 0 };
    const sample = async () => {
      try {
        const status = await Deno.readTextFile(`/proc/${this.pid}/status`);
        const kb = (field: string) =>
          Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? 0) * 1024;
        const now = {
          total: kb("VmRSS"),
          anon: kb("RssAnon"),
          file: kb("RssFile"),
          shmem: kb("RssShmem"),
        };
        if (now.total > peak.total) peak = now;
      } catch {
        // The process is gone: keep what was seen.
      }
    };
    const timer = setInterval(sample, everyMs);
    return {
      stop: async () => {
        clearInterval(timer);
        await sample();
        return peak;
      },
    };
  }

  /** User + system CPU milliseconds the server has used, all threads. */
  async cpuMs(): Promise<number> {
    return await procCpuMs(String(this.pid));
  }

  /**
   * CPU milliseconds by thread name (`/proc/<pid>/task/<tid>/comm`): `deno` is the
   * main thread, `worker-N` the Web Workers in the order they started (the
   * SQLite writer first), `tokio-runtime-w` I/O, `V8 DefaultWorke` V8's own
   * (GC, compilation). A thread that ended is no longer counted.
   */
  async threadCpuMs(): Promise<Map<string, number>> {
    const byName = new Map<string, number>();
    for await (const task of Deno.readDir(`/proc/${this.pid}/task`)) {
      try {
        const name = (await Deno.readTextFile(`/proc/${this.pid}/task/${task.name}/comm`)).trim();
        const ms = await procCpuMs(`${this.pid}/task/${task.name}`);
        byName.set(name, (byName.get(name) ?? 0) + ms);
      } catch (error) {
        if (!(error instanceof Deno.errors.NotFound)) throw error;
      }
    }
    return byName;
  }

  /** The log's size now: pass it to {@link loggedDurations} to read what follows. */
  async logOffset(): Promise<number> {
    return (await Deno.stat(this.logPath)).size;
  }

  /** `duration_ms` of the request lines logged since `offset` (the server's own timing). */
  async loggedDurations(offset: number): Promise<number[]> {
    const file = await Deno.open(this.logPath, { read: true });
    try {
      await file.seek(offset, Deno.SeekMode.Start);
      const text = await new Response(file.readable).text();
      const durations: number[] = [];
      for (const line of text.split("\n")) {
        if (!line.includes('"message":"request"')) continue;
        const duration = Number(/"duration_ms":([\d.]+)/.exec(line)?.[1]);
        if (Number.isFinite(duration)) durations.push(duration);
      }
      return durations;
    } catch (error) {
      try {
        file.close();
      } catch {
        // closed by the stream
      }
      throw error;
    }
  }

  /** SIGTERM, then SIGKILL after `graceMs`; resolves once the process is gone. */
  async stop(graceMs = 60_000): Promise<void> {
    running.delete(this);
    if (this.#exited) return;
    try {
      this.child.kill("SIGTERM");
    } catch {
      // Already gone.
    }
    const timer = setTimeout(() => {
      try {
        this.child.kill("SIGKILL");
      } catch {
        // Already gone.
      }
    }, graceMs);
    await this.status.catch(() => {});
    clearTimeout(timer);
    await this.child.stdout.cancel().catch(() => {});
  }
}

const startingChildren = new Set<{ kill: () => void; status: Promise<unknown> }>();

/** Kills every server this process started and has not stopped (cleanup on error). */
export async function killAllServers(): Promise<void> {
  for (const starting of startingChildren) {
    try {
      starting.kill();
    } catch {
      // Already gone.
    }
    await starting.status.catch(() => {});
  }
  await Promise.all([...running].map((server) => server.stop(10_000)));
}

/**
 * CPU milliseconds (user + system) of `/proc/<pid>/stat`, e.g. `self`; with
 * `children`, those of its exited and waited-for children instead.
 */
export async function procCpuMs(pid: string, children = false): Promise<number> {
  const stat = await Deno.readTextFile(`/proc/${pid}/stat`);
  // Fields after the command name (which may hold spaces) in parentheses.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const at = children ? 13 : 11; // cutime, cstime or utime, stime
  const ticks = Number(fields[at]) + Number(fields[at + 1]);
  return ticks * 10; // USER_HZ is 100 on Linux
}

/** Machine-wide CPU milliseconds from `/proc/stat`: busy (no steal) and stolen by the host. */
export async function machineCpuMs(): Promise<{ busy: number; steal: number }> {
  const line = (await Deno.readTextFile("/proc/stat")).split("\n", 1)[0]!;
  // cpu user nice system idle iowait irq softirq steal guest guest_nice
  const [user, nice, system, , , irq, softirq, steal] = line.trim().split(/\s+/).slice(1).map(
    Number,
  );
  return { busy: (user! + nice! + system! + irq! + softirq!) * 10, steal: steal! * 10 };
}

/**
 * CPU used by other processes than this one and the servers it started, over
 * a span: the benchmark's figures are only as good as the machine was quiet.
 */
export class OtherLoad {
  #machine = { busy: 0, steal: 0 };
  #ours = 0;
  #started = 0;

  /** Starts a span; `serverCpuMs` is the CPU of a server running now (0 if none). */
  async start(serverCpuMs = 0): Promise<void> {
    this.#machine = await machineCpuMs();
    this.#ours = await ourCpuMs() + serverCpuMs;
    this.#started = performance.now();
  }

  /** Mean cores other processes used, and mean cores stolen by the host, since `start`. */
  async stop(serverCpuMs = 0): Promise<{ others: number; steal: number; seconds: number }> {
    const machine = await machineCpuMs();
    const ours = await ourCpuMs() + serverCpuMs;
    const wall = performance.now() - this.#started;
    const others = (machine.busy - this.#machine.busy) - (ours - this.#ours);
    return {
      others: Math.max(0, others / wall),
      steal: (machine.steal - this.#machine.steal) / wall,
      seconds: wall / 1000,
    };
  }
}

async function ourCpuMs(): Promise<number> {
  return await procCpuMs("self") + await procCpuMs("self", true);
}

async function procStatusBytes(pid: number, field: string): Promise<number> {
  const status = await Deno.readTextFile(`/proc/${pid}/status`);
  return Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? 0) * 1024;
}

/** This process's environment without the variable that would put the server on PostgreSQL. */
function serverEnv(): Record<string, string> {
  const env = Deno.env.toObject();
  delete env.AGENT_TELEMETRY_DATABASE_URL;
  return env;
}

/** The last lines of a log file, for error messages. */
export async function tail(path: string, lines = 20): Promise<string> {
  const text = await Deno.readTextFile(path).catch(() => "");
  return text.trimEnd().split("\n").slice(-lines).join("\n");
}

async function readUntil(
  stream: ReadableStream<Uint8Array>,
  marker: string,
  deadline: number,
  exited: Promise<unknown>,
): Promise<string> {
  const decoder = new TextDecoderStream() as unknown as ReadableWritablePair<string, Uint8Array>;
  const reader = stream.pipeThrough(decoder).getReader();
  let out = "";
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error("Server did not start in time")),
      Math.max(0, deadline - performance.now()),
    );
  });
  const gone = exited.then(() => {
    throw new Error(`Server exited before listening: ${out}`);
  });
  try {
    while (!out.includes(marker)) {
      const { value, done } = await Promise.race([reader.read(), timeout, gone]);
      if (done) throw new Error(`Server closed stdout before listening: ${out}`);
      out += value;
    }
    // Keep draining stdout so the server never blocks on a full pipe; kept in
    // BENCH_SERVER_STDOUT when set (e.g. with DENO_V8_FLAGS=--trace-gc, each
    // isolate's heap sizes: how the benchmark's RSS splits among the threads).
    const keep = Deno.env.get("BENCH_SERVER_STDOUT");
    const file = keep ? await Deno.open(keep, { append: true, create: true }) : null;
    const encoder = new TextEncoder();
    (async () => {
      try {
        for (;;) {
          const { value, done } = await reader.read().catch(() => ({ value: "", done: true }));
          if (done) return;
          if (file) await file.write(encoder.encode(value));
        }
      } finally {
        file?.close();
      }
    })();
    return out;
  } finally {
    clearTimeout(timer);
    gone.catch(() => {});
  }
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
