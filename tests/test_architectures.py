"""The hardware model by architecture (catalog/architectures.yaml): every card resolves one; its tensor peaks,
published or derived, are its architecture's per-SM rate x SMs x clock; GeForce cards carry the half-rate
FP32-accumulate figure PyTorch runs at, professional cards the full rate; measured figures still win."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from gpuadvisor.advisor.options import hardware_of
from gpuadvisor.architectures import (
    architecture_of,
    derived_tensor_tflops,
    load_architectures,
    resolve_arch_id,
    runs_fp32_accumulate_at_half_rate,
)
from gpuadvisor.catalog import load_catalog
from gpuadvisor.core.errors import UserError
from gpuadvisor.estimate import apply_measured

ROOT = Path(__file__).resolve().parent.parent
FLOAT_TYPES = ("fp16", "bf16", "tf32", "fp8")
# published peaks NVIDIA states at a clock other than the card's listed boost clock
PUBLISHED_AT_ANOTHER_CLOCK = {
    "H100 SXM5 80GB": "989.4 TFLOPS = 132 SMs x 1,830 MHz, below the 1,980 MHz boost",
    "H100 PCIe 80GB": "756.5 TFLOPS = 114 SMs x 1,620 MHz, below the 1,755 MHz boost",
    "H100 NVL 94GB": "835.5 TFLOPS = 132 SMs x 1,545 MHz, below the 1,785 MHz boost",
    "GH200 96GB": "as the H100 SXM5",
    "GH200 144GB": "as the H100 SXM5",
}


@pytest.fixture(scope="module")
def catalog():
    return load_catalog(use_env=False)


@pytest.fixture(scope="module")
def archs():
    return load_architectures()


def _peak(card, arch, dtype, *, accumulate="fp32", half=None):
    half = runs_fp32_accumulate_at_half_rate(card, arch) if half is None else half
    return card.compute_units * card.boost_clock_mhz * 1e6 * arch.rate(dtype, accumulate=accumulate,
                                                                      half_rate=half) / 1e12


def test_every_card_names_an_architecture_that_fits_it(catalog, archs):
    for card in catalog.cards:
        assert card.arch_id, f"{card.name}: no arch_id"
        arch = architecture_of(card, archs)
        assert arch is not None and arch.vendor == card.vendor, card.name
        if card.vendor == "nvidia":
            assert card.compute_capability in arch.compute_capabilities, card.name
        assert card.architecture in (arch.architecture, *(f"{arch.architecture} ({c})" for c in arch.chips)), card.name
        if not arch.matrix_units:
            assert card.tensor_dense_tflops.basis == "none", f"{card.name}: tensor figures without matrix units"


def test_the_ten_architectures_of_the_issue_have_rates_chip_figures_and_sources(archs):
    for arch_id in ("volta-gv100", "turing-tu10x", "ampere-ga100", "ampere-ga10x", "ada-ad10x", "hopper-gh100",
                    "blackwell-gb100", "blackwell-gb20x", "cdna3", "cdna4"):
        arch = archs[arch_id]
        assert arch.tensor_flops_per_sm_clock is not None and arch.rate("fp16"), arch_id
        assert arch.shared_kib_per_sm and arch.source("tensor"), arch_id
        for field in ("l2_kib", "shared_kib_per_sm", "max_sms"):
            assert getattr(arch, field) is None or arch.source(field), f"{arch_id}.{field} has no source"


def test_derived_peaks_are_rate_x_sms_x_clock(catalog, archs):
    checked = 0
    for card in catalog.cards:
        t = card.tensor_dense_tflops
        arch = architecture_of(card, archs)
        if t.basis != "derived" or not (card.compute_units and card.boost_clock_mhz) or not arch.rate("fp16"):
            continue
        for dtype, expected in derived_tensor_tflops(card, arch).items():
            if dtype == "fp4" and "AI TOPS" in (t.note or ""):
                continue  # NVIDIA's published FP4 figure is kept
            assert t.get(dtype) == pytest.approx(expected, rel=0.01), f"{card.name} {dtype}"
        # read off one published figure ("derived: ...", Jetson Thor's FP4), or the architecture's rate
        # (AMD's compute units are named as such: "rate x CUs x clock")
        assert t.note.startswith(("derived: ", f"derived from {arch.name} rate x SMs x clock",
                                  f"derived from {arch.name} rate x CUs x clock")), card.name
        checked += 1
    assert checked >= 15


def test_published_peaks_agree_with_the_architecture(catalog, archs):
    """A datasheet figure off its architecture's rate by more than 1.5 % is a wrong entry (an FP16-accumulate
    figure on a GeForce card, a sparse one, a wrong SM count) unless NVIDIA states it at another clock."""
    checked = 0
    for card in catalog.cards:
        t = card.tensor_dense_tflops
        arch = architecture_of(card, archs)
        if t.basis != "datasheet" or card.name in PUBLISHED_AT_ANOTHER_CLOCK:
            continue
        for dtype, expected in derived_tensor_tflops(card, arch).items():
            if dtype in FLOAT_TYPES and t.get(dtype) is not None:
                assert t.get(dtype) == pytest.approx(expected, rel=0.015), f"{card.name} {dtype}"
                checked += 1
    assert checked >= 100


def test_geforce_fp32_accumulate_peak_is_half_the_fp16_accumulate_one(catalog, archs):
    geforce = [c for c in catalog.cards if c.family == "geforce" and c.tensor_dense_tflops.basis != "none"
               and c.name != "TITAN RTX"]
    assert len(geforce) >= 25
    for card in geforce:
        arch = architecture_of(card, archs)
        fp16_acc = _peak(card, arch, "fp16", accumulate="fp16")
        assert card.tensor_dense_tflops.fp16 == pytest.approx(fp16_acc / 2, rel=0.01), card.name
    # what the estimate prices a bf16 matmul at: the whitepapers' FP32-accumulate figures
    for name, bf16 in (("GeForce RTX 3090", 71.2), ("GeForce RTX 4090", 165.2), ("GeForce RTX 5090", 209.5)):
        assert hardware_of(catalog.get(name)).peak_tflops("bf16") == bf16


def test_professional_and_datacenter_cards_run_fp32_accumulate_at_full_rate(catalog, archs):
    for name in ("RTX A6000", "L40S", "L4", "RTX 6000 Ada Generation", "RTX PRO 6000 Blackwell", "TITAN RTX",
                 "Quadro RTX 6000"):
        card = catalog.get(name)
        arch = architecture_of(card, archs)
        assert not runs_fp32_accumulate_at_half_rate(card, arch), name
        assert card.tensor_dense_tflops.fp16 == pytest.approx(_peak(card, arch, "fp16", accumulate="fp16"),
                                                             rel=0.015), name
    # NVIDIA's own L40 figures are the half rate, and the card says so rather than its family rule
    l40 = catalog.get("L40")
    assert l40.tensor_fp32_accumulate == "half"
    assert l40.tensor_dense_tflops.bf16 == pytest.approx(catalog.get("L40S").tensor_dense_tflops.bf16 / 2, rel=0.02)


def test_the_rtx_pro_6000_is_not_costed_as_a_geforce_card(catalog):
    """Same GB202 chip as the RTX 5090 (188 vs 170 SMs), full-rate FP32 accumulate: measured PyTorch bf16 matmuls
    reach 409-418 TFLOPS on it against 236-242 on the 5090 (architectures.yaml, blackwell-gb20x sources)."""
    pro = hardware_of(catalog.get("RTX PRO 6000 Blackwell")).peak_tflops("bf16")
    geforce = hardware_of(catalog.get("GeForce RTX 5090")).peak_tflops("bf16")
    assert pro == pytest.approx(503.8) and geforce == pytest.approx(209.5)
    assert pro > 418  # a measured matmul never beats the peak


def test_measured_figures_replace_datasheet_and_derived_ones(catalog):
    for name in ("GeForce RTX 4090", "RTX PRO 6000 Blackwell"):
        figures = hardware_of(catalog.get(name), {"tflops.bf16": 150.0, "bandwidth_gbs": 900.0})
        assert figures.peak_tflops("bf16") == 150.0 and figures.source == "measured"
        assert figures.bandwidth_gbs == 900.0
    assert apply_measured(hardware_of(catalog.get("L4")), {}).source == "datasheet"


def test_a_users_card_without_arch_id_resolves_from_its_architecture(archs):
    assert resolve_arch_id("Ada Lovelace", "8.9", archs) == "ada-ad10x"
    assert resolve_arch_id("Blackwell", "12.0", archs) == "blackwell-gb20x"
    assert resolve_arch_id("Blackwell", "10.0", archs) == "blackwell-gb100"
    assert resolve_arch_id("CDNA 3", None, archs) == "cdna3"
    assert resolve_arch_id("GCN 5 (Vega 20)", None, archs) == "gcn5"
    assert resolve_arch_id("Turing", "7.5", archs) is None  # TU10x or TU11x: the card must say


def test_an_unknown_arch_id_is_one_clear_error(catalog, archs):
    card = catalog.get("GeForce RTX 4090").model_copy(update={"arch_id": "ada-ad99"})
    with pytest.raises(UserError, match=r"arch_id 'ada-ad99' is not in architectures\.yaml"):
        architecture_of(card, archs)


def test_a_bad_architectures_file_is_one_line(tmp_path):
    bad = tmp_path / "architectures.yaml"
    bad.write_text("architectures:\n  - id: x\n    name: X\n")
    with pytest.raises(UserError) as err:
        load_architectures(bad)
    assert "\n" not in str(err.value) and "architectures.0" in str(err.value)


@pytest.mark.slow  # doc sync: docs/architectures.md
def test_architectures_doc_is_current():
    p = subprocess.run([sys.executable, "-m", "tools.make_arch_doc", "--check"], capture_output=True, text=True,
                       cwd=ROOT)
    assert p.returncode == 0, p.stderr


def test_catalog_validate_refuses_a_user_card_naming_an_unknown_architecture(catalog, tmp_path, capsys):
    import yaml

    from gpuadvisor.cli import main

    card = catalog.get("GeForce RTX 4090").model_dump(mode="json", exclude_none=False)
    card.update(name="My RTX 4090", aliases=[], arch_id="ada-ad99")
    (tmp_path / "mine.yaml").write_text(yaml.safe_dump({"cards": [card]}))
    assert main(["--catalog", str(tmp_path), "catalog", "validate"]) == 2
    assert "arch_id 'ada-ad99'" in capsys.readouterr().err
    card.update(arch_id=None)  # resolved from its architecture string and compute capability
    (tmp_path / "mine.yaml").write_text(yaml.safe_dump({"cards": [card]}))
    assert main(["--catalog", str(tmp_path), "catalog", "validate"]) == 0


def test_a_card_without_a_matmul_measurement_takes_that_of_the_same_silicon():
    """The A100 SXM4 40GB is the 80GB's GA100 at the same 108 SMs, 1,410 MHz and 400 W: it takes the 80GB's published
    matmul reach; the A100 PCIe (250-300 W) does not take it whole: its clock falls under its lower power limit."""
    from gpuadvisor.matmul_reach import published, reach_of

    catalog = load_catalog(use_env=False)
    sxm40 = reach_of(catalog.get("A100 SXM4 40GB"))
    assert sxm40 is not None and sxm40.value == published()["A100 SXM4 80GB"] and "A100 SXM4 80GB" in sxm40.basis
    pcie = reach_of(catalog.get("A100 PCIe 80GB"))
    assert pcie is not None and pcie.value < sxm40.value and "lower power limit" in pcie.basis


def test_a_lower_power_card_reaches_its_architectures_measurement_at_the_clock_its_power_holds():
    """Cube-law clocks (POWER_CLOCK_EXPONENT): the H100 PCIe (350 W, 114 SMs, 1,755 MHz) has 0.83x the H100 SXM's
    power per SM and GHz cubed, so it reaches the SXM's 0.795 x 0.83^(1/3); the A100 PCIe 40GB at 250 W falls further
    than the 80GB at 300 W; a full-rate card with more power than its architecture's measured card takes that card's
    reach as a lower bound (the Quadro RTX 8000 the T4's), and a half-rate GeForce card is never scaled (its clocks
    run above the listed boost)."""
    from gpuadvisor.estimate import calibration as cal
    from gpuadvisor.matmul_reach import power_coefficient, published, reach_of

    catalog = load_catalog(use_env=False)
    pcie, sxm = catalog.get("H100 PCIe 80GB"), catalog.get("H100 SXM5 80GB")
    share = power_coefficient(pcie) / power_coefficient(sxm)
    assert 0.8 < share < 0.86
    h100_pcie = reach_of(pcie)
    assert h100_pcie is not None
    assert h100_pcie.value == pytest.approx(published()["H100 SXM5 80GB"] * share ** cal.POWER_CLOCK_EXPONENT)
    a40, a80 = reach_of(catalog.get("A100 PCIe 40GB")), reach_of(catalog.get("A100 PCIe 80GB"))
    assert a40 is not None and a80 is not None and a40.value < a80.value < published()["A100 SXM4 80GB"]
    quadro = reach_of(catalog.get("Quadro RTX 8000"))
    assert quadro is not None and quadro.value == published()["Tesla T4"] and "lower bound" in quadro.basis
    for name in ("GeForce RTX 4080", "GeForce RTX 3070"):
        r = reach_of(catalog.get(name))
        assert r is not None and "median" in r.basis, name


def test_the_same_chip_at_a_higher_power_limit_takes_the_measured_chips_reach():
    """The GB200's GPU is the B200's chip at 1,200 W against 1,000 W: it reaches the B200's measured fraction of its
    (higher) datasheet peak, not the full-rate median; a GeForce card never takes a professional sibling's reach (its
    tensor cores run FP32 accumulate at half rate), and a lower-power sibling takes none."""
    from gpuadvisor.matmul_reach import _group_medians, published, reach_of

    catalog = load_catalog(use_env=False)
    gb200 = reach_of(catalog.get("GB200 (per GPU)"))
    assert gb200 is not None and gb200.value == published()["B200"] and "B200" in gb200.basis
    assert gb200.value != _group_medians()["full-rate"]
    ti = reach_of(catalog.get("GeForce RTX 3090 Ti"))
    assert ti is not None and "RTX A6000" not in ti.basis
    h100_pcie = reach_of(catalog.get("H100 PCIe 80GB"))
    assert h100_pcie is not None and "H100 SXM5 80GB" in h100_pcie.basis and "lower power limit" in h100_pcie.basis
