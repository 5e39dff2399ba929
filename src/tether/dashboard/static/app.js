/* tether dashboard: read-only views over the JSON routes, kept live by server-sent events. */
(function () {
  "use strict";
  var TOKEN = window.TETHER_TOKEN || "";
  var page = document.getElementById("page");
  var status = null;          // the last status object (same as `tether status --json`)
  var view = { name: "", arg: "", query: {} };
  var charts = [];

  function url(path, params) {
    var q = new URLSearchParams(params || {});
    q.set("token", TOKEN);
    return path + "?" + q.toString();
  }
  function getJSON(path, params) {
    return fetch(url(path, params), { cache: "no-store" }).then(function (r) {
      return r.json().then(function (body) { return { ok: r.ok, body: body }; });
    });
  }
  function esc(value) {
    return String(value === null || value === undefined ? "" : value)
      .replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;")
      .replace(/"/g, "&quot;").replace(/'/g, "&#39;");
  }
  function age(seconds) {
    if (seconds === null || seconds === undefined) return "-";
    if (seconds < 120) return Math.round(seconds) + "s";
    if (seconds < 7200) return Math.round(seconds / 60) + "m";
    return (seconds / 3600).toFixed(1) + "h";
  }
  function bar(kind, used, limit, fmt) {
    fmt = fmt || function (v) { return String(v); };
    if (used === null || used === undefined) return '<span class="dim">-</span>';
    if (!limit) return '<span data-kind="' + kind + '" data-value="' + esc(used) + '">' +
      esc(fmt(used)) + "</span>";
    var share = Math.max(0, Math.min(1, used / limit));
    var cls = share >= 1 ? "full" : share >= 0.8 ? "warn" : "";
    return '<span class="bar ' + cls + '" data-kind="' + kind + '" data-value="' + esc(used) +
      '" data-limit="' + esc(limit) + '"><span style="width:' + (share * 100).toFixed(1) +
      '%"></span></span><span class="mono">' + esc(fmt(used)) + "/" + esc(fmt(limit)) + "</span>";
  }
  function statusClass(s) {
    if (s === "running") return "status-running";
    if (s === "completed") return "status-completed";
    return "status-limit";
  }
  function runLink(id) {
    return '<a class="mono" href="#/run/' + encodeURIComponent(id) + '">' + esc(id) + "</a>";
  }
  function card(id, title, body) {
    return '<section class="card" id="' + id + '"><h2>' + esc(title) + "</h2>" + body + "</section>";
  }
  function table(id, head, rows) {
    return '<table id="' + id + '"><thead><tr>' + head.map(function (h) {
      return "<th>" + esc(h) + "</th>";
    }).join("") + "</tr></thead><tbody>" + rows.join("") + "</tbody></table>";
  }
  function destroyCharts() {
    charts.forEach(function (c) { c.destroy(); });
    charts = [];
  }

  // --- overview -----------------------------------------------------------------
  function runningRows(runs) {
    return runs.map(function (r) {
      var last = age(r.last_event_age_seconds) + (r.supervisor_alive === false ? " (supervisor gone)" : "");
      return '<tr data-run="' + esc(r.id) + '"><td>' + runLink(r.id) + "</td><td>" + esc(r.unit || "-") +
        "</td><td>" + esc(r.harness) + " <span class=dim>(" + esc(r.profile) + ")</span></td><td class=mono>" +
        esc((r.session_id || "-").slice(0, 12)) + "</td><td>" + bar("iterations", r.iterations, r.iteration_limit) +
        "</td><td>" + bar("tool_calls", r.tool_calls, r.tool_call_limit) + "</td><td>" +
        bar("tokens", r.tokens, r.token_limit) + "</td><td>" +
        bar("cost", r.cost_usd, r.cost_limit_usd, function (v) { return "$" + Number(v).toFixed(2); }) +
        "</td><td>" + bar("time", r.elapsed_seconds, r.timeout_seconds, function (v) { return Math.round(v) + "s"; }) +
        "</td><td>" + esc(last) + "</td></tr>";
    });
  }
  function loopsBody(loops) {
    if (!loops.length) return '<p class="dim">no loop has ticked</p>';
    return loops.map(function (b) {
      var t = b.last_tick, out = '<div class="board"><div class="mono">' + esc(b.board) + "</div>";
      if (t) {
        var cls = t.signal === "continue" ? "sig-continue" : "sig-stop";
        out += '<div class="' + cls + ' mono" data-signal="' + esc(t.signal) + '">' + esc(t.line) + "</div>" +
          '<div class="dim">exit ' + esc(t.exit_code) + " · " + esc(age(t.age_seconds)) + " ago (" + esc(t.at) + ")</div>";
      }
      if (b.guard) out += '<div class="dim">guard: ' + esc(b.guard.result) + " since " + esc(b.guard.at) + "</div>";
      var u = b.user_bundle || { count: 0, first: [] };
      if (u.count) {
        out += "<div>waits for you: " + esc(u.count) + "<ul>" + u.first.map(function (i) {
          return "<li>" + esc(i) + "</li>";
        }).join("") + "</ul></div>";
      }
      return out + "</div>";
    }).join("");
  }
  function watchBody(w) {
    var out = w.orchestrators.length ? table("orchestrators", ["orchestrator", "harness", "state"],
      w.orchestrators.map(function (o) {
        var st = o.state === "idle" ? "idle for " + age(o.idle_seconds) : o.state + (o.why ? " (" + o.why + ")" : "");
        return "<tr><td>#" + esc(o.id) + " " + esc(o.name) + "</td><td>" + esc(o.harness || "-") + "</td><td>" + esc(st) + "</td></tr>";
      })) : '<p class="dim">no orchestrator registered</p>';
    out += w.subagents.length ? table("subagents", ["subagent", "state"], w.subagents.map(function (s) {
      return "<tr><td>" + esc(s.label || s.key) + "</td><td>" + esc(s.state) + "</td></tr>";
    })) : '<p class="dim">no subagent seen</p>';
    out += w.wakes.map(function (k) {
      return '<div class="dim">wake ' + esc(k.at.slice(0, 19)) + " " + esc(k.reason) + " → " + esc(k.outcome) + "</div>";
    }).join("");
    return out;
  }
  function gateBody(g) {
    if (g.error) return '<p class="sig-stop">' + esc(g.error) + "</p>";
    if (!g.sessions.length) return '<p class="dim">no session at ' + Math.round(g.near_budget * 100) + "% of its call budget or more</p>";
    return table("gate-sessions", ["session", "calls", "state", "run"], g.sessions.map(function (s) {
      return "<tr><td class=mono>" + esc(s.session_id) + "</td><td>" + bar("calls", s.calls_used, s.call_budget) +
        "</td><td>" + (s.locked ? "locked" : s.over ? "over" : "near") + "</td><td>" + esc(s.run_id || "-") + "</td></tr>";
    }));
  }
  function ingestBody(i) {
    if (i.wiki === null || i.wiki === undefined) return '<p class="dim">no wiki configured ([wiki] root)</p>';
    if (i.error) return '<p class="sig-stop">' + esc(i.error) + "</p>";
    return "<p>quarantine " + esc(i.quarantine) + " · waiting " + esc(i.waiting) + " · claimed " +
      esc(i.claimed) + " · done " + esc(i.done) + "</p>";
  }
  function roomBody(r) {
    if (!r.open.length) return '<p class="dim">no room open</p>';
    return r.open.map(function (o) {
      return "<div>room " + esc(o.room) + " (pid " + esc(o.pid) + "): " + esc(o.question) + "</div>";
    }).join("");
  }
  function entryRows(entries) {
    return entries.map(function (e) {
      var what = e.id ? '<span class="mono">' + esc(e.id) + "</span>" : '<span class="mono">' + esc(e.path) + "</span>";
      return '<tr data-step="' + esc(e.step) + '"><td>' + what + "</td><td>" + esc([e.priority, e.location].filter(Boolean).join(" ") || "-") +
        '</td><td class="wrap">' + esc(e.title || "-") + '</td><td class="wrap">' + esc(e.why) + "</td></tr>";
    });
  }
  function boardBody(b) {
    if (!b) return '<p class="dim">no board folder in this project ([loop] board)</p>';
    if (b.error) return '<p class="sig-stop">' + esc(b.root) + ": " + esc(b.error) + "</p>";
    var counts = Object.keys(b.counts).filter(function (k) { return b.counts[k] || k === "ACTIONABLE"; })
      .map(function (k) { return '<span class="count" data-state="' + esc(k) + '">' + esc(k) + " " + esc(b.counts[k]) + "</span>"; }).join(" · ");
    var head = ["ticket", "where", "title", "why"];
    function part(id, title, entries, total) {
      if (!total) return '<p class="dim" id="' + id + '-none">' + esc(title) + ": none</p>";
      var more = total > entries.length ? " (first " + entries.length + " of " + total + ")" : "";
      return "<h3>" + esc(title + more) + "</h3>" + table(id, head, entryRows(entries));
    }
    return '<p class="mono dim">' + esc(b.root) + '</p><p id="board-counts">' + counts + "</p>" +
      part("board-ready", "next for the loop, in its order", b.ready, b.ready_count) +
      part("board-blocked", "blocked or waiting", b.blocked, b.blocked_count) +
      part("board-person", "waits for a person", b.for_person, b.for_person.length);
  }
  function endedRows(runs) {
    return runs.map(function (r) {
      var report = r.report ? '<a href="#/run/' + encodeURIComponent(r.id) + '" class="report-link">report</a>' : "-";
      return '<tr data-run="' + esc(r.id) + '" data-status="' + esc(r.status) + '"><td>' + runLink(r.id) +
        "</td><td>" + esc(r.unit || "-") + '</td><td class="' + statusClass(r.status) + '">' + esc(r.status) + "</td><td>" + esc(r.stop_reason || "-") +
        "</td><td>" + esc(r.exit_code) + "</td><td>" + esc((r.ended_at || "-").slice(0, 19)) + "</td><td>" + report + "</td></tr>";
    });
  }
  function renderOverview() {
    if (!status) return;
    var s = status;
    var running = s.running.length ? table("running-table",
      ["run", "unit", "harness", "session", "iterations", "tool calls", "tokens", "cost", "time", "last event"],
      runningRows(s.running)) : '<p class="dim" id="running-table-empty">no run in progress</p>';
    var ended = s.ended.length ? table("ended-table", ["run", "unit", "status", "stop reason", "exit", "ended", "report"],
      endedRows(s.ended)) : '<p class="dim">no run has ended</p>';
    page.innerHTML = card("panel-running", "Runs in progress", running) +
      card("panel-queue", "Board", boardBody(s.board)) +
      '<div class="grid">' + card("panel-loops", "Loop", loopsBody(s.loops)) +
      card("panel-watch", "Watchdog", watchBody(s.watch)) +
      card("panel-gate", "Gate sessions near their budget", gateBody(s.gate)) +
      card("panel-ingest", "Ingest queue", ingestBody(s.ingest)) +
      card("panel-room", "Room", roomBody(s.room)) + "</div>" +
      card("panel-ended", "Last ended runs", ended);
  }

  // --- runs table -----------------------------------------------------------------
  var STATUSES = ["", "running", "completed", "iteration_limit", "tool_call_limit", "timeout", "failed", "cancelled", "abandoned"];
  function renderRuns() {
    var q = view.query;
    getJSON("api/runs", q).then(function (res) {
      if (view.name !== "runs") return;
      var d = res.body, f = d.filters || {};
      function input(name, label, type) {
        return "<label>" + label + '<input name="' + name + '" type="' + (type || "text") + '" value="' + esc(q[name] || "") + '"></label>';
      }
      var form = '<form class="filters" id="runs-filters"><label>status<select name="status">' +
        STATUSES.map(function (s) {
          return '<option value="' + s + '"' + (q.status === s ? " selected" : "") + ">" + (s || "any") + "</option>";
        }).join("") + "</select></label>" + input("stop", "stop reason") + input("harness", "harness") +
        input("unit", "unit") + input("since", "started from", "date") + input("until", "started before", "date") +
        '<button type="submit">filter</button></form>';
      var rows = d.runs.map(function (r) {
        return '<tr data-run="' + esc(r.id) + '"><td>' + runLink(r.id) + '</td><td class="' + statusClass(r.status) + '">' +
          esc(r.status) + "</td><td>" + esc(r.stop_reason || "-") + "</td><td>" + esc(r.harness) + "</td><td>" +
          esc(r.unit || "-") + "</td><td>" + bar("iterations", r.iterations, r.iteration_limit) + "</td><td>" +
          bar("tool_calls", r.tool_calls, r.tool_call_limit) + "</td><td>" + esc(r.started_at.slice(0, 19)) + "</td></tr>";
      });
      var pages = Math.max(1, Math.ceil(d.total / d.size));
      var pager = '<div class="pager"><button id="prev"' + (d.page <= 1 ? " disabled" : "") + '>← newer</button><span id="page-info">page ' +
        d.page + " of " + pages + " · " + d.total + ' runs</span><button id="next"' + (d.page >= pages ? " disabled" : "") + ">older →</button></div>";
      page.innerHTML = card("panel-runs", "Runs", form + table("runs-table",
        ["run", "status", "stop reason", "harness", "unit", "iterations", "tool calls", "started"], rows) + pager);
      document.getElementById("runs-filters").addEventListener("submit", function (e) {
        e.preventDefault();
        var next = {};
        new FormData(e.target).forEach(function (v, k) { if (v) next[k] = v; });
        go("runs", "", next);
      });
      function turn(delta) {
        var next = Object.assign({}, q); next.page = String(d.page + delta); go("runs", "", next);
      }
      document.getElementById("prev").onclick = function () { turn(-1); };
      document.getElementById("next").onclick = function () { turn(1); };
    });
  }

  // --- one run ----------------------------------------------------------------------
  function chart(target, title, series, names, limits) {
    if (!window.uPlot || !series.event.length) return;
    var width = Math.max(320, target.clientWidth - 10);
    var colors = ["#1c7ed6", "#2f9e44", "#e8a317"];
    var data = [series.event], opts = { title: title, width: width, height: 220,
      scales: { x: { time: false } }, axes: [{ label: "event #" }, {}], series: [{ label: "event" }] };
    names.forEach(function (name, i) {
      data.push(series[name]);
      opts.series.push({ label: name.replace("_", " "), stroke: colors[i % colors.length], width: 2 });
      if (limits[i]) {
        data.push(series.event.map(function () { return limits[i]; }));
        opts.series.push({ label: name.replace("_", " ") + " limit", stroke: colors[i % colors.length], dash: [6, 4], width: 1 });
      }
    });
    charts.push(new window.uPlot(opts, data, target));
  }
  function renderRun(id) {
    getJSON("api/runs/" + encodeURIComponent(id)).then(function (res) {
      if (view.name !== "run" || view.arg !== id) return;
      destroyCharts();
      if (!res.ok) { page.innerHTML = card("panel-run", "Run", '<p class="sig-stop">' + esc(res.body.error) + "</p>"); return; }
      var d = res.body, r = d.run, b = d.budget;
      var head = '<p><span class="mono" id="run-id">' + esc(r.id) + '</span> · <span id="run-status" class="' +
        statusClass(r.status) + '">' + esc(r.status) + "</span>" + (r.stop_reason ? " (" + esc(r.stop_reason) + ")" : "") +
        " · unit " + esc(r.unit || "-") + " · " + esc(r.harness) + " (" + esc(r.profile) + ")</p>" +
        '<table id="run-budget"><tr><th>iterations</th><td>' + bar("iterations", b.iterations, b.iteration_limit) +
        "</td><th>tool calls</th><td>" + bar("tool_calls", b.tool_calls, b.tool_call_limit) + "</td><th>tokens</th><td>" +
        bar("tokens", b.tokens, b.token_limit) + "</td><th>time</th><td>" +
        bar("time", b.elapsed_seconds, b.timeout_seconds, function (v) { return Math.round(v) + "s"; }) + "</td></tr></table>";
      var chain = d.chain.follows.map(runLink).concat(['<b class="mono">' + esc(r.id) + "</b>"]).concat(d.chain.followed_by.map(runLink)).join(" → ");
      var files = d.files_changed === null || d.files_changed === undefined
        ? '<p class="dim">recorded in the progress report of a limit stop</p>'
        : (d.files_changed.length ? "<ul class=mono>" + d.files_changed.map(function (f) {
          return "<li>" + esc(typeof f === "string" ? f : (f.status ? f.status + " " : "") + (f.path || JSON.stringify(f))) + "</li>";
        }).join("") + "</ul>" : '<p class="dim">no file changed</p>');
      var timeline = d.timeline.length ? '<div class="timeline"><table id="run-timeline"><tbody>' + d.timeline.map(function (e) {
        var what = e.kind === "step_started" ? "model step " + e.step : e.kind === "tool_call_started" ? "tool call " + (e.name || "") :
          e.kind === "tool_result" ? "result" + (e.is_error ? " (error)" : "") : e.kind.replace("_", " ") + " " + (e.tool_name || "");
        return '<tr class="k-' + esc(e.kind) + (e.is_error ? " err" : "") + '"><td class="dim">#' + esc(e.n) + "</td><td>" + esc(what) + "</td></tr>";
      }).join("") + "</tbody></table></div>" : '<p class="dim">no event yet</p>';
      page.innerHTML = card("panel-run", "Run", head) +
        '<div class="grid">' + card("panel-burn", "Budget burn-down", '<div id="chart-calls"></div><div id="chart-tokens"></div>') +
        card("panel-timeline", "Timeline", timeline) + "</div>" +
        card("panel-report", "Report", d.report ? '<div class="report" id="run-report">' + d.report.html + "</div>" : '<p class="dim" id="run-no-report">no progress report (written when a limit stops a run)</p>') +
        '<div class="grid">' + card("panel-files", "Files changed", files) + card("panel-chain", "Follow-up chain", '<p id="run-chain">' + chain + "</p>") + "</div>";
      chart(document.getElementById("chart-calls"), "iterations and tool calls", d.series, ["iterations", "tool_calls"], [b.iteration_limit, b.tool_call_limit]);
      if (d.series.tokens.some(function (v) { return v > 0; })) {
        chart(document.getElementById("chart-tokens"), "tokens", d.series, ["tokens"], [b.token_limit]);
      }
    });
  }

  // --- loop history -------------------------------------------------------------------
  var SIGNALS = ["continue", "exhausted", "blind", "guard-exhausted", "guard-blind", "user-only"];
  function tickDetail(t) {
    var out = '<p class="mono ' + (t.signal === "continue" ? "sig-continue" : "sig-stop") + '">' + esc(t.line) + "</p>" +
      '<p class="dim">' + esc(t.at) + " · exit " + esc(t.exit_code) + (t.dry_run ? " · dry run" : "") + "</p>";
    if (t.dispatched) out += "<p>dispatched: " + esc(t.dispatched.summary || JSON.stringify(t.dispatched)) + "</p>";
    if (t.level2) {
      var g = t.level2.guard || {};
      out += "<p>level 2: " + esc(t.level2.outcome) + (g.why ? " · guard: " + esc(g.why) : "") + "</p>";
      out += table("tick-sources", ["source", "status", "where", "items", "new", "reason"], (t.level2.sources || []).map(function (s) {
        return "<tr><td>" + esc(s.role) + "</td><td>" + esc(s.status) + '</td><td class="mono wrap">' + esc(s.where || "-") +
          "</td><td>" + esc(s.items) + "</td><td>" + esc((s.new || []).length) + '</td><td class="wrap">' + esc(s.reason || "") + "</td></tr>";
      }));
    } else {
      out += '<p class="dim">level 1 found work; level 2 was not needed</p>';
    }
    if (t.bundle) {
      var items = (t.bundle.tickets || []).map(function (k) { return k.location + " " + k.id + " " + k.title; }).concat(t.bundle.items || []);
      if (items.length) out += "<p>for the person:</p><ul>" + items.map(function (i) { return "<li>" + esc(i) + "</li>"; }).join("") + "</ul>";
    }
    return out;
  }
  function renderLoop() {
    getJSON("api/loop", view.query).then(function (res) {
      if (view.name !== "loop") return;
      var d = res.body;
      if (!d.board) { page.innerHTML = card("panel-loop", "Loop history", '<p class="dim">no loop has ticked</p>'); return; }
      var select = d.boards.length > 1 ? '<select id="board-select">' + d.boards.map(function (b) {
        return "<option" + (b === d.board ? " selected" : "") + ">" + esc(b) + "</option>";
      }).join("") + "</select>" : '<span class="mono">' + esc(d.board) + "</span>";
      var legend = '<div class="legend">' + SIGNALS.map(function (s) { return '<span><i class="t-' + s + '"></i>' + s + "</span>"; }).join("") + "</div>";
      var strip = '<div class="strip" id="loop-strip">' + d.ticks.map(function (t, i) {
        return '<div class="tick t-' + esc(t.signal) + '" data-index="' + i + '" data-signal="' + esc(t.signal) + '" title="' + esc(t.at + " " + t.signal) + '"></div>';
      }).join("") + "</div>";
      page.innerHTML = card("panel-loop", "Loop history", select + legend + strip + '<div id="tick-detail"></div>');
      function pick(i) {
        Array.prototype.forEach.call(document.querySelectorAll("#loop-strip .tick"), function (el) {
          el.classList.toggle("sel", Number(el.dataset.index) === i);
        });
        document.getElementById("tick-detail").innerHTML = tickDetail(d.ticks[i]);
      }
      document.getElementById("loop-strip").addEventListener("click", function (e) {
        if (e.target.dataset && e.target.dataset.index !== undefined) pick(Number(e.target.dataset.index));
      });
      var sel = document.getElementById("board-select");
      if (sel) sel.onchange = function () { go("loop", "", { board: sel.value }); };
      if (d.ticks.length) pick(d.ticks.length - 1);
    });
  }

  // --- board ------------------------------------------------------------------------------
  function renderBoard() {
    getJSON("api/board").then(function (res) {
      if (view.name !== "board") return;
      var d = res.body;
      if (!d.columns.length) { page.innerHTML = card("panel-board", "Board", '<p class="dim">no board at ' + esc(d.root) + "</p>"); return; }
      var cols = '<div class="columns" id="board-columns">' + d.columns.map(function (c) {
        return '<div class="column" data-state="' + esc(c.state) + '"><h3>' + esc(c.state) + " (" + c.tickets.length + ")</h3>" +
          c.tickets.map(function (t) {
            return '<div class="ticket" data-ticket="' + esc(t.id) + '"><div class="id">' + esc(t.id) + " · " + esc(t.priority) +
              (t.reason ? " · " + esc(t.reason) : "") + "</div>" + esc(t.title) + "</div>";
          }).join("") + "</div>";
      }).join("") + "</div>";
      page.innerHTML = card("panel-board", "Board · " + d.root, cols) + '<div id="ticket-view"></div>';
      document.getElementById("board-columns").addEventListener("click", function (e) {
        var el = e.target.closest(".ticket");
        if (!el) return;
        getJSON("api/tickets/" + encodeURIComponent(el.dataset.ticket)).then(function (t) {
          var b = t.body;
          document.getElementById("ticket-view").innerHTML = card("panel-ticket", "Ticket " + (b.id || ""),
            t.ok ? "<p><b>" + esc(b.title) + "</b> · " + esc(b.location) + " · " + esc(b.priority) + '</p><pre class="ticket-body">' + esc(b.body || "") + "</pre>"
              : '<p class="sig-stop">' + esc(b.error) + "</p>");
        });
      });
    });
  }

  // --- routing and live updates ----------------------------------------------------------------
  function parse() {
    var hash = location.hash.replace(/^#\/?/, "");
    var parts = hash.split("?"), path = parts[0].split("/"), query = {};
    new URLSearchParams(parts[1] || "").forEach(function (v, k) { query[k] = v; });
    var name = path[0] || "overview";
    return { name: name, arg: decodeURIComponent(path.slice(1).join("/")), query: query };
  }
  function go(name, arg, query) {
    var q = new URLSearchParams(query || {}).toString();
    location.hash = "#/" + (name === "overview" ? "" : name) + (arg ? "/" + encodeURIComponent(arg) : "") + (q ? "?" + q : "");
  }
  function render() {
    view = parse();
    Array.prototype.forEach.call(document.querySelectorAll("header nav a"), function (a) {
      a.classList.toggle("active", a.dataset.nav === view.name || (view.name === "run" && a.dataset.nav === "runs"));
    });
    destroyCharts();
    if (view.name === "overview") renderOverview();
    else if (view.name === "runs") renderRuns();
    else if (view.name === "run") renderRun(view.arg);
    else if (view.name === "loop") renderLoop();
    else if (view.name === "board") renderBoard();
    else page.innerHTML = card("panel-missing", "Not found", '<p><a href="#/">back to the overview</a></p>');
  }
  function onStatus(next) {
    var before = status;
    status = next;
    document.getElementById("generated").textContent = "as of " + next.generated_at.slice(11, 19) + "Z";
    document.getElementById("home").textContent = next.home;
    if (view.name === "overview") renderOverview();
    else if (view.name === "run") {
      var ids = function (s) { return s ? s.running.map(function (r) { return r.id; }).join() + "|" + s.ended.map(function (r) { return r.id + r.status; }).join() : ""; };
      if (ids(before) !== ids(next) || next.running.some(function (r) { return r.id === view.arg; })) renderRun(view.arg);
    } else if (view.name === "loop") {
      var ticks = function (s) { return s ? s.loops.map(function (b) { return b.last_tick && b.last_tick.at; }).join() : ""; };
      if (ticks(before) !== ticks(next)) renderLoop();
    }
  }
  function connect() {
    var live = document.getElementById("live");
    var source = new EventSource(url("events"));
    source.addEventListener("status", function (e) {
      live.className = "live on";
      onStatus(JSON.parse(e.data));
    });
    source.onerror = function () { live.className = "live off"; };
  }
  window.addEventListener("hashchange", render);
  getJSON("api/status").then(function (res) { onStatus(res.body); render(); });
  connect();
})();
