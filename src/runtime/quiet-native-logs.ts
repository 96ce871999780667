import { LIBC } from "./open-files";

/**
 * The `libsql` binding writes its own errors (an embedded replica's failed syncs, once a
 * second while a libSQL server is down) to stdout as coloured text, which would break the
 * log's JSON lines; storeapi reports those failures itself. The binding reads RUST_LOG from
 * the C environment once, when it loads, so unless the operator set RUST_LOG this sets it
 * to "off" there, before the program is loaded (src/main.ts, Bun's entry: Deno cannot
 * keep replicas). Bun's `process.env` does not reach the C environment, hence libc's
 * setenv; where libc cannot be opened, nothing changes.
 */
export async function quietNativeLogs(): Promise<void> {
  if (process.env.RUST_LOG !== undefined) return;
  try {
    const { dlopen, FFIType } = await import("bun:ffi");
    const { symbols, close } = dlopen(LIBC, {
      setenv: { args: [FFIType.cstring, FFIType.cstring, FFIType.i32], returns: FFIType.i32 },
    });
    try {
      symbols.setenv(Buffer.from("RUST_LOG\0"), Buffer.from("off\0"), 0);
    } finally {
      close();
    }
  } catch {
    // No libc to open: the binding's lines stay.
  }
}
