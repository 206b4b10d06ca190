/**
 * The trajectory browser of a run: one self-contained HTML page (`trajectories.html`) listing every held-out
 * trajectory — filterable by model, level, paradigm and outcome — each opening to its turns, calls, observations,
 * verdict and step / phase / answer rewards. Pure rendering: entries in, the same bytes out for the same entries.
 */
import type { Trajectory } from "../domain/Trajectory.ts"
import { css, escapeHtml, solved, trajectoryDetailsHtml } from "./Report.ts"

/** One held-out trajectory and where it comes from. */
export interface BrowserEntry {
  /** The model as the tables name it (`+SFT & RL (ours)`). */
  readonly model: string
  readonly seed: number
  readonly level: string
  readonly request: string
  readonly trajectory: Trajectory
}

/** What a trajectory came to: `solved` (Quality, Faithfulness and Utility YES: Pass@1's rule), `unsolved`, or `unjudged` (no verdict). */
export const outcomeOf = (t: Trajectory): "solved" | "unsolved" | "unjudged" => (t.verdict === undefined ? "unjudged" : solved(t) ? "solved" : "unsolved")

/** The filters, in the order the page shows them. */
export const filters = ["model", "level", "paradigm", "outcome"] as const

/** JSON safe inside a `<script>` element: no `<` can close it. */
const scriptJson = (value: unknown): string => JSON.stringify(value).replace(/</g, "\\u003c")

/**
 * The page's one script (allowed by its hash in the Content-Security-Policy, nothing else runs): the filters hide the
 * rows they exclude and count what is shown; a row opens to its details, rendered from the embedded HTML strings only
 * when first opened (a run has thousands of trajectories).
 */
const script = `
const details = JSON.parse(document.getElementById("details").textContent);
const rows = [...document.querySelectorAll("tbody#list > tr.entry")];
const selects = [...document.querySelectorAll("select[data-filter]")];
const count = document.getElementById("count");
const apply = () => {
  let shown = 0;
  for (const row of rows) {
    const keep = selects.every((s) => s.value === "" || row.dataset[s.dataset.filter] === s.value);
    row.hidden = !keep;
    const open = row.nextElementSibling;
    if (open !== null && open.classList.contains("open")) open.hidden = !keep;
    if (keep) shown++;
  }
  count.textContent = shown + " of " + rows.length + " trajectories";
};
for (const s of selects) s.addEventListener("change", apply);
document.getElementById("list").addEventListener("click", (event) => {
  const row = event.target.closest("tr.entry");
  if (row === null) return;
  const next = row.nextElementSibling;
  if (next !== null && next.classList.contains("open")) {
    next.remove();
    row.setAttribute("aria-expanded", "false");
    return;
  }
  const open = document.createElement("tr");
  open.className = "open";
  const cell = document.createElement("td");
  cell.colSpan = row.children.length;
  cell.innerHTML = details[Number(row.dataset.index)];
  open.appendChild(cell);
  row.after(open);
  row.setAttribute("aria-expanded", "true");
});
apply();
`.trim()

/** The SHA-256 of the script, base64, for the Content-Security-Policy (computed by the caller's hash function). */
export type Sha256Base64 = (text: string) => string

const browserCss = `
.filters{display:flex;flex-wrap:wrap;gap:8px 18px;align-items:center;margin:10px 0;position:sticky;top:0;background:#fff;padding:6px 0;z-index:2}
.filters label{font-weight:600}select{font:inherit}#count{color:#555}
tr.entry{cursor:pointer}tr.entry:hover td{background:#f6f9ff}tr.open>td{background:#fcfcfc;padding:6px 12px}
table.browser td code{white-space:nowrap;word-break:normal}
td.request{max-width:340px;overflow:hidden;text-overflow:ellipsis;white-space:nowrap}
`.trim()

/** A trajectory's row in the list (`index`: its place in the page, the key of its details). */
const entryRow = (e: BrowserEntry, index: number): string => {
  const t = e.trajectory
  const outcome = outcomeOf(t)
  const calls = t.steps.reduce((n, s) => n + s.observations.length, 0)
  return `<tr class="entry" data-index="${index}" data-model="${escapeHtml(e.model)}" data-level="${escapeHtml(e.level)}" data-paradigm="${escapeHtml(t.paradigm)}" data-outcome="${outcome}" aria-expanded="false">` +
    `<td>${escapeHtml(e.model)}</td><td class="n">${e.seed}</td><td>${escapeHtml(e.level)}</td><td>${escapeHtml(t.paradigm)}</td><td><code>${escapeHtml(t.taskId)}</code></td>` +
    `<td class="${outcome === "solved" ? "good" : outcome === "unjudged" ? "" : "bad"}">${outcome}</td><td class="n">${t.answerReward === undefined ? "–" : t.answerReward.rAns}</td>` +
    `<td class="n">${t.steps.length}</td><td class="n">${calls}</td><td class="request" title="${escapeHtml(e.request)}">${escapeHtml(e.request)}</td></tr>`
}

/** A trajectory's details as one element of the page's embedded JSON array (HTML rendered when its row opens). */
const entryDetails = (e: BrowserEntry): string => scriptJson(`<blockquote>${escapeHtml(e.request)}</blockquote>${trajectoryDetailsHtml(e.trajectory)}`)

/**
 * The page built one trajectory at a time, so a run's thousands of trajectories never sit in memory at once: `add`
 * keeps the entry's row (a few hundred bytes) and what the filters offer, and returns its details — the element the
 * caller spools, in order, between {@link Builder.head} and {@link Builder.tail}, separated by `","`. The bytes are
 * {@link renderBrowser}'s for the same entries.
 */
export interface Builder {
  readonly add: (entry: BrowserEntry) => string
  /** Everything before the details array (the filters, the count and the list need every entry added first). */
  readonly head: () => string
  /** Everything after the details array. */
  readonly tail: () => string
}

/**
 * A {@link Builder}. `sha256` hashes the inline script for the page's Content-Security-Policy (`node:crypto` in the
 * caller: this module stays free of Node).
 */
export const builder = (title: string, sha256: Sha256Base64): Builder => {
  const rows: Array<string> = []
  const models = new Set<string>()
  const levels = new Set<string>()
  const paradigms = new Set<string>()
  const outcomes = new Set<string>()
  return {
    add: (e) => {
      rows.push(entryRow(e, rows.length))
      models.add(e.model)
      levels.add(e.level)
      paradigms.add(e.trajectory.paradigm)
      outcomes.add(outcomeOf(e.trajectory))
      return entryDetails(e)
    },
    head: () => {
      const options: Record<(typeof filters)[number], ReadonlyArray<string>> = {
        model: [...models],
        level: [...levels].sort(),
        paradigm: [...paradigms],
        outcome: ["solved", "unsolved", "unjudged"].filter((o) => outcomes.has(o))
      }
      const selects = filters.map((f) =>
        `<label>${f} <select data-filter="${f}"><option value="">all</option>${options[f].map((v) => `<option value="${escapeHtml(v)}">${escapeHtml(v)}</option>`).join("")}</select></label>`
      )
      const head = ["Model", "Seed", "Level", "Paradigm", "Task", "Outcome", "R_ans", "Rounds", "Calls", "Request"]
      return [
        "<!doctype html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8">',
        `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'sha256-${sha256(script)}'">`,
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        `<title>${escapeHtml(title)}</title>`,
        `<style>${css}\n${browserCss}</style>`,
        "</head>",
        "<body>",
        `<header><h1>${escapeHtml(title)}</h1><p>Every held-out trajectory of the run. Choose a filter; click a row for its turns, calls, observations, verdict and rewards.</p></header>`,
        `<div class="filters">${selects.join("")}<span id="count">${rows.length} of ${rows.length} trajectories</span></div>`,
        `<div class="scroll"><table class="browser"><thead><tr>${head.map((h) => `<th>${h}</th>`).join("")}</tr></thead><tbody id="list">${rows.join("")}</tbody></table></div>`,
        `<script type="application/json" id="details">[`
      ].join("\n")
    },
    tail: () => ["]</script>", `<script>${script}</script>`, "</body>", "</html>", ""].join("\n")
  }
}

/** The browser page of `entries` at once (see {@link builder}, which the pipeline uses to spool a run's page). */
export const renderBrowser = (title: string, entries: ReadonlyArray<BrowserEntry>, sha256: Sha256Base64): string => {
  const page = builder(title, sha256)
  const details = entries.map(page.add)
  return `${page.head()}${details.join(",")}${page.tail()}`
}
