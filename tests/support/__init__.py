"""What tests share besides fixtures: paths, the real programs, raw MCP messages, corpora and stubs.

Test modules import helpers from here (or from :mod:`tests.fakes`, the stand-ins for external
services), never from another test module or a ``conftest.py``; conftest files only declare
fixtures, built from these helpers.
"""
