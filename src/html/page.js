// SPDX-License-Identifier: Apache-2.0
// The HTML report's script (page.html holds it inline): reads the data blocks the library wrote
// (script elements of type application/json), and draws the Debugger page (findings, annotated source,
// per-statement heatmaps over the program grid, per-execution series, address ranges against the
// tensors, coverage, dump histograms) or the profile page (icicle, sortable table, roofline,
// timeline, comparison). It aggregates nothing the library can: the data arrive pre-aggregated.
// Every string from the data reaches the document as text (textContent, text nodes, attribute
// values): never as markup. No framework, no network.
"use strict";
(function () {
	// ---- data and DOM helpers ---------------------------------------------------------------
	const D = JSON.parse(document.getElementById("fp-data").textContent);
	const blocks = new Map();
	function block(id) {
		if (id == null) return null;
		if (!blocks.has(id)) {
			const el = document.getElementById(id);
			blocks.set(id, el ? JSON.parse(el.textContent) : null);
		}
		return blocks.get(id);
	}
	function h(tag, attrs, ...kids) {
		const e = document.createElement(tag);
		if (attrs) {
			for (const k of Object.keys(attrs)) {
				const v = attrs[k];
				if (v == null || v === false) continue;
				if (k === "class") e.className = v;
				else if (k === "text") e.textContent = String(v);
				else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
				else e.setAttribute(k, String(v));
			}
		}
		for (const kid of kids.flat()) {
			if (kid == null || kid === false) continue;
			e.append(kid instanceof Node ? kid : document.createTextNode(String(kid)));
		}
		return e;
	}
	// append children, skipping null and false (the DOM's own append writes them as text)
	function add(e, ...kids) {
		for (const kid of kids.flat()) {
			if (kid == null || kid === false) continue;
			e.append(kid instanceof Node ? kid : document.createTextNode(String(kid)));
		}
		return e;
	}
	const $ = (id) => document.getElementById(id);
	function clear(e) {
		while (e.firstChild) e.removeChild(e.firstChild);
		return e;
	}
	function section(id, title, ...kids) {
		return h("section", { id: id }, h("h2", null, title), ...kids);
	}

	// ---- numbers ---------------------------------------------------------------------------------
	function fmt(v) {
		if (v == null || (typeof v === "number" && !isFinite(v))) return "\u2013";
		if (typeof v !== "number") return String(v);
		if (Number.isInteger(v) && Math.abs(v) < 1e15) return v.toLocaleString("en-US");
		const a = Math.abs(v);
		if (a !== 0 && (a < 1e-3 || a >= 1e9)) return v.toExponential(3);
		return Number(v.toPrecision(4)).toString();
	}
	function fmtBytes(v) {
		if (v == null || !isFinite(v)) return "\u2013";
		const u = ["B", "KiB", "MiB", "GiB", "TiB"];
		let i = 0, x = Math.abs(v);
		while (x >= 1024 && i < u.length - 1) { x /= 1024; i++; }
		return (v < 0 ? "-" : "") + (i ? x.toPrecision(3) : String(x)) + " " + u[i];
	}
	function fmtUs(us) {
		if (us == null || !isFinite(us)) return "\u2013";
		if (us === 0) return "0";
		const a = Math.abs(us);
		if (a >= 1e6) return (us / 1e6).toPrecision(4) + " s";
		if (a >= 1e3) return (us / 1e3).toPrecision(4) + " ms";
		if (a >= 1) return us.toPrecision(4) + " \u00b5s";
		return (us * 1e3).toPrecision(4) + " ns";
	}
	function hex(v) {
		return v == null || !isFinite(v) ? "\u2013" : "0x" + Math.round(v).toString(16);
	}

	// ---- colours ---------------------------------------------------------------------------------
	const VIRIDIS = [[68, 1, 84], [72, 40, 120], [62, 74, 137], [49, 104, 142], [38, 130, 142],
		[31, 158, 137], [53, 183, 121], [109, 205, 89], [180, 222, 44], [253, 231, 37]];
	function rampRGB(t) {
		t = Math.max(0, Math.min(1, t));
		const x = t * (VIRIDIS.length - 1), i = Math.min(VIRIDIS.length - 2, Math.floor(x)), f = x - i;
		const a = VIRIDIS[i], b = VIRIDIS[i + 1];
		return [0, 1, 2].map((k) => Math.round(a[k] + (b[k] - a[k]) * f));
	}
	function ramp(t) { return "rgb(" + rampRGB(t).join(",") + ")"; }
	function diverge(t) { // -1 blue (less), 0 white, +1 red (more)
		t = Math.max(-1, Math.min(1, t));
		const s = Math.abs(t);
		const c = t < 0 ? [49, 104, 200] : [200, 50, 40];
		return "rgb(" + c.map((k) => Math.round(255 + (k - 255) * s)).join(",") + ")";
	}
	function hashHue(s) {
		let x = 2166136261;
		for (let i = 0; i < s.length; i++) { x ^= s.charCodeAt(i); x = Math.imul(x, 16777619); }
		return (x >>> 0) % 360;
	}

	// ---- tooltip and canvas ------------------------------------------------------------------------
	const tip = $("fp-tip");
	function showTip(ev, text) {
		if (!text) { tip.hidden = true; return; }
		tip.textContent = text;
		tip.hidden = false;
		const x = Math.min(ev.clientX + 14, window.innerWidth - tip.offsetWidth - 8);
		const y = Math.min(ev.clientY + 14, window.innerHeight - tip.offsetHeight - 8);
		tip.style.left = Math.max(0, x) + "px";
		tip.style.top = Math.max(0, y) + "px";
	}
	function hideTip() { tip.hidden = true; }
	function canvas(w, hgt, cls) {
		const c = h("canvas", { class: cls });
		sizeCanvas(c, w, hgt);
		return c;
	}
	function sizeCanvas(c, w, hgt) {
		const r = window.devicePixelRatio || 1;
		c.width = Math.max(1, Math.round(w * r));
		c.height = Math.max(1, Math.round(hgt * r));
		c.style.width = w + "px";
		c.style.maxWidth = "100%";
		c.style.height = "auto";
		const g = c.getContext("2d");
		g.setTransform(r, 0, 0, r, 0, 0);
		return g;
	}
	// mouse position in the canvas's drawing units (it may be shown narrower than drawn)
	function localXY(c, ev) {
		const b = c.getBoundingClientRect(), r = window.devicePixelRatio || 1;
		const sx = b.width ? c.width / r / b.width : 1, sy = b.height ? c.height / r / b.height : 1;
		return [(ev.clientX - b.left) * sx, (ev.clientY - b.top) * sy];
	}
	function kv(pairs) {
		const dl = h("dl", { class: "fp-kv" });
		for (const [k, v] of pairs) {
			if (v == null) continue;
			add(dl, h("dt", null, k), h("dd", null, v));
		}
		return dl;
	}
	function table(cols, rows, opts) {
		const t = h("table", opts && opts.id ? { id: opts.id } : null);
		add(t, h("thead", null, h("tr", null, cols.map((c) => h("th", { class: c.num ? "num" : null }, c.label)))));
		const tb = h("tbody");
		for (const r of rows) add(tb, r);
		add(t, tb);
		return t;
	}
	function td(v, num) { return h("td", { class: num ? "num" : null }, v); }

	// ---- the page ------------------------------------------------------------------------------------
	function header() {
		document.title = D.title;
		$("fp-title").textContent = D.title;
		const gen = D.generator ? D.generator.name + " " + D.generator.version : "flagprism";
		$("fp-sub").textContent = (D.kind === "debugger" ? "Debugger report" : "Profile") + " \u00b7 written by " + gen;
		if (D.notes && D.notes.length) {
			const n = $("fp-notes");
			add(n, h("b", null, "Left out or skipped"), h("ul", null, D.notes.map((x) => h("li", null, x))));
		}
	}

	// =====================================================================================================
	// Debugger
	// =====================================================================================================
	const dbg = { launch: -1, data: null, stmt: null };

	function debuggerPage() {
		const main = $("fp-main");
		const L = D.launches || [];
		const nf = (D.findings || []).length;
		add(main, section("fp-findings", "Findings (" + (D.findings_total > nf ? nf + " of " + D.findings_total : nf) + ")", findingsTable()));
		if (D.summary) add(main, section("fp-summary", "Run summary", summaryView(D.summary)));
		if (L.length > 1) add(main, section("fp-launches", "Launches (" + L.length + ")", launchesTable(L)));
		add(main, h("section", { id: "fp-launch" }));
		if (L.length) selectLaunch(0);
	}

	function findingsTable() {
		const F = D.findings || [];
		if (!F.length) return h("p", { class: "fp-muted", id: "fp-no-findings" }, "No findings: no out-of-bounds access, NaN or Inf origin, division by zero, invalid domain or precision loss was seen.");
		const rows = F.map((f, i) => {
			const prog = Array.isArray(f.program) ? f.program.join(",") : fmt(f.program);
			return h("tr", { class: "fp-click fp-finding", "data-index": i, onclick: () => gotoFinding(f) },
				h("td", null, h("span", { class: "fp-kind fp-kind-" + String(f.kind).replace(/[^a-z_]/g, "") }, f.kind)),
				td(f.kernel), td(fmt(f.line), true), td(prog + (f.program_count > 1 ? " (+" + (f.program_count - 1) + ")" : "")),
				h("td", null, f.message),
				h("td", null, h("code", null, f.source_line == null ? "" : f.source_line)));
		});
		return h("div", { class: "fp-scroll" }, table([{ label: "kind" }, { label: "kernel" }, { label: "line", num: 1 }, { label: "program" }, { label: "message" }, { label: "source" }], rows, { id: "fp-findings-table" }));
	}

	function gotoFinding(f) {
		selectLaunch(f.launch);
		const st = (dbg.data.statements || []).find((s) => s.id === f.statement_id) ||
			(dbg.data.statements || []).find((s) => s.line === f.line);
		if (st) selectStatement(st, true);
	}

	function launchesTable(L) {
		const rows = L.map((l, i) => h("tr", { class: "fp-click fp-launch-row", "data-index": i, onclick: () => selectLaunch(i) },
			td(i, true), td(l.kernel), td(l.grid.join("\u00d7")), td(fmt(l.programs), true), td(l.backend),
			td(fmt(l.statements), true), td(fmt(l.findings), true), td(l.complete === false ? "incomplete" : "complete"), td(l.file)));
		return h("div", { class: "fp-scroll" }, table([{ label: "#", num: 1 }, { label: "kernel" }, { label: "grid" }, { label: "programs", num: 1 }, { label: "backend" }, { label: "statements", num: 1 }, { label: "findings", num: 1 }, { label: "status" }, { label: "report" }], rows, { id: "fp-launches-table" }));
	}

	function summaryView(S) {
		const box = h("div", { class: "fp-summary" });
		if (D.summary_path) add(box, h("p", { class: "fp-muted" }, D.summary_path));
		const scalars = [];
		for (const k of Object.keys(S)) {
			const v = S[k];
			if (v === null || typeof v !== "object") scalars.push([k, fmt(v)]);
		}
		if (scalars.length) add(box, kv(scalars));
		for (const k of Object.keys(S)) {
			const v = S[k];
			if (v === null || typeof v !== "object") continue;
			add(box, h("h3", null, k));
			add(box, genericValue(v, 2));
		}
		return box;
	}
	function genericValue(v, depth) {
		if (v === null || typeof v !== "object") return h("span", null, fmt(v));
		if (Array.isArray(v)) {
			if (v.length && v.every((x) => x && typeof x === "object" && !Array.isArray(x))) {
				const keys = [];
				for (const x of v.slice(0, 500)) for (const k of Object.keys(x)) if (!keys.includes(k)) keys.push(k);
				const rows = v.slice(0, 500).map((x) => h("tr", null, keys.map((k) => {
					const c = x[k];
					return td(c !== null && typeof c === "object" ? JSON.stringify(c) : fmt(c), typeof c === "number");
				})));
				const t = h("div", { class: "fp-scroll" }, table(keys.map((k) => ({ label: k })), rows));
				return v.length > 500 ? h("div", null, t, h("p", { class: "fp-muted" }, "first 500 of " + v.length)) : t;
			}
			return h("span", null, v.map((x) => (x !== null && typeof x === "object" ? JSON.stringify(x) : fmt(x))).join(", "));
		}
		if (depth <= 0) return h("code", null, JSON.stringify(v));
		return kv(Object.keys(v).map((k) => [k, genericValue(v[k], depth - 1)]));
	}

	function selectLaunch(i) {
		if (i === dbg.launch) return;
		const L = D.launches[i];
		if (!L) return;
		dbg.launch = i;
		dbg.data = block(L.block);
		dbg.stmt = null;
		for (const tr of document.querySelectorAll("#fp-launches-table tbody tr"))
			tr.classList.toggle("fp-current", Number(tr.dataset.index) === i);
		const box = clear($("fp-launch"));
		const d = dbg.data, k = d.kernel || {};
		add(box, h("h2", null, "Launch " + i + ": " + L.kernel));
		const status = d.complete === false
			? h("span", { class: "fp-badge bad" }, "incomplete: " + fmt(d.overflow_count) + " records did not fit")
			: h("span", { class: "fp-badge ok" }, "complete");
		const nw = k.num_warps ? k.num_warps.kernel + " (twin " + k.num_warps.twin + ")" : null;
		add(box, kv([["grid", L.grid.join(" \u00d7 ") + " = " + fmt(L.programs) + " programs"], ["backend", L.backend],
			["source", k.source_file], ["report", L.file], ["status", status], ["records", fmt(d.record_count)],
			["level", d.config ? "level " + d.config.level + ", addr_level " + d.config.addr_level : null], ["warps", nw],
			["heatmap cells", d.cells.bx * d.cells.by > 1 ? d.cells.nx + " \u00d7 " + d.cells.ny + ", each " + d.cells.bx + " \u00d7 " + d.cells.by + " programs" : null]]));
		if (d.coverage) add(box, coverageView(d.coverage));
		const cols = h("div", { class: "fp-cols" });
		add(cols, sourceView(d), h("div", { class: "fp-detail", id: "fp-detail" }, h("p", { class: "fp-muted" }, "Click a statement for its heatmaps over the program grid.")));
		add(box, h("h3", null, "Kernel source"), cols);
		if (d.dumps) add(box, dumpsView(d.dumps));
		const first = (d.statements || []).find((s) => s.findings && s.findings.length) || (d.statements || [])[0];
		if (first) selectStatement(first, false);
	}

	function coverageView(c) {
		const box = h("div", { id: "fp-coverage", class: "fp-card" }, h("h3", null, "Coverage"));
		add(box, kv([["statements observed", fmt(c.statements_observed) + " of " + fmt(c.statements)],
			["memory sites observed", fmt(c.memory_sites_observed) + " of " + fmt(c.memory_sites)]]));
		const un = Array.isArray(c.unobserved) ? c.unobserved : [];
		if (un.length) add(box, table([{ label: "line", num: 1 }, { label: "source" }, { label: "reason" }],
			un.map((u) => h("tr", null, td(fmt(u.line), true), h("td", null, h("code", null, u.source == null ? "" : u.source)), td(u.reason)))));
		return box;
	}

	// One statement's chips: its sites' aggregates in one line.
	function chips(st) {
		const box = h("div", { class: "fp-ann", onclick: () => selectStatement(st, false) });
		for (const s of st.sites || []) {
			const a = s.agg || {};
			const label = (s.kind === "value" ? "" : s.kind + " ") + s.name;
			if (s.kind === "value") {
				const bad = a.nan > 0 || a.inf > 0;
				add(box, h("span", { class: "fp-chip" + (bad ? " bad" : "") }, h("b", null, label), " " + (s.dtype || "?") + shapeText(s.shape) + ": min " + fmt(a.min) + " max " + fmt(a.max) + " mean " + fmt(a.mean) + " \u00b7 NaN " + fmt(a.nan) + " Inf " + fmt(a.inf) + " zero " + fmt(a.zero)));
			} else {
				add(box, h("span", { class: "fp-chip" }, h("b", null, label), ": " + fmt(a.active) + " of " + fmt(a.lanes) + " lanes active, span " + fmtBytes(a.span) + (s.param ? " in " + s.param : "")));
			}
		}
		if (!(st.sites || []).length) add(box, h("span", { class: "fp-chip" }, "no records"));
		return box;
	}
	function shapeText(s) { return Array.isArray(s) ? "[" + s.join("\u00d7") + "]" : ""; }

	function sourceView(d) {
		const box = h("div", { class: "fp-source", id: "fp-source" });
		const byEnd = new Map(), lineOf = new Map();
		for (const st of d.statements || []) {
			const end = st.end_line || st.line;
			if (!byEnd.has(end)) byEnd.set(end, []);
			byEnd.get(end).push(st);
			for (let l = st.line; l <= end; l++) lineOf.set(l, st);
		}
		const src = d.source || {};
		if (src.available) {
			src.lines.forEach((text, i) => {
				const ln = src.first_line + i, st = lineOf.get(ln);
				const finding = st && st.findings && st.findings.length;
				const line = h("div", { class: "fp-line" + (st ? " fp-stmt" : "") + (finding ? " fp-has-finding" : ""), "data-line": ln },
					h("span", { class: "ln" }, ln), h("span", { class: "tx" }, text));
				if (st) { line.addEventListener("click", () => selectStatement(st, false)); line.dataset.stmt = st.id; }
				add(box, line);
				for (const s of byEnd.get(ln) || []) add(box, chips(s));
			});
		} else {
			add(box, h("div", { class: "fp-ann" }, "Source not shown: " + (src.reason || "unavailable") + ". The statements as recorded:"));
			for (const st of d.statements || []) {
				const line = h("div", { class: "fp-line fp-stmt" + (st.findings && st.findings.length ? " fp-has-finding" : ""), "data-line": st.line, "data-stmt": st.id, onclick: () => selectStatement(st, false) },
					h("span", { class: "ln" }, st.line), h("span", { class: "tx" }, st.source));
				add(box, line, chips(st));
			}
		}
		return box;
	}

	function selectStatement(st, scroll) {
		dbg.stmt = st;
		for (const l of document.querySelectorAll("#fp-source .fp-line"))
			l.classList.toggle("fp-sel", l.dataset.stmt === String(st.id));
		const box = clear($("fp-detail"));
		add(box, h("h3", null, "Line " + st.line + (st.loop_depth ? " (in a loop)" : "")), h("p", null, h("code", null, st.source)));
		if (st.reads && st.reads.length) add(box, h("p", { class: "fp-muted" }, "reads " + st.reads.map((r) => r.name + (r.line ? " (line " + r.line + ")" : "")).join(", ")));
		for (const fi of st.findings || []) {
			const f = D.findings[fi];
			if (f) add(box, h("p", { class: "fp-finding-detail" }, h("span", { class: "fp-kind fp-kind-" + String(f.kind).replace(/[^a-z_]/g, "") }, f.kind), " " + f.message));
		}
		for (const s of st.sites || []) add(box, siteCard(s));
		if (scroll) box.scrollIntoView({ block: "nearest" });
	}

	function siteCard(s) {
		const a = s.agg || {}, card = h("div", { class: "fp-card fp-site", "data-site": s.site });
		add(card, h("h3", null, (s.kind === "value" ? "value " : s.kind + " ") + s.name + "  ", h("span", { class: "fp-muted" }, (s.dtype || "no records") + shapeText(s.shape) + " \u00b7 site " + s.site + " \u00b7 " + fmt(s.instances) + " instances" + (s.executions > 1 ? " \u00b7 " + s.executions + " executions" : ""))));
		if (s.kind === "value") {
			add(card, table([{ label: "elements", num: 1 }, { label: "NaN", num: 1 }, { label: "Inf", num: 1 }, { label: "zero", num: 1 }, { label: "min", num: 1 }, { label: "max", num: 1 }, { label: "mean", num: 1 }],
				[h("tr", null, [a.elements, a.nan, a.inf, a.zero, a.min, a.max, a.mean].map((v) => td(fmt(v), true)))]));
		} else {
			add(card, table([{ label: "active lanes", num: 1 }, { label: "lanes", num: 1 }, { label: "lowest", num: 1 }, { label: "highest", num: 1 }, { label: "largest span", num: 1 }, { label: "tensor" }],
				[h("tr", null, td(fmt(a.active), true), td(fmt(a.lanes), true), td(hex(a.lo), true), td(hex(a.hi), true), td(fmtBytes(a.span), true), td(s.param ? s.param + " (" + s.param_how + ")" : "\u2013"))]));
		}
		if (!s.instances) return card;
		const B = block(s.block);
		add(card, heatmap(s, B.cells));
		if (B.series) add(card, seriesChart(s, B.series));
		if (s.kind !== "value") add(card, addressChart(s, B.cells));
		return card;
	}

	// ---- heatmap over the grid ---------------------------------------------------------------------------
	function heatmap(s, C) {
		const cells = dbg.data.cells, isVal = s.kind === "value";
		const metrics = isVal ? [["mean", "mean"], ["min", "min"], ["max", "max"], ["nan", "NaN count"], ["inf", "Inf count"], ["zero", "zero count"], ["count", "instances"]]
			: [["active", "active lanes"], ["span", "address span"], ["lo", "lowest address"], ["hi", "highest address"], ["count", "instances"]];
		const nx = cells.nx, ny = cells.ny;
		// a 1-D grid with many programs is laid out row by row
		let W = nx, H = ny, wrap = false;
		if (ny === 1 && nx > 512) { W = Math.pow(2, Math.ceil(Math.log2(Math.sqrt(nx)))); H = Math.ceil(nx / W); wrap = true; }
		const cs = Math.max(1, Math.min(48, Math.floor(640 / W), Math.floor(640 / H) || 1));
		const sel = h("select", { class: "fp-metric" }, metrics.map(([k, l]) => h("option", { value: k }, l)));
		const c = canvas(W * cs, H * cs, "fp-heat");
		const legend = h("div", { class: "fp-legend" });
		const note = h("div", { class: "fp-muted" }, (wrap ? "programs laid out " + W + " per row; " : "x across, y down; ") + (cells.bx * cells.by > 1 ? "each cell aggregates " + cells.bx + "\u00d7" + cells.by + " programs" : "one cell per program") + (dbg.data.kernel && dbg.data.kernel.grid && dbg.data.kernel.grid[2] > 1 ? ", z aggregated" : ""));
		function val(k, i) { return k === "count" ? C.count[i] : C[k][i]; }
		function draw() {
			const k = sel.value, g = c.getContext("2d");
			let lo = Infinity, hi = -Infinity;
			for (let i = 0; i < nx * ny; i++) {
				const v = val(k, i);
				if (C.count[i] && v != null && isFinite(v)) { if (v < lo) lo = v; if (v > hi) hi = v; }
			}
			// one pixel per cell into an image, then scaled up without smoothing
			const img = new ImageData(W, H), px = img.data, lut = [];
			for (let j = 0; j < 256; j++) lut.push(rampRGB(j / 255));
			for (let i = 0; i < nx * ny; i++) {
				const x = wrap ? i % W : i % nx, y = wrap ? Math.floor(i / W) : Math.floor(i / nx);
				const v = val(k, i), o = 4 * (y * W + x);
				const rgb = !C.count[i] ? [233, 236, 241] : v == null || !isFinite(v) ? [187, 187, 187]
					: lut[Math.round(255 * (hi > lo ? (v - lo) / (hi - lo) : 0.5))];
				px[o] = rgb[0]; px[o + 1] = rgb[1]; px[o + 2] = rgb[2]; px[o + 3] = 255;
			}
			const off = document.createElement("canvas");
			off.width = W; off.height = H;
			off.getContext("2d").putImageData(img, 0, 0);
			g.fillStyle = "#fff";
			g.fillRect(0, 0, W * cs, H * cs);
			g.imageSmoothingEnabled = false;
			g.drawImage(off, 0, 0, W * cs, H * cs);
			add(clear(legend), 
				h("span", { style: "--c:" + ramp(0) }, (k === "lo" || k === "hi" ? hex(lo) : fmt(lo === Infinity ? null : lo))),
				h("span", { style: "--c:" + ramp(1) }, (k === "lo" || k === "hi" ? hex(hi) : fmt(hi === -Infinity ? null : hi))),
				h("span", { style: "--c:#e9ecf1" }, "no instance"));
		}
		sel.addEventListener("change", draw);
		c.addEventListener("mousemove", (ev) => {
			const [mx, my] = localXY(c, ev);
			const x = Math.floor(mx / cs), y = Math.floor(my / cs);
			const i = wrap ? y * W + x : y * nx + x;
			if (x < 0 || y < 0 || x >= W || i >= nx * ny) return hideTip();
			const cx = wrap ? i : i % nx, cy = wrap ? 0 : Math.floor(i / nx);
			const px = cells.bx > 1 ? cx * cells.bx + "\u2013" + (cx * cells.bx + cells.bx - 1) : String(cx);
			const py = cells.by > 1 ? cy * cells.by + "\u2013" + (cy * cells.by + cells.by - 1) : String(cy);
			const k = sel.value, v = val(k, i);
			showTip(ev, "program x " + px + (ny > 1 ? ", y " + py : "") + "\n" + sel.selectedOptions[0].textContent + ": " + (k === "lo" || k === "hi" ? hex(v) : fmt(v)) + "\ninstances: " + C.count[i]);
		});
		c.addEventListener("mouseleave", hideTip);
		draw();
		return h("div", { class: "fp-heatmap" }, h("div", { class: "fp-toolbar" }, "Heatmap over the grid: ", sel), c, legend, note);
	}

	// ---- per-execution series --------------------------------------------------------------------------------
	function seriesChart(s, S) {
		const n = S.count.length, isVal = s.kind === "value";
		const lines = isVal ? [["min", "#3e4a89"], ["mean", "#1f9e89"], ["max", "#b4de2c"]] : [["active", "#3e4a89"], ["span", "#1f9e89"]];
		const Wd = 640, Hd = 180, pad = 40;
		const c = canvas(Wd, Hd, "fp-series");
		const g = c.getContext("2d");
		let lo = Infinity, hi = -Infinity;
		for (const [k] of lines) for (let i = 0; i < n; i++) { const v = S[k][i]; if (v != null && isFinite(v)) { lo = Math.min(lo, v); hi = Math.max(hi, v); } }
		if (!(hi >= lo)) { lo = 0; hi = 1; }
		if (hi === lo) { hi += 1; lo -= 1; }
		const X = (i) => pad + (n > 1 ? (i / (n - 1)) * (Wd - pad - 10) : (Wd - pad) / 2);
		const Y = (v) => Hd - 20 - ((v - lo) / (hi - lo)) * (Hd - 30);
		g.strokeStyle = "#ccd";
		g.strokeRect(pad, 10, Wd - pad - 10, Hd - 30);
		g.fillStyle = "#5f6b7d";
		g.font = "11px sans-serif";
		g.fillText(fmt(hi), 2, 14);
		g.fillText(fmt(lo), 2, Hd - 20);
		g.fillText("execution 0", pad, Hd - 5);
		g.fillText(String(n - 1), Wd - 40, Hd - 5);
		for (const [k, col] of lines) {
			g.strokeStyle = col;
			g.lineWidth = 1.5;
			g.beginPath();
			let started = false;
			for (let i = 0; i < n; i++) {
				const v = S[k][i];
				if (v == null || !isFinite(v)) { started = false; continue; }
				if (!started) { g.moveTo(X(i), Y(v)); started = true; } else g.lineTo(X(i), Y(v));
			}
			g.stroke();
		}
		if (isVal) {
			g.fillStyle = "rgba(198,40,40,0.8)";
			for (let i = 0; i < n; i++) if (S.nan[i] > 0 || S.inf[i] > 0) g.fillRect(X(i) - 1, 10, 2, 6);
		}
		c.addEventListener("mousemove", (ev) => {
			const [mx] = localXY(c, ev);
			const i = n > 1 ? Math.round(((mx - pad) / (Wd - pad - 10)) * (n - 1)) : 0;
			if (i < 0 || i >= n) return hideTip();
			showTip(ev, "execution " + i + "\n" + lines.map(([k]) => k + ": " + fmt(S[k][i])).join("\n") + (isVal ? "\nNaN " + fmt(S.nan[i]) + ", Inf " + fmt(S.inf[i]) : "") + "\nprograms: " + S.count[i]);
		});
		c.addEventListener("mouseleave", hideTip);
		return h("div", { class: "fp-series-box" }, h("div", { class: "fp-toolbar" }, "Per execution, over all programs"), c,
			h("div", { class: "fp-legend" }, lines.map(([k, col]) => h("span", { style: "--c:" + col }, k)), isVal ? h("span", { style: "--c:#c62828" }, "NaN or Inf") : null));
	}

	// ---- address ranges against the tensor's extent ------------------------------------------------------------
	function addressChart(s, C) {
		const a = s.agg || {}, es = a.element_size || 1;
		const arg = (dbg.data.args || []).find((x) => x.name === s.param);
		const box = h("div", { class: "fp-addr-box" });
		if (!arg) {
			add(box, h("p", { class: "fp-muted" }, "No tensor extent to compare with (the report lists no argument this access addresses)."));
			return box;
		}
		const base = arg.view[0], vend = arg.view[1] - base;
		const st = arg.storage ? [arg.storage[0] - base, arg.storage[1] - base] : null;
		const n = C.count.length, Wd = 640, Hd = 200, pad = 70;
		const c = canvas(Wd, Hd, "fp-addr");
		const g = c.getContext("2d");
		// columns of pixels: the lowest and highest byte any cell there reached
		const cols = Math.min(n, Wd - pad - 10);
		const clo = new Float64Array(cols).fill(Infinity), chi = new Float64Array(cols).fill(-Infinity);
		let lo = Math.min(0, st ? st[0] : 0), hi = Math.max(vend, st ? st[1] : 0), outside = 0;
		for (let i = 0; i < n; i++) {
			if (!C.count[i] || C.lo[i] == null) continue;
			const l = C.lo[i] - base, u = C.hi[i] - base + es, k = Math.floor((i * cols) / n);
			clo[k] = Math.min(clo[k], l); chi[k] = Math.max(chi[k], u);
			lo = Math.min(lo, l); hi = Math.max(hi, u);
			if (l < 0 || u > vend) outside++;
		}
		if (hi <= lo) hi = lo + 1;
		const Y = (v) => Hd - 20 - ((v - lo) / (hi - lo)) * (Hd - 30);
		const cw = (Wd - pad - 10) / cols;
		if (st) { g.fillStyle = "#eef1f6"; g.fillRect(pad, Y(st[1]), Wd - pad - 10, Y(st[0]) - Y(st[1])); }
		g.fillStyle = "#dbe7fb";
		g.fillRect(pad, Y(vend), Wd - pad - 10, Y(0) - Y(vend));
		for (let k = 0; k < cols; k++) {
			if (clo[k] === Infinity) continue;
			const x = pad + k * cw, w = Math.max(1, cw - (cw > 3 ? 1 : 0));
			const inLo = Math.max(clo[k], 0), inHi = Math.min(chi[k], vend);
			if (inHi > inLo) { g.fillStyle = "#2f6fdb"; g.fillRect(x, Y(inHi), w, Math.max(1, Y(inLo) - Y(inHi))); }
			// what falls outside the view, at least 3 pixels high so that a few bytes show
			g.fillStyle = "#c62828";
			if (chi[k] > vend) g.fillRect(x, Y(chi[k]) - 1, w, Math.max(3, Y(Math.max(vend, clo[k])) - Y(chi[k])));
			if (clo[k] < 0) g.fillRect(x, Y(Math.min(0, chi[k])) - 1, w, Math.max(3, Y(clo[k]) - Y(Math.min(0, chi[k]))));
		}
		g.fillStyle = "#5f6b7d";
		g.font = "11px sans-serif";
		g.fillText("+" + fmtBytes(vend), 2, Y(vend) + 4);
		g.fillText("+0", 2, Y(0) + 4);
		g.fillText("program cells \u2192", pad, Hd - 5);
		c.addEventListener("mousemove", (ev) => {
			const [mx] = localXY(c, ev);
			const k = Math.floor((mx - pad) / cw);
			if (k < 0 || k >= cols || clo[k] === Infinity) return hideTip();
			showTip(ev, "cells " + Math.floor((k * n) / cols) + "\u2013" + (Math.floor(((k + 1) * n) / cols) - 1) + "\nbytes " + fmt(clo[k]) + " to " + fmt(chi[k]) + " from the start of " + arg.name + " (" + fmtBytes(vend) + ")" + (clo[k] < 0 || chi[k] > vend ? "\nOUTSIDE the tensor" : ""));
		});
		c.addEventListener("mouseleave", hideTip);
		add(box, h("div", { class: "fp-toolbar" }, "Addresses against " + arg.name + " (view " + fmtBytes(vend) + (st ? ", allocation " + fmtBytes(st[1] - st[0]) : "") + ")"), c,
			h("div", { class: "fp-legend" }, h("span", { style: "--c:#dbe7fb" }, "tensor view"), st ? h("span", { style: "--c:#eef1f6" }, "allocation") : null, h("span", { style: "--c:#2f6fdb" }, "bytes reached inside"), h("span", { style: "--c:#c62828" }, "outside the view")),
			outside ? h("p", { class: "fp-error fp-oob-note" }, outside + (outside === 1 ? " program cell reaches" : " program cells reach") + " outside " + arg.name) : null);
		return box;
	}

	// ---- level-2 dumps ----------------------------------------------------------------------------------------
	function dumpsView(dumps) {
		const box = h("section", { id: "fp-dumps" }, h("h3", null, "Dumps (level 2): " + dumps.length));
		if (!dumps.length) return box;
		const label = (d) => "site " + d.site + " line " + d.statement_line + " " + d.name + " p(" + (d.program || []).join(",") + ") e" + d.execution + " [" + d.kind + (d.error ? ", unreadable" : "") + "]";
		const sel = h("select", { class: "fp-dump-select" }, dumps.map((d, i) => h("option", { value: i }, label(d))));
		const Wd = 640, Hd = 200;
		const c = canvas(Wd, Hd, "fp-hist");
		const info = h("div", { class: "fp-muted" });
		function draw() {
			const d = dumps[Number(sel.value)], g = c.getContext("2d");
			g.clearRect(0, 0, Wd, Hd);
			if (d.error) { add(clear(info), h("span", { class: "fp-error" }, d.error)); return; }
			const bins = d.bins || [], m = Math.max(1, ...bins);
			const bw = (Wd - 20) / Math.max(1, bins.length);
			g.fillStyle = "#2f6fdb";
			bins.forEach((b, i) => { const bh = (b / m) * (Hd - 30); g.fillRect(10 + i * bw, Hd - 20 - bh, Math.max(1, bw - 1), bh); });
			g.fillStyle = "#5f6b7d";
			g.font = "11px sans-serif";
			g.fillText(fmt(d.lo), 10, Hd - 5);
			g.fillText(fmt(d.hi), Wd - 70, Hd - 5);
			add(clear(info), (d.file || "dump") + ": " + fmt(d.n) + " elements of " + d.dtype + ", NaN " + fmt(d.nan) + ", Inf " + fmt(d.inf) + ", finite range " + fmt(d.lo) + " to " + fmt(d.hi));
		}
		sel.addEventListener("change", draw);
		c.addEventListener("mousemove", (ev) => {
			const d = dumps[Number(sel.value)];
			if (!d.bins || !d.bins.length) return hideTip();
			const [mx] = localXY(c, ev), bw = (Wd - 20) / d.bins.length, i = Math.floor((mx - 10) / bw);
			if (i < 0 || i >= d.bins.length) return hideTip();
			const w = (d.hi - d.lo) / d.bins.length;
			showTip(ev, fmt(d.lo + i * w) + " to " + fmt(d.lo + (i + 1) * w) + ": " + fmt(d.bins[i]));
		});
		c.addEventListener("mouseleave", hideTip);
		draw();
		add(box, h("div", { class: "fp-toolbar" }, "Histogram of ", sel), c, info);
		return box;
	}

	// =====================================================================================================
	// Profile
	// =====================================================================================================
	const KIND_NAMES = { r: "root", k: "kernel", s: "scope", p: "Python frame", i: "inside a kernel", o: "cut rows" };
	const KIND_COLORS = { r: "#9aa3b2", s: "#5b8def", p: "#4caf7a", i: "#9c6ade", o: "#d5d9e0" };
	const prof = { P: null, T: null, n: 0, parent: null, kids: null, w: null, zoom: 0, search: "", match: null, x0: null, xw: null, maxDepth: 0 };

	function profilePage() {
		const P = D.profile, T = block(P.tree), main = $("fp-main");
		prof.P = P; prof.T = T; prof.n = T.n;
		buildTree();
		const info = [["profile", P.path], ["compared with", P.other_path], ["nodes", fmt(P.nodes_total) + (P.diff ? " (this), " + fmt(P.other_nodes_total) + " (other)" : "")],
			["rows shown", fmt(P.rows) + " of " + fmt(P.rows_total) + (P.other_rows ? " (+" + P.other_rows + " rows for what was cut)" : "")]];
		if (P.incomplete) info.push(["warning", "incomplete profile: " + (P.reasons || "no reason recorded")]);
		if (P.other_incomplete) info.push(["warning", "the other profile is incomplete: " + (P.other_reasons || "no reason recorded")]);
		if (P.meta_warning) info.push(["meta file", P.meta_warning]);
		add(main, h("section", { id: "fp-profile-info" }, kv(info)));
		if (P.view_notes && P.view_notes.length) add(main, h("ul", { class: "fp-muted" }, P.view_notes.map((x) => h("li", null, x))));
		add(main, icicleSection(), tableSection());
		if (P.devices && P.devices.length) add(main, devicesSection(P.devices));
		if (P.roofline) add(main, rooflineSection(P.roofline));
		else if (P.diff) add(main, section("fp-roofline", "Roofline", h("p", { class: "fp-muted" }, "The roofline places one profile's kernels: open each profile's own page.")));
		if (D.advice) add(main, adviceSection(block(D.advice)));
		if (D.timeline) add(main, timelineSection(block(D.timeline)));
	}

	// ---- advice ---------------------------------------------------------------------------------
	// The advice of `flagprism advise` (its JSON object): each advised kernel with its findings,
	// the run's findings, the rules that could not run and the plan.
	function evidenceText(e) {
		if (e.text != null) return e.name + " " + e.text;
		const v = e.unit === "ns" ? fmtUs(e.value / 1e3) : e.unit === "B" ? fmtBytes(e.value) : fmt(e.value) + (e.unit ? " " + e.unit : "");
		return e.name + " " + v;
	}
	function findingCard(A, f) {
		const card = h("div", { class: "fp-card fp-advice", "data-rule": f.rule });
		add(card, h("h3", null, h("span", { class: "fp-kind fp-rule" }, f.rule), " ", f.title));
		if (f.line) add(card, h("p", { class: "fp-muted" }, "at " + f.line.file + ":" + f.line.line + " (" + f.line.source + ")"));
		if (f.evidence && f.evidence.length)
			add(card, h("ul", { class: "fp-evidence" }, f.evidence.map((e) => h("li", null, evidenceText(e), h("span", { class: "fp-muted" }, " (" + e.source + ")")))));
		const s = f.saving || {};
		add(card, h("p", null, h("b", null, "saving: "), s.ns != null ? fmtUs(s.ns / 1e3) + " (" + fmt(100 * s.share) + "% of " + (s.of || "the run") + "): " + (s.method || "") : (s.method || "not estimated")));
		if (f.suggestion) add(card, h("p", null, h("b", null, "try: "), f.suggestion));
		return card;
	}
	function adviceSection(A) {
		const s = h("section", { id: "fp-advice" }, h("h2", null, "Advice"));
		if (!A) return s;
		const F = A.findings || [];
		for (const k of A.kernels || []) {
			add(s, h("h3", null, "#" + k.rank + " " + k.name + " ", h("span", { class: "fp-muted" }, fmt(100 * k.share) + "% of the kernel time, " + fmtUs(k.time_ns / 1e3) + ", " + fmt(k.launches) + " launches")));
			const mine = F.filter((f) => f.kernel === k.rank - 1);
			if (!mine.length) add(s, h("p", { class: "fp-muted" }, k.library ? "A library's kernel, not Triton's: the kernel rules do not apply (the run's findings cover its time)." : "No finding: the rules that ran saw nothing to change."));
			for (const f of mine) add(s, findingCard(A, f));
		}
		const run = F.filter((f) => f.kernel == null);
		if (run.length) {
			add(s, h("h3", null, "The run"));
			for (const f of run) add(s, findingCard(A, f));
		}
		const rows = (A.rules || []).map((r) => h("tr", { class: "fp-rule-" + r.status },
			td(r.name), td(r.status.replace(/_/g, " ")), td(r.ran, 1), td(r.findings, 1), td(r.why || ""), td(r.enable || "")));
		add(s, h("h3", null, "Rules"), h("div", { class: "fp-scroll" }, table([{ label: "rule" }, { label: "status" }, { label: "ran", num: 1 }, { label: "findings", num: 1 }, { label: "why not" }, { label: "collect with" }], rows, { id: "fp-advice-rules" })));
		if (A.plan && A.plan.length)
			add(s, h("h3", null, "Plan"), h("pre", { class: "fp-plan" }, A.plan.map((p) => "# " + p.rules + "\n" + p.command).join("\n")));
		if (A.notes && A.notes.length) add(s, h("ul", { class: "fp-muted" }, A.notes.map((x) => h("li", null, x))));
		return s;
	}

	function col(c, side) { const s = prof.T[side || "a"]; return s ? s[c] : null; }
	function buildTree() {
		const T = prof.T, n = T.n, parent = new Int32Array(n), w = new Float64Array(n), stack = [];
		const kids = Array.from({ length: n }, () => []);
		let maxDepth = 0;
		for (let i = 0; i < n; i++) {
			const d = T.depth[i];
			while (stack.length && T.depth[stack[stack.length - 1]] >= d) stack.pop();
			parent[i] = stack.length ? stack[stack.length - 1] : -1;
			if (parent[i] >= 0) kids[parent[i]].push(i);
			stack.push(i);
			maxDepth = Math.max(maxDepth, d);
			const a = T.a[0][i], b = T.b ? T.b[0][i] : null;
			w[i] = Math.max(a != null && isFinite(a) ? Math.abs(a) : 0, b != null && isFinite(b) ? Math.abs(b) : 0);
		}
		prof.parent = parent; prof.kids = kids; prof.w = w; prof.maxDepth = maxDepth;
		prof.x0 = new Float64Array(n); prof.xw = new Float64Array(n);
	}
	function nodeName(i) {
		const T = prof.T;
		return T.kind[i] === "o" ? "(" + T.more[i] + " more)" : T.name[i];
	}
	function nodePath(i) {
		const out = [];
		for (let j = i; j >= 0; j = prof.parent[j]) out.push(nodeName(j));
		return out.reverse().join(" / ");
	}
	function change(i) {
		const a = prof.T.a[0][i] || 0, b = prof.T.b ? prof.T.b[0][i] || 0 : 0;
		const m = Math.max(Math.abs(a), Math.abs(b));
		return m > 0 ? (b - a) / m : 0;
	}
	function nodeColor(i) {
		const k = prof.T.kind[i];
		if (prof.T.b && k !== "o") return diverge(change(i));
		if (k === "k") return "hsl(" + (10 + (hashHue(prof.T.name[i]) % 40)) + ",78%,58%)";
		return KIND_COLORS[k] || "#999";
	}

	// ---- icicle -------------------------------------------------------------------------------------------------
	const ROW = 18;
	function icicleSection() {
		const P = prof.P;
		const search = h("input", { type: "search", id: "fp-search", placeholder: "search names (substring)" });
		const reset = h("button", { id: "fp-reset", type: "button" }, "Reset zoom");
		const found = h("span", { id: "fp-found", class: "fp-muted" });
		const crumbs = h("div", { class: "fp-crumbs", id: "fp-crumbs" });
		const wrap = h("div", { class: "fp-icicle-wrap" });
		const c = h("canvas", { id: "fp-icicle-canvas" });
		add(wrap, c);
		const legend = h("div", { class: "fp-legend" });
		if (prof.T.b) add(legend, h("span", { style: "--c:" + diverge(-1) }, "less in the other profile"), h("span", { style: "--c:#fff" }, "same"), h("span", { style: "--c:" + diverge(1) }, "more in the other profile"));
		else for (const k of ["k", "s", "p", "i", "o"]) add(legend, h("span", { style: "--c:" + (k === "k" ? "hsl(25,78%,58%)" : KIND_COLORS[k]) }, KIND_NAMES[k]));
		prof.canvas = c; prof.crumbs = crumbs; prof.found = found;
		search.addEventListener("input", () => { prof.search = search.value.toLowerCase(); drawIcicle(); fillTable(); });
		reset.addEventListener("click", () => zoomTo(0));
		c.addEventListener("mousemove", (ev) => {
			const i = icicleHit(c, ev);
			if (i < 0) return hideTip();
			const T = prof.T, cols = prof.P.columns;
			const lines = [nodePath(i), KIND_NAMES[T.kind[i]] || ""];
			if (T.b) lines.push(cols[0].label + ": " + fmt(T.a[0][i]) + " \u2192 " + fmt(T.b[0][i]) + " (" + (change(i) >= 0 ? "+" : "") + (change(i) * 100).toFixed(1) + "%)");
			else cols.forEach((cc, k) => { if (T.a[k][i] != null) lines.push(cc.label + ": " + fmt(T.a[k][i])); });
			showTip(ev, lines.join("\n"));
		});
		c.addEventListener("mouseleave", hideTip);
		c.addEventListener("click", (ev) => { const i = icicleHit(c, ev); if (i >= 0) zoomTo(i === prof.zoom ? Math.max(0, prof.parent[i]) : i); });
		const width = P.columns[0] ? P.columns[0].label : "";
		return h("section", { id: "fp-icicle" }, h("h2", null, "Call tree"),
			h("div", { class: "fp-toolbar" }, search, reset, found),
			h("p", { class: "fp-muted" }, "Width: " + width + (prof.T.b ? " (the larger of the two profiles); colour: change" : "; colour: kind") + ". Click to zoom in, click the top bar to zoom out."),
			crumbs, wrap, legend);
	}
	// The zoomed node's subtree is the run of rows after it (rows are in depth-first order).
	function subtreeEnd(z) {
		const d = prof.T.depth[z];
		let e = z + 1;
		while (e < prof.n && prof.T.depth[e] > d) e++;
		return e;
	}
	function layout() {
		const x0 = prof.x0, xw = prof.xw, w = prof.w, z = prof.zoom, end = subtreeEnd(z);
		x0.fill(0); xw.fill(0);
		// ancestors of the zoomed node span the whole width
		for (let j = z; j >= 0; j = prof.parent[j]) { x0[j] = 0; xw[j] = 1; }
		for (let i = z; i < end; i++) {
			const ks = prof.kids[i];
			if (!ks.length || !(xw[i] > 0)) continue;
			let sum = 0;
			for (const k of ks) sum += w[k];
			// children never take more than their parent (metrics that are not inclusive)
			const scale = sum > w[i] ? xw[i] / sum : w[i] > 0 ? xw[i] / w[i] : 0;
			let x = x0[i];
			for (const k of ks) { x0[k] = x; xw[k] = w[k] * scale; x += xw[k]; }
		}
	}
	function drawIcicle() {
		layout();
		const c = prof.canvas, T = prof.T, n = prof.n, zd = T.depth[prof.zoom];
		const W = Math.max(600, (c.parentElement && c.parentElement.clientWidth) || document.body.clientWidth - 40);
		const rows = prof.maxDepth + 1;
		const g = sizeCanvas(c, W, rows * ROW);
		g.font = "11px sans-serif";
		g.textBaseline = "middle";
		let matched = 0, matchedW = 0;
		const q = prof.search;
		for (let i = 0; i < n; i++) {
			const xw = prof.xw[i] * W;
			if (!(xw > 0.02)) continue; // thinner rows still blend into a visible band
			const x = prof.x0[i] * W, y = T.depth[i] * ROW;
			const hit = q && T.kind[i] !== "o" && T.name[i].toLowerCase().includes(q);
			if (hit) { matched++; if (!hasMatchedAncestor(i, q)) matchedW += prof.w[i]; }
			g.globalAlpha = q && !hit ? 0.35 : T.depth[i] < zd ? 0.6 : 1;
			g.fillStyle = nodeColor(i);
			g.fillRect(x, y, xw > 2 ? xw - 0.5 : xw, ROW - 1);
			if (hit) { g.globalAlpha = 1; g.strokeStyle = "#111"; g.lineWidth = 1.5; g.strokeRect(x + 0.5, y + 0.5, Math.max(0.5, xw - 1.5), ROW - 2); }
			if (xw > 36) {
				g.globalAlpha = 1;
				g.fillStyle = "#111";
				const name = nodeName(i), max = Math.floor((xw - 6) / 6.2);
				g.fillText(name.length > max ? name.slice(0, Math.max(1, max - 1)) + "\u2026" : name, x + 3, y + ROW / 2);
			}
		}
		g.globalAlpha = 1;
		const root = prof.w[0] || 1;
		prof.found.textContent = q ? matched + " shown nodes match, " + (100 * matchedW / root).toFixed(1) + "% of the root" : "";
		const path = [];
		for (let j = prof.zoom; j >= 0; j = prof.parent[j]) path.unshift(j);
		add(clear(prof.crumbs), "zoom: ", ...path.flatMap((j, k) => [k ? " / " : "", k === path.length - 1 ? nodeName(j) : h("a", { onclick: () => zoomTo(j) }, nodeName(j))]));
	}
	function hasMatchedAncestor(i, q) {
		for (let j = prof.parent[i]; j >= 0; j = prof.parent[j]) if (prof.T.kind[j] !== "o" && prof.T.name[j].toLowerCase().includes(q)) return true;
		return false;
	}
	function icicleHit(c, ev) {
		const [mx, my] = localXY(c, ev), W = c.width / (window.devicePixelRatio || 1), d = Math.floor(my / ROW);
		for (let i = 0; i < prof.n; i++) {
			if (prof.T.depth[i] !== d || !(prof.xw[i] > 0)) continue;
			const x = prof.x0[i] * W;
			if (mx >= x && mx < x + prof.xw[i] * W) return i;
		}
		return -1;
	}
	function zoomTo(i) {
		if (prof.T.kind[i] === "o") i = Math.max(0, prof.parent[i]);
		prof.zoom = i;
		drawIcicle();
	}

	// ---- table ----------------------------------------------------------------------------------------------------
	const tbl = { sort: 0, side: "a", dir: -1, shown: 200 };
	function tableSection() {
		const P = prof.P, T = prof.T;
		const head = [h("th", null, "name"), h("th", null, "kind")];
		const specs = [];
		P.columns.forEach((c, k) => {
			if (T.b) {
				for (const [side, l] of [["a", " (this)"], ["b", " (other)"], ["d", " \u0394"]]) specs.push([k, side, c.label + l]);
			} else specs.push([k, "a", c.label]);
		});
		for (const [k, side, label] of specs) {
			const th = h("th", { class: "num fp-sort", "data-col": k, "data-side": side }, label);
			th.addEventListener("click", () => {
				if (tbl.sort === k && tbl.side === side) tbl.dir = -tbl.dir; else { tbl.sort = k; tbl.side = side; tbl.dir = -1; }
				tbl.shown = 200;
				fillTable();
			});
			head.push(th);
		}
		prof.tbody = h("tbody");
		prof.more = h("button", { type: "button", id: "fp-more", onclick: () => { tbl.shown += 200; fillTable(); } }, "show more");
		prof.specs = specs;
		const t = h("table", { id: "fp-table-main" }, h("thead", null, h("tr", null, head)), prof.tbody);
		const s = h("section", { id: "fp-table" }, h("h2", null, "Table"), h("p", { class: "fp-muted" }, "The same columns as flagprism view" + (P.columns_left_out ? " (" + P.columns_left_out + " more metrics are not shown)" : "") + ". Click a header to sort, a row to zoom the call tree to it. The search box filters."), h("div", { class: "fp-scroll" }, t), prof.more);
		fillTable();
		return s;
	}
	function cellValue(k, side, i) {
		const T = prof.T;
		if (side === "d") { const a = T.a[k][i], b = T.b[k][i]; return a == null && b == null ? null : (b || 0) - (a || 0); }
		return T[side][k][i];
	}
	function fillTable() {
		const T = prof.T, n = prof.n, q = prof.search, k = tbl.sort, side = tbl.side;
		const idx = [];
		for (let i = 0; i < n; i++) if (T.kind[i] !== "o" && (!q || T.name[i].toLowerCase().includes(q))) idx.push(i);
		idx.sort((x, y) => {
			const a = cellValue(k, side, x), b = cellValue(k, side, y);
			const an = a == null || !isFinite(a), bn = b == null || !isFinite(b);
			if (an || bn) return an === bn ? x - y : an ? 1 : -1;
			return a === b ? x - y : (a < b ? -1 : 1) * tbl.dir;
		});
		for (const th of document.querySelectorAll("#fp-table-main th.fp-sort")) {
			const on = Number(th.dataset.col) === k && th.dataset.side === side;
			if (on) th.dataset.dir = tbl.dir < 0 ? "desc" : "asc"; else delete th.dataset.dir;
		}
		clear(prof.tbody);
		for (const i of idx.slice(0, tbl.shown)) {
			const tr = h("tr", { class: "fp-click fp-row", title: nodePath(i), onclick: () => { zoomTo(i); $("fp-icicle").scrollIntoView(); } },
				h("td", null, h("span", { style: "padding-left:" + Math.min(T.depth[i], 30) * 8 + "px" }, nodeName(i))), td(KIND_NAMES[T.kind[i]]));
			for (const [c, s] of prof.specs) {
				const v = cellValue(c, s, i), cell = td(fmt(v), true);
				if (s === "d" && v) cell.style.color = v > 0 ? "#b3261e" : "#1e5bb3";
				add(tr, cell);
			}
			add(prof.tbody, tr);
		}
		prof.more.hidden = idx.length <= tbl.shown;
		prof.more.textContent = "show more (" + Math.min(200, idx.length - tbl.shown) + " of " + (idx.length - tbl.shown) + ")";
	}

	function devicesSection(devs) {
		return section("fp-devices", "Devices", table([{ label: "device" }, { label: "arch" }, { label: "peak FLOP/s (16-bit)", num: 1 }, { label: "peak FLOP/s (32-bit)", num: 1 }, { label: "peak bytes/s", num: 1 }, { label: "note" }],
			devs.map((d) => h("tr", null, td(d.type + " " + d.index), td(d.arch), td(fmt(d.peak_flops16), true), td(fmt(d.peak_flops32), true), td(fmt(d.peak_bytes_per_s), true), td(d.note)))));
	}

	// ---- roofline -------------------------------------------------------------------------------------------------
	function rooflineSection(R) {
		const pts = (R.points || []).filter((p) => p.intensity > 0 && p.flop_per_s > 0);
		const s = h("section", { id: "fp-roofline" }, h("h2", null, "Roofline"));
		if (!pts.length) {
			add(s, h("p", { class: "fp-muted" }, "No kernel has both work (FLOPs) and traffic (bytes) numbers, so none can be placed (" + R.kernels + " kernels)."));
			return s;
		}
		const roofs = [];
		for (const p of R.points) if (p.peaks_known && !roofs.some((r) => r[0] === p.peak_flops && r[1] === p.peak_bytes_per_s)) roofs.push([p.peak_flops, p.peak_bytes_per_s]);
		let xl = Infinity, xh = -Infinity, yl = Infinity, yh = -Infinity;
		for (const p of pts) { xl = Math.min(xl, p.intensity); xh = Math.max(xh, p.intensity); yl = Math.min(yl, p.flop_per_s); yh = Math.max(yh, p.flop_per_s); }
		for (const [pf, pb] of roofs) { yh = Math.max(yh, pf); xh = Math.max(xh, (pf / pb) * 4); }
		xl = Math.pow(10, Math.floor(Math.log10(xl)) - 0.2); xh = Math.pow(10, Math.ceil(Math.log10(xh)) + 0.1);
		yl = Math.pow(10, Math.floor(Math.log10(yl)) - 0.2); yh = Math.pow(10, Math.ceil(Math.log10(yh)) + 0.1);
		const Wd = 640, Hd = 360, pad = 56;
		const c = canvas(Wd, Hd, "fp-roof");
		const g = c.getContext("2d");
		const X = (v) => pad + ((Math.log10(v) - Math.log10(xl)) / (Math.log10(xh) - Math.log10(xl))) * (Wd - pad - 10);
		const Y = (v) => Hd - 30 - ((Math.log10(v) - Math.log10(yl)) / (Math.log10(yh) - Math.log10(yl))) * (Hd - 40);
		g.strokeStyle = "#d8dee8"; g.fillStyle = "#5f6b7d"; g.font = "11px sans-serif";
		for (let e = Math.ceil(Math.log10(xl)); e <= Math.log10(xh); e++) { g.beginPath(); g.moveTo(X(10 ** e), 10); g.lineTo(X(10 ** e), Hd - 30); g.stroke(); g.fillText("1e" + e, X(10 ** e) - 8, Hd - 16); }
		for (let e = Math.ceil(Math.log10(yl)); e <= Math.log10(yh); e++) { g.beginPath(); g.moveTo(pad, Y(10 ** e)); g.lineTo(Wd - 10, Y(10 ** e)); g.stroke(); g.fillText("1e" + e, 4, Y(10 ** e) + 4); }
		g.fillText("FLOP/byte \u2192", Wd - 90, Hd - 4);
		g.fillText("FLOP/s", 4, 10);
		g.strokeStyle = "#c62828"; g.lineWidth = 1.5;
		for (const [pf, pb] of roofs) {
			g.beginPath();
			const steps = 64;
			for (let k = 0; k <= steps; k++) { const x = xl * Math.pow(xh / xl, k / steps), y = Math.min(pf, x * pb); if (k) g.lineTo(X(x), Y(y)); else g.moveTo(X(x), Y(y)); }
			g.stroke();
		}
		for (const p of pts) {
			g.fillStyle = p.bound === "memory" ? "#2f6fdb" : p.bound === "compute" ? "#e68a00" : "#555";
			g.beginPath(); g.arc(X(p.intensity), Y(p.flop_per_s), 4, 0, 2 * Math.PI); g.fill();
		}
		c.addEventListener("mousemove", (ev) => {
			const [mx, my] = localXY(c, ev);
			let best = null, bd = 64;
			for (const p of pts) { const d = (X(p.intensity) - mx) ** 2 + (Y(p.flop_per_s) - my) ** 2; if (d < bd) { bd = d; best = p; } }
			if (!best) return hideTip();
			showTip(ev, best.name + "\n" + fmt(best.flop_per_s) + " FLOP/s (" + best.flops_src + "), " + fmt(best.byte_per_s) + " B/s (" + best.bytes_src + ")\nintensity " + fmt(best.intensity) + " FLOP/B, " + (isFinite(best.pct_of_roof) ? fmt(best.pct_of_roof) + "% of the roof, " : "") + best.bound + " bound");
		});
		c.addEventListener("mouseleave", hideTip);
		add(s, h("p", { class: "fp-muted" }, pts.length + " of " + R.kernels + " kernels placed" + (roofs.length ? "" : "; no device peaks are known, so no roof is drawn") + "."), c,
			h("div", { class: "fp-legend" }, h("span", { style: "--c:#2f6fdb" }, "memory bound"), h("span", { style: "--c:#e68a00" }, "compute bound"), h("span", { style: "--c:#555" }, "unknown"), roofs.length ? h("span", { style: "--c:#c62828" }, "roof") : null));
		return s;
	}

	// ---- timeline -------------------------------------------------------------------------------------------------
	function timelineSection(TL) {
		const s = h("section", { id: "fp-timeline" }, h("h2", null, "Timeline"));
		const n = TL.ts.length;
		if (!n) { add(s, h("p", { class: "fp-muted" }, "The trace has no slices.")); return s; }
		const tracks = TL.tracks, lanes = new Array(tracks.length).fill(1);
		for (let i = 0; i < n; i++) lanes[TL.track[i]] = Math.max(lanes[TL.track[i]], TL.depth[i] + 1);
		const order = tracks.map((t, i) => i).sort((a, b) => tracks[a].pid - tracks[b].pid || tracks[a].sort - tracks[b].sort || tracks[a].tid - tracks[b].tid);
		const top = new Array(tracks.length);
		const LANE = 12, LABEL = 150;
		let y = 0, lastPid = null;
		for (const t of order) { if (tracks[t].pid !== lastPid) { y += 16; lastPid = tracks[t].pid; } top[t] = y; y += lanes[t] * LANE + 3; }
		const Hd = Math.min(y + 24, 4000), Wd = Math.max(640, document.body.clientWidth - 60);
		const c = canvas(Wd, Hd, "fp-tl");
		c.id = "fp-timeline-canvas";
		const view = { a: 0, b: TL.span || 1 };
		const X = (t) => LABEL + ((t - view.a) / (view.b - view.a)) * (Wd - LABEL - 10);
		function draw() {
			const g = c.getContext("2d");
			g.clearRect(0, 0, Wd, Hd);
			g.font = "10px sans-serif"; g.textBaseline = "middle";
			lastPid = null;
			for (const t of order) {
				if (tracks[t].pid !== lastPid) { g.fillStyle = "#1d2330"; g.fillText(tracks[t].process, 2, top[t] - 8); lastPid = tracks[t].pid; }
				g.fillStyle = "#5f6b7d"; g.fillText(tracks[t].name.slice(0, 24), 8, top[t] + LANE / 2);
				g.fillStyle = "#f3f5f8"; g.fillRect(LABEL, top[t], Wd - LABEL - 10, lanes[t] * LANE);
			}
			for (let i = 0; i < n; i++) {
				const t0 = TL.ts[i], t1 = t0 + TL.dur[i];
				if (t1 < view.a || t0 > view.b) continue;
				const x0 = Math.max(LABEL, X(t0)), x1 = Math.min(Wd - 10, X(t1));
				if (x1 - x0 < 0.3 && i > 0 && TL.track[i] === TL.track[i - 1] && X(TL.ts[i - 1]) > x0 - 0.3) continue;
				g.fillStyle = "hsl(" + hashHue(TL.names[TL.name[i]]) + ",60%,60%)";
				g.fillRect(x0, top[TL.track[i]] + TL.depth[i] * LANE, Math.max(0.6, x1 - x0), LANE - 1);
				if (x1 - x0 > 40) { g.fillStyle = "#111"; g.fillText(TL.names[TL.name[i]].slice(0, Math.floor((x1 - x0) / 6)), x0 + 2, top[TL.track[i]] + TL.depth[i] * LANE + LANE / 2); }
			}
			g.fillStyle = "#5f6b7d";
			g.fillText(fmtUs(view.a), LABEL, Hd - 8);
			g.fillText(fmtUs(view.b), Wd - 70, Hd - 8);
		}
		c.addEventListener("wheel", (ev) => {
			ev.preventDefault();
			const [mx] = localXY(c, ev), f = ev.deltaY > 0 ? 1.25 : 0.8;
			const t = view.a + ((mx - LABEL) / (Wd - LABEL - 10)) * (view.b - view.a);
			view.a = Math.max(0, t - (t - view.a) * f); view.b = Math.min(TL.span || 1, t + (view.b - t) * f);
			if (view.b - view.a < 1e-3) view.b = view.a + 1e-3;
			draw();
		}, { passive: false });
		let drag = null;
		c.addEventListener("mousedown", (ev) => { drag = [localXY(c, ev)[0], view.a, view.b]; });
		window.addEventListener("mouseup", () => { drag = null; });
		c.addEventListener("dblclick", () => { view.a = 0; view.b = TL.span || 1; draw(); });
		c.addEventListener("mousemove", (ev) => {
			const [mx, my] = localXY(c, ev);
			if (drag) {
				const dt = ((drag[0] - mx) / (Wd - LABEL - 10)) * (drag[2] - drag[1]);
				view.a = drag[1] + dt; view.b = drag[2] + dt;
				draw();
				return;
			}
			const t = view.a + ((mx - LABEL) / (Wd - LABEL - 10)) * (view.b - view.a);
			for (let i = n - 1; i >= 0; i--) {
				const tr = TL.track[i], yy = top[tr] + TL.depth[i] * LANE;
				if (my >= yy && my < yy + LANE && t >= TL.ts[i] && t <= TL.ts[i] + TL.dur[i]) {
					return showTip(ev, TL.names[TL.name[i]] + "\n" + (TL.cats[TL.cat[i]] || "") + " on " + tracks[tr].process + " / " + tracks[tr].name + "\nstart " + fmtUs(TL.ts[i]) + ", duration " + fmtUs(TL.dur[i]) + (TL.program[i] >= 0 ? "\nprogram " + TL.program[i] : ""));
				}
			}
			hideTip();
		});
		c.addEventListener("mouseleave", hideTip);
		draw();
		add(s, h("p", { class: "fp-muted" }, fmt(TL.kept) + (TL.kept < TL.total ? " of " + fmt(TL.total) : "") + " slices on " + tracks.length + " tracks" + (TL.path ? " from " + TL.path : "") + ". Wheel zooms, drag pans, double-click resets."), c);
		return s;
	}

	// ---- start -----------------------------------------------------------------------------------------------------
	try {
		header();
		if (D.kind === "debugger") debuggerPage(); else profilePage();
		if (D.kind === "profile") { drawIcicle(); window.addEventListener("resize", drawIcicle); }
	} catch (e) {
		$("fp-main").append(h("p", { class: "fp-error" }, "This page could not draw its data: " + e));
		throw e;
	} finally {
		// when the first views are drawn: tests and bench/bench_report.py wait for it
		document.documentElement.setAttribute("data-fp-ready-ms", String(Math.round(performance.now())));
		document.documentElement.setAttribute("data-fp-ready", "1");
	}
})();
