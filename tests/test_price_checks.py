"""The price builder's checks, each with a planted row: what it finds is recorded as an anomaly
(kind, provider, shape, region, figures, action) and the snapshot does what the action says."""

from __future__ import annotations

import pytest

from gpuadvisor.prices.model import NOT_GPU
from gpuadvisor.prices.reduce import catalog_card_memory, catalog_card_names, load_map, reduce_rows
from gpuadvisor.prices.skypilot import parse_csv

HEADER = "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,Price,SpotPrice,Region,AvailabilityZone\n"


@pytest.fixture(scope="module")
def catalog():
    return catalog_card_names(), catalog_card_memory()


def reduce(provider: str, body: str, catalog):
    rows = parse_csv(HEADER + body, f"{provider}.csv", provider)
    return reduce_rows(rows, load_map(), *catalog)


def found(red, kind):
    return [a for a in red.anomalies if a.kind == kind]


def one(red, shape):
    (o,) = [o for o in red.offers if o.instance_type == shape]
    return o


def test_spot_above_on_demand_is_dropped(catalog):
    # RunPod's L40S: spot 1.20 above on-demand 0.86 made RunPod the cheapest L40S anywhere
    red = reduce("runpod", "1x_L40S_SECURE,L40S,1,16,62,0.86,1.20,CA,CA\n"
                           "1x_L40S_SECURE,L40S,1,16,62,0.90,0.40,US,US\n", catalog)
    (a,) = found(red, "spot_above_on_demand")
    assert (a.provider, a.shape, a.region) == ("runpod", "1x_L40S_SECURE", "CA")
    assert "spot 1.2 > on-demand 0.86" in a.figures and a.action.startswith("spot price dropped in this region")
    o = one(red, "1x_L40S_SECURE")
    assert o.regions["CA"] == (0.86, None) and o.spot_usd_h == 0.40


def test_on_demand_below_spot_is_the_same_check(catalog):
    red = reduce("lambda", "gpu_1x_a100_sxm4,A100-80GB,1,30,200,1.10,1.79,us-east-1,\n", catalog)
    assert [a.region for a in found(red, "spot_above_on_demand")] == ["us-east-1"]
    assert one(red, "gpu_1x_a100_sxm4").spot_usd_h is None


def test_a_region_3x_from_the_provider_median_is_left_out(catalog):
    # GCP-like: one H100 shape at ~11/GPU in most regions, one region at 3.0/GPU
    body = "".join(f"a3-highgpu-8g-x,H100,8,208,1872,{88 + i:.1f},,r{i},r{i}-a\n" for i in range(6))
    body += "a3-highgpu-8g-x,H100,8,208,1872,24.0,,cheap-1,cheap-1-a\n"
    red = reduce("gcp", body, catalog)
    (a,) = found(red, "outlier")
    assert (a.shape, a.region, a.action) == ("a3-highgpu-8g-x", "cheap-1", "region left out of this offer")
    assert a.figures == "24 USD/h vs 90.5 median of its other regions (0.27x)"
    o = one(red, "a3-highgpu-8g-x")
    assert "cheap-1" not in o.regions and o.region == "r0" and o.on_demand_usd_h == 88.0


def test_a_shape_3x_from_the_provider_median_is_kept_and_flagged(catalog):
    body = "".join(f"n-a4000-{i},A4000,1,8,45,0.15,,r{i},\n" for i in range(5)) + "paper_A4000,A4000,1,8,45,0.80,,ny,\n"
    red = reduce("shadeform", body, catalog)
    (a,) = found(red, "outlier")
    assert a.shape == "paper_A4000" and a.action.startswith("kept") and "5.33x the provider's median" in a.figures
    o = one(red, "paper_A4000")
    assert o.on_demand_usd_h == 0.80 and "5.33x" in o.note


def test_gpu_only_rows_get_their_host_vm(catalog):
    # GCP lists a4/a3-mega/a3-ultra/g2 host VMs and their GPUs on separate rows (InstanceType empty)
    body = ("a4-highgpu-8g,,,224,3968,10.00,4.00,us-central1,us-central1-b\n"
            ",B200,8,,,80.00,30.00,us-central1,us-central1-b\n"
            "a3-megagpu-8g,,,208,1872,12.00,5.00,us-east5,us-east5-a\n"
            ",H100-MEGA,8,,,70.00,20.00,us-east5,us-east5-a\n"
            "a3-ultragpu-8g,,,224,2952,14.00,6.00,europe-west1,europe-west1-b\n"
            ",H200,8,,,75.00,25.00,europe-west1,europe-west1-b\n"
            "g2-standard-24,,,24,96,0.90,0.30,us-east4,us-east4-a\n"
            ",L4,2,,,1.12,0.40,us-east4,us-east4-a\n"
            ",T4,1,,,0.35,0.11,us-east4,us-east4-a\n")
    red = reduce("gcp", body, catalog)
    assert one(red, "a4-highgpu-8g").regions["us-central1"] == (90.0, 34.0)
    assert one(red, "a3-megagpu-8g").on_demand_usd_h == 82.0
    assert one(red, "a3-ultragpu-8g").on_demand_usd_h == 89.0
    g2 = one(red, "g2-standard-24")
    assert (g2.card, g2.gpu_count, g2.on_demand_usd_h) == ("L4", 2, 2.02)
    assert {a.shape for a in found(red, "host_vm_added")} == {"a4-highgpu-8g", "a3-megagpu-8g", "a3-ultragpu-8g",
                                                              "g2-standard-24"}
    assert not any("(attached)" in o.instance_type and o.card != "Tesla T4" for o in red.offers)
    t4 = one(red, "1x T4 (attached)")  # T4s attach to any N1 VM: listed alone, with a note
    assert "host VM" in t4.note and [a.shape for a in found(red, "gpu_only")] == ["1x T4 (attached)"]
    assert red.coverage["gcp"]["joined"]["8x B200 (attached)"] == ["a4-highgpu-8g"]


@pytest.mark.parametrize(
    ("shape", "acc", "share", "card", "gib"),
    [("Standard_NV4as_v4", "Radeon MI25", "0.125", "Radeon Instinct MI25", 2.0),
     ("Standard_NV16as_v4", "Radeon MI25", "0.5", "Radeon Instinct MI25", 8.0),
     ("Standard_NV6ads_A10_v5", "A10", "0.166667", "A10", 4.0)],
)
def test_a_fraction_of_a_gpu_is_priced_per_share_with_its_memory(catalog, shape, acc, share, card, gib):
    red = reduce("azure", f"{shape},{acc},{share},4,14,0.38,0.10,eastus,\n", catalog)
    o = one(red, shape)
    assert o.fractional and o.gpu_count == 1 and o.gpu_fraction == float(share) and o.card == card
    assert o.gpu_memory_gib == pytest.approx(gib, abs=0.01)
    (a,) = found(red, "fractional")
    assert a.shape == shape and "not count it as a card" in a.action


def test_the_advisor_does_not_count_a_fraction_as_a_card(catalog):
    from gpuadvisor.advisor.options import build_options
    from gpuadvisor.advisor.targets import Targets
    from gpuadvisor.catalog import load_catalog
    from gpuadvisor.workload import make_workload

    red = reduce("azure", "Standard_NV6ads_A10_v5,A10,0.166667,6,55,0.45,,eastus,\n"
                          "Standard_NV36ads_A10_v5,A10,1,36,440,3.20,,eastus,\n", catalog)
    w = make_workload("llama-2-7b")
    opts = build_options(w, load_catalog(), Targets(tokens_per_s=10), offers=red.offers, buy=False)
    assert [o.hardware.instance_type for o in opts] == ["Standard_NV36ads_A10_v5"]


def test_missing_on_demand_is_flagged_and_kept_spot_only(catalog):
    red = reduce("aws", "g6.xlarge,L4,1,4,16,0.80,0.30,us-east-1,\ng6.xlarge,L4,1,4,16,,0.35,eu-west-9,\n", catalog)
    (a,) = found(red, "missing_on_demand")
    assert a.shape == "g6.xlarge" and a.region == "eu-west-9" and "1 of 2 regions" in a.figures
    assert one(red, "g6.xlarge").regions["eu-west-9"] == (None, 0.35)


def test_non_gpu_and_unmapped_accelerators_are_listed_with_counts(catalog):
    body = ("dl1.24xlarge,Gaudi HL-205,8,96,768,13.11,,us-east-1,\n"
            "inf2.xlarge,Inferentia2,1,4,16,0.76,,us-east-1,\n"
            "inf2.xlarge,Inferentia2,1,4,16,0.80,,us-west-2,\n"
            "trn1.2xlarge,Trainium,1,8,32,1.34,,us-east-1,\n"
            "g9.xlarge,Mystery GPU 9000,1,4,16,1.00,,us-east-1,\n")
    red = reduce("aws", body, catalog)
    un = {u.accelerator: u for u in red.unmapped}
    assert un["Inferentia2"].reason == NOT_GPU and (un["Inferentia2"].rows, un["Inferentia2"].shapes) == (2, 1)
    assert un["Gaudi HL-205"].reason == un["Trainium"].reason == NOT_GPU
    assert un["Mystery GPU 9000"].reason.startswith("no card mapping")
    assert not red.offers
    assert {a.shape for a in found(red, "non_gpu")} == {"Gaudi HL-205", "Inferentia2", "Trainium"}
    assert [a.shape for a in found(red, "unmapped")] == ["Mystery GPU 9000"]
    cov = red.coverage["aws"]
    assert cov["gpu_shapes"] == 1 and cov["excluded"] == {
        "g9.xlarge": "Mystery GPU 9000: no card mapping in catalog/prices/accelerators.yaml (or a --map file), "
                     "nor a catalog alias"}
    assert cov["non_gpu_shapes"] == 3


def test_tpus_are_not_gpus(catalog):
    red = reduce("gcp", ",tpu-v4-8,1,,,12.88,3.86,us-central2,us-central2-b\n", catalog)
    assert not red.offers and [(u.accelerator, u.reason) for u in red.unmapped] == [("tpu-v4-8", NOT_GPU)]


def test_a_placeholder_price_far_below_the_market_is_excluded_with_its_reason(catalog):
    # Mithril's catalog lists an A100 80GB at $0.01/h: 165x below what every other provider asks
    body = ("gpu_1x_a100_sxm4,A100-80GB,1,30,200,1.79,,us-east-1,\n"
            "a100-80gb.sxm.1x,A100-80GB-SXM,1,26,190,0.01,0.01,us-central3-a,\n")
    other = parse_csv(HEADER + body.splitlines()[0] + "\n", "lambda.csv", "lambda")
    mine = parse_csv(HEADER + body.splitlines()[1] + "\n", "mithril.csv", "mithril")
    third = parse_csv(HEADER + "1x_A100-80GB-SXM,A100-80GB-SXM,1,16,125,1.49,,CA,\n", "runpod.csv", "runpod")
    red = reduce_rows(other + mine + third, load_map(), *catalog)
    (a,) = found(red, "outlier")
    assert (a.provider, a.shape) == ("mithril", "a100-80gb.sxm.1x") and "x below" in a.figures
    assert not any(o.provider == "mithril" for o in red.offers)
    assert "20x below the market median" in red.coverage["mithril"]["excluded"]["a100-80gb.sxm.1x"]
    assert {o.provider for o in red.offers} == {"lambda", "runpod"}


def test_a_shape_whose_regions_differ_more_than_2x_is_flagged(catalog):
    # GCP's a3-highgpu-8g: about $43/h in most regions, $91-112 in a few (the "$4.20 per H100")
    body = "".join(f"a3-highgpu-8g,H100,8,208,1872,{p},,{r},{r}-a\n" for r, p in
                   [("us-central1", 43.07), ("us-west1", 43.07), ("asia-southeast1", 45.28),
                    ("europe-west4", 111.82), ("us-east5", 98.93)])
    red = reduce("gcp", body, catalog)
    (a,) = [a for a in found(red, "outlier") if ".." in a.region]
    assert a.region == "us-central1 .. europe-west4" and "(2.60x; 3 of 5 below half the dearest)" in a.figures
    o = one(red, "a3-highgpu-8g")
    assert o.on_demand_usd_h == 43.07 and len(o.regions) == 5 and "regions from 43.07 to 111.82" in o.note


def test_a_host_vm_listed_at_zero_takes_its_price_from_the_gpu_rows(catalog):
    red = reduce("gcp", "a4-highgpu-8g,,,224,3968,0,0,asia-northeast1,asia-northeast1-b\n"
                        ",B200,8,,,64.44,32.61,asia-northeast1,asia-northeast1-b\n", catalog)
    assert one(red, "a4-highgpu-8g").regions["asia-northeast1"] == (64.44, 32.61)
    (a,) = found(red, "host_vm_added")
    assert "listed at 0 or without a price" in a.figures


def test_azure_lists_a_share_of_an_mi25_as_one_gpu_and_the_map_corrects_it(catalog):
    red = reduce("azure", "Standard_NV4as_v4,Radeon MI25,1,4,14,0.17,0.03,eastus,\n"
                          "Standard_NV32as_v4,Radeon MI25,1,32,112,1.36,0.27,eastus,\n", catalog)
    quarter, whole = one(red, "Standard_NV4as_v4"), one(red, "Standard_NV32as_v4")
    assert (quarter.gpu_fraction, quarter.gpu_memory_gib) == (0.125, 2.0) and not whole.fractional
    assert [a.shape for a in found(red, "fractional")] == ["Standard_NV4as_v4"]
