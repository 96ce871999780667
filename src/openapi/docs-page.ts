/**
 * The API reference page: one self-contained HTML document (inline style and script,
 * the OpenAPI document embedded), so it needs nothing from any other host. Its Content
 * Security Policy lets it talk only to the host that served it ("Try it").
 *
 * The Host header picks the store, and a page cannot send another host's requests (no
 * CORS, `connect-src 'self'`), so Try it runs against the store host the user picks: the
 * page's own host when it is a store's (prefilled), else Try it opens this page on the host
 * typed in, where it can send.
 */

const CSP = [
  "default-src 'none'",
  "script-src 'unsafe-inline'",
  "style-src 'unsafe-inline'",
  "connect-src 'self'",
  "img-src data:",
  "base-uri 'none'",
  "form-action 'none'",
].join("; ");

const STYLE = `
*{box-sizing:border-box}
body{margin:0;font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1d2430;background:#f6f7f9}
code,pre,.mono{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:13px}
a{color:#2456c6;text-decoration:none}
a:hover{text-decoration:underline}
#side{position:fixed;top:0;left:0;bottom:0;width:290px;overflow:auto;background:#111827;color:#d6dae1;padding:16px 12px}
#side h1{font-size:17px;margin:0 0 4px;color:#fff}
#side .ver{font-size:12px;color:#9aa3b2;margin-bottom:12px}
#side input{width:100%;padding:6px 8px;border-radius:6px;border:1px solid #374151;background:#1f2937;color:#fff;margin-bottom:10px}
#side h2{font-size:12px;text-transform:uppercase;letter-spacing:.06em;color:#9aa3b2;margin:14px 0 4px}
#side a{display:flex;gap:6px;align-items:center;color:#d6dae1;padding:3px 6px;border-radius:5px;font-size:13px}
#side a:hover{background:#1f2937;text-decoration:none}
#main{margin-left:290px;padding:24px 36px 80px;max-width:1100px}
.m{display:inline-block;min-width:54px;text-align:center;font:600 11px/18px ui-monospace,monospace;border-radius:4px;color:#fff;padding:0 4px}
.m.get{background:#1f8a4c}.m.post{background:#2456c6}.m.patch{background:#b7791f}.m.options{background:#6b7280}
.card{background:#fff;border:1px solid #e2e5ea;border-radius:10px;padding:18px 22px;margin:0 0 22px}
.card h3{margin:0 0 6px;display:flex;gap:10px;align-items:center;font-size:17px}
.card h3 .path{font-family:ui-monospace,monospace;font-size:15px}
.sum{color:#4b5563;margin:0 0 8px}
.tag{font-size:22px;margin:34px 0 10px}
h4{margin:16px 0 6px;font-size:14px;text-transform:uppercase;letter-spacing:.04em;color:#4b5563}
table{border-collapse:collapse;width:100%;font-size:13.5px}
td,th{border-top:1px solid #edf0f3;padding:5px 8px;text-align:left;vertical-align:top}
th{color:#6b7280;font-weight:600}
.req{color:#c0392b;font-size:11px;font-weight:600;margin-left:4px}
.type{color:#6b21a8}
.cons{color:#6b7280;font-size:12.5px}
details{margin:6px 0}
summary{cursor:pointer}
.resp summary{font-weight:600}
.st{display:inline-block;min-width:40px;font-family:ui-monospace,monospace}
.st.s2{color:#1f8a4c}.st.s4{color:#b7791f}.st.s5{color:#c0392b}
ul.tree{list-style:none;margin:2px 0;padding-left:16px;border-left:1px dashed #d5d9df}
ul.tree>li{margin:3px 0}
pre{background:#0f172a;color:#e2e8f0;padding:10px 12px;border-radius:8px;overflow:auto;max-height:420px}
.try{background:#f8fafc;border:1px solid #e2e5ea;border-radius:8px;padding:10px 12px;margin-top:10px}
.try label{display:block;font-size:12.5px;color:#4b5563;margin-top:6px}
.try input,.try textarea{width:100%;padding:5px 7px;border:1px solid #cfd5dd;border-radius:5px;font:13px ui-monospace,monospace}
.try textarea{min-height:120px}
button{margin-top:8px;background:#2456c6;color:#fff;border:0;border-radius:6px;padding:6px 14px;font-weight:600;cursor:pointer}
#keybar{position:sticky;top:0;z-index:2;background:#f6f7f9;padding:8px 0 10px;display:flex;gap:8px;align-items:center;font-size:13px}
#keybar input{flex:1;max-width:320px;padding:5px 8px;border:1px solid #cfd5dd;border-radius:6px;font:13px ui-monospace,monospace}
#hostnote{font-size:13px;color:#4b5563;margin:0 0 14px}
.intro p{margin:8px 0}
.hidden{display:none}
`;

/** Runs in the browser: renders the embedded document. No template literals inside. */
const SCRIPT = String.raw`
(function () {
  var doc = JSON.parse(document.getElementById("openapi").textContent);
  var METHODS = ["get", "post", "patch", "put", "delete", "options"];
  function el(tag, attrs, children) {
    var node = document.createElement(tag);
    for (var k in attrs || {}) {
      if (k === "class") node.className = attrs[k];
      else if (k === "text") node.textContent = attrs[k];
      else node.setAttribute(k, attrs[k]);
    }
    (children || []).forEach(function (c) { if (c != null) node.appendChild(typeof c === "string" ? document.createTextNode(c) : c); });
    return node;
  }
  /* Markdown subset: paragraphs, "- " lists, **bold**, backtick code. Built with DOM nodes only. */
  function inline(text) {
    var frag = document.createDocumentFragment();
    var last = 0, m;
    var tick = String.fromCharCode(96);
    var re = new RegExp("(\\*\\*[^*]+\\*\\*|" + tick + "[^" + tick + "]+" + tick + ")", "g");
    while ((m = re.exec(text))) {
      if (m.index > last) frag.appendChild(document.createTextNode(text.slice(last, m.index)));
      var t = m[0];
      frag.appendChild(t.charAt(0) === "*" ? el("strong", { text: t.slice(2, -2) }) : el("code", { text: t.slice(1, -1) }));
      last = m.index + t.length;
    }
    if (last < text.length) frag.appendChild(document.createTextNode(text.slice(last)));
    return frag;
  }
  function markdown(text) {
    var box = el("div", { class: "md" });
    (text || "").split(/\n\s*\n/).forEach(function (block) {
      var lines = block.split("\n");
      if (lines.every(function (l) { return /^- /.test(l); })) {
        var ul = el("ul");
        lines.forEach(function (l) { var li = el("li"); li.appendChild(inline(l.slice(2))); ul.appendChild(li); });
        box.appendChild(ul);
      } else {
        var p = el("p"); p.appendChild(inline(lines.join(" "))); box.appendChild(p);
      }
    });
    return box;
  }
  function resolve(schema) {
    var seen = 0;
    while (schema && schema.$ref && seen++ < 20) {
      var parts = schema.$ref.replace(/^#\//, "").split("/"), node = doc;
      parts.forEach(function (p) { node = node && node[p]; });
      schema = node;
    }
    return schema || {};
  }
  function refName(schema) { return schema && schema.$ref ? schema.$ref.split("/").pop() : null; }
  function typeOf(schema) {
    var s = resolve(schema);
    if (s.const !== undefined) return JSON.stringify(s.const);
    if (s.enum) return s.enum.map(function (v) { return JSON.stringify(v); }).join(" | ");
    if (s.anyOf || s.oneOf) return (s.anyOf || s.oneOf).map(typeOf).join(" | ");
    if (s.allOf) return s.allOf.map(typeOf).filter(function (t) { return t !== "any"; }).join(" & ") || "object";
    var t = Array.isArray(s.type) ? s.type.join(" | ") : s.type;
    if (t === "array") return typeOf(s.items || {}) + "[]";
    if (refName(schema)) return refName(schema);
    return t || (s.properties ? "object" : "any");
  }
  function constraints(schema) {
    var s = resolve(schema), out = [];
    ["format", "minimum", "maximum", "multipleOf", "minLength", "maxLength", "minItems", "maxItems", "pattern", "default"].forEach(function (k) {
      if (s[k] !== undefined) out.push(k + ": " + (typeof s[k] === "string" ? s[k] : JSON.stringify(s[k])));
    });
    (s.anyOf || []).forEach(function (o) { var c = constraints(o); if (c) out.push(c); });
    return out.join(", ");
  }
  function children(schema) {
    var s = resolve(schema);
    if (s.allOf) { var merged = { properties: {}, required: [] }; s.allOf.forEach(function (p) { var r = resolve(p); if (r.type === "object" || r.properties && r.required) { Object.assign(merged.properties, r.properties); merged.required = merged.required.concat(r.required || []); } }); return merged; }
    if (s.type === "array") return children(s.items || {});
    if (s.anyOf) { for (var i = 0; i < s.anyOf.length; i++) { var c = children(s.anyOf[i]); if (c) return c; } }
    return s.properties ? s : null;
  }
  function tree(schema, depth) {
    var s = children(schema);
    if (!s || depth > 8) return null;
    var ul = el("ul", { class: "tree" });
    var required = s.required || [];
    Object.keys(s.properties || {}).forEach(function (name) {
      var prop = s.properties[name], r = resolve(prop);
      var li = el("li", {}, [
        el("code", { text: name }),
        required.indexOf(name) >= 0 ? el("span", { class: "req", text: "required" }) : null,
        " ", el("span", { class: "type mono", text: typeOf(prop) }),
        constraints(prop) ? el("span", { class: "cons", text: "  " + constraints(prop) }) : null,
      ]);
      if (r.description) li.appendChild(el("div", { class: "cons", text: r.description }));
      var sub = tree(prop, depth + 1);
      if (sub) li.appendChild(sub);
      ul.appendChild(li);
    });
    return ul;
  }
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
      var o = {};
      Object.keys(s.properties || {}).forEach(function (k) { o[k] = example(s.properties[k], depth + 1); });
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
  function param(p) { return p.$ref ? resolve(p) : p; }
  function paramTable(params) {
    var table = el("table", {}, [el("tr", {}, [el("th", { text: "Name" }), el("th", { text: "In" }), el("th", { text: "Type" }), el("th", { text: "Description" })])]);
    params.forEach(function (p) {
      table.appendChild(el("tr", {}, [
        el("td", {}, [el("code", { text: p.name }), p.required ? el("span", { class: "req", text: "required" }) : null]),
        el("td", { text: p.in }),
        el("td", {}, [el("span", { class: "type mono", text: typeOf(p.schema) }), el("div", { class: "cons", text: constraints(p.schema) })]),
        el("td", {}, [markdown(p.description || resolve(p.schema).description || "")]),
      ]));
    });
    return table;
  }
  function headerTable(headers) {
    var table = el("table", {}, [el("tr", {}, [el("th", { text: "Header" }), el("th", { text: "Type" }), el("th", { text: "Description" })])]);
    Object.keys(headers).forEach(function (name) {
      var h = headers[name];
      table.appendChild(el("tr", {}, [
        el("td", {}, [el("code", { text: name }), h.required ? el("span", { class: "req", text: "always" }) : null]),
        el("td", {}, [el("span", { class: "type mono", text: typeOf(h.schema) })]),
        el("td", {}, [markdown(h.description || "")]),
      ]));
    });
    return table;
  }
  function response(status, r) {
    var media = r.content && Object.keys(r.content)[0];
    var body = media ? r.content[media] : null;
    var box = el("details", { class: "resp" }, [
      el("summary", {}, [el("span", { class: "st s" + status.charAt(0), text: status }), " ", media ? el("span", { class: "cons", text: media }) : null]),
      markdown(r.description),
    ]);
    if (r.headers) box.appendChild(headerTable(r.headers));
    if (body && body.schema) { var t = tree(body.schema, 0); if (t) box.appendChild(t); }
    if (body && body.examples) {
      Object.keys(body.examples).forEach(function (k) { box.appendChild(el("pre", { text: JSON.stringify(body.examples[k].value, null, 2) })); });
    }
    return box;
  }
  var keyInput, hostInput;
  function tryIt(path, method, op, id) {
    var params = (op.parameters || []).map(param).filter(function (p) { return p.in !== "header" || p.name === "Idempotency-Key"; });
    var inputs = {};
    var box = el("div", { class: "try" });
    params.forEach(function (p) {
      var input = el("input", { placeholder: p.required ? "required" : "optional" });
      inputs[p.in + ":" + p.name] = input;
      box.appendChild(el("label", {}, [p.name + " (" + p.in + ")", input]));
    });
    var bodyInput = null;
    if (op.requestBody) {
      bodyInput = el("textarea", {});
      bodyInput.value = JSON.stringify(example(op.requestBody.content["application/json"].schema, 0), null, 2);
      box.appendChild(el("label", {}, ["Body (JSON)", bodyInput]));
    }
    var out = el("pre", { class: "hidden" });
    var send = el("button", { type: "button", text: "Send " + method.toUpperCase() });
    send.addEventListener("click", function () {
      out.className = "";
      var host = hostInput.value.trim();
      if (!/^[A-Za-z0-9.-]+(:[0-9]{1,5})?$/.test(host)) { out.textContent = "Enter your store's host above first (like shop1.example.com)."; return; }
      if (host.toLowerCase() !== location.host.toLowerCase()) {
        out.textContent = "";
        var there = location.protocol + "//" + host + location.pathname + "#" + id;
        out.appendChild(document.createTextNode("This page can only send requests to its own host. Open it on " + host + " and try there: "));
        out.appendChild(el("a", { href: there, text: there }));
        return;
      }
      var url = path, query = [], headers = {};
      params.forEach(function (p) {
        var v = inputs[p.in + ":" + p.name].value;
        if (p.in === "path") url = url.replace("{" + p.name + "}", encodeURIComponent(v));
        else if (p.in === "query" && v !== "") query.push(encodeURIComponent(p.name) + "=" + encodeURIComponent(v));
        else if (p.in === "header" && v !== "") headers[p.name] = v;
      });
      if (query.length) url += "?" + query.join("&");
      if ((op.security || doc.security || []).some(function (s) { return Object.keys(s).length; }) && keyInput.value) headers.Authorization = "Bearer " + keyInput.value;
      var init = { method: method.toUpperCase(), headers: headers };
      if (bodyInput) { headers["Content-Type"] = "application/json"; init.body = bodyInput.value; }
      out.textContent = method.toUpperCase() + " " + url + " …";
      fetch(url, init).then(function (res) {
        return res.text().then(function (text) {
          var lines = [res.status + " " + res.statusText];
          res.headers.forEach(function (v, k) { lines.push(k + ": " + v); });
          var shown = text;
          try { shown = JSON.stringify(JSON.parse(text), null, 2); } catch (e) {}
          out.textContent = lines.join("\n") + "\n\n" + shown;
        });
      }).catch(function (e) { out.textContent = "Request failed: " + e; });
    });
    box.appendChild(send);
    box.appendChild(out);
    return el("details", {}, [el("summary", { text: "Try it (sent to the store host above)" }), box]);
  }
  function operation(path, method, op, id) {
    var card = el("section", { class: "card", id: id }, [
      el("h3", {}, [el("span", { class: "m " + method, text: method.toUpperCase() }), el("span", { class: "path", text: path })]),
      el("p", { class: "sum", text: op.summary || "" }),
    ]);
    if (op.description) card.appendChild(markdown(op.description));
    var params = (op.parameters || []).map(param);
    if (params.length) { card.appendChild(el("h4", { text: "Parameters" })); card.appendChild(paramTable(params)); }
    if (op.requestBody) {
      card.appendChild(el("h4", { text: "Request body (application/json)" }));
      var t = tree(op.requestBody.content["application/json"].schema, 0);
      if (t) card.appendChild(t);
    }
    card.appendChild(el("h4", { text: "Responses" }));
    Object.keys(op.responses || {}).forEach(function (status) { card.appendChild(response(status, op.responses[status])); });
    if (method !== "options") card.appendChild(tryIt(path, method, op, id));
    return card;
  }
  var side = document.getElementById("side"), main = document.getElementById("main");
  side.appendChild(el("h1", { text: doc.info.title }));
  side.appendChild(el("div", { class: "ver", text: "OpenAPI " + doc.openapi + " · version " + doc.info.version }));
  var filter = el("input", { type: "search", placeholder: "Filter endpoints" });
  side.appendChild(filter);
  side.appendChild(el("a", { href: "openapi.json", text: "openapi.json" }));
  keyInput = el("input", { type: "password", placeholder: "svc_sk_… (kept in this page only)", autocomplete: "off" });
  var onStoreHost = document.body.getAttribute("data-store-host") === "yes";
  hostInput = el("input", { type: "text", placeholder: "your store's host, like shop1.example.com", autocomplete: "off", id: "store-host" });
  if (onStoreHost) hostInput.value = location.host;
  main.appendChild(el("div", { id: "keybar" }, [el("span", { text: "Store host:" }), hostInput, el("span", { text: "API key:" }), keyInput]));
  var note = document.getElementById("hostnote");
  note.appendChild(document.createTextNode(onStoreHost
    ? " This page is on the store host " + location.host + "."
    : " This page's host (" + location.host + ") is not a store's: type your store's host above."));
  main.appendChild(note);
  var intro = el("section", { class: "card intro", id: "overview" }, [el("h3", { text: "Overview" })]);
  intro.appendChild(markdown(doc.info.description));
  main.appendChild(intro);
  var links = [], n = 0;
  (doc.tags || []).forEach(function (tag) {
    var ops = [];
    Object.keys(doc.paths).forEach(function (path) {
      METHODS.forEach(function (method) {
        var op = doc.paths[path][method];
        if (op && (op.tags || [])[0] === tag.name && method !== "options") ops.push([path, method, op]);
      });
    });
    if (!ops.length) return;
    side.appendChild(el("h2", { text: tag.name }));
    main.appendChild(el("h2", { class: "tag", text: tag.name }));
    if (tag.description) main.appendChild(el("p", { class: "sum", text: tag.description }));
    ops.forEach(function (o) {
      var id = "op-" + (n++);
      var link = el("a", { href: "#" + id }, [el("span", { class: "m " + o[1], text: o[1].toUpperCase() }), el("span", { class: "mono", text: o[0].replace("/api/v1", "") })]);
      link.dataset.search = (o[1] + " " + o[0] + " " + (o[2].summary || "")).toLowerCase();
      links.push(link);
      side.appendChild(link);
      main.appendChild(operation(o[0], o[1], o[2], id));
    });
  });
  filter.addEventListener("input", function () {
    var q = filter.value.toLowerCase();
    links.forEach(function (a) { a.classList.toggle("hidden", q !== "" && a.dataset.search.indexOf(q) < 0); });
  });
})();
`;

/** JSON inside a <script> element: `<` escaped so no `</script>` can end it early. */
const scriptJson = (value: unknown) => JSON.stringify(value).replace(/</g, "\\u003c");

/** The note beside Try it's host field (also in the page's HTML, for readers without the script). */
export const HOST_NOTE =
  "Try it sends each request to the store host you pick: the Host header picks the store. " +
  "This page can only send requests to the host it was opened on (the API has no CORS), so for another host Try it offers a link to this page there.";

/** `onStoreHost`: whether the page is served at a store's host (Try it's host is prefilled). */
export function docsPage(document: unknown, { onStoreHost = false } = {}): string {
  const title = "Store Management API reference";
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="${CSP}">
<title>${title}</title>
<style>${STYLE}</style>
</head>
<body data-store-host="${onStoreHost ? "yes" : "no"}">
<nav id="side"></nav>
<p id="hostnote">${HOST_NOTE}</p>
<main id="main"><noscript>This page needs JavaScript; the document itself is at <a href="openapi.json">openapi.json</a>.</noscript></main>
<script type="application/json" id="openapi">${scriptJson(document)}</script>
<script>${SCRIPT}</script>
</body>
</html>
`;
}
