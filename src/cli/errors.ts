import { FILE_SYSTEM_REASONS } from "../file-system";

/** Bad usage (unknown command or flag, missing argument): exit status 2. */
export class UsageError extends Error {}

/** The command could not do its job (unknown store, sixth key…): exit status 1. */
export class CliError extends Error {}

/** What was being done, by the system call Node names. */
const FILE_SYSTEM_ACTIONS: Record<string, string> = {
  mkdir: "create the directory",
  open: "open",
  read: "read",
  write: "write",
  rename: "move",
  copyfile: "copy",
  unlink: "remove",
  rmdir: "remove",
  rm: "remove",
  chmod: "change the mode of",
  scandir: "list",
  stat: "read",
  lstat: "read",
  access: "access",
};

/** A file system refusal in one line (what could not be done to which path, and why), if it is one. */
export function fileSystemErrorLine(error: unknown): string | undefined {
  const { code, syscall, path } = (error ?? {}) as NodeJS.ErrnoException;
  if (!code || !syscall || !path) return undefined;
  // mkdir -p fails so only when the name is taken by something that is not a directory.
  const inTheWay = code === "EEXIST" && syscall === "mkdir";
  const reason = inTheWay
    ? "a file of that name is in the way"
    : (FILE_SYSTEM_REASONS[code] ?? code);
  return `cannot ${FILE_SYSTEM_ACTIONS[syscall] ?? syscall} ${path}: ${reason}`;
}
