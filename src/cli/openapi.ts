import { manageOpenApiDocument } from "../manage/openapi";
import { openApiDocument } from "../openapi";
import { command, type FlagTable } from "./args";
import { printJson } from "./output";

export const openapiCommand = command(
  {
    name: "openapi",
    summary: "Print the OpenAPI document (the store API's, or with --manage the management API's).",
    flags: {
      manage: {
        type: "boolean",
        help: "print the management API's document (/manage/v1/openapi.json)",
      },
    } satisfies FlagTable,
  },
  async ({ values }) => {
    const document = values.manage ? manageOpenApiDocument() : openApiDocument();
    printJson(document);
  },
);
