# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The guides of the docs site: README.md, docs/*.md, the roles' README.md and tests/kube/README.md copied into the
Sphinx source that antsibull-docs wrote (as MyST Markdown pages under guides/), each link to another of them made a
link between the site's pages, a code block that names no language marked as text, and a "Guides" table of contents
put into the collection's index page.

A link to a file of the repository that the site does not carry fails the build, naming it: every link of the site
works (tests/docs/check_site.py checks the built pages again).

    python3 tests/docs/guides.py REPO_ROOT RST_DIR
"""

from __future__ import annotations

import os
import re
import sys

# the link of a Markdown page: [text](target), the target without white space
LINK = re.compile(r'(\]\()([^)\s]+)(\))')
# the empty table of contents antsibull-docs leaves in the collection's index (for extra docs)
EMPTY_TOC = '\n.. toctree::\n    :maxdepth: 1\n\n'


def pages(root):
    """{repository path: site page (under guides/, without .md)} of every guide, in the order of the index."""
    found = {'README.md': 'overview'}
    for name in sorted(os.listdir(os.path.join(root, 'docs'))):
        if name.endswith('.md'):
            found['docs/' + name] = name[:-3]
    for role in sorted(os.listdir(os.path.join(root, 'roles'))):
        if os.path.isfile(os.path.join(root, 'roles', role, 'README.md')):
            found['roles/%s/README.md' % role] = 'role-' + role
    found['tests/kube/README.md'] = 'test-doubles'
    return found


def rewrite(text, source, site, problems):
    """``text`` (the Markdown of repository file ``source``) with every relative link pointing at the site's page."""
    def one(match):
        target = match.group(2)
        if re.match(r'^[a-z][a-z0-9+.-]*:', target) or target.startswith('#'):
            return match.group(0)  # another site (https:, mailto:), or a heading of this page
        path, sep, anchor = target.partition('#')
        repo_path = os.path.normpath(os.path.join(os.path.dirname(source), path))
        if repo_path not in site:
            problems.append('%s links to %s, which the docs site does not carry: link a guide, or add the file to '
                            'tests/docs/guides.py' % (source, target))
            return match.group(0)
        return '%s%s.md%s%s%s' % (match.group(1), site[repo_path], sep, anchor, match.group(3))
    return LINK.sub(one, text)


def fences(text):
    """``text`` with each code block that names no language marked as plain text (Sphinx would lex it as YAML)."""
    lines, inside = [], False
    for line in text.split('\n'):
        if line.strip().startswith('```'):
            if not inside and line.strip() == '```':
                line = line.replace('```', '```text', 1)
            inside = not inside
        lines.append(line)
    return '\n'.join(lines)


def main(root, rst):
    site = pages(root)
    problems = []
    os.makedirs(os.path.join(rst, 'guides'), exist_ok=True)
    for source, page in site.items():
        with open(os.path.join(root, source), encoding='utf-8') as f:
            text = fences(rewrite(f.read(), source, site, problems))
        with open(os.path.join(rst, 'guides', page + '.md'), 'w', encoding='utf-8') as f:
            f.write(text)
    index = os.path.join(rst, 'index.rst')
    with open(index, encoding='utf-8') as f:
        text = f.read()
    if EMPTY_TOC not in text:
        problems.append('%s has no empty table of contents to put the guides into (did antsibull-docs change its '
                        'index page?)' % index)
    toc = '\n.. toctree::\n    :maxdepth: 1\n    :caption: Guides\n\n%s\n' % ''.join(
        '    guides/%s\n' % page for page in site.values())
    with open(index, 'w', encoding='utf-8') as f:
        f.write(text.replace(EMPTY_TOC, toc, 1))
    for problem in problems:
        print(problem, file=sys.stderr)
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main(*sys.argv[1:3]))
