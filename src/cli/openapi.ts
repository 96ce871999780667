import { openApiDocument } from "../openapi";
import { parseCommand, positionals } from "./args";

export async function openapiCommand(argv: string[]): Promise<void> {
  const { positionals: args } = parseCommand(argv, {});
  positionals(args, [], "storeapi openapi");
  // Wait until the document is written: main() exits right after, and a pipe takes 64 KiB at a time.
  const text = `${JSON.stringify(openApiDocument(), null, 2)}\n`;
  await new Promise<void>((resolve) => process.stdout.write(text, () => resolve()));
}
