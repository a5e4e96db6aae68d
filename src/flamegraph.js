/*
 * SPDX-License-Identifier: GPL-2.0-or-later
 * flamegraph.js: the script inside every SVG of --format flamegraph.
 *
 * The SVG draws the whole graph by itself; this script only makes it
 * interactive: click a frame to zoom to it, click the root (or "Reset
 * zoom", or press Escape) to zoom out, "Search" (or Ctrl-F) to highlight
 * the frames whose name matches a regular expression with the share of
 * the time they hold, and a line at the bottom that describes the frame
 * under the pointer.  Each frame is a <g class="f"> whose data-o, data-n
 * and data-d attributes hold its offset from the root's left edge and its
 * time, both in nanoseconds, and its depth; its <title> holds its name on
 * the first line.  Opened with #selftest at the end of its URL, it checks
 * itself and writes the result into the element #selftest.
 */
"use strict";
var fg = { errors: 0, frames: [], root: null, zoomed: null, matched: null };

window.addEventListener("error", function () { fg.errors++; });

function fg_attr(el, name) { return parseFloat(el.getAttribute(name)); }

function fg_name(f) {
	var t = f.el.getElementsByTagName("title")[0].textContent;
	var nl = t.indexOf("\n");
	return nl < 0 ? t : t.substring(0, nl);
}

function fg_human(ns) {
	var units = [[1e9, "s"], [1e6, "ms"], [1e3, "us"]];
	for (var i = 0; i < units.length; i++)
		if (ns >= units[i][0])
			return (ns / units[i][0]).toPrecision(4) + units[i][1];
	return Math.round(ns) + "ns";
}

function fg_pct(part, whole) {
	return whole > 0 ? (100 * part / whole).toFixed(2) + "%" : "0%";
}

/* A label cut to what fits in w pixels, ".." marking the cut. */
function fg_label(f, w) {
	var room = Math.floor((w - 6) / fg.charw);
	var name = f.name;
	if (room < 3)
		return "";
	return name.length <= room ? name : name.substring(0, room - 2) + "..";
}

function fg_place(f, x, w, shown, faded) {
	f.el.style.display = shown ? "" : "none";
	if (!shown)
		return;
	f.rect.setAttribute("x", x.toFixed(2));
	f.rect.setAttribute("width", w.toFixed(2));
	f.text.setAttribute("x", (x + 3).toFixed(2));
	f.text.textContent = fg_label(f, w);
	f.el.classList.toggle("faded", faded);
}

/* Zoom to frame z: it and its callees fill the width, its callers stay as bars. */
function fg_zoom(z) {
	var zo = z.o, zn = z.n > 0 ? z.n : 1;
	for (var i = 0; i < fg.frames.length; i++) {
		var f = fg.frames[i];
		if (f.d < z.d) {
			var caller = f.o <= zo && f.o + f.n >= zo + z.n;
			fg_place(f, fg.pad, fg.width, caller, true);
		} else if (f.o >= zo && f.o + f.n <= zo + z.n && (f.d > z.d || f === z)) {
			var w = f.n / zn * fg.width;
			fg_place(f, fg.pad + (f.o - zo) / zn * fg.width, w, w >= 0.1, false);
		} else {
			fg_place(f, 0, 0, false, false);
		}
	}
	fg.zoomed = z;
	document.getElementById("reset").classList.toggle("hidden", z === fg.root);
}

function fg_details(text) {
	document.getElementById("details").textContent = text;
}

function fg_describe(f) {
	return f.title.replace(/\n/g, "  ");
}

/* Highlight the frames matching re; the matched share counts nested matches once. */
function fg_search(re) {
	var spans = [], total = fg.root.n, sum = 0, end = -1;
	fg_clear_search();
	for (var i = 0; i < fg.frames.length; i++) {
		var f = fg.frames[i];
		if (f === fg.root || !re.test(f.name))
			continue;
		f.rect.classList.add("match");
		spans.push([f.o, f.o + f.n]);
	}
	spans.sort(function (a, b) { return a[0] - b[0]; });
	for (var j = 0; j < spans.length; j++) {
		var s = Math.max(spans[j][0], end);
		if (spans[j][1] > s)
			sum += spans[j][1] - s;
		end = Math.max(end, spans[j][1]);
	}
	fg.matched = spans.length ? sum / (total > 0 ? total : 1) : null;
	var m = document.getElementById("matched");
	m.textContent = spans.length ? "Matched: " + fg_pct(sum, total) : "No match";
	m.classList.remove("hidden");
	document.getElementById("unsearch").classList.remove("hidden");
	return fg.matched;
}

function fg_clear_search() {
	var hits = document.querySelectorAll("rect.match");
	for (var i = 0; i < hits.length; i++)
		hits[i].classList.remove("match");
	document.getElementById("matched").classList.add("hidden");
	document.getElementById("unsearch").classList.add("hidden");
	fg.matched = null;
}

function fg_ask_search() {
	var pattern = window.prompt("Search frames (regular expression):", "");
	if (pattern === null || pattern === "")
		return;
	try {
		fg_search(new RegExp(pattern));
	} catch (e) {
		fg_details("Not a regular expression: " + pattern);
	}
}

function fg_selftest() {
	var out = document.getElementById("selftest"), problems = [];
	var rw = fg_attr(fg.root.rect, "width");
	if (Math.abs(rw - fg.width) > 0.5)
		problems.push("root width " + rw + " of " + fg.width);
	/* The widest frame below the root, clicked as a user would. */
	var pick = null;
	for (var i = 0; i < fg.frames.length; i++) {
		var f = fg.frames[i];
		if (f.d === 1 && (!pick || f.n > pick.n))
			pick = f;
	}
	var zw = -1;
	if (pick) {
		pick.el.dispatchEvent(new MouseEvent("click", { bubbles: true }));
		zw = fg_attr(pick.rect, "width");
		if (fg.zoomed !== pick || Math.abs(zw - fg.width) > 0.5)
			problems.push("zoomed width " + zw + " of " + fg.width);
		if (fg_search(new RegExp("^" + pick.name.replace(/[.*+?^${}()|[\]\\]/g, "\\$&") + "$")) === null)
			problems.push("search found nothing");
		fg_clear_search();
		document.getElementById("reset").dispatchEvent(new MouseEvent("click", { bubbles: true }));
		if (fg.zoomed !== fg.root)
			problems.push("reset did not unzoom");
	}
	if (fg.errors)
		problems.push(fg.errors + " script errors");
	out.textContent = "selftest: " + (problems.length ? "FAIL " + problems.join("; ") : "ok") +
		" frames=" + fg.frames.length + " width=" + fg.width + " root=" + rw +
		" zoomed=" + zw + " picked=" + (pick ? pick.name : "none") + " errors=" + fg.errors;
	out.classList.remove("hidden");
}

function fg_init() {
	var svg = document.documentElement;
	fg.pad = fg_attr(svg, "data-pad");
	fg.width = fg_attr(svg, "data-frames-width");
	fg.charw = fg_attr(svg, "data-char-width");
	var els = document.querySelectorAll("g.f");
	for (var i = 0; i < els.length; i++) {
		var el = els[i];
		var f = {
			el: el, o: fg_attr(el, "data-o"), n: fg_attr(el, "data-n"),
			d: fg_attr(el, "data-d"), rect: el.getElementsByTagName("rect")[0],
			text: el.getElementsByTagName("text")[0]
		};
		f.title = el.getElementsByTagName("title")[0].textContent;
		f.name = fg_name(f);
		el.fg = f;
		fg.frames.push(f);
		if (f.d === 0)
			fg.root = f;
	}
	if (!fg.root)
		return;
	svg.addEventListener("click", function (e) {
		var g = e.target.closest ? e.target.closest("g.f") : null;
		if (g && g.fg)
			fg_zoom(g.fg.el === fg.root.el ? fg.root : g.fg);
	});
	svg.addEventListener("mouseover", function (e) {
		var g = e.target.closest ? e.target.closest("g.f") : null;
		if (g && g.fg)
			fg_details(fg_describe(g.fg));
	});
	svg.addEventListener("mouseout", function () { fg_details(" "); });
	document.getElementById("reset").addEventListener("click", function () { fg_zoom(fg.root); });
	document.getElementById("search").addEventListener("click", fg_ask_search);
	document.getElementById("unsearch").addEventListener("click", fg_clear_search);
	window.addEventListener("keydown", function (e) {
		if (e.key === "Escape") {
			fg_zoom(fg.root);
			fg_clear_search();
		} else if ((e.ctrlKey || e.metaKey) && e.key === "f") {
			e.preventDefault();
			fg_ask_search();
		}
	});
	fg_zoom(fg.root);
	if (window.location.hash === "#selftest")
		fg_selftest();
}

window.addEventListener("load", fg_init);
