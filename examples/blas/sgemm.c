/* A program written for the Fortran BLAS: column-major C = A * B with sgemm_, here served by
 * libmmtune_blas.so (its DB comes from MMTUNE_DB; analytical defaults without one). */
#include <math.h>
#include <stdio.h>

void sgemm_(const char* transa, const char* transb, const int* m, const int* n, const int* k,
            const float* alpha, const float* a, const int* lda, const float* b, const int* ldb,
            const float* beta, float* c, const int* ldc);

int main(void) {
  enum { M = 37, N = 53, K = 71 };
  static float a[M * K], b[K * N], c[M * N];
  for (int i = 0; i < M * K; ++i) a[i] = (float)(i % 9) - 4.0f;
  for (int i = 0; i < K * N; ++i) b[i] = (float)(i % 4) - 1.5f;
  const int m = M, n = N, k = K;
  const float one = 1.0f, zero = 0.0f;
  sgemm_("N", "N", &m, &n, &k, &one, a, &m, b, &k, &zero, c, &m);
  for (int j = 0; j < N; ++j) {
    for (int i = 0; i < M; ++i) {
      float want = 0.0f;
      for (int p = 0; p < K; ++p) want += a[i + p * M] * b[p + j * K];
      if (fabsf(c[i + j * M] - want) > 1e-3f) {
        fprintf(stderr, "sgemm: C(%d,%d) = %g, expected %g\n", i, j, c[i + j * M], want);
        return 1;
      }
    }
  }
  printf("BLAS: %dx%dx%d sgemm_ through libmmtune_blas matches the reference\n", M, N, K);
  return 0;
}
