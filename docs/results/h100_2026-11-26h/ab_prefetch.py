import dataclasses, os, sys
sys.path.insert(0, ".")
from fraglab.gemm import skinny, wgmma
if os.environ.get("NO_WEIGHT_PREFETCH") == "1":
    for cls, opt in ((wgmma.WgmmaKernelSpec, "-DFRAGLAB_WGMMA_WEIGHT_PREFETCH=0"),
                     (skinny.SkinnyKernelSpec, "-DFRAGLAB_SKINNY_WEIGHT_PREFETCH=0")):
        def build(self, orig=cls.build, opt=opt):
            b = orig(self)
            return dataclasses.replace(b, options=tuple(b.options) + (opt,))
        cls.build = build
from fraglab.cli.main import main
sys.argv = ["fraglab"] + sys.argv[1:]
main()
