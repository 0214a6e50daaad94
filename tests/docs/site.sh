#!/usr/bin/env bash
# The collection's docs site, built as docs.ansible.com builds a collection's (antsibull-docs sphinx-init's layout
# and the Ansible theme): antsibull-docs renders the modules', plugins' and roles' own docs, the guides are added as
# Markdown pages (tests/docs/guides.py), and Sphinx builds it with warnings as errors. Then
# tests/docs/check_site.py checks every link of the built pages and opens the index, a module's page and a role's
# page in headless Chromium (Debian's chromium), a screenshot of each kept beside the site.
#   bash tests/run.sh docs      (or this file)  -> tests/output/docs/html/index.html, tests/output/docs/*.png
# DOCS_OUT=<dir> writes elsewhere. Does its own set-up on a Debian 12 machine as root, like tests/run.sh.
set -euo pipefail
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
cd "$BK3S_ROOT"

out=${DOCS_OUT:-$BK3S_ROOT/tests/output/docs}
bk3s_venv
if ! "$VENV/bin/python" -c 'import myst_parser, sphinx_ansible_theme' 2>/dev/null; then
  bk3s_log "installing the docs site's Sphinx parts into $VENV"
  "$VENV/bin/pip" install -q --disable-pip-version-check -r tests/docs/requirements.txt
fi
bk3s_apt chromium

site=$(mktemp -d "${TMPDIR:-/tmp}/bk3s-docs.XXXXXX")
trap 'rm -rf "$site"' EXIT
farm=$(bk3s_collections_path)
export ANSIBLE_COLLECTIONS_PATH=$farm PATH="$VENV/bin:$PATH"

# the layout (conf.py, antsibull-docs.cfg); its build.sh is not used: it would clean the guides away
antsibull-docs sphinx-init --use-current --squash-hierarchy --dest-dir "$site" \
  --project baremetal.k3s --title baremetal.k3s --copyright 'baremetal.k3s contributors' baremetal.k3s >/dev/null
# MyST for the guides, their headings linkable as GitHub makes them; docs.ansible.com's pages that the collection's
# docs name from an inventory of them made here (there is no network to fetch that site's own)
"$VENV/bin/python" tests/docs/inventory.py "$site/ansible_devel.inv"
cat >>"$site/conf.py" <<'EOF'

extensions.append('myst_parser')
source_suffix = {'.rst': 'restructuredtext', '.md': 'markdown'}
myst_heading_anchors = 4
intersphinx_mapping = {'ansible_devel': ('https://docs.ansible.com/projects/ansible/devel/', '../ansible_devel.inv')}
EOF

mkdir -p "$site/rst" && chmod og-w "$site/rst"  # antsibull-docs wants the directory writable by itself alone
(cd "$site" && antsibull-docs --config-file antsibull-docs.cfg collection --cleanup everything --use-current \
  --squash-hierarchy --fail-on-error --dest-dir rst baremetal.k3s)
"$VENV/bin/python" tests/docs/guides.py "$BK3S_ROOT" "$site/rst"
(cd "$site" && sphinx-build -M html rst build -c . -W --keep-going -q)

rm -rf "$out" && mkdir -p "$out" && cp -r "$site/build/html" "$out/html"
"$VENV/bin/python" tests/docs/check_site.py "$out/html" --screenshots "$out"
echo "docs site: $out/html/index.html"
