/** Resolves when `promise` settles or after `ms`, whichever comes first; never rejects. */
export async function waitAtMost(promise: Promise<unknown>, ms: number): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const expired = new Promise((resolve) => (timer = setTimeout(resolve, ms)));
  await Promise.race([promise.catch(() => {}), expired]);
  clearTimeout(timer);
}
