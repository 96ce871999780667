import * as v from "valibot";
import type { FixtureSection } from "../../fixtures/section";

/** Placeholder: the products issue defines the record schema and insert. */
export const productFixture: FixtureSection<unknown> = {
  name: "products",
  schema: v.unknown(),
  async insert() {},
};
