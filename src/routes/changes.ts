/** Body field → the row's column it sets, for the fields a PATCH may send. */
export type Columns<Body, Row> = { readonly [Field in keyof Body]?: keyof Row };

/**
 * PATCH's one rule for "what changed": the sent fields whose stored value differs from the
 * row's, as column → value (booleans stored as 0/1). A field sent with its present value is
 * not a change, nor is a field without a column (`notifyCustomer`).
 */
export function changedColumns<Row extends object, Body extends object>(
  row: Row,
  body: Body,
  columns: Columns<Body, Row>,
): Partial<Row> {
  const changed: Partial<Row> = {};
  for (const [field, column] of Object.entries(columns) as Array<[keyof Body, keyof Row]>) {
    const value = body[field];
    if (value === undefined) continue;
    const stored = (typeof value === "boolean" ? Number(value) : value) as Row[keyof Row];
    if (row[column] !== stored) changed[column] = stored;
  }
  return changed;
}

/** Whether the body sends any field that has a column: else the PATCH is `nothing_to_update`. */
export const sendsAnyOf = <Body extends object>(
  body: Body,
  columns: { readonly [Field in keyof Body]?: unknown },
): boolean => Object.keys(columns).some((field) => body[field as keyof Body] !== undefined);
