import { expect, test } from "bun:test";
import { isJsonType } from "./json-body";

test("a JSON body's type: application/json, a UTF-8 charset at most, empty parameters allowed", () => {
  const accepted = [
    "application/json",
    "Application/JSON",
    "application/json; charset=utf-8",
    'application/json;charset="UTF-8"',
    "application/json;",
    "application/json; charset=utf-8;",
    " application/json ",
  ];
  const refused = [
    "",
    "text/plain",
    "application/json; charset=latin1",
    "application/json; charset=utf-8; boundary=x",
    "application/jsonx",
    "application/json-patch+json",
    "application/json, text/plain",
  ];
  expect(accepted.filter((type) => !isJsonType(type))).toEqual([]);
  expect(refused.filter((type) => isJsonType(type))).toEqual([]);
});
