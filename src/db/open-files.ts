export interface OpenFilesLimit {
  soft: number;
  hard: number;
}

/** RLIMIT_NOFILE: 7 on Linux, 8 on macOS and the BSDs. */
const RLIMIT_NOFILE = process.platform === "linux" ? 7 : 8;
const LIBC = process.platform === "darwin" ? "libc.dylib" : "libc.so.6";

/**
 * Raises the soft open-files limit to the hard one (what `ulimit -n unlimited` would do
 * in a shell: Bun has no setrlimit), so a host with many stores can keep many open.
 * Returns the limit now in force, or null where libc cannot be reached (then nothing
 * changes and the caller sizes from a conservative guess).
 */
export async function raiseOpenFilesLimit(): Promise<OpenFilesLimit | null> {
  try {
    // Loaded here, not at the top: a runtime without bun:ffi takes the no-op path.
    const { dlopen, FFIType, ptr } = await import("bun:ffi");
    const { symbols, close } = dlopen(LIBC, {
      getrlimit: { args: [FFIType.i32, FFIType.ptr], returns: FFIType.i32 },
      setrlimit: { args: [FFIType.i32, FFIType.ptr], returns: FFIType.i32 },
    });
    try {
      // struct rlimit { rlim_t cur; rlim_t max; }: two 64-bit numbers on 64-bit systems.
      const limit = new BigUint64Array(2);
      if (symbols.getrlimit(RLIMIT_NOFILE, ptr(limit)) !== 0) return null;
      if (limit[0] < limit[1]) {
        const before = limit[0];
        limit[0] = limit[1];
        if (symbols.setrlimit(RLIMIT_NOFILE, ptr(limit)) !== 0) limit[0] = before;
      }
      return { soft: asNumber(limit[0]), hard: asNumber(limit[1]) };
    } finally {
      close();
    }
  } catch {
    return null;
  }
}

/** RLIM_INFINITY is all ones: report it as the largest safe integer. */
const asNumber = (value: bigint) => (value > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(value));
