import type { Location } from "../db/location";
import { Platform } from "../db/platform";
import { StorePool } from "../db/pool";

/** Runs `fn` on the store registry (of a data directory, or any `Location`) and closes it, whatever `fn` does. */
export async function withPlatform<T>(
  where: string | Location,
  fn: (platform: Platform) => Promise<T>,
): Promise<T> {
  const platform = await Platform.open(where);
  try {
    return await fn(platform);
  } finally {
    await platform.close();
  }
}

/** Like `withPlatform`, with a pool of the stores' databases too; closes the pool first. */
export function withPlatformAndPool<T>(
  where: string | Location,
  fn: (platform: Platform, pool: StorePool) => Promise<T>,
): Promise<T> {
  return withPlatform(where, async (platform) => {
    const pool = new StorePool(where);
    try {
      return await fn(platform, pool);
    } finally {
      await pool.close();
    }
  });
}
