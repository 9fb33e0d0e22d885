/**
 * One server per data directory: a writing server holds an exclusive lock on
 * `server.lock` in its data directory (an advisory `flock`, released by the
 * system when the process ends, however it ends) and writes its pid there, so
 * a second server on the same directory stops at start with one line naming
 * the holder instead of failing later on the analytics replica.
 *
 * @module
 */
import { join } from "node:path";
import { UserInputError } from "../errors.ts";

/** The lock file's name inside the data directory. */
export const LOCK_FILE = "server.lock";

/** A held data directory. */
export interface DataDirLock {
  release(): void;
}

/** Takes `dir` for this process, or throws a `UserInputError` naming the process that holds it. */
export async function lockDataDir(dir: string): Promise<DataDirLock> {
  const path = join(dir, LOCK_FILE);
  const file = await Deno.open(path, { read: true, write: true, create: true, mode: 0o600 });
  let locked: boolean;
  try {
    locked = await file.tryLock(true);
  } catch (error) {
    file.close();
    throw error;
  }
  if (!locked) {
    file.close();
    const holder = (await Deno.readTextFile(path).catch(() => "")).trim();
    throw new UserInputError(
      `Data directory "${dir}" is in use by another server${
        /^\d+$/.test(holder) ? ` (pid ${holder})` : ""
      }: stop it, or give this one another --data`,
    );
  }
  // The file is kept (never removed): removing it could let a third process lock a new file
  // while a second still waits on the old one.
  await file.truncate(0);
  await file.write(new TextEncoder().encode(`${Deno.pid}\n`));
  return {
    release() {
      file.unlockSync();
      file.close();
    },
  };
}
