// The item page's "Flag this task" control (sessions that collect task flags): the button or the
// f key opens a small form (kind, severity, reason; nothing chosen for the judge), saved with
// the same POST as without script, answered in JSON, shown in place. Delegated from the document:
// judge.js replaces #item-top, and with it this control, on every move.
(function () {
  "use strict";

  function section() { return document.getElementById("task-flag"); }
  function form() { return document.getElementById("task-flag-form"); }
  function button() { return document.getElementById("task-flag-button"); }

  function setOpen(open) {
    var f = form(), b = button();
    if (!f || !b) { return; }
    f.hidden = !open;
    b.setAttribute("aria-expanded", open ? "true" : "false");
    if (open) { document.getElementById("flag-kind").focus(); }
    else {
      var heading = document.querySelector("#item-top h1");
      if (heading) { heading.focus({preventScroll: true}); }
    }
  }

  function isTyping(target) {
    return target && (target.tagName === "TEXTAREA" || target.tagName === "SELECT" ||
      (target.tagName === "INPUT" && target.type !== "radio" && target.type !== "checkbox"));
  }

  var KIND_LABELS = {};
  function learnLabels() {
    var kind = document.getElementById("flag-kind");
    if (!kind) { return; }
    Array.prototype.forEach.call(kind.options, function (option) {
      if (option.value) { KIND_LABELS[option.value] = option.textContent; }
    });
  }

  function showMine(flag, phase) {
    var mine = document.getElementById("task-flag-mine");
    mine.textContent = "";
    mine.appendChild(document.createTextNode("Your phase-" + phase + " flag on this task: "));
    var kind = document.createElement("strong");
    kind.className = "flag-kind";
    kind.textContent = KIND_LABELS[flag.kind] || flag.kind;
    mine.appendChild(kind);
    mine.appendChild(document.createTextNode(", severity "));
    var severity = document.createElement("strong");
    severity.className = "flag-severity";
    severity.textContent = String(flag.severity);
    mine.appendChild(severity);
    mine.appendChild(document.createTextNode(". "));
    var reason = document.createElement("span");
    reason.className = "flag-reason";
    reason.textContent = flag.reason;
    mine.appendChild(reason);
    var b = button();
    if (b) { b.firstChild.textContent = "Change your flag "; }
  }

  document.addEventListener("click", function (event) {
    var target = event.target;
    if (!target || !target.closest) { return; }
    if (target.closest("#task-flag-button")) { learnLabels(); setOpen(form().hidden); }
    else if (target.closest("#task-flag-cancel")) { setOpen(false); }
  });

  document.addEventListener("keydown", function (event) {
    if (event.defaultPrevented || event.ctrlKey || event.metaKey || event.altKey || !section()) { return; }
    var help = document.getElementById("keys-help");
    if (help && help.open) { return; }
    var target = event.target;
    var inForm = target && target.closest && target.closest("#task-flag-form");
    if (inForm && event.key === "Escape") { event.preventDefault(); setOpen(false); return; }
    if (isTyping(target) || (target && target.tagName === "IFRAME")) { return; }
    if (event.key === "f" || event.key === "F") {
      if (event.repeat || !button()) { event.preventDefault(); return; }
      event.preventDefault();
      learnLabels();
      setOpen(true);
    }
  });

  document.addEventListener("submit", function (event) {
    var f = event.target;
    if (!f || f.id !== "task-flag-form") { return; }
    event.preventDefault();
    learnLabels();
    var status = document.getElementById("task-flag-status");
    var phase = f.querySelector("input[name=phase]").value;
    status.textContent = "Saving…";
    fetch(f.action, {
      method: "POST", body: new FormData(f), credentials: "same-origin",
      headers: {"Accept": "application/json"}
    }).then(function (response) {
      return response.json().then(function (data) { return {ok: response.ok, data: data}; });
    }).then(function (answer) {
      if (answer.ok && answer.data.saved) {
        showMine(answer.data.flag, phase);
        status.textContent = "";
        section().dataset.flagSaved = "1";
        setOpen(false);
        // The items fetched ahead (judge.js) showed the task as unflagged: fetch them again.
        document.dispatchEvent(new CustomEvent("blindjudge:flag-saved"));
      } else {
        status.textContent = "Not saved: " + ((answer.data && answer.data.message) || "try again.");
      }
    }, function () {
      status.textContent = "Not saved: no connection. Your flag is kept in the form; save it again.";
    });
  });
})();
