import { expect, test } from "bun:test";
import { RequestsInFlight } from "./in-flight";

test("idle waits for every running handler, answered or failed", async () => {
  const inFlight = new RequestsInFlight();
  const finish: (() => void)[] = [];
  const slow = inFlight.track<void>(
    () => new Promise<Response>((resolve) => finish.push(() => resolve(new Response("ok")))),
  );
  const failing = inFlight.track<void>(() => Promise.reject(new Error("handler failed")));
  const events: string[] = [];
  const answers = [slow(new Request("http://a/1")), slow(new Request("http://a/2"))];
  await expect(failing(new Request("http://a/3"))).rejects.toThrow("handler failed");
  const idle = inFlight.idle().then(() => events.push("idle"));
  expect(inFlight.count).toBe(2);
  finish[0]();
  await answers[0];
  events.push("first answered");
  finish[1]();
  await Promise.all(answers);
  await idle;
  expect(events).toEqual(["first answered", "idle"]);
  expect(inFlight.count).toBe(0);
});

test("a handler that answers at once or throws at once is counted out", async () => {
  const inFlight = new RequestsInFlight();
  expect(
    inFlight.track<void>(() => new Response("now"))(new Request("http://a/"), undefined),
  ).toBeInstanceOf(Response);
  expect(() =>
    inFlight.track<void>(() => {
      throw new Error("at once");
    })(new Request("http://a/"), undefined),
  ).toThrow("at once");
  expect(inFlight.count).toBe(0);
  await inFlight.idle();
});
