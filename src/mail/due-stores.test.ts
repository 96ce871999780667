import { expect, test } from "bun:test";
import { DueStores } from "./due-stores";

test("a store is due from its earliest time and leaves when a delivery finds nothing queued", () => {
  const schedule = new DueStores();
  schedule.dueBy("a", 500);
  schedule.dueBy("a", 300);
  schedule.dueBy("b", 900);
  expect(schedule.due(400)).toEqual(["a"]);
  schedule.deliveryStarts("a");
  schedule.deliveryEnded("a", null);
  expect(schedule.has("a")).toBe(false);
  expect(schedule.due(1000)).toEqual(["b"]);
});

test("a notification during a delivery keeps the store due at once", () => {
  const schedule = new DueStores();
  schedule.notify("a");
  schedule.deliveryStarts("a");
  schedule.notify("a");
  schedule.deliveryEnded("a", null);
  expect(schedule.due(0)).toEqual(["a"]);
  schedule.deliveryStarts("a");
  schedule.deliveryEnded("a", 700);
  expect(schedule.due(600)).toEqual([]);
  expect(schedule.due(700)).toEqual(["a"]);
});
