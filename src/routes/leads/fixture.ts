import * as v from "valibot";
import type { FixtureSection } from "../../fixtures/section";

/** Placeholder: the leads issue defines the record schema and insert. */
export const leadFixture: FixtureSection<unknown> = {
  name: "leads",
  schema: v.unknown(),
  async insert() {},
};
