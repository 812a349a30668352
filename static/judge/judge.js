// The judge's item page: one key per decision, the next item shown at once, drafts saved as you go.
// Everything works without this file (plain forms); it only makes judging faster.
//
// The page is #item-top and #item-bar (replaced on each move) around #copy-area (kept: the next
// item's frame loads there, hidden, while the judge reads this one, and is then shown; moving an
// iframe in the DOM would reload it). Moving on never waits for a save: each item's saves keep
// their own retry loop after the page has moved on, and say so if they fail.
(function () {
  "use strict";
  if (!document.getElementById("verdict-form")) { return; }

  var NOTICE_KEY = "blindjudge:notice";
  var TASK_KEY = "blindjudge:task-panel";
  var WRAP_KEY = "blindjudge:wrap";
  var TEXT_KEY = "blindjudge:plain-text";
  var DEFAULT_LINE_PX = 20;
  var DEFAULT_PAD_PX = 24;
  // A phone-sized window: long lines wrap unless the judge chose otherwise, and the reason folds
  // behind its button (judge.css has the same width).
  var SMALL = window.matchMedia ? window.matchMedia("(max-width: 600px)") : null;
  function small() { return !!(SMALL && SMALL.matches); }
  var copyArea = document.getElementById("copy-area");
  // A pairs session's page shows two copies, each in its own frame inside its side's section
  // (which stays, as #copy-area does, so a frame loaded ahead, hidden, is shown where it is).
  var pairMode = !!(copyArea && copyArea.dataset.pair === "1");
  function sideNames() { return pairMode ? ["left", "right"] : ["copy"]; }
  function containerOf(side) {
    return pairMode ? copyArea.querySelector('.pair-side[data-side="' + side + '"]') : copyArea;
  }
  function specOf(doc, side) {
    return doc.querySelector(pairMode ? '#copy-area iframe[data-side="' + side + '"]' : "#copy-area iframe");
  }
  var backgroundStatus = document.getElementById("background-status");
  var helpDialog = document.getElementById("keys-help");
  var current = null;       // the item shown: see itemState()
  var prefetched = {};      // url -> {page: Promise<Document>, frame: iframe|null}
  var inflight = {};        // code -> Promise of its latest save (prefetches of it wait for it)
  var unconfirmed = {};     // code -> true while its latest save is neither stored nor refused
  var keptInPage = {};      // a host's preview: code -> {verdict, reason}, never sent anywhere
  var KEPT_IN_PAGE = "Preview: kept on this page only, never saved.";
  var navigating = false;

  function remembered(key) { try { return window.localStorage.getItem(key); } catch (error) { return null; } }
  function remember(key, value) { try { window.localStorage.setItem(key, value); } catch (error) { /* private mode */ } }

  // --- One item's state: its form, its time, its saves -------------------------------------------

  function itemState() {
    var top = document.getElementById("item-top");
    var form = document.getElementById("verdict-form");
    var seconds = form.querySelector("input[name=seconds_spent]");
    var state = {
      top: top, form: form, code: top.dataset.code, url: window.location.pathname,
      autosaveUrl: form.dataset.autosave, seconds: seconds,
      base: parseFloat(seconds.dataset.base || "0") || 0,
      counted: 0, visibleSince: document.visibilityState === "visible" ? Date.now() : null,
      oneKey: top.dataset.oneKey === "1", readOnly: top.dataset.readOnly === "1",
      minShownMs: parseInt(top.dataset.minShownMs || "0", 10) || 0, shownAt: null, readyTimer: null,
      chosen: checkedVerdict(form),
      nextUrl: top.dataset.nextUrl || "", nextIsItem: top.dataset.nextIsItem === "1",
      nextFrameUrl: top.dataset.nextFrameUrl || "", previousUrl: top.dataset.previousUrl || "",
      status: form.querySelector("#autosave-status"), when: form.querySelector(".save-when"), conflict: form.querySelector(".conflict"),
      dirty: false, timer: null, retryDelay: 0, retryNow: null, body: null, shown: true,
      // A host's preview of the judge's pages: choices stay in this page and are never sent.
      preview: top.dataset.preview === "1"
    };
    // Reasons alone are saved only by a server that takes them (it sends a revision).
    state.savesReasonAlone = !!form.querySelector("input[name=revision]");
    return state;
  }

  function checkedVerdict(form) {
    var checked = form.querySelector("input[name=verdict]:checked");
    return checked ? checked.value : null;
  }

  function elapsed(state) {
    return state.counted + (state.visibleSince === null ? 0 : (Date.now() - state.visibleSince) / 1000);
  }
  function stopClock(state) {
    if (state.visibleSince !== null) { state.counted += (Date.now() - state.visibleSince) / 1000; state.visibleSince = null; }
  }
  // Time counts only while the page is visible, summed over visits (the server keeps the most).
  document.addEventListener("visibilitychange", function () {
    if (!current) { return; }
    if (document.visibilityState === "visible") { current.visibleSince = Date.now(); } else { stopClock(current); }
  });
  function stampTime(state) { state.seconds.value = (state.base + elapsed(state)).toFixed(1); }

  // What became of the item's last save ("Draft saved.", why not), and beside it when ("10:42")
  // or that one is on its way ("Saving…").
  function say(state, text, when) {
    if (state.shown) { state.status.textContent = text; state.when.textContent = when || ""; return; }
    // A save for an item the judge has moved on from: said outside the item's bar.
    backgroundStatus.textContent = text ? "Item " + state.code + ": " + text : "";
    backgroundStatus.hidden = !text;
  }
  function savedAt(data) {
    var when = data && data.saved_at ? new Date(data.saved_at) : new Date();
    if (isNaN(when.getTime())) { when = new Date(); }
    return when.toLocaleTimeString([], {hour: "2-digit", minute: "2-digit", hour12: false});
  }
  function hasVerdict(state) { return !!state.form.querySelector("input[name=verdict]:checked"); }
  function canSave(state) {
    if (state.readOnly || state.form.querySelector("fieldset[disabled]")) { return false; }
    return hasVerdict(state) || (state.savesReasonAlone && state.form.querySelector("textarea[name=reason]").value !== "");
  }

  // Each save names the phase the page was rendered for and the revision it last saw: if the
  // phase was locked meanwhile the server refuses with 409 and stores nothing; if another tab
  // saved the item since, it refuses with 409 "changed_elsewhere" and the judge chooses. A
  // server failure (5xx) or a lost connection is retried with the same body, even after the
  // judge has moved on.
  function save(state, options) {
    clearTimeout(state.timer);
    if (state.preview) { keepInPage(state); return Promise.resolve(); }
    if (!canSave(state)) { return inflight[state.code] || Promise.resolve(); }
    if (state.shown) {
      stampTime(state);
      state.body = new FormData(state.form);
      state.body.set("go", "stay");
    }
    if (options && options.overwrite) { state.body.set("overwrite", "1"); }
    state.dirty = false;
    dropPrefetched(state.url);  // a page fetched before this save would show the old draft
    say(state, "", "Saving…");
    unconfirmed[state.code] = true;
    var body = state.body;
    // A retry waiting out its backoff is overtaken: this body is newer, and the connection may be
    // back (after an outage the judge's next choice waited up to 30 s behind the last retry).
    if (state.retryNow) { state.retryNow(); }
    var previous = inflight[state.code] || Promise.resolve();
    var done = previous.then(function () { return send(state, body); });
    inflight[state.code] = done;
    return done;
  }
  function send(state, body) {
    return fetch(state.autosaveUrl, {
      method: "POST", body: body, credentials: "same-origin", headers: {"Accept": "application/json"}
    }).then(function (response) {
      return response.json().then(function (data) { return answered(state, response, data); },
                                  function () { return answered(state, response, null); });
    }, function () {
      return retrySoon(state, "Not saved: no connection.");
    });
  }
  function retrySoon(state, text) {
    state.retryDelay = Math.min(30, state.retryDelay ? state.retryDelay * 2 : 2);
    say(state, (state.shown ? "" : "not saved — retrying. ") + text + " Retrying in " + state.retryDelay +
        " s; your choice is kept on this page.");
    return new Promise(function (resolve) {
      var timer = setTimeout(function () { state.retryNow = null; resolve(send(state, state.body)); },
                             state.retryDelay * 1000);
      state.retryNow = function () { clearTimeout(timer); state.retryNow = null; resolve(); };
    });
  }
  function answered(state, response, data) {
    // Stored, or refused for good (a 4xx says why on the page): nothing is left to retry.
    if (response.status < 500) { delete unconfirmed[state.code]; }
    if (response.ok && data && data.saved === true) {
      state.retryDelay = 0;
      state.lastSaved = data;
      if (typeof data.revision === "number") {
        state.body.set("revision", String(data.revision));
        var field = state.form.querySelector("input[name=revision]");
        if (field) { field.value = String(data.revision); }
      }
      state.body.delete("overwrite");
      if (state.shown) { say(state, "Draft saved.", savedAt(data)); state.conflict.hidden = true; }
      else {
        if (backgroundStatus.textContent.indexOf("Item " + state.code + ":") === 0) { say(state, ""); }
        confirmLeftBehind(state, data);
      }
      return;
    }
    if (response.status >= 500) {
      return retrySoon(state, "The server failed to save this draft (an error on its side, not your connection).");
    }
    var message = (data && typeof data.message === "string" && data.message) ||
      ("the server refused it (" + response.status + ").");
    if (!/^Not saved/.test(message)) { message = "Not saved: " + message; }
    if (response.status === 409 && data && (data.error || data.code) === "changed_elsewhere") {
      if (state.shown) { say(state, ""); showConflict(state); }
      else { say(state, "changed in another tab; open it to choose which to keep."); }
      return;
    }
    say(state, message);
    if (response.status === 409) {
      // The page is out of date (a phase locked, the session closed), even when the refused save
      // was an item the judge has moved on from: say so where the judge looks, then reload.
      if (!state.shown && current) { say(current, message); }
      try { window.sessionStorage.setItem(NOTICE_KEY, message); } catch (error) { /* private mode */ }
      setTimeout(function () { reloadOnPurpose(); }, 1500);
    }
  }
  // A save of an item the judge has moved on from (one key per decision moves at once) is
  // confirmed in the bar of the item shown, while that item has nothing of its own to say: not
  // while a change of it waits for its save, whose answer is what the bar is about to give.
  function confirmLeftBehind(state, data) {
    if (!current || current === state || current.dirty || current.status.textContent ||
        current.when.textContent) { return; }
    current.status.textContent = "Item " + state.code + " saved (" + savedAt(data) + ").";
  }
  // Another tab saved this item since this page was fetched: the judge chooses which stays.
  function showConflict(state) {
    var box = state.conflict;
    box.textContent = "Changed in another tab. ";
    function button(text, action) {
      var element = document.createElement("button");
      element.type = "button";
      element.textContent = text;
      element.addEventListener("click", action);
      box.appendChild(element);
      box.appendChild(document.createTextNode(" "));
      return element;
    }
    var keep = button("Keep mine", function () { box.hidden = true; box.textContent = ""; save(state, {overwrite: true}); });
    button("Load theirs", function () { reloadOnPurpose(); });
    box.hidden = false;
    keep.focus();
  }
  // A preview keeps the item's choice and reason in this page only (moving between items shows
  // them again) and says so: nothing of a preview reaches the server.
  function keepInPage(state) {
    var checked = state.form.querySelector("input[name=verdict]:checked");
    keptInPage[state.code] = {verdict: checked ? checked.value : "",
                              reason: state.form.querySelector("textarea[name=reason]").value};
    state.dirty = false;
    say(state, KEPT_IN_PAGE);
  }
  function showKept(state) {
    var kept = keptInPage[state.code];
    if (!state.preview || !kept) { return; }
    state.form.querySelectorAll("input[name=verdict]").forEach(function (input) {
      input.checked = input.value === kept.verdict;
    });
    state.form.querySelector("textarea[name=reason]").value = kept.reason;
    state.chosen = kept.verdict || null;
    say(state, KEPT_IN_PAGE);
  }
  function saveSoon(state) {
    state.dirty = true;
    clearTimeout(state.timer);
    state.retryDelay = 0;
    state.timer = setTimeout(function () { save(state); }, 800);
  }
  // Leaving the page (a link, closing the tab) while a save is still retrying or a change waits
  // for its save would lose it without a word: the browser asks first.
  // A form sent (it saves, or locks) and the page's own reloads (load theirs, a refused stale
  // page) leave on purpose.
  var leavingOnPurpose = false;
  document.addEventListener("submit", function () { leavingOnPurpose = true; });
  function reloadOnPurpose() { leavingOnPurpose = true; window.location.reload(); }
  window.addEventListener("beforeunload", function (event) {
    if (leavingOnPurpose) { return; }
    if (Object.keys(unconfirmed).length || (current && current.dirty)) {
      if (current && current.dirty) { save(current); }
      event.preventDefault();
      event.returnValue = "";
    }
  });
  function allSaved() {
    var codes = Object.keys(inflight);
    return Promise.all(codes.map(function (code) { return inflight[code]; }));
  }

  // --- The progress bar: the items the server's pages say are answered, and those answered here --
  // A set of codes, not a count: a page fetched ahead may or may not include the last answer, and
  // an item answered again is still one item.

  var answeredCodes = {};  // code -> true, in the phase shown (a lock reloads the page)
  function learnAnswered() {
    var box = document.querySelector(".bar-progress");
    if (!box) { return; }
    (box.dataset.answeredCodes || "").split(" ").forEach(function (code) {
      if (code) { answeredCodes[code] = true; }
    });
  }
  function bumpProgress(state) {
    if (!hasVerdict(state) || answeredCodes[state.code]) { return; }
    answeredCodes[state.code] = true;
    showProgress();
  }
  function showProgress() {
    var box = document.querySelector(".bar-progress");
    if (!box) { return; }
    var total = parseInt(box.dataset.total, 10);
    var answered = Math.min(total, Object.keys(answeredCodes).length);
    box.querySelector("progress").value = answered;
    box.querySelector(".answered-text").textContent = answered + " of " + total + " answered";
    var median = parseFloat(box.dataset.median);
    var left = box.querySelector(".time-left");
    if (left && median > 0) {
      var seconds = (total - answered) * median;
      left.textContent = seconds <= 0 ? "" : seconds < 60 ? " · under a minute left" :
        " · about " + Math.round(seconds / 60) + " min left";
    }
  }

  // --- A verdict only on purpose: never a held key's repeats, a bounce or a double click ----------
  // A verdict key (or a click on a verdict) counts only once the item's copy has been on screen
  // for the session's minimum (frozen with its protocol). One sooner is dropped, never queued: the
  // judge is told, and the wait starts again, so a burst of keys answers nothing past the item it
  // began on. #item-top[data-keys-ready] says when keys count (for the tests and the bench).

  var TOO_SOON = "Not taken: the copy had only just appeared. Read it, then choose again.";
  var HELD = "Not taken: a held key answers once. Release it, read this copy, then choose.";
  function shownLongEnough(state) {
    return state.shownAt !== null && Date.now() - state.shownAt >= state.minShownMs;
  }
  function waitBeforeKeys(state) {
    clearTimeout(state.readyTimer);
    delete state.top.dataset.keysReady;
    state.readyTimer = setTimeout(function () { state.top.dataset.keysReady = "1"; }, state.minShownMs);
  }
  // The wait starts when the item's copy is in its (visible) frame: both copies, on a pair.
  function startShowing(state, frames) {
    var waiting = frames.length;
    frames.forEach(function (frame) {
      whenLoaded(frame, function () {
        waiting -= 1;
        if (current !== state || waiting > 0) { return; }
        state.shownAt = Date.now();
        waitBeforeKeys(state);
      });
    });
  }
  function dropTooSoon(state, text) {
    if (state.shownAt !== null) { state.shownAt = Date.now(); waitBeforeKeys(state); }
    say(state, text);
  }

  // --- The copy frame: sized to its lines so the page scrolls, or a focusable box ---------------

  function frameMode() {
    // Wrapping is on by default on a small screen (a line clipped at 390 px hid the code), until
    // the judge chooses either way.
    var wrap = remembered(WRAP_KEY);
    return {wrap: wrap === null ? small() : wrap === "1", text: remembered(TEXT_KEY) === "1"};
  }
  function frameSrc(frame, mode) {
    var base = frame.dataset.frameUrl || frame.getAttribute("src").split("#")[0];
    if (mode.text && frame.dataset.textLines) { return base + "#text"; }
    if (mode.wrap) { return base + "#wrap"; }
    return base;
  }
  function sizeFrame(frame) {
    var mode = frameMode();
    var textView = mode.text && frame.dataset.textLines;
    var lines = parseInt(textView ? frame.dataset.textLines : frame.dataset.lines, 10);
    var linePx = parseFloat(frame.dataset.linePx) || DEFAULT_LINE_PX;
    var padPx = parseFloat(frame.dataset.padPx) || DEFAULT_PAD_PX;
    var wanted = frameSrc(frame, mode);
    if (frame.getAttribute("src") !== wanted) {
      // Only a loaded frame takes a new fragment in place: set while it still loads (a phone's
      // first page wants #wrap at once), Chromium could load the whole copy a second time.
      whenLoaded(frame, function () {
        if (frame.getAttribute("src") !== wanted) { frame.setAttribute("src", wanted); }
      });
    }
    var proseHeight = textView || frame.dataset.boxed === "1" ? null : proseHeightOf(frame);
    if (frame.dataset.boxed === "1") {
      // A pair's copy: always its own box (two copies side by side cannot both scroll with the
      // page), reached with Tab, scrolled inside by the arrow keys and Space.
      frame.style.height = "";
      frame.classList.add("boxed");
      frame.setAttribute("tabindex", "0");
    } else if (lines > 0 && !(mode.wrap && !textView)) {
      // As tall as the copy: the page scrolls (Space, Page Down) and the frame never does.
      frame.style.height = Math.ceil(lines * linePx + padPx) + "px";
      frame.classList.remove("boxed");
      frame.setAttribute("tabindex", "-1");
    } else if (proseHeight) {
      // Rendered markdown, as tall as the height estimated at opening for this width (erring
      // tall): the page scrolls through it. Tab still moves into it, in case it runs longer.
      frame.style.height = proseHeight + "px";
      frame.classList.remove("boxed");
      frame.setAttribute("tabindex", "0");
    } else {
      // Wrapped lines have no known height: a box of its own, reached and left with Tab. (A
      // sandboxed frame without scripts cannot hand Esc back to the page; Tab always leaves.)
      frame.style.height = "";
      frame.classList.add("boxed");
      frame.setAttribute("tabindex", "0");
    }
    document.querySelectorAll("[data-frame-toggle]").forEach(function (button) {
      button.setAttribute("aria-pressed", String(button.dataset.frameToggle === "wrap" ? mode.wrap : mode.text));
    });
    var note = document.getElementById("frame-note");
    if (note && !pairMode) {
      note.textContent = frame.classList.contains("boxed") ?
        "The copy is in its own box: Tab moves into it (then the arrow keys and Space scroll it) and Tab leaves the copy again." :
        proseHeight ? "The copy scrolls with the page: Space and Page Down read on. Tab also moves into it (then the arrow keys and Space scroll it) and Tab leaves it again." :
        "The copy scrolls with the page: Space and Page Down read on.";
    }
  }
  // A markdown frame's height at its width, from the two heights estimated at opening (at
  // data-prose-ch's two measures, in `ch` of the frame's font): a block of n characters takes
  // about n / c + 1/2 lines at c characters a line, so the height is a + b / c through the two.
  var chProbe = null;
  function chPx() {
    if (!chProbe) {
      chProbe = document.createElement("div");
      chProbe.className = "ch-probe";
      chProbe.setAttribute("aria-hidden", "true");
      document.body.appendChild(chProbe);
    }
    return chProbe.getBoundingClientRect().width / 100;
  }
  function proseHeightOf(frame) {
    var px = (frame.dataset.prosePx || "").split(" ").map(Number);
    var ch = (frame.dataset.proseCh || "").split(" ").map(Number);
    if (px.length !== 2 || ch.length !== 2 || !(px[0] > 0 && px[1] > 0 && ch[0] > ch[1] && ch[1] > 0)) { return null; }
    var unit = chPx();
    var width = frame.clientWidth - 16;  // the frame body's padding, 8 px a side
    if (!(unit > 0) || !(width > 0)) { return null; }
    var columns = Math.min(ch[0], width / unit);
    if (columns >= ch[0]) { return px[0]; }
    var b = (px[1] - px[0]) / (1 / ch[1] - 1 / ch[0]);
    var a = px[0] - b / ch[0];
    return Math.ceil(a + b / Math.max(columns, 4));
  }

  // --- Where the keys go: into the copy's frame, the verdict keys are off ------------------------
  // A click or Tab into the frame gives it the keys (nothing runs in it to hand them back): the
  // bar says so until Tab, Shift+Tab or a click outside brings them back.
  var IN_COPY = "Keys go to the copy: its arrows, Space and End scroll it; the verdict keys are off. Tab or Shift+Tab (or a click outside the copy) brings them back.";
  function focusInCopy() {
    var active = document.activeElement;
    return !!active && active.tagName === "IFRAME" && shownFrames().indexOf(active) >= 0;
  }
  function showWhereKeysGo() {
    var note = document.getElementById("focus-note");
    if (!note) { return; }
    var inCopy = focusInCopy();
    if (note.hidden === !inCopy) { return; }
    note.hidden = !inCopy;
    note.textContent = inCopy ? IN_COPY : "";
  }
  // The window's blur comes as the focus leaves for the frame (document.activeElement is then
  // the frame); its focus, and a focus anywhere in the page, as it comes back.
  window.addEventListener("blur", function () { setTimeout(showWhereKeysGo, 0); });
  window.addEventListener("focus", showWhereKeysGo);
  document.addEventListener("focusin", showWhereKeysGo);
  function shownFrame() { return copyArea.querySelector("iframe.copy-frame"); }
  function shownFrames() { return Array.prototype.slice.call(copyArea.querySelectorAll("iframe.copy-frame")); }

  // --- Fetching ahead and showing an item without a page load ----------------------------------

  function fetchPage(url, code) {
    // A page fetched while its own item's save is in flight would show the old draft: wait.
    var before = (code && inflight[code]) || Promise.resolve();
    return before.then(function () {
      return fetch(url, {credentials: "same-origin", headers: {"Accept": "text/html"}});
    }).then(function (response) {
      if (!response.ok || response.redirected) { throw new Error("not an item page"); }
      return response.text();
    }).then(function (html) {
      var page = new DOMParser().parseFromString(html, "text/html");
      if (!page.getElementById("item-top") || !page.getElementById("verdict-form")) { throw new Error("not an item page"); }
      return page;
    });
  }
  function preloadFrame(src, into) {
    var frame = document.createElement("iframe");
    frame.setAttribute("sandbox", "");
    frame.setAttribute("loading", "eager");
    frame.setAttribute("tabindex", "-1");
    frame.setAttribute("aria-hidden", "true");
    frame.className = "copy-frame-next";
    frame.hidden = true;
    frame.loaded = false;
    frame.addEventListener("load", function () { frame.loaded = true; });
    frame.setAttribute("src", src);
    into.appendChild(frame);
    return frame;
  }
  function prefetchNext(state) {
    if (!state.nextIsItem || !state.nextUrl || prefetched[state.nextUrl]) { return; }
    var entry = {page: null, frames: {}};
    // The frame can start at once when the server names it; otherwise when the page is parsed
    // (a pair's two frames always then: their codes are the next page's).
    if (state.nextFrameUrl && !pairMode) { entry.frames.copy = preloadFrame(frameSrcFor(state.nextFrameUrl), copyArea); }
    // The next item's own save may still be in flight (the judge went back from it): its page
    // waits for that save, or it would show the old draft and a stale revision.
    entry.page = fetchPage(state.nextUrl, codeOf(state.nextUrl)).then(function (page) {
      sideNames().forEach(function (side) {
        var spec = specOf(page, side);
        if (!entry.frames[side] && spec) {
          entry.frames[side] = preloadFrame(frameSrcFor(spec.dataset.frameUrl || spec.getAttribute("src")), containerOf(side));
        }
      });
      return page;
    });
    entry.page.catch(function () { if (prefetched[state.nextUrl] === entry) { delete prefetched[state.nextUrl]; } });
    prefetched[state.nextUrl] = entry;
  }
  function frameSrcFor(url) {
    var mode = frameMode();
    return mode.wrap && !mode.text ? url + "#wrap" : url;  // #text only once the page says markdown
  }
  // Forget pages fetched ahead (all, or the one of `only`), and their hidden frames.
  function dropPrefetched(only) {
    Object.keys(prefetched).forEach(function (url) {
      if (only && url !== only) { return; }
      var entry = prefetched[url];
      Object.keys(entry.frames).forEach(function (side) {
        var frame = entry.frames[side];
        if (frame && frame.parentNode) { frame.parentNode.removeChild(frame); }
      });
      delete prefetched[url];
    });
  }

  function show(url, push) {
    if (navigating) { return; }
    navigating = true;
    var entry = prefetched[url];
    var page = entry ? entry.page : fetchPage(url, codeOf(url));
    page.then(function (doc) {
      if (push) { window.history.pushState({item: url}, "", url); }
      swapIn(doc, entry && entry.frames, url);
      if (prefetched[url] === entry) { delete prefetched[url]; }  // its frame is the one shown now
      navigating = false;
      dropPrefetched(null);
      prefetchNext(current);
    }, function () {
      // Not an item page any more (a lock, a reveal, the session closed): load it as a page.
      allSaved().then(function () { window.location.assign(url); });
    });
  }
  function codeOf(url) {
    var match = /\/i\/([^/]+)\/?$/.exec(url);
    return match ? match[1] : null;
  }
  function swapIn(doc, readyFrames, url) {
    var leaving = current;
    stopClock(leaving);
    leaving.shown = false;
    var newTop = document.importNode(doc.getElementById("item-top"), true);
    var newBar = document.importNode(doc.getElementById("item-bar"), true);
    document.getElementById("item-top").replaceWith(newTop);
    document.getElementById("item-bar").replaceWith(newBar);
    var shown = sideNames().map(function (side) {
      var spec = specOf(doc, side);
      var container = containerOf(side);
      var old = container.querySelector("iframe.copy-frame");
      var ready = readyFrames && readyFrames[side];
      var frame = ready && ready.parentNode === container ? ready : null;
      if (frame) {
        // The frame that has been loading all along: given the page's attributes, then shown.
        ["title", "aria-describedby", "data-frame-url", "data-lines", "data-text-lines", "data-line-px", "data-pad-px", "data-prose-px", "data-prose-ch", "data-side", "data-boxed"].forEach(function (name) {
          if (spec.hasAttribute(name)) { frame.setAttribute(name, spec.getAttribute(name)); }
        });
        frame.removeAttribute("aria-hidden");
        frame.className = "copy-frame";
        frame.hidden = false;
        old.remove();
      } else {
        frame = document.importNode(spec, true);
        frame.loaded = false;
        frame.addEventListener("load", function () { frame.loaded = true; });
        old.replaceWith(frame);
      }
      if (pairMode) {
        // The side's label names the new copy's code.
        var label = container.querySelector(".side-label");
        var next = doc.querySelector('#copy-area .pair-side[data-side="' + side + '"] .side-label');
        if (label && next) { label.replaceWith(document.importNode(next, true)); }
      }
      return frame;
    });
    document.title = doc.title;
    start();
    if (url) { current.url = new URL(url, window.location.href).pathname; }
    // Its save may have been stored before this item came in (its answer then went to its own bar).
    if (leaving.lastSaved && !unconfirmed[leaving.code]) { confirmLeftBehind(leaving, leaving.lastSaved); }
    window.scrollTo(0, 0);
    current.top.querySelector("h1").focus({preventScroll: true});
    announceShown(shown);
  }
  // For the bench and the tests: when the item shown has its copy (a pair, both) loaded.
  function announceShown(frames) {
    var waiting = frames.length;
    var state = current;
    frames.forEach(function (frame) {
      whenLoaded(frame, function () {
        waiting -= 1;
        if (waiting === 0 && current === state) {
          document.dispatchEvent(new CustomEvent("blindjudge:item-shown", {detail: {code: state.code}}));
        }
      });
    });
  }
  function whenLoaded(frame, done) {
    if (frame.loaded) { done(); return; }
    var called = false;
    function once() {
      if (called) { return; }
      called = true;
      frame.loaded = true;
      done();
    }
    frame.addEventListener("load", once, {once: true});
    // The page's own load comes after its frames': the first item's frame may have loaded before
    // this script ran (its load event already gone), and is loaded by then.
    if (document.readyState !== "complete") { window.addEventListener("load", once, {once: true}); }
  }

  // Forward (1) or back (-1), saving what is there first (never waiting for it, except before
  // leaving for a page that counts the saves: the review).
  function move(direction) {
    var state = current;
    var url = direction > 0 ? state.nextUrl : state.previousUrl;
    if (!url || navigating) { return; }
    if (state.dirty) { save(state); }
    if (direction > 0 && !state.nextIsItem) {
      navigating = true;
      if (!state.preview) { say(state, "", "Saving…"); }
      allSaved().then(function () { window.location.assign(url); });
      return;
    }
    show(url, true);
  }

  // --- The page's controls -----------------------------------------------------------------------

  function start() {
    current = itemState();
    var state = current;
    showKept(state);
    learnAnswered();
    if (state.preview && hasVerdict(state)) { answeredCodes[state.code] = true; }  // kept in the page
    showProgress();
    startShowing(state, shownFrames());
    state.form.addEventListener("change", function (event) {
      if (event.target.name === "verdict") {
        if (!shownLongEnough(state)) {
          // A click that came too soon (the second of a double click, a tap meant for the item
          // before): the choice goes back to what it was.
          state.form.querySelectorAll("input[name=verdict]").forEach(function (input) {
            input.checked = input.value === state.chosen;
          });
          dropTooSoon(state, TOO_SOON);
          return;
        }
        state.chosen = event.target.value;
        bumpProgress(state);
        if (state.oneKey && !state.readOnly) {
          // One tap or click per decision, as one key: recorded, and the next item shown
          // (a mouse or phone judge needed two actions per item).
          save(state);
          move(1);
          return;
        }
      }
      saveSoon(state);
    });
    state.form.querySelector("textarea[name=reason]").addEventListener("input", function () { saveSoon(state); });
    state.form.addEventListener("submit", function (event) {
      stampTime(state);
      // Forward with the button (or Enter in a field, whose default is the forward button):
      // the same instant move as the keys; other buttons post the form as ever.
      var go = event.submitter ? event.submitter.value : "next";
      if (state.preview) {
        // Nothing is posted from a preview: the buttons keep the choice here and move.
        event.preventDefault();
        save(state);
        if (go === "next" || go === "review") { move(1); } else if (go === "previous") { move(-1); }
        return;
      }
      if (go === "next" && state.nextIsItem) { event.preventDefault(); save(state); move(1); }
      else if (go === "previous" && state.previousUrl) { event.preventDefault(); save(state); move(-1); }
    });
    var panel = document.getElementById("task-panel");
    var wanted = remembered(TASK_KEY);
    if (panel && wanted && state.top.dataset.position !== "1") { panel.open = wanted === "open"; }
    if (panel) {
      // Only the judge's own opening or closing is remembered (a click, or Enter or Space, on
      // the summary), not the toggle event a panel rendered open fires by itself.
      panel.querySelector("summary").addEventListener("click", function () {
        setTimeout(function () { remember(TASK_KEY, panel.open ? "open" : "closed"); }, 0);
      });
    }
    document.querySelectorAll("[data-frame-toggle]").forEach(function (button) {
      button.addEventListener("click", function () {
        var wrap = button.dataset.frameToggle === "wrap";
        var mode = frameMode();
        remember(wrap ? WRAP_KEY : TEXT_KEY, (wrap ? mode.wrap : mode.text) ? "0" : "1");
        shownFrames().forEach(sizeFrame);
      });
    });
    document.querySelectorAll("[data-opens=keys-help]").forEach(function (button) {
      button.addEventListener("click", openHelp);
    });
    foldReason(state);
    shownFrames().forEach(sizeFrame);
    showWhereKeysGo();
    if (barWatch) { barWatch.disconnect(); barWatch.observe(state.form); }
    fitBar();
  }

  // On a small screen the reason sits behind a Reason button beside the choices (made here, so
  // it exists only where it works: judge.css clips the box away while the bar is .reason-folds
  // and not .reason-open, still named by its label; Tab into it unfolds it); the button says
  // when a reason is written.
  var refold = null;  // the item shown's, when the window crosses the small screen's width
  if (SMALL && SMALL.addEventListener) { SMALL.addEventListener("change", function () { if (refold) { refold(); } }); }
  function foldReason(state) {
    var area = state.form.querySelector("textarea[name=reason]");
    var choices = state.form.querySelector(".choices");
    if (!area || !choices || !state.form.querySelector("#reason-box")) { return; }
    var toggle = document.createElement("button");
    toggle.type = "button";
    toggle.className = "reason-toggle";
    toggle.setAttribute("aria-controls", "reason-box");
    toggle.setAttribute("aria-expanded", "false");
    function label() { toggle.textContent = area.value ? "Reason \u2713" : "Reason"; }
    function place() {
      var folds = small();
      state.form.classList.toggle("reason-folds", folds);
      if (folds && !toggle.parentNode) { choices.appendChild(toggle); }
      if (!folds && toggle.parentNode) { toggle.remove(); state.openReason(false); }
    }
    state.openReason = function (open) {
      state.form.classList.toggle("reason-open", open);
      toggle.setAttribute("aria-expanded", String(open));
      fitBar();
    };
    toggle.addEventListener("click", function () {
      var open = toggle.getAttribute("aria-expanded") !== "true";
      state.openReason(open);
      if (open) { area.focus(); } else { label(); }
    });
    area.addEventListener("input", label);
    // Folded, the box is out of sight but still in the Tab order: reached by Tab, it unfolds.
    area.addEventListener("focus", function () {
      if (state.form.classList.contains("reason-folds") && toggle.getAttribute("aria-expanded") !== "true") {
        state.openReason(true);
      }
    });
    label();
    place();
    refold = place;
  }

  // The bar is fixed at the bottom: the page is padded by its height so nothing hides under it.
  function fitBar() {
    var bar = document.getElementById("verdict-form");
    document.documentElement.style.setProperty("--bar-height", bar.offsetHeight + "px");
  }
  var barWatch = window.ResizeObserver ? new ResizeObserver(fitBar) : null;
  window.addEventListener("resize", function () {
    fitBar();
    if (current) { shownFrames().forEach(sizeFrame); }
  });

  function openHelp() { if (helpDialog && !helpDialog.open) { helpDialog.showModal(); } }

  function isTyping(target) {
    return target && (target.tagName === "TEXTAREA" || target.tagName === "SELECT" ||
      (target.tagName === "INPUT" && target.type !== "radio" && target.type !== "checkbox"));
  }
  document.addEventListener("keydown", function (event) {
    if (event.defaultPrevented || event.ctrlKey || event.metaKey || event.altKey || !current) { return; }
    if (helpDialog && helpDialog.open) { return; }  // the dialog's own keys (Esc closes it)
    var target = event.target;
    // The task flag's form (flag.js) has its own keys: nothing typed or pressed in it answers.
    if (target && target.closest && target.closest("#task-flag-form")) { return; }
    if (isTyping(target)) {
      if (event.key === "Escape") {
        if (target.name === "reason" && current.openReason && small()) { current.openReason(false); }
        target.blur();
        current.top.querySelector("h1").focus({preventScroll: true});
        event.preventDefault();
      }
      return;
    }
    var isRadio = target && target.tagName === "INPUT" && target.type === "radio";
    if (event.key === "ArrowUp" || event.key === "ArrowDown" || event.key === "ArrowLeft" || event.key === "ArrowRight") {
      // In a radio group the arrows would change the verdict: they scroll the page instead.
      if (isRadio) {
        event.preventDefault();
        if (event.key === "ArrowUp" || event.key === "ArrowDown") { window.scrollBy(0, event.key === "ArrowUp" ? -40 : 40); }
      }
      return;
    }
    if (event.key === "?") { openHelp(); event.preventDefault(); return; }
    if ((event.key === " " || event.key === "PageDown" || event.key === "PageUp") && !isRadio &&
        !(target && (target.tagName === "BUTTON" || target.tagName === "A" || target.tagName === "SUMMARY"))) {
      // A page at a time, less the bar fixed over the window's bottom and a line of overlap:
      // the browser's own step would pass lines by hidden under the bar.
      var bar = document.getElementById("verdict-form");
      var step = Math.max(40, window.innerHeight - (bar ? bar.offsetHeight : 0) - 40);
      var up = event.key === "PageUp" || (event.key === " " && event.shiftKey);
      window.scrollBy(0, up ? -step : step);
      event.preventDefault();
      return;
    }
    if (target && target.tagName === "IFRAME") {
      // The copy has the keys (the bar says so): a click can leave them on the frame itself, not
      // in its document, and they come here; the verdicts and moves wait until Tab or a click
      // outside the copy.
      return;
    }
    if (event.repeat && (event.key === "Enter" || event.key === "n" || event.key === "j")) {
      // A held Enter or n would fly past items unseen; moving on is one press at a time.
      event.preventDefault();
      return;
    }
    if (event.key === "Enter") {
      var tag = target ? target.tagName : "";
      if (tag === "BUTTON" || tag === "A" || tag === "SUMMARY" || tag === "IFRAME") { return; }  // their own action
      event.preventDefault();
      move(1);
      return;
    }
    var key = event.key.length === 1 ? event.key.toLowerCase() : event.key;
    var radio = null;
    current.form.querySelectorAll("input[name=verdict]").forEach(function (input) {
      if (input.dataset.key === key) { radio = input; }
    });
    if (radio) {
      event.preventDefault();
      if (radio.disabled || current.readOnly || navigating) { return; }
      if (event.repeat) { dropTooSoon(current, HELD); return; }
      if (!shownLongEnough(current)) { dropTooSoon(current, TOO_SOON); return; }
      radio.checked = true;  // never focused: the arrows stay the page's
      current.chosen = radio.value;
      bumpProgress(current);
      if (current.oneKey) { save(current); move(1); } else { saveSoon(current); }
      return;
    }
    if (key === "n" || key === "j") { event.preventDefault(); move(1); }
    else if (key === "k" || key === "b" || key === "Backspace") { event.preventDefault(); move(-1); }
  });

  // A task flag saved (flag.js): the pages fetched ahead show the task's flag as it was, so they
  // are fetched again.
  document.addEventListener("blindjudge:flag-saved", function () {
    if (!current) { return; }
    dropPrefetched(null);
    prefetchNext(current);
  });

  window.addEventListener("popstate", function () {
    // Back and forward through the items shown here: that item, as it is now.
    if (codeOf(window.location.pathname)) { navigating = false; show(window.location.pathname, false); }
    else { window.location.reload(); }
  });
  // The parent ignores anything the copy frame posts (it cannot run scripts anyway).
  window.addEventListener("message", function (event) { event.stopImmediatePropagation(); }, true);

  shownFrames().forEach(function (frame) {
    frame.loaded = document.readyState === "complete";
    frame.addEventListener("load", function () { frame.loaded = true; });
  });
  start();
  window.history.replaceState({item: window.location.pathname}, "", window.location.href);
  try {
    var notice = window.sessionStorage.getItem(NOTICE_KEY);
    if (notice) { window.sessionStorage.removeItem(NOTICE_KEY); say(current, notice); }
  } catch (error) { /* private mode: nothing kept */ }
  // Fetch the next item once this one's copy is in, so the two never compete.
  if (document.readyState === "complete") { prefetchNext(current); }
  else { window.addEventListener("load", function () { prefetchNext(current); }, {once: true}); }
})();
