/**
 * The API reference page: one self-contained HTML document (inline style and script,
 * the OpenAPI document embedded), so it needs nothing from any other host. Its Content
 * Security Policy lets it talk only to the host that served it ("Try it").
 *
 * The Host header picks the store, and a page cannot send another host's requests (no
 * CORS, `connect-src 'self'`), so Try it runs against the store host the user picks: the
 * page's own host when it is a store's (prefilled), else Try it opens this page on the host
 * typed in, where it can send. The script that renders the document is its own file,
 * type-checked, embedded as text.
 */
import SCRIPT from "./docs-page.browser.js" with { type: "text" };

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

/** JSON inside a <script> element: `<` escaped so no `</script>` can end it early. */
const scriptJson = (value: unknown) => JSON.stringify(value).replace(/</g, "\\u003c");

/** The note beside Try it's host field (also in the page's HTML, for readers without the script). */
export const HOST_NOTE =
  "Try it sends each request to the store host you pick: the Host header picks the store. " +
  "This page can only send requests to the host it was opened on (the API has no CORS), so for another host Try it offers a link to this page there.";

/** For an API that answers on any host (the management API): Try it sends to the page's own. */
export const ANY_HOST_NOTE =
  "Try it sends each request to this page's host: this API answers on any host name.";

/**
 * `onStoreHost`: whether the page is served at a store's host (Try it's host is prefilled);
 * `anyHost`: the API answers on every host, so Try it needs no host picked; `title` is plain text.
 */
export function docsPage(
  document: unknown,
  { onStoreHost = false, anyHost = false, title = "Store Management API reference" } = {},
): string {
  const hostMode = anyHost ? "any" : onStoreHost ? "yes" : "no";
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="${CSP}">
<title>${title}</title>
<style>${STYLE}</style>
</head>
<body data-store-host="${hostMode}">
<nav id="side"></nav>
<p id="hostnote">${anyHost ? ANY_HOST_NOTE : HOST_NOTE}</p>
<main id="main"><noscript>This page needs JavaScript; the document itself is at <a href="openapi.json">openapi.json</a>.</noscript></main>
<script type="application/json" id="openapi">${scriptJson(document)}</script>
<script>${SCRIPT}</script>
</body>
</html>
`;
}
