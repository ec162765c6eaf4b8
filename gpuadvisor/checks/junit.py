"""JUnit XML for CI: one <testsuite> per device, one <testcase> per rule."""

from __future__ import annotations

import re
from xml.sax.saxutils import quoteattr

from gpuadvisor.checks.evaluate import CheckReport


def junit_xml(report: CheckReport, suite_prefix: str = "gpuadvisor check") -> str:
    """One <testsuite> per device, one <testcase> per rule; failures carry measured vs threshold."""
    total = sum(len(d.outcomes) for d in report.devices)
    failed = sum(d.failures for d in report.devices)
    lines = [
        '<?xml version="1.0" encoding="UTF-8"?>',
        f'<testsuites name={_attr(suite_prefix)} tests="{total}" failures="{failed}" errors="0">',
    ]
    for d in report.devices:
        attrs = f'name={_attr(f"{suite_prefix}: {d.label}")} tests="{len(d.outcomes)}" failures="{d.failures}"'
        lines.append(f'  <testsuite {attrs} errors="0" skipped="0">')
        if d.uuid:
            lines.append("    <properties>")
            lines.append(f'      <property name="uuid" value={_attr(d.uuid)}/>')
            lines.append("    </properties>")
        classname = _attr(f"gpu{d.index}" if d.index is not None else "nogpu")
        for o in d.outcomes:
            head = f"    <testcase classname={classname} name={_attr(o.rule)}"
            summary = f"measured {o.measured}; required {o.threshold}"
            if o.passed:
                lines.append(f"{head}>")
                lines.append(f"      <system-out>{_xml_text(summary)}</system-out>")
                lines.append("    </testcase>")
            else:
                msg = summary + (f"; {o.message}" if o.message else "")
                lines.append(f"{head}>")
                lines.append(f"      <failure message={_attr(msg)} type={_attr(o.check)}>{_xml_text(msg)}</failure>")
                lines.append("    </testcase>")
        lines.append("  </testsuite>")
    lines.append("</testsuites>")
    return "\n".join(lines) + "\n"


_XML_BAD = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f]")


def _xml_text(text: str) -> str:
    text = _XML_BAD.sub("?", text)
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _attr(text: str) -> str:
    return quoteattr(_XML_BAD.sub("?", text))
