//go:build !unix

package localtable

// cpuTime returns 0: the process's CPU time is read on Unix only.
func cpuTime() int64 { return 0 }
