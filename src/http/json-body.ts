import { ApiError, invalidField } from "../errors";
import type { AppContext } from "./context";

export const MAX_BODY_BYTES = 1_048_576;

const JSON_TYPE = /^application\/json\s*(;\s*charset\s*=\s*"?utf-8"?\s*)?$/i;

/** POST/PATCH bodies: JSON only (415), parsable (400 invalid_json), an object (400 invalid_field), ≤ 1 MiB. */
export async function readJsonBody(c: AppContext): Promise<Record<string, unknown>> {
  const type = c.req.header("content-type") ?? "";
  if (!JSON_TYPE.test(type.trim())) {
    throw new ApiError("json_required", "Send the body as JSON with 'Content-Type: application/json'.");
  }
  const declared = Number(c.req.header("content-length") ?? 0);
  if (declared > MAX_BODY_BYTES) throw tooLarge();
  const bytes = await c.req.arrayBuffer();
  if (bytes.byteLength > MAX_BODY_BYTES) throw tooLarge();
  let body: unknown;
  try {
    body = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes));
  } catch {
    throw new ApiError("invalid_json", "The body is not valid JSON; check quotes, commas and brackets.");
  }
  if (body === null || typeof body !== "object" || Array.isArray(body)) {
    throw invalidField("body", "The body must be a JSON object.");
  }
  return body as Record<string, unknown>;
}

const tooLarge = () =>
  new ApiError("payload_too_large", `The body is larger than ${MAX_BODY_BYTES} bytes; send less per request.`);
