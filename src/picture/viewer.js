// The viewer: rebuilds each view's pictures from stored lines and edits (see
// src/picture/frames.rs), then shows one picture at a time in #board. The address
// may name where to open: #ply=K&seat=N (no seat: the first view).
(function () {
  "use strict";
  var book = JSON.parse(document.getElementById("data").textContent);
  var board = document.getElementById("board");
  var slider = document.getElementById("slider");
  var choice = document.getElementById("view");
  var plyno = document.getElementById("plyno");
  var list = document.getElementById("events");
  var view = 0, frame = 0, pictures = [], items = [];

  // A view's pictures as arrays of line numbers, built once, when first shown.
  function rebuild(v) {
    if (pictures[v]) { return pictures[v]; }
    var out = [], prev = [];
    book.views[v].frames.forEach(function (edits) {
      var cur = [];
      edits.forEach(function (e) {
        if (typeof e === "number") { cur.push(e); return; }
        for (var k = 0; k < e[1]; k++) { cur.push(prev[e[0] + k]); }
      });
      out.push(cur);
      prev = cur;
    });
    pictures[v] = out;
    return out;
  }

  // The event list of the view shown; items[f] holds the lines leading to picture f.
  function fillEvents() {
    list.textContent = "";
    items = book.plies.map(function () { return []; });
    book.views[view].events.forEach(function (ev) {
      var li = document.createElement("li");
      li.textContent = ev[1];
      li.dataset.frame = ev[0];
      list.appendChild(li);
      items[ev[0]].push(li);
    });
  }

  function show(f) {
    var old = items[frame] || [];
    old.forEach(function (li) { li.classList.remove("current"); });
    frame = Math.max(0, Math.min(book.plies.length - 1, f));
    var lines = rebuild(view)[frame];
    board.innerHTML = lines.map(function (n) { return book.lines[n]; }).join("\n");
    slider.value = frame;
    plyno.textContent = "ply " + book.plies[frame];
    var now = items[frame] || [];
    now.forEach(function (li) { li.classList.add("current"); });
    // Scroll the list only, not the page (scrollIntoView would move both).
    if (now.length) { list.scrollTop = now[0].offsetTop - list.clientHeight / 2; }
    var seat = book.views[view].seat;
    var hash = "#ply=" + book.plies[frame] + (seat === null ? "" : "&seat=" + seat);
    try { history.replaceState(null, "", hash); } catch (e) { /* some file:// pages */ }
  }

  function setView(v) {
    view = v;
    choice.value = String(v);
    fillEvents();
    show(frame);
  }

  // #ply=K&seat=N: the picture at ply K in seat N's view, if the page holds them.
  function fromHash() {
    var want = {};
    location.hash.replace(/^#/, "").split("&").forEach(function (kv) {
      var p = kv.split("=");
      want[p[0]] = p[1];
    });
    var v = book.views.findIndex(function (t) { return String(t.seat) === String(want.seat || null); });
    var f = book.plies.indexOf(Number(want.ply));
    frame = f < 0 ? 0 : f;
    setView(v < 0 ? 0 : v);
  }

  book.views.forEach(function (t, i) {
    var o = document.createElement("option");
    o.value = String(i);
    o.textContent = t.label;
    choice.appendChild(o);
  });
  choice.disabled = book.views.length < 2;
  slider.max = book.plies.length - 1;
  slider.addEventListener("input", function () { show(Number(slider.value)); });
  choice.addEventListener("change", function () { setView(Number(choice.value)); });
  list.addEventListener("click", function (e) {
    if (e.target.dataset.frame !== undefined) { show(Number(e.target.dataset.frame)); }
  });
  var steps = { first: -Infinity, prev: -1, next: 1, last: Infinity };
  Object.keys(steps).forEach(function (id) {
    document.getElementById(id).addEventListener("click", function () { step(steps[id]); });
  });
  function step(d) {
    show(d === -Infinity ? 0 : d === Infinity ? book.plies.length - 1 : frame + d);
  }
  var keys = { ArrowLeft: -1, ArrowRight: 1, Home: -Infinity, End: Infinity };
  document.addEventListener("keydown", function (e) {
    // The slider and the view list handle their own keys.
    if (!(e.key in keys) || e.target === slider || e.target === choice) { return; }
    e.preventDefault();
    step(keys[e.key]);
  });
  window.addEventListener("hashchange", fromHash);
  fromHash();
  // When the first picture was up, in ms from the start of loading: the figure the
  // README quotes, read by the browser test from the dumped page.
  document.body.dataset.ready = String(Math.round(performance.now()));
})();
