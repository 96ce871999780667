import { ok } from "../../http/respond";
import { storeOr404 } from "../context";
import { defineManageRoute } from "../define";
import { storeJson } from "./json";
import { slugParams, storeOut } from "./schema";

export const getStore = defineManageRoute({
  method: "GET",
  path: "/stores/:slug",
  summary: "One store.",
  params: slugParams,
  response: storeOut,
  handler: async (c, { params }) => ok(c, await storeJson(c, storeOr404(c, params.slug))),
});
