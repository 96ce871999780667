import { join, resolve } from "node:path";

const MAIN = join(resolve(import.meta.dir, ".."), "src/main.ts");

/** Runs `storeapi ARGS` from the sources in a subprocess (bounded), for the mail tests. */
export async function storeapi(args: string[]) {
  const child = Bun.spawn([process.execPath, MAIN, ...args], { stdin: "ignore", stdout: "pipe", stderr: "pipe", timeout: 60_000 });
  const [stdout, stderr, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  let json: any;
  try {
    json = JSON.parse(stdout);
  } catch {
    json = undefined;
  }
  return { code, stdout, stderr, json };
}
