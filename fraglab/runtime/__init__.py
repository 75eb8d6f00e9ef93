"""The only wing that touches CuPy and NVRTC: lazy GPU access, kernel builds, toolkit discovery, offline compile."""
