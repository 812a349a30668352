// Copy buttons: <button type="button" data-copy="ID" hidden> beside the <input id="ID" readonly>
// holding the text. Without scripts the button stays hidden and the text stays selectable.
"use strict";
(function () {
  function copied(button) {
    var label = button.textContent;
    button.textContent = "Copied";
    button.setAttribute("aria-live", "polite");
    window.setTimeout(function () { button.textContent = label; }, 2500);
  }

  function selectOnly(field, button) {
    // Fallback where the clipboard cannot be written (an insecure origin, a refused permission):
    // the text is selected for the person to copy themselves.
    field.focus();
    field.select();
    var done = false;
    try { done = document.execCommand("copy"); } catch (error) { done = false; }
    if (done) {
      copied(button);
    } else {
      button.textContent = "Selected: press Ctrl+C (⌘C) to copy";
    }
  }

  document.querySelectorAll("button[data-copy]").forEach(function (button) {
    var field = document.getElementById(button.getAttribute("data-copy"));
    if (!field) { return; }
    button.hidden = false;
    button.addEventListener("click", function () {
      if (navigator.clipboard && window.isSecureContext) {
        navigator.clipboard.writeText(field.value).then(
          function () { copied(button); },
          function () { selectOnly(field, button); });
      } else {
        selectOnly(field, button);
      }
    });
  });
})();
