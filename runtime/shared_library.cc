// libmmtune.so has no code of its own: CMake needs one source for a shared library, and the
// whole runtime archive is linked in (runtime/CMakeLists.txt), exported through libmmtune.map.
