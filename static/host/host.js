// Host pages: a Copy button beside each value shown once. Without JavaScript the field is
// read-only text that can be selected and copied by keyboard.
"use strict";
document.querySelectorAll("input[data-copy]").forEach(function (input) {
  var row = document.createElement("div");
  row.className = "copy-row";
  input.parentNode.insertBefore(row, input);
  row.appendChild(input);
  var button = document.createElement("button");
  button.type = "button";
  button.textContent = "Copy";
  var label = document.querySelector('label[for="' + input.id + '"]');
  if (label) { button.setAttribute("aria-label", "Copy " + label.textContent); }
  var status = document.createElement("span");
  status.setAttribute("role", "status");
  row.appendChild(button);
  row.appendChild(status);
  input.addEventListener("focus", function () { input.select(); });
  button.addEventListener("click", function () {
    input.select();
    var done = function () { status.textContent = "Copied"; };
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(input.value).then(done, function () {
        status.textContent = "Select the text and copy it";
      });
    } else if (document.execCommand && document.execCommand("copy")) {
      done();
    } else {
      status.textContent = "Select the text and copy it";
    }
  });
});
