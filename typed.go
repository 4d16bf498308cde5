package localtable

import (
	"context"
	"iter"
)

// GetAs reads entity (pk, rk) of t and unmarshals it into a new T, a struct
// type mapped as Unmarshal describes.
func GetAs[T any](ctx context.Context, t *Table, pk, rk string) (T, error) {
	var v T
	e, err := t.Get(ctx, pk, rk, nil)
	if err != nil {
		return v, err
	}
	err = Unmarshal(e, &v)
	return v, err
}

// QueryAs returns an iterator over the entities that opts select, each
// unmarshalled into a new T, a struct type mapped as Unmarshal describes:
// it is to QueryAll what GetAs is to Get. opts.Select, if set, leaves the
// fields of unselected properties zero. It yields the first error, of the
// query or of Unmarshal, with a zero T, and stops; like QueryAll it leaks
// nothing when the loop breaks. nil opts means the defaults (see
// QueryOptions); as for QueryAll, opts is read when QueryAs is called.
func QueryAs[T any](ctx context.Context, t *Table, opts *QueryOptions) iter.Seq2[T, error] {
	all := t.QueryAll(ctx, opts)
	return func(yield func(T, error) bool) {
		for e, err := range all {
			var v T
			if err == nil {
				err = Unmarshal(e, &v)
			}
			if err != nil {
				var zero T
				yield(zero, err)
				return
			}
			if !yield(v, nil) {
				return
			}
		}
	}
}
