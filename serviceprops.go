package localtable

import (
	"bytes"
	"context"
	"errors"

	"github.com/localtable/localtable/internal/keyenc"
	"github.com/localtable/localtable/storage"
)

// Service properties: the account's service-wide settings (for the REST
// server, its Set Table Service Properties document: CORS rules, logging,
// metrics). The account keeps them as an opaque blob, under one metadata
// key, so that they persist with the account's data and are shared by
// every Account over a shared engine; what they mean is the caller's.

// MaxServiceProperties is the largest service properties blob an account
// stores, in bytes.
const MaxServiceProperties = 1 << 20

// metaServiceProps is the key of the service properties blob.
var metaServiceProps = keyenc.MetaKey("serviceprops")

// ServiceProperties returns the account's service properties, as last set
// (by this Account or, on a shared engine, any other), or nil if none were
// ever set or they were cleared. The result is the caller's to keep.
func (a *Account) ServiceProperties(ctx context.Context) ([]byte, error) {
	if err := a.enter(ctx); err != nil {
		return nil, err
	}
	defer a.exit()
	v, c, err := a.eng.Get(metaServiceProps)
	if errors.Is(err, storage.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer c.Close()
	return bytes.Clone(v), nil
}

// SetServiceProperties replaces the account's service properties with
// props (at most MaxServiceProperties bytes); an empty props clears them.
// The account stores props as they are, without looking into them.
func (a *Account) SetServiceProperties(ctx context.Context, props []byte) error {
	props = bytes.Clone(props)
	return a.UpdateServiceProperties(ctx, func([]byte) ([]byte, error) { return props, nil })
}

// UpdateServiceProperties replaces the account's service properties with
// f's result, given the ones stored (nil: none), atomically: on a shared
// engine, if another Account changes them between the read and the
// write, f is called again with the new ones, so f must be a function of
// its argument alone and may be called several times. An error from f
// is returned, and nothing is written. A result of at most
// MaxServiceProperties bytes is stored as it is; an empty one clears them.
func (a *Account) UpdateServiceProperties(ctx context.Context, f func(cur []byte) ([]byte, error)) error {
	if err := a.enter(ctx); err != nil {
		return err
	}
	defer a.exit()
	return a.update(ctx, "setting the service properties", maxConflictRetries, [][]byte{metaServiceProps}, func(rs *readSet) (*metaPlan, error) {
		ws, err := planServiceProperties(rs.vals[0], rs.found[0], f)
		if err != nil || ws == nil {
			return nil, err
		}
		return &metaPlan{writes: ws}, nil
	})
}
