#!/usr/bin/env python3
"""report_html_check.py - what report_html.t asks of a page Chromium rendered.

  dom FILE              one line per plot in the DOM Chromium dumped:
                        "TEST SIZES OUT IN" (data-test, data-sizes, and the
                        points of each placement), then "verdict: TEXT"
  net FILE              the URLs the page asked for in the Chromium net
                        log (--log-net-log) that are neither file: nor
                        data:, one a line; exit status 1 when there is
                        one.  A page's request (URL_REQUEST_START_JOB)
                        carries its initiator's origin ("null" for a
                        file: page); the browser's own background requests
                        (update checks, the account list) carry "not an
                        origin" and are listed on stderr, not counted
Python standard library only.
"""
import html.parser
import json
import sys


class Dom(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.plots = []  # [test, sizes, {placement: n}]
        self.in_plot = 0
        self.verdict = None
        self.depth = 0
        self.scripts = 0

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        cls = (a.get("class") or "").split()
        if tag == "script":
            self.scripts += 1
        if tag == "svg" and "plot" in cls:
            self.plots.append([a.get("data-test"), a.get("data-sizes"), {}])
            self.in_plot = 1
        elif tag == "svg":
            self.in_plot = 0
        if self.in_plot and "pt" in cls:
            p = self.plots[-1][2]
            k = a.get("data-placement")
            p[k] = p.get(k, 0) + 1
        if tag in ("br", "img", "meta", "hr", "input", "link"):
            pass
        elif a.get("id") == "verdict":
            self.verdict = ""
            self.depth = 1
        elif self.verdict is not None and self.depth:
            self.depth += 1

    def handle_endtag(self, tag):
        if tag == "svg":
            self.in_plot = 0
        if self.verdict is not None and self.depth:
            self.depth -= 1

    def handle_data(self, data):
        if self.verdict is not None and self.depth:
            self.verdict += data + " "


def main():
    what, path = sys.argv[1], sys.argv[2]
    if what == "dom":
        d = Dom()
        d.feed(open(path, encoding="utf-8").read())
        for test, sizes, p in d.plots:
            print(test, sizes, p.get("out-of-place", 0), p.get("in-place", 0))
        print("scripts:", d.scripts)
        print("verdict:", " ".join((d.verdict or "").split()))
        return 0
    log = json.load(open(path))
    types = {v: k for k, v in log["constants"]["logEventTypes"].items()}
    bad, own = set(), set()
    for e in log.get("events", []):
        p = e.get("params") or {}
        u = p.get("url")
        if types.get(e.get("type")) != "URL_REQUEST_START_JOB" or \
                not isinstance(u, str) or u.startswith(("file:", "data:")):
            continue
        (own if p.get("initiator") == "not an origin" else bad).add(u)
    for u in sorted(own):
        print("the browser's own:", u.split("?")[0], file=sys.stderr)
    for u in sorted(bad):
        print(u)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
