/** Plans from lowest to highest; the API is included from `growth` up. */
export const PLANS = ["free", "starter", "growth", "pro", "enterprise"] as const;
export type Plan = (typeof PLANS)[number];

export const isPlan = (value: string): value is Plan =>
  (PLANS as readonly string[]).includes(value);

export const planIncludesApi = (plan: Plan) => PLANS.indexOf(plan) >= PLANS.indexOf("growth");

/** Products a store may hold; `null` is unlimited. */
export const PRODUCT_LIMIT: Record<Plan, number | null> = {
  free: 0,
  starter: 0,
  growth: 5_000,
  pro: 50_000,
  enterprise: null,
};
