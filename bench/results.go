package main

import "time"

// results are the raw figures of a run, written as results.json.
type results struct {
	Mode     string            `json:"mode"`
	Command  string            `json:"command"`
	Started  time.Time         `json:"started"`
	Seconds  float64           `json:"seconds"`
	Machine  machine           `json:"machine"`
	Versions map[string]string `json:"versions"`
	Config   config            `json:"config"`
	// Embedded has one figure per workload and system.
	Embedded []figure `json:"embedded"`
	// Memory is the heap and RSS per entity of the in-memory stores.
	Memory []memFigure `json:"memory"`
	// OrPlan is the cost of filters of N or-ed point lookups.
	OrPlan []figure `json:"or_plan"`
	// EmbeddedApart says how Embedded, Memory and OrPlan were measured
	// when apart from the rest of the run (-embedded-only).
	EmbeddedApart *apartRun `json:"embedded_apart,omitempty"`
	// HTTP has one figure per workload and server; Servers one per server.
	HTTP    []httpFigure   `json:"http"`
	Servers []serverFigure `json:"servers"`
	// HTTPApart says how HTTP, Servers and the index's HTTP figures were
	// measured when apart from the rest of the run (-http-only).
	HTTPApart *apartRun `json:"http_apart,omitempty"`
	// Feed has the change feed's figures.
	Feed *feedResults `json:"feed,omitempty"`
	// Scaling has the figures of each system at several sizes (-scale).
	Scaling *scaleResults `json:"scaling,omitempty"`
	// Index has the secondary index's figures.
	Index *indexResults `json:"index,omitempty"`
	// IndexBuild has the index build's figures (indexbuild.go).
	IndexBuild *indexBuildResults `json:"index_build,omitempty"`
	// Ratios are the comparisons of the summary, localtable over peer.
	Ratios []ratio `json:"ratios"`
	// Skipped says what was not measured, and why.
	Skipped []string `json:"skipped,omitempty"`
}

// machine describes where the run happened.
type machine struct {
	NProc    int    `json:"nproc"`
	CPU      string `json:"cpu"`
	MemTotal int64  `json:"mem_total_bytes"`
	OS       string `json:"os"`
	Arch     string `json:"arch"`
	Kernel   string `json:"kernel"`
	// LoadStart and LoadEnd are /proc/loadavg's 1, 5 and 15 minute
	// averages when the run began and ended: how busy the machine was.
	LoadStart string `json:"loadavg_start"`
	LoadEnd   string `json:"loadavg_end"`
}

// figure is one workload on one system: the time per operation in each
// round (interleaved with the other systems' rounds) and their median.
type figure struct {
	Workload string    `json:"workload"`
	System   string    `json:"system"`
	NsPerOp  []float64 `json:"ns_per_op"`
	Ops      []int     `json:"ops"`
	Median   float64   `json:"median_ns_per_op"`
	// Conflicts per successful operation, for the contended update.
	Conflicts float64 `json:"conflicts_per_op,omitempty"`
}

// memFigure is the memory an in-memory store holds per entity once
// loaded: the live heap after a GC, and the process's RSS after returning
// free memory to the OS.
type memFigure struct {
	System        string  `json:"system"`
	Entities      int     `json:"entities"`
	HeapPerEntity float64 `json:"heap_bytes_per_entity"`
	RSSPerEntity  float64 `json:"rss_bytes_per_entity"`
}

// httpFigure is one workload on one server over HTTP through the Go SDK,
// with Workers concurrent clients: per round the operations, their
// throughput, the server's CPU time per operation (from /proc/<pid>/stat)
// and the latency quantiles seen by the clients; Median* are the medians
// over rounds.
type httpFigure struct {
	Workload    string    `json:"workload"`
	Server      string    `json:"server"`
	Ops         []int     `json:"ops"`
	OpsPerSec   []float64 `json:"ops_per_sec"`
	CPUPerOpNs  []float64 `json:"cpu_ns_per_op"`
	P50Ns       []float64 `json:"p50_ns"`
	P99Ns       []float64 `json:"p99_ns"`
	MedOpsSec   float64   `json:"median_ops_per_sec"`
	MedCPUPerOp float64   `json:"median_cpu_ns_per_op"`
	MedP50      float64   `json:"median_p50_ns"`
	MedP99      float64   `json:"median_p99_ns"`
	Conflicts   float64   `json:"conflicts_per_op,omitempty"`
}

// serverFigure describes a server process: its version, how long it took
// to become ready and to load the data set, and its peak RSS (VmHWM).
type serverFigure struct {
	Server      string  `json:"server"`
	Version     string  `json:"version"`
	StartupMs   float64 `json:"startup_ms"`
	LoadSeconds float64 `json:"load_seconds"`
	LoadCPUSecs float64 `json:"load_cpu_seconds"`
	RSSLoaded   int64   `json:"rss_after_load_bytes"`
	PeakRSS     int64   `json:"peak_rss_bytes"`
}

// ratio is localtable's figure over a peer's for one workload: below 1,
// localtable is faster (or smaller).
type ratio struct {
	Group    string  `json:"group"`
	Workload string  `json:"workload"`
	A        string  `json:"localtable"`
	B        string  `json:"peer"`
	Metric   string  `json:"metric"`
	Value    float64 `json:"value"`
	// Lo and Hi are the smallest and largest of the per-round ratios
	// whose median Value is (equal to Value for a single figure): the
	// spread a conclusion drawn from Value must exceed.
	Lo float64 `json:"lo,omitempty"`
	Hi float64 `json:"hi,omitempty"`
}

// apartRun describes a section measured apart from the rest of the run.
type apartRun struct {
	Command   string    `json:"command"`
	Version   string    `json:"version"`
	Started   time.Time `json:"started"`
	LoadStart string    `json:"loadavg_start,omitempty"`
	LoadEnd   string    `json:"loadavg_end,omitempty"`
}
