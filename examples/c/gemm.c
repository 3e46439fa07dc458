/* C = A * B through mmtune's C API, checked against a plain loop. Usage: gemm [DB] */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <mmtune/mmtune.h>

int main(int argc, char** argv) {
  enum { M = 64, N = 48, K = 96 };
  static float a[M * K], b[K * N], c[M * N];
  for (int i = 0; i < M * K; ++i) a[i] = (float)(i % 7) - 3.0f;
  for (int i = 0; i < K * N; ++i) b[i] = (float)(i % 5) - 2.0f;

  mmtune_runtime* rt = NULL;
  if (mmtune_open(argc > 1 ? argv[1] : NULL, &rt) != MMTUNE_OK) {
    fprintf(stderr, "gemm: %s\n", mmtune_last_error());
    return 1;
  }
  if (mmtune_sgemm(rt, MMTUNE_ROW_MAJOR, MMTUNE_NO_TRANS, MMTUNE_NO_TRANS, M, N, K, 1.0f, a, K, b,
                   N, 0.0f, c, N) != MMTUNE_OK) {
    fprintf(stderr, "gemm: %s\n", mmtune_last_error());
    mmtune_close(rt);
    return 1;
  }
  mmtune_close(rt);

  for (int i = 0; i < M; ++i) {
    for (int j = 0; j < N; ++j) {
      float want = 0.0f;
      for (int p = 0; p < K; ++p) want += a[i * K + p] * b[p * N + j];
      if (fabsf(c[i * N + j] - want) > 1e-3f) {
        fprintf(stderr, "gemm: C[%d][%d] = %g, expected %g\n", i, j, c[i * N + j], want);
        return 1;
      }
    }
  }
  printf("C API: %dx%dx%d sgemm matches the reference\n", M, N, K);
  return 0;
}
