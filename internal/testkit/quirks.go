package testkit

import (
	"net/http"
	"strings"
	"time"

	"github.com/localtable/localtable"
)

// quirks are the service's time-based behaviours, off unless a test asks.
type quirks struct {
	// deleteDelay is how long a deleted table stays "being deleted";
	// deleted maps a lower-cased table name to when it was deleted.
	deleteDelay time.Duration
	deleted     map[string]time.Time

	throttle *Throttle
	buckets  map[string]*bucket // by scope: "" (the account) or table/partition
}

// Throttle limits the rate of requests, by the server's Clock, as the
// service does above its scalability targets: a request over the limit is
// answered 503 ServerBusy ("Operations per second is over the account
// limit.") and not served. The limit is a token bucket: Burst requests at
// once (default: Rate, at least 1), refilled at Rate per second. Over a
// partition's limit (PerPartition) the message is the service's general
// one, "The server is currently unable to receive requests. Please retry
// your request."
type Throttle struct {
	Rate  float64 // requests per second
	Burst int
	// PerPartition limits each partition (of each table) on its own,
	// as the service's per-partition target does; requests that name no
	// partition are not limited. Otherwise the limit is the account's.
	PerPartition bool
}

type bucket struct {
	tokens float64
	at     time.Time
}

// quirk returns the status and error a quirk answers req with, or a nil
// error.
func (k *Kit) quirk(req *Request) (int, *localtable.Error) {
	now := k.clock.Now()
	k.mu.Lock()
	defer k.mu.Unlock()
	q := &k.quirks
	if q.deleteDelay > 0 && req.Table != "" && req.Op != OpListTables {
		name := strings.ToLower(req.Table)
		if at, ok := q.deleted[name]; ok {
			if now.Before(at.Add(q.deleteDelay)) {
				return serviceError(http.StatusConflict, "TableBeingDeleted", "The specified table is being deleted.")
			}
			delete(q.deleted, name)
		}
	}
	if t := q.throttle; t != nil && t.Rate > 0 {
		scope := ""
		if t.PerPartition {
			switch req.Op {
			case OpInsert, OpUpdate, OpMerge, OpUpsertReplace, OpUpsertMerge, OpDelete, OpGet, OpBatch:
			default:
				return 0, nil
			}
			scope = strings.ToLower(req.Table) + "\x00" + req.PartitionKey
		}
		burst := float64(max(t.Burst, 1))
		if t.Burst == 0 {
			burst = max(t.Rate, 1)
		}
		b := q.buckets[scope]
		if b == nil {
			b = &bucket{tokens: burst, at: now}
			if q.buckets == nil {
				q.buckets = make(map[string]*bucket)
			}
			q.buckets[scope] = b
		}
		if el := now.Sub(b.at); el > 0 {
			b.tokens = min(burst, b.tokens+el.Seconds()*t.Rate)
		}
		b.at = now
		if b.tokens < 1 {
			if t.PerPartition {
				return serviceError(http.StatusServiceUnavailable, "ServerBusy", "The server is currently unable to receive requests. Please retry your request.")
			}
			return serviceError(http.StatusServiceUnavailable, "ServerBusy", "Operations per second is over the account limit.")
		}
		b.tokens--
	}
	return 0, nil
}

// SetDeleteDelay makes a deleted table "being deleted" for d of the
// Clock: every operation naming it is answered 409 TableBeingDeleted
// until then. 0 turns it off.
func (k *Kit) SetDeleteDelay(d time.Duration) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.quirks.deleteDelay = d
}

// SetThrottle limits the request rate by the Clock (see Throttle); nil
// turns the limit off.
func (k *Kit) SetThrottle(t *Throttle) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.quirks.throttle = t
	k.quirks.buckets = nil
}

// ForgetDeleted forgets the tables "being deleted", as after a restore.
func (k *Kit) ForgetDeleted() {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.quirks.deleted = nil
}

// afterServe notes a table deletion the server carried out.
func (k *Kit) afterServe(req *Request, status int) {
	if req.Op != OpDeleteTable || status != http.StatusNoContent {
		return
	}
	now := k.clock.Now()
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.quirks.deleteDelay > 0 {
		if k.quirks.deleted == nil {
			k.quirks.deleted = make(map[string]time.Time)
		}
		k.quirks.deleted[strings.ToLower(req.Table)] = now
	}
}
