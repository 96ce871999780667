import * as v from "valibot";
import { parseOrigin } from "../../admin/links";

export const originSchema = v.pipe(
  v.string("must be a string."),
  v.check(
    (s) => parseOrigin(s) !== null,
    "must be an origin like https://shop.example.com (scheme, host and port only).",
  ),
  v.metadata({
    pattern:
      "^[Hh][Tt][Tt][Pp][Ss]?://(?:\\[[0-9A-Fa-f:.]+\\]|[A-Za-z0-9.-]+)(?::(?:[1-9][0-9]{0,3}|[1-5][0-9]{4}|6[0-4][0-9]{3}|65[0-4][0-9]{2}|655[0-2][0-9]|6553[0-5]))?/?$",
    description:
      "Where the link points: scheme, host and port only (https://shop.example.com). Default: https:// and the store's own domain.",
  }),
  v.transform((s) => parseOrigin(s) as string),
);
