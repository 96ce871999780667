import { join } from "node:path";
import { expectDocumented } from "./contract";
import { runCli } from "./process";

/**
 * A management API call: JSON in and out, a host key unless `key` says otherwise (null: none).
 * The answer is checked against the management API's document (test/contract.ts).
 */
export async function manage(
  url: string,
  method: string,
  path: string,
  options: {
    key?: string | null;
    body?: unknown;
    rawBody?: string;
    headers?: Record<string, string>;
  } = {},
) {
  const headers: Record<string, string> = { ...options.headers };
  if (options.key) headers.Authorization = `Bearer ${options.key}`;
  let body: string | undefined = options.rawBody;
  if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers["Content-Type"] = "application/json";
  }
  const response = await fetch(`${url}/manage/v1${path}`, { method, headers, body });
  const text = await response.text();
  let json: any;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  const answer = { status: response.status, headers: response.headers, json, text };
  // Every answer the management tests get must be what the management API's document says.
  expectDocumented(method, `/manage/v1${path}`, answer);
  return answer;
}

/** Makes a host key with the CLI; returns its secret. */
export async function newHostKey(dataDir: string, name = "platform"): Promise<string> {
  const made = await runCli(["host-keys", "create", "--name", name, "--json", "--data", dataDir]);
  if (made.code !== 0) throw new Error(made.stderr);
  return made.json.key;
}

export const storeBody = (slug: string, extra: Record<string, unknown> = {}) => ({
  slug,
  name: `Shop ${slug}`,
  domain: `${slug}.example.com`,
  plan: "growth",
  ownerEmail: `owner@${slug}.example.com`,
  ...extra,
});

export const dataDirIn = (dir: string) => join(dir, "data");
