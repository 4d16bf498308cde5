package testkit

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/internal/reqclass"
	"github.com/localtable/localtable/server"
)

// This file is the Kit's half of the test controls over HTTP
// (/ACCOUNT/$test, served when the command runs with --test-controls):
// the server authenticates a control and hands it to Kit.TestControl,
// which acts through the same engine as localtabletest's Go API. The wire
// format is documented in docs/test-controls.md.

// controls is the test controls' state: each account's checkpoint at
// start (reset) and its named snapshots.
type controls struct {
	mu       sync.Mutex
	accounts map[*localtable.Account]*accountState
}

type accountState struct {
	initial   *localtable.Checkpoint
	snapshots map[string]*localtable.Checkpoint
}

// Track takes the account's checkpoint that a reset returns it to: call
// it for each served account before serving. Untrack releases it, and
// the account's snapshots, before the account closes.
func (k *Kit) Track(ctx context.Context, acct *localtable.Account) error {
	cp, err := acct.Checkpoint(ctx)
	if err != nil {
		return err
	}
	k.ctl.mu.Lock()
	defer k.ctl.mu.Unlock()
	if k.ctl.accounts == nil {
		k.ctl.accounts = make(map[*localtable.Account]*accountState)
	}
	if old := k.ctl.accounts[acct]; old != nil {
		old.release()
	}
	k.ctl.accounts[acct] = &accountState{initial: cp, snapshots: make(map[string]*localtable.Checkpoint)}
	return nil
}

// Untrack releases the checkpoints the test controls hold of acct.
func (k *Kit) Untrack(acct *localtable.Account) {
	k.ctl.mu.Lock()
	defer k.ctl.mu.Unlock()
	if st := k.ctl.accounts[acct]; st != nil {
		st.release()
		delete(k.ctl.accounts, acct)
	}
}

func (st *accountState) release() {
	st.initial.Close()
	for _, cp := range st.snapshots {
		cp.Close()
	}
}

// Restore returns acct's data to cp, keeping its service properties (they
// are stored with the data, but are configuration, not fixture), and
// forgets the tables "being deleted". Fault rules, latency, the request
// log and the Clock stay as they are.
func (k *Kit) Restore(ctx context.Context, acct *localtable.Account, cp *localtable.Checkpoint) error {
	props, err := acct.ServiceProperties(ctx)
	if err != nil {
		return err
	}
	if err := acct.Restore(ctx, cp); err != nil {
		return err
	}
	if err := acct.SetServiceProperties(ctx, props); err != nil {
		return err
	}
	k.ForgetDeleted()
	return nil
}

// TestControl serves one test control (server.TestControls).
func (k *Kit) TestControl(ctx context.Context, c *server.TestControl) (any, error) {
	switch c.Name {
	case "reset":
		return nil, k.ctlReset(ctx, c)
	case "snapshot", "restore":
		return k.ctlSnapshot(ctx, c)
	case "faults":
		return k.ctlFaults(c)
	case "latency":
		return nil, k.ctlLatency(c)
	case "clock":
		return k.ctlClock(c)
	case "log":
		if c.Method == http.MethodDelete {
			k.ResetLog()
			return nil, nil
		}
		return logEntries(k.Log()), nil
	}
	return nil, badInput("no test control %q", c.Name)
}

func badInput(format string, args ...any) error {
	return &localtable.Error{Code: localtable.CodeInvalidInput, Message: "test controls: " + fmt.Sprintf(format, args...)}
}

func notFound(format string, args ...any) error {
	return &localtable.Error{Code: localtable.CodeResourceNotFound, Message: "test controls: " + fmt.Sprintf(format, args...)}
}

// decode reads a JSON body into v, refusing unknown fields, so that a
// misspelt matcher fails rather than matching everything.
func decode(body []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(body))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		return badInput("the body is not the JSON expected: %v", err)
	}
	return nil
}

// state returns the account's state, or an error if it is not tracked.
func (k *Kit) state(acct *localtable.Account) (*accountState, error) {
	k.ctl.mu.Lock()
	defer k.ctl.mu.Unlock()
	st := k.ctl.accounts[acct]
	if st == nil {
		return nil, &localtable.Error{Code: localtable.CodeInternalError, Message: "test controls: the account's state was not taken at start"}
	}
	return st, nil
}

// ctlReset returns the account to its state at start, or with table=
// deletes every entity of one table (keeping the table and its access
// policies), through the write pipeline.
func (k *Kit) ctlReset(ctx context.Context, c *server.TestControl) error {
	if name := c.Query.Get("table"); name != "" {
		t, err := c.Data.GetTable(ctx, name)
		if err != nil {
			return err
		}
		var keys [][2]string
		for e, err := range t.QueryAll(ctx, nil) {
			if err != nil {
				return err
			}
			keys = append(keys, [2]string{e.PartitionKey, e.RowKey})
		}
		for _, key := range keys {
			if err := t.Delete(ctx, key[0], key[1], nil); err != nil && !errors.Is(err, localtable.ErrEntityNotFound) {
				return err
			}
		}
		return nil
	}
	st, err := k.state(c.Data)
	if err != nil {
		return err
	}
	return k.Restore(ctx, c.Data, st.initial)
}

// snapshotName is the name= of a snapshot control.
func snapshotName(c *server.TestControl) (string, error) {
	name := c.Query.Get("name")
	if name == "" || len(name) > 256 {
		return "", badInput("name= names the snapshot (1 to 256 characters)")
	}
	return name, nil
}

// ctlSnapshot saves (PUT comp=snapshot), restores (POST comp=restore) or
// deletes (DELETE comp=snapshot) a named snapshot of the account's data.
func (k *Kit) ctlSnapshot(ctx context.Context, c *server.TestControl) (any, error) {
	name, err := snapshotName(c)
	if err != nil {
		return nil, err
	}
	st, err := k.state(c.Data)
	if err != nil {
		return nil, err
	}
	switch {
	case c.Name == "restore":
		k.ctl.mu.Lock()
		cp := st.snapshots[name]
		k.ctl.mu.Unlock()
		if cp == nil {
			return nil, notFound("no snapshot %q", name)
		}
		return nil, k.Restore(ctx, c.Data, cp)
	case c.Method == http.MethodDelete:
		k.ctl.mu.Lock()
		cp := st.snapshots[name]
		delete(st.snapshots, name)
		k.ctl.mu.Unlock()
		if cp == nil {
			return nil, notFound("no snapshot %q", name)
		}
		return nil, cp.Close()
	}
	cp, err := c.Data.Checkpoint(ctx)
	if err != nil {
		return nil, err
	}
	k.ctl.mu.Lock()
	old := st.snapshots[name]
	st.snapshots[name] = cp
	k.ctl.mu.Unlock()
	if old != nil {
		old.Close()
	}
	return map[string]string{"name": name}, nil
}

// duration is a Go duration on the wire: "250ms", "1h30m".
type duration time.Duration

func (d *duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("a duration is a string such as \"250ms\": %s", b)
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	*d = duration(v)
	return nil
}

// latencySpec is a latency distribution on the wire: exactly one of
// Fixed, Uniform and Normal.
type latencySpec struct {
	Fixed   *duration `json:"fixed,omitempty"`
	Uniform *struct {
		Min duration `json:"min"`
		Max duration `json:"max"`
	} `json:"uniform,omitempty"`
	Normal *struct {
		Mean   duration `json:"mean"`
		StdDev duration `json:"stddev"`
	} `json:"normal,omitempty"`
}

// latency returns the distribution the spec names.
func (s *latencySpec) latency() (Latency, error) {
	n := 0
	var l Latency
	if s.Fixed != nil {
		n++
		l = Fixed(time.Duration(*s.Fixed))
	}
	if u := s.Uniform; u != nil {
		n++
		l = Uniform(time.Duration(u.Min), time.Duration(u.Max))
	}
	if m := s.Normal; m != nil {
		n++
		l = Normal(time.Duration(m.Mean), time.Duration(m.StdDev))
	}
	if n != 1 {
		return nil, badInput("a latency is one of fixed, uniform {min, max} and normal {mean, stddev}")
	}
	return l, nil
}

// operations reads operation names, as the request log names them.
func operations(names []string) ([]Operation, error) {
	ops := make([]Operation, 0, len(names))
	for _, n := range names {
		o, ok := operationNamed(n)
		if !ok {
			return nil, badInput("no operation %q (the operations are named as the request log names them: InsertEntity, QueryEntities, GetEntity, …)", n)
		}
		ops = append(ops, o)
	}
	return ops, nil
}

// operationNamed returns the operation of a name, if it is one a rule can
// match: an operation of the Table service (or the change feed).
func operationNamed(name string) (Operation, bool) {
	for _, o := range reqclass.Ops() {
		if op := operationOf(o); string(op) == name && !o.IsTestControl() {
			return op, true
		}
	}
	return "", false
}

// ctlLatency sets (PUT) or removes (DELETE) latency.
func (k *Kit) ctlLatency(c *server.TestControl) error {
	if c.Method == http.MethodDelete {
		if c.Query.Get("operations") == "" {
			k.ClearLatency()
			return nil
		}
		ops, err := operations(strings.Split(c.Query.Get("operations"), ","))
		if err != nil {
			return err
		}
		k.SetLatency(nil, ops...)
		return nil
	}
	var body struct {
		Operations []string `json:"operations"`
		latencySpec
	}
	if err := decode(c.Body, &body); err != nil {
		return err
	}
	l, err := body.latency()
	if err != nil {
		return err
	}
	ops, err := operations(body.Operations)
	if err != nil {
		return err
	}
	k.SetLatency(l, ops...)
	return nil
}

// ruleSpec is a fault rule on the wire, Rule's matchers and counts with
// its action; it has no When.
type ruleSpec struct {
	Name         string     `json:"name,omitempty"`
	Operations   []string   `json:"operations,omitempty"`
	Table        string     `json:"table,omitempty"`
	PartitionKey string     `json:"partitionKey,omitempty"`
	Method       string     `json:"method,omitempty"`
	Action       actionSpec `json:"action"`
	AfterApply   bool       `json:"afterApply,omitempty"`
	Skip         int        `json:"skip,omitempty"`
	Times        int        `json:"times,omitempty"`
	Probability  float64    `json:"probability,omitempty"`
}

// actionSpec is an action on the wire: its type, and what that type
// takes.
type actionSpec struct {
	// Type is serverBusy, internalError, operationTimedOut,
	// tableBeingDeleted, conditionNotMet, fail (Status, Code, Message),
	// delay (Delay: a latencySpec), dropConnection, timeout or
	// truncateBody (Bytes).
	Type    string       `json:"type"`
	Status  int          `json:"status,omitempty"`
	Code    string       `json:"code,omitempty"`
	Message string       `json:"message,omitempty"`
	Delay   *latencySpec `json:"delay,omitempty"`
	Bytes   int          `json:"bytes,omitempty"`
}

// action returns the Action the spec names.
func (s *actionSpec) action() (Action, error) {
	switch s.Type {
	case "serverBusy":
		return ServerBusy(), nil
	case "internalError":
		return InternalError(), nil
	case "operationTimedOut":
		return OperationTimedOut(), nil
	case "tableBeingDeleted":
		return TableBeingDeleted(), nil
	case "conditionNotMet":
		return ConditionNotMet(), nil
	case "fail":
		if s.Code == "" || (s.Status != 0 && (s.Status < 400 || s.Status > 599)) {
			return Action{}, badInput("a fail action needs a code, and a status (if any) from 400 to 599")
		}
		msg := s.Message
		if msg == "" {
			msg = "Injected by localtable's test controls."
		}
		return Fail(s.Status, localtable.ErrorCode(s.Code), msg), nil
	case "delay":
		if s.Delay == nil {
			return Action{}, badInput("a delay action needs delay: a latency (fixed, uniform or normal)")
		}
		l, err := s.Delay.latency()
		if err != nil {
			return Action{}, err
		}
		if s.Delay.Fixed != nil {
			return Delay(time.Duration(*s.Delay.Fixed)), nil
		}
		return DelayBy(l), nil
	case "dropConnection":
		return DropConnection(), nil
	case "timeout":
		return Timeout(), nil
	case "truncateBody":
		if s.Bytes < 0 {
			return Action{}, badInput("truncateBody's bytes must be 0 or more")
		}
		return TruncateBody(s.Bytes), nil
	}
	return Action{}, badInput("no action type %q (serverBusy, internalError, operationTimedOut, tableBeingDeleted, conditionNotMet, fail, delay, dropConnection, timeout, truncateBody)", s.Type)
}

// rule returns the Rule the spec describes.
func (s *ruleSpec) rule() (Rule, error) {
	a, err := s.Action.action()
	if err != nil {
		return Rule{}, err
	}
	ops, err := operations(s.Operations)
	if err != nil {
		return Rule{}, err
	}
	switch {
	case s.Skip < 0 || s.Times < 0:
		return Rule{}, badInput("skip and times must be 0 or more")
	case s.Probability < 0 || s.Probability > 1:
		return Rule{}, badInput("probability must be in [0, 1]")
	}
	return Rule{Name: s.Name, Ops: ops, Table: s.Table, PartitionKey: s.PartitionKey, Method: s.Method,
		Action: a, AfterApply: s.AfterApply, Skip: s.Skip, Times: s.Times, Probability: s.Probability}, nil
}

// faultEntry is a fault rule in force, on the wire.
type faultEntry struct {
	ID     int    `json:"id"`
	Name   string `json:"name"`
	Action string `json:"action"`
	Hits   int    `json:"hits"`
}

func (f *Fault) entry() faultEntry {
	return faultEntry{ID: f.id, Name: f.name(), Action: f.rule.Action.String(), Hits: f.Hits()}
}

// ctlFaults lists (GET), adds (POST) or removes (DELETE, one by id= or
// all) fault rules.
func (k *Kit) ctlFaults(c *server.TestControl) (any, error) {
	switch c.Method {
	case http.MethodGet:
		k.mu.Lock()
		faults := slices.Clone(k.faults)
		k.mu.Unlock()
		out := make([]faultEntry, 0, len(faults))
		for _, f := range faults {
			out = append(out, f.entry())
		}
		return out, nil
	case http.MethodDelete:
		idText := c.Query.Get("id")
		if idText == "" {
			k.ClearFaults()
			return nil, nil
		}
		id, err := strconv.Atoi(idText)
		if err != nil {
			return nil, badInput("id=%s is not a fault's id", idText)
		}
		k.mu.Lock()
		i := slices.IndexFunc(k.faults, func(f *Fault) bool { return f.id == id })
		var f *Fault
		if i >= 0 {
			f = k.faults[i]
		}
		k.mu.Unlock()
		if f == nil {
			return nil, notFound("no fault rule %d in force", id)
		}
		f.Remove()
		return nil, nil
	}
	var spec ruleSpec
	if err := decode(c.Body, &spec); err != nil {
		return nil, err
	}
	r, err := spec.rule()
	if err != nil {
		return nil, err
	}
	return k.Inject(r).entry(), nil
}

// clockState is the clock on the wire.
type clockState struct {
	Now    time.Time `json:"now"`
	Frozen bool      `json:"frozen"`
}

// ctlClock reads (GET) or moves (PUT) the clock, as the body says: freeze
// (first), set, advance, resume (last).
func (k *Kit) ctlClock(c *server.TestControl) (any, error) {
	if c.Method == http.MethodPut {
		var body struct {
			Set     *time.Time `json:"set"`
			Advance *duration  `json:"advance"`
			Freeze  *bool      `json:"freeze"`
		}
		if err := decode(c.Body, &body); err != nil {
			return nil, err
		}
		if body.Set == nil && body.Advance == nil && body.Freeze == nil {
			return nil, badInput("the body sets the clock (set: an RFC 3339 time), advances it (advance: a duration such as \"10m\") or freezes it (freeze: true or false)")
		}
		if body.Set != nil && (body.Set.Before(localtable.MinDateTime) || body.Set.After(localtable.MaxDateTime)) {
			return nil, badInput("set: %s is outside the range of Timestamps", body.Set.Format(time.RFC3339))
		}
		if body.Freeze != nil && *body.Freeze {
			k.clock.Freeze() // first: a time set is then the time it stands at
		}
		if body.Set != nil {
			k.clock.Set(*body.Set)
		}
		if body.Advance != nil {
			k.clock.Advance(time.Duration(*body.Advance))
		}
		if body.Freeze != nil && !*body.Freeze {
			k.clock.Resume()
		}
	}
	return clockState{Now: k.clock.Now().UTC(), Frozen: k.clock.Manual()}, nil
}

// logEntry is a request of the log on the wire.
type logEntry struct {
	Seq          int        `json:"seq"`
	Time         time.Time  `json:"time"`
	Method       string     `json:"method"`
	Path         string     `json:"path"`
	Operation    string     `json:"operation"`
	Table        string     `json:"table,omitempty"`
	PartitionKey string     `json:"partitionKey,omitempty"`
	RowKey       string     `json:"rowKey,omitempty"`
	Batch        []logEntry `json:"batch,omitempty"`
	Status       int        `json:"status"`
	ErrorCode    string     `json:"errorCode,omitempty"`
	Fault        string     `json:"fault,omitempty"`
	Applied      bool       `json:"applied"`
	Delay        string     `json:"delay,omitempty"`
}

func logEntries(l RequestLog) []logEntry {
	out := make([]logEntry, len(l))
	for i, r := range l {
		out[i] = logEntry{Seq: r.Seq, Time: r.Time.UTC(), Method: r.Method, Path: r.Path, Operation: string(r.Op),
			Table: r.Table, PartitionKey: r.PartitionKey, RowKey: r.RowKey, Status: r.Status, ErrorCode: r.ErrorCode,
			Fault: r.Fault, Applied: r.Applied}
		if r.Delay > 0 {
			out[i].Delay = r.Delay.String()
		}
		if len(r.Batch) > 0 {
			out[i].Batch = logEntries(r.Batch)
		}
	}
	return out
}
