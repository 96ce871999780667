import { type LoadOptions, planFixture, RecordChecker } from "../src/load/load";
import { objectRecords, outlineObject, type SectionName } from "../src/load/source";

/** Checks a whole parsed fixture, records included: each store's plan and its rows per section. */
export function validateFixture(json: unknown, options: LoadOptions = {}) {
  const plans = planFixture(outlineObject(json), options);
  const checked = plans.map((plan) => ({
    checker: new RecordChecker(plan),
    rows: { customers: [], products: [], orders: [], leads: [] } as Record<SectionName, unknown[]>,
  }));
  for (const record of objectRecords(json)) {
    const { checker, rows } = checked[record.store];
    rows[record.section].push(checker.check(record).row);
  }
  return plans.map((plan, i) => ({ ...plan, rows: checked[i].rows }));
}

/** Checks of one fixture section's records, in a one-store fixture (slug "a"), at now = 1000. */

type Section = "customers" | "products" | "orders" | "leads";

export const FIXTURE_NOW = 1_000;

/** A fixture with one store holding `records` in `section`, and any other store fields given. */
export const oneStoreFixture = (
  section: Section,
  records: unknown[],
  store: Record<string, unknown> = {},
) => ({
  stores: [
    {
      slug: "a",
      domain: "a.test",
      plan: "growth",
      ownerEmail: "o@a.test",
      ...store,
      [section]: records,
    },
  ],
});

/** The rows the records become, ready to insert. */
export function sectionRows(
  section: Section,
  records: unknown[],
  store: Record<string, unknown> = {},
) {
  const [valid] = validateFixture(oneStoreFixture(section, records, store), { now: FIXTURE_NOW });
  return valid.rows[section];
}

/** The message a fixture with these records is refused with, or "accepted". */
export function refusalOf(
  section: Section,
  records: unknown[],
  store: Record<string, unknown> = {},
): string {
  try {
    validateFixture(oneStoreFixture(section, records, store), { now: FIXTURE_NOW });
  } catch (error) {
    return (error as Error).message;
  }
  return "accepted";
}
