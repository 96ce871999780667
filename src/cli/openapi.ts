import { manageOpenApiDocument } from "../manage/openapi";
import { openApiDocument } from "../openapi";
import { command, type FlagTable } from "./args";

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
    // Wait until the document is written: main() exits right after, and a pipe takes 64 KiB at a time.
    const text = `${JSON.stringify(document, null, 2)}\n`;
    await new Promise<void>((resolve) => process.stdout.write(text, () => resolve()));
  },
);
