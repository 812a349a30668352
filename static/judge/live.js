// The judge's pages react at once to their own session and their own work elsewhere: the host
// closing or reopening the session, the reveal, a lock or a save from another tab, removal.
// Whenever the state the server reports differs from what the page was rendered with (also
// after a reconnection that missed events), the page re-reads it from the server.
(function () {
  "use strict";
  var root = document.getElementById("live");
  if (!root || !window.blindjudgeLive) { return; }
  var page = root.dataset.page;
  var state = root.dataset.state;
  var phase = root.dataset.phase || "";
  var answered = root.dataset.answered || "";
  var notice = document.getElementById("live-notice");
  var CLOSED = "The host has closed the session for now. Your saved work is kept; you can continue when it reopens.";
  var REMOVED = "The host has removed you from this session. These pages no longer accept verdicts.";
  var ENDED = "This browser's access to the session has ended: the host reissued or revoked your resume link. Open your newest link (or sign in again) to continue.";
  var reloadTimer = null;

  // Once this page submits a form (a save, the lock) it is leaving: the event its own submission
  // causes must not start a second navigation that aborts the first.
  var leaving = false;
  document.addEventListener("submit", function (event) { if (!event.defaultPrevented) { leaving = true; } });
  window.addEventListener("pageshow", function () { leaving = false; });

  function say(text) { notice.textContent = text; notice.hidden = !text; }
  function goHome() { if (!leaving) { window.location.assign(root.dataset.home); } }
  function reload() {
    if (leaving) { return; }
    clearTimeout(reloadTimer);
    reloadTimer = setTimeout(function () { window.location.reload(); }, 250);
  }
  function setOpen(open) {
    state = open ? "open" : "closed";
    document.querySelectorAll("[data-live-open]").forEach(function (element) { element.disabled = !open; });
    document.querySelectorAll("[data-live-closed-notice]").forEach(function (element) { element.hidden = true; });
    say(open ? "" : CLOSED);
  }

  var live = window.blindjudgeLive(root.dataset.live, {
    status: function (status) { root.dataset.status = status; },
    message: function (frame) {
      if (frame.type === "state") {
        if (frame.state === "revealed") { goHome(); }
        else if (String(frame.phase || "") !== phase) { if (page === "home") { reload(); } else { goHome(); } }
        else if (page === "home" && (frame.state !== state || String(frame.answered) !== answered)) { reload(); }
        else if (frame.state !== state) { setOpen(frame.state === "open"); }
      } else if (frame.type === "session") {
        if (frame.state === "revealed") { goHome(); }
        else if (page === "home") { reload(); }
        else { setOpen(frame.state === "open"); }
      } else if (frame.type === "locked") {
        if (String(frame.phase) === phase) { if (page === "home") { reload(); } else { goHome(); } }
      } else if (frame.type === "saved") {
        if (page === "home") { reload(); }
      } else if (frame.type === "removed" || frame.type === "ended") {
        live.stop();
        setOpen(false);
        say(frame.type === "removed" ? REMOVED : ENDED);
      }
    }
  });
})();
