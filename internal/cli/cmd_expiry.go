package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/server"
)

// The expiry command: a table's expiry policy (expiry.go).

func init() {
	register(&command{
		name: "expiry", args: "show TABLE | set TABLE PROPERTY | clear TABLE [flags]",
		summary: "show, set or clear a table's expiry policy (time to live, a localtable extension)",
		details: `A table's expiry property names an Edm.DateTime property: an entity whose
value of it is at or before the account's clock has expired. It is
invisible at once to every read (a Get answers 404, queries skip it) and
absent to every write (an insert writes over it; an update or delete 404s),
and the server's sweeper deletes it in the background, each deletion a
change of kind Expired in the change feed. An entity without the property,
or whose property is of another type, never expires, and nothing warns: a
date written as a string (put ExpiresAt=2030-01-01T00:00:00Z rather than
ExpiresAt@Edm.DateTime=2030-01-01T00:00:00Z, or JSON without
"ExpiresAt@odata.type") never expires. set declares an index on the
property (or uses one the table has), which the sweeper reads, and waits
for its build; clear removes the policy and drops the index set declared
for it (an index of the table's own stays), as a set of another property
does. Expiry is a localtable extension: the Azure Table service has none.

On a running server (--endpoint, --connection-string or the environment) it
uses the server's expiry operations (GET, PUT and DELETE /ACCOUNT/TABLE?
comp=expiry, a localtable extension), signed with the account key: a SAS or
a bearer token does not grant them. serve --expiry sets a policy when a
server starts. On a data directory, the command itself deletes nothing:
the sweeper runs in serve.` + "\n" + sourceHelp,
		examples: `
localtable expiry set Sessions ExpiresAt --location ./data
localtable expiry show Sessions --location ./data
localtable expiry clear Sessions --location ./data
localtable expiry show Sessions --endpoint http://127.0.0.1:10002/devstoreaccount1`,
		run: runExpiry,
	})
}

func runExpiry(ctx context.Context, e *env, c *command, args []string) error {
	fs := c.flagSet()
	var src sourceFlags
	src.register(fs)
	pos, err := c.parse(e, fs, args, 2, 3)
	if err != nil {
		return err
	}
	sub, table, rest := pos[0], pos[1], pos[2:]
	switch {
	case sub == "set" && len(rest) != 1:
		return usagef(c, "set needs a table and a property")
	case (sub == "show" || sub == "clear") && len(rest) != 0:
		return usagef(c, "%s takes a table name only", sub)
	case sub != "show" && sub != "set" && sub != "clear":
		return usagef(c, "unknown subcommand %q: show, set or clear", sub)
	}
	st, err := src.open(ctx, e, c, openOpts{readOnly: sub == "show"})
	if err != nil {
		return err
	}
	defer st.Close()
	xs, ok := st.(expiryStore)
	if !ok {
		return fmt.Errorf("%s has no expiry policies", st.Describe())
	}
	switch sub {
	case "show":
		prop, err := xs.Expiry(ctx, table)
		if err != nil {
			return err
		}
		if prop == "" {
			fmt.Fprintf(e.stdout, "%s has no expiry policy\n", table)
		} else {
			fmt.Fprintf(e.stdout, "%s expires entities by %s\n", table, prop)
		}
	case "set":
		if err := xs.SetExpiry(ctx, table, rest[0]); err != nil {
			return fmt.Errorf("expiry of %s: %w", table, err)
		}
		fmt.Fprintf(e.stdout, "%s expires entities by %s\n", table, rest[0])
	case "clear":
		if err := xs.ClearExpiry(ctx, table); err != nil {
			return fmt.Errorf("expiry of %s: %w", table, err)
		}
		fmt.Fprintf(e.stdout, "%s has no expiry policy\n", table)
	}
	return nil
}

// expiryStore is a store whose tables have expiry policies: a data
// directory, or a running server through its comp=expiry operations.
type expiryStore interface {
	Expiry(ctx context.Context, table string) (string, error)
	SetExpiry(ctx context.Context, table, prop string) error
	ClearExpiry(ctx context.Context, table string) error
}

func (l *localStore) Expiry(ctx context.Context, table string) (string, error) {
	return l.acct.Table(table).Expiry(ctx)
}

func (l *localStore) SetExpiry(ctx context.Context, table, prop string) error {
	return l.acct.Table(table).SetExpiry(ctx, prop)
}

func (l *localStore) ClearExpiry(ctx context.Context, table string) error {
	return l.acct.Table(table).ClearExpiry(ctx)
}

func (r *remoteStore) Expiry(ctx context.Context, table string) (string, error) {
	var got server.ExpiryPolicy
	err := r.extensionRequest(ctx, http.MethodGet, table, url.Values{"comp": {"expiry"}}, nil, &got)
	return got.Property, err
}

func (r *remoteStore) SetExpiry(ctx context.Context, table, prop string) error {
	return r.extensionRequest(ctx, http.MethodPut, table, url.Values{"comp": {"expiry"}}, server.ExpiryPolicy{Property: prop}, nil)
}

func (r *remoteStore) ClearExpiry(ctx context.Context, table string) error {
	return r.extensionRequest(ctx, http.MethodDelete, table, url.Values{"comp": {"expiry"}}, nil, nil)
}

// extensionRequest sends one of the server's table extensions (q names it
// by comp=: indexes, expiry) on table, signed with the account key, and
// decodes a 200 answer's body into out.
func (r *remoteStore) extensionRequest(ctx context.Context, method, table string, q url.Values, body any, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, r.target.endpoint+"/"+url.PathEscape(table)+"?"+q.Encode(), rd)
	if err != nil {
		return err
	}
	signSharedKeyLite(req, r.target.account, r.target.key)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode >= 300 {
		return answerError(resp, b)
	}
	if out != nil {
		return json.Unmarshal(b, out)
	}
	return nil
}

// expirySpec is one serve --expiry Table:Property: a policy the server
// sets on each account it serves at start.
type expirySpec struct{ table, prop string }

// expiryFlags collects repeated --expiry flags.
type expiryFlags []expirySpec

// String is the flag's default text: none.
func (f *expiryFlags) String() string { return "" }

// Set adds one Table:Property.
func (f *expiryFlags) Set(v string) error {
	table, prop, ok := strings.Cut(v, ":")
	if !ok || table == "" || prop == "" {
		return errors.New("want Table:Property")
	}
	if err := localtable.ValidateTableName(table); err != nil {
		return err
	}
	if err := localtable.ValidatePropertyName(prop); err != nil {
		return err
	}
	for _, s := range *f {
		if strings.EqualFold(s.table, table) {
			return fmt.Errorf("table %s is given twice: a table has one expiry property", table)
		}
	}
	*f = append(*f, expirySpec{table: table, prop: prop})
	return nil
}

// setExpiries sets the policies of specs on acct at serve's start: it
// creates a table that does not exist, sets the policy of a table that
// has none (waiting for its index's build), does nothing for a table
// whose policy is already the one asked for, and fails naming the
// conflict for a table whose policy names another property.
func setExpiries(ctx context.Context, acct *localtable.Account, account string, specs []expirySpec, log *slog.Logger) error {
	for _, s := range specs {
		flag := s.table + ":" + s.prop
		t := acct.Table(s.table)
		have, err := t.Expiry(ctx)
		if errors.Is(err, localtable.ErrTableNotFound) {
			if _, err = acct.CreateTable(ctx, s.table); err != nil && !errors.Is(err, localtable.ErrTableExists) {
				return fmt.Errorf("--expiry %s: account %s: creating the table: %w", flag, account, err)
			}
			log.Info("created table for --expiry", "account", account, "table", s.table)
			have, err = t.Expiry(ctx)
		}
		switch {
		case err != nil:
			return fmt.Errorf("--expiry %s: account %s: %w", flag, account, err)
		case have == s.prop:
			continue
		case have != "":
			return fmt.Errorf("--expiry %s: account %s: table %s already expires by %s (clear it with 'localtable expiry clear' first)", flag, account, s.table, have)
		}
		if err := t.SetExpiry(ctx, s.prop); err != nil {
			return fmt.Errorf("--expiry %s: account %s: %w", flag, account, err)
		}
		log.Info("set expiry policy", "account", account, "table", s.table, "property", s.prop)
	}
	return nil
}
