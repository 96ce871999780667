import type { Handler, MiddlewareHandler } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { ApiError } from "../errors";
import { AREAS } from "../keys/permissions";
import {
  createKey,
  deleteKey,
  KeyInputError,
  KeyLimitError,
  KeyNotFoundError,
  listKeys,
  prepareKey,
} from "../keys/repository";
import type { AdminContext, AdminEnv, AdminState } from "./context";
import type { Flash } from "./flash";
import { cookieOptions, page, redirect } from "./http";
import {
  ADMIN_PATH,
  ConfirmDeletePage,
  CREATED_PATH,
  type CreateFormValues,
  FIELD_LABELS,
  KeyCreatedPage,
  KeysScreen,
  type ScreenProps,
} from "./pages";

type AdminHandler = Handler<AdminEnv>;

const BY_SCREEN = "the store admin (API and keys screen)";
const KEY_ID = /^[1-9]\d{0,14}$/;

type ScreenExtras = Pick<ScreenProps, "error" | "notice" | "values">;

/** The keys screen: the store's keys, with a notice, or the create form's error and values. */
async function keysScreen(
  { deps }: AdminState,
  c: AdminContext,
  extra: ScreenExtras = {},
  status: ContentfulStatusCode = 200,
): Promise<Response> {
  const keys = await deps.usage.listKeys(c.get("db"), c.get("store"));
  const props = {
    storeName: c.get("store").name,
    keys,
    now: deps.now(),
    formToken: c.get("session").formToken,
    ...extra,
  };
  return page(c, <KeysScreen {...props} />, status);
}

/** The page's one-time flash: a GET uses it up, a HEAD only looks. */
const flashFor = ({ deps, flashes }: AdminState, c: AdminContext, kind: Flash["kind"]) =>
  flashes.take(c.get("session").id, deps.now(), kind, c.req.method === "HEAD");

export const showKeys =
  (state: AdminState): AdminHandler =>
  (c) => {
    const flash = flashFor(state, c, "deleted");
    const notice = flash?.kind === "deleted" && (
      <>
        The key <strong dir="auto">{flash.name}</strong> ({flash.hint}) was deleted; it no longer
        works.
      </>
    );
    return keysScreen(state, c, { notice: notice || undefined });
  };

/** The screen again, 429: this store's keys were created too often of late. */
function tooManyCreates(state: AdminState, c: AdminContext, values: CreateFormValues) {
  const { keyCreates } = state;
  const seconds = keyCreates.retryAfter(c.get("store").slug);
  const minutes = Math.ceil(seconds / 60);
  c.header("Retry-After", String(seconds));
  const error = `${keyCreates.limit} keys were created for this store in the last hour; try again in ${minutes} ${minutes === 1 ? "minute" : "minutes"}.`;
  return keysScreen(state, c, { error, values }, 429);
}

/** The create form: a new key, shown once on the next page; a bad field or a sixth key is the screen again. */
export const createKeyFromForm =
  (state: AdminState): AdminHandler =>
  async (c) => {
    const { deps } = state;
    const form = c.get("form");
    const values: CreateFormValues = {
      name: form.get("name") ?? "",
      permissions: Object.fromEntries(AREAS.map((area) => [area, form.get(area) ?? undefined])),
      expires: form.get("expires") ?? "never",
    };
    const now = deps.now();
    const store = c.get("store");
    try {
      const input = prepareKey(values, now, { requireAccess: true });
      if (!state.keyCreates.take(store.slug)) return tooManyCreates(state, c, values);
      const created = await deps
        .changeKeys(store.slug, () => createKey(c.get("db"), store, input, BY_SCREEN, now))
        .catch((error) => {
          state.keyCreates.giveBack(store.slug); // only keys made count against the limit
          throw error;
        });
      state.flashes.put(
        c.get("session").id,
        { kind: "created", secret: created.secret, name: input.name },
        now,
      );
      return redirect(c, CREATED_PATH);
    } catch (error) {
      if (error instanceof KeyInputError) {
        const message = `${FIELD_LABELS[error.field] ?? error.field} ${error.problem}.`;
        return keysScreen(state, c, { error: message, values }, 400);
      }
      if (error instanceof KeyLimitError)
        return keysScreen(state, c, { error: error.message, values }, 409);
      throw error;
    }
  };

/**
 * Set with a new key's page and cleared by the next page of the screen: a cookie changed
 * since a page was left keeps Chrome from bringing it back from its back/forward cache,
 * which keeps `Cache-Control: no-store` pages too, key and all (the page's script clears the
 * key as it is left; this also holds with scripts off).
 */
export const KEY_SHOWN_COOKIE = "storeapi_key_shown";

/** Clears `KEY_SHOWN_COOKIE` on any other page of the screen. */
export const forgetShownKey =
  (state: AdminState): MiddlewareHandler<AdminEnv> =>
  (c, next) => {
    if (c.req.path !== CREATED_PATH && getCookie(c, KEY_SHOWN_COOKIE) !== undefined)
      deleteCookie(c, KEY_SHOWN_COOKIE, cookieOptions(state, c));
    return next();
  };

/** The new key's secret, once: a reload goes back to the screen. */
export const showCreatedKey =
  (state: AdminState): AdminHandler =>
  (c) => {
    const { deps, flashes } = state;
    const { id, formToken } = c.get("session");
    const flash = flashFor(state, c, "created");
    if (flash?.kind !== "created") return redirect(c, ADMIN_PATH);
    setCookie(c, KEY_SHOWN_COOKIE, "1", cookieOptions(state, c));
    return page(
      c,
      <KeyCreatedPage
        storeName={c.get("store").name}
        formToken={formToken}
        keyName={flash.name}
        secret={flash.secret}
        nextKeyWaiting={flashes.waiting(id, deps.now(), "created") > 0}
      />,
    );
  };

const noSuchKey = () =>
  new ApiError("not_found", "There is no such key, or it was already deleted.");

async function activeKeyOf(c: AdminContext) {
  const id = c.req.param("id") ?? "";
  const key = KEY_ID.test(id)
    ? (await listKeys(c.get("db"))).find((k) => k.id === Number(id) && k.deletedAt === null)
    : undefined;
  if (!key) throw noSuchKey();
  return key;
}

export const confirmDelete: AdminHandler = async (c) => {
  const apiKey = await activeKeyOf(c);
  return page(
    c,
    <ConfirmDeletePage
      storeName={c.get("store").name}
      formToken={c.get("session").formToken}
      apiKey={apiKey}
    />,
  );
};

export const deleteKeyFromForm =
  ({ deps, flashes }: AdminState): AdminHandler =>
  async (c) => {
    const store = c.get("store");
    const { id: keyId } = await activeKeyOf(c);
    const deleted = await deps
      .changeKeys(store.slug, () => deleteKey(c.get("db"), store, keyId, BY_SCREEN, deps.now()))
      .catch((error) => {
        throw error instanceof KeyNotFoundError ? noSuchKey() : error;
      });
    flashes.put(
      c.get("session").id,
      { kind: "deleted", name: deleted.name, hint: deleted.hint },
      deps.now(),
    );
    return redirect(c, ADMIN_PATH);
  };
