/** The process's open-files limit (RLIMIT_NOFILE). */
export interface OpenFilesLimit {
  soft: number;
  hard: number;
}

/** RLIMIT_NOFILE: 7 on Linux, 8 on macOS and the BSDs. */
const RLIMIT_NOFILE = process.platform === "linux" ? 7 : 8;
export const LIBC = process.platform === "darwin" ? "libc.dylib" : "libc.so.6";

/** libc's getrlimit and setrlimit as each runtime's FFI binds them: 0 on success. */
export interface RlimitCalls {
  getrlimit(resource: number, limit: BigUint64Array): number;
  setrlimit(resource: number, limit: BigUint64Array): number;
}

/**
 * Raises the soft open-files limit to the hard one (what `ulimit -n unlimited` would do in
 * a shell: neither Bun nor Deno has setrlimit) and returns the limit now in force, or null
 * when it cannot be read.
 */
export function raiseOpenFilesLimitWith(libc: RlimitCalls): OpenFilesLimit | null {
  // struct rlimit { rlim_t cur; rlim_t max; }: two 64-bit numbers on 64-bit systems.
  const limit = new BigUint64Array(2);
  if (libc.getrlimit(RLIMIT_NOFILE, limit) !== 0) return null;
  if (limit[0] < limit[1]) {
    const before = limit[0];
    limit[0] = limit[1];
    if (libc.setrlimit(RLIMIT_NOFILE, limit) !== 0) limit[0] = before;
  }
  return { soft: asNumber(limit[0]), hard: asNumber(limit[1]) };
}

/** RLIM_INFINITY is all ones: report it as the largest safe integer. */
const asNumber = (value: bigint) =>
  value > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(value);
