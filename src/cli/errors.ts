/** Bad usage (unknown command or flag, missing argument): exit status 2. */
export class UsageError extends Error {}

/** The command could not do its job (unknown store, sixth key…): exit status 1. */
export class CliError extends Error {}
