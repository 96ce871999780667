// The tests run the program's modules on Bun, as src/main.ts does (bunfig.toml preloads this).
import { bunRuntime } from "../src/runtime/bun";
import { useRuntime } from "../src/runtime/runtime";

useRuntime(bunRuntime);
