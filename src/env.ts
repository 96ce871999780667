/**
 * The environment variable `name`. One that is not UTF-8 reads as U+FFFD, which its
 * readers refuse naming it: Bun replaces such bytes so, and Deno throws on reading it.
 */
export function envVariable(
  name: string,
  env: NodeJS.ProcessEnv = process.env,
): string | undefined {
  try {
    return env[name];
  } catch {
    return "\uFFFD";
  }
}
