// Package provenance names the code and the day a benchmark's results came
// from, so that a table made from a result file can say which commit and
// which date its numbers belong to (bench/report.py prints both).
//
// Commit is the git commit of the source tree the command was built from:
// the revision the Go toolchain stamped into the binary when it did, else
// what git reports for the working directory, with "+dirty" when tracked
// files differ from it. Date is the day in UTC.
package provenance
