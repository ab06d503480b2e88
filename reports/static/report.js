// jax-conformance report: the case matrix, its filters, case details and the behaviour x release table.
// Plain JavaScript over window.REPORT_DATA (data.js); details load on demand from detail/NNNN.js.
// Every string from results reaches the page through textContent or a checked attribute, never innerHTML.
(function () {
  "use strict";

  const D = window.REPORT_DATA;
  const build = document.body.dataset.build;
  const PAGE = 100;  // rows per page of the release table
  // Rows per matrix page: about 40,000 cells. A run's matrix (hundreds of cases x a few dozen columns) is one
  // page that the page's own scrollbar moves through; only a very wide merge gets pages.
  const matrixPage = () => Math.max(200, Math.round(40000 / Math.max(1, state.cols.length)));
  const SYMBOL = { p: "✓", f: "✗", e: "E", s: "s", n: "·", x: "x", X: "X!", c: "C", t: "T", "-": "" };
  const UNEXPECTED = new Set(["f", "e", "X", "c", "t"]);
  const STATUS = { H: ["holds", "✓"], F: ["fails", "✗"], P: ["partly", "◐"], N: ["not applicable", "·"], "-": ["not run", ""] };
  const state = { rows: [], cols: [], page: 0, compatPage: {} };
  const caseIndex = new Map();
  const tableOf = new Map();  // a table cell's case index -> its table's index in D.tables
  const chunks = new Map();
  const resolvers = new Map();

  function el(tag, attrs, text) {
    const e = document.createElement(tag);
    if (attrs) {
      for (const [k, v] of Object.entries(attrs)) {
        if (k === "class") e.className = v;
        else e.setAttribute(k, v);
      }
    }
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }

  function outcomeName(code) {
    return (D.codes[code] || (code === "-" ? "not run" : code)).replace("_", " ");
  }

  function caseHref(id, col) {
    return "#case=" + encodeURIComponent(id) + (col === undefined ? "" : "&col=" + col);
  }

  function safeUrl(url) {
    const text = String(url || "");
    return /^https?:\/\//.test(text) ? text : "";
  }

  // A spec file and line, a link to the file where the report found it on this machine (site.py
  // writes spec_href: a file:// URL of a file it checked; nothing else is made a link here).
  function specLink(info, line) {
    const text = info.spec_file + (line ? ":" + line : "");
    const href = String(info.spec_href || "");
    return href.startsWith("file:///") ? el("a", { class: "spec-link", href: href }, text) : text;
  }

  // ------------------------------------------------------------ filters

  const f = {
    search: document.getElementById("f-search"),
    topic: document.getElementById("f-topic"),
    outcome: document.getElementById("f-outcome"),
    mode: document.getElementById("f-mode"),
    version: document.getElementById("f-version"),
    basis: document.getElementById("f-basis"),
  };

  function fillSelects() {
    D.topics.forEach((t, i) => f.topic.appendChild(el("option", { value: String(i) }, t)));
    for (const [code, name] of Object.entries(D.codes)) {
      f.outcome.appendChild(el("option", { value: code }, name.replace("_", " ")));
    }
    const modes = [...new Set(D.columns.map((c) => c.mode))];
    modes.forEach((m) => f.mode.appendChild(el("option", { value: m }, m)));
    const versions = [...new Set(D.columns.map((c) => c.adapter + " " + c.version))];
    versions.forEach((v) => f.version.appendChild(el("option", { value: v }, v)));
  }

  // The same adapter, backend and mode at different releases: what an upgrade changes.
  function differsAcrossReleases(i) {
    const seen = new Map();
    for (const c of state.cols) {
      const code = D.grid[i][c];
      if (code === "-") continue;
      const col = D.columns[c];
      const key = col.adapter + "|" + col.backend + "|" + col.mode;
      if (!seen.has(key)) seen.set(key, code);
      else if (seen.get(key) !== code) return true;
    }
    return false;
  }

  function applyFilters() {
    const q = f.search.value.trim().toLowerCase();
    const topic = f.topic.value === "" ? -1 : Number(f.topic.value);
    const outcome = f.outcome.value;
    state.cols = D.columns.map((c, i) => i).filter((i) => {
      const c = D.columns[i];
      return (!f.mode.value || c.mode === f.mode.value) && (!f.version.value || c.adapter + " " + c.version === f.version.value);
    });
    const narrowed = state.cols.length !== D.columns.length;
    state.rows = [];
    // cells: every outcome code shown in the row; perColumn: one code per column (a table's worst)
    const want = (cells, perColumn) => {
      if (narrowed && cells.every((x) => x === "-")) return false;
      if (outcome === "unexpected" && !cells.some((x) => UNEXPECTED.has(x))) return false;
      if (outcome === "differs" && new Set(perColumn.filter((x) => x !== "-")).size < 2) return false;
      if (outcome.length === 1 && !cells.includes(outcome)) return false;
      return true;
    };
    const basisOk = (basis) => !(f.basis && f.basis.value && (f.basis.value === "counted" ? !["documented", "tested", ""].includes(basis) : basis !== f.basis.value));
    for (let i = 0; i < D.cases.length; i++) {
      const [id, t, claim, basis] = D.cases[i];
      if (topic >= 0 && t !== topic) continue;
      const n = tableOf.get(i);
      if (n !== undefined) {
        // A table's cells are one row (a negative number: -1 - its index), placed at its first cell.
        const table = D.tables[n];
        if (table.members[0] !== i) continue;
        const members = table.members.filter((m) => basisOk(D.cases[m][3]));
        if (!members.length) continue;
        if (q && !table.id.toLowerCase().includes(q) && !(claim && claim.toLowerCase().includes(q)) && !members.some((m) => D.cases[m][0].toLowerCase().includes(q))) continue;
        if (outcome === "releases" && !members.some(differsAcrossReleases)) continue;
        const codes = members.flatMap((m) => state.cols.map((c) => D.grid[m][c]));
        if (outcome !== "releases" && !want(codes, state.cols.map((c) => summarise(members, c).code))) continue;
        state.rows.push(-1 - n);
        continue;
      }
      if (!basisOk(basis)) continue;
      if (q && !id.toLowerCase().includes(q) && !(claim && claim.toLowerCase().includes(q))) continue;
      const cells = state.cols.map((c) => D.grid[i][c]);
      if (outcome === "releases" ? !differsAcrossReleases(i) : !want(cells, cells)) continue;
      state.rows.push(i);
    }
    state.page = 0;
    for (const k of Object.keys(state.compatPage)) state.compatPage[k] = 0;
    renderMatrix();
    renderCompat();
  }

  // ------------------------------------------------------------ matrix

  function renderMatrix() {
    const table = document.getElementById("matrix-table");
    table.replaceChildren();
    const head = el("thead");
    const hr = el("tr");
    hr.appendChild(el("th", { class: "case-col" }, "case"));
    for (const c of state.cols) {
      const col = D.columns[c];
      const th = el("th", { class: "col" + (col.interrupted ? " interrupted" : ""), title: col.label + (col.status === "unavailable" || col.status === "error" ? " (" + col.status + ": " + col.reason + ")" : col.interrupted ? " (interrupted)" : "") });
      th.appendChild(el("div", null, col.adapter + " " + col.version));
      th.appendChild(el("div", null, col.backend));
      // A mode with flags (off-warn+jax_custom_vjp3+...) shows one flag a line, so its column stays narrow.
      const [base, ...flags] = col.mode.split("+");
      th.appendChild(el("div", { class: "nobr" }, base + (col.status === "unavailable" || col.status === "error" ? " (" + col.status + ")" : col.interrupted ? " ⚠" : "")));
      flags.forEach((flag) => {
        // a long flag name may break after its underscores (<wbr>) and nowhere else, so a page of
        // 1024 px holds every column
        const div = el("div", { class: "flag" });
        ("+" + flag).split("_").forEach((part, i, parts) => {
          div.appendChild(el("span", { class: "nobr" }, part + (i < parts.length - 1 ? "_" : "")));
          if (i < parts.length - 1) div.appendChild(document.createElement("wbr"));
        });
        th.appendChild(div);
      });
      hr.appendChild(th);
    }
    head.appendChild(hr);
    table.appendChild(head);
    const body = el("tbody");
    const size = matrixPage();
    const first = state.page * size;
    const shown = state.rows.slice(first, first + size);
    let topic = -1;
    for (const i of shown) {
      if (i < 0) {
        const tr = tableRow(D.tables[-1 - i]);
        const t = D.cases[D.tables[-1 - i].members[0]][1];
        if (t !== topic) {
          topic = t;
          const head = el("tr", { class: "topic" });
          head.appendChild(el("th", { colspan: String(state.cols.length + 1) }, D.topics[t]));
          body.appendChild(head);
        }
        body.appendChild(tr);
        continue;
      }
      const [id, t, claim] = D.cases[i];
      if (t !== topic) {
        topic = t;
        const tr = el("tr", { class: "topic" });
        tr.appendChild(el("th", { colspan: String(state.cols.length + 1) }, D.topics[t]));
        body.appendChild(tr);
      }
      const tr = el("tr", { "data-case": id });
      const th = el("th", { class: "case-col" });
      th.appendChild(el("a", { href: caseHref(id) }, id));
      if (claim) th.appendChild(el("div", { class: "claim" }, claim));
      tr.appendChild(th);
      for (const c of state.cols) {
        const code = D.grid[i][c];
        const td = el("td", code === "-" ? null : { class: "bg-" + D.codes[code] });
        if (code !== "-") {
          const name = outcomeName(code);
          td.appendChild(el("a", { class: "cell o-" + D.codes[code], href: caseHref(id, c), title: D.columns[c].label + ": " + name, "data-outcome": D.codes[code] }, SYMBOL[code]));
        }
        tr.appendChild(td);
      }
      body.appendChild(tr);
    }
    table.appendChild(body);
    const cells = D.tables.reduce((n, t) => n + t.members.length, 0);
    document.getElementById("f-count").textContent =
      state.rows.length + " of " + (D.cases.length - cells + D.tables.length) + " cases × " + state.cols.length + " of " + D.columns.length + " columns" +
      (D.tables.length ? " (" + D.tables.length + " table" + (D.tables.length === 1 ? "" : "s") + " of " + cells + " cells, a row each)" : "");
    renderPager(document.getElementById("pager"), state.rows.length, state.page, (p) => { state.page = p; renderMatrix(); }, size);
  }

  // Worst first: a table's cell in the matrix shows the worst outcome of its cells in that column.
  const SEVERITY = ["c", "t", "e", "X", "f", "x", "p", "s", "n"];

  // A table's cells in one column: the worst outcome, how many of each, and the hover text.
  function summarise(members, c) {
    const counts = {};
    for (const m of members) {
      const code = D.grid[m][c];
      if (code !== "-") counts[code] = (counts[code] || 0) + 1;
    }
    const code = SEVERITY.find((k) => counts[k]) || "-";
    const bad = Object.entries(counts).filter(([k]) => UNEXPECTED.has(k)).reduce((n, [, v]) => n + v, 0);
    const text = Object.entries(counts).map(([k, v]) => v + " " + outcomeName(k)).join(", ");
    return { code, bad, text };
  }

  // A table's row of the matrix: its id (a link to its grids in the Tables section), and per column
  // the worst outcome of its cells with the number that did not hold.
  function tableRow(table) {
    const tr = el("tr", { "data-table": table.id });
    const th = el("th", { class: "case-col" });
    th.appendChild(el("a", { href: "#table-" + table.id }, table.id));
    th.appendChild(el("div", { class: "claim" }, "a table of " + table.members.length + " cells" + (D.cases[table.members[0]][2] ? ": " + D.cases[table.members[0]][2] : "")));
    tr.appendChild(th);
    for (const c of state.cols) {
      const s = summarise(table.members, c);
      const td = el("td", s.code === "-" ? null : { class: "bg-" + D.codes[s.code] });
      if (s.code !== "-") {
        td.appendChild(el("a", { class: "cell o-" + D.codes[s.code], href: "#table-" + table.id, title: D.columns[c].label + ": " + s.text, "data-outcome": D.codes[s.code] }, SYMBOL[s.code] + (s.bad ? " " + s.bad : "")));
      }
      tr.appendChild(td);
    }
    return tr;
  }

  // ------------------------------------------------------------ tables

  // A table's cells as a row x column grid per column of the report (each mode), drawn when opened. Over
  // several releases, one release's grids at a time (the newest first; a select picks another), so a
  // merge of dozens of releases draws a mode's worth of grids, not hundreds.
  function renderTableGrids(box) {
    if (box.dataset.drawn) return;
    box.dataset.drawn = "1";
    const table = D.tables[Number(box.dataset.table)];
    const cols = D.columns.map((c, i) => i).filter((c) => table.members.some((m) => D.grid[m][c] !== "-"));
    const releases = [...new Set(cols.map((c) => D.columns[c].adapter + " " + D.columns[c].version))];
    const grids = el("div", { class: "grids" });
    const draw = (release) => drawTableGrids(grids, table, cols.filter((c) => D.columns[c].adapter + " " + D.columns[c].version === release));
    if (releases.length > 1) {
      const label = el("label", { class: "grid-release" }, "Release ");
      const select = el("select", { class: "grid-release-select" });
      releases.forEach((r) => select.appendChild(el("option", { value: r }, r)));
      select.value = releases[releases.length - 1];
      select.addEventListener("change", () => draw(select.value));
      label.appendChild(select);
      box.appendChild(label);
    }
    box.appendChild(grids);
    if (releases.length > 1) draw(releases[releases.length - 1]);
    else drawTableGrids(grids, table, cols);
  }

  function drawTableGrids(box, table, cols) {
    box.replaceChildren();
    for (const c of cols) {
      const s = summarise(table.members, c);
      const fig = el("figure", { class: "tgrid-box", "data-column": String(c) });
      fig.appendChild(el("figcaption", { class: s.bad ? "bad" : "" }, D.columns[c].label + ": " + s.text));
      const scroll = el("div", { class: "grid-scroll" });
      const grid = el("table", { class: "tgrid" });
      const hr = el("tr");
      hr.appendChild(el("th"));
      table.cols.forEach((name) => hr.appendChild(el("th", { class: "tg-col", title: name })).appendChild(el("span", null, name)));
      grid.appendChild(el("thead")).appendChild(hr);
      const body = el("tbody");
      table.rows.forEach((row, r) => {
        const tr = el("tr");
        tr.appendChild(el("th", { class: "tg-row" }, row));
        table.cols.forEach((col, k) => {
          const m = table.grid[r * table.cols.length + k];
          const code = m < 0 ? "-" : D.grid[m][c];
          const td = el("td", code === "-" ? null : { class: "bg-" + D.codes[code] });
          if (code !== "-") {
            td.appendChild(el("a", { class: "tg o-" + D.codes[code], href: caseHref(D.cases[m][0], c), title: D.cases[m][0].slice(table.id.length) + ": " + outcomeName(code), "data-outcome": D.codes[code] }, SYMBOL[code]));
          }
          tr.appendChild(td);
        });
        body.appendChild(tr);
      });
      grid.appendChild(body);
      scroll.appendChild(grid);
      fig.appendChild(scroll);
      box.appendChild(fig);
    }
  }

  function renderPager(box, total, page, go, size = PAGE) {
    box.replaceChildren();
    if (total <= size) return;
    const last = Math.ceil(total / size) - 1;
    const prev = el("button", { type: "button" }, "‹ previous");
    prev.disabled = page === 0;
    prev.addEventListener("click", () => go(page - 1));
    const next = el("button", { type: "button" }, "next ›");
    next.disabled = page >= last;
    next.addEventListener("click", () => go(page + 1));
    box.append(prev, el("span", null, "rows " + (page * size + 1) + "–" + Math.min(total, (page + 1) * size) + " of " + total), next);
  }

  function renderLegend() {
    const box = document.getElementById("legend");
    for (const [code, name] of Object.entries(D.codes)) {
      const item = el("span", { class: "cell o-" + name }, SYMBOL[code]);
      box.append(item, el("span", { class: "legend-name" }, name.replace("_", " ")));
    }
  }

  // ------------------------------------------------------------ behaviour x release

  // A case's status over some columns (report.js's twin of releases.status_over_modes): H, F, P, N or "-".
  function statusOver(ci, cols) {
    let seen = 0, applicable = 0, holding = 0;
    for (const c of cols) {
      const code = D.grid[ci][c];
      if (code === "-") continue;
      seen += 1;
      if (code === "n" || code === "s") continue;
      applicable += 1;
      if (code === "p" || code === "X") holding += 1;
    }
    if (!seen) return "-";
    if (!applicable) return "N";
    return holding === applicable ? "H" : holding === 0 ? "F" : "P";
  }

  // The release table's columns: per release (over every mode and backend, as the data has it), or per
  // release and mode, or per release and backend (computed here from the case x column grid).
  function compatColumns(t, split) {
    const out = [];
    t.releases.forEach((r, k) => {
      const cols = D.columns.map((c, i) => i).filter((i) => D.columns[i].adapter === t.adapter && D.columns[i].version === r);
      const keys = split ? [...new Set(cols.map((i) => D.columns[i][split]))].sort() : [null];
      for (const key of keys) {
        out.push({ release: r, k, key, cols: key === null ? cols : cols.filter((i) => D.columns[i][split] === key) });
      }
    });
    return out;
  }

  function renderCompat() {
    const box = document.getElementById("compat");
    if (!box) return;
    box.replaceChildren();
    const split = (document.getElementById("compat-split") || {}).value || "";
    const wanted = new Set(state.rows.flatMap((i) => (i < 0 ? D.tables[-1 - i].members : [i])));
    D.compat.forEach((t, n) => {
      const rows = t.rows.filter((r) => wanted.has(r[0]));
      const page = state.compatPage[n] || 0;
      const columns = compatColumns(t, split);
      box.appendChild(el("h3", null, t.adapter + ": " + t.releases.length + " releases, " + rows.length + " cases"));
      const scroll = el("div", { class: "table-scroll" });
      const table = el("table", { class: "compat", "data-adapter": t.adapter, "data-split": split || "release" });
      const head = el("thead");
      const hr = el("tr");
      hr.appendChild(el("th", split ? { rowspan: "2" } : null, "case"));
      const sub = el("tr");
      t.releases.forEach((r) => {
        const span = columns.filter((c) => c.release === r).length;
        hr.appendChild(el("th", split ? { colspan: String(span), class: "release" } : { class: "release" }, r));
      });
      if (split) columns.forEach((c) => sub.appendChild(el("th", { class: "sub", title: c.release + " " + c.key }, c.key)));
      hr.appendChild(el("th", split ? { rowspan: "2" } : null, "first holds in"));
      hr.appendChild(el("th", split ? { rowspan: "2", title: "the first release whose verdict, expect block or observed behaviour differs from the release before it" } : { title: "the first release whose verdict, expect block or observed behaviour differs from the release before it" }, "first changed in"));
      head.appendChild(hr);
      if (split) head.appendChild(sub);
      table.appendChild(head);
      const body = el("tbody");
      for (const [ci, statuses, first, changed] of rows.slice(page * PAGE, (page + 1) * PAGE)) {
        const tr = el("tr", { "data-case": D.cases[ci][0] });
        const th = el("th", { class: "case-col" });
        th.appendChild(el("a", { href: caseHref(D.cases[ci][0]) }, D.cases[ci][0]));
        tr.appendChild(th);
        for (const c of columns) {
          const s = split ? statusOver(ci, c.cols) : statuses[c.k];
          const [word, sym] = STATUS[s] || [s, s];
          // the hover text: which columns measured it there and how (built here, not shipped in data.js)
          const seen = c.cols.filter((i) => D.grid[ci][i] !== "-")
            .map((i) => D.columns[i].backend + " " + D.columns[i].mode + " " + outcomeName(D.grid[ci][i])).join(", ");
          tr.appendChild(el("td", { class: "st st-" + (s === "-" ? "missing" : s), "data-release": c.release, title: c.release + ": " + (seen || word) }, sym));
        }
        tr.appendChild(el("td", { class: "first" }, first || "—"));
        tr.appendChild(el("td", { class: "changed" }, changed || "—"));
        body.appendChild(tr);
      }
      table.appendChild(body);
      scroll.appendChild(table);
      box.appendChild(scroll);
      const pager = el("div", { class: "pager" });
      box.appendChild(pager);
      renderPager(pager, rows.length, page, (p) => { state.compatPage[n] = p; renderCompat(); });
    });
  }

  // ------------------------------------------------------------ details

  function chunkOf(index) {
    let lo = 0;
    let hi = D.chunkStarts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (D.chunkStarts[mid] <= index) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }

  window.__reportDetail = function (n, data) {
    const r = resolvers.get(n);
    if (r) r(data);
  };

  function loadChunk(n) {
    if (!chunks.has(n)) {
      chunks.set(n, new Promise((resolve, reject) => {
        resolvers.set(n, resolve);
        const s = el("script", { src: build + "/detail/" + String(n).padStart(4, "0") + ".js" });
        s.onerror = () => { chunks.delete(n); reject(new Error("could not load " + s.src)); };
        document.body.appendChild(s);
      }));
    }
    return chunks.get(n);
  }

  // A value as indented "key: value" lines. Strings with line breaks (stderr, messages) keep them,
  // as a block under their key; one-line strings stay quoted, so "int32" and 32 read differently.
  function toText(value, indent = "") {
    if (value === undefined) return "";
    if (typeof value === "string") {
      return value.includes("\n") ? value.split("\n").map((l) => indent + l).join("\n") : indent + JSON.stringify(value);
    }
    if (value === null || typeof value !== "object") return indent + JSON.stringify(value);
    const simple = (v) => v === null || typeof v !== "object" || (Array.isArray(v) && v.every((x) => x === null || typeof x !== "object"));
    if (Array.isArray(value) && simple(value)) return indent + JSON.stringify(value);
    const entries = Array.isArray(value) ? value.map((v, i) => ["- " + i, v]) : Object.entries(value);
    if (!entries.length) return indent + (Array.isArray(value) ? "[]" : "{}");
    return entries.map(([k, v]) => {
      if (typeof v === "string" && v.includes("\n")) return indent + k + ": |\n" + toText(v, indent + "  ");
      if (simple(v)) return indent + k + ": " + (typeof v === "string" ? JSON.stringify(v) : JSON.stringify(v));
      return indent + k + ":\n" + toText(v, indent + "  ");
    }).join("\n");
  }

  function pre(value) {
    return el("pre", null, value === undefined || value === null ? "" : toText(value));
  }

  // The sentence that says what went wrong: "result.dtype=int32, but should be int64".
  function verdictSentence(rec) {
    const lines = String(rec.message || "").split("\n").map((l) => l.trim()).filter(Boolean);
    return lines.find((l) => / but should be | but expected /.test(l)) || lines[0] || rec.outcome.replace("_", " ");
  }

  // What the implementation did for each field the expectation names (raises/warns read raised/warnings).
  const ACTUAL_KEY = { raises: ["raises", "raised"], warns: ["warns", "warnings"] };
  const FIELD_WORDS = { raises: /rais|exception|match/i, warns: /warn/i };

  function failedExpectation(rec, sentence) {
    const expected = rec.expected && typeof rec.expected === "object" ? rec.expected : null;
    if (!expected) return null;
    const actual = rec.actual && typeof rec.actual === "object" ? rec.actual : {};
    const table = el("table", { class: "failed-expectation" });
    const hr = el("tr");
    ["field", "expected", "actual"].forEach((h) => hr.appendChild(el("th", null, h)));
    table.appendChild(el("thead")).appendChild(hr);
    const body = el("tbody");
    const other = Object.keys(actual).filter((k) => !(k in expected) && !Object.values(ACTUAL_KEY).flat().includes(k));
    for (const [field, want] of Object.entries(expected)) {
      const key = (ACTUAL_KEY[field] || [field]).find((k) => k in actual);
      const got = key === undefined ? undefined : actual[key];
      let differs;
      if (FIELD_WORDS[field]) differs = FIELD_WORDS[field].test(sentence);  // nothing recorded can mean "none"
      else if (got === undefined) differs = true;
      else differs = JSON.stringify(want) !== JSON.stringify(got) || new RegExp("\\b" + field + "\\b").test(sentence);
      const tr = el("tr", { class: differs ? "differs" : "same", "data-field": field });
      tr.appendChild(el("th", null, field));
      tr.appendChild(el("td", null, toText(want)));
      const none = FIELD_WORDS[field] ? "(none recorded)" : other.length ? "(none: " + other.join(", ") + ")" : "(none)";
      tr.appendChild(el("td", null, got === undefined ? none : toText(got)));
      body.appendChild(tr);
    }
    table.appendChild(body);
    return table;
  }

  function row(dl, term, value) {
    dl.appendChild(el("dt", null, term));
    const dd = el("dd");
    if (value instanceof Node) dd.appendChild(value);
    else dd.textContent = value === undefined || value === null ? "" : String(value);
    dl.appendChild(dd);
  }

  function renderDetail(info, col) {
    const body = document.getElementById("detail-body");
    body.replaceChildren();
    const cols = Object.keys(info.records).map(Number);
    if (col === null || !info.records[col]) {
      col = cols.find((c) => UNEXPECTED.has(Object.keys(D.codes).find((k) => D.codes[k] === info.records[c].outcome))) ?? cols[0];
    }
    body.appendChild(el("h2", { class: "detail-id" }, info.id));
    const first = info.records[col];
    const firstCode = first && Object.keys(D.codes).find((k) => D.codes[k] === first.outcome);
    if (first && UNEXPECTED.has(firstCode)) {
      // A failing cell answers first: what went wrong, and the expectation that failed, field by field.
      const sentence = verdictSentence(first);
      body.appendChild(el("p", { class: "verdict-sentence", "data-outcome": first.outcome },
        D.columns[col].label + ": " + first.outcome.replace("_", " ") + ": " + sentence));
      const table = failedExpectation(first, sentence);
      if (table) {
        body.appendChild(el("h4", null, "the expectation that failed" + (first.expect_line ? " (" + info.spec_file + ":" + first.expect_line + ")" : "")));
        body.appendChild(table);
      }
    }
    body.appendChild(el("p", { class: "detail-claim" }, info.claim));
    const dl = el("dl");
    row(dl, "topic", info.topic);
    row(dl, "spec", specLink(info, info.line));
    if (info.tags && info.tags.length) row(dl, "tags", info.tags.join(", "));
    for (const src of info.source || []) {
      const span = el("span");
      const parts = Object.entries(src).filter(([k, v]) => k !== "url" && v !== null && v !== "").map(([k, v]) => String(v));
      span.appendChild(document.createTextNode(parts.join(" — ") + " "));
      const url = safeUrl(src.url);
      if (url) span.appendChild(el("a", { href: url, rel: "noreferrer" }, url));
      row(dl, "source", span);
    }
    if (info.basis) row(dl, "basis", info.basis + ({documented: ": the docs promise it", tested: ": JAX's own tests pin it", observed: ": observed only, not counted as conformance", unsupported: ": JAX has disowned it, never counted"}[info.basis] || ""));
    if (info.documented) row(dl, "the docs say", info.documented.says || "");
    body.appendChild(dl);
    const rec = info.records[col];
    if (rec) {
      const column = D.columns[col];
      const sec = el("section", { class: "record", "data-outcome": rec.outcome });
      sec.appendChild(el("h3", { class: "o-" + rec.outcome }, column.label + (column.interrupted ? " (interrupted run)" : "")));
      const rdl = el("dl");
      row(rdl, "outcome", el("span", { class: "badge o-" + rec.outcome, "data-outcome": rec.outcome }, rec.outcome.replace("_", " ")));
      const flags = Object.entries(column.flags || {});
      if (flags.length) row(rdl, "JAX flags", flags.map(([k, v]) => k + "=" + String(v)).join(", "));
      if (rec.expect_line) row(rdl, "expect block", specLink(info, rec.expect_line));
      if (rec.duration_s !== undefined) row(rdl, "duration", Number(rec.duration_s).toFixed(3) + " s");
      if (rec.documented) row(rdl, "the docs' expectation", (rec.documented.holds ? "holds here" : "fails here: " + (rec.documented.message || "")) + " (" + info.spec_file + ":" + rec.documented.line + ")");
      if (rec.spec_error) row(rdl, "spec error", "a bug in the spec's own code, not a verdict on the implementation");
      sec.appendChild(rdl);
      sec.appendChild(el("h4", null, "expected"));
      sec.appendChild(pre(rec.expected));
      sec.appendChild(el("h4", null, "actual"));
      sec.appendChild(pre(rec.actual));
      if (rec.message) {
        sec.appendChild(el("h4", null, "message"));
        sec.appendChild(el("pre", { class: "message" }, rec.message));
      }
      body.appendChild(sec);
    }
    body.appendChild(el("h3", null, "All runs of this case"));
    const list = el("ul", { class: "runs" });
    for (const c of cols) {
      const li = el("li");
      const a = el("a", { href: caseHref(info.id, c), class: c === col ? "current" : "" }, D.columns[c].label + ": ");
      a.appendChild(el("span", { class: "o-" + info.records[c].outcome }, info.records[c].outcome.replace("_", " ")));
      li.appendChild(a);
      list.appendChild(li);
    }
    body.appendChild(list);
  }

  function showFromHash() {
    if (location.hash.startsWith("#table-")) {
      const details = document.getElementById(decodeURIComponent(location.hash.slice(1)));
      if (details) {
        details.open = true;
        details.scrollIntoView();
      }
    }
    const params = new URLSearchParams(location.hash.slice(1));
    const aside = document.getElementById("detail");
    const id = params.get("case");
    if (!id) { aside.hidden = true; return; }
    const index = caseIndex.get(id);
    const body = document.getElementById("detail-body");
    aside.hidden = false;
    if (index === undefined) {
      body.replaceChildren(el("p", null, "No case " + id + " in this report."));
      return;
    }
    const col = params.has("col") ? Number(params.get("col")) : null;
    body.replaceChildren(el("p", null, "Loading " + id + " …"));
    loadChunk(chunkOf(index)).then(
      (chunk) => renderDetail(chunk[String(index)], col),
      (err) => body.replaceChildren(el("p", { class: "error" }, String(err.message))),
    );
  }

  // ------------------------------------------------------------ start

  if (!D) {
    document.getElementById("matrix-table").replaceChildren(el("caption", null, "data.js did not load; the matrix is unavailable."));
    return;
  }
  D.cases.forEach((c, i) => caseIndex.set(c[0], i));
  D.tables.forEach((t, n) => t.members.forEach((m) => tableOf.set(m, n)));
  document.querySelectorAll("details.table-case").forEach((details) => {
    const box = details.querySelector(".table-grids");
    if (details.open) renderTableGrids(box);
    details.addEventListener("toggle", () => { if (details.open) renderTableGrids(box); });
  });
  fillSelects();
  renderLegend();
  const split = document.getElementById("compat-split");
  if (split) split.addEventListener("change", () => { for (const k of Object.keys(state.compatPage)) state.compatPage[k] = 0; renderCompat(); });
  for (const input of Object.values(f)) input.addEventListener(input.tagName === "INPUT" ? "input" : "change", applyFilters);
  function closeDetail() {
    history.replaceState(null, "", location.pathname + location.search);
    document.getElementById("detail").hidden = true;
  }
  document.getElementById("detail-close").addEventListener("click", closeDetail);
  document.addEventListener("keydown", (e) => {
    if (e.key === "Escape" && !document.getElementById("detail").hidden) closeDetail();
  });
  window.addEventListener("hashchange", showFromHash);
  applyFilters();
  showFromHash();
})();
