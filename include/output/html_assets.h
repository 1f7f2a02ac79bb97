/*
 * html_assets.h - the HTML report's style and script (src/html/report.css,
 * src/html/report.js), made C strings by src/html/embed.awk at build time.
 */
#ifndef PTLEAK_HTML_ASSETS_H
#define PTLEAK_HTML_ASSETS_H

extern const char html_css[];
extern const char html_js[];

#endif
