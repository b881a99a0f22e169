"use strict";
// The item table of a scoregate report: sort, filter, page, and open an item. Data: #report-data (JSON).
(function () {
  const DATA = JSON.parse(document.getElementById("report-data").textContent);
  const RUNS = DATA.runs;
  const ITEMS = DATA.items;
  const MULTI = RUNS.length > 1;
  const PAGE = 100;
  const NUMERIC = new Set(["numeric", "boolean"]);
  const LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";

  function label(r) { return MULTI ? LETTERS[r] || String(r + 1) : ""; }
  function el(tag, attrs, children) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === "text") node.textContent = v;
      else if (k === "cls") node.className = v;
      else node.setAttribute(k, v);
    }
    for (const c of children || []) node.append(c);
    return node;
  }
  function fmt(v) {
    if (v === null || v === undefined) return "—";
    if (typeof v === "boolean") return v ? "1" : "0";
    if (typeof v !== "number") return String(v);
    if (Number.isInteger(v)) return v.toLocaleString("en");
    if (Math.abs(v) >= 1000) return Math.round(v).toLocaleString("en");
    return String(Number(v.toPrecision(3)));
  }
  function text(v) {
    if (v === null || v === undefined) return "";
    return typeof v === "string" ? v : JSON.stringify(v, null, 2);
  }
  // An item's input as a person reads it: one field per paragraph, texts with their own line breaks.
  function fields(v) {
    if (v === null || typeof v !== "object" || Array.isArray(v)) return text(v);
    return Object.entries(v).map(([k, x]) => k + ": " + (typeof x === "string" && x.includes("\n") ? "\n" + x : text(x)))
      .join("\n\n");
  }
  function scoreOf(row, name) {
    if (!row) return null;
    for (const s of row.s) if (s[0] === name) return typeof s[1] === "number" ? s[1] : (typeof s[1] === "boolean" ? +s[1] : null);
    return null;
  }
  // Item rows name scores, call purposes and models by their index in the run's tables; resolve them once.
  ITEMS.forEach((it) => it.r.forEach((row, r) => {
    if (!row) return;
    const run = RUNS[r];
    row.s = row.s.map((s) => [run.score_keys[s[0]][0], s[1] === undefined ? null : s[1], s[2] || null, s[3] || null,
      run.score_keys[s[0]][1]]);
    row.c = row.c.map((c) => { const out = c.slice(); while (out.length < 9) out.push(null);
      out[0] = run.purposes[c[0]]; out[1] = run.models[c[1]]; out[7] = !!out[7]; return out; });
  }));

  // Columns: the first run's numeric scores, gated ones first (a few for one run, the first for several).
  const numericScores = RUNS[0].scores.filter((s) => NUMERIC.has(s.data_type)).map((s) => s.name);
  const shown = MULTI ? numericScores.slice(0, 1) : numericScores.slice(0, 5);
  const columns = [
    { key: "i", title: "#", num: true, get: (it) => it.i + 1 },  // the item's position in the dataset, from 1
    { key: "id", title: "item", get: (it) => it.id },
  ];
  RUNS.forEach((run, r) => {
    columns.push({ key: "f" + r, title: (MULTI ? label(r) + " " : "") + "status",
      get: (it) => (!it.r[r] ? "missing" : it.r[r].e ? "failed" : "ok") });
    for (const name of shown) {
      columns.push({ key: "s" + r + ":" + name, title: (MULTI ? label(r) + " " : "") + name, num: true,
        get: (it) => scoreOf(it.r[r], name) });
    }
    columns.push({ key: "l" + r, title: (MULTI ? label(r) + " " : "") + "latency ms", num: true,
      get: (it) => (it.r[r] ? it.r[r].l : null) });
  });
  if (MULTI && shown.length) {
    columns.push({ key: "delta", title: "Δ " + shown[0] + " B−A", num: true, get: (it) => {
      const a = scoreOf(it.r[0], shown[0]); const b = scoreOf(it.r[1], shown[0]);
      return a === null || b === null ? null : b - a; } });
  }
  if (MULTI) columns.push({ key: "d", title: "changed", num: true, get: (it) => (it.d === undefined ? null : it.d) });
  // Gates broken, one column per run: each run has its own gates, and a sum over runs could exceed their count.
  RUNS.forEach((run, r) => columns.push({ key: "g" + r, title: (MULTI ? label(r) + " " : "") + "gates broken",
    num: true, get: (it) => (it.r[r] ? it.r[r].g.length : null) }));
  // last: a prompt version is long, and the status and scores come first on a narrow screen
  if (!MULTI) columns.push({ key: "p", title: "prompt", get: (it) => (it.r[0] ? it.r[0].p : null) });

  const state = { q: "", failed: false, differ: false, gate: "", score: numericScores[0] || "", min: "", max: "",
                  sort: "i", desc: false, limit: PAGE, open: new Set() };
  let haystacks = null;

  function haystack(idx) {
    if (!haystacks) haystacks = new Array(ITEMS.length);
    if (haystacks[idx] === undefined) {
      const it = ITEMS[idx];
      const parts = [it.id, text(it.in), text(it.x)];
      for (const row of it.r) if (row) parts.push(text(row.o), row.e || "", row.p);
      haystacks[idx] = parts.join("\n").toLowerCase();
    }
    return haystacks[idx];
  }

  function matches(it, idx) {
    if (state.failed && !it.r.some((row) => row && row.e)) return false;
    if (state.differ && !(it.d > 0)) return false;
    if (state.gate !== "") {
      if (state.gate === "any") { if (!it.r.some((row) => row && row.g.length)) return false; }
      else {
        const [r, g] = state.gate.split(":").map(Number);
        if (!it.r[r] || !it.r[r].g.includes(g)) return false;
      }
    }
    if (state.score && (state.min !== "" || state.max !== "")) {
      const values = it.r.map((row) => scoreOf(row, state.score)).filter((v) => v !== null);
      if (!values.length) return false;
      if (state.min !== "" && !values.some((v) => v >= Number(state.min))) return false;
      if (state.max !== "" && !values.some((v) => v <= Number(state.max))) return false;
    }
    if (state.q && !haystack(idx).includes(state.q.toLowerCase())) return false;
    return true;
  }

  function sorted(list) {
    const col = columns.find((c) => c.key === state.sort) || columns[0];
    const sign = state.desc ? -1 : 1;
    return list.slice().sort((x, y) => {
      const a = col.get(x.it); const b = col.get(y.it);
      if (a === b) return x.it.i - y.it.i;
      if (a === null || a === undefined) return 1;  // unmeasured last, whatever the direction
      if (b === null || b === undefined) return -1;
      return (a < b ? -1 : 1) * sign;
    });
  }

  // ---- controls -------------------------------------------------------------------------------
  function controls() {
    const box = document.getElementById("item-controls");
    const q = el("input", { type: "search", id: "filter-text", placeholder: "search id, input, output, reference…" });
    q.addEventListener("input", () => { state.q = q.value; state.limit = PAGE; draw(); });
    const failed = el("input", { type: "checkbox", id: "filter-failed" });
    failed.addEventListener("change", () => { state.failed = failed.checked; state.limit = PAGE; draw(); });
    const gate = el("select", { id: "filter-gate" }, [el("option", { value: "", text: "any or no gate" }),
      el("option", { value: "any", text: "breaks some gate" })]);
    RUNS.forEach((run, r) => run.gates.forEach((g, k) => {
      gate.append(el("option", { value: r + ":" + k, text: (MULTI ? label(r) + " " : "") + "breaks " + g.name }));
    }));
    gate.addEventListener("change", () => { state.gate = gate.value; state.limit = PAGE; draw(); });
    const score = el("select", { id: "filter-score" }, numericScores.map((n) => el("option", { value: n, text: n })));
    score.addEventListener("change", () => { state.score = score.value; state.limit = PAGE; draw(); });
    const min = el("input", { type: "number", id: "filter-min", step: "any", placeholder: "min" });
    const max = el("input", { type: "number", id: "filter-max", step: "any", placeholder: "max" });
    min.addEventListener("input", () => { state.min = min.value; state.limit = PAGE; draw(); });
    max.addEventListener("input", () => { state.max = max.value; state.limit = PAGE; draw(); });
    box.append(el("label", {}, ["Search ", q]), el("label", {}, [failed, " failed only"]),
      el("label", {}, ["Gate ", gate]));
    if (numericScores.length) box.append(el("label", {}, ["Score ", score, " from ", min, " to ", max]));
    if (MULTI) {
      const differ = el("input", { type: "checkbox", id: "filter-differ" });
      differ.addEventListener("change", () => { state.differ = differ.checked; state.limit = PAGE; draw(); });
      const most = el("button", { id: "sort-changed", type: "button", text: "changed most first" });
      most.addEventListener("click", () => { state.sort = "d"; state.desc = true; draw(); });
      box.append(el("label", {}, [differ, " outputs differ"]), most);
    }
    const reset = el("button", { type: "button", id: "filter-reset", text: "clear filters" });
    reset.addEventListener("click", () => {
      Object.assign(state, { q: "", failed: false, differ: false, gate: "", min: "", max: "", limit: PAGE });
      q.value = ""; failed.checked = false; gate.value = ""; min.value = ""; max.value = "";
      const d = document.getElementById("filter-differ"); if (d) d.checked = false;
      draw();
    });
    box.append(reset);
    document.querySelectorAll("a.gate-link").forEach((a) => a.addEventListener("click", () => {
      state.gate = a.dataset.run + ":" + a.dataset.gate; gate.value = state.gate; state.limit = PAGE; draw();
    }));
  }

  // ---- word diff ------------------------------------------------------------------------------
  function wordDiff(a, b) {
    const words = (s) => s.match(/\s*\S+\s*/g) || [];  // a word with the spaces around it is one unit
    const x = words(a); const y = words(b);
    const n = x.length; const m = y.length;
    if (n * m > 4e6) return null;
    const dp = new Array(n + 1);
    for (let i = 0; i <= n; i++) dp[i] = new Int32Array(m + 1);
    for (let i = n - 1; i >= 0; i--) for (let j = m - 1; j >= 0; j--)
      dp[i][j] = x[i] === y[j] ? dp[i + 1][j + 1] + 1 : Math.max(dp[i + 1][j], dp[i][j + 1]);
    const out = el("pre", { cls: "diff" });
    let removed = ""; let added = "";
    const flush = () => {  // a changed stretch reads as one deletion, then one insertion
      if (removed) out.append(el("del", { text: removed }));
      if (added) out.append(el("ins", { text: added }));
      removed = ""; added = "";
    };
    let i = 0; let j = 0;
    while (i < n || j < m) {
      if (i < n && j < m && x[i] === y[j]) { flush(); out.append(x[i]); i++; j++; }
      else if (j < m && (i >= n || dp[i][j + 1] >= dp[i + 1][j])) { added += y[j]; j++; }
      else { removed += x[i]; i++; }
    }
    flush();
    return out;
  }

  // ---- one item, opened -----------------------------------------------------------------------
  function section(title, value) {
    return el("div", { cls: "side" }, [el("h4", { text: title }), el("pre", { cls: "scroll", text: text(value) || "—" })]);
  }
  function scoreTable(row) {
    const body = row.s.map((s) => el("tr", {}, [el("td", { text: s[0] }), el("td", { text: s[1] === null ? "null" : fmt(s[1]) }),
      el("td", { cls: "reason", text: s[2] || "" }), el("td", { text: s[3] || "" }), el("td", { cls: "dim", text: s[4] })]));
    return el("table", { cls: "scores" }, [el("thead", {}, [el("tr", {}, ["score", "value", "null reason", "judge reasoning / comment", "evaluator"]
      .map((h) => el("th", { text: h })))]), el("tbody", {}, body)]);
  }
  // A facts score (fact recall): its facts under their verdicts, one `subject predicate object` per line.
  function factGroups(name, groups) {
    const box = el("div", { cls: "facts" }, [el("h4", { text: "facts — " + name })]);
    for (const g of groups) {
      box.append(el("p", { text: g.title + " (" + g.facts.length + ")" }),
        el("ul", {}, (g.facts.length ? g.facts : ["(none)"]).map((f) => el("li", { text: f }))));
    }
    return box;
  }
  function callTable(row) {
    const heads = ["purpose", "model", "latency ms", "tokens in", "tokens out", "cost USD", "retries", "cached", "error"];
    const body = row.c.map((c) => el("tr", {}, c.map((v, k) => el("td", { cls: k === 8 && v ? "err" : "", text: k === 7 ? (v ? "yes" : "") : fmt(v) }))));
    return el("table", { cls: "scores" }, [el("thead", {}, [el("tr", {}, heads.map((h) => el("th", { text: h })))]), el("tbody", {}, body)]);
  }
  function detail(it) {
    const sides = el("div", { cls: "sides" });
    it.r.forEach((row, r) => {
      const run = RUNS[r];
      const side = el("div", { cls: "side" }, [el("h4", { text: (MULTI ? label(r) + " · " + run.model + " · " : "") + (row ? row.p : "not in this run") })]);
      if (row) {
        if (row.e) side.append(el("p", { cls: "err", text: "failed: " + row.e }));
        let shownOut = null;
        if (MULTI && r > 0 && it.r[0] && typeof row.o === "string" && typeof it.r[0].o === "string") {
          shownOut = wordDiff(text(it.r[0].o), text(row.o));
        }
        side.append(el("h4", { text: shownOut ? "output (word diff against A)" : "output" }), shownOut || el("pre", { text: text(row.o) || "—" }));
        const broken = row.g.map((g) => run.gates[g].name);
        if (broken.length) side.append(el("p", { cls: "warn", text: "breaks: " + broken.join(", ") }));
        side.append(el("h4", { text: "scores" }), scoreTable(row));
        for (const [name, groups] of Object.entries(row.f || {})) side.append(factGroups(name, groups));
        side.append(el("h4", { text: "calls" }), callTable(row));
      }
      sides.append(side);
    });
    const given = [el("div", { cls: "side" }, [el("h4", { text: "input" }), el("pre", { cls: "scroll", text: fields(it.in) || "—" })])];
    if (it.x !== null && it.x !== undefined) given.push(section("expected output", it.x));
    return el("div", {}, [el("div", { cls: "sides" }, given), sides]);
  }

  // ---- the table ------------------------------------------------------------------------------
  function draw() {
    const hits = [];
    ITEMS.forEach((it, idx) => { if (matches(it, idx)) hits.push({ it, idx }); });
    const rows = sorted(hits);
    document.getElementById("item-count").textContent =
      "showing " + Math.min(rows.length, state.limit) + " of " + rows.length + " matching item(s); " + ITEMS.length + " in all";
    const head = el("tr", {}, columns.map((c) => {
      const th = el("th", { text: c.title.replace(/_/g, "_\u200b"), "data-key": c.key,
        cls: c.key === state.sort ? (state.desc ? "sorted-desc" : "sorted-asc") : "" });
      th.addEventListener("click", () => {
        if (state.sort === c.key) state.desc = !state.desc; else { state.sort = c.key; state.desc = !!c.num && c.key !== "i"; }
        draw();
      });
      return th;
    }));
    const body = el("tbody");
    for (const { it } of rows.slice(0, state.limit)) {
      const failed = it.r.some((row) => row && row.e);
      const tr = el("tr", { cls: "item-row" + (failed ? " failed" : ""), "data-id": it.id },
        columns.map((c) => { const v = c.get(it); return el("td", { cls: c.num ? "num" : "", text: c.num ? fmt(v) : (v === null ? "—" : String(v)) }); }));
      tr.addEventListener("click", () => { if (state.open.has(it.id)) state.open.delete(it.id); else state.open.add(it.id); draw(); });
      body.append(tr);
      if (state.open.has(it.id)) body.append(el("tr", { cls: "detail" }, [el("td", { colspan: String(columns.length) }, [detail(it)])]));
    }
    const table = el("table", { cls: "items", id: "items-table" }, [el("thead", {}, [head]), body]);
    const holder = document.getElementById("item-table");
    holder.replaceChildren(table);
    fit();
    if (rows.length > state.limit) {
      const more = el("button", { cls: "more", type: "button", id: "show-more", text: "show " + Math.min(PAGE, rows.length - state.limit) + " more" });
      more.addEventListener("click", () => { state.limit += PAGE; draw(); });
      holder.append(more);
    }
  }

  // A table wider than its box scrolls inside it ("wide"); one that fits keeps its header stuck under the nav.
  function fit() {
    const holder = document.getElementById("item-table");
    holder.classList.remove("wide");
    holder.classList.toggle("wide", holder.scrollWidth > holder.clientWidth);
  }

  controls();
  draw();
  window.addEventListener("resize", fit);
  document.body.dataset.ready = "1";
})();
