import { openApiDocument } from "../openapi";
import { command } from "./args";

export const openapiCommand = command({ name: "openapi", summary: "Print the OpenAPI document.", flags: {} }, async () => {
  // Wait until the document is written: main() exits right after, and a pipe takes 64 KiB at a time.
  const text = `${JSON.stringify(openApiDocument(), null, 2)}\n`;
  await new Promise<void>((resolve) => process.stdout.write(text, () => resolve()));
});
