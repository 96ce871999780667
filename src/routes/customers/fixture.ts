import * as v from "valibot";
import type { FixtureSection } from "../../fixtures/section";

/** Placeholder: the customers issue defines the record schema and insert. */
export const customerFixture: FixtureSection<unknown> = {
  name: "customers",
  schema: v.unknown(),
  async insert() {},
};
