"""Sphinx settings for the portal's docs: MyST Markdown pages, built by bin/lint with warnings as errors
(`sphinx-build -n -W --keep-going`), so a broken cross-reference or a page outside the toctree fails."""

project = "Benchmark-evidence portal"
author = "the portal's maintainers"
extensions = ["myst_parser"]
source_suffix = {".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build"]
# `[text](page.md#a-heading)` links resolve to headings down to this level; a missing one is a warning.
myst_heading_anchors = 3
nitpicky = True
html_theme = "alabaster"
html_title = project
