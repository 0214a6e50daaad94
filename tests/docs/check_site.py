# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Check the built docs site (tests/docs/site.sh):

* every link of every page that stays on the site leads to a page that exists, and to a heading (or any element
  with that id) that exists on it; the stylesheets, scripts and images the pages load exist;
* headless Chromium (Debian's ``chromium``) loads the index, a module's page and a role's page, as a reader's
  browser renders them: each has its title, the index lists the guides and the modules, the module's and the role's
  pages hold their option tables with the options of the module's and the role's own specs; a screenshot of each is
  kept beside the site.

    python3 tests/docs/check_site.py SITE_DIR --screenshots DIR
"""

from __future__ import annotations

import argparse
import html
import html.parser
import os
import subprocess
import sys
import tempfile
from urllib.parse import unquote, urlsplit

CHROMIUM_TIMEOUT = 120  # seconds for one page


class Page(html.parser.HTMLParser):
    """The ids and the links of one HTML page."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.ids, self.links = set(), []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        for key in ('id', 'name') if tag == 'a' else ('id',):
            if attrs.get(key):
                self.ids.add(attrs[key])
        for key in ('href', 'src'):
            if attrs.get(key) and (tag, key) in (('a', 'href'), ('link', 'href'), ('script', 'src'), ('img', 'src')):
                self.links.append((tag, attrs[key]))


def read_pages(site):
    pages = {}
    for directory, dummy, files in os.walk(site):
        for name in files:
            if name.endswith('.html'):
                path = os.path.join(directory, name)
                page = Page()
                with open(path, encoding='utf-8') as f:
                    page.feed(f.read())
                pages[os.path.normpath(path)] = page
    return pages


def broken_links(site):
    """Every link of the site to a page, a heading or a file that is not there, as 'page: link (why)'."""
    pages = read_pages(site)
    broken = []
    for path, page in sorted(pages.items()):
        for tag, link in page.links:
            parts = urlsplit(link)
            if parts.scheme or parts.netloc:
                continue  # another site: not this test's to reach (there is no network here)
            if parts.path.startswith('/'):  # the theme's home link: the site is served at the root of its host
                target = os.path.normpath(os.path.join(site, unquote(parts.path).lstrip('/')))
            elif parts.path:
                target = os.path.normpath(os.path.join(os.path.dirname(path), unquote(parts.path)))
            else:
                target = path
            where = '%s: %s' % (os.path.relpath(path, site), link)
            if os.path.isdir(target):
                target = os.path.join(target, 'index.html')
            if not os.path.isfile(target):
                broken.append('%s (no file %s)' % (where, os.path.relpath(target, site)))
            elif parts.fragment and tag == 'a' and target.endswith('.html'):
                if unquote(parts.fragment) not in pages[target].ids:
                    broken.append('%s (no id "%s" on %s)' % (where, unquote(parts.fragment), os.path.relpath(target, site)))
    return broken, len(pages), sum(len(p.links) for p in pages.values())


def chromium(args, profile):
    argv = ['chromium', '--headless', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--no-first-run',
            '--user-data-dir=' + profile, '--window-size=1280,1600'] + args
    done = subprocess.run(argv, capture_output=True, text=True, timeout=CHROMIUM_TIMEOUT, check=False)
    if done.returncode != 0:
        raise SystemExit('chromium failed (%d): %s' % (done.returncode, done.stderr[-2000:]))
    return done.stdout


# page: (its title, what the rendered page must show)
PAGES = {
    'index.html': ('Baremetal.K3S', ['guides/overview.html', 'guides/fleet.html', 'k3s_files_module.html',
                                     'scheduler_extender_role.html', 'Guides']),
    'k3s_files_module.html': ('baremetal.k3s.k3s_files module', ['ansible-option-table', 'token_file', 'config_file',
                                                                 'registries', 'service', 'Return Values']),
    'k3s_server_role.html': ('baremetal.k3s.k3s_server role', ['ansible-option-table', 'k3s_server_token',
                                                               'k3s_server_config', 'Entry point']),
}


def rendered(site, shots):
    """The pages of PAGES as Chromium renders them; the problems found."""
    problems = []
    with tempfile.TemporaryDirectory() as profile:
        for name, (title, wanted) in PAGES.items():
            url = 'file://' + os.path.abspath(os.path.join(site, name))
            dom = chromium(['--dump-dom', url], profile)
            shown = html.unescape(dom)
            if '<title>' not in dom or title not in shown.split('<title>', 1)[1].split('</title>', 1)[0]:
                problems.append('%s: the title is not %r' % (name, title))
            problems.extend('%s: %r is not on the rendered page' % (name, w) for w in wanted if w not in shown)
            shot = os.path.join(shots, name.replace('.html', '.png'))
            chromium(['--screenshot=' + shot, url], profile)
            if not os.path.isfile(shot) or os.path.getsize(shot) < 10000:
                problems.append('%s: no screenshot (or an empty one) at %s' % (name, shot))
            else:
                print('rendered %s (%d bytes of DOM), screenshot %s' % (name, len(dom), shot))
    return problems


def main():
    p = argparse.ArgumentParser(description=__doc__.split('\n\n', maxsplit=1)[0])
    p.add_argument('site')
    p.add_argument('--screenshots', required=True)
    args = p.parse_args()
    broken, count, links = broken_links(args.site)
    for b in broken:
        print('broken link: ' + b, file=sys.stderr)
    print('%d pages, %d links and loads: %d broken' % (count, links, len(broken)))
    problems = rendered(args.site, args.screenshots)
    for problem in problems:
        print(problem, file=sys.stderr)
    return 1 if broken or problems else 0


if __name__ == '__main__':
    sys.exit(main())
