/* A plain C program that uses a BLAS the way applications do (CBLAS and Fortran GEMMs), built once
 * against the system's OpenBLAS and once against libmmtune_blas.so, to show that mmtune works both
 * linked in place of a BLAS and preloaded in front of one (blas_preload_test.sh). It checks its
 * results against naive loops and exits non-zero on any difference. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

void cblas_sgemm(int layout, int trans_a, int trans_b, int m, int n, int k, float alpha,
                 const float* a, int lda, const float* b, int ldb, float beta, float* c, int ldc);
void cblas_dgemm(int layout, int trans_a, int trans_b, int m, int n, int k, double alpha,
                 const double* a, int lda, const double* b, int ldb, double beta, double* c,
                 int ldc);
void sgemm_(const char* ta, const char* tb, const int* m, const int* n, const int* k,
            const float* alpha, const float* a, const int* lda, const float* b, const int* ldb,
            const float* beta, float* c, const int* ldc);

enum { kRowMajor = 101, kColMajor = 102, kNoTrans = 111, kTrans = 112 };

static int failures = 0;

static void check(const char* what, double got, double want, double tolerance) {
  if (fabs(got - want) > tolerance * (1.0 + fabs(want))) {
    if (failures < 5) fprintf(stderr, "%s: got %g, want %g\n", what, got, want);
    ++failures;
  }
}

int main(void) {
  enum { M = 67, N = 45, K = 129 };
  float* a = malloc(sizeof(float) * M * K);
  float* b = malloc(sizeof(float) * K * N);
  float* c = malloc(sizeof(float) * M * N);
  double* ad = malloc(sizeof(double) * M * K);
  double* bd = malloc(sizeof(double) * K * N);
  double* cd = malloc(sizeof(double) * M * N);
  for (int i = 0; i < M * K; ++i) ad[i] = a[i] = (float)((i * 7 % 13) - 6) / 8.0f;
  for (int i = 0; i < K * N; ++i) bd[i] = b[i] = (float)((i * 5 % 11) - 5) / 4.0f;

  /* Row-major C = A * B. */
  cblas_sgemm(kRowMajor, kNoTrans, kNoTrans, M, N, K, 1.0f, a, K, b, N, 0.0f, c, N);
  for (int i = 0; i < M; ++i) {
    for (int j = 0; j < N; ++j) {
      double want = 0;
      for (int p = 0; p < K; ++p) want += (double)a[i * K + p] * b[p * N + j];
      check("cblas_sgemm row NN", c[i * N + j], want, 1e-5);
    }
  }
  /* Column-major C = A^T * B with A stored K x M. */
  cblas_dgemm(kColMajor, kTrans, kNoTrans, M, N, K, 2.0, ad, K, bd, K, 0.0, cd, M);
  for (int i = 0; i < M; ++i) {
    for (int j = 0; j < N; ++j) {
      double want = 0;
      for (int p = 0; p < K; ++p) want += ad[i * K + p] * bd[j * K + p];
      check("cblas_dgemm col TN", cd[j * M + i], 2.0 * want, 1e-12);
    }
  }
  /* Fortran: C (M x N, col-major) = A (M x K) * B (K x N), then C += same. */
  {
    const char n = 'N';
    const int m = M, nn = N, k = K;
    const float one = 1.0f, zero = 0.0f;
    sgemm_(&n, &n, &m, &nn, &k, &one, a, &m, b, &k, &zero, c, &m);
    sgemm_(&n, &n, &m, &nn, &k, &one, a, &m, b, &k, &one, c, &m);
    for (int i = 0; i < M; ++i) {
      for (int j = 0; j < N; ++j) {
        double want = 0;
        for (int p = 0; p < K; ++p) want += (double)a[p * M + i] * b[j * K + p];
        check("sgemm_ NN", c[j * M + i], 2.0 * want, 1e-5);
      }
    }
  }
  free(a); free(b); free(c); free(ad); free(bd); free(cd);
  if (failures != 0) {
    fprintf(stderr, "blas_client: %d wrong elements\n", failures);
    return 1;
  }
  printf("blas_client: all results correct\n");
  return 0;
}
