"""Experiment (device-side): FRAGLAB_X_INTERLEAVE deals K blocks round-robin over a tile's shares."""
import sys
p = sys.argv[1]
s = open(p).read()
old = "  const int count = active ? kb_end - kb_begin : 0;\n"
assert s.count(old) == 1
s = s.replace(old, """#ifdef FRAGLAB_X_INTERLEAVE
  const int count = active ? (k_blocks - share + splits - 1) / splits : 0;
  auto kb_of = [&](int i) { return share + i * splits; };
#else
  const int count = active ? kb_end - kb_begin : 0;
  auto kb_of = [&](int i) { return kb_begin + i; };
#endif
""")
for old, new in (("load_stage(s, kb_begin + s);", "load_stage(s, kb_of(s));"),
                 ("load_stage(next % kStages, kb_begin + next);", "load_stage(next % kStages, kb_of(next));")):
    assert s.count(old) == 1
    s = s.replace(old, new)
open(p, "w").write(s)
