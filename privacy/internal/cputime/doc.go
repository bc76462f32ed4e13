// Package cputime reads the CPU time the process has used, for reports
// and benchmarks that give a rate per core-second beside the wall-clock
// one. Process returns 0 where the operating system does not say.
package cputime
