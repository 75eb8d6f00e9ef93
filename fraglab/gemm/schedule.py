"""The wgmma GEMM's schedule for one problem, as data: which block tile, and how far L2 widens the tensor maps'
fetches, for (M, N, K, input type, B's order, D's type). CPU only; `wgmma.spec_for` asks `choose` and every rule
below has its test (tests/gemm/test_wgmma_schedule.py).

The rules, first match wins (block-scaled e4m3 first: rule `block_scales` below) (f16, bias per column + ReLU, D f16, TFLOP/s; H100 80GB HBM3 2026-11-25, raw timings
in docs/results/h100_2026-11-25b/gemm/, and H200 2026-11-26, docs/results/h200_2026-11-26/gemm/):

00. `swap_ab`: 16-bit inputs and D, A row-major, rows at 32-byte pitches, K >= 4096, and M of 65-96, 129-160 or
   161-192 rows, which 64- and 128-row tiles of A pad: the kernel computes D^T = B^T A^T on a swapped tile
   (wgmma.TileConfig.swap_ab): the weight's rows as wgmma's M, A's rows as its N (one tile of 96 columns, or two of
   80 or 96), D^T stored back into D's rows through stmatrix .trans. The candidates (SWAP_AB_TILES), first fit
   wins: a tile whose blocks on the swapped problem (N x M) fill more than half a wave and no more than one.
   65-96 rows: 64x96pk2t (split-K clusters), then 64x96pkb2t. 129-160: two token tiles of 80 in a cluster that
   shares the weight's tile by multicast (each block loads half of it), 64-row weight tiles (64x80pkb2n2t), then
   128-row ones (128x80n2t), then 128x160t (one token tile) where its tiles fill 0.8 of a wave or more, any number
   of waves (N 10240 / 11008: 80 / 86 tiles lose 1-3 % to 64x256p's 120-129 blocks). 161-192: the same with token
   tiles of 96 (64x96pkb2n2t, 128x96n2t), then 128x192t as 128x160t (H100 2026-11-28 01:56 UTC,
   `docs/results/h100_2026-11-28/ab_192t.log`, us, 128x192t / the rules before (128x224 column-major, 128x256
   row-major) / torch.mm, B column- / row-major: 168x57344x8192 372.8 / 378.6 / 343.5, 372.3 / 426.2 / 335.4;
   192x57344x8192 387.0 / 380.5 / 358.0, 375.4 / 427.9 / 350.9; 192x28672x4096 96.6 / 98.9 / 97.2, 96.9 / 101.9 /
   96.4; 168x14336x8192 94.2 / 99.7 / 90.8, 90.2 / 92.0 / 86.4: ahead at 22 of 24 problems of M 168 / 192, N 14336 /
   28672 / 57344, K 4096 / 8192, 2 % and 1 % behind at 192x57344x8192 column-major and 192x14336x4096 row-major). H100 2026-11-27 21:5x-22:4x UTC (`docs/results/h100_2026-11-27h/`,
   `ab_swap2.log`, `ab_swap6.log`, `ab_swap11.log`), us per launch, weights rotated past L2, the swapped tile / the
   rules before / torch.mm, B column- / row-major:
   80x4096x4096 64x96pk2t 19.2 / 21.9 / 17.7, 18.6 / 21.2 / 17.1; 80x4096x14336 48.5 / 52.5 / 50.3, 46.0 / 51.8 /
   48.6; 96x4096x11008 39.2 / 40.9 / 42.7; 80x6144x4096 64x96pkb2t 24.6 / 25.8 / 23.7, 24.0 / 25.5 / 23.7;
   80x8192x28672 168.3 / 173.9 / 175.7; 160x4096x4096 64x80pkb2n2t 20.6 / 22.5 / 18.2, 20.3 / 22.1 / 18.2;
   160x4096x14336 55.0 / 62.9 / 54.9, 53.2 / 61.9 / 52.8; 160x6144x4096 128x80n2t 26.9 / 29.3 / 24.8, 26.2 / 29.6 /
   23.7; 160x8192x28672 179.2 / 187.7 / 184.1, 160.9 / 186.5 / 175.3; 160x28672x4096 128x160t 93.4 / 104.4 / 96.9,
   92.9 / 104.6 / 90.5; 160x57344x8192 363.4 / 386.3 / 358.8, 356.2 / 409.0 / 328.8;
   192x4096x4096 64x96pkb2n2t 21.2 / 22.6 / 19.1, 20.5 / 22.3 / 19.2 (64x96pkb2t, no multicast, 21.7 / 21.3);
   192x4096x14336 56.7 / 61.7 / 57.6, 55.1 / 61.0 / 78.9 (64x96pkb2t 59.2 / 58.2); 192x4096x11008 46.8 / 51.1 / 57.6,
   43.6 / 48.4 / 62.4; 192x6144x4096 128x96n2t 27.7 / 29.8 / 25.3, 26.5 / 29.9 / 29.2;
   192x8192x8192 55.6 / 58.1 / 55.9, 52.0 / 56.3 / 53.9. Not swapped (measured the same way): M 97-128
   (64x128pk2t and 128x128t lose 1-13 %), 65-96 past one wave of 64-row tiles (level or behind: 128x96t 89.1
   against 128x224's 88.1 at 80x28672x4096). Not taken: one token tile of 160 where two of 80 fit (64x160pk2t
   58.0, 64x160pt 28.4 / 185.9 at the problems above), and 80-column token tiles for 65-80 rows (64x80pk2t 1 %
   ahead of 64x96pk2t at N 4096).
0. `split_k`: M <= 128, f16 / bf16, rows at 32-byte pitches, K >= the tile's SPLIT_K_MIN_K, and so few tiles
   that a cluster of two blocks per tile still fits one wave (<= SMs / 2 tiles): the tile's K-blocks split between
   the two blocks of a cluster, the second block's sums added in the first (64x64pk2 for M <= 64, 128x64k2 above):
   twice the SMs stream the weight. N 4096, weight column-major, us, split / one block per tile (64x64p) /
   torch.mm (docs/results/h100_2026-11-26b/gemm/): H100 (05:14 UTC) M 64 K 4096 20.0 / 20.0 / 17.4, K 8192
   31.5 / 33.0 / 32.2, K 14336 48.7 / 53.8 / 49.1; M 128 (128x64k2) K 4096 21.0 / 20.4 / 17.7, K 8192 33.2 / 33.9
   / 29.6, K 14336 51.6 / 54.1 / 54.3. H200 (05:20 UTC): M 64 K 4096 16.3 / 19.7 / 14.6, K 14336 36.6 / 53.7 /
   39.2; M 128 K 4096 18.1 / 20.1 / 16.9, K 8192 28.1 / 33.6 / 27.6. So 64x64pk2 from K 4096 (even on the H100,
   well ahead on the H200), and 128x64k2 from K 4096 too: at K 4096 that H100 lost 2-3% (the cluster's launch and
   hand-over cost about a microsecond), but another H100 (2026-11-26 11:3x UTC, B column- / row-major) gains 5-9%
   (21.1 / 20.5 against 64x64p's 22.1 / 22.5; torch.mm 17.9 / 17.8) and the H200 17% (18.6 / 18.3 against 22.4 /
   22.3). For M <= 64 in stages of two K-blocks (64x64pk2kb2; H100 2026-11-27 14:24-14:27 UTC, us, B column- /
   row-major, against 64x64pk2: K 4096 18.29 / 17.95 against 19.07 / 18.46, K 11008 37.55 / 36.75 against 38.21 /
   37.84, K 14336 46.88 / 46.00 against 47.52 / 46.96; `docs/results/h100_2026-11-27f/`). 128x64k2 keeps one:
   with two, three stages fit (21.06 against 20.00 at M 128, K 4096).
1. `one_row_tile`: M <= 64 takes a ping-pong 64-row tile (no padding rows; each consumer streams its own tile of
   the weight): 64x64p where its tiles fit one wave (f16 / bf16; more SMs streaming the weight: H200 01:1x UTC,
   M = 64, N = K = 4096, us, 64x64p / 64x256p / skinny GEMM: B column-major 19.8 / 28.4 / 26.1, row-major
   20.7 / 31.9 / 25.3), else 64x256p: M = 1 / 16, weight B column-major, TB/s of weight bytes, 64x256p /
   128x128 / 128x64 (H100): N 14336 K 4096 2.58 / 2.28 / 1.82; N 4096 K 14336 1.41 / 1.36 / 1.25. With a
   column-major B (nn.Linear's weight) and 16-bit inputs 64x128p instead (H100 2026-11-26 15:56 UTC, M 64, us,
   64x128p / 64x256p / torch.mm, docs/results/h100_2026-11-26e/gemm/): N 11008 K 4096 / 11008 / 14336 37.6 / 40.9
   / 36.8, 89.8 / 96.0 / 90.6, 112.0 / 121.7 / 123.1; N 14336 46.6 / 48.1 / 46.2, 115.0 / 116.8 / 114.0, 141.6 /
   147.7 / 143.0; a row-major B kept 64x256p (N 11008 K 11008 92.6 / 88.9, N 14336 K 14336 144.2 / 140.6). Now
   64x128pkb2 for both (64x128 in four stages of two K-blocks; H100 2026-11-27 14:27 UTC, us, against the tile
   before): B column-major N 11008 K 4096 / 11008 37.47 / 91.04 against 64x128p's 37.66 / 91.65, N 14336 K 4096 /
   14336 46.13 / 142.54 against 46.72 / 143.17; row-major N 11008 36.70 / 86.50 against 64x256p's 38.21 / 89.34,
   N 14336 45.50 / 142.94 against 46.66 / 141.50. 64x64p in stages of two K-blocks too (64x64pkb2; H100
   2026-11-27 14:44 UTC, us, against 64x64p): M 64, N 4096, K 2048 12.54 / 13.98; N 8192, K 4096 29.09 / 30.14, K
   14336 (B row-major) 84.06 / 84.22; M 40, K 2048 12.61 / 13.87. The same in rule `few_tiles` below.
2. `sector_misaligned_rows`: a row pitch of A, B or D that is not a multiple of 32 bytes (one L2 sector) makes
   every other row of a TMA box start mid-sector (two L2 lines, five sectors for four); L2 promotion off then
   reads fewer bytes (H100, 3000^3 128x256: 355 with 256-byte promotion, 401 without). What wins back the rest is
   B crossing from L2 to the SMs once per cluster of two blocks (f16 / bf16; H200, 01:2x UTC, promotion off,
   against torch._addmm_activation): 3000^3 128x192c2 637 (0.95x), 128x256c2 520, one-block 128x192 487;
   5000x3000x2000 128x192c2 637 (0.95x), 128x256c2 622, 128x256 545. Then fewer bytes per multiply-add: L2's
   bandwidth bounds these tiles (128x192c2 at 3000^3 moves about 6.4 TB/s of sectors), and a 192x192 tile in
   clusters of two (three consumer warpgroups; cuBLAS runs 192x192 in clusters of two here) reads 16% fewer per
   multiply-add (H100 07:55 UTC, promotion 128B: 3000^3 192x192c2 629 (0.98x), 128x192c2 570). The tile: the
   cluster tile whose waves do the most useful work at its rate (TILE_RATE_MISALIGNED), or, where 128x128 tiles
   fit one wave, 64x128pc2 where its units of two fit one wave of clusters too (H200 1000^3: 205 against 128x128's
   173), else 128x128 in clusters of two (H100 08:18 UTC, B row- / column-major: 1000x2000x1000 281 / 277 against
   64x128pc2's 238 / 231; H200 08:33: 327 against 266). Counted in units, not tiles: 800x1200 has 130 tiles of
   64x128, but 13 row tiles make 70 units of two, past the 66 clusters of one wave (H100 2026-11-27 02:53 UTC, us,
   B row- / column-major: 64x128pc2 15.7 / 16.1, 128x128c2 13.3 / 13.4; K 3000: 34.2 / 34.7 against 25.7 / 26.5).
   Not taken: 128x128 in clusters of 2x2 (A and B multicast, half the bytes of 64x128pc2 on half the SMs): 1000^3
   184 / 181 against 175 / 175 on the H100, but 195 against 207 on the H200.
   e4m3 keeps one-block 128x256 / 128x128 (TILE_RATE_MISALIGNED_FP8), or 128x64 where its tiles fit one wave. The
   operands stay on TMA: the kernel's copy loader (wgmma.LOADS 'copy': cp.async 16-byte chunks into the swizzled
   stages) measured slower than TMA on each shape (H100 22:09 UTC,
   benchmarks/wgmma_ragged.py --loaders, copy / TMA: 3000^3 128x192 351 / 419; 1000^3 128x64 145 / 128x128 166).
3. `row_padding`: 64 < M <= 192 where the last 128-row tile would have at least ROW_PADDING_MIN_ROWS rows past M
   (M 65-96 and 129-192; f16 / bf16, rows at 32-byte pitches). TMA fills a box's rows past M with zeros, and that
   costs: 128x64 at M 72 / 88 / 104 / 112 / 128, N 6144, K 4096 takes 33.0 / 30.6 / 27.2 / 25.7 / 25.9 us, where
   64x128pc2 takes 26.1-26.4 throughout (`between3_F.log`); past 128 rows the 128-row tiles also compute 256 rows
   where 64-row ones compute 192. The first of 64x128pkb2 (stages of two K-blocks; it replaced 64x128pc2, pairs of
   row tiles sharing B by multicast: H100 2026-11-27 14:27 UTC, us, 160x4096x4096 B row-major 22.11 against 23.63,
   160x4096x14336 61.92 / 64.48, 192x4096x4096 22.54 / 23.65, 192x4096x14336 row-major 60.34 / 66.40, 80x6144x4096
   25.92 / 26.30, 96x6144x4096 row-major 25.50 / 25.38), 64x192p and
   64x256p (past 128 rows only) whose blocks fit one wave and fill at least half of it (ROW_PADDING_TILES); where
   none does (N 14336 at M 160: 168 tiles of 64x256), the rules below. Split-K (rule 0) takes such M from K 6144
   only (SPLIT_K_MIN_K_PADDED: M 80, N 4096, us, 128x64k2 / 64x64p: K 4096 23.9 / 21.4, K 6144 29.0 / 29.1, K 8192
   32.1 / 36.8; M 72 K 4096 24.8 / 22.3; M 96 22.1 / 21.5). H100 2026-11-27 12:06-12:09 UTC
   (`fraglab gemm --tune` over M 136-224, docs/results/h100_2026-11-27e/between/, us, B column-major, the rule's
   tile / the rules before / torch.mm): M 160, N 4096, K 4096 64x128pc2 23.6 / 35.2 (128x64) / 18.3, K 14336 65.1 /
   106.6 / 55.6; N 6144 64x192p 29.1 / 38.9 (128x128) / 24.9; N 8192 64x192p 33.2 / 44.5 / 30.9; N 11008 64x256p
   41.6 / 47.5 (128x192) / 40.0; M 192, N 4096, K 14336 65.6 / 96.3 / 70.1; a row-major B alike (M 160, N 4096:
   23.8 / 34.1; N 11008 39.4 / 45.6). Past 192 rows the 128-row tiles pad less (M 224, N 4096: 128x64 23.4 against
   64x128pc2's 24.2; rule `few_tiles` now takes 64x128pkb2 there, 22.9). M 65-96 (`between3_F.log`,
   `tune_batch_F.txt`): M 80, N 6144, K 4096 64x128pc2 26.2 / 32.1 (128x64) / 23.6; N 8192, K 8192 M 72 55.2 /
   63.3 / 50.9; N 10240, K 8192 64x192p 65.7 / 73.8 (128x128) / 75.6; M 104 and up keep 128x64 within 1-4 % either
   way.
3b. `row_pairs`: where rule `waves` below gives 128x128, M is two 128-row tiles (128 < M <= 256) and their pairs fit
   one wave of clusters of two, 128x128c2: the two row tiles of a column share its B by multicast, so B crosses from
   L2 to the SMs once (f16 / bf16). H100 2026-11-27 18:2x UTC, us, 128x128c2 / 128x128 / torch.mm, B column- /
   row-major (`docs/results/h100_2026-11-27g/ab_m200_256.log`): 256x8192x28672 195.4 / 211.2 / 187.6, 187.0 / 210.0
   / 183.7; 256x8192x8192 59.9 / 61.7 / 57.3, 56.1 / 60.0 / 54.3; 224x7168x28672 185.0 / 189.6 / 180.1, 170.7 /
   186.2 / 164.0;
   ahead at all 16 problems of M 224 / 256, N 7168 / 8192, K 8192 / 28672, both orders (2-18 %), and at M 200 / 256,
   N 5120-8192, K 2048-14336 (`ab_rules2.log`: 256x5120x14336 row-major 75.3 / 84.6 / 64.7, 200x6144x14336 88.0 /
   97.8 / 76.0) but one, level (200x8192x2048 row-major 20.6 / 20.5).
4. `waves`: when 128x64 tiles would not fit one wave, the tile of 128x256 / 128x192 / 128x128 whose
   waves do the most useful work: (M x N) / (whole waves x SMs x tile area) x the tile's measured rate
   (`useful_share`; 128x192 for 16-bit inputs only). H100: 3072^3: 128x256 2.18 waves, 570; 128x128 4.36 waves,
   594; 4096^3: 746 / 641; rows at 128-byte pitches (18:34 UTC): 3000^3 128x192 (2.91 waves) 632, 128x128 539,
   128x256 515. H200 (01:2x UTC): 3072^3 128x192 728 (0.99x Lt),
   4095x4096x4096 128x256 765 (1.01x). With a column-major B (K-major: one box of the tile's rows, any multiple of 8)
   and 16-bit inputs also 128x224, 128x160 and 128x96 (TILE_RATE_K_MAJOR_B), whose column counts fill the waves the
   64-multiples leave part-filled: H100 2026-11-27 17:53 UTC, us, the new tile / the rule's before / torch.mm
   (`docs/results/h100_2026-11-27g/ab_rules.log`): 256x57344x8192 128x224 389.0 / 442.9 (128x256) / 376.9;
   192x57344x8192 371.1 / 415.1 / 355.3; 512x28672x4096 172.5 / 207.2 / 170.8; 512x14336x4096 86.5 / 93.8 / 91.2;
   256x10240x8192 128x160 73.1 / 78.2 (128x192) / 71.4; 1024x10240x4096 128x224 127.6 / 136.7 (128x128) / 119.9;
   256x6144x4096 128x96 28.6 / 31.4 (128x128) / 26.2; 128x11008x14336 114.9 / 117.3 / 113.4. Level (within 0.5 %)
   at M 80-128 with N 28672 / 57344; one loss: 512x3072x4096 128x96 36.6 against 128x128's 35.0.
   A row-major B at M 193-1024 takes 128x224r the same way (224 columns in a slot of four 64-column boxes;
   TILE_RATE_ROW_MAJOR_B) where its tiles make more than one wave: 768x14336x4096 129.0 us against 128x256's
   143.9 (torch.mm 144.6), 256x57344x8192 388.3 against 425.2 (404.2).
5. `few_tiles`: otherwise (128x64 tiles fit one wave) a small tile: 64x64pkb2 (64x64p in stages of two
   K-blocks: H100 2026-11-27 14:44 UTC, us, against 64x64p, N 4096: M 128, K 2048 12.61 / 13.95; M 80 / 88 / 96, K
   4096 21.71 / 20.22 / 19.97 against 22.14 / 21.86 / 22.16; M 72 23.94 / 22.40) for f16 / bf16 where its tiles fit
   one wave too (H200, M = 128, N = 4096, us, 64x64p / 128x64: K 4096 20.0 / 22.0, K 11008 42.9 / 48.1, K 14336
   54.0 / 60.3, B column-major; N = 8192, K = 4096: 256 tiles of 64x64, 33.8 / 25.3), else 64x128pkb2 where its tiles
   fit one wave (H100 2026-11-27 18:2x UTC, us, 64x128pkb2 / 128x64 / torch.mm, B column-major,
   `ab_m200_256.log`: 256x4096x4096 23.2 / 23.8 / 21.5, 256x4096x14336 63.5 / 66.5 / 63.5, 200x4096x14336 65.9 / 92.6 /
   57.3, 224x3072x14336 57.6 / 63.1 / 48.6; ahead at all 24 problems of M 200-256, N
   3072 / 4096, K 4096 / 14336, both orders, and at M 320-1024 with N 1024 / 2048, e.g. 320x2048x14336 55.6 / 66.1 /
   40.9, `ab_rules2.log`) past 128 rows (FEW_TILES_ONE_ROW_M: at M 112 / 128 one row of 128x64 tiles is ahead at K
   14336, 128x6144x14336 72.0 / 74.0, and level at K 2048), else 128x64 (H100, M = 128,
   N = K = 4096: 128x64 212, 128x128 167; 1000^3 with rows at 128-byte pitches: 128x64 213, 128x128 195).

`block_scales` (e4m3 with DeepGEMM's 1x128 / 128x128 scales): the kernel keeps a second accumulator for each
   K-block's product, so only tiles of at most 64 accumulators per consumer thread hold it (wgmma.TileConfig
   .holds_block_scales; BLOCK_SCALE_TILES). Decode M as rule 0 does: split-K where a cluster of two per tile
   fits (64x64pk2, or 128x64k2 past 64 rows; K >= 4096), else 64x64p for M <= 64; then 128x128, or 128x64 where
   128x128 tiles would leave SMs idle. H100 2026-11-26 11:59 UTC (benchmarks/wgmma_fp8_block.py, D bf16,
   TFLOP/s, the rule's tile / 128x64 or 128x128): M 64, N 2112, K 7168 129 / 78; N 4096, K 7168 208 / 143; N
   24576, K 1536 (64x64p) 238 / 205; M 128, N 4096, K 7168 (128x64k2) 371 / 280, N 2112 (64x64pk2) 248 / 153; N 7168, K 16384 (128x64) 518,
   best of the others 497; M 4096: 128x128 732-889 (128x64 508-643).

Before these, which kernel (`choose_kernel`, its test in tests/gemm/test_skinny.py):
`skinny_split_k`: f16 / bf16 with a row-major A go to the skinny GEMM (kernels/gemm/skinny.cu: K split across
clusters, the weight streamed once) for M <= SKINNY_MAX_M. H100, 2026-11-25, f16, bias + ReLU, D f16, weight
column-major, us, skinny / 64x256p (benchmarks/skinny_decode.py): M 16 N 4096 K 4096 18.6 / 29.4, N 14336 K 14336
145.0 / 146.0; M 128 N 11008 K 11008 232.0 / 92.8 (128x128): past 32 rows the skinny GEMM's mma.sync tiles read A
once per 64 columns and lose; at M = 64 the wgmma 64x64p tile beats it (rule 1's numbers).
"""

from __future__ import annotations

from dataclasses import dataclass

from .dtypes import BYTES as _BYTES
from .wgmma_tiles import TILES

SM_COUNT = 132
SECTOR_BYTES = 32
ONE_ROW_TILE_M = 64
# (rows, columns, vertically adjacent tiles per cluster) of the launcher's tiles, which the rules count (for a
# swapped tile: the kernel's tile of D^T, bm of D's columns by bn of its rows)
TILE_SHAPES = {name: (tile.bm, tile.bn, tile.cluster_m) for name, tile in TILES.items()}
# Rate of a tile relative to the first (TFLOP/s / useful_share), measured at 4096^3 (128x128: 641 / 746) and at
# 3000^3 with 128-byte row pitches (128x192: 632 / 0.925 against 128x256: 515 / 0.694)
TILE_RATE = {"128x256": 1.0, "128x192": 0.92, "128x128": 0.86}
# Tiles between the 64-column multiples, B column-major (K-major) only (rule `waves`), f16 / bf16. H100 2026-11-27
# 17:49-17:53 UTC, us (`docs/results/h100_2026-11-27g/`): 2048x28672x4096 (both 15.5 waves, the same useful share)
# 128x224 752 against 128x256 740: 0.984, taken as 0.97 so that near-level shares (8192^3: 0.997 against 0.970)
# keep 128x256; one wave of them against the tile the rule took, 256x10240x8192 128x160 73.1 against 128x192's 77.8
# (rate 0.815 by the share model), 256x6144x4096 128x96 28.6 against 128x128's 31.2 (0.70).
TILE_RATE_K_MAJOR_B = {"128x224": 0.97, "128x160": 0.80, "128x96": 0.70}
# The same for a row-major B: 128x224r (B's 224 columns in a slot of four 64-column boxes), for M in
# ROW_MAJOR_B_WIDE_M and more than one wave of its tiles only. H100 2026-11-28 02:20 UTC, us, 128x224r / 128x256 /
# torch.mm (`docs/results/h100_2026-11-28/ab_224r.log`): 256x57344x8192 388.3 / 425.2 / 404.2, 384x28672x4096 137.4
# / 147.2 / 147.5, 512x28672x4096 172.0 / 187.8 / 174.4, 768x14336x4096 129.0 / 143.9 / 144.6, 1024x14336x4096
# 170.4 / 185.6 / 171.0, 1024x10240x8192 248.5 / 276.9 (128x192 282.7) / 231.0, 1024x14336x14336 595.5 / 675.3 /
# 635.1, 256x28672x4096 104.9 / 105.3 / 102.2; within one wave behind (200x14336x4096 56.5 / 50.2, 256x14336x4096
# 52.2 / 51.9); at 2048x28672x4096 (the same share) 804.8 / 722.4 and at M 80-192 behind (80x28672x4096 91.3 /
# 87.6; 2026-11-27 18:4x UTC, `docs/results/h100_2026-11-27g/ab_row_major_wide.log`). 128x160r and 128x96r are not
# taken (1024x5120x4096 128x160r 81.1 against 128x192's 68.7; 128x11008x4096 128x96r 39.6 against 128x128's 38.5).
TILE_RATE_ROW_MAJOR_B = {"128x224r": 0.93}
ROW_MAJOR_B_WIDE_M = (192, 1024)   # rows past the first, up to the second
# With sector-misaligned rows, f16 / bf16 (H200, 2026-11-26 01:2x UTC, promotion off, TFLOP/s / useful_share):
# 3000^3: 128x192c2 637 / 0.925, 128x256 447 / 0.694, 128x128 392 / 0.832; 5000x3000x2000: 637 / 0.925,
# 545 / 0.867, 456 / 0.867. (128x256c2 would rate 1.09 but is not a launcher tile: 520 at 3000^3, 622 here.)
# 192x192c2 (H100, 2026-11-26 07:55 UTC): 3000^3 629 / 0.925 against 128x192c2's 570 / 0.925; 5000x3000x2000
# 543 / 0.771 against 591 / 0.925 (both rate 1.10 against 1.0 there).
TILE_RATE_MISALIGNED = {"128x192c2": 1.0, "192x192c2": 1.10, "128x256": 0.92, "128x128": 0.68}
# e4m3 (one-block tiles; the clusters and n192 are unmeasured for 8-bit inputs), 3000^3 H100 2026-11-25 18:34 UTC:
# 128x192: 419 / 0.925, 128x128: 324 / 0.832 against 128x256: 386 / 0.694
TILE_RATE_MISALIGNED_FP8 = {"128x256": 1.0, "128x128": 0.70}
# launcher tiles measured for 16-bit inputs only
SIXTEEN_BIT_ONLY = ("128x192", "128x192c2", "192x192c2", "64x128pc2", "64x64p", "64x64pk2", "128x64k2", "128x128c2",
                    "64x128p", "64x192p", "64x64pk2kb2", "64x128pkb2",
                    "64x64pkb2", "128x224", "128x160", "128x96", "64x96pk2t", "64x96pkb2t", "128x160t",
                    "128x96n2t", "64x96pkb2n2t", "64x80pkb2n2t", "128x80n2t", "128x192t", "128x224r")
L2_PROMOTIONS = ("none", "64B", "128B", "256B")
DEFAULT_L2_PROMOTION = "256B"
RULES = ("block_scales", "swap_ab", "split_k", "one_row_tile", "sector_misaligned_rows", "row_padding", "row_pairs", "waves",
         "few_tiles")
SPLIT_K_MIN_K = {"64x64pk2kb2": 4096, "128x64k2": 4096}   # the split-K tile for M <= 64 / above, from this K
SPLIT_K_BLOCK_SCALES_MIN_K = 4096   # rule block_scales' split-K tiles (one K-block a stage: 64x64pk2, 128x64k2)
SPLIT_K_MAX_M = 128
BLOCK_SCALE_TILES = ("128x128", "128x64", "64x64p", "64x64pk2", "128x64k2")   # what rule block_scales picks
ROW_PADDING_MIN_ROWS = 32   # rule row_padding: the last 128-row tile has at least this many rows past M ...
ROW_PADDING_MAX_M = 192      # ... and 64 < M <= this
# its candidates, narrowest first, each from this many rows on (64x256p: past 128; at M 80 / 96, N 14336 it trails
# 128x128 by 1-2 %)
ROW_PADDING_TILES = {"64x128pkb2": 64, "64x192p": 64, "64x256p": 128}
SPLIT_K_MIN_K_PADDED = 6144   # 128x64k2's shortest K where rule row_padding's padding applies (M <= 96)
ROW_PAIRS_M = (128, 256)      # rule row_pairs: M of exactly two 128-row tiles (measured at 200-256)
FEW_TILES_ONE_ROW_M = 128     # rule few_tiles: up to this M one 128x64 row of tiles beats 64x128pkb2 at long K

@dataclass(frozen=True)
class SwappedChoice:
    """One candidate of rule swap_ab: `tile` where the swapped problem (N x M) makes more than `min_fill` of a wave of
    blocks (the tile's split-K clusters count two a tile) and, if `one_wave`, no more than one wave, from K `min_k`
    on."""
    tile: str
    min_k: int = 4096
    min_fill: float = 0.5
    one_wave: bool = True


# rule swap_ab: (first, last) row of A -> its candidates, first fit wins (tokens in one tile of 96 / 160 / 192
# columns, or in two of 80 / 96)
SWAP_AB_TILES = {
    (65, 96): (SwappedChoice("64x96pk2t"), SwappedChoice("64x96pkb2t")),
    (129, 160): (SwappedChoice("64x80pkb2n2t"), SwappedChoice("128x80n2t"),
                 SwappedChoice("128x160t", min_fill=0.8, one_wave=False)),
    (161, 192): (SwappedChoice("64x96pkb2n2t"), SwappedChoice("128x96n2t"),
                 SwappedChoice("128x192t", min_fill=0.8, one_wave=False)),
}
SKINNY_RULE = "skinny_split_k"   # choose_kernel's one rule
SKINNY_MAX_M = 32


@dataclass(frozen=True)
class Schedule:
    tile: str             # a key of fraglab.gemm.wgmma.TILES
    l2_promotion: str     # CU_TENSOR_MAP_L2_PROMOTION_* of the A, B and D maps
    rule: str             # which rule of RULES chose it


def tile_count(m: int, n: int, bm: int, bn: int) -> int:
    return -(-m // bm) * -(-n // bn)


def wave_efficiency(tiles: int, sm_count: int = SM_COUNT) -> float:
    """The share of the SMs' tile slots the persistent grid fills: tiles / (whole waves x SMs)."""
    return tiles / (-(-tiles // sm_count) * sm_count)


def row_pitches(m: int, n: int, k: int, dtype: str, b_order: str, out_dtype: str,
                a_order: str = "C") -> tuple[int, int, int]:
    """Row pitch in bytes of A (M x K row-major, or K x M for a column-major A), B (K x N row-major, or N x K for
    a column-major B) and D (M x N)."""
    size = _BYTES[dtype]
    return (k if a_order == "C" else m) * size, (n if b_order == "C" else k) * size, n * _BYTES[out_dtype]


def sector_aligned(m: int, n: int, k: int, dtype: str, b_order: str, out_dtype: str, a_order: str = "C") -> bool:
    return all(p % SECTOR_BYTES == 0 for p in row_pitches(m, n, k, dtype, b_order, out_dtype, a_order))


def cluster_units(m: int, n: int, bm: int, bn: int, cluster: int = 1) -> int:
    """Units the persistent grid walks: `cluster` vertically adjacent bm x bn tiles each (an odd count of row tiles
    leaves the last unit's second tile past M). A wave holds SMs // cluster of them."""
    return tile_count(m, n, bm * cluster, bn)


def useful_share(m: int, n: int, bm: int, bn: int, sm_count: int = SM_COUNT, cluster: int = 1) -> float:
    """The share of the tile slots of the persistent grid's whole waves that hold D's elements (not padding past
    M and N, not idle SMs in the last wave): M x N / (waves x SMs x bm x bn). With clusters, a wave is
    SMs / cluster units of `cluster` vertically adjacent tiles."""
    units = cluster_units(m, n, bm, bn, cluster)
    slots = sm_count // cluster
    waves = -(-units // slots)
    return m * n / (waves * slots * cluster * bm * bn)


def _best_tile(m: int, n: int, sm_count: int, rates: dict[str, float]) -> str:
    """The tile of `rates` whose waves do the most useful work at its measured rate (ties: the first)."""
    scores = {}
    for name, rate in rates.items():
        bm, bn, cluster = TILE_SHAPES[name]
        scores[name] = useful_share(m, n, bm, bn, sm_count, cluster) * rate
    return max(scores, key=lambda name: (scores[name], -list(rates).index(name)))


def swapped_tile(m: int, n: int, k: int, sm_count: int = SM_COUNT) -> str | None:
    """Rule swap_ab's tile for M x N x K (16-bit, A row-major, aligned rows, D 16-bit: the caller's conditions), or
    None where the rule does not apply."""
    rows = next((r for r in SWAP_AB_TILES if r[0] <= m <= r[1]), None)
    if rows is None:
        return None
    for choice in SWAP_AB_TILES[rows]:
        tile = TILES[choice.tile]
        blocks = tile_count(n, m, tile.bm, tile.bn) * tile.cluster_k   # the kernel's problem is D^T: N x M
        if (k >= choice.min_k and blocks > choice.min_fill * sm_count
                and (blocks <= sm_count or not choice.one_wave)):
            return choice.tile
    return None


def choose(m: int, n: int, k: int, dtype: str = "f16", b_order: str = "C", out_dtype: str = "f32",
           sm_count: int = SM_COUNT, a_order: str = "C", block_scaled: bool = False) -> Schedule:
    """The schedule of one problem (the rules in this module's docstring, in order)."""
    sixteen_bit = dtype in ("f16", "bf16")
    aligned = sector_aligned(m, n, k, dtype, b_order, out_dtype, a_order)
    promotion = DEFAULT_L2_PROMOTION if aligned else "none"
    if block_scaled:
        if m <= SPLIT_K_MAX_M and k >= SPLIT_K_BLOCK_SCALES_MIN_K:
            for split in ("64x64pk2",) if m <= ONE_ROW_TILE_M else ("64x64pk2", "128x64k2"):
                bm, bn, _ = TILE_SHAPES[split]
                if tile_count(m, n, bm, bn) <= sm_count // 2:
                    return Schedule(split, promotion, "block_scales")
        if m <= ONE_ROW_TILE_M:
            return Schedule("64x64p", promotion, "block_scales")
        return Schedule("128x128" if tile_count(m, n, 128, 128) >= sm_count else "128x64", promotion, "block_scales")
    padded = ONE_ROW_TILE_M < m <= ROW_PADDING_MAX_M and -m % 128 >= ROW_PADDING_MIN_ROWS
    if sixteen_bit and aligned and a_order == "C" and out_dtype in ("f16", "bf16"):
        swapped = swapped_tile(m, n, k, sm_count)
        if swapped is not None:
            return Schedule(swapped, promotion, "swap_ab")
    if sixteen_bit and aligned and m <= SPLIT_K_MAX_M:
        tile = "64x64pk2kb2" if m <= ONE_ROW_TILE_M else "128x64k2"
        bm, bn, _ = TILE_SHAPES[tile]
        min_k = SPLIT_K_MIN_K_PADDED if padded else SPLIT_K_MIN_K[tile]
        if k >= min_k and tile_count(m, n, bm, bn) <= sm_count // 2:   # two blocks per tile
            return Schedule(tile, promotion, "split_k")
    if m <= ONE_ROW_TILE_M:
        if sixteen_bit and tile_count(m, n, 64, 64) <= sm_count:
            return Schedule("64x64pkb2", promotion, "one_row_tile")
        return Schedule("64x128pkb2" if sixteen_bit else "64x256p", promotion, "one_row_tile")
    if not aligned:
        if sixteen_bit:
            one_wave = sm_count // 2   # clusters of two (either fitting implies 128x128 tiles fit one wave)
            if cluster_units(m, n, *TILE_SHAPES["64x128pc2"]) <= one_wave:
                tile = "64x128pc2"
            elif cluster_units(m, n, *TILE_SHAPES["128x128c2"]) <= one_wave:
                tile = "128x128c2"
            else:
                tile = _best_tile(m, n, sm_count, TILE_RATE_MISALIGNED)
        else:
            few = tile_count(m, n, 128, 64) <= sm_count
            tile = "128x64" if few else _best_tile(m, n, sm_count, TILE_RATE_MISALIGNED_FP8)
        return Schedule(tile, promotion, "sector_misaligned_rows")
    if sixteen_bit and padded:
        for tile, past_m in ROW_PADDING_TILES.items():
            bm, bn, cluster = TILE_SHAPES[tile]
            blocks = cluster_units(m, n, bm, bn, cluster) * cluster
            if m > past_m and sm_count / 2 <= blocks <= sm_count:
                return Schedule(tile, promotion, "row_padding")
    if tile_count(m, n, 128, 64) > sm_count:
        rates = TILE_RATE if sixteen_bit else {t: r for t, r in TILE_RATE.items() if t not in SIXTEEN_BIT_ONLY}
        if sixteen_bit and b_order == "F":
            rates = {**rates, **TILE_RATE_K_MAJOR_B}
        elif sixteen_bit and ROW_MAJOR_B_WIDE_M[0] < m <= ROW_MAJOR_B_WIDE_M[1]:
            # within one wave of its own tiles a row-major slot tile's blocks are no faster
            rates = {**rates, **{t: r for t, r in TILE_RATE_ROW_MAJOR_B.items()
                                 if tile_count(m, n, *TILE_SHAPES[t][:2]) > sm_count}}
        tile = _best_tile(m, n, sm_count, rates)
        if (sixteen_bit and tile == "128x128" and ROW_PAIRS_M[0] < m <= ROW_PAIRS_M[1]
                and cluster_units(m, n, 128, 128, 2) <= sm_count // 2):
            return Schedule("128x128c2", promotion, "row_pairs")
        return Schedule(tile, promotion, "waves")
    if sixteen_bit and tile_count(m, n, 64, 64) <= sm_count:
        return Schedule("64x64pkb2", promotion, "few_tiles")
    if sixteen_bit and m > FEW_TILES_ONE_ROW_M and tile_count(m, n, 64, 128) <= sm_count:
        return Schedule("64x128pkb2", promotion, "few_tiles")
    return Schedule("128x64", promotion, "few_tiles")


def choose_kernel(m: int, n: int, k: int, dtype: str = "f16", b_order: str = "C", out_dtype: str = "f32",
                  a_order: str = "C") -> str:
    """'skinny' (kernels/gemm/skinny.cu) or 'wgmma' (the tile `choose` gives): rule `skinny_split_k`."""
    del n, k, b_order, out_dtype   # both orders of B, K and D's types measured alike (docs/skinny-gemm.md)
    if dtype not in ("f16", "bf16") or a_order != "C":
        return "wgmma"
    return "skinny" if m <= SKINNY_MAX_M else "wgmma"


__all__ = ["Schedule", "choose", "swapped_tile", "choose_kernel", "SKINNY_RULE", "SKINNY_MAX_M", "RULES", "SPLIT_K_MIN_K", "L2_PROMOTIONS", "DEFAULT_L2_PROMOTION", "wave_efficiency", "tile_count", "cluster_units", "useful_share",
           "row_pitches", "sector_aligned"]
