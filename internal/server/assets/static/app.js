// Keyboard shortcuts of the review workbench. In the queue: j/k move,
// Enter opens the group. On a group: s, d, r, u choose same, different,
// related, unsure and record it (r first asks for the relation kind:
// choose it, then press Enter); n opens the next group of the queue;
// p moves to the next member's "pair" box (Space ticks it) and b to the
// next relation's decision: there s, d, r, u record the decision about the
// ticked pair or that relation, not the group's. Keys typed into a text
// field or a list are left alone (Enter in a list records its form's
// decision), but Escape leaves it.
(function () {
  "use strict";
  function typing(e) {
    var t = e.target;
    if (!t) return false;
    if (t.tagName === "INPUT") return t.type !== "checkbox" && t.type !== "radio";
    if (t.classList.contains("subject-decision")) return false; // the keys choose it
    return t.tagName === "TEXTAREA" || t.tagName === "SELECT";
  }
  // subjectForm is the form of a pair or a relation that the focused
  // control belongs to (a member's pair box belongs to the pair form).
  function subjectForm(t) {
    var f = t && t.form;
    return f && f.classList.contains("subject-form") ? f : null;
  }
  // cycle focuses the element after the focused one among those the
  // selector finds, wrapping around.
  function cycle(sel) {
    var all = Array.prototype.slice.call(document.querySelectorAll(sel));
    if (!all.length) return;
    var el = all[(all.indexOf(document.activeElement) + 1) % all.length];
    el.focus();
    el.scrollIntoView({ block: "nearest" });
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
    if (e.key === "Escape" && (typing(e) || (e.target && e.target.form))) { e.target.blur(); return; }
    if (typing(e)) {
      var f = e.target.form;
      if (e.key === "Enter" && e.target.tagName === "SELECT" && f && (f === form || subjectForm(e.target))) { e.preventDefault(); f.requestSubmit(); }
      return;
    }
    var sub = subjectForm(e.target);
    if (sub && keys[e.key]) {
      e.preventDefault();
      sub.querySelector(".subject-decision").value = keys[e.key];
      var by = sub.querySelector(".subject-reviewer");
      if (by && !by.value) { by.focus(); return; }
      if (keys[e.key] === "related") { sub.querySelector(".subject-kind").focus(); return; }
      sub.requestSubmit();
      return;
    }
    if (sub && e.key === "Enter" && e.target.tagName === "SELECT") { e.preventDefault(); sub.requestSubmit(); return; }
    if (e.key === "p") { cycle(".pair-pick"); e.preventDefault(); return; }
    if (e.key === "b") { cycle(".relation-form .subject-decision"); e.preventDefault(); return; }
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
      h.textContent = "Queue: j/k move, Enter opens. Group: s same, d different, r related (then choose the kind and press Enter), u unsure, n next group. p next member's pair box (Space ticks), b next relation: there s/d/r/u decide the pair or the relation. Escape leaves a field.";
      document.body.appendChild(h);
    }
  });
})();
