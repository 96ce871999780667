import { expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, unlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileSystemErrorLine } from "./errors";

const thrownBy = (f: () => unknown): unknown => {
  try {
    f();
  } catch (error) {
    return error;
  }
  throw new Error("did not throw");
};

test("a file system refusal is one line: what, which path, why", () => {
  const dir = mkdtempSync(join(tmpdir(), "storeapi-fs-errors-"));
  try {
    const file = join(dir, "data");
    writeFileSync(file, "");
    expect(fileSystemErrorLine(thrownBy(() => mkdirSync(file, { recursive: true })))).toBe(
      `cannot create the directory ${file}: a file of that name is in the way`,
    );
    expect(fileSystemErrorLine(thrownBy(() => mkdirSync(join(file, "stores"))))).toBe(
      `cannot create the directory ${join(file, "stores")}: a part of the path is not a directory`,
    );
    expect(fileSystemErrorLine(thrownBy(() => unlinkSync(join(dir, "gone"))))).toBe(
      `cannot remove ${join(dir, "gone")}: no such file or directory`,
    );
    const odd = Object.assign(new Error("x"), { code: "EWHAT", syscall: "frob", path: "/p" });
    expect(fileSystemErrorLine(odd)).toBe("cannot frob /p: EWHAT");
    expect(fileSystemErrorLine(new Error("not the file system's"))).toBeUndefined();
    expect(fileSystemErrorLine(undefined)).toBeUndefined();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
