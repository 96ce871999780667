import type { Child } from "hono/jsx";
import { withoutUnstorable } from "../format/text";
import { formatIsraelForPeople } from "../format/time";
import { type Access, AREAS, type Area } from "../keys/permissions";
import {
  type ApiKey,
  countActiveKeys,
  isActive,
  KeyLimitError,
  MAX_ACTIVE_KEYS,
} from "../keys/repository";
import { ASSET_PATHS } from "./assets";

export const ADMIN_PATH = "/api/admin/";
/** The page that shows a new key, once. */
export const CREATED_PATH = "/api/admin/keys/new";

const AREA_LABELS: Record<Area, string> = {
  products: "Products",
  orders: "Orders",
  customers: "Customers",
  leads: "Leads",
};
const ACCESS_LABELS: Record<Access, string> = {
  none: "No access",
  read: "Read",
  write: "Read and update",
};
const EXPIRY_LABELS = {
  never: "No limit",
  "30d": "30 days",
  "90d": "90 days",
  "1y": "1 year",
} as const;

/** The sentence shown in the form at the limit and when a sixth key is refused (KeyLimitError's message). */
export const LIMIT_SENTENCE = new KeyLimitError().message;
export const NOT_SHOWN_AGAIN =
  "Copy the key now and keep it somewhere safe: it will not be shown again.";
export const EMAIL_SENT =
  "If that is the store owner's email address, a sign-in link is on its way to it. The link works once, within 15 minutes.";
export const SESSION_ENDED =
  "You were signed out: here or in another tab, or 12 hours after you signed in. Sign in again to go on; a form you sent after that was not saved.";
export const BAD_LINK =
  "This sign-in link does not work: it was already used, it expired, or it belongs to another store. Ask for a new one below.";

/** Labels of the form's fields, for messages about them. */
export const FIELD_LABELS: Record<string, string> = {
  name: "Name",
  expires: "Expires",
  permissions: "Permissions",
  ...AREA_LABELS,
};

interface LayoutProps {
  title: string;
  storeName?: string;
  /** Present when signed in: the sign-out form needs the session's form token. */
  formToken?: string;
  /** A page to go on to at once (a same-origin navigation). */
  refreshTo?: string;
  children?: Child;
}

function Layout({ title, storeName, formToken, refreshTo, children }: LayoutProps) {
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        {refreshTo && <meta http-equiv="refresh" content={`0; url=${refreshTo}`} />}
        <title>{storeName ? `${title} · ${storeName}` : title}</title>
        <link rel="stylesheet" href={ASSET_PATHS.css} />
        <script src={ASSET_PATHS.js} defer />
      </head>
      <body>
        <header class="bar">
          <span class="brand">
            {storeName ? <bdi>{storeName}</bdi> : "storeapi"}
            <span class="muted"> · API and keys</span>
          </span>
          {formToken && (
            <form method="post" action="/api/admin/sign-out">
              <input type="hidden" name="formToken" value={formToken} />
              <button type="submit" class="link">
                Sign out
              </button>
            </form>
          )}
        </header>
        <main>{children}</main>
      </body>
    </html>
  );
}

/** The page's error message, which a refused form's field names as its description. */
const ERROR_ID = "page-error";

const Message = ({ kind, text }: { kind: "error" | "notice"; text?: Child }) =>
  text ? (
    <p
      class={`message ${kind}`}
      role={kind === "error" ? "alert" : "status"}
      id={kind === "error" ? ERROR_ID : undefined}
    >
      {text}
    </p>
  ) : null;

export function SignInPage(p: {
  storeName: string;
  error?: string;
  notice?: string;
  email?: string;
}) {
  return (
    <Layout title="Sign in" storeName={p.storeName}>
      <h1 dir="auto">{p.storeName}</h1>
      <section class="card narrow">
        <h2>Sign in</h2>
        <Message kind="error" text={p.error} />
        <Message kind="notice" text={p.notice} />
        <p>
          Enter the store owner's email address and we will email a one-time sign-in link to it.
        </p>
        <form method="post" action="/api/admin/sign-in">
          <label for="email">Email</label>
          <input
            id="email"
            name="email"
            type="email"
            autocomplete="email"
            maxlength={254}
            required
            value={p.email ?? ""}
          />
          <button type="submit">Email me a sign-in link</button>
        </form>
      </section>
    </Layout>
  );
}

const when = (epochMs: number | null, none: string) =>
  epochMs === null ? none : formatIsraelForPeople(epochMs);

function statusOf(key: ApiKey, now: number): string {
  if (key.deletedAt !== null) return "Deleted";
  return isActive(key, now) ? "Active" : "Expired";
}

/** The id of a key's name cell: its Delete button is described by it ("Delete", for "ERP"). */
const nameId = (key: ApiKey) => `key-${key.id}-name`;

function KeyRow({ apiKey, action }: { apiKey: ApiKey; action: Child }) {
  return (
    <tr>
      <th scope="row" dir="auto" data-label="Name" id={nameId(apiKey)}>
        {apiKey.name}
      </th>
      <td data-label="Key">
        <code>{apiKey.hint}</code>
      </td>
      {AREAS.map((area) => (
        <td data-label={AREA_LABELS[area]}>{ACCESS_LABELS[apiKey.permissions[area]]}</td>
      ))}
      <td data-label="Created">{when(apiKey.createdAt, "")}</td>
      <td data-label="Expires">{when(apiKey.expiresAt, "No limit")}</td>
      <td data-label="Last used">{when(apiKey.lastUsedAt, "Never")}</td>
      <td>{action}</td>
    </tr>
  );
}

function KeyTable({
  caption,
  keys,
  lastColumn,
  action,
}: {
  caption: string;
  keys: ApiKey[];
  lastColumn: string;
  action: (key: ApiKey) => Child;
}) {
  return (
    <table class="keys">
      <caption>{caption}</caption>
      <thead>
        <tr>
          <th scope="col">Name</th>
          <th scope="col">Key</th>
          {AREAS.map((area) => (
            <th scope="col">{AREA_LABELS[area]}</th>
          ))}
          <th scope="col">Created</th>
          <th scope="col">Expires</th>
          <th scope="col">Last used</th>
          <th scope="col">{lastColumn}</th>
        </tr>
      </thead>
      <tbody>
        {keys.map((key) => (
          <KeyRow apiKey={key} action={action(key)} />
        ))}
      </tbody>
    </table>
  );
}

/** What the create form showed when it was refused, so nothing typed is lost. */
export interface CreateFormValues {
  name: string;
  permissions: Partial<Record<Area, string>>;
  expires: string;
}

function AccessChoice({ area, chosen }: { area: Area; chosen: string }) {
  return (
    <fieldset class="choice">
      <legend>{AREA_LABELS[area]}</legend>
      {(Object.keys(ACCESS_LABELS) as Access[]).map((access) => (
        <label>
          <input type="radio" name={area} value={access} checked={chosen === access} />{" "}
          {ACCESS_LABELS[access]}
        </label>
      ))}
    </fieldset>
  );
}

function CreateForm({
  formToken,
  atLimit,
  values,
  refused,
}: {
  formToken: string;
  atLimit: boolean;
  values?: CreateFormValues;
  /** The form came back refused: its first field takes the focus, described by the error. */
  refused: boolean;
}) {
  const expires = values?.expires ?? "never";
  return (
    <section class="card" aria-labelledby="create-heading">
      <h2 id="create-heading">Create key</h2>
      {atLimit && <p class="message notice">{LIMIT_SENTENCE}</p>}
      <form method="post" action="/api/admin/keys">
        <input type="hidden" name="formToken" value={formToken} />
        <label for="key-name">Name</label>
        <input
          id="key-name"
          name="name"
          type="text"
          required
          dir="auto"
          // Without NUL and lone surrogates (why such a name was refused): a page cannot
          // carry them, and a browser would send them back as U+FFFD.
          value={withoutUnstorable(values?.name ?? "")}
          autofocus={refused}
          aria-describedby={refused ? ERROR_ID : undefined}
        />
        <div class="choices">
          {AREAS.map((area) => (
            <AccessChoice area={area} chosen={values?.permissions[area] ?? "none"} />
          ))}
          <fieldset class="choice">
            <legend>Expires</legend>
            {(Object.keys(EXPIRY_LABELS) as Array<keyof typeof EXPIRY_LABELS>).map((choice) => (
              <label>
                <input type="radio" name="expires" value={choice} checked={expires === choice} />{" "}
                {EXPIRY_LABELS[choice]}
              </label>
            ))}
          </fieldset>
        </div>
        <button type="submit">Create key</button>
      </form>
    </section>
  );
}

export interface ScreenProps {
  storeName: string;
  keys: ApiKey[];
  now: number;
  formToken: string;
  error?: string;
  /** Names from data in it are marked `dir="auto"`. */
  notice?: Child;
  values?: CreateFormValues;
}

/** The "API and keys" screen: active keys, the count out of five, the create form, past keys. */
export function KeysScreen(p: ScreenProps) {
  const active = p.keys.filter((k) => isActive(k, p.now));
  const past = p.keys.filter((k) => !isActive(k, p.now)).reverse();
  const inUse = countActiveKeys(p.keys, p.now);
  return (
    <Layout title="API and keys" storeName={p.storeName} formToken={p.formToken}>
      <h1 dir="auto">{p.storeName}</h1>
      <p class="lead">
        API keys let your own systems (ERP, warehouse, reports) use this store's API.
      </p>
      <Message kind="error" text={p.error} />
      <Message kind="notice" text={p.notice} />
      <section class="card" aria-labelledby="keys-heading">
        <h2 id="keys-heading">API keys</h2>
        <p id="key-count">
          {inUse} of {MAX_ACTIVE_KEYS} active keys in use.
        </p>
        {active.length > 0 ? (
          <KeyTable
            caption="Active keys"
            keys={active}
            lastColumn="Delete"
            action={(key) => (
              <form method="get" action={`/api/admin/keys/${key.id}/delete`}>
                <button type="submit" class="danger" aria-describedby={nameId(key)}>
                  Delete
                </button>
              </form>
            )}
          />
        ) : (
          <p class="muted">No active keys yet.</p>
        )}
      </section>
      <CreateForm
        formToken={p.formToken}
        atLimit={inUse >= MAX_ACTIVE_KEYS}
        values={p.values}
        refused={p.error !== undefined && p.values !== undefined}
      />
      {past.length > 0 && (
        <section class="card" aria-labelledby="past-heading">
          <h2 id="past-heading">Expired and deleted keys</h2>
          <KeyTable
            caption="Keys that no longer work"
            keys={past}
            lastColumn="Status"
            action={(key) => statusOf(key, p.now)}
          />
        </section>
      )}
    </Layout>
  );
}

export function KeyCreatedPage(p: {
  storeName: string;
  formToken: string;
  keyName: string;
  secret: string;
  /** Another key created in this session (a second tab) waits to be shown. */
  nextKeyWaiting: boolean;
}) {
  return (
    <Layout title="Key created" storeName={p.storeName} formToken={p.formToken}>
      <h1>Key created</h1>
      <section class="card">
        <p>
          The key <strong dir="auto">{p.keyName}</strong> is ready.
        </p>
        <p class="message notice" role="status">
          {NOT_SHOWN_AGAIN}
        </p>
        <div class="secret">
          <code id="new-key">{p.secret}</code>
          <button type="button" id="copy-key" data-copy="new-key" hidden>
            Copy key
          </button>
        </div>
        <p id="copy-status" class="muted" role="status" aria-live="polite"></p>
        {p.nextKeyWaiting && (
          <p class="message notice">
            Another key you created is waiting to be shown:{" "}
            <a href={CREATED_PATH}>Show the next new key</a>
          </p>
        )}
        <p>
          <a href={ADMIN_PATH}>Back to API and keys</a>
        </p>
      </section>
    </Layout>
  );
}

export function ConfirmDeletePage(p: { storeName: string; formToken: string; apiKey: ApiKey }) {
  return (
    <Layout title="Delete key" storeName={p.storeName} formToken={p.formToken}>
      <h1>Delete key</h1>
      <section class="card narrow">
        <p>
          Delete the key <strong dir="auto">{p.apiKey.name}</strong> (<code>{p.apiKey.hint}</code>)?
          Anything that uses it stops working at once. This cannot be undone.
        </p>
        <form method="post" action={`/api/admin/keys/${p.apiKey.id}/delete`} class="actions">
          <input type="hidden" name="formToken" value={p.formToken} />
          <button type="submit" class="danger">
            Delete key
          </button>
          <a href={ADMIN_PATH}>Cancel</a>
        </form>
      </section>
    </Layout>
  );
}

/**
 * The screen reached from another site: the browser withholds the `SameSite=Strict`
 * session cookie on such a navigation (and on the redirect after a sign-in link), so
 * the page goes on to itself from here, where the cookie is sent.
 */
export function ContinuePage(p: { storeName: string }) {
  return (
    <Layout title="API and keys" storeName={p.storeName} refreshTo={ADMIN_PATH}>
      <h1 dir="auto">{p.storeName}</h1>
      <p>
        <a href={ADMIN_PATH}>Continue to API and keys</a>
      </p>
    </Layout>
  );
}

export function ErrorPage(p: { title: string; message: string; storeName?: string }) {
  return (
    <Layout title={p.title} storeName={p.storeName}>
      <h1>{p.title}</h1>
      <section class="card narrow">
        <p role="alert">{p.message}</p>
        <p>
          <a href={ADMIN_PATH}>Go to API and keys</a>
        </p>
      </section>
    </Layout>
  );
}
