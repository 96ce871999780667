import type { MailKind } from "./outbox";

export interface Rendered {
  kind: MailKind;
  subject: string;
  text: string;
  html: string;
}

const escapeHtml = (s: string) =>
  s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");

function page(lines: string[]): string {
  const body = lines.map((line) => `<p>${escapeHtml(line)}</p>`).join("\n");
  return `<!doctype html>\n<html><head><meta charset="utf-8"></head><body>\n${body}\n</body></html>\n`;
}

function render(kind: MailKind, subject: string, lines: string[]): Rendered {
  return { kind, subject, text: `${lines.join("\n\n")}\n`, html: page(lines) };
}

export function customerApproved(p: { storeName: string; firstName: string }): Rendered {
  const greeting = p.firstName ? `Hello ${p.firstName},` : "Hello,";
  return render("customer_approved", `Your ${p.storeName} account is approved`, [
    greeting,
    `Your account at ${p.storeName} has been approved. You can now log in.`,
  ]);
}

export function orderStatusChanged(p: {
  storeName: string;
  customerName: string;
  orderNumber: number;
  statusName: string;
  trackingNumber: string | null;
}): Rendered {
  const lines = [
    p.customerName ? `Hello ${p.customerName},` : "Hello,",
    `The status of your order #${p.orderNumber} at ${p.storeName} is now: ${p.statusName}.`,
  ];
  if (p.trackingNumber) lines.push(`Tracking number: ${p.trackingNumber}`);
  return render("order_status", `Order #${p.orderNumber}: ${p.statusName}`, lines);
}

export interface KeyNotice {
  storeName: string;
  keyName: string;
  hint: string;
  permissions: string;
  by: string;
  at: string;
}

export function keyCreated(p: KeyNotice): Rendered {
  return render("key_created", `API key "${p.keyName}" created for ${p.storeName}`, [
    `An API key was created for ${p.storeName}.`,
    `Name: ${p.keyName}`,
    `Key: ${p.hint}`,
    `Permissions: ${p.permissions}`,
    `Created by ${p.by} at ${p.at}.`,
    "If you did not expect this, delete the key in the API keys screen.",
  ]);
}

export function keyDeleted(p: KeyNotice): Rendered {
  return render("key_deleted", `API key "${p.keyName}" deleted for ${p.storeName}`, [
    `An API key was deleted for ${p.storeName}.`,
    `Name: ${p.keyName}`,
    `Key: ${p.hint}`,
    `Permissions: ${p.permissions}`,
    `Deleted by ${p.by} at ${p.at}.`,
  ]);
}
