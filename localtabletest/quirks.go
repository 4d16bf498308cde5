package localtabletest

import "github.com/localtable/localtable/internal/testkit"

// Throttle limits the rate of requests, by the server's Clock, as the
// service does above its scalability targets: a request over the limit is
// answered 503 ServerBusy ("Operations per second is over the account
// limit.") and not served. The limit is a token bucket: Burst requests at
// once (default: Rate, at least 1), refilled at Rate per second. Over a
// partition's limit (PerPartition) the message is the service's general
// one, "The server is currently unable to receive requests. Please retry
// your request."
type Throttle = testkit.Throttle
