package filter

// Exported for the external tests.
var (
	RefKeyRanges    = refKeyRanges
	MaxNarrowGrowth = maxNarrowGrowth
)
