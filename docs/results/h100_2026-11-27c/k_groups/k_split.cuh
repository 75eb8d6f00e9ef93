// Shared by the GEMM kernels that split K between the blocks of a cluster (wgmma.cu's split-K tiles, skinny.cu):
// which K-blocks one share takes.
#pragma once

namespace fraglab {

// Share `share` of `shares` over `k_blocks` K-blocks. Group = 0: one contiguous run per share. Group = G > 0: runs
// of G consecutive K-blocks dealt round-robin (share s takes G * s .. G * s + G - 1, then the same plus
// G * shares, ...), so the shares of a tile read neighbouring pieces of the same weight rows at about the same time.
template <int Group>
struct KShare {
  int first, count;
  int stride;   // Group > 0: K-blocks between one of this share's runs and its next

  __device__ __forceinline__ KShare(int k_blocks, int share, int shares) {
    if constexpr (Group == 0) {
      const int per = (k_blocks + shares - 1) / shares;
      first = share * per;
      count = max(0, min(k_blocks - first, per));
      stride = 0;
    } else {
      stride = Group * shares;
      first = Group * share;
      const int whole = k_blocks / stride, left = k_blocks - whole * stride - first;
      count = whole * Group + min(Group, max(0, left));
    }
  }

  // the K-block of this share's i-th
  __device__ __forceinline__ int at(int i) const {
    if constexpr (Group == 0) {
      return first + i;
    } else {
      return (i / Group) * stride + first + i % Group;
    }
  }
};

}  // namespace fraglab
