// `mmtune`: wiring only; every command lives in its own file under cli/.
#include <string>
#include <vector>

#include "cli/app.h"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  mmtune::cli::Context context;
  return mmtune::cli::RunMmtune(args, context);
}
