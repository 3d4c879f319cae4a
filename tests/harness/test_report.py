"""Aggregation, comparison and report rendering, checked against independent references."""

from __future__ import annotations

import json
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest
from model_builders import make_item, make_options

from harness.agents import parse_agent
from harness.model.report import RunReport, validate_report
from harness.plan import RunConfig
from harness.report.junit import render_junit
from harness.report.markdown import render_markdown
from harness.run.execute import execute_run
from harness.stats.compare import compare
from harness.stats.strata import score_limits, stratified_rate
from harness.stats.summaries import overall, summarize

TINY = str(Path(__file__).resolve().parent.parent / "data" / "fixtures" / "tiny")
item = make_item


def test_summary_counts_rates_and_excludes_errors() -> None:
    items = [item("f1", t, r) for t, r in enumerate([True, True, False, True], start=1)]
    items.append(item("f1", 5, False, status="error"))
    (s,) = summarize(items)
    assert (s.n, s.errors, s.resolved) == (4, 1, 3)
    assert s.rate == pytest.approx(0.75)
    # 3 of 4 is a boundary count on both sides: the limits are the widened ones.
    lo, hi = score_limits(3, 4)
    assert s.ci == pytest.approx([float(lo), float(hi)], abs=1e-9)
    from statsmodels.stats.proportion import proportion_confint  # heavy: only where used

    wilson = proportion_confint(3, 4, alpha=0.05, method="wilson")
    assert s.ci[0] <= wilson[0] and s.ci[1] >= wilson[1]
    assert s.errored_keys == ("f1:p/m:5",)
    assert set(s.pass_at_k) == {"1", "2", "3", "4"}
    assert s.pass_at_k["1"] == pytest.approx(0.75) and s.pass_hat_k["4"] == 0.0
    assert s.measures["tokens_used"].n == 4


def test_overall_is_the_equal_weight_mean_over_fixtures() -> None:
    items = [item("f1", t, True) for t in range(1, 5)] + [
        item("f2", t, t <= 4) for t in range(1, 9)
    ]
    (o,) = overall(items)
    assert o.rate == pytest.approx((1.0 + 0.5) / 2) and o.strata == 2 and o.resolved == 8
    assert o.ci == pytest.approx(list(stratified_rate([(4, 4), (4, 8)]).ci))
    assert o.random_fixtures is None  # two fixtures say nothing about other fixtures


def test_overall_reports_the_random_fixture_interval_only_with_many_fixtures() -> None:
    items = [item(f"f{i}", t, t <= i % 4 + 1) for i in range(10) for t in range(1, 6)]
    (o,) = overall(items)
    assert o.strata == 10
    assert o.random_fixtures.method == "cluster-robust-t"


def test_comparison_is_candidate_minus_baseline_with_newcombe() -> None:
    base = [item("f1", t, t <= 4) for t in range(1, 21)]  # 4/20
    cand = [item("f1", t, t <= 15) for t in range(1, 21)]  # 15/20
    cmp = compare(base, cand, 0.05, "base")
    (f,) = cmp.fixtures
    assert f.delta == pytest.approx(0.55)
    from statsmodels.stats.proportion import confint_proportions_2indep  # heavy: only here

    lo, hi = confint_proportions_2indep(15, 20, 4, 20, method="newcomb", compare="diff")
    assert f.ci == pytest.approx([lo, hi], abs=1e-9)
    assert f.verdict == "improved"
    back = compare(cand, base, 0.05, "cand")
    assert back.fixtures[0].verdict == "regressed"
    assert cmp.wins == 1 and cmp.losses == 0


def test_overall_comparison_is_stratified_over_fixtures() -> None:
    base = [item(f"f{i}", t, t <= 2) for i in range(1, 6) for t in range(1, 11)]
    cand = [item(f"f{i}", t, t <= 8 + (i % 2)) for i in range(1, 6) for t in range(1, 11)]
    cmp = compare(base, cand, 0.05, "b")
    o = cmp.overall
    deltas = [f.delta for f in cmp.fixtures]
    assert o.delta == pytest.approx(sum(deltas) / 5)
    assert o.verdict == "improved" and o.strata == 5
    assert o.method == "stratified-newcombe" and o.random_fixtures is None


def test_inconclusive_comparison_gives_trials_for_power() -> None:
    base = [item("f1", t, t <= 5) for t in range(1, 11)]
    cand = [item("f1", t, t <= 6) for t in range(1, 11)]
    (f,) = compare(base, cand, 0.05, "b").fixtures
    assert f.verdict == "inconclusive" and f.trials_for_power > 10


def test_disagreement_is_expected_from_the_two_rates_not_paired_by_trial() -> None:
    base = [item("f1", t, t % 2 == 0) for t in range(1, 5)]  # 1/2
    cand = [item("f1", t, True) for t in range(1, 5)]  # 1
    shuffled = list(reversed(base))
    a = compare(base, cand, 0.05, "b")
    b = compare(shuffled, cand, 0.05, "b")
    assert a.fixtures[0].disagreement == pytest.approx(0.5 * 0 + 1 * 0.5)
    assert a.overall.disagreement == b.overall.disagreement
    assert not hasattr(a, "flip_rate")


def test_errored_items_stay_out_of_comparison() -> None:
    base = [item("f1", 1, True), item("f1", 2, False, status="error")]
    cand = [item("f1", 1, True), item("f1", 2, True)]
    (f,) = compare(base, cand, 0.05, "b").fixtures
    assert f.baseline_n == 1 and f.baseline_rate == 1.0


def _report(items: list, comparison: object = None) -> RunReport:
    return RunReport(
        run_id="r1",
        interrupted=False,
        items=tuple(items),
        summary=tuple(summarize(items)),
        overall=tuple(overall(items)),
        options=make_options(),
        comparison=comparison,  # type: ignore[arg-type]
    )


def test_junit_one_case_per_fixture_model() -> None:
    items = [item("f1", 1, True), item("f2", 1, False), item("f2", 1, True, model="q/n")]
    xml = ET.fromstring(render_junit(_report(items)))
    cases = xml.findall("testcase")
    assert len(cases) == 3 and xml.get("failures") == "1"
    failed = [c for c in cases if c.find("failure") is not None]
    assert [(c.get("classname"), c.get("name")) for c in failed] == [("f2", "p/m")]


def test_markdown_lists_unresolved_items_with_reasons_and_paths(tmp_path: Path) -> None:
    items = [item("f1", 1, True), item("f2", 1, False, coverage=False)]
    md = render_markdown(_report(items), tmp_path)
    assert "| f1 | p/m |" in md and "`f2:p/m:1` (unresolved)" in md
    assert "coverage" in md and str(tmp_path / "items" / "f2__1") in md


def test_report_schema_rejects_a_broken_report() -> None:
    import jsonschema
    import jsonschema_rs

    from harness.model.report import report_schema

    reference = jsonschema.Draft202012Validator(report_schema())
    good = _report([item("f1", 1, True)]).to_dict()
    validate_report(good)
    reference.validate(good)  # the reference implementation agrees
    broken = []
    for path, value in (
        (("items", 0, "score", "checks"), None),  # a required field gone
        (("items", 0, "status"), "weird"),  # outside its enum
        (("items", 0, "trial"), "1"),  # the wrong type
    ):
        bad = json.loads(json.dumps(good))
        *parents, last = path
        node = bad
        for key in parents:
            node = node[key]
        if value is None:
            del node[last]
        else:
            node[last] = value
        with pytest.raises(jsonschema_rs.ValidationError) as caught:
            validate_report(bad)
        with pytest.raises(jsonschema.ValidationError):
            reference.validate(bad)
        broken.append(list(caught.value.instance_path))
    assert broken[1] == ["items", 0, "status"] and broken[2] == ["items", 0, "trial"]


def _sim_run(tmp_path: Path, concurrency: int, name: str, baseline: Path | None = None):
    config = RunConfig(
        fixtures=(TINY,),
        models=(),
        agents=(parse_agent("sim:flaky=0.5", seed=7),),
        trials=8,
        concurrency=concurrency,
        runs_dir=tmp_path / name,
        baseline=baseline,
    )
    return execute_run(config)


@pytest.mark.slow
def test_serial_and_parallel_runs_give_identical_sorted_results(tmp_path: Path) -> None:
    serial = _sim_run(tmp_path, 1, "serial")
    parallel = _sim_run(tmp_path, 4, "parallel")

    def verdicts(items: tuple) -> list:
        return [(i.key, i.status, i.score.checks, i.score.turns) for i in items]

    assert verdicts(serial.report.items) == verdicts(parallel.report.items)
    outcomes = [i.resolved for i in serial.report.items]
    assert True in outcomes and False in outcomes  # flaky=0.5 over 8 trials, seed 7
    keys = [i.key for i in parallel.report.items]
    assert keys == sorted(keys, key=lambda k: int(k.rsplit(":", 1)[1]))


@pytest.mark.slow
def test_compare_baseline_lands_in_candidate_report(tmp_path: Path) -> None:
    base = _sim_run(tmp_path, 4, "base")
    cand = _sim_run(tmp_path, 4, "cand", baseline=base.run_dir)
    data = json.loads((cand.run_dir / "report.json").read_text())
    validate_report(data)
    cmp = data["comparison"]
    assert cmp["baseline"] == str(base.run_dir)
    assert cmp["overall"]["verdict"] in {"inconclusive", "equivalent"}
    assert cmp["fixtures"][0]["delta"] == 0.0  # same seed: the same outcomes
    assert "Comparison with" in (cand.run_dir / "report.md").read_text()
