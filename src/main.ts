#!/usr/bin/env bun
/**
 * Bun's entry (src/main-deno.ts is Deno's). The program is loaded only once the libsql
 * binding's own logging is off: the binding reads RUST_LOG once, as it loads, and Bun
 * loads CommonJS packages such as libsql before any module's body runs.
 */
import { quietNativeLogs } from "./runtime/quiet-native-logs";

await quietNativeLogs();
const { runMain } = await import("./program");
const { bunRuntime } = await import("./runtime/bun");
await runMain(bunRuntime);
