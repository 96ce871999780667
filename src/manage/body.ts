import type { AppContext } from "../http/context";
import { isJsonType, readJsonBody } from "../http/json-body";

/**
 * A body that may be left out: no content, with no type or a JSON one (clients send their
 * usual `Content-Type: application/json` either way), is `{}`; else a JSON object.
 */
export async function optionalJsonBody(c: AppContext, limit?: number): Promise<unknown> {
  const length = c.req.header("content-length");
  const empty =
    length === "0" || (length === undefined && c.req.header("transfer-encoding") === undefined);
  const type = c.req.header("content-type");
  return empty && (type === undefined || isJsonType(type)) ? {} : readJsonBody(c, limit);
}
