// streamsqld dashboard: reads /api/v1/overview every 2 s and draws the
// overview (#/) or one view's dataflow graph (#/view/NAME). Rates are
// computed here from successive reads; history lives in this page only.
"use strict";

const PERIOD = 2000;          // ms between reads
const KEEP = 150;             // samples kept per series (5 minutes)
const hist = new Map();       // series key -> [{t, v}]
let last = null;              // the last overview

function record(key, t, v) {
  let h = hist.get(key);
  if (!h) { h = []; hist.set(key, h); }
  if (h.length && v < h[h.length - 1].v) h.length = 0; // a restart reset the counter
  h.push({ t, v });
  if (h.length > KEEP) h.shift();
}

// rate is the per-second increase of a series over its last two samples.
function rate(key) {
  const h = hist.get(key);
  if (!h || h.length < 2) return null;
  const a = h[h.length - 2], b = h[h.length - 1];
  return (b.v - a.v) / Math.max((b.t - a.t) / 1000, 0.001);
}

function rates(key) {
  const h = hist.get(key) || [];
  const out = [];
  for (let i = 1; i < h.length; i++) out.push((h[i].v - h[i - 1].v) / Math.max((h[i].t - h[i - 1].t) / 1000, 0.001));
  return out;
}

function esc(s) {
  return String(s ?? "").replace(/[&<>"']/g, c => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c]));
}

function num(n) {
  if (n === null || n === undefined || Number.isNaN(n)) return "–";
  const a = Math.abs(n);
  if (a >= 1e9) return (n / 1e9).toFixed(1) + "G";
  if (a >= 1e6) return (n / 1e6).toFixed(1) + "M";
  if (a >= 1e4) return (n / 1e3).toFixed(1) + "k";
  return Number.isInteger(n) ? String(n) : n.toFixed(1);
}

function bytes(n) {
  if (!n) return "0 B";
  const u = ["B", "kB", "MB", "GB", "TB"];
  let i = 0;
  while (n >= 1024 && i < u.length - 1) { n /= 1024; i++; }
  return n.toFixed(i ? 1 : 0) + " " + u[i];
}

function secs(s) {
  if (s === null || s === undefined) return "–";
  if (s < 1) return (s * 1000).toFixed(0) + " ms";
  if (s < 120) return s.toFixed(1) + " s";
  if (s < 7200) return (s / 60).toFixed(1) + " min";
  return (s / 3600).toFixed(1) + " h";
}

// clock renders an RFC 3339 time as "YYYY-MM-DD hh:mm:ss.mmm" (UTC).
function clock(ts) { return ts ? ts.replace("T", " ").replace(/(\.\d{3})\d*/, "$1").replace("Z", "") : "–"; }

function age(ts, now) { return ts ? secs((Date.parse(now) - Date.parse(ts)) / 1000) : "–"; }

function pill(status) {
  const cls = String(status || "").split(/[: ]/)[0];
  return `<span class="pill ${esc(cls)}">${esc(status)}</span>`;
}

function spark(values, w = 120, h = 22) {
  if (values.length < 2) return `<svg class="spark" width="${w}" height="${h}"></svg>`;
  const max = Math.max(...values, 1);
  const pts = values.map((v, i) => `${(i / (values.length - 1) * w).toFixed(1)},${(h - 1 - v / max * (h - 2)).toFixed(1)}`).join(" ");
  return `<svg class="spark" width="${w}" height="${h}"><polyline fill="none" stroke="#3b7dd8" stroke-width="1.5" points="${pts}"/></svg>`;
}

// bytes renders a state size (null: the operator keeps no state).
function bytes(n) {
  if (n === null || n === undefined) return "–";
  const units = ["B", "kB", "MB", "GB", "TB"];
  let u = 0;
  while (n >= 1024 && u < units.length - 1) { n /= 1024; u++; }
  return (u === 0 ? n.toFixed(0) : n.toFixed(1)) + " " + units[u];
}

// pct renders a share of wall time (null: not known yet).
function pct(share) { return share === null ? "–" : (share * 100).toFixed(0) + "%"; }

// bpColour maps a backpressure share (0..1 of wall time) to green..red.
function bpColour(share) {
  if (share === null) return "#eef0f4";
  const s = Math.max(0, Math.min(1, share));
  const hue = 120 - 120 * s;
  return `hsl(${hue}, 65%, 80%)`;
}

function noteSamples(ov) {
  const t = Date.parse(ov.time);
  for (const v of ov.views.concat(ov.sinks)) {
    record(`in/${v.name}`, t, v.rows_in);
    record(`out/${v.name}`, t, v.kind === "sink" ? v.sink_rows : v.rows_out);
    for (const op of v.operators) {
      record(`op/${v.name}/${op.id}/in`, t, op.rows_in);
      record(`op/${v.name}/${op.id}/out`, t, op.rows_out);
      record(`op/${v.name}/${op.id}/bp`, t, op.backpressure_seconds);
      record(`op/${v.name}/${op.id}/busy`, t, op.busy_seconds);
    }
  }
  for (const s of ov.sources) for (const r of s.readers) record(`src/${s.name}/${r.view}`, t, r.rows);
}

function overviewPage(ov) {
  const views = ov.views.map(v => `<tr>
      <td><a href="#/view/${encodeURIComponent(v.name)}">${esc(v.name)}</a></td>
      <td>${pill(v.status)}${v.recovery ? ` <span class="muted">${esc(v.recovery)}</span>` : ""}${v.last_error ? `<div class="err">${esc(v.last_error)}</div>` : ""}</td>
      <td class="num">${secs(v.freshness_seconds)}</td>
      <td class="num">${num(rate(`in/${v.name}`))}</td><td>${spark(rates(`in/${v.name}`))}</td>
      <td class="num">${num(rate(`out/${v.name}`))}</td><td>${spark(rates(`out/${v.name}`))}</td>
      <td class="num">${num(v.view_rows)}</td>
      <td class="num">${num(v.row_errors)}</td><td class="num">${num(v.late_rows)}</td>
      <td class="num">${v.subscribers}</td>
      <td>${esc(clock(v.watermark))}</td></tr>`).join("");
  const sinks = ov.sinks.map(v => `<tr>
      <td><a href="#/view/${encodeURIComponent(v.name)}">${esc(v.name)}</a></td><td>${esc(v.connector)}</td>
      <td>${pill(v.status)}${v.last_error ? `<div class="err">${esc(v.last_error)}</div>` : ""}</td>
      <td class="num">${secs(v.freshness_seconds)}</td>
      <td class="num">${num(rate(`out/${v.name}`))}</td><td>${spark(rates(`out/${v.name}`))}</td>
      <td class="num">${num(v.sink_rows)}</td><td class="num">${num(v.sink_errors)}</td>
      <td class="num">${v.open_transaction_seconds ? secs(v.open_transaction_seconds) : "–"}</td></tr>`).join("");
  const sources = ov.sources.map(s => {
    const readers = s.readers.map(r => `${esc(r.view)}: ${num(rate(`src/${s.name}/${r.view}`))}/s`).join("<br>") || '<span class="muted">no reader</span>';
    const parts = s.partitions.map(p => `<tr class="muted"><td></td><td>${esc(p.view)} · partition ${p.partition}</td>
        <td>${pill(p.status)}${p.last_error ? `<div class="err">${esc(p.last_error)}</div>` : ""}</td>
        <td class="num">${p.offset ?? "–"}</td><td class="num">${p.high_watermark ?? "–"}</td><td class="num">${p.lag ?? "–"}</td>
        <td class="num">${num(p.rows)}</td><td class="num">${num(p.bad_rows)}</td></tr>`).join("");
    return `<tr><td>${esc(s.name)}</td><td>${esc(s.connector)}</td><td colspan="6">${readers}</td></tr>${parts}`;
  }).join("");
  const sessions = (ov.activity || []).map(a => `<tr><td class="num">${a.pid}</td><td>${esc(a.user)}</td>
      <td>${esc(a.application_name)}</td><td>${pill(a.state)}</td><td class="num">${age(a.state_change, ov.time)}</td>
      <td class="num">${age(a.backend_start, ov.time)}</td></tr>`).join("");
  const ck = ov.checkpoint;
  const ckRows = ov.checkpoints.slice().reverse().slice(0, 15).map(c => `<tr>
      <td>${esc(clock(c.committed_at))}</td>
      <td>${c.error ? `<span class="err">failed: ${esc(c.error)}</span>` : "committed"}</td>
      <td class="num">${secs(c.duration_seconds)}</td><td class="num">${bytes(c.bytes)}</td>
      <td>${c.full ? "full" : "incremental"}</td><td class="num">${c.views}</td></tr>`).join("");
  const jobs = (ov.jobs || []).map(j => `<tr class="job">
      <td><a href="#/view/${encodeURIComponent(j.name)}">${esc(j.name)}</a></td><td>${esc(j.kind)} ${esc(j.job)}</td>
      <td><div class="bar"><div style="width:${(100 * j.progress).toFixed(1)}%"></div></div></td>
      <td class="num">${(100 * j.progress).toFixed(1)}%</td>
      <td class="num">${num(j.rows_done)} / ${num(j.rows_total)}</td>
      <td class="num">${secs(j.elapsed_seconds)}</td>
      <td class="num">${j.remaining_seconds === null ? "–" : "about " + secs(j.remaining_seconds)}</td></tr>`).join("");
  return `
  ${jobs ? `<h2>Running jobs</h2>
  <table><tr><th>view</th><th>job</th><th style="width:30%">progress</th><th class="num"></th><th class="num">rows</th>
    <th class="num">elapsed</th><th class="num">left</th></tr>${jobs}</table>` : ""}
  <h2>Materialized views</h2>
  <table><tr><th>view</th><th>status</th><th class="num">freshness</th><th class="num">rows/s in</th><th></th>
    <th class="num">changes/s out</th><th></th><th class="num">rows</th><th class="num">row errors</th><th class="num">late rows</th>
    <th class="num">subscribers</th><th>watermark</th></tr>${views || '<tr><td colspan="12" class="muted">none</td></tr>'}</table>
  <h2>Sinks</h2>
  <table><tr><th>sink</th><th>connector</th><th>status</th><th class="num">freshness</th><th class="num">rows/s</th><th></th>
    <th class="num">rows committed</th><th class="num">errors</th><th class="num">open transaction</th></tr>${sinks || '<tr><td colspan="9" class="muted">none</td></tr>'}</table>
  <h2>Sources</h2>
  <table><tr><th>source</th><th>connector</th><th>status</th><th class="num">offset</th><th class="num">high watermark</th>
    <th class="num">lag</th><th class="num">rows</th><th class="num">bad rows</th></tr>${sources || '<tr><td colspan="8" class="muted">none</td></tr>'}</table>
  <h2>Sessions</h2>
  <table><tr><th class="num">pid</th><th>user</th><th>application</th><th>state</th><th class="num">in this state for</th>
    <th class="num">connected for</th></tr>${sessions || '<tr><td colspan="6" class="muted">none</td></tr>'}</table>
  <p class="muted">Queries: <code>SELECT * FROM pg_stat_activity</code>; cancel with <code>pg_cancel_backend(pid)</code>.</p>
  <h2>Checkpoints</h2>
  ${ck ? `<p>last: ${age(ck.committed_at, ov.time)} ago · ${secs(ck.duration_seconds)} · ${bytes(ck.bytes)} written, ${bytes(ck.chain_bytes)} to recover ·
     ${ck.count} since start, ${ck.failures} failed${ck.error ? ` · <span class="err">${esc(ck.error)}</span>` : ""}</p>
  <table><tr><th>time</th><th>result</th><th class="num">duration</th><th class="num">size</th><th>kind</th><th class="num">views</th></tr>
  ${ckRows || '<tr><td colspan="6" class="muted">none since this page opened the server</td></tr>'}</table>` : '<p class="muted">checkpoints are off</p>'}`;
}

// layout places operators in columns by their distance from the inputs.
function layout(ops) {
  const byId = new Map(ops.map(o => [o.id, o]));
  const depth = new Map();
  const d = o => {
    if (depth.has(o.id)) return depth.get(o.id);
    depth.set(o.id, 0);
    const v = o.inputs.length ? 1 + Math.max(...o.inputs.map(i => byId.has(i) ? d(byId.get(i)) : 0)) : 0;
    depth.set(o.id, v);
    return v;
  };
  ops.forEach(d);
  const cols = [];
  for (const o of ops) (cols[depth.get(o.id)] ||= []).push(o);
  const W = 210, H = 92, GX = 50, GY = 24, pos = new Map();
  cols.forEach((col, c) => col.forEach((o, r) => pos.set(o.id, { x: 10 + c * (W + GX), y: 10 + r * (H + GY) })));
  const height = 20 + Math.max(...cols.map(c => c.length)) * (H + GY);
  return { pos, W, H, width: 20 + cols.length * (W + GX) - GX, height };
}

function viewPage(ov, name) {
  const v = ov.views.concat(ov.sinks).find(x => x.name === name);
  if (!v) return `<p>No materialized view or sink named ${esc(name)}. <a href="#/">Back</a></p>`;
  const ops = v.operators;
  let graph = '<p class="muted">The view is not running: no operators to show.</p>';
  if (ops.length) {
    const L = layout(ops);
    let edges = "", boxes = "";
    for (const o of ops) {
      const p = L.pos.get(o.id);
      for (const i of o.inputs) {
        const q = L.pos.get(i);
        if (!q) continue;
        edges += `<line x1="${q.x + L.W}" y1="${q.y + L.H / 2}" x2="${p.x - 4}" y2="${p.y + L.H / 2}" stroke="#4a5263" marker-end="url(#arrow)"/>`;
      }
      const bp = rate(`op/${v.name}/${o.id}/bp`);
      const share = bp === null ? null : bp;
      const title = o.id === -1 ? (v.kind === "sink" ? "Sink" : "Materialize") : o.name;
      boxes += `<g class="op"><title>${esc(o.explain)}</title>
        <rect x="${p.x}" y="${p.y}" width="${L.W}" height="${L.H}" fill="${bpColour(share)}"/>
        <text class="big" x="${p.x + 8}" y="${p.y + 17}">${esc(title)} <tspan class="muted">#${o.id}</tspan></text>
        <text x="${p.x + 8}" y="${p.y + 34}">in ${num(rate(`op/${v.name}/${o.id}/in`))}/s · out ${num(rate(`op/${v.name}/${o.id}/out`))}/s</text>
        <text x="${p.x + 8}" y="${p.y + 50}">rows ${num(o.rows_out)} · backpressure ${pct(share)}</text>
        <text x="${p.x + 8}" y="${p.y + 66}">busy ${pct(rate(`op/${v.name}/${o.id}/busy`))} · state ${bytes(o.state_bytes)}</text>
        <text x="${p.x + 8}" y="${p.y + 82}" class="muted">${esc(o.explain.slice(0, 30))}${o.watermark ? " · wm " + esc(o.watermark.slice(11, 19)) : ""}</text></g>`;
    }
    graph = `<div class="scroll"><svg class="graph" width="${L.width}" height="${L.height}">
      <defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto"><path d="M0,0 L10,5 L0,10 z" fill="#4a5263"/></marker></defs>
      ${edges}${boxes}</svg></div>
      <p class="legend muted">backpressure (share of time an operator waited for its consumer):
      <span style="background:${bpColour(0)}"></span>none<span style="background:${bpColour(0.5)}"></span>50%<span style="background:${bpColour(1)}"></span>all the time</p>`;
  }
  const opRows = ops.map(o => `<tr><td>#${o.id}</td><td>${esc(o.explain)}</td>
      <td class="num">${num(o.rows_in)}</td><td class="num">${num(o.rows_out)}</td>
      <td class="num">${num(rate(`op/${v.name}/${o.id}/out`))}</td><td class="num">${secs(o.backpressure_seconds)}</td>
      <td class="num">${secs(o.busy_seconds)}</td><td class="num">${bytes(o.state_bytes)}</td>
      <td>${o.watermark ? esc(o.watermark) : "–"}</td></tr>`).join("");
  return `<p><a href="#/">← overview</a></p>
  <h2>${esc(v.kind)} ${esc(v.name)} ${pill(v.status)}</h2>
  ${v.last_error ? `<p class="err">${esc(v.last_error)}</p>` : ""}
  <p>freshness ${secs(v.freshness_seconds)} · ${num(rate(`in/${v.name}`))} rows/s in · ${num(rate(`out/${v.name}`))} rows/s out ·
     ${num(v.view_rows)} rows · ${v.subscribers} subscribers · ${num(v.row_errors)} row errors · ${num(v.late_rows)} late rows</p>
  ${graph}
  <h2>Operators</h2>
  <table><tr><th>id</th><th>operator</th><th class="num">rows in</th><th class="num">rows out</th><th class="num">rows/s out</th>
    <th class="num">backpressure</th><th class="num">busy</th><th class="num">state</th><th>watermark</th></tr>${opRows}</table>
  <h2>Subscribers</h2>
  ${(v.subscriptions || []).length ? `<table><tr><th>subscription</th><th class="num">rows read</th><th class="num">rows unread (lag)</th>
    <th class="num">epochs behind</th></tr>${v.subscriptions.map(x => `<tr class="sub"><td>#${x.id}</td><td class="num">${num(x.rows_read)}</td>
    <td class="num">${num(x.lag_rows)}</td><td class="num">${x.lag_epochs}</td></tr>`).join("")}</table>` : '<p class="muted">none</p>'}
  <h2>Query</h2><pre>${esc(v.definition)}</pre>`;
}

function render() {
  if (!last) return;
  const m = location.hash.match(/^#\/view\/(.+)$/);
  document.getElementById("main").innerHTML = m ? viewPage(last, decodeURIComponent(m[1])) : overviewPage(last);
}

async function tick() {
  try {
    const r = await fetch("api/v1/overview", { cache: "no-store" });
    if (!r.ok) throw new Error(`${r.status} ${r.statusText}`);
    last = await r.json();
    noteSamples(last);
    document.getElementById("status").textContent =
      `${last.views.length} views · ${last.sinks.length} sinks · ${last.sources.length} sources · ${last.sessions} sessions · ${new Date(last.time).toLocaleTimeString()}`;
    render();
  } catch (e) {
    document.getElementById("status").textContent = "cannot read the server: " + e.message;
  }
}

window.addEventListener("hashchange", render);
tick().then(() => setTimeout(tick, 500)); // a second read soon: rates show at once
setInterval(tick, PERIOD);
