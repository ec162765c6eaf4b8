"""One pass/fail verdict for `check` (the rules on a node's GPUs) and `fleet check` (every node).

A verdict is made of parts (a node's GPUs, a fleet's nodes), each of which passes or not. It
passes when it has parts and every part passes: an empty result never passes by default. Its
exit code is 0 (pass) or 1 (fail); 2 (bad rules or usage) is the CLI's. The JSON answer of
both commands has one head: rules, [what the kind adds], passed, exit_code, then the parts under
their own key ("devices", "nodes"), then what the kind adds at the end.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Generic, Protocol, TypeVar

EXIT_PASS, EXIT_FAIL, EXIT_USAGE = 0, 1, 2


class Passes(Protocol):
    """What a verdict is made of: anything that passes or not."""

    @property
    def passed(self) -> bool: ...


PartT = TypeVar("PartT", bound=Passes)


@dataclass
class Verdict(Generic[PartT]):
    """The shared pass/fail logic and JSON head; a kind names its parts and how each is written."""

    rules_source: str | None
    parts_key: ClassVar[str] = "parts"

    @property
    def parts(self) -> Sequence[PartT]:  # pragma: no cover - every kind overrides it
        raise NotImplementedError

    def part_dict(self, part: PartT) -> dict[str, Any]:  # pragma: no cover - every kind overrides it
        raise NotImplementedError

    def head_dict(self) -> dict[str, Any]:
        """Keys written after "rules", before "passed" (none by default)."""
        return {}

    def tail_dict(self) -> dict[str, Any]:
        """Keys written after the parts (none by default)."""
        return {}

    @property
    def passed(self) -> bool:
        return bool(self.parts) and all(p.passed for p in self.parts)

    @property
    def failed_parts(self) -> int:
        return sum(not p.passed for p in self.parts)

    @property
    def exit_code(self) -> int:
        return EXIT_PASS if self.passed else EXIT_FAIL

    def to_dict(self) -> dict[str, Any]:
        return {
            "rules": self.rules_source,
            **self.head_dict(),
            "passed": self.passed,
            "exit_code": self.exit_code,
            self.parts_key: [self.part_dict(p) for p in self.parts],
            **self.tail_dict(),
        }
