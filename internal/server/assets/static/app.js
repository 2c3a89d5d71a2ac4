// Keyboard shortcuts of the review workbench. In the queue: j/k move,
// Enter opens the group. On a group: s, d, r, u choose same, different,
// related, unsure and record it (r first asks for the relation kind:
// choose it, then press Enter); n opens the next group of the queue.
// Keys typed into a text field are left alone, but Escape leaves it.
(function () {
  "use strict";
  function typing(e) {
    var t = e.target;
    return t && (t.tagName === "INPUT" || t.tagName === "TEXTAREA" || t.tagName === "SELECT");
  }
  var rows = Array.prototype.slice.call(document.querySelectorAll("#queue tr.row"));
  var cur = -1;
  function select(i) {
    if (!rows.length) return;
    if (cur >= 0) rows[cur].classList.remove("current");
    cur = Math.max(0, Math.min(rows.length - 1, i));
    rows[cur].classList.add("current");
    rows[cur].scrollIntoView({ block: "nearest" });
    try { sessionStorage.setItem("pg-queue", JSON.stringify(rows.map(function (r) { return r.dataset.href; }))); } catch (_) {}
  }
  if (rows.length) select(0);
  var form = document.getElementById("decide-form");
  var keys = { s: "same", d: "different", r: "related", u: "unsure" };
  function nextGroup() {
    try {
      var q = JSON.parse(sessionStorage.getItem("pg-queue") || "[]");
      var i = q.indexOf(location.pathname);
      if (i >= 0 && i + 1 < q.length) { location.href = q[i + 1]; return; }
    } catch (_) {}
    location.href = "/";
  }
  document.addEventListener("keydown", function (e) {
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    if (e.key === "Escape" && typing(e)) { e.target.blur(); return; }
    if (typing(e)) {
      if (e.key === "Enter" && form && e.target.id === "relation") { e.preventDefault(); form.requestSubmit(); }
      return;
    }
    if (rows.length) {
      if (e.key === "j") { select(cur + 1); e.preventDefault(); return; }
      if (e.key === "k") { select(cur - 1); e.preventDefault(); return; }
      if (e.key === "Enter" && cur >= 0) { location.href = rows[cur].dataset.href; return; }
    }
    if (form && keys[e.key]) {
      e.preventDefault();
      var radio = document.getElementById("decision-" + keys[e.key]);
      radio.checked = true;
      var who = document.getElementById("reviewer");
      if (who && !who.value) { who.focus(); return; }
      if (keys[e.key] === "related") { document.getElementById("relation").focus(); return; }
      form.requestSubmit();
      return;
    }
    if (e.key === "n" && form) { nextGroup(); return; }
    if (e.key === "?") {
      var h = document.getElementById("help");
      if (h) { h.remove(); return; }
      h = document.createElement("div");
      h.id = "help";
      h.textContent = "Queue: j/k move, Enter opens. Group: s same, d different, r related (then choose the kind and press Enter), u unsure, n next group. Escape leaves a text field.";
      document.body.appendChild(h);
    }
  });
})();
