import { expect, test } from "bun:test";
import { DatabaseUnavailable } from "./db/driver";
import { requestFailureLog, STORAGE_FAILURE_LOG_MS } from "./log";

test("storage failures are logged once per interval with a count of the rest; other failures every time", () => {
  const lines: Array<[string, Record<string, unknown>]> = [];
  let now = 1_000_000;
  const log = requestFailureLog(
    { error: (msg, fields = {}) => lines.push([msg, fields]) },
    () => now,
  );
  const down = new DatabaseUnavailable("the libSQL server did not answer");
  const full = Object.assign(new Error("database or disk is full"), { code: "SQLITE_FULL" });

  log("r1", down);
  log("r2", full);
  log("r3", new Error("a bug"));
  now += STORAGE_FAILURE_LOG_MS - 1;
  log("r4", down);
  now += 1;
  log("r5", down);

  expect(lines.map(([msg, f]) => [msg, f.requestId, f.sameFailuresNotLogged, f.error])).toEqual([
    [
      "request failed: storage out of reach, full or damaged",
      "r1",
      0,
      "the libSQL server did not answer",
    ],
    ["request failed", "r3", undefined, "a bug"],
    [
      "request failed: storage out of reach, full or damaged",
      "r5",
      2,
      "the libSQL server did not answer",
    ],
  ]);
});
