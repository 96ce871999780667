import type { AppContext } from "../../http/context";
import { manageDeps, reloadRegistry } from "../context";

/** Who changed a key, for the owner's email. */
export const byHost = (c: AppContext) =>
  `the host's platform (management API key "${c.get("hostKey").name}")`;

/** After a key change: the server reloads the store's keys now and delivers the owner's notice. */
export async function keysChanged(c: AppContext, slug: string): Promise<void> {
  await manageDeps(c).platform.bumpKeysAndMail(slug);
  await reloadRegistry(c);
}
