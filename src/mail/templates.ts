import { DIRECTION_CONTROLS, LINE_SEPARATORS } from "../format/text";
import type { MailKind } from "./outbox";

/**
 * Each email is plain text plus a simple HTML version of the same words. Names (store,
 * customer, key, status) are inserted as given, Hebrew included: nodemailer encodes the
 * headers (RFC 2047) and bodies as UTF-8, and every HTML block has `dir="auto"` so a
 * right-to-left line reads right-to-left.
 */
export interface Rendered {
  kind: MailKind;
  subject: string;
  text: string;
  html: string;
}

/** A body: paragraphs, and optionally label/value details shown as a list (text) or table (HTML). */
interface Body {
  paragraphs: string[];
  details?: Array<[label: string, value: string]>;
  closing?: string[];
}

const escapeHtml = (s: string) =>
  s
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;")
    .replace(/'/g, "&#39;");

function toText(body: Body): string {
  const blocks = [...body.paragraphs];
  if (body.details?.length)
    blocks.push(body.details.map(([label, value]) => `${label}: ${value}`).join("\n"));
  blocks.push(...(body.closing ?? []));
  return `${blocks.join("\n\n")}\n`;
}

function toHtml(subject: string, body: Body): string {
  const paragraph = (line: string) => `<p dir="auto">${escapeHtml(line)}</p>`;
  const parts = body.paragraphs.map(paragraph);
  if (body.details?.length) {
    const rows = body.details
      .map(
        ([label, value]) =>
          `<tr><th style="text-align:start;padding:2px 12px 2px 0">${escapeHtml(label)}</th><td dir="auto">${escapeHtml(value)}</td></tr>`,
      )
      .join("\n");
    parts.push(`<table role="presentation">\n${rows}\n</table>`);
  }
  parts.push(...(body.closing ?? []).map(paragraph));
  return [
    "<!doctype html>",
    '<html><head><meta charset="utf-8">',
    `<title>${escapeHtml(subject)}</title></head>`,
    '<body style="font-family:sans-serif;line-height:1.5">',
    ...parts,
    "</body></html>",
    "",
  ].join("\n");
}

function render(kind: MailKind, subject: string, body: Body): Rendered {
  return { kind, subject, text: toText(body), html: toHtml(subject, body) };
}

/**
 * A name as one run of text in a line: line breaks and other control characters become
 * spaces, so a key named "k\nPermissions: none" cannot add a line of its own to the owner's
 * security notice, and direction overrides (U+202A–U+202E, U+2066–U+2069) are dropped, so
 * no name reverses the text after it. Hebrew needs neither: it runs right to left by itself.
 */
const LINE_BREAKING = new RegExp(`[\\p{Cc}${LINE_SEPARATORS}]`, "gu");
const REORDERING = new RegExp(`[${DIRECTION_CONTROLS}]`, "gu");
const inline = (name: string) => name.replace(LINE_BREAKING, " ").replace(REORDERING, "");

/** Every string of a template's parameters made `inline`. */
function inlined<T extends object>(params: T): T {
  const entries = Object.entries(params).map(([k, v]) => [
    k,
    typeof v === "string" ? inline(v) : v,
  ]);
  return Object.fromEntries(entries) as T;
}

/** A template whose parameters are made `inline` before it is rendered. */
const template =
  <P extends object>(build: (params: P) => Rendered) =>
  (params: P): Rendered =>
    build(inlined(params));

const greeting = (name: string) => (name.trim() ? `Hello ${name.trim()},` : "Hello,");

/** A pending customer was approved (`active: true`): they can log in now. */
export const customerApproved = template(
  (p: { storeName: string; firstName: string; lastName?: string }): Rendered => {
    return render("customer_approved", `Your ${p.storeName} account is approved`, {
      paragraphs: [
        greeting(`${p.firstName} ${p.lastName ?? ""}`),
        `Your account at ${p.storeName} has been approved. You can now log in.`,
      ],
      closing: [`${p.storeName}`],
    });
  },
);

/** An order's status changed and the customer is to be told: status name, order number, tracking number if any. */
export const orderStatusChanged = template(
  (p: {
    storeName: string;
    customerName: string;
    orderNumber: number;
    statusName: string;
    trackingNumber: string | null;
  }): Rendered => {
    const details: Array<[string, string]> = [
      ["Order", `#${p.orderNumber}`],
      ["Status", p.statusName],
    ];
    if (p.trackingNumber) details.push(["Tracking number", p.trackingNumber]);
    return render("order_status", `Order #${p.orderNumber}: ${p.statusName}`, {
      paragraphs: [
        greeting(p.customerName),
        `The status of your order #${p.orderNumber} at ${p.storeName} is now: ${p.statusName}.`,
      ],
      details,
      closing: [`${p.storeName}`],
    });
  },
);

export interface KeyNotice {
  storeName: string;
  keyName: string;
  /** The key's display hint (`svc_sk_…abcd`), never the key. */
  hint: string;
  permissions: string;
  by: string;
  at: string;
  /** A roll: the key this one replaces (its hint) and when that one stops working. */
  replaces?: { hint: string; until: string };
}

const keyDetails = (p: KeyNotice, verb: string): Array<[string, string]> => [
  ["Name", p.keyName],
  ["Key", p.hint],
  ["Permissions", p.permissions],
  [`${verb} by`, p.by],
  [`${verb} at`, p.at],
];

/** To the store owner: a key was created (by a roll: the key it replaces, and until when that one works). */
export const keyCreated = template((p: KeyNotice): Rendered => {
  const { replaces } = p;
  return render("key_created", `API key "${p.keyName}" created for ${p.storeName}`, {
    paragraphs: [
      replaces
        ? `An API key was created for ${p.storeName}, replacing key ${replaces.hint}, which works until ${replaces.until}.`
        : `An API key was created for ${p.storeName}.`,
    ],
    details: replaces
      ? [
          ...keyDetails(p, "Created"),
          ["Replaces", `${replaces.hint} (works until ${replaces.until})`],
        ]
      : keyDetails(p, "Created"),
    closing: [
      "If you did not expect this, delete the key (storeapi keys delete, or the API keys screen).",
    ],
  });
});

/** To the store owner: a key was deleted. */
export const keyDeleted = template((p: KeyNotice): Rendered => {
  return render("key_deleted", `API key "${p.keyName}" deleted for ${p.storeName}`, {
    paragraphs: [
      `An API key was deleted for ${p.storeName}. Requests with it are refused from now on.`,
    ],
    details: keyDetails(p, "Deleted"),
  });
});

/** To the store owner, who asked on the sign-in page: a one-time link to the "API and keys" screen. */
export const adminSignInLink = template(
  (p: { storeName: string; url: string; validMinutes: number }): Rendered => {
    return render("admin_sign_in", `Sign in to ${p.storeName}: API and keys`, {
      paragraphs: [
        `Someone asked to sign in to the "API and keys" screen of ${p.storeName}. Open this link to sign in:`,
        p.url,
        `The link works once, within ${p.validMinutes} minutes.`,
      ],
      closing: [
        "If you did not ask for it, ignore this email: nobody can sign in without the link.",
      ],
    });
  },
);
