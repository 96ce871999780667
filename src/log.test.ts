import { expect, test } from "bun:test";
import { DamagedDatabase, DatabaseUnavailable } from "./db/driver";
import { requestFailureLog, STORAGE_FAILURE_LOG_MS } from "./log";

const notADatabase = Object.assign(new Error("file is not a database"), { code: "SQLITE_NOTADB" });

test("each storage failure is logged once per interval with a count of the rest; other failures every time", () => {
  const lines: Array<[string, Record<string, unknown>]> = [];
  let now = 1_000_000;
  const timers: Array<[number, () => void]> = [];
  const log = requestFailureLog(
    { error: (msg, fields = {}) => lines.push([msg, fields]) },
    () => now,
    undefined,
    (ms, fn) => timers.push([ms, fn]),
  );
  const down = new DatabaseUnavailable("the libSQL server did not answer");
  const full = Object.assign(new Error("database or disk is full"), { code: "SQLITE_FULL" });

  log("r1", down);
  log("r2", full);
  log("r3", new Error("a bug"));
  log("r4", full);
  log("r5", full);
  now += STORAGE_FAILURE_LOG_MS - 1;
  log("r6", down);
  now += 1;
  log("r7", down);
  // The outage of `full` ended: its count is written when its time is up, with no failure after it.
  expect(timers.map(([ms]) => ms)).toEqual([STORAGE_FAILURE_LOG_MS, 1]);
  timers[0][1]();
  timers[1][1](); // `down`'s count went out with r7's line already: nothing more

  const failed = "request failed: storage out of reach, full or damaged";
  const leftOut = `${failed} (left out of the log)`;
  expect(lines.map(([msg, f]) => [msg, f.requestId, f.sameFailuresNotLogged, f.error])).toEqual([
    [failed, "r1", undefined, "the libSQL server did not answer"],
    [failed, "r2", undefined, "database or disk is full"],
    ["request failed", "r3", undefined, "a bug"],
    [leftOut, undefined, 1, "the libSQL server did not answer"],
    [failed, "r7", undefined, "the libSQL server did not answer"],
    [leftOut, undefined, 2, "database or disk is full"],
  ]);
  // An outage's lines carry no stack; a bug's does.
  expect(lines.map(([, f]) => "stack" in f)).toEqual([false, false, true, false, false, false]);
});

test("one damaged store never hides another; past 100 failures at once the rest share a line", () => {
  const logged: string[] = [];
  const now = 1_000_000;
  const log = requestFailureLog(
    { error: (_msg, fields = {}) => logged.push(String(fields.error)) },
    () => now,
  );
  const damaged = (i: number) => new DamagedDatabase(`stores/shop${i}.db`, notADatabase);
  for (let round = 0; round < 3; round++) for (let i = 0; i < 102; i++) log(`r${i}`, damaged(i));

  expect(logged).toHaveLength(101);
  expect(logged.slice(0, 2)).toEqual([
    "stores/shop0.db is damaged (file is not a database); restore it from a backup",
    "stores/shop1.db is damaged (file is not a database); restore it from a backup",
  ]);
  expect(logged[100]).toBe(
    "stores/shop100.db is damaged (file is not a database); restore it from a backup",
  );
});
