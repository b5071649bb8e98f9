package gbs

// Version is the release version of gbs. The one version number lives in
// include/gbs.h (GBS_VERSION_MAJOR, _MINOR, _PATCH), from which the C
// library, the Python package and the CMake and pkg-config files take
// theirs; Go cannot read a header at build time, so this constant repeats
// it and TestVersionMatchesHeader keeps the two equal.
const Version = "0.1.0"
