// Progressive enhancement only: the page works without this script.
// A new key's page keeps no copy of the key once left: Chrome's back/forward cache keeps
// pages whole, `Cache-Control: no-store` or not, and going back would show the key again.
// A page brought back from that cache is loaded afresh (the server then shows no key).
(() => {
  const key = document.getElementById("new-key");
  if (!key) return;
  window.addEventListener("pagehide", () => {
    key.textContent = "";
  });
  window.addEventListener("pageshow", (event) => {
    if (event.persisted) window.location.reload();
  });
})();

// Reveals the "Copy key" button and copies the new key's text when it is pressed.
(() => {
  const button = document.getElementById("copy-key");
  if (!button) return;
  const target = document.getElementById(button.dataset.copy);
  const status = document.getElementById("copy-status");
  const say = (text) => {
    if (status) status.textContent = text;
  };
  const selectKey = () => {
    const range = document.createRange();
    range.selectNodeContents(target);
    const selection = window.getSelection();
    selection.removeAllRanges();
    selection.addRange(range);
  };
  button.hidden = false;
  button.addEventListener("click", async () => {
    const text = target.textContent;
    try {
      if (!navigator.clipboard) throw new Error("no clipboard API");
      await navigator.clipboard.writeText(text);
      say("Copied.");
    } catch {
      // Pages not served over HTTPS have no clipboard API: select the key and copy that.
      selectKey();
      say(document.execCommand("copy") ? "Copied." : "Selected: press Ctrl+C (⌘C) to copy.");
    }
  });
})();
