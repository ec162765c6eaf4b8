"""The child process that runs a user's model file (contained.py starts it): `python -m
gpuadvisor.estimate.trace.child FOLDER`, where FOLDER holds request.json. It writes outcome.json
({"ok": true, "params": N} or {"error": "one line"}) and, for a trace, graph.json.gz, and exits 0,
or 2 after an error. What the model's code does to the process itself (a crash, os._exit) the
parent reads from the exit status and the faulthandler stack on stderr."""

from __future__ import annotations

import faulthandler
import json
import signal
import sys
import traceback
from pathlib import Path
from typing import Any

from gpuadvisor.core.errors import UserError
from gpuadvisor.estimate.trace.contained import GRAPH_FILE, OUTCOME_FILE, REQUEST_FILE, options_from_json
from gpuadvisor.estimate.trace.zoo import error_line
from gpuadvisor.modelref import ModelRef, parse_ref


def main(argv: list[str]) -> int:
    folder = Path(argv[0])
    faulthandler.enable()  # a crash prints the Python stack: the parent names the user's line from it
    if hasattr(signal, "SIGUSR1"):
        faulthandler.register(signal.SIGUSR1)  # the parent asks for the stack when the time limit passes
    request = json.loads((folder / REQUEST_FILE).read_text())
    ref = parse_ref(request["ref"])
    if ref is None:
        raise SystemExit(f"not a model spec: {request['ref']!r}")
    try:
        outcome = _serve(ref, request, folder)
    except UserError as e:
        outcome = {"error": _with_line(str(e), e, ref)}
    except SystemExit as e:
        outcome = {"error": _with_line(f"{ref.text}: the model's code called sys.exit({e.code!r}); {ref.func}() must "
                                       "return a torch.nn.Module", e, ref)}
    except BaseException as e:  # the user's code, anything at all: one line, never a traceback
        outcome = {"error": _with_line(f"{ref.text}: {error_line(e)}", e, ref)}
    (folder / OUTCOME_FILE).write_text(json.dumps(outcome))
    return 2 if "error" in outcome else 0


def _serve(ref: ModelRef, request: dict[str, Any], folder: Path) -> dict[str, Any]:
    from gpuadvisor.estimate.trace.tracer import TraceOptions, count_params, trace_pair

    if request["action"] == "params":
        return {"ok": True, "params": count_params(ref)}
    from gpuadvisor.estimate.graph import save

    low, high = request["batches"]
    bg = trace_pair(ref, options_from_json(TraceOptions, request["options"]), (int(low), int(high)))
    save({"graph": bg}, folder / GRAPH_FILE)
    return {"ok": True}


def _with_line(message: str, error: BaseException, ref: ModelRef) -> str:
    """`message` and where in the user's file the error came from ('at model.py line 12'), unless the
    message says already. UserErrors raised `from None` keep the original exception as __context__."""
    target = Path(ref.name).resolve()
    seen: set[int] = set()
    exc: BaseException | None = error
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        frames = [f for f in traceback.extract_tb(exc.__traceback__) if Path(f.filename).resolve() == target]
        if frames:
            where = f"{target.name} line {frames[-1].lineno}"
            return message if where in message else f"{message} (at {where})"
        exc = exc.__cause__ or exc.__context__
    return message


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
