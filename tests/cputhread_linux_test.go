package tests

import "syscall"

// threadCPUTime returns the CPU time the calling thread has used, in
// nanoseconds, or 0 if it cannot tell. A goroutine locked to its thread
// (runtime.LockOSThread) reads its own work with it, without the
// background work of the process (an engine's compactions, the garbage
// collector's workers).
func threadCPUTime() int64 {
	var ru syscall.Rusage
	if syscall.Getrusage(1 /* RUSAGE_THREAD */, &ru) != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
