// libmmtune_blas.so: the standard GEMM entry points of BLAS (Fortran `sgemm_`, `dgemm_`) and CBLAS
// (`cblas_sgemm`, `cblas_dgemm`), computed by the mmtune runtime, so that a program built against
// any BLAS gets tuned GEMMs by linking this library instead, or by LD_PRELOAD in front of its BLAS.
//
// Argument checking follows the reference BLAS and CBLAS exactly: the same checks in the same
// order, an invalid argument reported to `xerbla_` (Fortran) or `cblas_xerbla` (CBLAS) with the
// routine name and the parameter's position, and nothing computed. Default handlers that print
// the reference messages are exported too; a program (or an earlier library) that defines its own
// handler gets its handler called instead, as with any BLAS. docs/runtime.md has the details.
#include <algorithm>
#include <cstdarg>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>

#include "common/log.h"
#include "kernels/reference_gemm.h"
#include "mmtune/runtime.h"

extern "C" {
void xerbla_(const char* routine, const int* info, std::size_t routine_length);
void cblas_xerbla(int info, const char* routine, const char* form, ...);
}

namespace {

// The CBLAS enum values (cblas.h).
constexpr int kCblasRowMajor = 101;
constexpr int kCblasColMajor = 102;
constexpr int kCblasNoTrans = 111;
constexpr int kCblasTrans = 112;
constexpr int kCblasConjTrans = 113;

// The process's runtime: the DB from MMTUNE_DB, opened on the first GEMM. A DB that cannot be
// opened costs one warning and the analytical defaults, never a failed GEMM. Closed at exit,
// which writes the MMTUNE_RECORD file.
mmtune::Runtime* SharedRuntime() {
  static const std::unique_ptr<mmtune::Runtime> runtime = [] {
    mmtune::RuntimeOptions options;
    if (const char* db = std::getenv("MMTUNE_DB"); db != nullptr) options.db_path = db;
    auto opened = mmtune::Runtime::Open(options);
    if (!opened && !options.db_path.empty()) {
      mmtune::Log(mmtune::LogLevel::kWarning,
                  "MMTUNE_DB: " + opened.error().message + "; using the analytical defaults");
      options.db_path.clear();
      opened = mmtune::Runtime::Open(options);
    }
    if (!opened) {
      mmtune::Log(mmtune::LogLevel::kWarning,
                  "cannot start the mmtune runtime (" + opened.error().message +
                      "); GEMMs run on the slow reference loop");
      return std::unique_ptr<mmtune::Runtime>();
    }
    return std::move(*opened);
  }();
  return runtime.get();
}

// Runs a GEMM whose arguments were checked. Should the runtime still refuse (it never should), the
// reference loop computes it: a BLAS call has no way to report an error after its checks.
template <typename T>
void Compute(mmtune::Layout layout, mmtune::Trans trans_a, mmtune::Trans trans_b, int m, int n,
             int k, T alpha, const T* a, int lda, const T* b, int ldb, T beta, T* c, int ldc) {
  if (mmtune::Runtime* runtime = SharedRuntime()) {
    const mmtune::Status status =
        runtime->Gemm(layout, trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
    if (status) return;
    static std::once_flag warned;
    std::call_once(warned, [&] {
      mmtune::Log(mmtune::LogLevel::kWarning,
                  "runtime GEMM failed (" + status.error().message + "); using the reference loop");
    });
  }
  (void)mmtune::ReferenceGemm(layout, trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c,
                              ldc);
}

bool SameLetter(char c, char upper) { return c == upper || c == upper - 'A' + 'a'; }

// Fortran xGEMM's checks, in the reference's order, on column-major arguments. Returns the
// reference's INFO: 0 when valid, else the position of the first bad argument (1 TRANSA,
// 2 TRANSB, 3 M, 4 N, 5 K, 8 LDA, 10 LDB, 13 LDC).
int FortranGemmInfo(char transa, char transb, int m, int n, int k, int lda, int ldb, int ldc) {
  const bool nota = SameLetter(transa, 'N');
  const bool notb = SameLetter(transb, 'N');
  const int nrowa = nota ? m : k;
  const int nrowb = notb ? k : n;
  if (!nota && !SameLetter(transa, 'C') && !SameLetter(transa, 'T')) return 1;
  if (!notb && !SameLetter(transb, 'C') && !SameLetter(transb, 'T')) return 2;
  if (m < 0) return 3;
  if (n < 0) return 4;
  if (k < 0) return 5;
  if (lda < std::max(1, nrowa)) return 8;
  if (ldb < std::max(1, nrowb)) return 10;
  if (ldc < std::max(1, m)) return 13;
  return 0;
}

// The reference's quick return: nothing to do at all.
template <typename T>
bool NothingToDo(int m, int n, int k, T alpha, T beta) {
  return m == 0 || n == 0 || ((alpha == T(0) || k == 0) && beta == T(1));
}

mmtune::Trans TransOf(char letter) {
  return SameLetter(letter, 'N') ? mmtune::Trans::kNo : mmtune::Trans::kYes;
}

template <typename T>
void FortranGemm(const char* routine, const char* transa, const char* transb, const int* m,
                 const int* n, const int* k, const T* alpha, const T* a, const int* lda,
                 const T* b, const int* ldb, const T* beta, T* c, const int* ldc) {
  const int info = FortranGemmInfo(*transa, *transb, *m, *n, *k, *lda, *ldb, *ldc);
  if (info != 0) {
    xerbla_(routine, &info, std::strlen(routine));
    return;
  }
  if (NothingToDo(*m, *n, *k, *alpha, *beta)) return;
  Compute(mmtune::Layout::kColMajor, TransOf(*transa), TransOf(*transb), *m, *n, *k, *alpha, a,
          *lda, b, *ldb, *beta, c, *ldc);
}

// Set while a row-major CBLAS call reports an error, for the default cblas_xerbla (as the
// reference's global RowMajorStrg is).
thread_local bool reporting_row_major_call = false;

// CBLAS xGEMM as the reference implements it: the layout and transposes are checked here, the rest
// by the Fortran checks on the column-major form of the call (row-major swaps A with B and M with
// N), whose INFO plus one (the layout argument comes first) is the position reported. For a
// row-major call that is the position in the column-major call (M reported as 5, N as 4, LDA as
// 11, LDB as 9): handlers swap them back themselves, the reference's default one and those of
// the reference's test programs alike, so reporting the caller's own positions would make them
// swap once too often.
template <typename T>
void CblasGemm(const char* routine, int layout, int trans_a, int trans_b, int m, int n, int k,
               T alpha, const T* a, int lda, const T* b, int ldb, T beta, T* c, int ldc) {
  auto letter = [](int trans) -> char {
    if (trans == kCblasNoTrans) return 'N';
    if (trans == kCblasTrans) return 'T';
    if (trans == kCblasConjTrans) return 'C';
    return '\0';
  };
  if (layout != kCblasRowMajor && layout != kCblasColMajor) {
    cblas_xerbla(1, routine, "Illegal layout setting, %d\n", layout);
    return;
  }
  const char ta = letter(trans_a);
  const char tb = letter(trans_b);
  if (ta == '\0') {
    cblas_xerbla(2, routine, "Illegal TransA setting, %d\n", trans_a);
    return;
  }
  if (tb == '\0') {
    cblas_xerbla(3, routine, "Illegal TransB setting, %d\n", trans_b);
    return;
  }
  const bool row_major = layout == kCblasRowMajor;
  const int info = row_major ? FortranGemmInfo(tb, ta, n, m, k, ldb, lda, ldc)
                             : FortranGemmInfo(ta, tb, m, n, k, lda, ldb, ldc);
  if (info != 0) {
    reporting_row_major_call = row_major;
    cblas_xerbla(info + 1, routine, "");
    reporting_row_major_call = false;
    return;
  }
  if (NothingToDo(m, n, k, alpha, beta)) return;
  Compute(layout == kCblasRowMajor ? mmtune::Layout::kRowMajor : mmtune::Layout::kColMajor,
          TransOf(ta), TransOf(tb), m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

}  // namespace

extern "C" {

// Fortran BLAS. The hidden lengths of the character arguments that Fortran compilers pass are not
// needed: only the first character counts, as in the reference.
void sgemm_(const char* transa, const char* transb, const int* m, const int* n, const int* k,
            const float* alpha, const float* a, const int* lda, const float* b, const int* ldb,
            const float* beta, float* c, const int* ldc) {
  FortranGemm("SGEMM ", transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

void dgemm_(const char* transa, const char* transb, const int* m, const int* n, const int* k,
            const double* alpha, const double* a, const int* lda, const double* b, const int* ldb,
            const double* beta, double* c, const int* ldc) {
  FortranGemm("DGEMM ", transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

void cblas_sgemm(int layout, int trans_a, int trans_b, int m, int n, int k, float alpha,
                 const float* a, int lda, const float* b, int ldb, float beta, float* c, int ldc) {
  CblasGemm("cblas_sgemm", layout, trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

void cblas_dgemm(int layout, int trans_a, int trans_b, int m, int n, int k, double alpha,
                 const double* a, int lda, const double* b, int ldb, double beta, double* c,
                 int ldc) {
  CblasGemm("cblas_dgemm", layout, trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

// The default error handlers print the reference messages. Unlike the reference, which stops the
// program, they return (as OpenBLAS's and MKL's do): the call has computed nothing, and a library
// preloaded into someone else's program should not be the one to end it.
void xerbla_(const char* routine, const int* info, std::size_t routine_length) {
  std::size_t length = routine_length > 0 && routine_length <= 32 ? routine_length
                                                                   : strnlen(routine, 6);
  while (length > 0 && routine[length - 1] == ' ') --length;
  std::fprintf(stderr, " ** On entry to %.*s parameter number %2d had an illegal value\n",
               static_cast<int>(length), routine, *info);
}

void cblas_xerbla(int info, const char* routine, const char* form, ...) {
  // The caller's own position: a row-major GEMM reported its column-major form's.
  if (reporting_row_major_call && std::strstr(routine, "gemm") != nullptr) {
    if (info == 4) info = 5;
    else if (info == 5) info = 4;
    else if (info == 9) info = 11;
    else if (info == 11) info = 9;
  }
  if (info != 0) std::fprintf(stderr, "Parameter %d to routine %s was incorrect\n", info, routine);
  va_list args;
  va_start(args, form);
  std::vfprintf(stderr, form, args);
  va_end(args);
}

}  // extern "C"
