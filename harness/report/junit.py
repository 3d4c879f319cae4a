"""JUnit XML: one test case per fixture x model (x agent, in a run of several agents: the
case is named ``agent · model``), failing when any of its items did not resolve (errors
when items could not run), for CI systems that show test reports."""

from __future__ import annotations

from xml.etree import ElementTree as ET

from harness.model.report import RunReport
from harness.model.text import (
    condition_label,
    format_ci,
    format_pct,
    item_reasons,
    several_agents,
)


def render_junit(report: RunReport) -> str:
    suite = ET.Element("testsuite", name=f"swarm-harness {report.run_id}")
    failures = errors = 0
    several = several_agents(report)
    for s in report.summary:
        name = condition_label(s.agent, s.model, several)
        case = ET.SubElement(suite, "testcase", classname=s.fixture, name=name)
        cell = (s.fixture, s.agent, s.model)
        items = [i for i in report.items if (i.fixture, i.agent, i.model) == cell]
        bad = [i for i in items if i.status == "unresolved"]
        errs = [i for i in items if i.status == "error"]
        if bad:
            failures += 1
            node = ET.SubElement(
                case,
                "failure",
                message=f"{len(bad)}/{len(items)} unresolved; rate {format_pct(s.rate)}",
            )
            node.text = "\n".join(f"{i.key}: {'; '.join(item_reasons(i))}" for i in bad)
        elif errs:
            errors += 1
            node = ET.SubElement(case, "error", message=f"{len(errs)} items could not run")
            node.text = "\n".join(f"{i.key}: {i.facts.error}" for i in errs)
        ET.SubElement(
            case, "system-out"
        ).text = f"resolved {s.resolved}/{s.n}, 95% CI {format_ci(s.ci)}"
    suite.set("tests", str(len(report.summary)))
    suite.set("failures", str(failures))
    suite.set("errors", str(errors))
    return ET.tostring(suite, encoding="unicode", xml_declaration=True) + "\n"
