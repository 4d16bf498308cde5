// Package tablequeue is a message queue stored in a localtable table, with
// the semantics of an Azure Storage queue that the design guide's
// queue-based patterns rely on: a dequeued message is hidden, not deleted,
// for a visibility timeout; it reappears if its worker does not delete it in
// time; its dequeue count says how often that happened; and only the holder
// of the latest pop receipt can delete it.
//
// # Layout
//
// A queue is one partition of the table (PartitionKey = the queue's name), so
// many queues can share a table. A message is an entity with RowKey
// "msg_<ID>", where the ID is the enqueue time in 100 ns ticks, zero-padded to
// 19 digits, then "_" and 16 random hex digits: the partition's RowKey order
// is enqueue order, and Dequeue takes the oldest visible message first.
// Order is FIFO for one Queue handle (its enqueue times strictly increase,
// even when the clock stalls) and FIFO-ish across handles, whose clocks and
// random suffixes break ties.
//
// The queue's poison queue lives in the same partition, under RowKey
// "poison_<ID>". Moving a message there is one entity group transaction
// (delete the message, insert its poison copy), so a poisoned message is
// never in both queues, nor in neither.
//
// # Concurrency
//
// Dequeue claims a message by an update conditioned on the ETag it read:
// of two dequeuers that read the same visible message, one update succeeds
// and the other fails with UpdateConditionNotSatisfied and moves on to the
// next message, so no message is handed to two workers at once. The new
// ETag is the message's pop receipt; Delete is conditioned on it, so a worker
// whose timeout expired, and whose message another worker has since
// dequeued, cannot delete it (ErrPopReceiptMismatch).
//
// Dequeue reads the partition from its oldest message, checking visibility
// on each: hidden messages at the head of a long queue cost a read each.
//
// All times (enqueue, visibility) come from the Queue's clock
// (Options.Clock), not from the table: workers on different machines must
// have clocks that agree to well within the visibility timeout. Tests and
// simulations inject a ManualClock and never sleep.
//
// A Queue is safe for concurrent use by many goroutines, and any number of
// Queue handles, in any number of processes sharing the store, may work on
// one queue.
package tablequeue

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/filter"
)

// Errors of the Azure Queue service's meaning, with its error codes.
// Errors returned by this package wrap them: test with errors.Is.
var (
	// ErrMessageNotFound: the message does not exist (it was deleted, or
	// moved to the poison queue).
	ErrMessageNotFound = &localtable.Error{Code: "MessageNotFound",
		Message: "The specified message does not exist."}
	// ErrPopReceiptMismatch: the message exists but the pop receipt is not
	// its latest: it was dequeued again since (or never dequeued).
	ErrPopReceiptMismatch = &localtable.Error{Code: "PopReceiptMismatch",
		Message: "The specified pop receipt did not match the pop receipt for a dequeued message."}
	// ErrInvalidQueueName: the name breaks the service's queue naming rules.
	ErrInvalidQueueName = &localtable.Error{Code: "InvalidResourceName",
		Message: "The specified resource name contains invalid characters."}
	// ErrOutOfRange: an option is outside the range the service allows.
	ErrOutOfRange = &localtable.Error{Code: "OutOfRangeQueryParameterValue",
		Message: "One of the query parameters specified in the request URI is outside the permissible range."}
)

// Defaults and limits, as the Queue service and the WebJobs queue trigger
// have them.
const (
	DefaultVisibilityTimeout = 30 * time.Second   // Get Messages' default
	MaxVisibilityTimeout     = 7 * 24 * time.Hour // Get Messages' maximum
	DefaultMaxDequeueCount   = 5                  // the WebJobs queue trigger's default
)

// Options configure a Queue. The zero Options are the defaults.
type Options struct {
	// VisibilityTimeout is how long a dequeued message stays hidden: 0 means
	// DefaultVisibilityTimeout; otherwise it must be positive and at most
	// MaxVisibilityTimeout.
	VisibilityTimeout time.Duration
	// MaxDequeueCount is how many times a message may be dequeued: the
	// dequeue that would be its MaxDequeueCount+1st moves it to the poison
	// queue instead of returning it. 0 means DefaultMaxDequeueCount; a
	// negative value means no limit (messages are never poisoned).
	MaxDequeueCount int
	// Clock is the source of enqueue and visibility times; nil means
	// time.Now.
	Clock func() time.Time
}

// Message is a message as Dequeue or Peek returns it. It is a copy: changing
// it changes nothing stored.
type Message struct {
	// ID names the message in its queue, and in its poison queue if it is
	// moved there. It sorts by enqueue time.
	ID string
	// Body is the message's content, as enqueued.
	Body string
	// InsertedAt is when the message was enqueued.
	InsertedAt time.Time
	// NextVisible is when the message becomes visible again (for a message
	// Dequeue returned: when its worker's lease expires).
	NextVisible time.Time
	// DequeueCount is how many times the message has been dequeued,
	// including the dequeue that returned it.
	DequeueCount int
	// PopReceipt is the receipt Delete requires; only Dequeue sets it.
	PopReceipt string
}

// Property names of a message entity.
const (
	propBody    = "Body"
	propInsert  = "InsertedAt"
	propVisible = "VisibleAt"
	propCount   = "DequeueCount"
)

// RowKey prefixes of live and poisoned messages.
const (
	msgPrefix    = "msg_"
	poisonPrefix = "poison_"
)

// Queue is a handle to one queue in a table. See the package documentation
// for its layout and guarantees.
type Queue struct {
	tbl     *localtable.Table
	name    string
	prefix  string // msgPrefix, or poisonPrefix for a poison queue
	timeout time.Duration
	max     int // < 0: no limit
	now     func() time.Time
	poison  *Queue // nil for a poison queue

	mu   sync.Mutex
	last int64 // the last enqueue time this handle used, in ticks
}

// New returns a handle to the queue name stored in tbl; the table must
// exist. A queue has no existence of its own beyond its messages: a new
// handle to an existing name sees that queue's messages. The name follows
// the service's rules: 3 to 63 lowercase letters, digits and dashes,
// beginning and ending with a letter or digit, with no two dashes in a row.
func New(tbl *localtable.Table, name string, opts *Options) (*Queue, error) {
	if err := validateName(name); err != nil {
		return nil, err
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	switch {
	case o.VisibilityTimeout == 0:
		o.VisibilityTimeout = DefaultVisibilityTimeout
	case o.VisibilityTimeout < 0 || o.VisibilityTimeout > MaxVisibilityTimeout:
		return nil, fmt.Errorf("tablequeue: VisibilityTimeout %v is not in (0, %v]: %w", o.VisibilityTimeout, MaxVisibilityTimeout, ErrOutOfRange)
	}
	if o.MaxDequeueCount == 0 {
		o.MaxDequeueCount = DefaultMaxDequeueCount
	}
	if o.Clock == nil {
		o.Clock = time.Now
	}
	q := &Queue{tbl: tbl, name: name, prefix: msgPrefix, timeout: o.VisibilityTimeout, max: o.MaxDequeueCount, now: o.Clock}
	q.poison = &Queue{tbl: tbl, name: name, prefix: poisonPrefix, timeout: o.VisibilityTimeout, max: -1, now: o.Clock}
	return q, nil
}

func validateName(name string) error {
	bad := func(why string) error {
		return fmt.Errorf("tablequeue: queue name %q %s: %w", name, why, ErrInvalidQueueName)
	}
	if len(name) < 3 || len(name) > 63 {
		return bad("is not 3 to 63 characters long")
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
		case c == '-':
			if i == 0 || i == len(name)-1 {
				return bad("begins or ends with a dash")
			}
			if name[i-1] == '-' {
				return bad("has two dashes in a row")
			}
		default:
			return bad("has a character other than a lowercase letter, a digit or a dash")
		}
	}
	return nil
}

// Name returns the queue's name; a poison queue's name is its queue's name
// followed by "-poison".
func (q *Queue) Name() string {
	if q.poison == nil {
		return q.name + "-poison"
	}
	return q.name
}

// Poison returns the queue's poison queue, where messages dequeued more than
// MaxDequeueCount times go. It is a queue like any other (dequeue a message
// to investigate it, delete it when done) except that it never poisons its
// own messages. The poison queue of a poison queue is nil.
func (q *Queue) Poison() *Queue { return q.poison }

// rowKey returns the RowKey of the message id in q.
func (q *Queue) rowKey(id string) string { return q.prefix + id }

// keyRange returns the filter selecting q's messages.
func (q *Queue) keyRange() *filter.Filter {
	// The prefixes end in '_'; '`' is the next byte.
	end := q.prefix[:len(q.prefix)-1] + "`"
	return filter.And(filter.PartitionKey().Eq(q.name), filter.RowKey().Ge(q.prefix), filter.RowKey().Lt(end))
}

// Enqueue adds a message with the given body, visible at once, and returns
// it (with no pop receipt). The body is stored as an Edm.String, so it is
// bounded by the table's property limit (32,768 UTF-16 code units).
func (q *Queue) Enqueue(ctx context.Context, body string) (Message, error) {
	now := q.now()
	ticks := localtable.TimeToTicks(now)
	q.mu.Lock()
	if ticks <= q.last {
		ticks = q.last + 1
	}
	q.last = ticks
	q.mu.Unlock()

	var rnd [8]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		return Message{}, err
	}
	// The ID's time may run ahead of the clock by a few ticks, to keep
	// order; the message is visible from the clock's now.
	id := localtable.Int64Key(ticks) + "_" + hex.EncodeToString(rnd[:])
	at := localtable.DateTimeValue(now).Time()
	e := localtable.Entity{PartitionKey: q.name, RowKey: q.rowKey(id), Properties: localtable.Properties{
		propBody:    localtable.StringValue(body),
		propInsert:  localtable.DateTimeValue(at),
		propVisible: localtable.DateTimeValue(at),
		propCount:   localtable.Int32Value(0),
	}}
	if _, err := q.tbl.Insert(ctx, e); err != nil {
		return Message{}, fmt.Errorf("tablequeue: enqueue to %s: %w", q.Name(), err)
	}
	return Message{ID: id, Body: body, InsertedAt: at, NextVisible: at}, nil
}

// pad formats a non-negative n in decimal, zero-padded to width digits, so
// that keys sort as numbers.
// lost reports whether err says another writer changed or removed the
// entity first.
func lost(err error) bool {
	return errors.Is(err, localtable.ErrConditionNotMet) || errors.Is(err, localtable.ErrEntityNotFound)
}

// Dequeue returns the oldest visible message and hides it for the
// visibility timeout, incrementing its dequeue count; ok is false when no
// message is visible. The message stays in the queue until Delete is called
// with its PopReceipt; if that does not happen before NextVisible, it
// becomes visible again and another Dequeue returns it, with a new pop
// receipt.
//
// A visible message already dequeued MaxDequeueCount times is not returned:
// Dequeue moves it to the poison queue and goes on to the next message.
func (q *Queue) Dequeue(ctx context.Context) (Message, bool, error) {
	now := q.now()
	f := filter.And(q.keyRange(), filter.Prop(propVisible).Le(now))
	for e, err := range q.tbl.QueryAll(ctx, &localtable.QueryOptions{Filter: f, PageSize: 32}) {
		if err != nil {
			return Message{}, false, fmt.Errorf("tablequeue: dequeue from %s: %w", q.Name(), err)
		}
		m, err := q.decode(e)
		if err != nil {
			return Message{}, false, err
		}
		if q.max >= 0 && m.DequeueCount >= q.max {
			if err := q.movePoison(ctx, e, m); err != nil && !lost(err) {
				return Message{}, false, fmt.Errorf("tablequeue: move message %s of %s to its poison queue: %w", m.ID, q.Name(), err)
			}
			continue // poisoned, by us or by another dequeuer
		}
		m.DequeueCount++
		m.NextVisible = now.Add(q.timeout)
		claim := localtable.Entity{PartitionKey: q.name, RowKey: e.RowKey, Properties: localtable.Properties{
			propVisible: localtable.DateTimeValue(m.NextVisible),
			propCount:   localtable.Int32Value(int32(m.DequeueCount)),
		}}
		tag, err := q.tbl.Update(ctx, claim, &localtable.UpdateOptions{Mode: localtable.UpdateModeMerge, IfMatch: e.ETag})
		if lost(err) {
			continue // another dequeuer claimed or deleted it since we read it
		}
		if err != nil {
			return Message{}, false, fmt.Errorf("tablequeue: dequeue message %s from %s: %w", m.ID, q.Name(), err)
		}
		m.NextVisible = localtable.DateTimeValue(m.NextVisible).Time() // as stored: 100 ns
		m.PopReceipt = string(tag)
		return m, true, nil
	}
	return Message{}, false, nil
}

// movePoison moves the message entity e to the poison queue in one
// transaction, conditioned on the ETag it was read with.
func (q *Queue) movePoison(ctx context.Context, e localtable.Entity, m Message) error {
	dup := localtable.Entity{PartitionKey: q.name, RowKey: q.poison.rowKey(m.ID), Properties: localtable.Properties{
		propBody:    localtable.StringValue(m.Body),
		propInsert:  localtable.DateTimeValue(m.InsertedAt),
		propVisible: localtable.DateTimeValue(m.InsertedAt),
		propCount:   localtable.Int32Value(0),
	}}
	_, err := q.tbl.Transact(ctx, []localtable.Action{
		{Type: localtable.ActionDelete, Entity: localtable.Entity{PartitionKey: q.name, RowKey: e.RowKey}, IfMatch: e.ETag},
		{Type: localtable.ActionInsert, Entity: dup},
	})
	return err
}

// decode reads a message entity.
func (q *Queue) decode(e localtable.Entity) (Message, error) {
	body, ok1 := e.Properties[propBody]
	ins, ok2 := e.Properties[propInsert]
	vis, ok3 := e.Properties[propVisible]
	cnt, ok4 := e.Properties[propCount]
	if !ok1 || !ok2 || !ok3 || !ok4 || body.Kind() != localtable.KindString || ins.Kind() != localtable.KindDateTime ||
		vis.Kind() != localtable.KindDateTime || cnt.Kind() != localtable.KindInt32 {
		return Message{}, fmt.Errorf("tablequeue: entity (%q, %q) is not a message", e.PartitionKey, e.RowKey)
	}
	return Message{
		ID:           e.RowKey[len(q.prefix):],
		Body:         body.String(),
		InsertedAt:   ins.Time(),
		NextVisible:  vis.Time(),
		DequeueCount: int(cnt.Int32()),
	}, nil
}

// Delete deletes the message id, which must hold popReceipt, the receipt
// of its latest dequeue. It fails with ErrMessageNotFound if the message
// is gone, and with ErrPopReceiptMismatch if it has been dequeued again
// since that receipt was issued. As in the service, a receipt stays valid
// after the visibility timeout for as long as nobody dequeues the message
// again.
func (q *Queue) Delete(ctx context.Context, id, popReceipt string) error {
	if popReceipt == "" || popReceipt == string(localtable.ETagAny) {
		return fmt.Errorf("tablequeue: delete message %s from %s: no pop receipt: %w", id, q.Name(), ErrPopReceiptMismatch)
	}
	err := q.tbl.Delete(ctx, q.name, q.rowKey(id), &localtable.DeleteOptions{IfMatch: localtable.ETag(popReceipt)})
	switch {
	case errors.Is(err, localtable.ErrEntityNotFound):
		return fmt.Errorf("tablequeue: delete message %s from %s: %w", id, q.Name(), ErrMessageNotFound)
	case errors.Is(err, localtable.ErrConditionNotMet):
		return fmt.Errorf("tablequeue: delete message %s from %s: %w", id, q.Name(), ErrPopReceiptMismatch)
	case err != nil:
		return fmt.Errorf("tablequeue: delete message %s from %s: %w", id, q.Name(), err)
	}
	return nil
}

// Peek returns up to max visible messages, oldest first, without changing
// them: no message is hidden, no count incremented, and no pop receipt
// issued.
func (q *Queue) Peek(ctx context.Context, max int) ([]Message, error) {
	if max < 1 {
		return nil, fmt.Errorf("tablequeue: peek %d messages: %w", max, ErrOutOfRange)
	}
	f := filter.And(q.keyRange(), filter.Prop(propVisible).Le(q.now()))
	var ms []Message
	for e, err := range q.tbl.QueryAll(ctx, &localtable.QueryOptions{Filter: f, PageSize: min(max, localtable.MaxPageSize)}) {
		if err != nil {
			return nil, fmt.Errorf("tablequeue: peek %s: %w", q.Name(), err)
		}
		m, err := q.decode(e)
		if err != nil {
			return nil, err
		}
		if ms = append(ms, m); len(ms) == max {
			break
		}
	}
	return ms, nil
}

// Len returns the number of messages in the queue, visible or hidden.
func (q *Queue) Len(ctx context.Context) (int, error) {
	n := 0
	for _, err := range q.tbl.QueryAll(ctx, &localtable.QueryOptions{Filter: q.keyRange(), Select: []string{propCount}}) {
		if err != nil {
			return 0, fmt.Errorf("tablequeue: count %s: %w", q.Name(), err)
		}
		n++
	}
	return n, nil
}
