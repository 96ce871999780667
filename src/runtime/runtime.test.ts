import { expect, test } from "bun:test";
import { bunRuntime } from "./bun";

test("a handler that throws gets a bare 500 that shows nothing of the error", async () => {
  const server = bunRuntime.serve({
    hostname: "127.0.0.1",
    port: 0,
    maxRequestBodySize: 1024,
    fetch: () => {
      throw new Error("SELECT secret FROM keys");
    },
  });
  try {
    const response = await fetch(`http://127.0.0.1:${server.port}/`);
    expect(response.status).toBe(500);
    expect(await response.text()).toBe("internal server error\n");
  } finally {
    await server.stop(true);
  }
});
