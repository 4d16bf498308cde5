package localtable_test

// The helpers of these suites and of package tests (../tests) are in
// internal/tabletest, one copy for both.

import "context"

var ctx = context.Background()
