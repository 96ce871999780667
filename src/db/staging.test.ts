import { afterAll, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { moveIntoPlace } from "./staging";

const dir = mkdtempSync(join(tmpdir(), "storeapi-staging-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test("a move puts the staged file in place and leaves neither it nor its copy", () => {
  const [staged, final] = [join(dir, "a-staged.db"), join(dir, "a.db")];
  writeFileSync(staged, "built");
  moveIntoPlace(staged, final);
  expect([readFileSync(final, "utf8"), existsSync(staged), existsSync(`${final}.copy`)]).toEqual([
    "built",
    false,
    false,
  ]);
});

test("run again after a crash between its copy and its rename, it finishes from the copy", () => {
  const [staged, final] = [join(dir, "b-staged.db"), join(dir, "b.db")];
  writeFileSync(`${final}.copy`, "built"); // the staged file already gone
  moveIntoPlace(staged, final);
  expect([readFileSync(final, "utf8"), existsSync(`${final}.copy`)]).toEqual(["built", false]);
});

test("run again after it finished, it never copies anything over the store in place", () => {
  const [staged, final] = [join(dir, "c-staged.db"), join(dir, "c.db")];
  writeFileSync(staged, "built");
  moveIntoPlace(staged, final);
  writeFileSync(final, "written by the server since");
  moveIntoPlace(staged, final); // a second settle of the same pending move
  expect(readFileSync(final, "utf8")).toBe("written by the server since");
});
