// The host's live dashboard of a session: who joined, each judge's progress and locks in both
// phases, who is connected now, and the session's state; counts and states only. Every
// (re)connection starts with the full picture from the server, so missed events never matter.
(function () {
  "use strict";
  var root = document.getElementById("live");
  var table = document.getElementById("judges-live");
  if (!root || !table || !window.blindjudgeLive) { return; }
  var tbody = table.tBodies[0];
  var status = document.getElementById("live-status");
  var STATUS = {live: "Live: this page updates itself.", reconnecting: "Reconnecting… (the figures may be behind)",
                stopped: "Not live: refresh the page to update it."};

  function setText(element, text) {
    if (element && element.textContent !== text) { element.textContent = text; }
  }
  function connectedText(judge) {
    if (judge.status !== "active") { return "–"; }
    if (!judge.connected) { return "no"; }
    return judge.connected > 1 ? "yes (" + judge.connected + " tabs)" : "yes";
  }
  function nameText(judge) {
    if (judge.erased) { return "erased"; }
    return judge.name + (judge.github ? " (@" + judge.github + ")" : "");
  }
  function link(template, number, text, hidden) {
    var a = document.createElement("a");
    a.className = "button";
    a.href = template.replace("/0/", "/" + number + "/");
    a.textContent = text;
    var span = document.createElement("span");
    span.className = "visually-hidden";
    span.textContent = hidden;
    a.appendChild(span);
    a.appendChild(document.createTextNode("…"));
    return a;
  }
  function newRow(judge) {
    var tr = document.createElement("tr");
    tr.dataset.judge = String(judge.number);
    var th = document.createElement("th");
    th.scope = "row";
    th.textContent = judge.pseudonym;
    tr.appendChild(th);
    [["name"], [null, judge.admitted_as], [null, judge.identified_by], ["status"], ["phase1"], ["phase2"],
     ["connected"], [null, "just now"], ["actions"]].forEach(function (cell) {
      var td = document.createElement("td");
      if (cell[0]) { td.dataset.cell = cell[0]; } else { td.textContent = cell[1]; }
      tr.appendChild(td);
    });
    var actions = tr.querySelector("[data-cell=actions]");
    actions.className = "row-actions";
    actions.appendChild(link(root.dataset.removeUrl, judge.number, "Remove", " " + judge.pseudonym));
    actions.appendChild(document.createTextNode(" "));
    actions.appendChild(link(root.dataset.eraseUrl, judge.number, "Erase identity", " of " + judge.pseudonym));
    tbody.appendChild(tr);
    document.getElementById("judges-wrap").hidden = false;
    document.getElementById("nobody").hidden = true;
    return tr;
  }
  function showJudge(judge) {
    var tr = tbody.querySelector('tr[data-judge="' + judge.number + '"]') || newRow(judge);
    tr.dataset.status = judge.status;
    tr.dataset.connected = String(judge.connected);
    tr.dataset.locked1 = String(judge.phase1_locked);
    tr.dataset.locked2 = String(judge.phase2_locked);
    var cell = function (name) { return tr.querySelector('[data-cell="' + name + '"]'); };
    var nameCell = cell("name");
    if (!judge.erased || nameCell.textContent.indexOf("erased") !== 0) { setText(nameCell, nameText(judge)); }
    var statusCell = cell("status");
    if (statusCell.textContent.split(" ")[0] !== judge.status) { setText(statusCell, judge.status); }
    [1, 2].forEach(function (phase) {
      var phaseCell = cell("phase" + phase);
      var count = judge["answered" + phase] + " of " + judge.items + " answered";
      var locked = judge["phase" + phase + "_locked"];
      var shown = phaseCell.textContent;
      // Unchanged: keep what is shown (the server renders the lock time).
      if (shown.indexOf(count) === 0 && (shown.slice(count.length).indexOf("locked") === 0) === locked) { return; }
      phaseCell.textContent = count;
      phaseCell.appendChild(document.createElement("br"));
      phaseCell.appendChild(document.createTextNode(locked ? "locked" : "not locked"));
    });
    setText(cell("connected"), connectedText(judge));
    if (judge.status !== "active") {
      cell("actions").querySelectorAll("form, a[href$='/remove']").forEach(function (e) { e.remove(); });
    }
  }
  function showTotals() {
    var rows = Array.prototype.slice.call(tbody.rows);
    var count = function (test) { return String(rows.filter(test).length); };
    var totals = {
      joined: String(rows.length),
      active: count(function (r) { return r.dataset.status === "active"; }),
      removed: count(function (r) { return r.dataset.status !== "active"; }),
      phase1_locked: count(function (r) { return r.dataset.locked1 === "true"; }),
      phase2_locked: count(function (r) { return r.dataset.locked2 === "true"; }),
      connected: count(function (r) { return r.dataset.status === "active" && r.dataset.connected !== "0"; })
    };
    Object.keys(totals).forEach(function (key) {
      setText(document.querySelector('[data-total="' + key + '"]'), totals[key]);
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
        frame.judges.forEach(showJudge);
        showTotals();
      } else if (frame.type === "judge") {
        showJudge(frame.judge);
        showTotals();
      } else if (frame.type === "session") {
        showState(frame.state);
      }
    }
  });
})();
