import * as v from "valibot";
import type { FixtureSection } from "../../fixtures/section";

/** Placeholder: the orders issue defines the record schema and insert. */
export const orderFixture: FixtureSection<unknown> = {
  name: "orders",
  schema: v.unknown(),
  async insert() {},
};
