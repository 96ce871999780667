import { setDefaultTimeout } from "bun:test";

// Bun ignores bunfig.toml's `[test] timeout` (every test had the 5 s default); a preload's
// setDefaultTimeout is honoured by `bun test`, `npm test` and .ci/run alike. Black-box
// tests start real servers on a shared 2-core machine: give them room.
setDefaultTimeout(60_000);
