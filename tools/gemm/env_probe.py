"""What the device machine offers fraglab's GEMM code: versions, bf16 in CuPy, torch, tools."""
import shutil

from fraglab import gemm_wmma, gpu, peak

cp = gpu.cupy()
print(gpu.device_info())
print("bf16 numpy dtype usable in CuPy:", gemm_wmma.bf16_numpy_dtype(cp))
print("torch:", gemm_wmma.torch_available())
print("cuobjdump:", peak.find_tool("cuobjdump"), "nvdisasm:", peak.find_tool("nvdisasm"), "nvcc:", peak.find_tool("nvcc"))
try:
    import cuda.bindings  # noqa: F401
    print("cuda.bindings: yes")
except ImportError:
    print("cuda.bindings: no")
print("compute-sanitizer:", shutil.which("compute-sanitizer") or "/usr/local/cuda/bin/compute-sanitizer?")
