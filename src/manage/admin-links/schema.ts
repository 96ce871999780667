import * as v from "valibot";
import { parseOrigin } from "../../admin/links";

export const originSchema = v.pipe(
  v.string("must be a string."),
  v.check(
    (s) => parseOrigin(s) !== null,
    "must be an origin like https://shop.example.com (scheme, host and port only).",
  ),
  v.metadata({
    pattern: "^[Hh][Tt][Tt][Pp][Ss]?://[^/?#@\\s]+/?$",
    description:
      "Where the link points: scheme, host and port only (https://shop.example.com). Default: https:// and the store's own domain.",
  }),
  v.transform((s) => parseOrigin(s) as string),
);
