//go:build !linux

package tests

// threadCPUTime returns 0: the calling thread's CPU time is read on Linux
// alone.
func threadCPUTime() int64 { return 0 }
