import { openApiDocument } from "../openapi";
import { parseCommand, positionals } from "./args";

export async function openapiCommand(argv: string[]): Promise<void> {
  const { positionals: args } = parseCommand(argv, {});
  positionals(args, [], "storeapi openapi");
  process.stdout.write(`${JSON.stringify(openApiDocument(), null, 2)}\n`);
}
