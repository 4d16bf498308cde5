//go:build unix

package server_test

import (
	"syscall"
	"testing"
	"time"
)

// reportCPU starts counting the process's CPU time (user and system, GC
// included); the func it returns reports it per op as cpu-ns/op. On a
// machine other work shares, CPU time per op is steadier than time per
// op, which counts the waits for a core too.
func reportCPU(b *testing.B) func() {
	start := cpuTime()
	return func() {
		if b.N > 0 {
			b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op")
		}
	}
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
