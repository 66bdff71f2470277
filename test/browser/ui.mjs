// Drives `gantry ui` in Debian's Chromium and checks what a practitioner sees. The Go test
// (browser_test.go) starts the UI against an API server with fixtures, and a control endpoint
// that changes the cluster while the page is open; it passes their addresses in the
// environment and fails when this script exits non-zero.
import { chromium } from "playwright-core";
import { readFileSync, mkdirSync } from "node:fs";
import { createRequire } from "node:module";

const env = process.env;
const require = createRequire(import.meta.url);
const axeSource = readFileSync(require.resolve("axe-core/axe.min.js"), "utf8");
const expected = JSON.parse(readFileSync(env.EXPECT_FILE, "utf8"));
const artifacts = env.ARTIFACTS;
mkdirSync(artifacts, { recursive: true });

let failures = 0;
function check(ok, what, detail = "") {
  if (ok) {
    console.log(`ok   ${what}`);
  } else {
    failures++;
    console.log(`FAIL ${what}${detail ? ": " + detail : ""}`);
  }
}

async function control(path) {
  const res = await fetch(env.CONTROL_URL + path, { method: "POST" });
  if (!res.ok) throw new Error(`control ${path}: ${res.status} ${await res.text()}`);
}

// waitFor polls fn (in Node) until it returns true, up to ms; it returns the time taken, or -1.
async function waitFor(fn, ms) {
  const start = Date.now();
  while (Date.now() - start < ms) {
    if (await fn()) return Date.now() - start;
    await new Promise((r) => setTimeout(r, 20));
  }
  return -1;
}

// The UI's Content-Security-Policy refuses inline scripts, so axe-core is evaluated through the
// DevTools protocol (outside the page's policy) rather than added as a <script>.
async function axeCheck(page, name) {
  await page.evaluate(axeSource);
  const result = await page.evaluate(async () => await window.axe.run(document, { resultTypes: ["violations"] }));
  const serious = result.violations.filter((v) => v.impact === "serious" || v.impact === "critical");
  check(serious.length === 0, `${name}: no serious accessibility violations (axe-core)`,
    serious.map((v) => `${v.id}: ${v.nodes.length} nodes`).join(", "));
}

// Every page the UI serves must carry its Content-Security-Policy and break none of it: the
// browser reports each violation as a securitypolicyviolation event and a console error.
const cspViolations = [];
const withoutCSP = [];
const uiOrigins = [env.UI_URL, env.AUTH_URL];
async function watchCSP(page) {
  await page.addInitScript(() => {
    document.addEventListener("securitypolicyviolation", (e) =>
      console.error(`CSP violation: ${e.violatedDirective} refused ${e.blockedURI || "inline"} at ${e.sourceFile}:${e.lineNumber}`));
  });
  page.on("console", (msg) => {
    if (/Content Security Policy|CSP violation/.test(msg.text())) cspViolations.push(`${page.url()}: ${msg.text()}`);
  });
  page.on("response", (res) => {
    const type = res.request().resourceType();
    if (uiOrigins.some((o) => res.url().startsWith(o)) && ["document", "script", "stylesheet", "eventsource", "fetch"].includes(type) &&
      !(res.headers()["content-security-policy"] || "").includes("script-src 'self'")) {
      withoutCSP.push(`${type} ${res.url()} (${res.status()})`);
    }
  });
  return page;
}

const browser = await chromium.launch({
  executablePath: env.CHROMIUM || "/usr/bin/chromium",
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync"],
});
try {
  const page = await watchCSP(await browser.newPage({ viewport: { width: 1400, height: 900 } }));
  const ns = expected.namespace;

  // 1. The Jobs page shows the command line's states.
  await page.goto(`${env.UI_URL}/jobs?ns=${ns}`);
  const rows = await page.$$eval("#rows tr[data-job]", (trs) => trs.map((tr) => [tr.dataset.job, tr.querySelector(".chip").textContent]));
  const shown = Object.fromEntries(rows.map(([job, chip]) => [job.split("/")[1], chip]));
  check(rows.length === Object.keys(expected.states).length, `Jobs page: ${rows.length} rows`, `want ${Object.keys(expected.states).length}`);
  const wrong = Object.entries(expected.states).filter(([name, state]) => shown[name] !== state);
  check(wrong.length === 0, "Jobs page: every chip is the state kubectl gantry list -o json prints",
    wrong.map(([n, s]) => `${n}: ${shown[n]} (want ${s})`).join(", "));
  const distinct = new Set(Object.values(expected.states));
  check(distinct.size >= 6, `the fixture has ${distinct.size} states`);
  await axeCheck(page, "Jobs page");
  await page.screenshot({ path: `${artifacts}/jobs.png`, fullPage: true });

  // 2. A job completing changes its chip without a reload.
  const target = expected.toComplete;
  await page.evaluate(() => { window.__notReloaded = true; });
  await control(`/complete?job=${target}`);
  const took = await waitFor(async () =>
    (await page.textContent(`#rows tr[data-job="${ns}/${target}"] .chip`)) === "Complete", 5000);
  check(took >= 0 && took < 1000, `Jobs page: ${target}'s chip turned Complete in ${took} ms, under 1 s`);
  check(await page.evaluate(() => window.__notReloaded === true), "Jobs page: without a reload");

  // 3. Twenty progress reports draw twenty points; a restarted UI (history in ConfigMaps) too.
  const job = expected.progressJob;
  await page.goto(`${env.UI_URL}/jobs/${ns}/${job}?tab=progress`);
  for (let i = 0; i < 20; i++) {
    await control(`/progress?job=${job}&i=${i}`);
    await waitFor(async () => (await page.getAttribute('figure[data-metric="loss"]', "data-points").catch(() => null)) === String(i + 1), 5000);
  }
  const points = await page.getAttribute('figure[data-metric="loss"]', "data-points");
  const last = await page.getAttribute('figure[data-metric="loss"]', "data-last");
  check(points === "20" && last === "0.1", `Progress tab: loss has ${points} points, the last ${last}`, "want 20 and 0.1");
  const bar = await page.getAttribute("#header .meter", "aria-valuenow");
  check(bar === "95", `Progress bar shows the last report: ${bar}%`, "want 95");
  await page.screenshot({ path: `${artifacts}/job-progress.png`, fullPage: true });
  await control("/restart");
  await page.goto(`${env.UI_URL}/jobs/${ns}/${job}?tab=progress`);
  await waitFor(async () => (await page.getAttribute('figure[data-metric="loss"]', "data-points").catch(() => null)) === "20", 5000);
  const after = await page.getAttribute('figure[data-metric="loss"]', "data-points");
  check(after === "20", `after a restart of the UI, loss still has ${after} points`, "want 20");

  // 3b. A job reporting more metric names than the UI charts is told so, once, on its Progress tab.
  const spam = expected.spamJob;
  await page.goto(`${env.UI_URL}/jobs/${ns}/${spam}?tab=progress`);
  await control(`/spam?job=${spam}&n=40`);
  const told = "8 metrics of this job's last report are not charted: the UI charts the first 32 metric names a job reports";
  const noticeText = () => page.textContent("#history-notice", { timeout: 1000 }).catch(() => null);
  await waitFor(async () => ((await noticeText()) || "").startsWith(told), 5000);
  const notice = (await noticeText()) || "";
  const charts = await page.$$eval("figure[data-metric]", (fs) => fs.length);
  check(notice.startsWith(told) && await page.isVisible("#history-notice"), "Progress tab: says 8 of 40 metric names are not charted", JSON.stringify(notice));
  check(charts === 32, `Progress tab: ${charts} charts of 40 metrics`, "want 32");
  await page.screenshot({ path: `${artifacts}/job-progress-notice.png`, fullPage: true });

  // 4. Log lines appear in order as they are written; another step shows its own pod.
  const logJob = expected.logJob;
  await page.goto(`${env.UI_URL}/jobs/${ns}/${logJob}?tab=logs&step=node-0`);
  await page.waitForSelector("#log");
  const lines = ["epoch 1 loss 1.0", "epoch 2 loss 0.5", "epoch 3 loss 0.25"];
  let slowest = 0;
  for (const line of lines) {
    await control(`/log?pod=${expected.logPods["node-0"]}&line=${encodeURIComponent(line)}`);
    const t = await waitFor(async () => (await page.textContent("#log")).includes(line), 5000);
    slowest = t < 0 ? Infinity : Math.max(slowest, t);
  }
  const text = await page.textContent("#log");
  check(text === lines.join("\n") + "\n", "Logs tab: node-0's lines, in order", JSON.stringify(text));
  check(slowest < 1000, `Logs tab: each line within ${slowest} ms, under 1 s`);
  await control(`/log?pod=${expected.logPods["node-1"]}&line=${encodeURIComponent("rank 1 here")}`);
  await page.selectOption('select[name="step"]', "node-1");
  await page.waitForURL(/step=node-1/);
  await waitFor(async () => (await page.textContent("#log")).includes("rank 1 here"), 5000);
  check((await page.textContent("#log")) === "rank 1 here\n", "Logs tab: switching to node-1 shows its pod's lines");
  await axeCheck(page, "Job page (logs)");

  // 5. A failed pod's event, with its reason and time.
  await page.goto(`${env.UI_URL}/jobs/${ns}/${logJob}?tab=events`);
  const ev = await page.$eval('tr[data-reason="Failed"]', (tr) => [tr.children[2].textContent, tr.querySelector("time").getAttribute("datetime")]).catch(() => null);
  check(ev && ev[0] === "Failed" && /^\d{4}-\d\d-\d\dT/.test(ev[1]), "Events tab: the failed pod's event with its reason and time", JSON.stringify(ev));
  await page.screenshot({ path: `${artifacts}/job-events.png`, fullPage: true });

  // 6. One card per runtime, with the jobs using it.
  await page.goto(`${env.UI_URL}/runtimes`);
  for (const [name, want] of Object.entries(expected.runtimes)) {
    const card = `article[data-runtime="ClusterTrainingRuntime/${name}"]`;
    const uses = await page.textContent(`${card} .uses`).catch(() => null);
    const deprecated = await page.$(`${card}.deprecated`);
    check(uses === String(want.jobs) && Boolean(deprecated) === want.deprecated,
      `Runtimes: ${name} is used by ${uses} jobs${deprecated ? ", deprecated" : ""}`, JSON.stringify(want));
  }
  await axeCheck(page, "Runtimes page");
  await page.screenshot({ path: `${artifacts}/runtimes.png`, fullPage: true });

  // 6b. OptimizationJobs: reached from the nav; the page's trials link to their TrainJob pages
  // with their objectives, the best is highlighted, and each parameter has a scatter (inline SVG).
  const opt = expected.optimization;
  await page.goto(`${env.UI_URL}/jobs`);
  await Promise.all([page.waitForURL(/\/optimizationjobs$/), page.click('nav[aria-label="Main"] a[href="/optimizationjobs"]')]);
  const listed = await page.$eval(`tr[data-optimizationjob="${opt.namespace}/${opt.name}"] .best-value`, (td) => td.textContent).catch(() => null);
  check(listed === opt.objectives[opt.trials.indexOf(opt.best)], `OptimizationJobs: ${opt.name} listed with its best objective ${listed}`);
  await axeCheck(page, "OptimizationJobs page");
  await Promise.all([page.waitForURL(new RegExp(`/optimizationjobs/${opt.namespace}/${opt.name}$`)),
    page.click(`tr[data-optimizationjob="${opt.namespace}/${opt.name}"] a`)]);
  const trials = await page.$$eval("tr[data-trial]", (trs) => trs.map((tr) => [tr.dataset.trial,
    tr.querySelector("a").getAttribute("href"), tr.querySelector(".objective").textContent, tr.classList.contains("best")]));
  check(JSON.stringify(trials.map((t) => t[0])) === JSON.stringify(opt.trials), `OptimizationJob page: trials ${trials.map((t) => t[0])}`, JSON.stringify(opt.trials));
  check(trials.every((t) => t[1] === `/jobs/${opt.namespace}/${t[0]}`), "OptimizationJob page: each trial links to its TrainJob page");
  check(JSON.stringify(trials.map((t) => t[2])) === JSON.stringify(opt.objectives), `OptimizationJob page: objectives ${trials.map((t) => t[2])}`, JSON.stringify(opt.objectives));
  const best = trials.filter((t) => t[3]).map((t) => t[0]);
  const bestBg = await page.$eval("tr.best td", (td) => getComputedStyle(td).backgroundColor).catch(() => null);
  check(JSON.stringify(best) === JSON.stringify([opt.best]) && bestBg && bestBg !== "rgba(0, 0, 0, 0)",
    `OptimizationJob page: ${best} highlighted (${bestBg})`, opt.best);
  for (const [param, n] of Object.entries(opt.points)) {
    const dots = await page.$$eval(`figure[data-parameter="${param}"] svg circle`, (cs) => cs.map((c) => c.classList.contains("best")));
    const box = await page.$eval(`figure[data-parameter="${param}"] svg`, (s) => s.getBoundingClientRect().width).catch(() => 0);
    check(dots.length === n && dots.filter(Boolean).length === 1 && box > 100,
      `OptimizationJob page: the ${param} scatter draws ${dots.length} trials, the best marked, ${box}px wide`, `want ${n}`);
  }
  await axeCheck(page, "OptimizationJob page");
  await page.screenshot({ path: `${artifacts}/optimizationjob.png`, fullPage: true });
  await Promise.all([page.waitForURL(new RegExp(`/jobs/${opt.namespace}/${opt.best}$`)), page.click(`tr[data-trial="${opt.best}"] a`)]);
  check((await page.textContent("h1")).includes(opt.best), `OptimizationJob page: the best trial's link opens its TrainJob page`);

  // 7. Token mode: no token, 401; a user of one namespace is refused another, its stream too.
  const anon = await watchCSP(await browser.newPage());
  const res = await anon.goto(`${env.AUTH_URL}/jobs?ns=${expected.userNamespace}`);
  check(res.status() === 401, `token mode: no token is ${res.status()}`, "want 401");
  await anon.setExtraHTTPHeaders({ Authorization: `Bearer ${env.AUTH_TOKEN}` });
  const own = await anon.goto(`${env.AUTH_URL}/jobs?ns=${expected.userNamespace}`);
  check(own.status() === 200, `token mode: the user's namespace is ${own.status()}`);
  const named = await anon.$$eval('select[name="runtime"] option', (os) => os.map((o) => o.textContent).filter((t) => t !== "any"));
  check(JSON.stringify(named) === JSON.stringify(expected.userRuntimes),
    `token mode: the runtime filter names only the runtimes the user may list: ${JSON.stringify(named)}`, JSON.stringify(expected.userRuntimes));
  const other = await anon.goto(`${env.AUTH_URL}/jobs?ns=${ns}`);
  const body = await anon.textContent("body");
  check(other.status() === 403 && body.includes("forbidden"), `token mode: another namespace is ${other.status()} and says forbidden`);
  const stream = await anon.evaluate(async (u) => (await fetch(u)).status, `${env.AUTH_URL}/live/jobs?ns=${ns}`);
  check(stream === 403, `token mode: the other namespace's event stream is ${stream}`, "want 403");

  // 9. The Jobs page of 1,000 TrainJobs: the first 100, DOM ready and bytes on the wire; Next.
  const big = await watchCSP(await browser.newPage());
  await big.goto(`${env.UI_URL}/jobs?ns=${expected.scaleNamespace}`);
  const nav = await big.evaluate(() => {
    const n = performance.getEntriesByType("navigation")[0];
    return { ready: n.domContentLoadedEventEnd, transfer: n.transferSize, body: n.decodedBodySize };
  });
  const rowsOf = (p) => p.$$eval("#rows tr[data-job]", (trs) => trs.map((tr) => tr.dataset.job));
  const first = await rowsOf(big);
  const counted = await big.textContent("#pager .count");
  console.log(`figure: Jobs page with ${expected.scaleJobs} TrainJobs: DOM ready ${nav.ready.toFixed(0)} ms, ${nav.transfer} bytes transferred (${nav.body} of HTML)`);
  check(first.length === 100 && counted === `1–100 of ${expected.scaleJobs.toLocaleString("en-US")}`,
    `1,000 jobs: the first page has ${first.length} rows and says "${counted}"`);
  check(nav.transfer < 150 * 1024, `1,000 jobs: ${nav.transfer} bytes transferred, under 150 KiB`);
  check(nav.ready < 1000, `1,000 jobs: DOM ready in ${nav.ready.toFixed(0)} ms, under 1 s`);
  await Promise.all([big.waitForURL(/page=2/), big.click("#pager a[rel=next]")]);
  const second = await rowsOf(big);
  const overlap = second.filter((j) => first.includes(j)).length;
  check(second.length === 100 && overlap === 0 && (await big.textContent("#pager .count")).startsWith("101–200 of"),
    `1,000 jobs: Next shows ${second.length} other rows (${overlap} repeated)`);
  await axeCheck(big, "Jobs page (page 2)");

  // 10. No page broke its Content-Security-Policy, and every answer carried one.
  check(cspViolations.length === 0, `no Content-Security-Policy violation (${cspViolations.length})`, cspViolations.slice(0, 5).join("; "));
  check(withoutCSP.length === 0, `every answer of the UI carries its Content-Security-Policy (${withoutCSP.length} without)`, withoutCSP.slice(0, 5).join("; "));
} finally {
  await browser.close();
}
console.log(failures === 0 ? "PASS" : `${failures} checks failed`);
process.exit(failures === 0 ? 0 : 1);
