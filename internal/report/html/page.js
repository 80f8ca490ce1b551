(function () {
  "use strict";
  // Filter: the box matches any text of a row; "kind:", "ns:", "action:"
  // and "risk:" words match one attribute; the selects do the same.
  var box = document.getElementById("filter");
  var sels = document.querySelectorAll("select[data-attr]");
  var rows = document.querySelectorAll(".row");
  var nodes = document.querySelectorAll(".node");
  var shown = document.getElementById("shown");
  var attrs = { kind: "kind", ns: "ns", namespace: "ns", action: "action", risk: "risk" };
  function terms() {
    var t = [];
    (box ? box.value : "").toLowerCase().split(/\s+/).forEach(function (w) {
      if (!w) return;
      var i = w.indexOf(":");
      if (i > 0 && attrs[w.slice(0, i)]) t.push([attrs[w.slice(0, i)], w.slice(i + 1)]);
      else t.push(["text", w]);
    });
    sels.forEach(function (s) { if (s.value) t.push([s.getAttribute("data-attr"), "=" + s.value.toLowerCase()]); });
    return t;
  }
  function matches(el, t) {
    for (var i = 0; i < t.length; i++) {
      var a = t[i][0], w = t[i][1];
      var v = (a === "text" ? el.getAttribute("data-text") : el.getAttribute("data-" + a)) || "";
      v = v.toLowerCase();
      if (w.charAt(0) === "=") {
        if ((" " + v + " ").indexOf(" " + w.slice(1) + " ") < 0) return false;
      } else if (v.indexOf(w) < 0) return false;
    }
    return true;
  }
  function apply() {
    var t = terms(), n = 0;
    rows.forEach(function (r) { var ok = matches(r, t); r.hidden = !ok; if (ok) n++; });
    nodes.forEach(function (g) { g.classList.toggle("dim", t.length > 0 && !matches(g, t)); });
    document.querySelectorAll(".section").forEach(function (s) {
      var any = s.querySelector(".row:not([hidden])");
      s.hidden = !any && s.querySelector(".row") !== null;
    });
    if (shown) shown.textContent = n + " of " + rows.length + " shown";
  }
  if (box) box.addEventListener("input", apply);
  sels.forEach(function (s) { s.addEventListener("change", apply); });
  apply();

  // Zoom and pan the graph by its viewBox.
  var svg = document.getElementById("graph");
  if (!svg) return;
  var full = svg.getAttribute("viewBox").split(" ").map(Number);
  var vb = full.slice();
  // A small graph gets a small box (CSSOM, which the policy allows).
  var frame = svg.parentNode;
  frame.style.height = Math.max(160, Math.min(560, frame.clientWidth * full[3] / full[2] + 8)) + "px";
  function set() { svg.setAttribute("viewBox", vb.join(" ")); }
  function zoom(f, cx, cy) {
    var w = vb[2] * f, h = vb[3] * f;
    if (w < 50 || w > full[2] * 20) return;
    vb = [cx - (cx - vb[0]) * f, cy - (cy - vb[1]) * f, w, h];
    set();
  }
  function center() { return [vb[0] + vb[2] / 2, vb[1] + vb[3] / 2]; }
  svg.addEventListener("wheel", function (e) {
    e.preventDefault();
    var r = svg.getBoundingClientRect();
    var cx = vb[0] + (e.clientX - r.left) / r.width * vb[2];
    var cy = vb[1] + (e.clientY - r.top) / r.height * vb[3];
    zoom(e.deltaY < 0 ? 0.8 : 1.25, cx, cy);
  }, { passive: false });
  var drag = null;
  svg.addEventListener("mousedown", function (e) { drag = [e.clientX, e.clientY, vb[0], vb[1]]; });
  window.addEventListener("mouseup", function () { drag = null; });
  window.addEventListener("mousemove", function (e) {
    if (!drag) return;
    var r = svg.getBoundingClientRect();
    vb[0] = drag[2] - (e.clientX - drag[0]) / r.width * vb[2];
    vb[1] = drag[3] - (e.clientY - drag[1]) / r.height * vb[3];
    set();
  });
  document.getElementById("zin").addEventListener("click", function () { var c = center(); zoom(0.8, c[0], c[1]); });
  document.getElementById("zout").addEventListener("click", function () { var c = center(); zoom(1.25, c[0], c[1]); });
  document.getElementById("zfit").addEventListener("click", function () { vb = full.slice(); set(); });
  // A click on a node opens its change.
  nodes.forEach(function (g) {
    g.addEventListener("click", function () {
      var d = document.getElementById("o-" + g.getAttribute("data-key"));
      if (d) { d.open = true; d.scrollIntoView(); }
    });
  });
})();
