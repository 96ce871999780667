import { closeSync, lstatSync, openSync, rmSync, statSync } from "node:fs";

/** Why the file system refused, by errno code, in a few words. */
export const FILE_SYSTEM_REASONS: Record<string, string> = {
  EACCES: "permission denied",
  EPERM: "operation not permitted",
  EROFS: "the file system is read-only",
  ENOENT: "no such file or directory",
  ENOTDIR: "a part of the path is not a directory",
  EISDIR: "it is a directory",
  ERR_FS_EISDIR: "it is a directory",
  EEXIST: "it already exists",
  ENOTEMPTY: "the directory is not empty",
  ENOSPC: "the disk is full",
  EDQUOT: "the disk quota is used up",
  EMFILE:
    "this process has no file descriptors left (too many connections and open stores for its open-files limit, ulimit -n)",
  ENFILE: "the system has no file descriptors left",
  ENAMETOOLONG: "the name is too long",
  ELOOP: "too many symbolic links",
  EIO: "an I/O error",
  EBADF: "it is not open for writing",
};

/**
 * Whether this process can open a database now (its file, WAL, shared memory and a spare):
 * "EMFILE" or "ENFILE" when it has not that many descriptors left, else null.
 */
export function outOfDescriptors(): "EMFILE" | "ENFILE" | null {
  const opened: number[] = [];
  try {
    for (let i = 0; i < 4; i++) opened.push(openSync("/", "r"));
    return null;
  } catch (error) {
    const { code } = error as NodeJS.ErrnoException;
    return code === "EMFILE" || code === "ENFILE" ? code : null;
  } finally {
    for (const fd of opened) closeSync(fd);
  }
}

/** Whether a file holds anything; one that cannot be looked at counts, for its open to say why. */
export function holdsData(path: string): boolean {
  try {
    return statSync(path).size > 0;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== "ENOENT";
  }
}

/** Removes a SQLite database file with its `-wal` and `-shm`, those that exist. */
export function removeDatabase(path: string): void {
  // Files only: a directory in the way is refused (EISDIR), never removed with its contents.
  for (const suffix of ["", "-wal", "-shm"]) removeIfThere(path + suffix, { recursive: false });
}

/**
 * `rm -f` (with `recursive`, `rm -rf`) of what is there: on a read-only file system
 * removing a path that does not exist fails too (EROFS), and the line would blame a file
 * that was never there instead of the one that could not be made.
 */
export function removeIfThere(path: string, { recursive = true } = {}): void {
  if (lstatSync(path, { throwIfNoEntry: false })) rmSync(path, { recursive, force: true });
}

/** Which file `path` names now (device and inode), or null when none: a file moved over it is another. */
export function fileIdOf(path: string): string | null {
  try {
    const { dev, ino } = statSync(path);
    return `${dev}:${ino}`;
  } catch {
    return null;
  }
}
