import type { AppContext } from "../http/context";
import { readJsonBody } from "../http/json-body";

/** A body that may be left out entirely (no content, no type): then it is `{}`; else a JSON object. */
export async function optionalJsonBody(c: AppContext): Promise<unknown> {
  const length = c.req.header("content-length");
  const empty =
    length === "0" || (length === undefined && c.req.header("transfer-encoding") === undefined);
  return empty && c.req.header("content-type") === undefined ? {} : readJsonBody(c);
}
