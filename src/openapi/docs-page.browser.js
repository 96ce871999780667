// @ts-check
/**
 * The API reference page's script: renders the OpenAPI document embedded in the page
 * (`<script type="application/json" id="openapi">`). It runs in the browser as written;
 * src/openapi/docs-page.ts imports it as text (embedded in the binary), and
 * `npm run typecheck` checks it against the DOM types (src/openapi/tsconfig.browser.json).
 */

/**
 * @typedef {{
 *   $ref?: string, type?: string | string[], const?: unknown, enum?: unknown[],
 *   anyOf?: Schema[], oneOf?: Schema[], allOf?: Schema[], items?: Schema,
 *   properties?: Record<string, Schema>, required?: string[], description?: string,
 *   examples?: unknown[], default?: unknown, format?: string, minimum?: number,
 *   [constraint: string]: unknown,
 * }} Schema
 * @typedef {{ name: string, in: string, required?: boolean, description?: string, schema?: Schema, $ref?: string }} Parameter
 * @typedef {{ required?: boolean, description?: string, schema?: Schema }} Header
 * @typedef {{ schema?: Schema, examples?: Record<string, { value: unknown }> }} Media
 * @typedef {{ description?: string, headers?: Record<string, Header>, content?: Record<string, Media> }} Answer
 * @typedef {Array<Record<string, string[]>>} Security
 * @typedef {{
 *   summary?: string, description?: string, tags?: string[], parameters?: Parameter[],
 *   requestBody?: { content: Record<string, { schema: Schema }> },
 *   responses?: Record<string, Answer>, security?: Security,
 * }} Operation
 * @typedef {{
 *   openapi: string, info: { title: string, version: string, description?: string },
 *   tags?: Array<{ name: string, description?: string }>,
 *   paths: Record<string, Record<string, Operation | undefined>>, security?: Security,
 * }} OpenApiDocument
 */

(() => {
  /** @type {OpenApiDocument} */
  var doc = JSON.parse(
    /** @type {HTMLElement} */ (document.getElementById("openapi")).textContent || "{}",
  );
  var METHODS = ["get", "post", "patch", "put", "delete", "options"];
  /**
   * @template {keyof HTMLElementTagNameMap} K
   * @param {K} tag
   * @param {Record<string, string>} [attrs] `class`, `text` (the text content) or any attribute
   * @param {Array<Node | string | null>} [children]
   * @returns {HTMLElementTagNameMap[K]}
   */
  function el(tag, attrs, children) {
    var node = document.createElement(tag);
    var given = attrs || {};
    for (var k in given) {
      if (k === "class") node.className = given[k];
      else if (k === "text") node.textContent = given[k];
      else node.setAttribute(k, given[k]);
    }
    (children || []).forEach((c) => {
      if (c != null) node.appendChild(typeof c === "string" ? document.createTextNode(c) : c);
    });
    return node;
  }
  /* Markdown subset: paragraphs, "- " lists, **bold**, backtick code. Built with DOM nodes only. */
  /** @param {string} text */
  function inline(text) {
    var frag = document.createDocumentFragment();
    var last = 0,
      m;
    var tick = String.fromCharCode(96);
    var re = new RegExp(`(\\*\\*[^*]+\\*\\*|${tick}[^${tick}]+${tick})`, "g");
    for (m = re.exec(text); m; m = re.exec(text)) {
      if (m.index > last) frag.appendChild(document.createTextNode(text.slice(last, m.index)));
      var t = m[0];
      frag.appendChild(
        t.charAt(0) === "*"
          ? el("strong", { text: t.slice(2, -2) })
          : el("code", { text: t.slice(1, -1) }),
      );
      last = m.index + t.length;
    }
    if (last < text.length) frag.appendChild(document.createTextNode(text.slice(last)));
    return frag;
  }
  /** @param {string | undefined} text */
  function markdown(text) {
    var box = el("div", { class: "md" });
    (text || "").split(/\n\s*\n/).forEach((block) => {
      var lines = block.split("\n");
      if (lines.every((l) => /^- /.test(l))) {
        var ul = el("ul");
        lines.forEach((l) => {
          var li = el("li");
          li.appendChild(inline(l.slice(2)));
          ul.appendChild(li);
        });
        box.appendChild(ul);
      } else {
        var p = el("p");
        p.appendChild(inline(lines.join(" ")));
        box.appendChild(p);
      }
    });
    return box;
  }
  /**
   * @param {Schema | undefined} schema
   * @returns {Schema}
   */
  function resolve(schema) {
    var seen = 0;
    while (schema?.$ref && seen++ < 20) {
      /** @type {any} */
      var node = doc;
      schema.$ref
        .replace(/^#\//, "")
        .split("/")
        .forEach((p) => {
          node = node?.[p];
        });
      schema = node;
    }
    return schema || {};
  }
  /** @param {Schema | undefined} schema */
  function refName(schema) {
    return schema?.$ref ? schema.$ref.split("/").pop() : null;
  }
  /**
   * @param {Schema | undefined} schema
   * @returns {string}
   */
  function typeOf(schema) {
    var s = resolve(schema);
    if (s.const !== undefined) return JSON.stringify(s.const);
    if (s.enum) return s.enum.map((v) => JSON.stringify(v)).join(" | ");
    if (s.anyOf || s.oneOf) return (s.anyOf || s.oneOf || []).map((o) => typeOf(o)).join(" | ");
    if (s.allOf)
      return (
        s.allOf
          .map((o) => typeOf(o))
          .filter((t) => t !== "any")
          .join(" & ") || "object"
      );
    var t = Array.isArray(s.type) ? s.type.join(" | ") : s.type;
    if (t === "array") return `${typeOf(s.items || {})}[]`;
    return refName(schema) || t || (s.properties ? "object" : "any");
  }
  /**
   * @param {Schema | undefined} schema
   * @returns {string}
   */
  function constraints(schema) {
    var s = resolve(schema);
    /** @type {string[]} */
    var out = [];
    [
      "format",
      "minimum",
      "maximum",
      "multipleOf",
      "minLength",
      "maxLength",
      "minItems",
      "maxItems",
      "pattern",
      "default",
    ].forEach((k) => {
      var value = s[k];
      if (value !== undefined)
        out.push(`${k}: ${typeof value === "string" ? value : JSON.stringify(value)}`);
    });
    (s.anyOf || []).forEach((o) => {
      var c = constraints(o);
      if (c) out.push(c);
    });
    return out.join(", ");
  }
  /**
   * The object whose properties a schema shows (merged for allOf), or null.
   * @param {Schema | undefined} schema
   * @returns {Schema | null}
   */
  function children(schema) {
    var s = resolve(schema);
    if (s.allOf) {
      /** @type {{ properties: Record<string, Schema>, required: string[] }} */
      var merged = { properties: {}, required: [] };
      s.allOf.forEach((p) => {
        var r = resolve(p);
        if (r.type === "object" || (r.properties && r.required)) {
          Object.assign(merged.properties, r.properties);
          merged.required = merged.required.concat(r.required || []);
        }
      });
      return merged;
    }
    if (s.type === "array") return children(s.items || {});
    if (s.anyOf) {
      for (var i = 0; i < s.anyOf.length; i++) {
        var c = children(s.anyOf[i]);
        if (c) return c;
      }
    }
    return s.properties ? s : null;
  }
  /**
   * @param {Schema | undefined} schema
   * @param {number} depth
   * @returns {HTMLUListElement | null}
   */
  function tree(schema, depth) {
    var s = children(schema);
    if (!s || depth > 8) return null;
    var ul = el("ul", { class: "tree" });
    var required = s.required || [];
    var properties = s.properties || {};
    Object.keys(properties).forEach((name) => {
      var prop = properties[name],
        r = resolve(prop);
      var li = el("li", {}, [
        el("code", { text: name }),
        required.indexOf(name) >= 0 ? el("span", { class: "req", text: "required" }) : null,
        " ",
        el("span", { class: "type mono", text: typeOf(prop) }),
        constraints(prop) ? el("span", { class: "cons", text: `  ${constraints(prop)}` }) : null,
      ]);
      if (r.description) li.appendChild(el("div", { class: "cons", text: r.description }));
      var sub = tree(prop, depth + 1);
      if (sub) li.appendChild(sub);
      ul.appendChild(li);
    });
    return ul;
  }
  /**
   * An example value for a request body.
   * @param {Schema | undefined} schema
   * @param {number} depth
   * @returns {unknown}
   */
  function example(schema, depth) {
    var s = resolve(schema);
    if (depth > 8) return null;
    if (s.examples) return s.examples[0];
    if (s.default !== undefined) return s.default;
    if (s.const !== undefined) return s.const;
    if (s.enum) return s.enum[0];
    if (s.anyOf) return example(s.anyOf[0], depth + 1);
    if (s.allOf) return example(s.allOf[0], depth + 1);
    var t = Array.isArray(s.type) ? s.type[0] : s.type;
    if (t === "object" || s.properties) {
      var properties = s.properties || {};
      /** @type {Record<string, unknown>} */
      var o = {};
      Object.keys(properties).forEach((k) => {
        o[k] = example(properties[k], depth + 1);
      });
      return o;
    }
    if (t === "array") return [example(s.items || {}, depth + 1)];
    if (t === "integer") return s.minimum || 1;
    if (t === "number") return /2 decimals/.test(s.description || "") ? 9.99 : 1;
    if (t === "boolean") return true;
    if (t === "null") return null;
    if (s.format === "email") return "name@example.com";
    return "string";
  }
  /**
   * @param {Parameter} p
   * @returns {Parameter}
   */
  function param(p) {
    return p.$ref ? /** @type {Parameter} */ (resolve(/** @type {Schema} */ (p))) : p;
  }
  /** @param {Parameter[]} params */
  function paramTable(params) {
    var table = el("table", {}, [
      el("tr", {}, [
        el("th", { text: "Name" }),
        el("th", { text: "In" }),
        el("th", { text: "Type" }),
        el("th", { text: "Description" }),
      ]),
    ]);
    params.forEach((p) => {
      table.appendChild(
        el("tr", {}, [
          el("td", {}, [
            el("code", { text: p.name }),
            p.required ? el("span", { class: "req", text: "required" }) : null,
          ]),
          el("td", { text: p.in }),
          el("td", {}, [
            el("span", { class: "type mono", text: typeOf(p.schema) }),
            el("div", { class: "cons", text: constraints(p.schema) }),
          ]),
          el("td", {}, [markdown(p.description || resolve(p.schema).description || "")]),
        ]),
      );
    });
    return table;
  }
  /** @param {Record<string, Header>} headers */
  function headerTable(headers) {
    var table = el("table", {}, [
      el("tr", {}, [
        el("th", { text: "Header" }),
        el("th", { text: "Type" }),
        el("th", { text: "Description" }),
      ]),
    ]);
    Object.keys(headers).forEach((name) => {
      var h = headers[name];
      table.appendChild(
        el("tr", {}, [
          el("td", {}, [
            el("code", { text: name }),
            h.required ? el("span", { class: "req", text: "always" }) : null,
          ]),
          el("td", {}, [el("span", { class: "type mono", text: typeOf(h.schema) })]),
          el("td", {}, [markdown(h.description || "")]),
        ]),
      );
    });
    return table;
  }
  /**
   * @param {string} status
   * @param {Answer} r
   */
  function response(status, r) {
    var media = r.content && Object.keys(r.content)[0];
    var body = media && r.content ? r.content[media] : null;
    var box = el("details", { class: "resp" }, [
      el("summary", {}, [
        el("span", { class: `st s${status.charAt(0)}`, text: status }),
        " ",
        media ? el("span", { class: "cons", text: media }) : null,
      ]),
      markdown(r.description),
    ]);
    if (r.headers) box.appendChild(headerTable(r.headers));
    if (body?.schema) {
      var t = tree(body.schema, 0);
      if (t) box.appendChild(t);
    }
    var examples = body?.examples || {};
    Object.keys(examples).forEach((k) => {
      box.appendChild(el("pre", { text: JSON.stringify(examples[k].value, null, 2) }));
    });
    return box;
  }
  /** @type {HTMLInputElement} */
  var keyInput;
  /** @type {HTMLInputElement} */
  var hostInput;
  /** Whether the API answers on any host (the management API): then Try it needs no host picked. */
  var anyHost = document.body.getAttribute("data-store-host") === "any";
  /**
   * @param {string} path
   * @param {string} method
   * @param {Operation} op
   * @param {string} id
   */
  function tryIt(path, method, op, id) {
    var params = (op.parameters || [])
      .map(param)
      .filter((p) => p.in !== "header" || p.name === "Idempotency-Key");
    /** @type {Record<string, HTMLInputElement>} */
    var inputs = {};
    var box = el("div", { class: "try" });
    params.forEach((p) => {
      var input = el("input", { placeholder: p.required ? "required" : "optional" });
      inputs[`${p.in}:${p.name}`] = input;
      box.appendChild(el("label", {}, [`${p.name} (${p.in})`, input]));
    });
    /** @type {HTMLTextAreaElement | null} */
    var bodyInput = null;
    if (op.requestBody) {
      bodyInput = el("textarea", {});
      bodyInput.value = JSON.stringify(
        example(op.requestBody.content["application/json"].schema, 0),
        null,
        2,
      );
      box.appendChild(el("label", {}, ["Body (JSON)", bodyInput]));
    }
    var out = el("pre", { class: "hidden" });
    var send = el("button", { type: "button", text: `Send ${method.toUpperCase()}` });
    send.addEventListener("click", () => {
      out.className = "";
      var host = hostInput.value.trim();
      if (!/^[A-Za-z0-9.-]+(:[0-9]{1,5})?$/.test(host)) {
        out.textContent = "Enter your store's host above first (like shop1.example.com).";
        return;
      }
      if (host.toLowerCase() !== location.host.toLowerCase()) {
        out.textContent = "";
        var there = `${location.protocol}//${host}${location.pathname}#${id}`;
        out.appendChild(
          document.createTextNode(
            `This page can only send requests to its own host. Open it on ${host} and try there: `,
          ),
        );
        out.appendChild(el("a", { href: there, text: there }));
        return;
      }
      var url = path;
      /** @type {string[]} */
      var query = [];
      /** @type {Record<string, string>} */
      var headers = {};
      params.forEach((p) => {
        var v = inputs[`${p.in}:${p.name}`].value;
        if (p.in === "path") url = url.replace(`{${p.name}}`, encodeURIComponent(v));
        else if (p.in === "query" && v !== "")
          query.push(`${encodeURIComponent(p.name)}=${encodeURIComponent(v)}`);
        else if (p.in === "header" && v !== "") headers[p.name] = v;
      });
      if (query.length) url += `?${query.join("&")}`;
      if ((op.security || doc.security || []).some((s) => Object.keys(s).length) && keyInput.value)
        headers.Authorization = `Bearer ${keyInput.value}`;
      /** @type {RequestInit} */
      var init = { method: method.toUpperCase(), headers: headers };
      if (bodyInput) {
        headers["Content-Type"] = "application/json";
        init.body = bodyInput.value;
      }
      out.textContent = `${method.toUpperCase()} ${url} …`;
      fetch(url, init)
        .then((res) =>
          res.text().then((text) => {
            var lines = [`${res.status} ${res.statusText}`];
            res.headers.forEach((v, k) => {
              lines.push(`${k}: ${v}`);
            });
            var shown = text;
            try {
              shown = JSON.stringify(JSON.parse(text), null, 2);
            } catch (_e) {}
            out.textContent = `${lines.join("\n")}\n\n${shown}`;
          }),
        )
        .catch((e) => {
          out.textContent = `Request failed: ${e}`;
        });
    });
    box.appendChild(send);
    box.appendChild(out);
    return el("details", {}, [
      el("summary", {
        text: anyHost
          ? "Try it (sent to this page's host)"
          : "Try it (sent to the store host above)",
      }),
      box,
    ]);
  }
  /**
   * @param {string} path
   * @param {string} method
   * @param {Operation} op
   * @param {string} id
   */
  function operation(path, method, op, id) {
    var card = el("section", { class: "card", id: id }, [
      el("h3", {}, [
        el("span", { class: `m ${method}`, text: method.toUpperCase() }),
        el("span", { class: "path", text: path }),
      ]),
      el("p", { class: "sum", text: op.summary || "" }),
    ]);
    if (op.description) card.appendChild(markdown(op.description));
    var params = (op.parameters || []).map(param);
    if (params.length) {
      card.appendChild(el("h4", { text: "Parameters" }));
      card.appendChild(paramTable(params));
    }
    if (op.requestBody) {
      card.appendChild(el("h4", { text: "Request body (application/json)" }));
      var t = tree(op.requestBody.content["application/json"].schema, 0);
      if (t) card.appendChild(t);
    }
    card.appendChild(el("h4", { text: "Responses" }));
    var responses = op.responses || {};
    Object.keys(responses).forEach((status) => {
      card.appendChild(response(status, responses[status]));
    });
    if (method !== "options") card.appendChild(tryIt(path, method, op, id));
    return card;
  }
  var side = /** @type {HTMLElement} */ (document.getElementById("side")),
    main = /** @type {HTMLElement} */ (document.getElementById("main"));
  side.appendChild(el("h1", { text: doc.info.title }));
  side.appendChild(
    el("div", { class: "ver", text: `OpenAPI ${doc.openapi} · version ${doc.info.version}` }),
  );
  var filter = el("input", { type: "search", placeholder: "Filter endpoints" });
  side.appendChild(filter);
  side.appendChild(el("a", { href: "openapi.json", text: "openapi.json" }));
  var onStoreHost = document.body.getAttribute("data-store-host") === "yes";
  keyInput = el("input", {
    type: "password",
    placeholder: `${anyHost ? "svc_hk_…" : "svc_sk_…"} (kept in this page only)`,
    autocomplete: "off",
  });
  hostInput = el("input", {
    type: "text",
    placeholder: "your store's host, like shop1.example.com",
    autocomplete: "off",
    id: "store-host",
  });
  if (onStoreHost || anyHost) hostInput.value = location.host;
  main.appendChild(
    el(
      "div",
      { id: "keybar" },
      anyHost
        ? [el("span", { text: "Host key:" }), keyInput]
        : [
            el("span", { text: "Store host:" }),
            hostInput,
            el("span", { text: "API key:" }),
            keyInput,
          ],
    ),
  );
  var note = /** @type {HTMLElement} */ (document.getElementById("hostnote"));
  if (!anyHost) {
    note.appendChild(
      document.createTextNode(
        onStoreHost
          ? ` This page is on the store host ${location.host}.`
          : ` This page's host (${location.host}) is not a store's: type your store's host above.`,
      ),
    );
  }
  main.appendChild(note);
  var intro = el("section", { class: "card intro", id: "overview" }, [
    el("h3", { text: "Overview" }),
  ]);
  intro.appendChild(markdown(doc.info.description));
  main.appendChild(intro);
  /** @type {HTMLAnchorElement[]} */
  var links = [];
  var n = 0;
  (doc.tags || []).forEach((tag) => {
    /** @type {Array<[string, string, Operation]>} */
    var ops = [];
    Object.keys(doc.paths).forEach((path) => {
      METHODS.forEach((method) => {
        var op = doc.paths[path][method];
        if (op && (op.tags || [])[0] === tag.name && method !== "options")
          ops.push([path, method, op]);
      });
    });
    if (!ops.length) return;
    side.appendChild(el("h2", { text: tag.name }));
    main.appendChild(el("h2", { class: "tag", text: tag.name }));
    if (tag.description) main.appendChild(el("p", { class: "sum", text: tag.description }));
    ops.forEach((o) => {
      var id = `op-${n++}`;
      var link = el("a", { href: `#${id}` }, [
        el("span", { class: `m ${o[1]}`, text: o[1].toUpperCase() }),
        el("span", { class: "mono", text: o[0].replace(/^\/(api|manage)\/v1/, "") }),
      ]);
      link.dataset.search = `${o[1]} ${o[0]} ${o[2].summary || ""}`.toLowerCase();
      links.push(link);
      side.appendChild(link);
      main.appendChild(operation(o[0], o[1], o[2], id));
    });
  });
  filter.addEventListener("input", () => {
    var q = filter.value.toLowerCase();
    links.forEach((a) => {
      a.classList.toggle("hidden", q !== "" && (a.dataset.search || "").indexOf(q) < 0);
    });
  });
})();
