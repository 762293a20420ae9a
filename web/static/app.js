// Cardex UI progressive enhancement. Every page works without this file:
// the search form is a GET form, facets are links, the publish status page
// has a refresh link. Nothing here builds HTML from strings: updates are
// whole elements taken from a server-rendered page parsed by DOMParser
// (which never runs scripts), so the server's escaping is all there is.
(function () {
  "use strict";

  function fetchPage(url, signal) {
    return fetch(url, { signal: signal, credentials: "same-origin", headers: { Accept: "text/html" } })
      .then(function (r) { return r.ok ? r.text() : Promise.reject(new Error("HTTP " + r.status)); })
      .then(function (t) { return new DOMParser().parseFromString(t, "text/html"); });
  }

  // Search as you type: refresh the results and facets in place, keep the
  // URL shareable with history.replaceState.
  var form = document.querySelector("form[data-live-search]");
  if (form) {
    var timer = 0, inflight = null;
    var update = function () {
      var params = new URLSearchParams(new FormData(form));
      ["q", "sort"].forEach(function (k) { if (params.get(k) === "") params.delete(k); });
      var qs = params.toString();
      var url = "/" + (qs ? "?" + qs : "");
      if (inflight) inflight.abort();
      inflight = new AbortController();
      fetchPage(url, inflight.signal).then(function (doc) {
        var fresh = doc.getElementById("catalogue"), old = document.getElementById("catalogue");
        if (!fresh || !old) return;
        old.replaceWith(document.adoptNode(fresh));
        document.title = doc.title;
        history.replaceState(null, "", url);
      }).catch(function () { /* keep the current results; the form still submits */ });
    };
    form.addEventListener("input", function () {
      clearTimeout(timer);
      timer = setTimeout(update, 200);
    });
  }

  // Copy buttons are hidden until this script can make them work.
  document.querySelectorAll("button[data-copy]").forEach(function (b) {
    var target = document.querySelector(b.getAttribute("data-copy"));
    if (!target || !navigator.clipboard) return;
    b.hidden = false;
    b.addEventListener("click", function () {
      navigator.clipboard.writeText(target.textContent).then(function () { b.textContent = "Copied"; });
    });
  });

  // The publish status page refreshes itself until the first fetch is
  // recorded (a bounded number of times; the refresh link stays).
  var box = document.querySelector("[data-refresh]");
  if (box) {
    var every = Math.max(1, parseInt(box.getAttribute("data-refresh"), 10) || 3) * 1000, tries = 0;
    var poll = function () {
      if (++tries > 200) return;
      fetchPage(location.href).then(function (doc) {
        var fresh = doc.getElementById(box.id);
        if (!fresh) return;
        var next = document.adoptNode(fresh);
        box.replaceWith(next);
        box = next;
        if (box.hasAttribute("data-refresh")) setTimeout(poll, every);
      }).catch(function () { setTimeout(poll, every * 2); });
    };
    setTimeout(poll, every);
  }

  // Select all on the review queue: a header checkbox that picks every
  // row of the page (hidden without this script; each row's own box
  // works either way).
  var pickAll = document.getElementById("pick-all");
  var bulk = document.getElementById("bulk");
  if (pickAll && bulk) {
    var rows = function () { return Array.prototype.slice.call(bulk.querySelectorAll("input[type=checkbox][name=agent]")); };
    var sync = function () {
      var picked = rows().filter(function (c) { return c.checked; }).length;
      pickAll.checked = picked > 0 && picked === rows().length;
      pickAll.indeterminate = picked > 0 && picked < rows().length;
    };
    pickAll.hidden = false;
    pickAll.addEventListener("change", function () {
      rows().forEach(function (c) { c.checked = pickAll.checked; });
      sync();
    });
    bulk.addEventListener("change", function (ev) { if (ev.target !== pickAll) sync(); });
    sync();
  }
})();
