"""The course site's Sphinx configuration (conf.py), its home pages and its small extensions."""
