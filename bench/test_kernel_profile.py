#!/usr/bin/env python3
"""Tests of bench/kernel_profile.py's kernel groups (no GPU, no PyTorch).

    python3 -m unittest discover -s bench -p 'test_*.py'
"""

import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import kernel_profile  # noqa: E402


class Groups(unittest.TestCase):
    def test_cbtrains_direct_and_filter_kernels_are_convolutions(self):
        g = kernel_profile.group_of
        self.assertEqual(g("void cbt::<unnamed>::direct_conv_kernel<3, 8, 4>(const float *, const float *)"),
                         "conv forward / backward data (direct)")
        for name in ("void cbt::cuda::<unnamed>::wgrad_tile_kernel<3, 1, 1>(const float *)",
                     "void cbt::cuda::<unnamed>::wgrad_partial_kernel<5>(const float *)",
                     "void cbt::cuda::<unnamed>::wgrad_sum_kernel(const float *, float *, int, int)"):
            self.assertEqual(g(name), "conv backward filter", name)
        self.assertEqual(g("sm80_xmma_dgrad_implicit_gemm_f32f32_f32f32_f32_nchwkcrs_nchw"), "conv backward data")
        self.assertEqual(g("void cbt::channel_reduce_kernel<cbt::<unnamed>::ShiftedMoments>"), "batch norm")
        self.assertEqual(g("some_unknown_kernel"), "other")


if __name__ == "__main__":
    unittest.main()
