"""Chapter ledger, §3.1–§3.4 and the checkpoint: the 16-byte ledger and its variants."""

import copy
import itertools

import numpy as np
import pytest
from helpers import in_play_order

from tools.chapters import ledger as chapter
from tools.course import catalogue
from tools.course.facts import Check, FactError
from tools.models import bf16, byte_ledger, v3

FIGURES = ("ledger_16_bytes", "mixed_precision_same_16", "why_fp32_bf16", "optimizer_bytes_table", "checkpoint_size")


def facts(figure_id):
    return catalogue.facts(figure_id)


def broken(figure_id, fact, build, **inputs):
    """Build a figure with a broken input: the FactError names that figure and fact."""
    with pytest.raises(FactError) as err:
        build(Check(figure_id), **inputs)
    assert err.value.figure == figure_id
    assert fact in err.value.fact
    return err.value


def bytes_of(fact):
    return [cell["bytes"] for cell in fact.value]


# -- ledger_16_bytes --------------------------------------------------------------


def test_ledger_16_bytes_five_cells_two_against_twelve():
    f = facts("ledger_16_bytes")
    assert [c["key"] for c in f["ledger"].value] == ["weight", "grad", "m", "v", "master"]
    assert bytes_of(f["ledger"]) == [2, 2, 4, 4, 4]
    assert [c["precision"] for c in f["ledger"].value] == ["bf16", "bf16", "fp32", "fp32", "fp32"]
    assert (f["ledger"].text, f["sum"].text, f["sum"].value) == ("16 B", "2＋2＋4＋4＋4 ＝ 16", 16)
    assert (f["weight"].value, f["optimizer"].value) == (2, 12)
    assert (f["weight"].spoken, f["optimizer"].spoken) == ("两字节", "十二字节")


def test_ledger_16_bytes_band_lists_the_state_each_optimizer_keeps():
    band = {entry["name"]: entry for entry in facts("ledger_16_bytes")["band"].value}
    state = {name: [c["key"] for c in entry["state"]] for name, entry in band.items()}
    assert state == {
        "SGD": [],
        "动量": ["m"],
        "AdaGrad": ["v"],
        "RMSProp": ["v"],
        "Adam": ["m", "v"],
        "AdamW": ["m", "v"],
        "Muon": ["m"],
    }
    assert [entry["year"] for entry in band.values()] == [None, "1964", "2011", "2012", "2014", "2017", "2024"]
    # the band's cells are the ledger's own cells: same bytes, same precision
    assert all(c["bytes"] == 4 and c["precision"] == "fp32" for e in band.values() for c in e["state"])
    assert facts("ledger_16_bytes")["year_momentum"].spoken == "一九六四"


def test_ledger_16_bytes_tamper():
    bf16_master = byte_ledger.store_as(byte_ledger.MIXED_ADAMW, ("master",), "bf16")
    broken("ledger_16_bytes", "total", chapter.ledger_16_bytes, cells=bf16_master)
    shuffled = (chapter.BAND[0], chapter.BAND[2], chapter.BAND[1], *chapter.BAND[3:])
    broken("ledger_16_bytes", "band in order of history", chapter.ledger_16_bytes, band=shuffled)


# -- mixed_precision_same_16 ------------------------------------------------------


def test_mixed_precision_is_16_either_way_and_18_with_an_fp32_accumulator():
    f = facts("mixed_precision_same_16")
    assert bytes_of(f["pure"]) == [4, 4, 4, 4]
    assert f["pure_sum"].text == "4＋4＋4＋4 ＝ 16"
    assert bytes_of(f["mixed"]) == [2, 2, 4, 4, 4]
    assert f["mixed_sum"].text == "2＋2＋4＋4＋4 ＝ 16"
    assert bytes_of(f["accumulate"]) == [2, 4, 4, 4, 4]
    assert f["accumulate_sum"].text == "2＋4＋4＋4＋4 ＝ 18"
    # the 2 + 2 saved is eaten by the 4-byte master copy
    assert f["weight_saved"].value + f["grad_saved"].value == f["master"].value == 4


def test_mixed_precision_tamper():
    no_master = byte_ledger.drop(byte_ledger.MIXED_ADAMW, "master")
    broken("mixed_precision_same_16", "mixed", chapter.mixed_precision_same_16, mixed=no_master)


# -- why_fp32_bf16 ----------------------------------------------------------------


def test_bit_layouts_and_fp16_range():
    f = facts("why_fp32_bf16")
    layouts = {x["name"]: (x["sign"], x["exponent"], x["mantissa"]) for x in f["layouts"].value}
    assert layouts == {"fp32": (1, 8, 23), "bf16": (1, 8, 7), "fp16": (1, 5, 10)}
    # D7: three exponent bits fewer lose 112 binades at the small end, not 3
    assert (f["fp16_min_normal"].value, f["bf16_min_normal"].value) == (2.0**-14, 2.0**-126)
    assert f["binades_lost"].value == 112
    assert f["fp16_min_normal"].spoken == "二的负十四次方"
    assert f["bf16_min_normal"].text == "2⁻¹²⁶"


def test_the_pages_three_bf16_asserts():
    cell = bf16.spacing_at(1.0)
    assert cell == 2.0**-7 == 0.0078125
    assert bf16.round_bf16(1.0 + 0.003) == 1.0  # less than half a cell rounds back
    assert bf16.round_bf16(1.0 + cell) == 1.0078125  # a full cell sticks
    assert bf16.accumulate(1.0, 1e-3, 1000)[-1] == 1.0  # 1,000 additions still 1.0
    assert bf16.accumulate_fp32(1.0, 1e-3, 1000)[-1] == pytest.approx(2.000047, abs=5e-7)
    assert bf16.round_bf16(1.0 + cell / 2) == 1.0  # a tie goes to even
    assert bf16.round_bf16(1.0 + 1.5 * cell) == 1.0 + 2 * cell  # a tie from an odd neighbour goes up


def test_bf16_rounding_agrees_with_two_other_routes():
    values = bf16.random_float32(2000, seed=7)
    by_struct = np.array([bf16.round_bf16(float(x)) for x in values], dtype=np.float32)
    assert np.array_equal(by_struct, bf16.round_bf16_numpy(values))
    assert np.array_equal(by_struct, np.array([bf16.nearest_bf16(float(x)) for x in values], dtype=np.float32))
    # every result is a bf16 value: its low 16 bits are zero
    assert not np.any(by_struct.view(np.uint32) & 0xFFFF)


def test_bf16_figure_facts_and_spoken_powers():
    f = facts("why_fp32_bf16")
    assert (f["cell"].text, f["cell"].spoken) == ("2⁻⁷", "二的负七次方")
    assert (f["half_cell"].text, f["half_cell"].spoken) == ("2⁻⁸", "二的负八次方")
    assert (f["cell_decimal"].text, f["full_result"].text) == ("0.0078125", "1.0078125")
    assert (f["small_result"].value, f["bf16_sum"].value) == (1.0, 1.0)
    assert f["fp32_sum"].text == "2.000047"
    assert f["fp32_path"].value[-1] == f["fp32_sum"].value
    assert len(f["fp32_path"].value) == 1001


def test_bf16_tamper():
    def truncate(x):  # drops the low 16 bits: passes the three asserts, is not nearest-even
        return bf16.from_bits(bf16.float32_bits(x) & 0xFFFF0000)

    broken("why_fp32_bf16", "RNE cross-check", chapter.why_fp32_bf16, rounding=truncate)
    broken("why_fp32_bf16", "less than half a cell", chapter.why_fp32_bf16, small_step=0.005)
    broken("why_fp32_bf16", "bf16_sum", chapter.why_fp32_bf16, repeat_step=2.0**-7)


# -- optimizer_bytes_table --------------------------------------------------------


def test_optimizer_bytes_follow_the_ledger_moves():
    f = facts("optimizer_bytes_table")
    totals = {key: sum(bytes_of(f[key])) for key in ("adamw", "muon", "lion", "adafactor", "8bit_adam")}
    assert totals == {"adamw": 16, "muon": 12, "lion": 12, "adafactor": 8, "8bit_adam": 10}
    assert [c["key"] for c in f["muon"].value] == ["weight", "grad", "m", "master"]
    assert [(c["key"], c["factored"]) for c in f["adafactor"].value] == [
        ("weight", False),
        ("grad", False),
        ("v", True),
        ("master", False),
    ]
    assert [c["precision"] for c in f["8bit_adam"].value] == ["bf16", "bf16", "int8", "int8", "fp32"]
    assert f["adafactor_sum"].text == "2＋2＋≈0＋4 ≈ 8"
    assert f["lion_8bit_sum"].text == "2＋2＋1＋4 ＝ 9"
    assert f["adafactor_v"].value == pytest.approx(4 * (7168 + 2048) / (7168 * 2048))
    assert f["adafactor_v"].text == "0.0025 B"


def test_drop_and_factor_exclude_each_other_and_8bit_stacks():
    muon = byte_ledger.drop(byte_ledger.MIXED_ADAMW, "v")
    with pytest.raises(byte_ledger.LedgerError):
        byte_ledger.factor(muon, "v")
    assert byte_ledger.total(byte_ledger.store_as(muon, ("m",), "int8")) == 9


def test_optimizer_bytes_tamper():
    bf16_moments = byte_ledger.store_as(byte_ledger.MIXED_ADAMW, ("m", "v"), "bf16")
    broken("optimizer_bytes_table", "AdamW bytes", chapter.optimizer_bytes_table, base=bf16_moments)
    broken("optimizer_bytes_table", "adafactor_v", chapter.optimizer_bytes_table, matrix=(16, 16))


# -- checkpoint_size --------------------------------------------------------------


def test_checkpoint_holds_12_bytes_or_8_with_bf16_moments():
    f = facts("checkpoint_size")
    assert [c["key"] for c in f["saved"].value] == ["m", "v", "master"]
    assert (f["classic_bytes"].value, f["v3_bytes"].value) == (12, 8)
    assert f["classic_tib"].value == pytest.approx(12 * 671e9 / 2**40) == pytest.approx(7.323, abs=1e-3)
    assert f["v3_tib"].value == pytest.approx(8 * 671e9 / 2**40) == pytest.approx(4.882, abs=1e-3)
    assert (f["classic_tib"].text, f["v3_tib"].text) == ("7.3 TiB", "4.9 TiB")
    assert f["smaller"].value == pytest.approx(1 / 3)
    assert f["smaller"].spoken == "三分之一"
    assert f["params"].spoken == "六千七百一十亿"
    # pure fp32 has no master copy, so its weight is what must be saved: 12 bytes as well
    assert byte_ledger.total(byte_ledger.must_save(byte_ledger.PURE_FP32)) == 12


def test_checkpoint_tamper():
    broken("checkpoint_size", "classic_tib", chapter.checkpoint_size, params=v3.TOTAL_PARAMS / 10)


# -- the ledger row is one visual whose sizes come from tools ---------------------


def widths(row):
    return [round(group[0].width, 6) for group in row]


def test_ledger_row_cell_widths_follow_the_facts():
    from scenes.widgets import LedgerRow

    unit = 0.5
    cells = facts("ledger_16_bytes")["ledger"].value
    assert widths(LedgerRow(cells, unit=unit)) == [1.0, 1.0, 2.0, 2.0, 2.0]
    # a cell's precision changed in tools: its drawn width follows
    int8_m = chapter.row_fact(byte_ledger.store_as(byte_ledger.MIXED_ADAMW, ("m",), "int8")).value
    assert widths(LedgerRow(int8_m, unit=unit)) == [1.0, 1.0, 0.5, 2.0, 2.0]
    # a byte count edited in the fact value: the drawn width follows too
    edited = copy.deepcopy(cells)
    edited[4]["bytes"] = 8
    assert widths(LedgerRow(edited, unit=unit)) == [1.0, 1.0, 2.0, 2.0, 4.0]
    # cells abut box to box, and a factored cell is a sliver
    row = LedgerRow(chapter.row_fact(byte_ledger.factor(byte_ledger.MIXED_ADAMW, "v")).value, unit=unit)
    assert widths(row)[3] == LedgerRow.SLIVER
    assert all(abs(a[0].get_right()[0] - b[0].get_left()[0]) < 1e-9 for a, b in itertools.pairwise(row))


def test_a_narrow_cell_shows_its_short_label():
    from scenes.widgets import LedgerRow

    row = LedgerRow(
        chapter.row_fact(byte_ledger.store_as(byte_ledger.MIXED_ADAMW, ("m", "v"), "int8")).value, unit=0.45
    )
    assert [row.cell(k)[1].text for k in ("m", "v", "master")] == ["m", "v", "主权重"]


# -- narration ---------------------------------------------------------------------


def test_the_figures_play_in_the_tasks_order():
    assert in_play_order("ledger", FIGURES) == list(FIGURES)
