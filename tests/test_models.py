"""Shared models: DeepSeek-V3's activation bytes and FLOPs, the byte ledger."""

import pytest

from tools.chapters import ledger as chapter
from tools.models import byte_ledger, v3


def test_v3_activation_tables_reproduce_the_pages_subtotals():
    assert v3.Tensor("x", v3.HIDDEN, v3.ENTRY).gib == 1.75
    assert v3.subtotal(v3.ATTENTION_KEPT) == pytest.approx(22.578, abs=1e-3)
    assert v3.subtotal(v3.MOE_KEPT) == pytest.approx(48.5625)
    assert v3.moe_layer_gib() == pytest.approx(71.140625)
    assert v3.dense_layer_gib() == pytest.approx(39.578125)


def test_v3_keep_all_and_full_recompute_totals():
    assert v3.keep_all_gib() == pytest.approx(4244.89, abs=0.01)
    assert v3.keep_all_gib() * v3.GIB / v3.TIB == pytest.approx(4.1454, abs=1e-4)
    assert v3.full_recompute_gib() == 106.75


def test_v3_flops_match_the_per_operator_route():
    assert v3.attention_weights() == 187_105_280
    assert v3.moe_active_weights() == 585_302_016
    assert v3.moe_layer_forward_flops() / 1e12 == pytest.approx(857.12, abs=0.01)
    assert v3.attention_core_flops() / v3.moe_layer_forward_flops() == pytest.approx(0.8210, abs=1e-4)
    assert v3.step_flops_per_operator() / 1e15 == pytest.approx(157.6, abs=0.05)
    assert v3.six_nd_flops() / 1e15 == pytest.approx(29.098, abs=1e-3)


def test_ledger_rows_add_up():
    assert byte_ledger.total(byte_ledger.MIXED_ADAMW) == 16
    assert byte_ledger.optimizer_bytes(byte_ledger.MIXED_ADAMW) == 12
    assert byte_ledger.total(byte_ledger.PURE_FP32) == 16
    row = chapter.row_fact(byte_ledger.MIXED_ADAMW)
    assert [c["bytes"] for c in row.value] == [2, 2, 4, 4, 4]
    assert (row.text, row.spoken) == ("16 B", "十六字节")
