"""report.html's drill-down of an edit item: the shards' table (checks, files and writers,
verdicts), each shard's diffs and checks' output, the shared files, lanes and undeclared
changes; the agent's text escaped and kept inside the page's width."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from edit_items import KEY, TREE, edit_item, evidence
from model_builders import make_options

from harness.item.scoring import read_result
from harness.item.story import load_story
from harness.report.html import render_html
from harness.stats.build import build_report
from scorers.records import FileChange, ShardChecks, TreeEvidence


def _page(root: Path, monkeypatch: pytest.MonkeyPatch, tree: TreeEvidence = TREE) -> str:
    item_dir = edit_item(root, monkeypatch, evidence(tree=tree))
    result = read_result(item_dir)
    report = build_report(
        run_id="r1", results=[result], interrupted=False, options=make_options(models=("p/m",))
    )
    return render_html(report, root, {KEY: load_story(item_dir)})


def _drilldown(page: str) -> str:
    return page[page.index('<details class="item"') :]


def test_the_drilldown_shows_each_shards_checks_change_and_writers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    page = _drilldown(_page(tmp_path, monkeypatch))
    assert "Edits: 2 of 3 shards' hidden checks passed." in page
    gamma = re.search(r'<tr data-shard="gamma.md">.*?</tr>', page)
    assert gamma is not None
    row = gamma.group(0)
    assert '<td class="failed">failed (1 test, 1 failure)</td>' in row
    assert "<code>pkg/gamma.py</code> changed, by worker-alpha (edit ×2)" in row
    assert "not landed: clobbered by worker-alpha" in row
    beta = re.search(r'<tr data-shard="beta.md">.*?</tr>', page)
    assert beta is not None and "untraced: pkg/beta.py written by the parent" in beta.group(0)
    assert '<pre class="diff" data-path="pkg/alpha.py">' in page
    assert '<span class="del">-X = 0</span>\n<span class="add">+X = 1</span>' in page
    # a failing shard's details are open, with the end of its checks' output
    assert '<details class="shard-edit" data-shard="gamma.md" open>' in page
    assert '<details class="shard-edit" data-shard="alpha.md"><summary>' in page
    assert '<pre class="tail">' in page and "AssertionError: 3 != 1" in page
    assert '<details class="shared-edit"><summary>Shared files</summary>' in page
    assert "<li>worker-alpha changed pkg/gamma.py (worker-gamma&#x27;s)</li>" in page
    assert "Changes outside the declared files: <code>conftest.py</code>" in page


def test_the_agents_text_is_escaped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    hostile = '<script>alert(1)</script>"'
    tree = TreeEvidence(
        files=(FileChange("pkg/alpha.py", "changed", f"+{hostile}\n"),),
        checks=(ShardChecks("alpha.md", "failed", 1, 1, hostile),),
        undeclared=("<img src=x>",),
    )
    page = _page(tmp_path, monkeypatch, tree)
    assert "<script>alert" not in page and "<img src=x>" not in page
    assert "+&lt;script&gt;alert(1)&lt;/script&gt;&quot;" in page


@pytest.mark.browser
def test_a_long_diff_line_scrolls_inside_the_page(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A diff of a minified line is as wide as it is: its block scrolls, the page does not."""
    from browser import Browser, chromium_binary

    binary = chromium_binary()
    if binary is None:
        pytest.skip("chromium not installed (apt-get install -y chromium; .ci/run installs it)")
    wide = "+" + "x" * 3000 + "\n"
    tree = TreeEvidence(
        files=(FileChange("pkg/gamma.py", "changed", wide),),
        checks=(ShardChecks("gamma.md", "failed", 1, 1, "E" * 3000),),
    )
    path = tmp_path / "report.html"
    path.write_text(_page(tmp_path, monkeypatch, tree), encoding="utf-8")
    browser = Browser.start(binary)
    try:
        browser.open(path.as_uri(), "document.readyState === 'complete'", width=1400)
        browser.evaluate("document.querySelector('details.item').open = true")
        page_hidden = browser.evaluate(
            "document.documentElement.scrollWidth - document.documentElement.clientWidth"
        )
        blocks = browser.evaluate(
            "Array.from(document.querySelectorAll('pre.diff, pre.tail')).map(p =>"
            " ({shown: p.getBoundingClientRect().width, hidden: p.scrollWidth - p.clientWidth}))"
        )
    finally:
        browser.close()
    assert browser.errors == [] and page_hidden == 0
    assert len(blocks) == 2 and all(b["hidden"] > 0 and b["shown"] <= 1200 for b in blocks)
