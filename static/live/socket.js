// One live socket with reconnection: backoff with jitter after a drop (1 s, 2 s, 4 s … 15 s), a
// ping every 25 s (the server counts the page as connected while it pings), and a re-read of
// state on every (re)connection, when the page becomes visible again and when the network returns.
// Events are hints: the server sends the page's full state on every connection, so a page that
// missed events while the socket was down catches up; correctness never rests on one event.
(function () {
  "use strict";
  var PING_MS = 25000;
  var MAX_DELAY_MS = 15000;
  var CLOSE_REMOVED = 4403;
  var CLOSE_TOO_MANY = 4429;  // too many sockets opened from this address: wait the longest delay

  window.blindjudgeLive = function (path, handlers) {
    var socket = null;
    var attempt = 0;
    var pingTimer = null;
    var retryTimer = null;
    var stopped = false;

    function report(status) {
      if (handlers.status) { handlers.status(status); }
    }
    function send(frame) {
      if (socket && socket.readyState === WebSocket.OPEN) { socket.send(JSON.stringify(frame)); }
    }
    function connect() {
      clearTimeout(retryTimer);
      if (stopped || (socket && socket.readyState <= WebSocket.OPEN)) { return; }
      var scheme = window.location.protocol === "https:" ? "wss://" : "ws://";
      socket = new WebSocket(scheme + window.location.host + path);
      socket.addEventListener("open", function () {
        attempt = 0;
        report("live");
        clearInterval(pingTimer);
        pingTimer = setInterval(function () { send({type: "ping"}); }, PING_MS);
      });
      socket.addEventListener("message", function (event) {
        var frame;
        try { frame = JSON.parse(event.data); } catch (error) { return; }
        if (frame && typeof frame.type === "string") { handlers.message(frame); }
      });
      socket.addEventListener("close", function (event) {
        clearInterval(pingTimer);
        if (stopped || event.code === CLOSE_REMOVED) { stopped = true; report("stopped"); return; }
        report("reconnecting");
        if (event.code === CLOSE_TOO_MANY) { attempt = Math.max(attempt, 4); }
        var delay = Math.min(MAX_DELAY_MS, 1000 * Math.pow(2, attempt)) * (0.5 + Math.random() / 2);
        attempt += 1;
        retryTimer = setTimeout(connect, delay);
      });
    }
    document.addEventListener("visibilitychange", function () {
      if (document.visibilityState === "visible") { send({type: "refresh"}); connect(); }
    });
    window.addEventListener("online", function () { attempt = 0; connect(); });
    connect();
    return {
      stop: function () { stopped = true; clearTimeout(retryTimer); if (socket) { socket.close(); } }
    };
  };
})();
