"""The Advisor tab: the workload and its targets, then the decision: the cost-versus-time frontier
with the named picks marked, what binds, and where the prices came from.

The pane parses its form and shows the `Advice` the app computed (gpuadvisor.advisor); it posts
FormChanged (the app debounces and recomputes) and OptionHighlighted (the memory tab and the
detail line follow the highlighted row). Laid out for 80x24; from 120 columns the table shows
every column.
"""

from __future__ import annotations

import math
from typing import Any

from rich.cells import cell_len
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.message import Message
from textual.suggester import SuggestFromList
from textual.widgets import Checkbox, DataTable, Input, Label, Select, Static, TabPane

from gpuadvisor.core.errors import UserError
from gpuadvisor.tui.widgets import CompletingInput, GiB

WORKLOAD_INPUTS = ("model", "batch", "seq")
TARGET_INPUTS = ("budget", "tok_s", "users", "ttft", "context", "tokens", "deadline")
FORM_INPUTS = WORKLOAD_INPUTS + TARGET_INPUTS
FORM_SELECTS = ("mode", "dtype", "quant")
FORM_CHECKS = ("checkpointing",)
#: "auto": the format the model's checkpoint ships in (gpt-oss: MXFP4; a quantized config.json's), else none
QUANTS = ("auto", "none", "fp8", "int8", "awq", "gptq", "mxfp4", "q4_k_m", "q5_k_m", "q8_0", "nf4")
WIDE = 120  # terminal columns from which the table shows every column
COLUMN_WIDTHS = {"pick": 10, "option": 26}  # longer text is cut: the detail line has it in full
DEFAULTS = {
    "model": "llama-3-8b",
    "mode": "inference",
    "dtype": "bf16",
    "quant": "auto",
    "checkpointing": "",
    "batch": "1",
    "seq": "",
    "budget": "",
    "tok_s": "",
    "users": "1",
    "ttft": "",
    "context": "",
    "tokens": "",
    "deadline": "",
}


def _memory_head(advice: Any, breakdown: Any) -> str:
    """The first pick's memory per GPU in its layout (the figure `estimate` gives that option)."""
    from gpuadvisor import presentation as pres

    first = pres.first_choice(advice)
    if first is not None and first.memory_parts:
        return f"{first.needed_gib_per_gpu:,.1f} GiB per GPU on {pres.short_label(first)} ({first.layout})"
    return f"{breakdown.total / GiB:,.1f} GiB on 1 GPU"


class AdvisorPane(TabPane):
    class FormChanged(Message):
        """A field of the workload or target form changed."""

    class OptionHighlighted(Message):
        def __init__(self, label: str) -> None:
            super().__init__()
            self.label = label

    def __init__(self, initial: dict[str, str]) -> None:
        super().__init__("Advisor", id="advisor")
        self.initial = {**DEFAULTS, **initial}
        self._shown: list[Any] = []
        self._advice: Any = None

    def compose(self) -> ComposeResult:
        from gpuadvisor.workload import DTYPES, MODES

        init = self.initial

        def field(label: str, fid: str, placeholder: str = "", classes: str = "short") -> ComposeResult:
            yield Label(label, classes="lbl")
            yield Input(init[fid], placeholder=placeholder, id=fid, compact=True, classes=classes)

        with Horizontal(classes="form-row"):
            yield Label("Model", classes="lbl")
            yield CompletingInput(
                init["model"],
                placeholder="preset, 7b or config.json",
                id="model",
                compact=True,
                suggester=SuggestFromList(_preset_names(), case_sensitive=False),
            )
            yield Label("Mode", classes="lbl")
            yield Select([(m, m) for m in MODES], value=init["mode"], allow_blank=False, id="mode", compact=True)
        with Horizontal(classes="form-row"):
            yield Label("Dtype", classes="lbl")
            yield Select([(d, d) for d in DTYPES], value=init["dtype"], allow_blank=False, id="dtype", compact=True)
            yield Label("Quant", classes="lbl")
            yield Select([(q, q) for q in QUANTS], value=init["quant"], allow_blank=False, id="quant", compact=True)
            yield from field("Batch", "batch")
            yield from field("Seq", "seq", "auto")
            yield from field("Budget", "budget", "$/h or $", classes="")
        with Horizontal(classes="form-row", id="serve-row"):
            yield from field("tok/s/user", "tok_s", "20")
            yield from field("Users", "users")
            yield from field("TTFT s", "ttft", "any")
            yield from field("Context", "context", "auto")
        with Horizontal(classes="form-row", id="train-row"):
            yield from field("Tokens", "tokens", "1e8", classes="mid")
            yield from field("Deadline", "deadline", "none", classes="mid")
            yield Checkbox("Checkpointing", bool(init["checkpointing"]), id="checkpointing", compact=True)
            yield Static("e.g. 2e8 or 200M · 24h or 14d", classes="hint")
        yield Static("", id="form-msg")
        yield DataTable(id="options", cursor_type="row", zebra_stripes=True)
        yield Static("", id="option-detail")
        yield Static("", id="prices-line")

    def on_mount(self) -> None:
        self._show_mode_rows(str(self.initial["mode"]))

    def on_input_changed(self, event: Input.Changed) -> None:
        if event.input.id in FORM_INPUTS:
            event.stop()
            self.post_message(self.FormChanged())

    def on_select_changed(self, event: Select.Changed) -> None:
        if event.select.id in FORM_SELECTS:
            event.stop()
            if event.select.id == "mode":
                self._show_mode_rows(str(event.value))
            self.post_message(self.FormChanged())

    def on_checkbox_changed(self, event: Checkbox.Changed) -> None:
        if event.checkbox.id in FORM_CHECKS:
            event.stop()
            self.post_message(self.FormChanged())

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if event.data_table.id == "options" and event.row_key is not None and event.row_key.value:
            event.stop()
            self._show_detail(str(event.row_key.value))
            self.post_message(self.OptionHighlighted(str(event.row_key.value)))

    def _show_mode_rows(self, mode: str) -> None:
        serving = mode == "inference"
        self.query_one("#serve-row").display = serving
        self.query_one("#train-row").display = not serving

    # ------------------------------------------------------------------ form
    def form_text(self) -> tuple[str, ...]:
        """Every field as the user sees it, to tell whether the decision shown answers this form."""
        inputs = [self.query_one(f"#{i}", Input).value for i in FORM_INPUTS]
        selects = [str(self.query_one(f"#{i}", Select).value) for i in FORM_SELECTS]
        checks = [str(self.query_one(f"#{i}", Checkbox).value) for i in FORM_CHECKS]
        return (*inputs, *selects, *checks)

    def form_values(self) -> dict[str, Any]:
        """Parse the form into a Workload and Targets; UserError names the bad field."""
        from gpuadvisor.advisor import Targets
        from gpuadvisor.workload import make_workload

        get = {i: self.query_one(f"#{i}", Input).value.strip() for i in FORM_INPUTS}
        model = get["model"]
        if not model:
            raise UserError("type a model: a preset (llama-3-8b), a parameter count (7b) or a config.json path")
        batch = _int(get["batch"], "batch", 1)
        seq = _int(get["seq"], "sequence", 0) if get["seq"] else 0
        mode = str(self.query_one("#mode", Select).value)
        dtype = str(self.query_one("#dtype", Select).value)
        quant = str(self.query_one("#quant", Select).value)
        ckpt = self.query_one("#checkpointing", Checkbox).value and mode != "inference"
        if quant not in ("none", "auto") and mode in ("training", "lora", "qlora"):
            raise UserError(f"a quantized format applies to inference (QLoRA quantizes its base itself), not {mode}")
        # the token budget belongs to the workload, as `recommend --tokens` puts it: the workload's own
        # check refuses what the CLI refuses (a token budget for a model counted in samples, say)
        tokens = _tokens(get["tokens"]) if mode != "inference" else None
        lengths: dict[str, Any] = {"seq_len": seq}
        spec: Any = model
        if mode == "inference":  # a request's lengths, with the defaults of every interface (request.py)
            from gpuadvisor.request import DEFAULT_OUTPUT_LEN, default_input_len
            from gpuadvisor.workload import resolve_model

            spec = resolve_model(model)
            if spec.kind == "decoder":
                lengths = {"seq_len": seq or default_input_len(spec), "gen_tokens": DEFAULT_OUTPUT_LEN}
        w = make_workload(spec, mode=mode, dtype=dtype, batch=batch, quant=None if quant == "auto" else quant,
                          checkpointing=ckpt,
                          train_tokens=tokens or 0.0, **lengths)
        context = _int(get["context"], "context", 1) if get["context"] else None
        if mode == "inference" and w.model.kind == "decoder" and seq:
            # a served decoder's prompt is the context less the answer: one field, not two that disagree
            from gpuadvisor.advisor.targets import DEFAULT_OUTPUT_TOKENS

            if context is not None and context != seq + DEFAULT_OUTPUT_TOKENS:
                raise UserError(f"give Context (prompt + {DEFAULT_OUTPUT_TOKENS}-token answer) or Seq (prompt), "
                                "not both")
            context = seq + DEFAULT_OUTPUT_TOKENS
        per_hour, total = _budget(get["budget"])
        kw: dict[str, Any] = {"usd_per_hour": per_hour, "budget_usd": total}
        if mode == "inference":
            kw.update(
                tokens_per_s=_float(get["tok_s"], "tok/s per user"),
                users=_int(get["users"] or "1", "users", 1),
                ttft_s=_float(get["ttft"], "time to first token (seconds)"),
                context=context,
            )
        else:
            kw.update(deadline_h=_deadline(get["deadline"]))  # the token budget: from the workload
        return {"workload": w, "targets": Targets(**kw).validate()}

    def show_error(self, text: str) -> None:
        """Say what is wrong under the form, and clear the table: a previous workload's options
        under an error would read as the answer to this one."""
        msg = self.query_one("#form-msg", Static)
        msg.update(Text(f"✗ {text}", style="bold red"))
        msg.set_class(True, "error")
        self.query_one("#options", DataTable).clear(columns=True)
        self.query_one("#option-detail", Static).update("")
        self._shown = []

    # ------------------------------------------------------------------ decision
    def show_advice(self, advice: Any, breakdown: Any, chosen: str | None) -> None:
        """The decision: a one-line verdict, the frontier and picks table, the price source."""
        from gpuadvisor import presentation as pres

        self._advice = advice
        w = advice.workload
        msg = self.query_one("#form-msg", Static)
        msg.set_class(False, "error")
        head = Text.assemble(
            ("✓ " if advice.met else "✗ ", "green" if advice.met else "bold yellow"),
            (w.model.name, "bold"),
            f": {_memory_head(advice, breakdown)} · {pres.summary_line(advice)}",
        )
        if not advice.met:
            head.append("\nnothing meets every target: ", style="yellow")
            head.append(f"it would take {advice.what_it_would_take}" if advice.what_it_would_take else "see below")
        elif advice.local_line():
            head.append(f"\n{advice.local_line()}", style="cyan")
        msg.update(head)

        table = self.query_one("#options", DataTable)
        table.clear(columns=True)
        compact = self.app.size.width < WIDE  # a large terminal shows every column
        picks = pres.pick_names(advice, compact=compact)
        by_label: dict[str, Any] = {}  # the row key: two offers with one label (same instance and region) show once
        for o in pres.shown_options(advice):
            by_label.setdefault(o.label, o)
        self._shown = list(by_label.values())
        rows = [pres.option_cells(advice, o, picks, compact=compact) for o in self._shown]
        heads = pres.columns(advice, compact=compact)  # compact: first token, meets in the detail line
        for i, c in enumerate(heads):
            table.add_column(c, key=c, width=(COLUMN_WIDTHS.get(c) if compact else None) or _width(c, rows, i))
        for o, cells in zip(self._shown, rows, strict=True):
            style = "" if o.meets else "grey50"
            pick_style = "bold green" if o.meets else "bold yellow"
            row = [Text(c, style=pick_style if i == 0 and c else style) for i, c in enumerate(cells)]
            row[1] = Text(cells[1], style="bold" if picks.get(id(o)) else style)
            table.add_row(*row, key=o.label, height=max(1, len(cells[0].splitlines())))
        labels = [o.label for o in self._shown]
        if chosen in labels:
            table.move_cursor(row=labels.index(chosen))
        self._show_detail(chosen if chosen in labels else (labels[0] if labels else None))
        self.query_one("#prices-line", Static).update(Text(pres.prices_line(advice), style="grey62"))

    def _show_detail(self, label: str | None) -> None:
        """The highlighted option in full: price, speed, cost, what binds, what it misses."""
        from gpuadvisor.advisor.picks import describe

        detail = self.query_one("#option-detail", Static)
        o = next((o for o in self._shown if o.label == label), None)
        if o is None:
            detail.update("")
            return
        text = Text(describe(o))
        if o.misses:
            text.append(" Misses: " + "; ".join(o.misses) + ".", style="yellow")
        detail.update(text)


def _width(head: str, rows: list[list[str]], column: int) -> int:
    """A column's width from its header and cells, fixed before the rows go in: DataTable widens an
    auto-width column only when it next idles and keeps the rows it drew before at the old width, so
    a screen drawn in between showed `$0.` for `$0.08` until the cursor moved."""
    return max(cell_len(line) for text in [head, *(r[column] for r in rows)] for line in text.splitlines() or [""])


# ------------------------------------------------------------------ field parsers


def _int(text: str, what: str, minimum: int) -> int:
    try:
        v = int(text)
    except ValueError:
        raise UserError(f"{what} must be a whole number, got {text!r}") from None
    if v < minimum:
        raise UserError(f"{what} must be >= {minimum}, got {v}")
    return v


def _float(text: str, what: str) -> float | None:
    if not text:
        return None
    try:
        v = float(text)
    except ValueError:
        raise UserError(f"{what} must be a number, got {text!r}") from None
    if not math.isfinite(v) or v <= 0:
        raise UserError(f"{what} must be > 0, got {text!r}")
    return v


def _budget(text: str) -> tuple[float | None, float | None]:
    """'5/h' or '$5/h': per hour; '500' or '$500': in all (the job, or a month of serving)."""
    if not text:
        return None, None
    t = text.replace("$", "").replace(",", "").replace(" ", "").lower()
    per_hour = t.endswith(("/h", "/hr", "/hour"))
    v = _float(t.split("/")[0], "budget ($ per hour as 5/h, or $ in all as 500)")
    return (v, None) if per_hour else (None, v)


def _tokens(text: str) -> float | None:
    from gpuadvisor.workload import parse_param_count

    if not text:
        return None
    n = parse_param_count(text)
    if n is None:
        n = _float(text, "token budget (2e8 or 200M)")
    if n is None or n <= 0:
        raise UserError(f"token budget must be > 0, got {text!r}")
    return n


def _deadline(text: str) -> float | None:
    from gpuadvisor.advisor import parse_duration_h

    return parse_duration_h(text) if text else None


def _preset_names() -> list[str]:
    try:
        from gpuadvisor.workload import list_presets

        return [s.name for s in list_presets()]
    except Exception:
        return []
