"""bench/isa_cap.py: --isa read in either spelling before argparse, and the AVX2 caps it sets."""

import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.environ["ET_OPS_SOURCE_ROOT"], "bench"))
import isa_cap  # noqa: E402


class IsaCapTest(unittest.TestCase):
    def applied(self, argv):
        environ = {"PATH": "/usr/bin"}
        isa = isa_cap.apply(["script.py"] + argv, environ)
        return isa, environ

    def test_both_spellings_cap_every_library(self):
        for argv in (["--isa=avx2"], ["--isa", "avx2"], ["--runs", "3", "--isa", "avx2", "--json", "x.json"]):
            with self.subTest(argv=argv):
                isa, environ = self.applied(argv)
                self.assertEqual(isa, "avx2")
                self.assertEqual(environ["ONEDNN_MAX_CPU_ISA"], "AVX2")
                self.assertEqual(environ["ATEN_CPU_CAPABILITY"], "avx2")
                self.assertEqual(environ["ET_OPS_XNNPACK_MAX_ISA"], "avx2")
                self.assertEqual(environ["ET_OPS_SIMD_MAX_ISA"], "avx2")
                self.assertEqual(environ["PATH"], "/usr/bin")

    def test_native_and_absent_leave_the_environment(self):
        for argv in ([], ["--isa=native"], ["--isa", "native"], ["--models", "tiny"]):
            with self.subTest(argv=argv):
                isa, environ = self.applied(argv)
                self.assertEqual(isa, "native")
                self.assertEqual(environ, {"PATH": "/usr/bin"})

    def test_other_values_are_returned_for_argparse_to_reject(self):
        isa, environ = self.applied(["--isa", "avx512"])
        self.assertEqual(isa, "avx512")
        self.assertNotIn(isa, isa_cap.CHOICES)
        self.assertEqual(environ, {"PATH": "/usr/bin"})
        # A trailing --isa without a value is argparse's to report too.
        self.assertEqual(self.applied(["--isa"])[0], "native")


if __name__ == "__main__":
    unittest.main()
