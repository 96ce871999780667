import { Platform } from "../db/platform";
import { StorePool } from "../db/pool";

/** Runs `fn` on the data directory's store registry and closes it, whatever `fn` does. */
export async function withPlatform<T>(dataDir: string, fn: (platform: Platform) => Promise<T>): Promise<T> {
  const platform = await Platform.open(dataDir);
  try {
    return await fn(platform);
  } finally {
    await platform.close();
  }
}

/** Like `withPlatform`, with a pool of the stores' databases too; closes the pool first. */
export function withPlatformAndPool<T>(dataDir: string, fn: (platform: Platform, pool: StorePool) => Promise<T>): Promise<T> {
  return withPlatform(dataDir, async (platform) => {
    const pool = new StorePool(dataDir);
    try {
      return await fn(platform, pool);
    } finally {
      await pool.close();
    }
  });
}
