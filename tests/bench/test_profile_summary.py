"""bench/step_time/profile_summary.py reads a profiled step of bench/step_time/step_phases.py: its phases, torch's
kernel table (times in us/ms/s), and the device's busy share of the step."""
from __future__ import annotations

import pytest

from tests.bench.bench_scripts import on_path

on_path("step_time")
from profile_summary import seconds, summarise  # noqa: E402

RULE = "-" * 60 + "  " + "  ".join(["-" * 12] * 10)
HEADER = ("Name  Self CPU %  Self CPU  CPU total %  CPU total  CPU time avg  Self CUDA  Self CUDA %  CUDA total  "
          "CUDA time avg  # of Calls")


def row(name: str, self_cuda: str, avg: str, calls: int) -> str:
    return f"{name}  0.00%  0.000us  0.00%  0.000us  0.000us  {self_cuda}  9.56%  {self_cuda}  {avg}  {calls}"


def profile(phase_line: bool = True) -> str:
    lines = ["profiled step, wall s per phase: sdpo_prepare 0.500, old_log_prob 4.000, adv 0.020, "
             "update_actor 15.480, sdpo_ema_update 0.003, sdpo_teacher_forward 5.000"] if phase_line else []
    lines += [RULE, HEADER, RULE,
              row("void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_tra...", "1.564s", "221.670us", 7056),
              row("nvjet_sm90_tst_128x288_64x4_2x1_v_bz_coopA_TNT", "908.876ms", "101.046us", 12544),
              row("Memcpy DtoD (Device -> Device)", "90.509us", "9.666us", 9364),
              RULE, "Self CPU time total: 7.420s", "Self CUDA time total: 5.000s"]
    return "\n".join(lines)


def test_time_cells_in_each_unit():
    assert seconds("221.670us") == pytest.approx(221.67e-6)
    assert seconds("908.876ms") == pytest.approx(0.908876)
    assert seconds("1.564s") == pytest.approx(1.564)
    with pytest.raises(ValueError, match="not a time cell"):
        seconds("9.56%")


def test_the_busy_share_is_kernel_time_over_the_step_without_nested_phases():
    summary = summarise(profile())
    assert summary["step_s_without_rollout"] == 20.0           # teacher forward and EMA sit inside the update
    assert summary["device_kernel_s"] == 5.0 and summary["device_busy_fraction"] == 0.25
    assert [k["calls"] for k in summary["kernels"]] == [7056, 12544, 9364]
    assert summary["launches_of_listed_kernels"] == 7056 + 12544 + 9364
    assert summary["kernels"][1] == {"name": "nvjet_sm90_tst_128x288_64x4_2x1_v_bz_coopA_TNT",
                                     "self_device_s": 0.908876, "calls": 12544, "mean_us": 101.046}
    assert summary["kernels"][2]["name"] == "Memcpy DtoD (Device -> Device)"


def test_a_profile_without_its_phase_line_is_a_clear_error():
    with pytest.raises(ValueError, match="no 'profiled step, wall s per phase: ' line"):
        summarise(profile(phase_line=False))
