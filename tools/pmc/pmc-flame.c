// SPDX-License-Identifier: GPL-2.0
/*
 * Flame graphs for pmc-report; see pmc-flame.h.
 *
 * A frame is a <g class="f"> of a <title> (the hover text, which also
 * gives the script the frame's name), a <rect> and a <text> label; its
 * first sample and its number of samples, counted from the left edge
 * of the graph, are in data-s and data-n, from which the script places
 * frames when it zooms. The file as written is the whole graph, so it
 * shows where no script runs too (rsvg-convert, image viewers).
 *
 * Names come from the recorded files and the command's own comm, so
 * anything but printable ASCII is replaced before it reaches the XML.
 */
#include <inttypes.h>
#include <stdint.h>
#include <string.h>

#include "pmc-flame.h"

#define WIDTH		1200		/* of the image, px */
#define PAD		10		/* left and right of the frames */
#define FRAME_HEIGHT	16		/* a row of frames, with a 1 px gap */
#define FONT_SIZE	12
/* Verdana's mean character width, roughly: labels are cut to fit it. */
#define CHAR_WIDTH	(0.59 * FONT_SIZE)
#define HEAD		60		/* title, subtitle and buttons */
#define FOOT		30		/* the line that details a frame */
/* Narrower frames are not drawn, nor what they called. */
#define MIN_WIDTH	0.1

struct flame {
	FILE *out;
	double scale;			/* px per sample */
	__u64 total;			/* samples under the root */
	int height;			/* of the image */
};

static double frame_width(const struct flame *fl, const struct call_node *node)
{
	return node->total * fl->scale;
}

/* How many rows of frames are drawn above @node's. */
static int rows_above(const struct flame *fl, const struct call_node *node)
{
	const struct call_node *child;
	int rows = 0;

	for (child = node->children; child; child = child->next) {
		int above;

		if (frame_width(fl, child) < MIN_WIDTH)
			continue;
		above = 1 + rows_above(fl, child);
		if (above > rows)
			rows = above;
	}
	return rows;
}

/* The first @len bytes of @s as XML character data. */
static void put_text(FILE *out, const char *s, size_t len)
{
	size_t i;

	for (i = 0; i < len && s[i]; i++) {
		unsigned char c = s[i];

		if (c == '&')
			fputs("&amp;", out);
		else if (c == '<')
			fputs("&lt;", out);
		else if (c == '>')
			fputs("&gt;", out);
		else if (c == '"')
			fputs("&quot;", out);
		else
			fputc(c < 0x20 || c > 0x7e ? '?' : c, out);
	}
}

/* @name cut to fit @width px, as the script's label() cuts it. */
static void put_label(FILE *out, const char *name, double width)
{
	double room = (width - 6) / CHAR_WIDTH;
	size_t fit = room > 0 ? (size_t)room : 0;
	size_t len = strlen(name);

	if (fit < 3)
		return;
	if (len <= fit) {
		put_text(out, name, len);
	} else {
		put_text(out, name, fit - 2);
		fputs("..", out);
	}
}

/*
 * The same colour for the same frame in every graph: warm hues for
 * user code, cool ones for the kernel, picked by a hash of the name.
 */
static void frame_colour(const struct call_frame *frame, int rgb[3])
{
	uint32_t h = 0x811c9dc5;		/* FNV-1a */
	const char *p;
	double a, b, c;

	for (p = frame->name; *p; p++)
		h = (h ^ (unsigned char)*p) * 0x01000193;
	a = (h & 0xff) / 255.0;
	b = ((h >> 8) & 0xff) / 255.0;
	c = ((h >> 16) & 0xff) / 255.0;
	if (frame->kernel) {
		rgb[0] = 70 + 50 * a;
		rgb[1] = 150 + 60 * b;
		rgb[2] = 200 + 55 * c;
	} else {
		rgb[0] = 215 + 40 * a;
		rgb[1] = 70 + 140 * b;
		rgb[2] = 30 + 40 * c;
	}
}

static void put_frame(const struct flame *fl, const struct call_node *node,
		      int depth, __u64 start)
{
	static const struct call_frame all = { .name = "all" };
	const struct call_frame *frame = depth ? &node->frame : &all;
	double x = PAD + start * fl->scale, width = frame_width(fl, node);
	int y = fl->height - FOOT - (depth + 1) * FRAME_HEIGHT;
	int rgb[3] = { 200, 200, 200 };	/* the root: grey */

	if (depth)
		frame_colour(frame, rgb);
	fprintf(fl->out, "<g class=\"f\" data-s=\"%" PRIu64 "\" data-n=\"%" PRIu64 "\"><title>",
		(uint64_t)start, (uint64_t)node->total);
	put_text(fl->out, frame->name, strlen(frame->name));
	fprintf(fl->out, " (%" PRIu64 " sample%s, %.2f%%)</title>",
		(uint64_t)node->total, node->total == 1 ? "" : "s",
		100.0 * node->total / fl->total);
	fprintf(fl->out, "<rect x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"%d\" rx=\"2\" fill=\"rgb(%d,%d,%d)\"/>",
		x, y, width, FRAME_HEIGHT - 1, rgb[0], rgb[1], rgb[2]);
	fprintf(fl->out, "<text x=\"%.2f\" y=\"%d\">", x + 3, y + 11);
	put_label(fl->out, frame->name, width);
	fputs("</text></g>\n", fl->out);
}

/* @node at @depth (the root's is 0), its first sample at @start. */
static void draw(const struct flame *fl, const struct call_node *node,
		 int depth, __u64 start)
{
	const struct call_node *child;

	put_frame(fl, node, depth, start);
	for (child = node->children; child; child = child->next) {
		if (frame_width(fl, child) >= MIN_WIDTH)
			draw(fl, child, depth + 1, start);
		start += child->total;
	}
}

static const char style[] =
	"<defs><linearGradient id=\"bg\" x1=\"0\" y1=\"0\" x2=\"0\" y2=\"1\">"
	"<stop offset=\"5%\" stop-color=\"#f4f4f4\"/>"
	"<stop offset=\"95%\" stop-color=\"#f0ecd4\"/>"
	"</linearGradient></defs>\n"
	"<style>\n"
	"text { font-family: Verdana, sans-serif; font-size: 12px; fill: #000; }\n"
	"#title { font-size: 17px; text-anchor: middle; }\n"
	"#subtitle { fill: #555; text-anchor: middle; }\n"
	".button { cursor: pointer; fill: #225; }\n"
	".button:hover { text-decoration: underline; }\n"
	".hidden { display: none; }\n"
	"g.f { cursor: pointer; }\n"
	"g.f text { pointer-events: none; }\n"
	"g.f:hover rect { stroke: #000; stroke-width: 0.5; }\n"
	"g.f.parent { opacity: 0.5; }\n"
	"</style>\n";

/*
 * Zoom: a click on a frame widens it to the full width, with what it
 * called scaled along; what called it stays at full width, dimmed, and
 * everything else is hidden. Search: frames whose names match a regular
 * expression turn magenta, and the share of samples under them shows,
 * counted once where matches nest.
 */
static const char script[] =
	"(function () {\n"
	"	\"use strict\";\n"
	"	var HIGHLIGHT = \"rgb(230,0,230)\";\n"
	"	var frames = [], root = null, zoomed = null, search = null;\n"
	"	var details = document.getElementById(\"details\");\n"
	"	var matched = document.getElementById(\"matched\");\n"
	"	var unzoomButton = document.getElementById(\"unzoom\");\n"
	"	var searchButton = document.getElementById(\"search\");\n"
	"\n"
	"	function label(name, width) {\n"
	"		var fit = Math.floor((width - 6) / CHAR_WIDTH);\n"
	"\n"
	"		if (fit < 3)\n"
	"			return \"\";\n"
	"		return name.length <= fit ? name :\n"
	"			name.substring(0, fit - 2) + \"..\";\n"
	"	}\n"
	"\n"
	"	var nodes = document.querySelectorAll(\"g.f\");\n"
	"\n"
	"	Array.prototype.forEach.call(nodes, function (g) {\n"
	"		var rect = g.querySelector(\"rect\");\n"
	"		var title = g.querySelector(\"title\").textContent;\n"
	"		var f = {\n"
	"			g: g, rect: rect, text: g.querySelector(\"text\"),\n"
	"			start: +g.getAttribute(\"data-s\"),\n"
	"			samples: +g.getAttribute(\"data-n\"),\n"
	"			y: +rect.getAttribute(\"y\"),\n"
	"			fill: rect.getAttribute(\"fill\"),\n"
	"			title: title,\n"
	"			name: title.replace(/ \\(\\d+ samples?, [0-9.]+%\\)$/, \"\")\n"
	"		};\n"
	"\n"
	"		g.frame = f;\n"
	"		frames.push(f);\n"
	"		if (!root || f.y > root.y)\n"
	"			root = f;\n"
	"	});\n"
	"\n"
	"	function place(f, x, width) {\n"
	"		f.rect.setAttribute(\"x\", x.toFixed(2));\n"
	"		f.rect.setAttribute(\"width\", width.toFixed(2));\n"
	"		f.text.setAttribute(\"x\", (x + 3).toFixed(2));\n"
	"		f.text.textContent = label(f.name, width);\n"
	"		f.g.classList.remove(\"hidden\");\n"
	"	}\n"
	"\n"
	"	function zoom(z) {\n"
	"		var scale = FULL_WIDTH / z.samples, zend = z.start + z.samples;\n"
	"\n"
	"		zoomed = z === root ? null : z;\n"
	"		frames.forEach(function (f) {\n"
	"			var end = f.start + f.samples;\n"
	"\n"
	"			f.g.classList.remove(\"parent\");\n"
	"			if (f.y > z.y && f.start <= z.start && end >= zend) {\n"
	"				place(f, PAD, FULL_WIDTH);\n"
	"				f.g.classList.add(\"parent\");\n"
	"			} else if (f.y <= z.y && f.start >= z.start && end <= zend) {\n"
	"				place(f, PAD + (f.start - z.start) * scale,\n"
	"				      f.samples * scale);\n"
	"			} else {\n"
	"				f.g.classList.add(\"hidden\");\n"
	"			}\n"
	"		});\n"
	"		unzoomButton.classList.toggle(\"hidden\", !zoomed);\n"
	"	}\n"
	"\n"
	"	function clearSearch() {\n"
	"		frames.forEach(function (f) {\n"
	"			f.rect.setAttribute(\"fill\", f.fill);\n"
	"		});\n"
	"		search = null;\n"
	"		searchButton.textContent = \"Search\";\n"
	"		matched.textContent = \" \";\n"
	"	}\n"
	"\n"
	"	function startSearch() {\n"
	"		var term = prompt(\"Frames to find (a regular expression):\");\n"
	"		var re, hits = [], sum = 0, end = -1;\n"
	"\n"
	"		if (term === null || term === \"\")\n"
	"			return;\n"
	"		clearSearch();\n"
	"		try {\n"
	"			re = new RegExp(term);\n"
	"		} catch (err) {\n"
	"			matched.textContent = err.message;\n"
	"			return;\n"
	"		}\n"
	"		frames.forEach(function (f) {\n"
	"			if (f !== root && re.test(f.name)) {\n"
	"				f.rect.setAttribute(\"fill\", HIGHLIGHT);\n"
	"				hits.push(f);\n"
	"			}\n"
	"		});\n"
	"		/* Outer frames first: a match inside a counted one is skipped. */\n"
	"		hits.sort(function (a, b) {\n"
	"			return a.start - b.start || b.samples - a.samples;\n"
	"		});\n"
	"		hits.forEach(function (f) {\n"
	"			if (f.start >= end) {\n"
	"				sum += f.samples;\n"
	"				end = f.start + f.samples;\n"
	"			}\n"
	"		});\n"
	"		search = term;\n"
	"		searchButton.textContent = \"Reset Search\";\n"
	"		matched.textContent = \"Matched: \" + (100 * sum / TOTAL).toFixed(2) +\n"
	"			\"% (\" + sum + \" of \" + TOTAL + \" samples)\";\n"
	"	}\n"
	"\n"
	"	function frameOf(e) {\n"
	"		var g = e.target.closest ? e.target.closest(\"g.f\") : null;\n"
	"\n"
	"		return g ? g.frame : null;\n"
	"	}\n"
	"\n"
	"	document.addEventListener(\"mouseover\", function (e) {\n"
	"		var f = frameOf(e);\n"
	"\n"
	"		if (f)\n"
	"			details.textContent = f.title;\n"
	"	});\n"
	"	document.addEventListener(\"mouseout\", function (e) {\n"
	"		if (frameOf(e))\n"
	"			details.textContent = \" \";\n"
	"	});\n"
	"	document.addEventListener(\"click\", function (e) {\n"
	"		var f = frameOf(e);\n"
	"\n"
	"		if (f)\n"
	"			zoom(f);\n"
	"		else if (e.target === unzoomButton)\n"
	"			zoom(root);\n"
	"		else if (e.target === searchButton && search !== null)\n"
	"			clearSearch();\n"
	"		else if (e.target === searchButton)\n"
	"			startSearch();\n"
	"	});\n"
	"	document.addEventListener(\"keydown\", function (e) {\n"
	"		if ((e.ctrlKey || e.metaKey) && e.key === \"f\") {\n"
	"			e.preventDefault();\n"
	"			startSearch();\n"
	"		} else if (e.key === \"Escape\") {\n"
	"			clearSearch();\n"
	"			if (zoomed)\n"
	"				zoom(root);\n"
	"		}\n"
	"	});\n"
	"})();\n";

static void put_head(const struct flame *fl, const char *title,
		     const char *subtitle)
{
	FILE *out = fl->out;

	fprintf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
		"<svg version=\"1.1\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\">\n",
		WIDTH, fl->height, WIDTH, fl->height);
	fputs(style, out);
	fputs("<rect x=\"0\" y=\"0\" width=\"100%\" height=\"100%\" fill=\"url(#bg)\"/>\n",
	      out);
	fprintf(out, "<text id=\"title\" x=\"%d\" y=\"24\">", WIDTH / 2);
	put_text(out, title, strlen(title));
	fprintf(out, "</text>\n<text id=\"subtitle\" x=\"%d\" y=\"44\">",
		WIDTH / 2);
	put_text(out, subtitle, strlen(subtitle));
	fputs("</text>\n", out);
	fprintf(out, "<text id=\"unzoom\" class=\"button hidden\" x=\"%d\" y=\"24\">Reset Zoom</text>\n",
		PAD);
	fprintf(out, "<text id=\"search\" class=\"button\" x=\"%d\" y=\"24\" text-anchor=\"end\">Search</text>\n",
		WIDTH - PAD);
	fprintf(out, "<text id=\"details\" x=\"%d\" y=\"%d\"> </text>\n",
		PAD, fl->height - 10);
	fprintf(out, "<text id=\"matched\" x=\"%d\" y=\"%d\" text-anchor=\"end\"> </text>\n",
		WIDTH - PAD, fl->height - 10);
}

static void put_script(const struct flame *fl)
{
	fprintf(fl->out, "<script type=\"text/ecmascript\"><![CDATA[\n"
		"var PAD = %d, FULL_WIDTH = %d, CHAR_WIDTH = %.2f, TOTAL = %" PRIu64 ";\n",
		PAD, WIDTH - 2 * PAD, CHAR_WIDTH, (uint64_t)fl->total);
	fputs(script, fl->out);
	fputs("]]></script>\n", fl->out);
}

bool flame_write(FILE *out, const struct call_node *root, const char *title,
		 const char *subtitle)
{
	struct flame fl = {
		.out = out,
		.total = root->total,
		.scale = root->total ? (WIDTH - 2.0 * PAD) / root->total : 0,
	};

	fl.height = HEAD + (rows_above(&fl, root) + 1) * FRAME_HEIGHT + FOOT;
	put_head(&fl, title, subtitle);
	if (root->total) {
		fputs("<g id=\"frames\">\n", out);
		draw(&fl, root, 0, 0);
		fputs("</g>\n", out);
		put_script(&fl);
	}
	fputs("</svg>\n", out);
	return !ferror(out);
}
