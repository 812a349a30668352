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

  // Each autosave names the phase the page was rendered for (the form's hidden field): if that
  // phase was locked meanwhile (another tab, a save in flight during the lock) the server refuses
  // with 409 and stores nothing; the page then says so and reloads into the phase it is in now.
  // A refusal (4xx) says why; a server failure (5xx) and a lost connection are retried, and
  // each says which it is.
  var NOTICE_KEY = "blindjudge:notice";
  var pending = null;
  var retryDelay = 0;
  function say(text) { status.textContent = text; }
  function retrySoon(text) {
    retryDelay = Math.min(30, retryDelay ? retryDelay * 2 : 2);
    say(text + " Retrying in " + retryDelay + " s; your choice is kept on this page.");
    clearTimeout(pending);
    pending = setTimeout(autosave, retryDelay * 1000);
  }
  function refused(response, data) {
    var message = (data && typeof data.message === "string" && data.message) ||
      ("the server refused it (" + response.status + ").");
    return /^Not saved/.test(message) ? message : "Not saved: " + message;
  }
  function answered(response, data) {
    if (response.ok && data && data.saved === true) { retryDelay = 0; say("Draft saved."); return; }
    if (response.status >= 500) { retrySoon("The server failed to save this draft (an error on its side, not your connection)."); return; }
    var message = refused(response, data);
    say(message);
    if (response.status === 409) {
      // The page is out of date: show what happened, then the item as it is now.
      try { window.sessionStorage.setItem(NOTICE_KEY, message); } catch (error) { /* private mode */ }
      setTimeout(function () { window.location.reload(); }, 1500);
    }
  }
  function autosave() {
    if (!form.querySelector("input[name=verdict]:checked") || form.querySelector("fieldset[disabled]")) { return; }
    stampTime();
    var body = new FormData(form);
    body.set("go", "stay");
    fetch(form.dataset.autosave, {
      method: "POST", body: body, credentials: "same-origin",
      headers: {"Accept": "application/json"}
    }).then(function (response) {
      return response.json().then(function (data) { answered(response, data); },
                                  function () { answered(response, null); });
    }, function () {
      retrySoon("Not saved: no connection.");
    });
  }
  try {
    var notice = window.sessionStorage.getItem(NOTICE_KEY);
    if (notice) { window.sessionStorage.removeItem(NOTICE_KEY); say(notice); }
  } catch (error) { /* private mode: nothing kept */ }
  function autosaveSoon() { clearTimeout(pending); retryDelay = 0; pending = setTimeout(autosave, 800); }
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
