"""Writing a run's report files: report.json (schema-checked), report.md and report.html."""

from __future__ import annotations

import warnings
from pathlib import Path

from harness.errors import HarnessError
from harness.files import write_json_atomic, write_text_atomic
from harness.model.report import REPORT_FILE, RunReport, validate_report
from harness.model.story import ItemStory
from harness.report.markdown import MD_FILE, render_markdown


def write_report(run_dir: Path, report: RunReport) -> None:
    data = report.to_dict()
    validate_report(data)
    write_json_atomic(run_dir / REPORT_FILE, data)
    write_text_atomic(run_dir / MD_FILE, render_markdown(report, run_dir))
    try:
        write_html(run_dir, report)
    except Exception as exc:  # the page is a view: it must never cost the run its report
        warnings.warn(f"report.html not written: {type(exc).__name__}: {exc}", stacklevel=2)


def item_stories(run_dir: Path, report: RunReport) -> dict[str, ItemStory]:
    """Every item's story that its directory can tell (an unreadable one is left out)."""
    from harness.item.story import item_dir_of, load_story

    stories = {}
    for item in report.items:
        try:
            stories[item.key] = load_story(item_dir_of(run_dir, item), item)
        except HarnessError:
            continue
    return stories


def write_html(run_dir: Path, report: RunReport, target: Path | None = None) -> Path:
    """Write the report page (default ``report.html`` in ``run_dir``); its path."""
    from harness.report.html import HTML_FILE, render_html

    target = target or run_dir / HTML_FILE
    page = render_html(report, run_dir, item_stories(run_dir, report), target.parent)
    write_text_atomic(target, page)
    return target
