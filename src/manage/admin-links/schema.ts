import * as v from "valibot";
import { parseOrigin } from "../../admin/links";

export const originSchema = v.pipe(
  v.string("must be a string."),
  v.check(
    (s) => parseOrigin(s) !== null,
    "must be an origin like https://shop.example.com (scheme, host and port only).",
  ),
  v.transform((s) => parseOrigin(s) as string),
);
