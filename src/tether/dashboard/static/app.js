/* tether dashboard: read-only views over the JSON routes, kept live by server-sent events.
 *
 * Every page is drawn as a tree of h() nodes and patched into the document: an element
 * that is still wanted is kept and only its changed attributes and texts are touched, so
 * scroll positions, text selections and open tickets survive every update. Data comes
 * from the JSON routes (the browser revalidates them with their ETags: an unchanged answer
 * is a bodiless 304); a page asks again only when the server's versions say its data moved.
 */
(function () {
  "use strict";
  var page = document.getElementById("page");
  page.textContent = "";        // from here on every node in it is one this script made
  var status = null;            // the last status object (same as `tether status --json`)
  var versions = {};            // the server's data versions: store, board, events per run
  var view = { name: "", arg: "", query: {} };
  var data = {};                // per page: the last JSON answer drawn
  var csrf = null;              // for the routes that change state (the outbox's); /api/session

  // --- nodes and the in-place patch -------------------------------------------------------
  function h(tag, attrs, kids) {
    return { tag: tag, attrs: attrs || {}, kids: flat(kids, []) };
  }
  function flat(kids, out) {
    if (kids === null || kids === undefined || kids === false) return out;
    if (Array.isArray(kids)) { kids.forEach(function (k) { flat(k, out); }); return out; }
    out.push(typeof kids === "object" ? kids : String(kids));
    return out;
  }
  function keyOf(v) { return typeof v === "string" || v.attrs.key === undefined ? null : String(v.attrs.key); }
  function same(node, v) {
    if (typeof v === "string") return node.nodeType === 3;
    return node.nodeType === 1 && node.nodeName.toLowerCase() === v.tag && (node._key || null) === keyOf(v);
  }
  function create(v) {
    if (typeof v === "string") return document.createTextNode(v);
    var el = document.createElement(v.tag);
    el._key = keyOf(v);
    el._attrs = {};
    update(el, v);
    return el;
  }
  function setAttrs(el, attrs) {
    var old = el._attrs || {};
    Object.keys(old).forEach(function (name) {
      if (!(name in attrs)) { if (name.slice(0, 2) === "on") el[name] = null; else el.removeAttribute(name); }
    });
    Object.keys(attrs).forEach(function (name) {
      var value = attrs[name];
      if (name === "key" || name === "opaque" || name === "html" || name === "width") return;
      if (name.slice(0, 2) === "on") { el[name] = value; return; }
      if (name === "value") return; // set after the children (a select needs its options first)
      if (value === null || value === undefined || value === false) { el.removeAttribute(name); return; }
      value = value === true ? "" : String(value);
      if (el.getAttribute(name) !== value) el.setAttribute(name, value);
    });
    if ("width" in attrs && el.style.width !== attrs.width) el.style.width = attrs.width; // CSSOM: allowed by the CSP
    el._attrs = attrs;
  }
  function update(el, v) {
    if (typeof v === "string") { if (el.nodeValue !== v) el.nodeValue = v; return; }
    setAttrs(el, v.attrs);
    if (v.attrs.html !== undefined) {
      if (el._html !== v.attrs.html) { el.innerHTML = v.attrs.html; el._html = v.attrs.html; }
    } else if (!v.attrs.opaque) {
      patchKids(el, v.kids);
    }
    // a field's value is set when the page's own value for it changes, never over what
    // the reader is typing (a live update leaves a half-written filter alone)
    if ("value" in v.attrs && el._value !== v.attrs.value) { el.value = v.attrs.value; el._value = v.attrs.value; }
  }
  function patchKids(parent, kids) {
    var keyed = {};
    Array.prototype.forEach.call(parent.childNodes, function (n) { if (n._key) keyed[n._key] = n; });
    kids.forEach(function (v, i) {
      var current = parent.childNodes[i] || null, key = keyOf(v), chosen = null;
      if (key !== null) chosen = keyed[key] && same(keyed[key], v) ? keyed[key] : null;
      else if (current && !current._key && same(current, v)) chosen = current;
      if (chosen) update(chosen, v); else chosen = create(v);
      if (key !== null) delete keyed[key];
      if (chosen !== current) parent.insertBefore(chosen, current);
    });
    while (parent.childNodes.length > kids.length) {
      var gone = parent.lastChild;
      dropCharts(gone);
      parent.removeChild(gone);
    }
  }
  function draw(tree) { patchKids(page, flat(tree, [])); drawCharts(); }

  // --- the JSON routes ---------------------------------------------------------------------
  function url(path, params) {
    var q = new URLSearchParams(params || {}).toString();
    return path + (q ? "?" + q : "");
  }
  function getJSON(path, params) {
    // "no-cache": always asked, and answered 304 without a body when its ETag still holds
    return fetch(url(path, params), { cache: "no-cache", credentials: "same-origin" }).then(function (r) {
      return r.json().then(function (body) { return { ok: r.ok, body: body }; });
    });
  }

  // --- formats -----------------------------------------------------------------------------
  function number(v) {
    if (v === null || v === undefined) return "-";
    var a = Math.abs(v);
    if (a < 10000) return Number.isInteger(v) ? v.toLocaleString("en") : v.toFixed(2);
    var units = [[1e9, "G"], [1e6, "M"], [1e3, "k"]];
    for (var i = 0; i < units.length; i++) {
      if (a >= units[i][0]) return (v / units[i][0]).toFixed(2).replace(/\.?0+$/, "") + units[i][1];
    }
    return String(v);
  }
  function duration(s) {
    if (s === null || s === undefined) return "-";
    if (s < 120) return Math.round(s) + "s";
    if (s < 7200) return Math.round(s / 60) + "m";
    if (s < 172800) return (s / 3600).toFixed(1) + "h";
    return (s / 86400).toFixed(1) + "d";
  }
  function money(v) { return "$" + Number(v).toFixed(2); }
  function dash(v) { return v === null || v === undefined || v === "" ? "-" : String(v); }
  function bar(kind, used, limit, fmt, refused) {
    fmt = fmt || number;
    if (used === null || used === undefined) return h("span", { class: "dim", "data-kind": kind }, "-");
    if (!limit) return h("span", { "data-kind": kind, "data-value": used }, fmt(used));
    var share = Math.max(0, Math.min(1, used / limit));
    var cls = refused ? "bar at" : share >= 1 ? "bar full" : share >= 0.8 ? "bar warn" : "bar";
    return h("span", { class: "barwrap", "data-kind": kind, "data-value": used, "data-limit": limit }, [
      h("span", { class: cls }, h("span", { width: (share * 100).toFixed(1) + "%" })),
      h("span", { class: "mono" }, fmt(used) + "/" + fmt(limit)),
      refused ? h("span", { class: "refused" }, " · " + refused + " refused") : null
    ]);
  }
  var STOP_KINDS = ["running", "completed", "iteration_limit", "tool_call_limit", "token_limit", "cost_limit",
    "timeout", "output_limit", "failed", "cancelled", "abandoned", "refused"];
  function stopClass(s) {
    var kind = STOP_KINDS.indexOf(s) >= 0 ? s : /limit/.test(s || "") ? "iteration_limit" : "failed";
    return "stop stop-" + kind.replace(/_/g, "-");
  }
  function unsandboxed(r) {   // the run's record says its agent had no sandbox ("off: why")
    return typeof r.sandbox === "string" && r.sandbox.slice(0, 3) === "off"
      ? h("span", { class: "unsandboxed", title: r.sandbox }, " UNSANDBOXED") : null;
  }
  function runLink(id) { return h("a", { class: "mono", href: "#/run/" + encodeURIComponent(id) }, id); }
  function card(id, title, body, extra) {
    return h("section", { class: "card" + (extra ? " " + extra : ""), id: id, key: id }, [h("h2", {}, title), body]);
  }
  function table(id, head, rows) {
    return h("table", { id: id, key: id }, [
      h("thead", {}, h("tr", {}, head.map(function (t) { return h("th", {}, t); }))),
      h("tbody", {}, rows)
    ]);
  }
  function empty(text, id) { return h("p", { class: "dim", id: id }, text); }

  // --- overview ----------------------------------------------------------------------------
  function runningTable(runs) {
    if (!runs.length) return empty("no run in progress", "running-table-empty");
    return table("running-table", ["run", "unit", "harness", "session", "iterations", "tool calls", "tokens", "cost", "time", "last event"],
      runs.map(function (r) {
        var last = r.supervisor_alive === false ? h("span", { class: "stop stop-failed" }, "supervisor gone") : duration(r.last_event_age_seconds);
        return h("tr", { key: r.id, "data-run": r.id }, [
          h("td", {}, runLink(r.id)), h("td", {}, dash(r.unit)),
          h("td", {}, [dash(r.harness), " ", h("span", { class: "dim" }, "(" + dash(r.profile) + ")"), unsandboxed(r)]),
          h("td", { class: "mono" }, dash(r.session_id && r.session_id.slice(0, 12))),
          h("td", {}, bar("iterations", r.iterations, r.iteration_limit)),
          h("td", {}, bar("tool_calls", r.tool_calls, r.tool_call_limit)),
          h("td", {}, bar("tokens", r.tokens, r.token_limit)),
          h("td", {}, bar("cost", r.cost_usd, r.cost_limit_usd, money)),
          h("td", {}, bar("time", r.elapsed_seconds, r.timeout_seconds, duration)),
          h("td", {}, last)
        ]);
      }));
  }
  function entryRows(entries, root) {
    return entries.map(function (e, i) {
      var path = e.path && e.path.indexOf(root + "/") === 0 ? e.path.slice(root.length + 1) : e.path;
      return h("tr", { key: (e.id || e.path) + "|" + e.step + "|" + i, "data-step": e.step }, [
        h("td", { class: "mono" }, e.id || path),
        h("td", {}, [e.priority, e.location].filter(Boolean).join(" ") || "-"),
        h("td", { class: "wrap" }, dash(e.title)),
        h("td", { class: "wrap" }, e.why)
      ]);
    });
  }
  function boardQueue(b) {
    if (!b) return empty("no board folder in this project ([loop] board)");
    if (b.error) return h("p", { class: "stop stop-failed" }, b.root + ": " + b.error);
    var counts = Object.keys(b.counts).filter(function (k) { return b.counts[k] || k === "ACTIONABLE"; });
    function part(id, title, entries, total) {
      if (!total) return empty(title + ": none", id + "-none");
      var more = total > entries.length ? " (first " + entries.length + " of " + total + ")" : "";
      return h("div", { key: id }, [h("h3", {}, title + more), h("div", { class: "scroll-y", id: id + "-scroll" },
        table(id, ["ticket", "where", "title", "why"], entryRows(entries, b.root)))]);
    }
    return h("div", {}, [
      h("p", { class: "mono dim" }, b.root),
      h("p", { id: "board-counts" }, counts.map(function (k, i) {
        return h("span", { key: k, class: "count", "data-state": k }, (i ? " · " : "") + k + " " + b.counts[k]);
      })),
      part("board-ready", "next for the loop, in its order", b.ready, b.ready_count),
      part("board-blocked", "blocked or waiting", b.blocked, b.blocked_count),
      part("board-person", "waits for a person", b.for_person, b.for_person.length)
    ]);
  }
  function loopsBody(loops) {
    if (!loops.length) return empty("no loop has ticked");
    return h("div", {}, loops.map(function (b) {
      var t = b.last_tick, u = b.user_bundle || { count: 0, first: [] };
      return h("div", { class: "board", key: b.board }, [
        h("div", { class: "mono" }, b.board),
        t ? h("div", { class: (t.signal === "continue" ? "sig-continue" : "sig-stop") + " mono", "data-signal": t.signal }, t.line) : null,
        t ? h("div", { class: "dim" }, (t.exit_code === null || t.exit_code === undefined ? "" : "exit " + t.exit_code + " · ") +
          duration(t.age_seconds) + " ago (" + t.at + ")") : null,
        b.guard ? h("div", { class: "dim" }, "guard: " + b.guard.result + " since " + b.guard.at) : null,
        u.count ? h("div", {}, ["waited for you after that tick: " + u.count, h("ul", {}, u.first.map(function (i, n) {
          return h("li", { key: n }, i);
        }))]) : null
      ]);
    }));
  }
  function watchBody(w) {
    return h("div", {}, [
      w.orchestrators.length ? table("orchestrators", ["orchestrator", "harness", "state"], w.orchestrators.map(function (o) {
        var st = o.state === "idle" ? "idle for " + duration(o.idle_seconds) : o.state + (o.why ? " (" + o.why + ")" : "");
        return h("tr", { key: o.id }, [h("td", {}, "#" + o.id + " " + o.name), h("td", {}, dash(o.harness)), h("td", {}, st)]);
      })) : empty("no orchestrator registered"),
      w.subagents.length ? table("subagents", ["subagent", "state"], w.subagents.map(function (s) {
        return h("tr", { key: s.key }, [h("td", {}, dash(s.label || s.key)), h("td", {}, dash(s.state))]);
      })) : empty("no subagent seen"),
      w.wakes.map(function (k, i) {
        return h("div", { class: "dim", key: "wake" + i }, "wake " + String(k.at).slice(0, 19) + " " + k.reason + " → " + k.outcome);
      })
    ]);
  }
  function gateBody(g) {
    if (g.error) return h("p", { class: "stop stop-failed" }, g.error);
    var shown = g.sessions.filter(function (s) { return s.state !== "ended"; });
    var hidden = g.sessions.length - shown.length;
    return h("div", {}, [
      shown.length ? table("gate-sessions", ["session", "calls", "state", "run"], shown.map(function (s) {
        var refused = s.call_budget ? Math.max(0, s.calls_used - s.call_budget) : 0;
        return h("tr", { key: s.session_id, "data-state": s.state }, [
          h("td", { class: "mono id", title: s.session_id }, s.session_id),
          h("td", {}, bar("calls", s.calls_used - refused, s.call_budget, number, refused)),
          h("td", {}, s.state), h("td", { class: "mono id" }, dash(s.run_id))
        ]);
      })) : empty("no session at " + Math.round(g.near_budget * 100) + "% of its call budget or more"),
      hidden ? empty(hidden + " more " + (hidden === 1 ? "session" : "sessions") + " of runs that have ended: over, not listed", "gate-ended") : null
    ]);
  }
  function ingestBody(i) {
    if (i.wiki === null || i.wiki === undefined) return empty("no wiki configured ([wiki] root)");
    if (i.error) return h("p", { class: "stop stop-failed" }, i.error);
    return h("p", {}, "quarantine " + i.quarantine + " · waiting " + i.waiting + " · claimed " + i.claimed + " · done " + i.done);
  }
  function roomBody(r) {
    if (!r.open.length) return empty("no room open");
    return h("div", {}, r.open.map(function (o, i) {
      return h("div", { key: i }, "room " + o.room + " (pid " + dash(o.pid) + "): " + o.question);
    }));
  }
  function fleetBody(f) {
    if (!f) return empty("no fleet in this home");
    if (f.error) return empty(f.database + ": " + f.error);
    var alive = f.workers.filter(function (w) { return w.alive; }).map(function (w) { return w.name; });
    var silent = f.workers.filter(function (w) { return !w.alive; }).map(function (w) { return w.name; });
    return h("div", {}, [
      h("p", {}, "workers alive: " + (alive.join(", ") || "none") + (silent.length ? "; silent: " + silent.join(", ") : "")),
      table("fleet-projects", ["project", "state", "worker", "units", "queued", "last signal line"], f.projects.map(function (p) {
        return h("tr", { key: p.name, "data-state": p.state }, [h("td", {}, p.name), h("td", {}, p.state), h("td", {}, dash(p.worker)),
          h("td", {}, number(p.units_done)), h("td", {}, number(p.queue_depth)),
          h("td", { class: "wrap mono" }, dash(p.state === "stopped" ? p.stopped_reason : p.last_line))]);
      }))
    ]);
  }
  function endedTable(runs, home) {
    if (!runs.length) return empty("no run has ended");
    return table("ended-table", ["run", "unit", "status", "stop reason", "exit", "ended", "report"], runs.map(function (r) {
      return h("tr", { key: r.id, "data-run": r.id, "data-status": r.status }, [
        h("td", {}, runLink(r.id)), h("td", {}, dash(r.unit)), h("td", {}, [h("span", { class: stopClass(r.status) }, r.status), unsandboxed(r)]),
        h("td", {}, dash(r.stop_reason)), h("td", {}, dash(r.exit_code)), h("td", {}, dash(r.ended_at && r.ended_at.slice(0, 19))),
        h("td", {}, r.report ? h("a", { class: "report-link", href: "#/run/" + encodeURIComponent(r.id) }, "report") : "-")
      ]);
    }));
  }
  function overview() {
    var s = status;
    if (!s) return empty("loading…");
    return [
      card("panel-running", "Runs in progress", runningTable(s.running)),
      card("panel-queue", "Board", boardQueue(s.board)),
      h("div", { class: "grid", key: "grid" }, [
        card("panel-loops", "Loop", loopsBody(s.loops)),
        card("panel-watch", "Watchdog", watchBody(s.watch)),
        card("panel-gate", "Gate sessions near their budget", gateBody(s.gate)),
        card("panel-ingest", "Ingest queue", ingestBody(s.ingest)),
        card("panel-room", "Room", roomBody(s.room)),
        card("panel-fleet", "Fleet", fleetBody(s.fleet))
      ]),
      card("panel-ended", "Last ended runs", endedTable(s.ended, s.home))
    ];
  }

  // --- runs table --------------------------------------------------------------------------------
  var STATUSES = ["", "running", "completed", "iteration_limit", "tool_call_limit", "timeout", "failed", "cancelled", "abandoned"];
  function runsPage(d) {
    var q = view.query;
    if (!d) return empty("loading…");
    function input(name, label, type) {
      return h("label", { key: name }, [label, h("input", { name: name, type: type || "text", value: q[name] || "" })]);
    }
    var pages = Math.max(1, Math.ceil(d.total / d.size));
    function turn(delta) { var next = Object.assign({}, q); next.page = String(d.page + delta); go("runs", "", next); }
    return card("panel-runs", "Runs", [
      h("form", { class: "filters", id: "runs-filters", key: "filters", onsubmit: function (e) {
        e.preventDefault();
        var next = {};
        new FormData(e.target).forEach(function (v, k) { if (v) next[k] = v; });
        go("runs", "", next);
      } }, [
        h("label", { key: "status" }, ["status", h("select", { name: "status", value: q.status || "" }, STATUSES.map(function (s) {
          return h("option", { key: s, value: s, selected: q.status === s }, s || "any");
        }))]),
        input("stop", "stop reason"), input("harness", "harness"), input("unit", "unit"),
        input("since", "started from", "date"), input("until", "started before", "date"),
        h("button", { type: "submit", key: "go" }, "filter")
      ]),
      h("div", { class: "scroll", key: "runs-scroll", id: "runs-scroll" }, table("runs-table",
        ["run", "unit", "status", "stop reason", "harness", "iterations", "tool calls", "tokens", "started"],
        d.runs.map(function (r) {
          return h("tr", { key: r.id, "data-run": r.id }, [h("td", {}, runLink(r.id)), h("td", {}, dash(r.unit)),
            h("td", { class: stopClass(r.status) }, r.status), h("td", {}, dash(r.stop_reason)), h("td", {}, dash(r.harness)),
            h("td", {}, bar("iterations", r.iterations, r.iteration_limit)), h("td", {}, bar("tool_calls", r.tool_calls, r.tool_call_limit)),
            h("td", {}, number(r.tokens)), h("td", {}, String(r.started_at).slice(0, 19))]);
        }))),
      h("div", { class: "pager", key: "pager" }, [
        h("button", { id: "prev", disabled: d.page <= 1, onclick: function () { turn(-1); } }, "← newer"),
        h("span", { id: "page-info" }, "page " + d.page + " of " + pages + " · " + d.total + " runs"),
        h("button", { id: "next", disabled: d.page >= pages, onclick: function () { turn(1); } }, "older →")
      ])
    ]);
  }

  // --- one run ----------------------------------------------------------------------------------
  var charts = {};
  function cssVar(name) { return getComputedStyle(document.documentElement).getPropertyValue(name).trim(); }
  function chartSpec(title, series, names, limits) {
    return { title: title, series: series, names: names, limits: limits };
  }
  function axisSize(self, values) {
    if (!values) return 40;
    var longest = values.reduce(function (m, v) { return Math.max(m, String(v).length); }, 1);
    return Math.ceil(longest * 7.5) + 18;
  }
  function buildChart(el, spec) {
    var colors = [cssVar("--blue") || "#1c7ed6", cssVar("--ok") || "#2f9e44", cssVar("--warn") || "#e8a317"];
    var ink = cssVar("--fg") || "#1d1f21", grid = cssVar("--line") || "#dcdcd8";
    var axis = { stroke: ink, grid: { stroke: grid }, ticks: { stroke: grid } };
    var opts = { title: spec.title, width: Math.max(320, el.clientWidth - 10), height: 220, scales: { x: { time: false } },
      axes: [Object.assign({ label: "event #" }, axis), Object.assign({ size: axisSize, values: function (u, vals) { return vals.map(number); } }, axis)],
      series: [{ label: "event" }] };
    spec.names.forEach(function (name, i) {
      opts.series.push({ label: name.replace("_", " "), stroke: colors[i % colors.length], width: 2 });
      if (spec.limits[i]) opts.series.push({ label: name.replace("_", " ") + " limit", stroke: colors[i % colors.length], dash: [6, 4], width: 1 });
    });
    return new window.uPlot(opts, chartData(spec), el);
  }
  function chartData(spec) {
    var out = [spec.series.event];
    spec.names.forEach(function (name, i) {
      out.push(spec.series[name]);
      if (spec.limits[i]) out.push(spec.series.event.map(function () { return spec.limits[i]; }));
    });
    return out;
  }
  function drawCharts() {
    Object.keys(pendingCharts).forEach(function (id) {
      var spec = pendingCharts[id], el = document.getElementById(id);
      if (!el || !window.uPlot || !spec.series.event.length) return;
      var sig = spec.title + "|" + spec.names.join() + "|" + spec.limits.join();
      if (el._chart && el._chartSig === sig) el._chart.setData(chartData(spec));
      else { if (el._chart) el._chart.destroy(); el._chart = buildChart(el, spec); el._chartSig = sig; }
    });
    pendingCharts = {};
  }
  var pendingCharts = {};
  function chartBox(id, spec) {
    pendingCharts[id] = spec;
    return h("div", { id: id, key: id, class: "chart", opaque: true });
  }
  function dropCharts(node) {
    if (node.nodeType !== 1) return;
    if (node._chart) { node._chart.destroy(); node._chart = null; }
    Array.prototype.forEach.call(node.querySelectorAll ? node.querySelectorAll(".chart") : [], function (c) {
      if (c._chart) { c._chart.destroy(); c._chart = null; }
    });
  }
  function timelineRows(d) {
    return d.timeline.map(function (e) {
      var what = e.kind === "step_started" ? "model step " + e.step : e.kind === "tool_call_started" ? "tool call " + (e.name || "") :
        e.kind === "tool_result" ? "result" + (e.is_error ? " (error)" : "") : e.kind.replace("_", " ") + " " + (e.tool_name || "");
      return h("tr", { key: e.n, class: "k-" + e.kind + (e.is_error ? " err" : "") }, [h("td", { class: "dim" }, "#" + e.n), h("td", {}, what)]);
    });
  }
  function runPage(d) {
    if (!d) return empty("loading…");
    if (d.error) return card("panel-run", "Run", h("p", { class: "stop stop-failed" }, d.error));
    var r = d.run, b = d.budget;
    var live = status && r.status === "running" ? status.running.filter(function (x) { return x.id === r.id; })[0] : null;
    var elapsed = live ? live.elapsed_seconds : b.elapsed_seconds;   // the page's answer is kept while the run is quiet
    var shownTimeline = d.timeline.length < d.timeline_total ? "the last " + d.timeline.length + " of " + d.timeline_total + " events" : "";
    var files = d.files_changed === null || d.files_changed === undefined
      ? empty("recorded in the progress report of a limit stop")
      : d.files_changed.length ? h("ul", { class: "mono" }, d.files_changed.map(function (f, i) {
        return h("li", { key: i }, typeof f === "string" ? f : (f.status ? f.status + " " : "") + (f.path || JSON.stringify(f)));
      })) : empty("no file changed");
    var chain = d.chain.follows.map(runLink).concat([h("b", { class: "mono" }, r.id)]).concat(d.chain.followed_by.map(runLink));
    return [
      card("panel-run", "Run", [
        h("p", { key: "head" }, [h("span", { class: "mono", id: "run-id" }, r.id), " · ",
          h("span", { id: "run-status", class: stopClass(r.status) }, r.status), r.stop_reason ? " (" + r.stop_reason + ")" : "",
          " · unit " + dash(r.unit) + " · " + dash(r.harness) + " (" + dash(r.profile) + ")", unsandboxed(r),
          r.exit_code === null || r.exit_code === undefined ? "" : " · exit " + r.exit_code]),
        h("table", { id: "run-budget", key: "budget" }, h("tbody", {}, h("tr", {}, [
          h("th", {}, "iterations"), h("td", {}, bar("iterations", b.iterations, b.iteration_limit)),
          h("th", {}, "tool calls"), h("td", {}, bar("tool_calls", b.tool_calls, b.tool_call_limit)),
          h("th", {}, "tokens"), h("td", { id: "run-tokens" }, bar("tokens", b.tokens, b.token_limit)),
          h("th", {}, "time"), h("td", {}, bar("time", elapsed, b.timeout_seconds, duration))
        ])))
      ]),
      h("div", { class: "grid", key: "grid1" }, [
        card("panel-burn", "Budget burn-down", [
          d.series.event.length ? null : empty("no event yet", "burn-none"),
          chartBox("chart-calls", chartSpec("iterations and tool calls", d.series, ["iterations", "tool_calls"], [b.iteration_limit, b.tool_call_limit])),
          d.series.tokens.some(function (v) { return v > 0; }) ? chartBox("chart-tokens", chartSpec("tokens", d.series, ["tokens"], [b.token_limit])) : null,
          d.series.total_events > d.series.event.length ? empty(number(d.series.total_events) + " events, drawn as " + d.series.event.length + " points", "series-note") : null
        ]),
        card("panel-timeline", "Timeline", [
          shownTimeline ? empty(shownTimeline, "timeline-note") : null,
          d.timeline.length ? h("div", { class: "timeline", id: "timeline-scroll", key: "timeline" },
            h("table", { id: "run-timeline" }, h("tbody", {}, timelineRows(d)))) : empty("no event yet")
        ])
      ]),
      card("panel-report", "Report", d.report ? h("div", { class: "report", id: "run-report", html: d.report.html })
        : empty("no progress report (written when a limit stops a run)", "run-no-report")),
      h("div", { class: "grid", key: "grid2" }, [
        card("panel-files", "Files changed", files),
        card("panel-chain", "Follow-up chain", h("p", { id: "run-chain" }, chain.map(function (c, i) { return i ? [" → ", c] : c; })))
      ])
    ];
  }

  // --- loop history -----------------------------------------------------------------------------
  var SIGNALS = ["continue", "exhausted", "blind", "guard-exhausted", "guard-blind", "user-only"];
  var pickedTick = null;
  function tickDetail(t) {
    var g = t.level2 && (t.level2.guard || {});
    var items = t.bundle ? (t.bundle.tickets || []).map(function (k) { return k.location + " " + k.id + " " + k.title; }).concat(t.bundle.items || []) : [];
    return h("div", { id: "tick-detail", key: "detail" }, [
      h("p", { class: "mono " + (t.signal === "continue" ? "sig-continue" : "sig-stop") }, t.line),
      h("p", { class: "dim" }, t.at + (t.exit_code === null || t.exit_code === undefined ? "" : " · exit " + t.exit_code) + (t.dry_run ? " · dry run" : "")),
      t.dispatched ? h("p", {}, "dispatched: " + (t.dispatched.summary || JSON.stringify(t.dispatched))) : null,
      t.level2 ? [h("p", {}, "level 2: " + t.level2.outcome + (g.why ? " · guard: " + g.why : "")),
        table("tick-sources", ["source", "status", "where", "items", "new", "reason"], (t.level2.sources || []).map(function (s, i) {
          return h("tr", { key: i }, [h("td", {}, s.role), h("td", {}, s.status), h("td", { class: "mono wrap" }, dash(s.where)),
            h("td", {}, dash(s.items)), h("td", {}, (s.new || []).length), h("td", { class: "wrap" }, dash(s.reason))]);
        }))] : empty("level 1 found work; level 2 was not needed"),
      items.length ? [h("p", {}, "for the person:"), h("ul", {}, items.map(function (i, n) { return h("li", { key: n }, i); }))] : null
    ]);
  }
  function loopPage(d) {
    if (!d) return empty("loading…");
    if (!d.board) return card("panel-loop", "Loop history", empty("no loop has ticked"));
    var pick = pickedTick === null || pickedTick >= d.ticks.length ? d.ticks.length - 1 : pickedTick;
    return card("panel-loop", "Loop history", [
      d.boards.length > 1 ? h("select", { id: "board-select", key: "select", value: d.board, onchange: function (e) { go("loop", "", { board: e.target.value }); } },
        d.boards.map(function (b) { return h("option", { key: b, value: b }, b); })) : h("span", { class: "mono", key: "one" }, d.board),
      h("div", { class: "legend", key: "legend" }, SIGNALS.map(function (s) { return h("span", { key: s }, [h("i", { class: "t-" + s }), s]); })),
      h("div", { class: "strip", id: "loop-strip", key: "strip", onclick: function (e) {
        if (e.target.dataset && e.target.dataset.index !== undefined) { pickedTick = Number(e.target.dataset.index); render(); }
      } }, d.ticks.map(function (t, i) {
        return h("div", { key: t.id, class: "tick t-" + t.signal + (i === pick ? " sel" : ""), "data-index": i, "data-signal": t.signal, title: t.at + " " + t.signal });
      })),
      d.ticks.length ? tickDetail(d.ticks[pick]) : null
    ]);
  }

  // --- board ---------------------------------------------------------------------------------------
  var openTicket = null;
  function boardPage(d) {
    if (!d) return empty("loading…");
    if (!d.columns.length) return card("panel-board", "Board", empty("no board at " + d.root));
    return [
      card("panel-board", "Board · " + d.root, [
        h("div", { class: "columns", id: "board-columns", key: "columns", onclick: function (e) {
          var el = e.target.closest(".ticket");
          if (el && el.dataset.ticket) { openTicket = el.dataset.ticket; loadTicket(); }
        } }, d.columns.map(function (c) {
          return h("div", { key: c.state, class: "column" + (c.tickets.length ? "" : " empty"), "data-state": c.state }, [
            h("h3", {}, c.state + " (" + c.tickets.length + ")"),
            h("div", { class: "column-body" }, c.tickets.map(function (t) {
              return h("div", { key: t.id, class: "ticket", "data-ticket": t.id }, [
                h("div", { class: "id" }, t.id + " · " + t.priority + (t.reason ? " · " + t.reason : "")), t.title]);
            }))
          ]);
        })),
        d.malformed.length ? h("div", { id: "board-malformed", key: "malformed" }, [
          h("h3", {}, "files tether cannot read (" + d.malformed.length + ")"),
          h("ul", {}, d.malformed.map(function (m) {
            return h("li", { key: m.path, class: "malformed" }, [h("span", { class: "mono" }, m.path), ": ", h("span", { class: "stop stop-failed" }, m.error)]);
          }))
        ]) : null
      ]),
      data.ticket && data.ticket.id === openTicket ? card("panel-ticket", "Ticket " + openTicket, data.ticket.ok
        ? [h("p", {}, [h("b", {}, data.ticket.body.title), " · " + data.ticket.body.location + " · " + data.ticket.body.priority]),
          h("pre", { class: "ticket-body" }, data.ticket.body.body || "")]
        : h("p", { class: "stop stop-failed" }, data.ticket.body.error)) : null
    ];
  }
  function loadTicket() {
    var id = openTicket;
    getJSON("api/tickets/" + encodeURIComponent(id)).then(function (t) {
      data.ticket = { id: id, ok: t.ok, body: t.body };
      render();
    });
  }

  // --- outbox: a person approves or rejects what runs proposed ------------------------------------
  var decision = null;          // the last decision's answer, shown above the table
  function decide(id, action) {
    var field = document.getElementById("outbox-text-" + id);
    var text = field ? field.value : "";
    var body = action === "approve" ? { note: text || null } : { reason: text };
    decision = { id: id, pending: true, text: action + " " + id + "…" };
    render();
    fetch("api/outbox/" + encodeURIComponent(id) + "/" + action, {
      method: "POST", credentials: "same-origin", cache: "no-store",
      headers: { "Content-Type": "application/json", "X-CSRF-Token": csrf || "" },
      body: JSON.stringify(body)
    }).then(function (r) {
      return r.json().then(function (b) { return { ok: r.ok, body: b }; }, function () { return { ok: false, body: { error: "HTTP " + r.status } }; });
    }).then(function (res) {
      var p = res.body.proposal;
      decision = res.ok
        ? { id: id, ok: res.body.ok, text: p.id + " " + p.state + ": " + p.headline + (res.body.ticket_moved ? " · " + res.body.ticket_moved : ""), output: res.body.output }
        : { id: id, ok: false, text: res.body.error || "refused" };
      load();
    });
  }
  function outboxActions(p) {
    if (p.state !== "proposed") return h("span", { class: "dim" }, p.decided_by ? "by " + p.decided_by : "");
    return h("span", { class: "decide" }, [
      h("input", { id: "outbox-text-" + p.id, key: "text", placeholder: "note, or the reason to reject", maxlength: "2000" }),
      h("button", { key: "approve", "data-approve": p.id, onclick: function () { decide(p.id, "approve"); } }, "approve"),
      h("button", { key: "reject", "data-reject": p.id, onclick: function () { decide(p.id, "reject"); } }, "reject")
    ]);
  }
  function outboxPage(d) {
    if (!d) return empty("loading…");
    var shown = decision ? h("div", { id: "outbox-result", key: "result", class: decision.ok ? "sig-continue" : decision.pending ? "dim" : "stop stop-failed" }, [
      h("p", {}, decision.text), decision.output ? h("pre", { class: "ticket-body" }, decision.output) : null]) : null;
    return card("panel-outbox", "Outbox · " + d.waiting + " waiting for you", [
      shown,
      d.proposals.length ? h("div", { class: "scroll", key: "outbox-scroll" }, table("outbox-table",
        ["proposal", "kind", "state", "what", "run", "ticket", "decision"],
        d.proposals.map(function (p) {
          return h("tr", { key: p.id, "data-proposal": p.id, "data-state": p.state }, [
            h("td", { class: "mono" }, p.id), h("td", {}, p.kind), h("td", { class: "state" }, p.state),
            h("td", { class: "wrap", title: (p.argv || []).join(" ") }, [p.headline, p.message ? h("div", { class: "dim" }, p.message) : null]),
            h("td", {}, p.run ? runLink(p.run) : "-"), h("td", { class: "mono" }, dash(p.ticket)),
            h("td", {}, outboxActions(p))]);
        }))) : empty("no proposals: runs propose external steps with `tether outbox propose`", "outbox-none")
    ]);
  }

  // --- routing, loading and live updates -------------------------------------------------------------
  var PAGES = {
    overview: { view: overview },
    runs: { view: function () { return runsPage(data.runs); }, load: function () { return getJSON("api/runs", view.query).then(keep("runs")); },
      stale: function (before) { return before.store !== versions.store; } },
    run: { view: function () { return runPage(data.run); },
      load: function () { return getJSON("api/runs/" + encodeURIComponent(view.arg)).then(function (res) { data.run = res.ok ? res.body : { error: res.body.error }; }); },
      stale: function (before) {
        return before.store !== versions.store ||
          JSON.stringify((before.events || {})[view.arg]) !== JSON.stringify((versions.events || {})[view.arg]);
      } },
    loop: { view: function () { return loopPage(data.loop); }, load: function () { return getJSON("api/loop", view.query).then(keep("loop")); },
      stale: function (before) { return before.store !== versions.store; } },
    board: { view: function () { return boardPage(data.board); }, load: function () { return getJSON("api/board").then(keep("board")); },
      stale: function (before) { return before.board !== versions.board; } },
    outbox: { view: function () { return outboxPage(data.outbox); }, load: function () { return getJSON("api/outbox").then(keep("outbox")); },
      stale: function (before) { return before.store !== versions.store; } }
  };
  function keep(name) { return function (res) { data[name] = res.body; }; }
  function parse() {
    var hash = location.hash.replace(/^#\/?/, "");
    var parts = hash.split("?"), path = parts[0].split("/"), query = {};
    new URLSearchParams(parts[1] || "").forEach(function (v, k) { query[k] = v; });
    return { name: path[0] || "overview", arg: decodeURIComponent(path.slice(1).join("/")), query: query };
  }
  function go(name, arg, query) {
    var q = new URLSearchParams(query || {}).toString();
    location.hash = "#/" + (name === "overview" ? "" : name) + (arg ? "/" + encodeURIComponent(arg) : "") + (q ? "?" + q : "");
  }
  function render() {
    var p = PAGES[view.name];
    draw(p ? p.view() : card("panel-missing", "Not found", h("p", {}, h("a", { href: "#/" }, "back to the overview"))));
  }
  var loading = null, again = false;
  function load() {
    var p = PAGES[view.name];
    if (!p || !p.load) { render(); return; }
    if (loading) { again = true; return; }       // one request at a time; the last change wins
    var asked = view.name + "/" + view.arg + "?" + JSON.stringify(view.query);
    loading = p.load().then(function () {
      loading = null;
      if (asked === view.name + "/" + view.arg + "?" + JSON.stringify(view.query)) render();
      if (again) { again = false; load(); }
    }, function () { loading = null; });
  }
  function navigate() {
    var next = parse();
    if (next.name !== view.name || next.arg !== view.arg) { window.scrollTo(0, 0); pickedTick = null; openTicket = null; data.ticket = null; }
    view = next;
    Array.prototype.forEach.call(document.querySelectorAll("header nav a"), function (a) {
      a.classList.toggle("active", a.dataset.nav === view.name || (view.name === "run" && a.dataset.nav === "runs"));
    });
    if (PAGES[view.name] && PAGES[view.name].load) data[view.name] = null;
    render();
    load();
  }
  function onStatus(next) {
    status = next;
    document.getElementById("generated").textContent = "as of " + next.generated_at.slice(11, 19) + "Z";
    document.getElementById("home").textContent = next.home;
    if (view.name === "overview" || view.name === "run") render();
  }
  function onVersions(next) {
    var before = versions;
    versions = next;
    var p = PAGES[view.name];
    if (p && p.stale && p.stale(before)) load();
  }
  function connect() {
    var live = document.getElementById("live");
    var source = new EventSource("events");
    source.addEventListener("status", function (e) { live.className = "live on"; onStatus(JSON.parse(e.data)); });
    source.addEventListener("versions", function (e) { live.className = "live on"; onVersions(JSON.parse(e.data)); });
    source.onerror = function () { live.className = "live off"; };
  }
  window.addEventListener("hashchange", navigate);
  getJSON("api/session").then(function (res) { if (res.ok) csrf = res.body.csrf; });
  getJSON("api/status").then(function (res) { onStatus(res.body); navigate(); connect(); });
  window.tetherCsrf = function () { return csrf; };
})();
