import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  assertClaimHeld,
  CLAIM_TTL_MS,
  ClaimLostError,
  claimScope,
  findAnswer,
  firstScopeOf,
  IDEMPOTENCY_TTL_MS,
  recordScope,
  releaseClaim,
  storeAnswer,
} from "./idempotency";
import { platformMigrations, storeMigrations } from "./migrations";
import { openDb } from "./open";

const dir = mkdtempSync(join(tmpdir(), "storeapi-idem-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test("a claim is held until it expires; one taken over cannot commit or be released by its first holder", async () => {
  const db = await openDb(`file:${join(dir, "s.db")}`, storeMigrations);
  try {
    const scope = { keyId: 1, key: "k-1" };
    const t0 = 1_700_000_000_000;
    const first = await claimScope(db, scope, "print", t0);
    expect(first).toBeString();
    // running elsewhere: no second claim until it is CLAIM_TTL_MS old
    expect(await claimScope(db, scope, "print", t0 + CLAIM_TTL_MS - 1)).toBeNull();
    const second = await claimScope(db, scope, "print", t0 + CLAIM_TTL_MS + 1);
    expect(second).toBeString();
    expect(second).not.toBe(first);
    // the slow first holder finds out inside its transaction, and its release is a no-op
    await expect(
      db.transaction((tx) => assertClaimHeld(tx, scope, first as string)),
    ).rejects.toThrow(ClaimLostError);
    await releaseClaim(db, scope, first as string);
    await db.transaction(async (tx) => {
      await assertClaimHeld(tx, scope, second as string);
      await storeAnswer(tx, scope, { fingerprint: "print", status: 201, body: "{}" }, t0 + 2);
    });
    const kept = await findAnswer(db, scope, t0 + CLAIM_TTL_MS + 2);
    expect([kept?.status, kept?.body]).toEqual([201, "{}"]);
    // an answer is never claimed over
    expect(await claimScope(db, scope, "print", t0 + 5 * CLAIM_TTL_MS)).toBeNull();
  } finally {
    await db.close();
  }
});

test("a host key's Idempotency-Key keeps the scope it was first used in for 24 hours", async () => {
  const db = await openDb(`file:${join(dir, "platform.db")}`, platformMigrations);
  try {
    const t0 = 1_700_000_000_000;
    const inA = { hostKeyId: 1, key: "k", scope: "a" };
    const inB = { ...inA, scope: "b" };
    expect(await firstScopeOf(db, inA, t0)).toBeUndefined();
    await recordScope(db, inA, t0);
    await recordScope(db, inB, t0 + 1); // a later use elsewhere changes nothing
    expect(await firstScopeOf(db, inB, t0 + IDEMPOTENCY_TTL_MS - 1)).toBe("a");
    expect(await firstScopeOf(db, { ...inB, hostKeyId: 2 }, t0)).toBeUndefined();
    // Expired: free for anywhere, and the next use records its own scope.
    expect(await firstScopeOf(db, inB, t0 + IDEMPOTENCY_TTL_MS)).toBeUndefined();
    await recordScope(db, inB, t0 + IDEMPOTENCY_TTL_MS);
    expect(await firstScopeOf(db, inA, t0 + IDEMPOTENCY_TTL_MS)).toBe("b");
  } finally {
    await db.close();
  }
});
