// The host's live dashboard of a session: who joined, each judge's progress and locks in both
// phases, who is connected now, and the session's state; counts and states only. Every
// (re)connection starts with the full picture from the server, so missed events never matter.
// On the session's overview, which has no table of judges, the counts and the state alone.
(function () {
  "use strict";
  var root = document.getElementById("live");
  var table = document.getElementById("judges-live");
  if (!root || !window.blindjudgeLive) { return; }
  var tbody = table ? table.tBodies[0] : null;
  var status = document.getElementById("live-status");
  var STATUS = {live: "Live: this page updates itself.", reconnecting: "Reconnecting… (the figures may be behind)",
                stopped: "Not live: refresh the page to update it."};

  function setText(element, text) {
    if (element && element.textContent !== text) { element.textContent = text; }
  }
  // Rows come drawn by the server (host/_judge_rows.html, the template the page itself uses); a
  // row's forms get this page's CSRF input, which the socket does not carry.
  var csrf = root.querySelector("input[name=csrfmiddlewaretoken]");
  // What the server would draw for a shown row: without the CSRF input and without what the host
  // did to it here (an open actions menu), so a row only the host touched counts as unchanged.
  function asDrawn(row) {
    var copy = row.cloneNode(true);
    copy.querySelectorAll("input[name=csrfmiddlewaretoken]").forEach(function (input) { input.remove(); });
    copy.querySelectorAll("details[open]").forEach(function (menu) { menu.removeAttribute("open"); });
    return copy.outerHTML;
  }
  // A changed row is drawn anew; the host's open menu and focus move over to it, or an update
  // that lands while the host reaches for "Reissue" would shut the menu under their pointer.
  function carryOver(shown, row) {
    var openMenus = Array.prototype.map.call(shown.querySelectorAll("details"), function (menu) {
      return menu.open;
    });
    row.querySelectorAll("details").forEach(function (menu, index) {
      if (openMenus[index]) { menu.open = true; }
    });
    var focusable = "summary, button, a[href], input:not([type=hidden])";
    var before = Array.prototype.indexOf.call(shown.querySelectorAll(focusable), document.activeElement);
    return before < 0 ? null : row.querySelectorAll(focusable)[before] || null;
  }
  function showRow(judge, html) {
    if (!tbody) { return; }
    var drawn = document.createElement("template");
    drawn.innerHTML = html.trim();
    var row = drawn.content.firstElementChild;
    if (!row) { return; }
    var shown = tbody.querySelector('tr[data-judge="' + judge.number + '"]');
    // An unchanged row stays as it is (the host's focus and open menu with it).
    if (shown && asDrawn(shown) === row.outerHTML) { return; }
    row.querySelectorAll("form").forEach(function (form) {
      if (csrf) { form.prepend(csrf.cloneNode()); }
    });
    if (shown) {
      var focusNext = carryOver(shown, row);
      shown.replaceWith(row);
      if (focusNext) { focusNext.focus(); }
    } else {
      tbody.appendChild(row);
      document.getElementById("judges-wrap").hidden = false;
      document.getElementById("nobody").hidden = true;
    }
  }
  // The totals are counted once, by the server (judging.selectors.live.session_totals), and
  // drawn as each frame gives them.
  function showTotals(totals) {
    if (!totals) { return; }
    Object.keys(totals).forEach(function (key) {
      setText(document.querySelector('[data-total="' + key + '"]'), String(totals[key]));
      // What stands only until the first judge joins (the overview's "Next: invite the judges").
      document.querySelectorAll('[data-until-total="' + key + '"]').forEach(function (element) {
        element.hidden = totals[key] > 0;
      });
    });
  }
  function showState(state) {
    var badge = document.getElementById("session-state");
    if (badge && state) { setText(badge, state); badge.className = "state state-" + state; }
  }

  window.blindjudgeLive(root.dataset.live, {
    status: function (name) { root.dataset.status = name; setText(status, STATUS[name] || ""); },
    message: function (frame) {
      if (frame.type === "snapshot") {
        showState(frame.state);
        frame.judges.forEach(function (judge, index) { showRow(judge, frame.html[index]); });
        showTotals(frame.totals);
      } else if (frame.type === "judge") {
        showRow(frame.judge, frame.html);
        showTotals(frame.totals);
      } else if (frame.type === "session") {
        showState(frame.state);
      }
    }
  });
})();
