// Gantry UI: live updates over server-sent events, the log view and the training curves.
// Plain JavaScript with no dependencies: the pages are complete HTML without it.
"use strict";

function live(el, handlers) {
  const src = new EventSource(el.dataset.live);
  for (const [name, fn] of Object.entries(handlers)) {
    src.addEventListener(name, (e) => fn(e.data));
  }
  src.addEventListener("failure", (e) => { el.dataset.failure = e.data; });
  return src;
}

function jobsPage() {
  const table = document.querySelector("table.jobs[data-live]");
  if (!table) return;
  live(table, {
    rows: (html) => { document.getElementById("rows").innerHTML = html; },
    pager: (html) => { document.getElementById("pager").innerHTML = html; },
  });
}

function jobPage() {
  const header = document.querySelector("#header[data-live]");
  if (!header) return;
  live(header, {
    header: (html) => { header.innerHTML = html; },
    tab: (html) => { document.getElementById("tab").innerHTML = html; },
    notice: (text) => {
      const p = document.getElementById("history-notice");
      if (p) { p.textContent = text; p.hidden = !text; }
    },
    curves: (json) => drawCurves(document.getElementById("charts"), JSON.parse(json) || []),
  });
}

function logView() {
  const log = document.getElementById("log");
  if (!log) return;
  const follow = document.getElementById("follow");
  const src = new EventSource(log.dataset.src);
  src.addEventListener("line", (e) => {
    log.append(e.data + "\n");
    if (!follow || follow.checked) log.scrollTop = log.scrollHeight;
  });
  src.addEventListener("failure", (e) => { log.dataset.failure = e.data; log.append("[" + e.data + "]\n"); src.close(); });
  src.addEventListener("end", () => { log.dataset.ended = "true"; src.close(); });
  for (const sel of document.querySelectorAll("select[data-autosubmit]")) {
    sel.addEventListener("change", () => sel.form.submit());
  }
}

const SVG = "http://www.w3.org/2000/svg";

function svg(tag, attrs) {
  const el = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, v);
  return el;
}

// drawCurves draws one chart per curve: value over wall time, with its first and last values.
function drawCurves(box, curves) {
  box.replaceChildren();
  if (curves.length === 0) {
    const p = document.createElement("p");
    p.className = "empty";
    p.textContent = "No progress reported yet.";
    box.append(p);
    return;
  }
  const W = 480, H = 160, P = 36;
  for (const c of curves) {
    const fig = document.createElement("figure");
    fig.className = "chart";
    fig.dataset.metric = c.name;
    fig.dataset.points = String(c.v.length);
    fig.dataset.last = String(c.v[c.v.length - 1]);
    const t0 = c.t[0], t1 = Math.max(c.t[c.t.length - 1], t0 + 1);
    let lo = Math.min(...c.v), hi = Math.max(...c.v);
    if (lo === hi) { lo -= 1; hi += 1; }
    const x = (t) => P + ((t - t0) / (t1 - t0)) * (W - 2 * P);
    const y = (v) => H - P + ((lo - v) / (hi - lo)) * (H - 2 * P);
    const chart = svg("svg", { viewBox: `0 0 ${W} ${H}`, role: "img", "aria-label": `${c.name} over time` });
    chart.append(svg("line", { x1: P, y1: H - P, x2: W - P, y2: H - P, class: "axis" }));
    chart.append(svg("line", { x1: P, y1: P, x2: P, y2: H - P, class: "axis" }));
    const pts = c.t.map((t, i) => `${x(t).toFixed(1)},${y(c.v[i]).toFixed(1)}`).join(" ");
    chart.append(svg("polyline", { points: pts, class: "series" }));
    for (const [v, yy] of [[hi, P], [lo, H - P]]) {
      const label = svg("text", { x: P - 4, y: yy + 4, "text-anchor": "end", class: "tick" });
      label.textContent = Number(v.toPrecision(4));
      chart.append(label);
    }
    const cap = document.createElement("figcaption");
    cap.textContent = `${c.name}: ${c.v[c.v.length - 1]} (${c.v.length} points)`;
    fig.append(chart, cap);
    box.append(fig);
  }
}

function copyButtons() {
  for (const b of document.querySelectorAll("button[data-copy]")) {
    b.addEventListener("click", async () => {
      const input = b.parentElement.querySelector("input.command");
      try { await navigator.clipboard.writeText(input.value); b.textContent = "Copied"; }
      catch { input.select(); }
    });
  }
}

document.addEventListener("DOMContentLoaded", () => { jobsPage(); jobPage(); logView(); copyButtons(); });
