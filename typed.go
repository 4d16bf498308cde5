package localtable

import "context"

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
