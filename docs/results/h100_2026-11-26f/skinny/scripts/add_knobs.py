"""Timing-only knobs (device-side): FRAGLAB_KNOB_NOCOMPUTE skips the k-steps, FRAGLAB_KNOB_NOACOPY skips A's copies."""
import sys
p = sys.argv[1]
s = open(p).read()
old = "    for (int kq = 0; kq < Grid::kKSteps; ++kq) {"
assert s.count(old) == 1
s = s.replace(old, "#ifdef FRAGLAB_KNOB_NOCOMPUTE\n    if (count < 0)\n#endif\n" + old)
old = "    for (int idx = tid; idx < a_rows * 8; idx += kThreads) {"
assert s.count(old) == 1
s = s.replace(old, "#ifdef FRAGLAB_KNOB_NOACOPY\n    if (k0 < 0)\n#endif\n" + old)
open(p, "w").write(s)
