"""Authoring: `lecture new` scaffolds a figure or a chapter; `lecture readme` writes the README's generated parts."""
