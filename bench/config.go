package main

import "time"

// config sizes a run. The modes differ only in sizes and durations: every
// mode runs every workload.
type config struct {
	Mode string `json:"mode"`
	// Data is the embedded data set; HTTPData the one loaded into each
	// server (smaller, since a server is loaded through its API).
	Data     shape `json:"data"`
	HTTPData shape `json:"http_data"`
	// Rounds is how many times each workload runs on each system,
	// interleaved (A, B, then B, A…); figures are the median over rounds.
	Rounds int `json:"rounds"`
	// Phase is how long one workload runs on one system in one round;
	// HTTPPhase the same over HTTP.
	Phase     time.Duration `json:"phase_ns"`
	HTTPPhase time.Duration `json:"http_phase_ns"`
	// Workers is the number of concurrent clients: the HTTP workers and
	// the goroutines of the contended update.
	Workers int `json:"workers"`
	// OrTerms are the sizes of the or-of-point-lookups filters planned.
	OrTerms []int `json:"or_terms"`
	// MaxOps bounds the operations of one phase (the keys of write
	// workloads are made in advance, outside the timed loop).
	MaxOps int `json:"max_ops"`
	// Azurite runs the Azurite column when node and npm are present;
	// InstallTimeout bounds npm's install of it.
	Azurite        bool          `json:"azurite"`
	InstallTimeout time.Duration `json:"install_timeout_ns"`
	// FeedDeliveries is how many inserts one round of the feed's
	// delivery latency times; FeedCatchUp how many changes back a
	// watcher catches up from.
	FeedDeliveries int `json:"feed_deliveries"`
	FeedCatchUp    int `json:"feed_catch_up"`
	// FeedWriteRounds is how many rounds the feed's write cost runs:
	// more than Rounds, since its ratios (feed on ÷ off, against a
	// target of 1.10) are of a few percent, and one round's moves by
	// ±0.1 on a shared machine.
	FeedWriteRounds int `json:"feed_write_rounds"`
	// IndexBuildEntities is the size of the table the index build's
	// workloads build an index on.
	IndexBuildEntities int `json:"index_build_entities"`
}

// fullConfig is the standard workload: 200,000 entities.
func fullConfig() config {
	return config{
		Mode:               "full",
		Data:               shape{Parts: 100, Rows: 2000},
		HTTPData:           shape{Parts: 10, Rows: 2000},
		Rounds:             7,
		Phase:              700 * time.Millisecond,
		HTTPPhase:          2 * time.Second,
		Workers:            8,
		OrTerms:            []int{10, 100, 1000},
		MaxOps:             1 << 18,
		Azurite:            true,
		InstallTimeout:     5 * time.Minute,
		FeedDeliveries:     2000,
		FeedCatchUp:        1_000_000,
		FeedWriteRounds:    15,
		IndexBuildEntities: 1_000_000,
	}
}

// quickConfig has the same shapes at 10,000 entities and short phases,
// for CI and a first look.
func quickConfig() config {
	c := fullConfig()
	c.Mode = "quick"
	c.Data = shape{Parts: 5, Rows: 2000}
	c.HTTPData = shape{Parts: 2, Rows: 2000}
	c.Rounds = 3
	c.Phase = 150 * time.Millisecond
	c.HTTPPhase = 400 * time.Millisecond
	c.MaxOps = 1 << 16
	c.FeedDeliveries = 500
	c.FeedCatchUp = 100_000
	c.FeedWriteRounds = c.Rounds
	c.IndexBuildEntities = 50_000
	return c
}

// tinyConfig is for the test: every workload, on a few hundred entities,
// for a few milliseconds each.
func tinyConfig() config {
	c := quickConfig()
	c.Mode = "tiny"
	c.Data = shape{Parts: 3, Rows: 300}
	c.HTTPData = shape{Parts: 2, Rows: 200}
	c.Phase = 5 * time.Millisecond
	c.HTTPPhase = 30 * time.Millisecond
	c.MaxOps = 2000
	c.OrTerms = []int{10, 100}
	c.InstallTimeout = 2 * time.Minute
	c.FeedDeliveries = 30
	c.FeedCatchUp = 2000
	c.IndexBuildEntities = 3000
	return c
}
