//go:build unix

package tests

import (
	"syscall"
	"testing"
)

// reportCPU reports the process's CPU time (user and system) per op since
// start (a cpuTime reading), as "cpu-ns/op": on a machine that other work
// shares, a steadier figure than the wall time.
func reportCPU(b *testing.B, start int64) {
	if end := cpuTime(); start > 0 && end > 0 {
		b.ReportMetric(float64(end-start)/float64(b.N), "cpu-ns/op")
	}
}

// cpuTime returns the CPU time this process has used, in nanoseconds, or 0
// if it cannot tell.
func cpuTime() int64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
