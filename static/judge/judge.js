// The judge's item page: keyboard shortcuts, time on the item, and drafts saved as you go.
// Everything works without this file (plain forms); it only makes judging faster.
(function () {
  "use strict";
  var form = document.getElementById("verdict-form");
  if (!form) { return; }
  var seconds = form.querySelector("input[name=seconds_spent]");
  var status = document.getElementById("autosave-status");
  var base = parseFloat(seconds.dataset.base || "0") || 0;
  var visibleSince = document.visibilityState === "visible" ? Date.now() : null;
  var counted = 0;

  // Time counts only while the page is visible, summed over visits (the server keeps the most).
  function elapsed() {
    return counted + (visibleSince === null ? 0 : (Date.now() - visibleSince) / 1000);
  }
  document.addEventListener("visibilitychange", function () {
    if (document.visibilityState === "visible") { visibleSince = Date.now(); }
    else if (visibleSince !== null) { counted += (Date.now() - visibleSince) / 1000; visibleSince = null; }
  });
  function stampTime() { seconds.value = (base + elapsed()).toFixed(1); }
  form.addEventListener("submit", stampTime);

  var pending = null;
  function autosave() {
    if (!form.querySelector("input[name=verdict]:checked") || form.querySelector("fieldset[disabled]")) { return; }
    stampTime();
    var body = new FormData(form);
    body.set("go", "stay");
    fetch(form.dataset.autosave, {
      method: "POST", body: body, credentials: "same-origin",
      headers: {"Accept": "application/json"}
    }).then(function (response) {
      return response.json().then(function (data) {
        status.textContent = data.saved ? "Draft saved." : (data.message || "Not saved.");
      });
    }).catch(function () { status.textContent = "Not saved: no connection. Your choice is kept on this page."; });
  }
  function autosaveSoon() { clearTimeout(pending); pending = setTimeout(autosave, 800); }
  form.addEventListener("change", autosaveSoon);
  form.querySelector("textarea[name=reason]").addEventListener("input", autosaveSoon);

  function submitWith(go) {
    var button = form.querySelector("button[name=go][value=" + go + "]");
    if (!button) { return false; }
    button.click();
    return true;
  }
  document.addEventListener("keydown", function (event) {
    var target = event.target;
    if (event.ctrlKey || event.metaKey || event.altKey) { return; }
    if (target && (target.tagName === "TEXTAREA" || (target.tagName === "INPUT" && target.type === "text"))) { return; }
    var key = event.key.toLowerCase();
    var radio = form.querySelector("input[name=verdict][data-key='" + key + "']");
    if (radio && !radio.disabled) { radio.checked = true; radio.focus(); radio.dispatchEvent(new Event("change", {bubbles: true})); event.preventDefault(); return; }
    if (key === "n") { submitWith("next") || submitWith("home"); event.preventDefault(); }
    else if (key === "b") { submitWith("previous"); event.preventDefault(); }
  });
  // The parent ignores anything the copy frame posts (it cannot run scripts anyway).
  window.addEventListener("message", function (event) { event.stopImmediatePropagation(); }, true);
})();
