"""cffi lays the public structs out as the C compiler does: sizeof and the offset of every
member of the structs the binding passes, from a program compiled against epochcast.h."""
import os
import shutil
import subprocess

import pytest

from epochcast._lib import ffi

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
STRUCTS = ["ec_config", "ec_result", "ec_memory", "ec_breakdown", "ec_comm_parts", "ec_sweep_opts",
           "ec_sweep_point", "ec_plan_opts", "ec_plan_point", "ec_optimize_layout", "ec_optimize_stats",
           "ec_gpu_info", "ec_model_info", "ec_interconnect_info", "ec_model_summary", "ec_layer_row", "ec_run",
           "ec_fit_report", "ec_error_stats", "ec_layer", "ec_head", "ec_network_def", "ec_stage"]


def test_struct_layout(tmp_path):
    cc = shutil.which(os.environ.get("CC", "cc")) or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler to compare with")
    lines = ['#include <stdio.h>', '#include <stddef.h>', '#include "epochcast.h"', "int main(void) {"]
    want = []
    for s in STRUCTS:
        t = ffi.typeof(s)
        lines.append('printf("%%zu\\n", sizeof(%s));' % s)
        want.append(ffi.sizeof(s))
        for name, field in t.fields:
            lines.append('printf("%%zu\\n", offsetof(%s, %s));' % (s, name))
            want.append(field.offset)
    lines.append("return 0; }")
    src = tmp_path / "layout.c"
    src.write_text("\n".join(lines))
    exe = tmp_path / "layout"
    subprocess.run([cc, "-std=c11", "-I", os.path.join(ROOT, "core", "include"), str(src), "-o", str(exe)],
                   check=True)
    got = [int(x) for x in subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout.split()]
    assert got == want
