import { describe, expect, test } from "bun:test";
import { changedColumns, sendsAnyOf } from "./changes";

interface Row {
  paid: number;
  tracking_number: string | null;
  admin_notes: string | null;
}
interface Body {
  paid?: boolean;
  trackingNumber?: string | null;
  adminNotes?: string | null;
  notifyCustomer?: boolean;
}
const COLUMN_OF = {
  paid: "paid",
  trackingNumber: "tracking_number",
  adminNotes: "admin_notes",
} as const;
const row: Row = { paid: 1, tracking_number: "T-1", admin_notes: null };

describe("changedColumns", () => {
  test("only sent fields whose stored value differs; booleans as 0/1; null is a value", () => {
    expect(
      changedColumns<Row, Body>(
        row,
        { paid: true, trackingNumber: "T-2", adminNotes: undefined },
        COLUMN_OF,
      ),
    ).toEqual({ tracking_number: "T-2" });
    expect(
      changedColumns<Row, Body>(row, { paid: false, trackingNumber: null }, COLUMN_OF),
    ).toEqual({ paid: 0, tracking_number: null });
    expect(
      changedColumns<Row, Body>(row, { adminNotes: null, notifyCustomer: true }, COLUMN_OF),
    ).toEqual({});
  });

  test("sendsAnyOf: a field without a column does not count", () => {
    expect(sendsAnyOf<Body>({ notifyCustomer: true }, COLUMN_OF)).toBe(false);
    expect(sendsAnyOf<Body>({ adminNotes: null }, COLUMN_OF)).toBe(true);
    expect(sendsAnyOf<Body>({}, COLUMN_OF)).toBe(false);
  });
});
