/** The entry point under Deno (scripts/storeapi-deno): the same CLI as src/main.ts. */
import { runMain } from "./program";
import { denoRuntime } from "./runtime/deno";

await runMain(denoRuntime);
