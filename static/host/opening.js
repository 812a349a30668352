// A session's overview while it opens: the rendering's progress, asked for twice a second (the
// opening runs in a process of its own, which on the embedded default's in-memory channel layer
// cannot reach this page's socket), and the page loaded again once the opening has ended, opened
// or not (the page then says which). Without JavaScript the page has a refresh link.
(function () {
  "use strict";
  var section = document.getElementById("opening");
  if (!section) { return; }
  var bar = document.getElementById("opening-bar");
  var count = document.getElementById("opening-count");
  var url = section.dataset.progressUrl;
  var INTERVAL_MS = 500;

  function show(progress) {
    if (progress.to_render) { bar.max = progress.to_render; }
    bar.value = progress.rendered;
    var text = progress.rendered + " of " + (progress.to_render || "…") + " texts rendered";
    if (count.textContent !== text) { count.textContent = text; }
  }
  function poll() {
    fetch(url, {credentials: "same-origin", cache: "no-store", headers: {"Accept": "application/json"}})
      .then(function (response) {
        if (!response.ok) { throw new Error(String(response.status)); }
        return response.json();
      })
      .then(function (progress) {
        if (!progress.running) { window.location.reload(); return; }
        show(progress);
        window.setTimeout(poll, INTERVAL_MS);
      })
      .catch(function () { window.setTimeout(poll, INTERVAL_MS * 5); });
  }
  window.setTimeout(poll, INTERVAL_MS);
}());
