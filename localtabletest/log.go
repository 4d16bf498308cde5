package localtabletest

import "github.com/localtable/localtable/internal/testkit"

// Request is one request the server received, as the request log and
// fault rules see it: what it asked for (Op, Table, PartitionKey, RowKey,
// the operations of a Batch), and, once answered, what the client got
// (Status, ErrorCode), what was injected (Fault, Delay) and whether the
// server applied it (Applied).
type Request = testkit.Request

// RequestLog is a list of requests, oldest first.
type RequestLog = testkit.RequestLog

// Log returns the requests the server has received so far, oldest first:
// every request, faulted or not, with what the client got.
func (s *Server) Log() RequestLog { return s.kit.Log() }

// ResetLog empties the request log; the next request is #1 again.
func (s *Server) ResetLog() { s.kit.ResetLog() }
