// report.js - draws the HTML report (embedded in every --html file).
//
// Input: the JSON report (#ptleak-report, SPEC.md) and the extra data
// (#ptleak-extra, include/report_html.h).  Everything is made with
// createElement/textContent: no name from the target is ever parsed as
// HTML.  When done, <html data-state="rendered">; an error shows on the
// page and sets data-state="error".
"use strict";
(function () {
	var SVGNS = "http://www.w3.org/2000/svg";
	var COLORS = ["#1f6feb", "#c2410c", "#15803d", "#9333ea", "#b45309",
		"#0e7490", "#be123c", "#4d7c0f", "#6d28d9", "#a16207"];
	var MAX_RECORDS = 500;

	function fail(msg) {
		document.documentElement.setAttribute("data-state", "error");
		var p = document.createElement("p");
		p.className = "error";
		p.id = "ptleak-error";
		p.textContent = "The report could not be drawn: " + msg;
		document.body.insertBefore(p, document.body.firstChild);
	}
	window.addEventListener("error", function (e) { fail(e.message); });

	function el(tag, cls, text) {
		var e = document.createElement(tag);
		if (cls)
			e.className = cls;
		if (text !== undefined && text !== null)
			e.textContent = String(text);
		return e;
	}
	function svg(tag, attrs) {
		var e = document.createElementNS(SVGNS, tag);
		for (var k in attrs)
			e.setAttribute(k, attrs[k]);
		return e;
	}
	function add(parent) {
		for (var i = 1; i < arguments.length; i++)
			if (arguments[i])
				parent.appendChild(arguments[i]);
		return parent;
	}
	function put(parent, child) {	// CHILD, appended
		parent.appendChild(child);
		return child;
	}
	function thousands(n) {
		return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
	}
	function human(b) {
		var u = ["B", "KiB", "MiB", "GiB", "TiB"], i = 0;
		while (b >= 1024 && i < u.length - 1) {
			b /= 1024;
			i++;
		}
		return (i ? b.toFixed(b < 10 ? 2 : 1) : String(b)) + " " + u[i];
	}
	function bytes(n) {
		return n < 1024 ? thousands(n) + " bytes" :
			thousands(n) + " bytes (" + human(n) + ")";
	}
	function plural(n, w) {
		return thousands(n) + " " + w + (n === 1 ? "" : "s");
	}
	function secs(s) {
		return s.toFixed(3) + " s";
	}
	function words(kind) {
		return kind.replace(/_/g, " ");
	}
	function shellword(s) {
		return /^[\w@%+=:,.\/-]+$/.test(s) ? s : "'" + s.replace(/'/g, "'\\''") + "'";
	}

	var R, X;
	try {
		R = JSON.parse(document.getElementById("ptleak-report").textContent);
		X = JSON.parse(document.getElementById("ptleak-extra").textContent);
	} catch (e) {
		fail("its data is not valid JSON (" + e.message + ")");
		return;
	}
	var app = document.getElementById("app");
	// the JSON report's own resources when it has them (SPEC.md)
	if (!X.resources && R.target.resources)
		X.resources = R.target.resources;
	var SRC = {};
	X.sources.forEach(function (s) {
		SRC[s.module + "|" + s.file + "|" + s.line] = s;
	});

	function section(title, id) {
		var s = el("section");
		s.id = id;
		add(s, el("h2", null, title));
		app.appendChild(s);
		return s;
	}

	// ---- summary ----

	function summary() {
		var s = section("Summary", "summary"), t = el("table"), h = R.heap;
		function row(k, v) {
			var tr = el("tr");
			add(tr, el("th", null, k), el("td", null, v));
			t.appendChild(tr);
		}
		row("Program", R.target.argv.map(shellword).join(" ") || "(unknown)");
		row("Process", "pid " + R.target.pid + (R.target.exit ?
			(R.target.exit.signal !== undefined ?
				", killed by signal " + R.target.exit.signal :
				", exit code " + R.target.exit.code) : ", running"));
		if (R.report)
			row("Report", "#" + R.report.number + " (" + R.reason + ") at " +
				R.report.time);
		row("Runtime", R.report ? secs(R.report.elapsed_s) : "not known");
		row("CPU time", X.resources ? secs(X.resources.user_s + X.resources.sys_s) +
			" (user " + secs(X.resources.user_s) + ", system " +
			secs(X.resources.sys_s) + ")" : "not measured");
		if (h) {
			row("Heap in use", bytes(h.in_use.bytes) + " in " +
				plural(h.in_use.blocks, "block"));
			row("Peak heap", bytes(h.peak.bytes));
		}
		row("Peak RSS", X.resources ? bytes(X.resources.max_rss_kb * 1024) :
			"not measured");
		if (h)
			row("Allocator calls", thousands(h.totals.allocs + h.totals.frees) +
				" (" + plural(h.totals.allocs, "alloc") + ", " +
				plural(h.totals.frees, "free") + ", " +
				bytes(h.totals.bytes_allocated) + " allocated)");
		s.appendChild(t);

		var g = put(s, el("div", "grid"));
		if (h) {
			var lt = el("table"), hd = el("tr");
			add(hd, el("th", null, "Heap"), el("th", "num", "bytes"),
				el("th", "num", "blocks"));
			lt.appendChild(hd);
			Object.keys(h.summary).forEach(function (k) {
				var tr = el("tr");
				add(tr, el("td", null, words(k)),
					el("td", "num", thousands(h.summary[k].bytes)),
					el("td", "num", thousands(h.summary[k].blocks)));
				lt.appendChild(tr);
			});
			g.appendChild(lt);
			if (!h.tracked)
				add(s, el("p", "error", "heap NOT tracked: " + h.why));
		} else {
			add(g, el("p", "note", "The heap was not tracked (--fd-only)."));
		}
		if (R.fds) {
			var ft = el("table"), fh = el("tr"), by = {};
			add(fh, el("th", null, "Descriptors"), el("th", "num", "count"));
			ft.appendChild(fh);
			R.fds.records.forEach(function (r) {
				by[r.type] = (by[r.type] || 0) + 1;
			});
			[["open", R.fds.open], ["inherited", R.fds.inherited],
			 ["left open (reported)", R.fds.records.length]].concat(
				Object.keys(by).sort().map(function (k) {
					return ["  " + k, by[k]];
				})).forEach(function (p) {
				var tr = el("tr");
				add(tr, el("td", null, p[0]), el("td", "num", thousands(p[1])));
				ft.appendChild(tr);
			});
			g.appendChild(ft);
			if (!R.fds.tracked)
				add(s, el("p", "error", "descriptors NOT tracked: " + R.fds.why));
		}
	}

	// ---- charts ----

	var W = 800, H = 240, L = 70, RM = 16, T = 14, B = 26;

	function frame(box, ymax, tmax) {
		var s = svg("svg", { viewBox: "0 0 " + W + " " + H, role: "img" });
		add(s, svg("line", { x1: L, y1: H - B, x2: W - RM, y2: H - B, "class": "axis" }),
			svg("line", { x1: L, y1: T, x2: L, y2: H - B, "class": "axis" }));
		for (var i = 0; i <= 4; i++) {
			var y = H - B - (H - B - T) * i / 4;
			var tx = svg("text", { x: L - 6, y: y + 4, "text-anchor": "end" });
			tx.textContent = human(Math.round(ymax * i / 4));
			add(s, tx, svg("line", { x1: L, y1: y, x2: W - RM, y2: y,
				"class": "axis", opacity: i ? 0.4 : 1 }));
			var xx = L + (W - RM - L) * i / 4;
			var tt = svg("text", { x: xx, y: H - 8, "text-anchor": "middle" });
			tt.textContent = (tmax * i / 4 / 1000).toFixed(tmax < 4000 ? 2 : 1) + " s";
			s.appendChild(tt);
		}
		box.appendChild(s);
		return s;
	}
	function xs(ms, tmax) {
		return L + (W - RM - L) * (tmax ? ms / tmax : 0.5);
	}
	function ys(v, ymax) {
		return H - B - (H - B - T) * (ymax ? v / ymax : 0);
	}
	function pathOf(pts) {
		return pts.map(function (p, i) {
			return (i ? "L" : "M") + p[0].toFixed(1) + "," + p[1].toFixed(1);
		}).join("");
	}

	// Pointing at chart S says the values of the nearest sample.
	function hover(box, s, ms, tmax, say) {
		var tip = put(box, el("div", "tip")), cur = svg("line", {
			"class": "cursor", y1: T, y2: H - B, x1: 0, x2: 0, visibility: "hidden" });
		s.appendChild(cur);
		function at(ev) {
			var r = s.getBoundingClientRect();
			var x = (ev.clientX - r.left) * W / r.width, best = 0;
			for (var i = 1; i < ms.length; i++)
				if (Math.abs(xs(ms[i], tmax) - x) < Math.abs(xs(ms[best], tmax) - x))
					best = i;
			var cx = xs(ms[best], tmax);
			cur.setAttribute("x1", cx);
			cur.setAttribute("x2", cx);
			cur.setAttribute("visibility", "visible");
			tip.textContent = say(best);
			tip.style.display = "block";
			var left = cx * r.width / W + 12;
			if (left + tip.offsetWidth > r.width)
				left = Math.max(0, cx * r.width / W - tip.offsetWidth - 12);
			tip.style.left = left + "px";
			tip.style.top = "8px";
		}
		s.addEventListener("mousemove", at);
		s.addEventListener("click", at);
		s.addEventListener("mouseleave", function () {
			tip.style.display = "none";
			cur.setAttribute("visibility", "hidden");
		});
	}

	function stackLabel(id) {
		var f = X.stacks[String(id)] || [];
		for (var i = 1; i < f.length; i++)
			if (f[i].file && f[i].line)
				return (f[i].function || "???") + " (" + f[i].file + ":" + f[i].line + ")";
		for (i = 1; i < f.length; i++)
			if (f[i].function)
				return f[i].function;
		return "stack " + id;
	}

	function sampleText(se, k) {
		var t = "t = " + (se.ms[k] / 1000).toFixed(3) + " s";
		if (se.heap_bytes)
			t += "\nheap: " + bytes(se.heap_bytes[k]);
		if (se.heap_blocks)
			t += " in " + plural(se.heap_blocks[k], "block");
		if (se.rss_kb)
			t += "\nRSS: " + bytes(se.rss_kb[k] * 1024);
		return t;
	}

	function heapChart(s, se) {
		var box = put(s, el("div", "chart")), n = se.ms.length, i;
		box.id = "chart-heap";
		var tmax = se.ms[n - 1], ymax = 1, peak = -1;
		for (i = 0; i < n; i++) {
			if (se.heap_bytes) {
				ymax = Math.max(ymax, se.heap_bytes[i]);
				if (peak < 0 || se.heap_bytes[i] > se.heap_bytes[peak])
					peak = i;
			}
			if (se.rss_kb)
				ymax = Math.max(ymax, se.rss_kb[i] * 1024);
		}
		ymax *= 1.08;
		var g = frame(box, ymax, tmax);
		function line(vals, mul, cls, id) {
			var pts = [];
			for (var k = 0; k < n; k++)
				pts.push([xs(se.ms[k], tmax), ys(vals[k] * mul, ymax)]);
			if (n === 1)
				pts.push([pts[0][0] + 0.5, pts[0][1]]);
			g.appendChild(svg("path", { d: pathOf(pts), "class": cls, id: id }));
		}
		if (se.rss_kb) {
			line(se.rss_kb, 1024, "rss", "rss-line");
			if (n <= 200)
				for (i = 0; i < n; i++)
					g.appendChild(svg("circle", { cx: xs(se.ms[i], tmax),
						cy: ys(se.rss_kb[i] * 1024, ymax), r: 2.5,
						"class": "pt rss-pt" }));
		}
		if (se.heap_bytes) {
			line(se.heap_bytes, 1, "heap", "heap-line");
			if (n <= 200)	// few samples: each one seen, and said
				for (i = 0; i < n; i++) {
					var c = svg("circle", { cx: xs(se.ms[i], tmax),
						cy: ys(se.heap_bytes[i], ymax), r: 2.5, "class": "pt" });
					c.appendChild(svg("title", {})).textContent = sampleText(se, i);
					g.appendChild(c);
				}
			var px = xs(se.ms[peak], tmax), py = ys(se.heap_bytes[peak], ymax);
			g.appendChild(svg("circle", { cx: px, cy: py, r: 5, "class": "peak",
				id: "peak-mark" }));
			var lab = svg("text", { x: px + (px > W / 2 ? -8 : 8), y: Math.max(py - 8, T + 10),
				"text-anchor": px > W / 2 ? "end" : "start" });
			lab.textContent = "peak " + human(se.heap_bytes[peak]) + " at " +
				(se.ms[peak] / 1000).toFixed(3) + " s";
			g.appendChild(lab);
		}
		var lg = put(box, el("div", "legend"));
		[["heap in use", "var(--heap)"], ["RSS", "var(--rss)"]].forEach(function (p) {
			var sp = el("span"), sw = el("span", "sw");
			sw.style.background = p[1];
			add(lg, add(sp, sw, document.createTextNode(p[0])));
		});
		add(lg, el("span", "note", plural(n, "sample")));
		hover(box, g, se.ms, tmax, function (k) {
			return sampleText(se, k);
		});
	}

	function stackChart(s, se) {
		var n = se.ms.length, m = se.stacks.length;
		add(s, el("h3", null, "Top allocation stacks over time"));
		if (!m || !se.stack_bytes.length) {
			add(s, el("p", "note", "No per-stack samples in this report."));
			return;
		}
		var box = put(s, el("div", "chart")), tmax = se.ms[n - 1], ymax = 1, i, k;
		box.id = "chart-stacks";
		var cum = [];
		for (i = 0; i < n; i++) {
			var c = [0];
			for (k = 0; k < m; k++)
				c.push(c[k] + se.stack_bytes[i][k]);
			cum.push(c);
			ymax = Math.max(ymax, c[m]);
		}
		ymax *= 1.08;
		var g = frame(box, ymax, tmax), lg = put(box, el("div", "legend"));
		for (k = 0; k < m; k++) {
			var top = [], bot = [];
			for (i = 0; i < n; i++) {
				top.push([xs(se.ms[i], tmax), ys(cum[i][k + 1], ymax)]);
				bot.unshift([xs(se.ms[i], tmax), ys(cum[i][k], ymax)]);
			}
			g.appendChild(svg("path", { d: pathOf(top.concat(bot)) + "Z",
				fill: COLORS[k % COLORS.length], "fill-opacity": 0.75,
				"class": "layer" }));
			var sp = el("span"), sw = el("span", "sw");
			sw.style.background = COLORS[k % COLORS.length];
			add(lg, add(sp, sw, document.createTextNode(stackLabel(se.stacks[k]))));
		}
		hover(box, g, se.ms, tmax, function (j) {
			var t = "t = " + (se.ms[j] / 1000).toFixed(3) + " s";
			for (var q = 0; q < m; q++)
				t += "\n" + stackLabel(se.stacks[q]) + ": " + bytes(se.stack_bytes[j][q]);
			return t;
		});
	}

	function charts() {
		var s = section("Heap and RSS over time", "timeline"), se = X.series;
		if (!se || !se.ms || !se.ms.length) {
			add(s, el("p", "note", "No samples in this report."));
			return;
		}
		heapChart(s, se);
		if (R.heap && se.heap_bytes &&
		    R.heap.peak.bytes > Math.max.apply(null, se.heap_bytes))
			add(s, el("p", "note", "The heap's peak, " + bytes(R.heap.peak.bytes) +
				", fell between samples."));
		stackChart(s, se);
	}

	// ---- growing stacks: each one's curve beside the heap's ----

	function growthChart(d, se, vals, k) {
		var n = se.ms.length, tmax = se.ms[n - 1], ymax = 1, i;
		for (i = 0; i < n; i++)
			ymax = Math.max(ymax, se.heap_bytes[i], vals[i] || 0);
		ymax *= 1.08;
		var box = put(d, el("div", "chart"));
		box.id = "chart-growth-" + k;
		var g = frame(box, ymax, tmax);
		function line(v, cls, id) {
			var pts = [], segs = [];
			for (var q = 0; q < n; q++) {
				if (v[q] === null || v[q] === undefined) {
					if (pts.length)
						segs.push(pts);
					pts = [];
					continue;
				}
				pts.push([xs(se.ms[q], tmax), ys(v[q], ymax)]);
			}
			if (pts.length)
				segs.push(pts);
			segs.forEach(function (p, m) {
				if (p.length === 1)
					p.push([p[0][0] + 0.5, p[0][1]]);
				var a = { d: pathOf(p), "class": cls };
				if (!m)
					a.id = id;
				g.appendChild(svg("path", a));
			});
		}
		line(se.heap_bytes, "heap", "growth-heap-" + k);
		line(vals, "grow", "growth-line-" + k);
		var lg = put(box, el("div", "legend"));
		[["heap in use", "var(--heap)"], ["this stack", "var(--grow)"]].forEach(function (p) {
			var sp = el("span"), sw = el("span", "sw");
			sw.style.background = p[1];
			add(lg, add(sp, sw, document.createTextNode(p[0])));
		});
		hover(box, g, se.ms, tmax, function (j) {
			return "t = " + (se.ms[j] / 1000).toFixed(3) + " s\nheap " +
				bytes(se.heap_bytes[j]) + "\nthis stack " +
				(vals[j] === null ? "not sampled" : bytes(vals[j]));
		});
	}

	function growth() {
		var s = section("Growing stacks", "growth");
		if (!R.heap) {
			add(s, el("p", "note", "The heap was not tracked."));
			return;
		}
		var gs = R.heap.growth || [], se = X.series;
		if (!gs.length) {
			add(s, el("p", "note", "No stack's memory grew steadily."));
			return;
		}
		gs.forEach(function (e, k) {
			var d = el("details", "growth"), sm = el("summary");
			d.open = k < 3;
			sm.textContent = "+" + bytes(Math.round(e.bytes_per_s)) + "/s (" +
				e.blocks_per_s.toFixed(1) + " blocks/s): " + bytes(e.in_use_bytes) +
				" in " + plural(e.in_use_blocks, "block") + " in use";
			add(d, sm);
			var vals = se && se.growth ? se.growth[k] : null;
			if (vals && se.heap_bytes)
				growthChart(d, se, vals, k);
			else
				add(d, el("p", "note", "No samples of this stack."));
			add(d, stackList(e.stack, null));
			s.appendChild(d);
		});
	}

	// ---- stacks and their sources ----

	function sourceOf(f) {
		var box = el("div"), s = SRC[f.module + "|" + f.file + "|" + f.line];
		if (!s) {
			add(box, el("p", "note", "Source lines not embedded: more than " +
				X.limits.max_locations + " locations in this report."));
			return box;
		}
		if (s.why) {
			add(box, el("p", "note", s.why));
			return box;
		}
		var pre = put(box, el("pre", "src"));
		pre.title = s.path;
		s.lines.forEach(function (t, i) {
			var no = s.first + i, ln = el("span", "src-line" + (no === s.line ? " hit" : ""));
			add(ln, el("span", "no", no), document.createTextNode(t));
			pre.appendChild(ln);
		});
		return box;
	}

	var opened = false;

	function frameItem(f, i, allocator) {
		var li = el("li"), head = el("span"), fn = f.function || "???";
		if (i === 0 && allocator)
			fn = allocator;
		add(head, el("span", "fn", fn));
		var where = f.file && f.line ? f.file + ":" + f.line :
			f.module ? f.module.replace(/.*\//, "") : f.pc;
		if (where)
			add(head, el("span", "where", " (" + where + ")"));
		if (f.file && f.line) {
			var d = el("details"), sm = el("summary");
			sm.appendChild(head);
			add(d, sm, sourceOf(f));
			if (!opened) {
				d.open = true;	// the first one, for a reader to see
				opened = true;
			}
			li.appendChild(d);
		} else {
			li.appendChild(head);
		}
		li.title = f.pc + (f.module ? " in " + f.module : "");
		return li;
	}

	function stackList(frames, allocator) {
		var ol = el("ol", "stack");
		ol.start = 0;
		if (allocator)
			ol.appendChild(frameItem({ pc: "", function: allocator }, 0, allocator));
		frames.forEach(function (f, i) {
			ol.appendChild(frameItem(f, i + (allocator ? 1 : 0), null));
		});
		return ol;
	}

	function records() {
		var s = section("Leak records", "records");
		if (!R.heap) {
			add(s, el("p", "note", "The heap was not tracked."));
			return;
		}
		var recs = R.heap.records;
		if (!recs.length)
			add(s, el("p", "note", "No record to list."));
		recs.slice(0, MAX_RECORDS).forEach(function (r, i) {
			var d = el("details", "record " + r.kind), sm = el("summary");
			d.open = i < 10;
			sm.textContent = bytes(r.bytes) + " in " + plural(r.blocks, "block") +
				" " + (r.blocks === 1 ? "is " : "are ") + words(r.kind) +
				(r.indirect_bytes ? " (" + thousands(r.direct_bytes) + " direct, " +
					thousands(r.indirect_bytes) + " indirect)" : "") +
				(r.before_attach ? ", made before ptleak attached" +
					(r.type ? ", a " + r.type : "") :
					", allocated by " + r.allocator);
			// made before the attach: no stack, one pseudo-frame
			add(d, sm, r.before_attach ?
				stackList([{ pc: "", function: r.type || "[before attach]" }], null) :
				stackList(r.stack, r.allocator));
			s.appendChild(d);
		});
		if (recs.length > MAX_RECORDS)
			add(s, el("p", "note", (recs.length - MAX_RECORDS) +
				" more records are in the JSON report (ptleak-report in this file)."));
	}

	function descriptors() {
		var s = section("Descriptors left open", "fds");
		if (!R.fds) {
			add(s, el("p", "note", "Descriptors were not tracked."));
			return;
		}
		if (!R.fds.records.length)
			add(s, el("p", "note", "None."));
		R.fds.records.forEach(function (r) {
			var d = el("details", "fdrec"), sm = el("summary");
			d.open = true;
			sm.textContent = "fd " + r.fd + " (" + r.type + ") \u2192 " + r.target +
				", opened by " + r.opened_by;
			add(d, sm, stackList(r.stack, null));
			s.appendChild(d);
		});
	}

	// A top-down tree of live bytes: main at the root, allocators at the leaves.
	function tree(s, tops, title, id) {
		add(s, el("h3", null, title));
		if (!tops || !tops.length) {
			add(s, el("p", "note", "No snapshot in this report."));
			return;
		}
		var root = { kids: {}, order: [], bytes: 0 };
		tops.forEach(function (t) {
			var f = X.stacks[String(t.id)] || [], node = root;
			root.bytes += t.bytes;
			for (var i = f.length - 1; i >= 0; i--) {
				// one node per function (heaptrack's top-down tree)
				var key = (f[i].function || f[i].pc) + "|" + f[i].module;
				if (!node.kids[key]) {
					node.kids[key] = { f: f[i], kids: {}, order: [], bytes: 0,
						line: f[i].line };
					node.order.push(key);
				} else if (node.kids[key].line !== f[i].line) {
					node.kids[key].line = null;	// several lines
				}
				node = node.kids[key];
				node.bytes += t.bytes;
			}
		});
		var box = put(s, el("div", "tree"));
		box.id = id;
		function draw(parent, node, depth) {
			node.order.map(function (k) { return node.kids[k]; })
				.sort(function (a, b) { return b.bytes - a.bytes; })
				.forEach(function (kid) {
					var row = el("div", "node"), bar = el("span", "bar");
					bar.style.width = (8 * kid.bytes / root.bytes).toFixed(2) + "rem";
					var f = kid.f, lab = (f.function || "???") + (f.file ?
						" (" + f.file + (kid.line ? ":" + kid.line : "") + ")" : "");
					add(row, el("span", "bytes", human(kid.bytes)), bar,
						el("span", null, lab));
					if (kid.order.length) {
						var d = el("details"), sm = el("summary");
						d.open = depth < 6;
						add(d, add(sm, row));
						draw(d, kid, depth + 1);
						parent.appendChild(d);
					} else {
						row.style.marginLeft = "1rem";
						parent.appendChild(row);
					}
				});
		}
		draw(box, root, 0);
		add(s, el("p", "note", "The " + plural(tops.length, "stack") + " holding the most, " +
			bytes(root.bytes) + " in all."));
	}

	function trees() {
		var s = section("Stacks holding the most memory", "top");
		tree(s, X.peak ? X.peak.stacks : null, "At the peak" + (X.peak ?
			" (" + (X.peak.ms / 1000).toFixed(3) + " s)" : ""), "tree-peak");
		tree(s, X.top, "At this report", "tree-report");
	}

	// print: every closed part open, as a reader of paper cannot click
	var closed = [];
	window.addEventListener("beforeprint", function () {
		closed = Array.prototype.filter.call(document.querySelectorAll("details"),
			function (d) { return !d.open; });
		closed.forEach(function (d) { d.open = true; });
	});
	window.addEventListener("afterprint", function () {
		closed.forEach(function (d) { d.open = false; });
	});

	summary();
	charts();
	growth();
	records();
	descriptors();
	trees();
	if (document.documentElement.getAttribute("data-state") !== "error")
		document.documentElement.setAttribute("data-state", "rendered");
})();
