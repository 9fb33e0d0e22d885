/**
 * Running an agent client for a scenario: the installed package's executable
 * in a cleared environment with no stdin, its output decoded, and what the
 * run did (each client run's exit and output, the requests the mock model
 * answered) as one detail text, thrown with a failure or printed when
 * `AGENT_HARNESS_VERBOSE=1`.
 *
 * @module
 */
import { basename, join } from "node:path";
import type { RunContext } from "./_scenario.ts";

/** How much of each output stream the detail keeps: its end, where a failure says why. */
const OUTPUT_CHARS = 4000;

/** What a mock model tells of the requests it answered, for the detail. */
export interface ModelLog {
  /** Lines about each request, in the order they came. */
  log: readonly string[];
  /** Requests answered per conversation, where the mock tells conversations apart. */
  counts?: Readonly<Record<string, number>>;
}

/** How to run a client once. */
export interface ClientCommand {
  args: string[];
  cwd: string;
  /** The client's whole environment: nothing of the harness's is passed on. */
  env: Record<string, string>;
}

/** A client run that exited 0, its output decoded. */
export interface ClientOutput {
  stdout: string;
  stderr: string;
}

/** A run's scratch directories: the client's HOME and the project it works in. */
export interface ScratchDirs {
  home: string;
  project: string;
}

/** Makes the run's HOME and project directories under its `workDir`. */
export async function scratchDirs(workDir: string): Promise<ScratchDirs> {
  const dirs = { home: join(workDir, "home"), project: join(workDir, "project") };
  for (const dir of Object.values(dirs)) await Deno.mkdir(dir, { recursive: true });
  return dirs;
}

/** The installed client's executable `bin` (`node_modules/.bin/<bin>`). */
export function clientBin(context: RunContext, bin: string): string {
  return join(context.installDir, "node_modules", ".bin", bin);
}

/**
 * The client runs of one scenario run: each run's exit and output is kept,
 * with the mock model's log, for the detail text.
 */
export class ClientRuns {
  readonly #model: ModelLog;
  readonly #outputs: string[] = [];

  constructor(model: ModelLog) {
    this.#model = model;
  }

  /** Runs `command` until it exits; throws the detail unless it exits 0. */
  async run(command: string, { args, cwd, env }: ClientCommand): Promise<ClientOutput> {
    const output = await new Deno.Command(command, {
      args,
      cwd,
      env,
      clearEnv: true,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).output();
    const decoder = new TextDecoder();
    const stdout = decoder.decode(output.stdout);
    const stderr = decoder.decode(output.stderr);
    const name = basename(command);
    this.#outputs.push(
      `${name} ${args.join(" ")} exited ${output.code}`,
      `stdout: ${stdout.slice(-OUTPUT_CHARS)}`,
      `stderr: ${stderr.slice(-OUTPUT_CHARS)}`,
    );
    if (!output.success) throw this.failure(`${name} exited ${output.code}`);
    return { stdout, stderr };
  }

  /** The mock model's requests, then each client run's exit and output. */
  detail(): string {
    const { log, counts } = this.#model;
    const answered = counts === undefined ? "" : ` (${JSON.stringify(counts)})`;
    return [`model requests${answered}:\n  ${log.join("\n  ")}`, ...this.#outputs].join("\n");
  }

  /** An error saying `problem`, then the detail. */
  failure(problem: string): Error {
    return new Error(`${problem}\n${this.detail()}`);
  }

  /** Prints the detail of a run that went as scripted when `AGENT_HARNESS_VERBOSE=1`. */
  report(): void {
    if (Deno.env.get("AGENT_HARNESS_VERBOSE") === "1") {
      // deno-lint-ignore no-console
      console.error(this.detail());
    }
  }
}
