package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
)

// runFor calls op(0), op(1), … until d has passed or max calls were made
// (at least one call). It reads the clock about a hundred times in d, not
// after every call, so that fast operations are not timed with the clock's
// own cost. It returns the calls made and the time they took.
func runFor(d time.Duration, max int, op func(i int) error) (int, time.Duration, error) {
	start := time.Now()
	n, stride := 0, 1
	for n < max {
		for j := 0; j < stride && n < max; j++ {
			if err := op(n); err != nil {
				return n, time.Since(start), err
			}
			n++
		}
		el := time.Since(start)
		if el >= d {
			return n, el, nil
		}
		if per := el / time.Duration(n); per > 0 {
			stride = max1(int(d / 100 / per))
		}
	}
	return n, time.Since(start), nil
}

func max1(n int) int {
	if n < 1 {
		return 1
	}
	return n
}

// median returns the median of xs (the mean of the middle two for an even
// count), or 0 for none.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// quantile returns the q-quantile (0..1) of sorted durations, nearest rank.
func quantile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(q*float64(len(sorted))+0.5) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

// clockTick is the unit of utime and stime in /proc/<pid>/stat: USER_HZ,
// 100 on every Linux architecture Go runs on.
const clockTick = 10 * time.Millisecond

// procCPU returns the CPU time (user + system) a process has used, from
// /proc/<pid>/stat.
func procCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name, field 2, is in parentheses and may hold spaces:
	// count fields after its closing parenthesis.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, fmt.Errorf("/proc/%d/stat: no command name", pid)
	}
	f := strings.Fields(string(b[i+1:]))
	// f[0] is field 3 (state); utime and stime are fields 14 and 15.
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f)+2)
	}
	ut, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("/proc/%d/stat: bad utime or stime", pid)
	}
	return time.Duration(ut+st) * clockTick, nil
}

// procStatus returns a field of /proc/<pid>/status in bytes, such as
// VmRSS or VmHWM (the peak RSS). pid 0 means this process.
func procStatus(pid int, field string) (int64, error) {
	path := "/proc/self/status"
	if pid != 0 {
		path = fmt.Sprintf("/proc/%d/status", pid)
	}
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		name, rest, ok := strings.Cut(sc.Text(), ":")
		if !ok || name != field {
			continue
		}
		fs := strings.Fields(rest)
		if len(fs) != 2 || fs[1] != "kB" {
			return 0, fmt.Errorf("%s: %s: unexpected %q", path, field, rest)
		}
		kb, err := strconv.ParseInt(fs[0], 10, 64)
		return kb << 10, err
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, fmt.Errorf("%s: no %s", path, field)
}
