"""Renderers: each takes the typed report model (or one item of it) and returns text:
the console summary and progress lines, report.md, report.html and its charts, JUnit XML,
and ``show``. None imports another; shared formatting lives in :mod:`harness.report.format`."""
